"""Fabric sizing: how many leaves, spines, cores and uplinks a design has.

As-designed values from the stack file are honoured exactly; what is missing is sized for the
tier's max_oversubscription (1:1 by default), with the fewest switches that hold every port
budget and ratio with even ECMP (the same number of links from a switch to each switch it
spreads over), then the lowest price. Same numbers for every plane.
Capacity math (FACTS.md 3.2): with radix k at one speed, two tiers hold k*k/2 ports,
three tiers k*k*k/4.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from cluster.catalog.prices import generic_port_id, load_prices
from cluster.spec import ClusterSpec, FabricSpec, NetworkSpec, SwitchModel


@dataclass(frozen=True)
class FabricPlan:
    """The sized fabric, per plane."""

    rails: int  # leaves per leaf group (1 for rack-tor)
    groups: int
    nodes_per_leaf: int
    leaf_uplinks: int
    spines: int
    pods: int
    spine_uplinks: int
    cores: int
    auto: tuple[str, ...] = field(default=())
    problems: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())  # choices of the sizer the summary explains

    @property
    def leaves(self) -> int:
        return self.groups * self.rails

    @property
    def tiers(self) -> int:
        if self.cores:
            return 3
        return 2 if self.spines else 1


def link_gbps(a: int, b: int) -> int:
    """A link runs at the slower end's speed."""
    return min(a, b)


def uplink_port_gbps(switch: SwitchModel) -> int:
    return switch.uplink_gbps if switch.uplink_ports else switch.port_gbps


def uplinks_needed(down_gbps: float, up_link_gbps: int, ratio: float) -> int:
    """Fewest uplinks that keep down/up <= ratio (a tiny tolerance absorbs float noise)."""
    if down_gbps <= 0:
        return 0
    return max(1, math.ceil(down_gbps / (ratio * up_link_gbps) - 1e-9))


def fits(switch: SwitchModel, down_ports: int, up_ports: int) -> bool:
    """Downlinks use the main ports; uplinks use the fixed uplink ports first."""
    spill = max(0, up_ports - switch.uplink_ports)
    return down_ports + spill <= switch.ports


def max_down(switch: SwitchModel, per_node: int, down_gbps: int, up_gbps: int, ratio: float) -> int:
    """The most nodes a switch holds (per_node ports each) while keeping its uplink ratio."""
    best = 0
    low, high = 1, switch.ports // max(per_node, 1)
    while low <= high:
        middle = (low + high) // 2
        ports = middle * per_node
        if fits(switch, ports, uplinks_needed(ports * down_gbps, up_gbps, ratio)):
            best, low = middle, middle + 1
        else:
            high = middle - 1
    return best


def held_beside(switch: SwitchModel, per_node: int, down_gbps: int, up_gbps: int, ratio: float, uplinks: int) -> int:
    """The most nodes a switch holds beside `uplinks` uplinks: in its ports, within its ratio."""
    by_ports = (switch.ports - max(0, uplinks - switch.uplink_ports)) // max(per_node, 1)
    by_ratio = math.floor(uplinks * up_gbps * ratio / (max(per_node, 1) * down_gbps) + 1e-9)
    return max(0, min(by_ports, by_ratio))


def pick_spines(leaves: int, uplinks: int, spine_ports: int, spare: int = 0, redundant: bool = False) -> tuple[int, int]:
    """(spines, uplinks per leaf): the fewest spines that take every uplink with the same number of
    links from each leaf to each spine (even ECMP). Up to `spare` extra uplinks per leaf may be
    added to get there: 31 uplinks over 4 spines become 32 (the DGX SuperPOD 1-SU layout).
    `redundant`: at least two spines where the leaf's ports allow (no single spine whose loss cuts
    every leaf off; FAB-N1), so one uplink becomes two when a spare port is there."""
    best: tuple[int, int] | None = None
    if redundant and uplinks == 1 and spare >= 1:
        uplinks, spare = 2, spare - 1
    for candidate in range(uplinks, uplinks + spare + 1):
        least = max(2 if redundant and candidate >= 2 else 1, math.ceil(leaves * candidate / spine_ports))
        count = next((c for c in range(least, candidate + 1) if candidate % c == 0), None)
        if count is not None and (best is None or count < best[0]):
            best = (count, candidate)
    if best is None:  # more leaves than a spine has ports: FAB-RADIX reports it
        return max(1, math.ceil(leaves * uplinks / spine_ports)), uplinks
    return best


