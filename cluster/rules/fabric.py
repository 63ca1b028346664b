"""Fabric capacity rules: oversubscription, switch radix, link speeds, reachability."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator

import numpy as np

from cluster import naming
from cluster.findings import Finding, Severity, schema
from cluster.load import ports_used, uplinks_for, worst_per_tier
from cluster.reach import plane_reach
from cluster.records import SwitchNode
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology

TIERS = ("leaf", "spine", "core")


def _onprem(spec: ClusterSpec) -> bool:
    return spec.fabric is not None


class Oversubscription(Rule):
    """Downlink / uplink bandwidth at every fabric switch with uplinks stays within its tier's
    max_oversubscription; reports the worst switch per tier. The top tier (no uplinks) is
    FAB-RADIX's concern."""

    id = "FAB-OVERSUB"
    title = "GPU fabric oversubscription per tier"

    def applies(self, spec: ClusterSpec) -> bool:
        return _onprem(spec)

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        assert spec.fabric is not None
        limits = spec.fabric.max_oversubscription
        worst = worst_per_tier(topology.switch_loads, topology.switches(FABRIC))
        for tier in TIERS:
            if tier not in worst:
                continue
            name, load = worst[tier]
            ratio, down, up = load.oversubscription, load.down_gbps, load.up_gbps
            limit = getattr(limits, tier)
            if ratio > limit + 1e-9:
                uplinks_key = "leaf_uplinks" if tier == "leaf" else "spine_uplinks"
                explicit = getattr(spec.fabric, uplinks_key) is not None
                path = f"fabric.{uplinks_key}" if explicit else "fabric.max_oversubscription"
                needed, per_link, room = uplinks_for(topology.switch(name), load, limit)
                if needed <= room:
                    fix = (f"give fabric.{uplinks_key}: {needed} ({needed} x {per_link:g}G up for {down:,.0f} Gbps "
                           f"down gives {down / (needed * per_link):.2f}:1)")
                else:
                    fix = (f"{name} needs {needed} x {per_link:g}G uplinks and has room for {room}: put fewer "
                           f"nodes per leaf or use a switch with more ports")
                yield self.finding(
                    path,
                    f"{tier} oversubscription expected <= {limit:g}:1, found {ratio:.2f}:1 at {name} "
                    f"({down:,.0f} Gbps down / {up:,.0f} Gbps up)",
                    f"{fix}, or raise fabric.max_oversubscription.{tier} to {ratio:.2f}",
                )


class Radix(Rule):
    """No switch uses more ports than it has at its port speed (breakouts counted), and the
    sizer could place every tier. Past the ports its OS has names for (SONiC's SKU port map ends),
    a switch's config cannot be written: that is a SCHEMA error too, which suppressing does not lift."""

    id = "FAB-RADIX"
    title = "switch port budgets"

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        plan = topology.fabric_plan
        for problem in plan.problems if plan else ():
            yield self.finding("fabric", f"cannot size the fabric: {problem}", "use a switch with more ports")
        worst: dict[tuple[str, str], tuple[int, str, int, int]] = {}
        for name, data in topology.switches():
            load = topology.switch_loads[name]
            used, available = ports_used(data, load)
            over = used - available
            key = (data["network"], data["tier"])
            if over > 0 and (key not in worst or over > worst[key][0]):
                worst[key] = (over, name, used, available)
        counts: dict[tuple[str, str], int] = defaultdict(int)
        for _, data in topology.switches():
            counts[(data["network"], data["tier"])] += 1
        for (network, tier), (_, name, used, available) in sorted(worst.items()):
            data = topology.switch(name)
            fix = (f"{_radix_fix(spec, network, tier, counts[(network, tier)], used, available)}, a switch with at "
                   f"least {used} ports, or a breakout speed")
            yield self.finding(
                data["path"],
                f"{network} {tier} {name} needs {used} ports at {data['port_gbps']}G, the {data['model']} has "
                f"{available}",
                fix,
            )
            named = _ports_named(data, used)
            if named < used:  # no config can name the other ports: not a finding to suppress
                yield schema(data["path"], f"{network} {tier} {name} needs {used} ports at {data['port_gbps']}G, and "
                             f"{data['os']} has names for only {named} ports of the {data['model']} at "
                             f"{data['port_gbps']}G: its config cannot be written", fix)


def _ports_named(switch: SwitchNode, wanted: int) -> int:
    """How many of front-panel ports 1..`wanted` the switch's OS has names for (SONiC's come from
    its SKU's port map, which ends), searched in halves."""
    low, high = 0, wanted
    while low < high:
        middle = (low + high + 1) // 2
        try:
            naming.front_panel(switch, middle)
            low = middle
        except ValueError:
            high = middle - 1
    return low


