"""What the scheduler exports share beside the fabric tree (Topology.fabric_tree, cluster.tree):
scale-up domains per host and Slurm's hostlist form."""

from __future__ import annotations

import re

from cluster.naming import number
from cluster.spec import ClusterSpec
from cluster.topology import Topology


def nvlink_domains(spec: ClusterSpec, topology: Topology) -> dict[str, str]:
    """Host -> its scale-up (NVLink / Infinity Fabric) domain, numbered per pool.

    A domain of `nvlink_domain` GPUs spans nvlink_domain / gpus_per_node consecutive hosts
    (one host on 8-GPU boards, 18 GB200 trays in an NVL72 rack).
    """
    domains: dict[str, str] = {}
    for pool in spec.pools:
        per_domain = max(1, pool.nvlink_domain // pool.gpus_per_node)
        hosts = topology.hosts_by_pool[pool.name]
        for position, host in enumerate(hosts):
            domains[host] = f"{pool.name}-nvl-{number(position // per_domain)}"
    return domains


_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")


def compress(names: list[str] | tuple[str, ...]) -> str:
    """Slurm hostlist form: `h200-node-[001-064]`; several prefixes are joined with commas.

    Names keep their first-seen prefix order; numbers are sorted per prefix and zero padding
    is kept (names of different widths are separate ranges, as Slurm reads them).
    """
    order: list[tuple[str, int]] = []
    numbers: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        match = _TRAILING_NUMBER.match(name)
        if match is None:
            plain.append(name)
            continue
        key = (match.group(1), len(match.group(2)))
        if key not in numbers:
            order.append(key)
            numbers[key] = []
        numbers[key].append(int(match.group(2)))
    parts: list[str] = []
    for prefix, width in order:
        values = sorted(set(numbers[(prefix, width)]))
        if len(values) == 1:
            parts.append(f"{prefix}{values[0]:0{width}d}")
            continue
        ranges: list[str] = []
        start = previous = values[0]
        for value in [*values[1:], None]:
            if value is not None and value == previous + 1:
                previous = value
                continue
            ranges.append(f"{start:0{width}d}" if start == previous else f"{start:0{width}d}-{previous:0{width}d}")
            if value is not None:
                start = previous = value
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join([*parts, *plain])
