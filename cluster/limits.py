"""What a design implies (GPUs, switches, cables, pods), worked out from the sizer alone before
anything is built, and refused past documented limits or where the sizing cannot hold: a few
lines of YAML must not make the tool build a graph of millions of switches. The limits are about
twice the largest design docs/guides/scale.md documents (131,072 GPUs on three tiers: 6,184
switches, 477,689 cables), so that design and its split into per-pod stacks keep working."""

from __future__ import annotations

from dataclasses import dataclass

from cluster.findings import Finding, schema
from cluster.sizing import FabricPlan, size_fabric, size_network
from cluster.spec import ClusterSpec, NetworkSpec

MAX_GPUS = 262_144
MAX_SWITCHES = 16_384
MAX_CABLES = 1_500_000
#: Devices (fabric switches and hosts) one lab slice holds, for `lab up` and `lab export`: a lab is
#: one process tree per device on one machine, and its plan grows faster than its devices (here,
#: benchmarks/verbs_at_limit.py: 1,216 devices in 9 s and 0.5 GB, 5,376 in 79 s and 5.5 GB).
MAX_LAB_DEVICES = 2_048


@dataclass(frozen=True)
class Part:
    """Switches and cables of one network, and the config path that sizes it."""

    path: str
    switches: int
    cables: int


def implied(spec: ClusterSpec, plan: FabricPlan | None = None) -> list[Part]:
    """Switches and cables per network, as the builder will make them (arithmetic only)."""
    parts: list[Part] = []
    nodes = spec.nodes
    if spec.fabric is not None:
        fabric, plan = spec.fabric, plan or size_fabric(spec)
        planes = fabric.planes
        host_ports = sum(pool.nodes * pool.fabric_nics.ports for pool in spec.pools)
        for shared in fabric.shared_with:
            host_ports += sum(pool.nodes * pool.nics(shared).ports for pool in spec.pools)
        switches = planes * (plan.leaves + plan.spines + plan.cores)
        cables = host_ports + planes * (plan.leaves * plan.leaf_uplinks + plan.spines * plan.spine_uplinks)
        parts.append(Part("fabric", switches, cables))
    for network in (spec.storage, spec.management):
        if network is None or (spec.fabric is not None and network.name in spec.fabric.shared_with):
            continue
        ports = max((pool.nics(network.name).ports for pool in spec.pools), default=0)
        gbps = max((pool.nics(network.name).gbps for pool in spec.pools), default=1)
        attached = sum(pool.nodes for pool in spec.pools if pool.nics(network.name).ports)
        parts.append(_network(network, attached, ports, gbps))
    if spec.oob is not None:
        parts.append(_network(spec.oob, nodes, 1, 1, sum(part.switches for part in parts)))
    return parts


def _filled(groups: int, pods: int) -> int:
    """Pods that get leaf groups when `groups` are dealt out `ceil(groups / pods)` to a pod."""
    return -(-groups // -(-groups // pods))


def _network(network: NetworkSpec, devices: int, ports: int, gbps: int, switches: int | None = None) -> Part:
    plan = size_network(network, devices, max(ports, 1), gbps, switches)
    return Part(network.name, plan.leaves + plan.spines,
                devices * ports + (switches or 0) + plan.leaves * plan.leaf_uplinks)


def limit_findings(spec: ClusterSpec) -> tuple[list[Finding], FabricPlan | None]:
    """SCHEMA findings for a design larger than the tool builds (nothing is built for it), and the
    fabric's plan, sized once here for the builder too (None: no fabric, or not sized)."""
    findings: list[Finding] = []
    gpus = sum(pool.nodes * pool.gpus_per_node for pool in spec.pools)
    if gpus > MAX_GPUS:
        findings.append(schema("node_pools", f"the pools hold {gpus:,} GPUs; gpu-cluster models at most {MAX_GPUS:,}",
                               "split the cluster into several stack files (one per building or pod)"))
        return findings, None  # the networks below would be sized for all of them
    plan = size_fabric(spec) if spec.fabric is not None else None
    if spec.fabric is not None and plan is not None and spec.fabric.pods:
        groups, pods = plan.groups, spec.fabric.pods
        if _filled(groups, pods) < pods:
            counts = [count for count in range(1, groups + 1) if _filled(groups, count) == count]
            shown = ", ".join(map(str, counts[:12])) + (", ..." if len(counts) > 12 else "")
            findings.append(schema("fabric.pods", f"{pods} pods for {groups} leaf group(s): a pod holds whole leaf "
                                   f"groups ({-(-groups // pods)} each), so {pods - _filled(groups, pods)} pod(s) "
                                   "would have no leaves",
                                   f"give fabric.pods one of {shown} (or 0 to size the tiers for 1:1)"))
            return findings, plan
    parts = implied(spec, plan)
    for part in parts:
        if part.switches > MAX_SWITCHES:
            findings.append(schema(part.path, f"the design implies {part.switches:,} {part.path} switches; the limit "
                                   f"is {MAX_SWITCHES:,}", f"give {part.path} larger switches or fewer leaves and spines "
                                   "(a typo in a count?)"))
    cables = sum(part.cables for part in parts)
    if cables > MAX_CABLES:
        worst = max(parts, key=lambda part: part.cables)
        findings.append(schema(worst.path, f"the design implies {cables:,} cables ({worst.cables:,} in {worst.path}); "
                               f"the limit is {MAX_CABLES:,}",
                               f"check the uplink counts and switch sizes of {worst.path} (a typo in a count?)"))
    return findings, plan
