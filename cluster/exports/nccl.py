"""NCCL / EFA environment per node pool, as KEY=VALUE env files (`nccl/<pool>.env`).

On premises the file is the host renderer's `hosts/<pool>/nccl.env`, byte for byte: NCCL_IB_HCA
with the `=` exact-match prefix in rail order, and on RoCE NCCL_IB_TC = the plan's RoCE ToS byte
(DSCP << 2 | ECT(0)), the value qos.sh gives cma_roce_tos and traffic_class. On a cloud target it
is what the provider's own scripts set for the instance type, read from the instance catalog
(`nccl` of each entry, with its source file); never
NCCL_IB_TC, which means nothing on EFA or a provider-managed fabric.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from cluster.catalog import Instance, load_catalog
from cluster.clouds import cloud
from cluster.dialects.host.render import pool_nccl_env
from cluster.render.engine import render
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import Topology

SHELL_SAFE = re.compile(r"[\w@%+=:,./^-]+")  # what bash takes unquoted in `KEY=value` (`^` only matters interactively)


@dataclass(frozen=True)
class Setting:
    name: str
    value: str
    why: str


@dataclass(frozen=True)
class CloudPoolView:
    """What the cloud env template shows for one pool."""

    stack: str
    pool: str
    nodes: int
    instance_type: str
    provider: str
    fabric: str
    transport: str
    source: str
    setup: tuple[str, ...]
    mounts: tuple[str, ...]
    settings: tuple[Setting, ...]


def nccl_env(spec: ClusterSpec, topology: Topology) -> dict[str, str]:
    """{pool name: env file text} for every pool of every target, sorted by pool name."""
    pools = sorted(spec.pools, key=lambda pool: pool.name)
    if not spec.is_cloud:
        return {pool.name: pool_nccl_env(spec, topology, pool) for pool in pools}
    catalog = load_catalog()
    files = {}
    for pool in pools:
        instance = catalog.instance(spec.target, pool.instance_type or "")
        if instance is None:  # the resolver rejects unknown instance types before this runs
            raise ValueError(f"{pool.path}.instance_type: {pool.instance_type!r} is not in the {spec.target} catalog")
        files[pool.name] = render("cloud/nccl.env.j2", view=cloud_view(spec, pool, instance))
    return files


def cloud_view(spec: ClusterSpec, pool: PoolSpec, instance: Instance) -> CloudPoolView:
    """The template view of one cloud pool: the catalog's profile, variables sorted by name."""
    profile = instance.nccl
    fabric = instance.fabric
    return CloudPoolView(
        stack=spec.name,
        pool=pool.name,
        nodes=pool.nodes,
        instance_type=pool.instance_type or "",
        provider=cloud(spec.target).provider,
        fabric=f"{fabric.count} x {fabric.gbps}G {fabric.kind} per node",
        transport=profile.transport,
        source=profile.source,
        setup=profile.setup,
        mounts=profile.mounts,
        settings=tuple(Setting(name, shell_value(setting.value), setting.why)
                       for name, setting in sorted(profile.env.items())),
    )


def shell_value(value: str) -> str:
    """The value as written after `KEY=`: quoted only where bash would split it (`;` in TCPX bindings),
    so `set -a; . nccl/<pool>.env` and systemd's EnvironmentFile both read what the provider set."""
    return value if SHELL_SAFE.fullmatch(value) else shlex.quote(value)
