"""N-1 what-if: what the GPU fabric looks like after losing one switch or one cable.

Works on the validated graph without changing it: loads come from the cached one-pass
`switch_loads`, and only the neighbours of the failed device are recomputed; bisection runs
max-flow with the failed device left out. The worst single failure of a tier is found in one
pass over the switch-to-switch cables: losing upper switch U takes cap(L, U) off the uplinks
of every L below it, so the worst L for each U is read off its cables (linear in links).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Set
from dataclasses import dataclass, field

from cluster.bisection import Cut, bisections
from cluster.load import SwitchLoad
from cluster.records import SwitchNode
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology

KINDS = ("leaf", "spine", "core", "link")
#: The tier whose oversubscription a failure in this tier changes (a failed leaf only takes its
#: own hosts' rail away; its tier is the one to read).
TIER_BELOW = {"leaf": "leaf", "spine": "leaf", "core": "spine"}


@dataclass(frozen=True)
class TierRatio:
    """The worst oversubscription of one tier before and after the failure."""

    tier: str
    before: float
    before_at: str
    after: float
    after_at: str


@dataclass(frozen=True)
class LostRail:
    """Hosts whose fabric ports on a failed device are gone."""

    device: str
    rail: int | None
    plane: int
    hosts: tuple[str, ...]
    gpus_without_rail: int  # GPUs whose every fabric port sat on failed devices
    gpus_degraded: int  # GPUs that keep some ports but lose bandwidth


@dataclass(frozen=True)
class Outcome:
    """One failure's effect on the fabric."""

    failed: str  # a switch name, or `lower~upper` for one cable
    ratios: tuple[TierRatio, ...]
    bisection_before: Cut | None
    bisection_after: Cut | None
    pod_before: Cut | None  # three tiers: the worst cut inside the failed device's pod (or the weakest)
    pod_after: Cut | None
    lost_rails: tuple[LostRail, ...] = ()
    cut_off: tuple[str, ...] = field(default=())  # switches left with downlinks but no uplinks

    def worst_after(self) -> float:
        return max((ratio.after for ratio in self.ratios), default=0.0)


class UnknownDevice(ValueError):
    """A --fail name that is not a fabric switch of this design."""


def fabric_switches(topology: Topology) -> dict[str, SwitchNode]:
    return {name: data for name, data in topology.switches(FABRIC)}


def fail(topology: Topology, spec: ClusterSpec, device: str) -> Outcome:
    """The fabric after losing switch `device`."""
    switches = fabric_switches(topology)
    if device not in switches:
        raise UnknownDevice(device)
    return _outcome(topology, spec, device, {device}, None)


def fail_link(topology: Topology, spec: ClusterSpec, lower: str, upper: str) -> Outcome:
    """The fabric after losing one cable of the bundle between `lower` and `upper`."""
    return _outcome(topology, spec, f"{lower}~{upper}", set(), (lower, upper))


def worst_single(topology: Topology, spec: ClusterSpec, kind: str) -> Outcome | None:
    """The worst single failure of a kind (leaf | spine | core | link); None when there is none."""
    if kind == "link":
        link = worst_link(topology)
        return None if link is None else fail_link(topology, spec, *link)
    switches = [name for name, data in fabric_switches(topology).items() if data["tier"] == kind]
    if not switches:
        return None
    if kind == "leaf":
        # Losing a leaf only relieves the tier above; what it costs is the rail of its hosts.
        served = _hosts_per_leaf(topology)
        device = min(switches, key=lambda name: (-served.get(name, 0), name))  # ties: the first name
    else:
        worst = worst_upper_failures(topology).get(kind, {})
        device = min(switches, key=lambda name: (-worst.get(name, (0.0, ""))[0], name))
    return fail(topology, spec, device)


def worst_upper_failures(topology: Topology) -> dict[str, dict[str, tuple[float, str]]]:
    """tier -> upper switch -> (worst ratio below it after losing it, the switch at that ratio).

    One pass over the fabric's switch-to-switch cables. A switch below left with no uplinks
    gives an infinite ratio (its GPUs are cut off from the rest of the fabric).
    """
    loads = topology.switch_loads
    tier_of = {name: str(data["tier"]) for name, data in topology.switches(FABRIC)}
    worst: dict[str, dict[str, tuple[float, str]]] = defaultdict(dict)
    for _, _, key, data in topology.edges:
        below, above = data["lower"], data["upper"]
        if key != FABRIC or below not in tier_of or above not in tier_of:
            continue
        load = loads[below]
        left = load.up_gbps - data["links"] * data["gbps"]
        ratio = load.down_gbps / left if left > 0 else float("inf")
        per_tier = worst[tier_of[above]]
        if ratio > per_tier.get(above, (-1.0, ""))[0]:
            per_tier[above] = (ratio, below)
    return dict(worst)


def worst_link(topology: Topology) -> tuple[str, str] | None:
    """The cable whose loss most raises a switch's oversubscription (a host cable if none)."""
    loads = topology.switch_loads
    switches = fabric_switches(topology)
    best: tuple[float, str, str] | None = None
    host_link: tuple[str, str] | None = None
    for _, _, key, data in topology.edges:
        if key != FABRIC:
            continue
        below, above = data["lower"], data["upper"]
        if below not in switches:
            host_link = host_link or (below, above)
            continue
        ratio = _without(loads[below], 0, 0, 1, data["gbps"]).oversubscription
        if best is None or ratio > best[0]:
            best = (ratio, below, above)
    return (best[1], best[2]) if best else host_link


