"""The fabric as a scheduler sees it: leaf groups of hosts, pods of spines, and a root.

A rail-optimized leaf group has one leaf per rail (and plane), and every one of them serves the
same hosts, so a scheduler treats the group as one logical leaf. Spines of a pod are equivalent
for placement, as are cores, so each tier above collapses to one logical switch per pod and one
root. Everything is read off the graph (which leaf a host is cabled to), not re-derived from
the sizing, so the exports follow the cabling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology, number


@dataclass(frozen=True)
class LeafGroup:
    """One logical leaf: the physical leaves of a group and the hosts cabled to them."""

    name: str
    index: int
    pod: int
    leaves: tuple[str, ...]
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class Pod:
    """The spines that a set of leaf groups uplinks to (all spines on a two-tier fabric)."""

    name: str
    index: int
    spines: tuple[str, ...]
    groups: tuple[str, ...]


@dataclass(frozen=True)
class FabricTree:
    """Leaf groups, pods above them and the cores on top (empty below three tiers)."""

    groups: tuple[LeafGroup, ...]
    pods: tuple[Pod, ...]
    cores: tuple[str, ...]

    @property
    def tiers(self) -> int:
        if self.cores:
            return 3
        return 2 if any(pod.spines for pod in self.pods) else 1

    def group_of(self) -> dict[str, LeafGroup]:
        """Host name -> its leaf group."""
        return {host: group for group in self.groups for host in group.hosts}




_CACHE_KEY = "gpu_cluster.fabric_tree"


def fabric_tree(topology: Topology) -> FabricTree:
    """The logical hierarchy of the on-prem GPU fabric (empty on cloud targets).

    Cached in the graph's networkx cache, which networkx clears on any structural change.
    """
    cache = topology.graph.__networkx_cache__
    tree: FabricTree | None = cache.get(_CACHE_KEY)
    if tree is None:
        tree = cache[_CACHE_KEY] = _fabric_tree(topology)
    return tree


def _fabric_tree(topology: Topology) -> FabricTree:
    graph = topology.graph
    leaves_by_group: dict[int, list[str]] = {}
    pod_of_group: dict[int, int] = {}
    for name, data in topology.switches(FABRIC, "leaf"):
        leaves_by_group.setdefault(data["group"], []).append(name)
        pod_of_group[data["group"]] = data["pod"]
    hosts_by_group: dict[int, list[str]] = {group: [] for group in leaves_by_group}
    for pool_hosts in topology.hosts_by_pool.values():
        for host in pool_hosts:
            mine = sorted({graph.nodes[peer]["group"] for peer in graph[host]
                           if FABRIC in graph[host][peer] and graph.nodes[peer].get("tier") == "leaf"})
            for group in mine[:1]:
                hosts_by_group[group].append(host)
    order = sorted(leaves_by_group)
    groups = tuple(
        LeafGroup(name=f"leaf-{number(group)}", index=group, pod=pod_of_group[group],
                  leaves=tuple(sorted(leaves_by_group[group])), hosts=tuple(hosts_by_group[group]))
        for group in order
    )
    spines_by_pod: dict[int, list[str]] = {}
    for name, data in topology.switches(FABRIC, "spine"):
        spines_by_pod.setdefault(data["pod"], []).append(name)
    pod_indexes = sorted(set(pod_of_group.values()) | set(spines_by_pod))
    pods = tuple(
        Pod(name=f"pod-{number(pod)}", index=pod, spines=tuple(sorted(spines_by_pod.get(pod, []))),
            groups=tuple(group.name for group in groups if group.pod == pod))
        for pod in pod_indexes
    )
    cores = tuple(sorted(name for name, _ in topology.switches(FABRIC, "core")))
    return FabricTree(groups=groups, pods=pods, cores=cores)


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