def _radix_fix(spec: ClusterSpec, network: str, tier: str, count: int, used: int, available: int) -> str:
    """How many switches of the tier spread the load within the model's ports."""
    wanted = math.ceil(count * used / available)
    key = f"{'leaves' if tier == 'leaf' else tier + 's'}"
    if network == FABRIC and tier == "leaf" and spec.fabric is not None:
        step = spec.fabric.rails * spec.fabric.planes if spec.fabric.design == "rail-optimized" else spec.fabric.planes
        wanted = math.ceil(wanted / step) * step  # leaves come in whole leaf groups
    if network == FABRIC and tier != "leaf" and spec.fabric is not None:
        wanted = math.ceil(wanted / spec.fabric.planes) * spec.fabric.planes
    prefix = "fabric" if network == FABRIC else network
    return f"give {prefix}.{key}: {wanted} ({count} now), so each carries its share"


class LinkSpeed(Rule):
    """A link runs at the slower end's speed; every mismatch between the two ends is reported."""

    id = "FAB-LINK-SPEED"
    title = "port speed mismatches"
    severity = Severity.WARNING

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        seen: dict[tuple[str, int, int], int] = defaultdict(int)
        arrays, edges = topology.link_arrays, topology.edges
        # the mismatched edges from the link arrays (one row per edge, in edge order): only those are read
        for row in np.flatnonzero(arrays.lower_gbps != arrays.upper_gbps).tolist():
            data = edges[row][3]
            seen[(data["path"], data["lower_gbps"], data["upper_gbps"])] += data["links"]
        for (path, lower, upper), links in sorted(seen.items()):
            yield self.finding(
                path,
                f"{links} links join {lower}G and {upper}G ports and run at {min(lower, upper)}G",
                "match the port speeds (a breakout, another switch port_gbps or NIC)",
            )


class Connected(Rule):
    """Every GPU reaches every other GPU over the fabric within policy.max_switch_hops
    (default 3 switches for two tiers, 5 for three): leaves that hold GPU ports must reach
    each other, and two GPUs must share a plane."""

    id = "FAB-CONNECTED"
    title = "GPU-to-GPU reachability"

    def applies(self, spec: ClusterSpec) -> bool:
        return _onprem(spec)

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        assert spec.fabric is not None and topology.fabric_plan is not None
        plan = topology.fabric_plan
        default_hops = {1: 1, 2: 3, 3: 5}[plan.tiers]
        limit = spec.policy.max_switch_hops or default_hops
        yield from self._planes_shared(spec)
        for reach in plane_reach(topology.graph, topology.link_arrays):
            if reach.unreachable is not None:
                source, leaf = reach.unreachable
                yield self.finding(
                    "fabric",
                    f"GPUs on {source} cannot reach GPUs on {leaf}: no fabric path"
                    + (f" in plane {reach.plane}" if spec.fabric.planes > 1 else ""),
                    "give every leaf uplinks to spines that reach every other leaf (fabric.spines, leaf_uplinks)",
                )
                return
            if reach.worst_hops > limit:
                yield self.finding(
                    "policy.max_switch_hops",
                    f"expected at most {limit} switch hops between GPUs, found {reach.worst_hops} from "
                    f"{reach.worst[0]} to {reach.worst[1]}",
                    "flatten the fabric or raise policy.max_switch_hops",
                )

    def _planes_shared(self, spec: ClusterSpec) -> Iterator[Finding]:
        assert spec.fabric is not None
        planes = spec.fabric.planes
        if planes == 1:
            return
        gpu_planes: dict[str, list[frozenset[int]]] = {}
        for pool in spec.pools:
            per_nic = pool.fabric_nics.ports_per_nic
            gpu_planes[pool.name] = [frozenset((nic * per_nic + port) % planes for nic, port in ports)
                                     for ports in pool.gpu_ports()]
        for pool_a, planes_a in gpu_planes.items():
            for pool_b, planes_b in gpu_planes.items():
                for gpu_a, set_a in enumerate(planes_a):
                    for gpu_b, set_b in enumerate(planes_b):
                        if not set_a & set_b:
                            yield self.finding(
                                "fabric.planes",
                                f"GPU {gpu_a} of {pool_a} (plane {sorted(set_a)}) and GPU {gpu_b} of {pool_b} "
                                f"(plane {sorted(set_b)}) share no plane, so they cannot reach each other over the fabric",
                                "use NICs with one port per plane (ports_per_nic = planes), or planes: 1"
                            )
                            return