def _without(load: SwitchLoad, down_links: int, down_gbps: float, up_links: int, up_gbps: float) -> SwitchLoad:
    return SwitchLoad(load.down_links - down_links, load.up_links - up_links, load.down_gbps - down_gbps,
                      load.up_gbps - up_gbps)


def _outcome(topology: Topology, spec: ClusterSpec, label: str, failed: set[str],
             link: tuple[str, str] | None) -> Outcome:
    fewer: dict[tuple[str, str], int] = {}
    if link is not None:
        lower, upper = link
        if not topology.graph.has_edge(lower, upper, key=FABRIC):
            raise UnknownDevice(f"{lower}~{upper}")
        cable = topology.cable(lower, upper, FABRIC)
        fewer[(cable["lower"], cable["upper"])] = 1
    return degrade(topology, spec, label, failed, fewer)


def degrade(topology: Topology, spec: ClusterSpec, label: str, failed: Set[str],
            fewer: Mapping[tuple[str, str], int]) -> Outcome:
    """The fabric without the switches `failed` and with `fewer[(lower, upper)]` fewer links in
    each of those fabric bundles (a failure, or the cables unplugged while a change is made)."""
    loads = topology.switch_loads
    switches = fabric_switches(topology)
    changed: dict[str, SwitchLoad] = {}
    for device in sorted(failed):
        for other, key, cable in topology.cables(device):
            if key != FABRIC or other not in switches or other in failed:
                continue
            load = changed.get(other, loads[other])
            bandwidth = cable["links"] * cable["gbps"]
            if cable["lower"] == other:
                changed[other] = _without(load, 0, 0, cable["links"], bandwidth)
            else:
                changed[other] = _without(load, cable["links"], bandwidth, 0, 0)
    for (lower, upper), count in sorted(fewer.items()):
        if lower in failed or upper in failed:
            continue
        gbps = topology.cable(lower, upper, FABRIC)["gbps"]
        for name, up in ((lower, True), (upper, False)):
            if name in switches:
                load = changed.get(name, loads[name])
                changed[name] = (_without(load, 0, 0, count, count * gbps) if up
                                 else _without(load, count, count * gbps, 0, 0))
    ratios = []
    by_tier: dict[str, list[tuple[str, SwitchLoad, SwitchLoad]]] = defaultdict(list)
    for name, data in switches.items():
        before = loads[name]
        if before.up_links and name not in failed:
            by_tier[data["tier"]].append((name, before, changed.get(name, before)))
    for tier in ("leaf", "spine", "core"):
        rows = by_tier.get(tier)
        if not rows:
            continue
        before_name, before_load, _ = max(rows, key=lambda row: row[1].oversubscription)
        after_name, _, after_load = max(rows, key=lambda row: _ratio(row[2]))
        ratios.append(TierRatio(tier, before_load.oversubscription, before_name, _ratio(after_load), after_name))
    cut_off = tuple(sorted(name for name, load in changed.items()
                           if loads[name].up_links and not load.up_links and load.down_links))
    where = sorted(failed) or sorted(lower for lower, _ in fewer)
    first = topology.nodes[where[0]] if where else None  # a failed switch, or a failed cable's lower end
    pod = first["pod"] if first is not None and first["kind"] == "switch" else None  # None on the core tier
    cuts_before = bisections(topology, pod=pod)
    cuts_after = bisections(topology, without=set(failed), fewer_links=dict(fewer), pod=pod)
    return Outcome(
        failed=label,
        ratios=tuple(ratios),
        bisection_before=cuts_before.fabric,
        bisection_after=cuts_after.fabric,
        pod_before=cuts_before.pod,
        pod_after=cuts_after.pod,
        lost_rails=tuple(lost_rails(topology, spec, set(failed), dict(fewer))),
        cut_off=cut_off,
    )


def _ratio(load: SwitchLoad) -> float:
    if not load.up_links:
        return float("inf") if load.down_links else 0.0
    return load.oversubscription


def _hosts_per_leaf(topology: Topology) -> dict[str, int]:
    served: dict[str, int] = defaultdict(int)
    nodes = topology.nodes
    for _, _, key, data in topology.edges:
        if key == FABRIC and nodes[data["lower"]]["kind"] == "host":
            served[data["upper"]] += 1
    return served


def lost_rails(topology: Topology, spec: ClusterSpec, failed: set[str],
               fewer: dict[tuple[str, str], int]) -> list[LostRail]:
    """Hosts with fabric ports on a failed leaf (or a failed host cable), and their GPUs."""
    pools = {pool.name: pool for pool in spec.pools}
    per_gpu = {name: pool.gpu_ports() for name, pool in pools.items()}
    lost: list[LostRail] = []
    devices = sorted(failed) + sorted({upper for (lower, upper) in fewer
                                      if topology.nodes[lower]["kind"] == "host" and upper not in failed})
    for device in devices:
        data = topology.switch(device)
        hosts: list[str] = []
        without = degraded = 0
        for host, key, edge in topology.cables(device):
            if key != FABRIC or topology.nodes[host]["kind"] != "host":
                continue
            if device not in failed and fewer.get((host, device), 0) == 0:
                continue
            ports = set(edge["ports"]) if device in failed else set(edge["ports"][-fewer[(host, device)]:])
            pool = topology.host(host)["pool"]
            hosts.append(host)
            for used in per_gpu[pool]:
                gone = used & ports
                if gone == used:
                    without += 1
                elif gone:
                    degraded += 1
        if hosts:
            lost.append(LostRail(device, data["rail"], data["plane"], tuple(sorted(hosts)),
                                 without, degraded))
    return lost