@dataclass(frozen=True)
class UpperTiers:
    """The spines and cores of a three-tier fabric, per plane: `pods` pods of `spines_per_pod`
    spines; every leaf of a pod has `leaf_uplinks` links spread evenly over its pod's spines,
    every spine `spine_uplinks` links spread over the cores."""

    pods: int
    leaf_uplinks: int
    spines_per_pod: int
    spine_uplinks: int
    cores: int
    problem: str = ""
    notes: tuple[str, ...] = ()

    @property
    def spines(self) -> int:
        return self.pods * self.spines_per_pod


def divisors(value: int) -> list[int]:
    """The divisors of `value` (>= 1), ascending."""
    low = [d for d in range(1, math.isqrt(value) + 1) if value % d == 0]
    return low + [value // d for d in reversed(low) if d * d != value]


def switch_price(switch: SwitchModel) -> float:
    """Low-end list price of one switch (prices.yaml; generic models per port), 0 when unpriced."""
    prices = load_prices()
    entry = prices.get(switch.model)
    if entry is not None:
        return entry.usd[0]
    main, uplink = prices.get(generic_port_id(switch.port_gbps)), prices.get(generic_port_id(switch.uplink_gbps))
    return (switch.ports * main.usd[0] if main else 0.0) + (switch.uplink_ports * uplink.usd[0] if uplink else 0.0)


def pod_counts(groups: int, spines: int | None) -> list[int]:
    """Every pod count that deals `groups` leaf groups out ceil(groups / pods) to a pod with none
    left empty (and, for as-designed `spines`, that divides them), ascending."""
    counts = sorted({-(-groups // size) for size in range(1, groups + 1)})
    if spines is not None:
        counts = [count for count in counts if spines % count == 0] or [1]
    return counts


def even_cores(pods: int, pod_uplinks: int, core_ports: int, floor: int = 1) -> int:
    """The fewest cores (at least `floor`) that take `pods` x `pod_uplinks` links and divide
    `pod_uplinks`, so that every pod reaches every core over the same number of links; the port
    minimum when no divisor fits (a spread the sizer ranks as uneven)."""
    least = max(floor, -(-pods * pod_uplinks // core_ports))
    return next((d for d in divisors(pod_uplinks) if d >= least), least)


class Rank(NamedTuple):
    """How one three-tier split compares with another: lower is better, field by field."""

    over: int  # ports beyond a budget, plus spine uplinks short of the ratio
    uneven: bool  # a leaf's links to its pod's spines, or a pod's to the cores, differ
    single: bool  # a spine or core whose loss cuts a switch off (FAB-N1)
    switches: int  # spines + cores
    usd: float  # their low-end price
    links: int  # leaf-spine and spine-core links (two optics and a cable each)
    pods: int
    leaf_uplinks: int
    spines_per_pod: int


def upper_tier_splits(fabric: FabricSpec, groups: int, rails: int, leaf_uplinks: int, spare: int, up: int,
                      core_up: int) -> Iterator[tuple[Rank, UpperTiers]]:
    """Every split worth ranking: pods of whole leaf groups, leaf uplinks rounded up into up to
    `spare` free leaf ports, spines per pod among the divisors of the leaf uplinks (the same
    links to each), spine uplinks from what the ratio needs up to the spine's free ports (while
    fewer cores are still possible), and for each the fewest cores that divide a pod's uplinks
    (at least two as well). Counts the stack file gives are the only candidates for them."""
    spine, core, ratio = fabric.spine, fabric.core, fabric.max_oversubscription.spine
    planes = fabric.planes
    given_spines = fabric.spines // planes if fabric.spines is not None else None
    given_cores = fabric.cores // planes if fabric.cores else None
    usd_spine, usd_core = switch_price(spine), switch_price(core)
    for pods in [fabric.pods] if fabric.pods else pod_counts(groups, given_spines):
        pod_leaves = -(-groups // pods) * rails  # the fullest pod
        for uplinks in range(leaf_uplinks, leaf_uplinks + spare + 1):
            for per_pod in [max(given_spines // pods, 1)] if given_spines is not None else divisors(uplinks):
                spine_down = -(-pod_leaves * uplinks // per_pod)
                needed = uplinks_needed(spine_down * up, core_up, ratio)
                most = max(needed, spine.ports + spine.uplink_ports - spine_down)
                choices = [fabric.spine_uplinks] if fabric.spine_uplinks is not None else range(needed, most + 1)
                lowest_cores: int | None = None
                for spine_uplinks in choices:
                    pod_up = per_pod * spine_uplinks
                    if lowest_cores is not None and -(-pods * pod_up // core.ports) > lowest_cores:
                        break  # more spine uplinks can no longer mean fewer cores
                    options = ({given_cores} if given_cores is not None else
                               {even_cores(pods, pod_up, core.ports), even_cores(pods, pod_up, core.ports, 2)})
                    for cores in sorted(options):
                        rank = Rank(
                            over=(max(0, spine_down + max(0, spine_uplinks - spine.uplink_ports) - spine.ports)
                                  + max(0, needed - spine_uplinks) + max(0, pods * pod_up - cores * core.ports)),
                            uneven=uplinks % per_pod != 0 or pod_up % cores != 0,
                            single=per_pod < 2 or cores < 2 or spine_uplinks < 2,
                            switches=pods * per_pod + cores,
                            usd=pods * per_pod * usd_spine + cores * usd_core,
                            links=groups * rails * uplinks + pods * pod_up,
                            pods=pods, leaf_uplinks=uplinks, spines_per_pod=per_pod,
                        )
                        if not rank.over and not rank.uneven:
                            lowest_cores = cores if lowest_cores is None else min(lowest_cores, cores)
                        yield rank, UpperTiers(pods=pods, leaf_uplinks=uplinks, spines_per_pod=per_pod,
                                               spine_uplinks=spine_uplinks, cores=cores)


def size_upper_tiers(fabric: FabricSpec, groups: int, rails: int, leaf_uplinks: int, spare: int, up: int,
                     core_up: int) -> UpperTiers:
    """Pods, spines and cores of a three-tier fabric, per plane: the best of upper_tier_splits by
    Rank. In order: every port budget and tier ratio held; even ECMP (the same number of links
    from a leaf to each spine of its pod and from each pod to each core, else a spine's
    equal-cost uplinks load some core-to-pod links more than others: 7 links' worth down 6 when
    pods reach a core over 6 or 7); no spine or core whose loss cuts a switch off, where the ports
    allow (FAB-N1); the fewest spines and cores; the lowest switch price (prices.yaml, low end);
    the fewest switch-to-switch links; the fewest pods (more GPUs within three hops). Counts the
    stack file gives are kept. Exhaustive: about 2 x sqrt(groups) pod counts x (spare + 1) leaf
    uplinks x their divisors x the spine uplinks that can still save a core; milliseconds for
    the largest designs the tool takes."""
    best: tuple[Rank, UpperTiers] | None = None
    fewest: int | None = None
    for rank, split in upper_tier_splits(fabric, groups, rails, leaf_uplinks, spare, up, core_up):
        if best is None or rank < best[0]:
            best = (rank, split)
        if not rank.over and not rank.uneven:
            fewest = rank.switches if fewest is None else min(fewest, rank.switches)
    assert best is not None
    rank, plan = best
    problem = ""
    spine = fabric.spine
    if rails > max_down(spine, 1, up, core_up, fabric.max_oversubscription.spine):
        problem = f"a {spine.model} spine cannot reach the {rails} leaves of one group"
    notes: list[str] = []
    if fabric.spines is None and not rank.over:
        links = plan.leaf_uplinks // plan.spines_per_pod
        notes.append(f"{plan.spines:,} spines in {plan.pods:,} pods, {links} link{'s' if links != 1 else ''} from each "
                     f"leaf to each spine of its pod, and {plan.cores:,} cores: the fewest that keep every tier within "
                     "its ratio with every link of a tier loaded alike")
    if not (rank.over or rank.uneven or rank.single) and fewest is not None and rank.switches > fewest:
        notes.append(f"{rank.switches:,} spines and cores rather than {fewest:,}, so that losing one spine or core "
                     "cuts nothing off (FAB-N1)")
    return UpperTiers(pods=plan.pods, leaf_uplinks=plan.leaf_uplinks, spines_per_pod=plan.spines_per_pod,
                      spine_uplinks=plan.spine_uplinks, cores=plan.cores, problem=problem, notes=tuple(notes))


def shared_ports_per_node(spec: ClusterSpec, fabric: FabricSpec) -> int:
    """Storage / management ports cabled to fabric leaves on a converged design."""
    ports = 0
    for pool in spec.pools:
        extra = 0
        if "storage" in fabric.shared_with:
            extra += pool.storage_nics.ports
        if "management" in fabric.shared_with:
            extra += pool.management_nics.ports
        ports = max(ports, extra)
    return ports


def size_fabric(spec: ClusterSpec) -> FabricPlan:
    fabric = spec.fabric
    assert fabric is not None
    planes, rails = fabric.planes, max(fabric.rails, 1)
    rail_optimized = fabric.design == "rail-optimized"
    leaves_per_group = rails if rail_optimized else 1
    shared = shared_ports_per_node(spec, fabric)
    shared_per_leaf = math.ceil(shared / (leaves_per_group * planes))
    per_node = (1 if rail_optimized else rails) + shared_per_leaf
    nic_gbps = max(pool.fabric_nics.gbps for pool in spec.pools)
    down = link_gbps(nic_gbps, fabric.leaf.port_gbps)
    up = link_gbps(uplink_port_gbps(fabric.leaf), fabric.spine.port_gbps)
    core_up = link_gbps(uplink_port_gbps(fabric.spine), fabric.core.port_gbps)
    ratio = fabric.max_oversubscription
    nodes = spec.nodes
    auto: list[str] = []
    problems: list[str] = []
    notes: list[str] = []

    single_leaf = not rail_optimized and fits(fabric.leaf, nodes * per_node, 0) and fabric.spines in (None, 0)
    capacity = nodes if single_leaf else max_down(fabric.leaf, per_node, down, up, ratio.leaf)
    if fabric.leaves is not None:
        groups = max(1, fabric.leaves // planes // leaves_per_group)
    else:
        if capacity == 0:
            problems.append(f"a {fabric.leaf.model} leaf cannot hold one node's {per_node} ports with uplinks")
            capacity = 1
        groups = math.ceil(nodes / capacity)
        auto.append("leaves")
    # even: as many nodes on each group as the groups allow; packed: each group filled to what a
    # leaf holds at its ratio, in order (never fewer than even, so the groups still hold them all).
    nodes_per_leaf = math.ceil(nodes / groups)
    if fabric.fill == "packed":
        if fabric.leaf_uplinks is not None:  # what a leaf holds beside the uplinks it was given
            capacity = held_beside(fabric.leaf, per_node, down, up, ratio.leaf, fabric.leaf_uplinks)
        nodes_per_leaf = max(nodes_per_leaf, capacity)
    leaves = groups * leaves_per_group
    needs_spine = leaves > 1 or bool(fabric.spines)

    if fabric.leaf_uplinks is not None:
        leaf_uplinks = fabric.leaf_uplinks
    else:
        leaf_uplinks = uplinks_needed(nodes_per_leaf * per_node * down, up, ratio.leaf) if needs_spine else 0
        auto.append("leaf_uplinks")

    three_tier = bool(fabric.cores) or bool(fabric.pods)
    if fabric.spines is None and fabric.cores is None and not fabric.pods and needs_spine:
        three_tier = leaves > fabric.spine.ports or leaf_uplinks > fabric.spine.ports
    pods = 1
    spine_uplinks = cores = 0
    spare = 0
    if fabric.leaf_uplinks is None and needs_spine:
        spare = max(0, min(leaf_uplinks, fabric.leaf.ports + fabric.leaf.uplink_ports
                           - nodes_per_leaf * per_node - leaf_uplinks))
    if three_tier:
        upper = size_upper_tiers(fabric, groups, leaves_per_group, leaf_uplinks, spare, up, core_up)
        pods, leaf_uplinks, spines = upper.pods, upper.leaf_uplinks, upper.spines
        spine_uplinks, cores = upper.spine_uplinks, upper.cores
        auto.extend(key for key, given in (("spines", fabric.spines), ("pods", fabric.pods or None),
                                           ("spine_uplinks", fabric.spine_uplinks), ("cores", fabric.cores or None))
                    if given is None)
        if upper.problem:
            problems.append(upper.problem)
        notes.extend(upper.notes)
    elif fabric.spines is not None:
        spines = fabric.spines // planes
    elif not needs_spine:
        spines = 0
    else:
        fewest, _ = pick_spines(leaves, leaf_uplinks, fabric.spine.ports, spare)
        spines, leaf_uplinks = pick_spines(leaves, leaf_uplinks, fabric.spine.ports, spare, redundant=True)
        auto.append("spines")
        if spines > fewest:
            notes.append(f"{spines} spines rather than {fewest}, so that losing one spine cuts no leaf off (FAB-N1)")
    return FabricPlan(
        rails=leaves_per_group,
        groups=groups,
        nodes_per_leaf=nodes_per_leaf,
        leaf_uplinks=leaf_uplinks,
        spines=spines,
        pods=pods,
        spine_uplinks=spine_uplinks,
        cores=cores,
        auto=tuple(auto),
        problems=tuple(problems),
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class NetworkPlan:
    """`nodes_per_leaf`: the devices a leaf takes, in order (packed). On the out-of-band network
    they are the hosts' BMCs, on a leaf's first ports, and `switches_per_leaf` switch management
    ports follow them on the leaf's next ports: two ranges of fixed size, so that more hosts never
    push a switch to another port and more switches never push a BMC."""

    leaves: int
    nodes_per_leaf: int
    leaf_uplinks: int
    spines: int
    auto: tuple[str, ...] = ()
    switches_per_leaf: int = 0


# The out-of-band leaf's share of device ports kept for switch management ports (the rest take
# BMCs). A scalable unit of 8-GPU servers brings about one switch per three hosts (prod: 64 hosts,
# 8 rail leaves, 8 spines, storage and management leaves), so a quarter holds it with some to spare.
OOB_SWITCH_SHARE = 4


def size_network(network: NetworkSpec, devices: int, ports_per_device: int, device_gbps: int,
                 switches: int | None = None) -> NetworkPlan:
    """A leaf-spine for storage, management or out-of-band: devices cabled to one leaf each, each
    leaf filled to what it holds at its ratio before the next (so adding devices at the end never
    moves one). `switches`: the out-of-band network's switch management ports, beside `devices`
    (the BMCs), each kind in its own range of every leaf."""
    leaf, spine = network.leaf, network.spine
    down = link_gbps(device_gbps, leaf.port_gbps)
    up = link_gbps(uplink_port_gbps(leaf), spine.port_gbps)
    auto: list[str] = []
    attached = devices + (switches or 0)
    if attached == 0 and network.leaves is None:
        return NetworkPlan(leaves=0, nodes_per_leaf=0, leaf_uplinks=0, spines=0)
    # What a leaf of a leaf-spine holds within the ratio: it sizes the leaves (and the out-of-band
    # leaf's two ranges); each leaf is filled to what it holds beside the uplinks given, if given.
    capacity = max(1, max_down(leaf, ports_per_device, down, up, network.max_oversubscription))
    fill = capacity if network.leaf_uplinks is None else held_beside(
        leaf, ports_per_device, down, up, network.max_oversubscription, network.leaf_uplinks)
    single = fits(leaf, attached * ports_per_device, 0) and not network.spines and network.leaves in (None, 1)
    if switches is not None:
        switch_share = max(1, -(-capacity // OOB_SWITCH_SHARE)) if capacity > 1 else 0
        bmc_share = max(1, capacity - switch_share)
        needed = max(1, -(-devices // bmc_share), -(-switches // switch_share) if switch_share else 0)
        if single and needed > 1:
            # One leaf holds them all, with no uplinks: the range that overflows takes the leaf's
            # spare ports (BMCs keep their range while they fit it), rather than a second leaf and
            # a spine; a second leaf later moves only what then overflows.
            if devices <= bmc_share and switches <= leaf.ports - bmc_share:
                switch_share = leaf.ports - bmc_share
            else:
                bmc_share, switch_share = leaf.ports - switches, switches
            needed = 1
    else:
        needed = max(1, -(-devices // capacity)) if not single else 1
    if network.leaves is not None:
        leaves = max(network.leaves, 1)
    else:
        leaves = needed
        auto.append("leaves")
    if switches is not None:
        if leaves < needed:  # too few leaves given: spread each kind evenly (FAB-RADIX states the overflow)
            bmc_share, switch_share = -(-devices // leaves), -(-switches // leaves)
        nodes_per_leaf, switches_per_leaf = bmc_share, switch_share
        on_leaf = min(bmc_share + switch_share, attached)
    else:
        nodes_per_leaf = max(-(-devices // leaves), devices if single else fill) if devices else 0
        switches_per_leaf = 0
        on_leaf = min(nodes_per_leaf, devices)
    if network.leaf_uplinks is not None:
        uplinks = network.leaf_uplinks
    elif leaves > 1 or network.spines:
        uplinks = uplinks_needed(on_leaf * ports_per_device * down, up, network.max_oversubscription)
        auto.append("leaf_uplinks")
    else:
        uplinks = 0
    if network.spines is not None:
        spines = network.spines
    elif uplinks:
        # Spare leaf ports may round the uplinks up to a count the spines divide evenly: 29
        # uplinks would otherwise need 29 spines of one link each (29 is prime).
        spare = 0 if network.leaf_uplinks is not None else max(
            0, min(uplinks, leaf.ports + leaf.uplink_ports - on_leaf * ports_per_device - uplinks))
        spines, uplinks = pick_spines(leaves, uplinks, spine.ports, spare)
        auto.append("spines")
    else:
        spines = 0
    return NetworkPlan(leaves=leaves, nodes_per_leaf=nodes_per_leaf, leaf_uplinks=uplinks, spines=spines,
                       auto=tuple(auto), switches_per_leaf=switches_per_leaf)
