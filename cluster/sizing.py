"""Fabric sizing: how many leaves, spines, cores and uplinks a design has.

As-designed values from the stack file are honoured exactly; what is missing is sized for the
tier's max_oversubscription (1:1 by default). Same numbers for every plane.
Capacity math (FACTS.md 3.2): with radix k at one speed, two tiers hold k*k/2 ports,
three tiers k*k*k/4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

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
    if fabric.spines is not None:
        spines = fabric.spines // planes
    elif not needs_spine:
        spines = 0
    elif not three_tier:
        spare = 0
        if fabric.leaf_uplinks is None:
            spare = min(leaf_uplinks, fabric.leaf.ports + fabric.leaf.uplink_ports - nodes_per_leaf * per_node - leaf_uplinks)
        fewest, _ = pick_spines(leaves, leaf_uplinks, fabric.spine.ports, max(spare, 0))
        spines, leaf_uplinks = pick_spines(leaves, leaf_uplinks, fabric.spine.ports, max(spare, 0), redundant=True)
        auto.append("spines")
        if spines > fewest:
            notes.append(f"{spines} spines rather than {fewest}, so that losing one spine cuts no leaf off (FAB-N1)")
    else:
        spine_down_max = max_down(fabric.spine, 1, up, core_up, ratio.spine)
        groups_per_pod = spine_down_max // leaves_per_group
        if groups_per_pod == 0:
            problems.append(f"a {fabric.spine.model} spine cannot reach the {leaves_per_group} leaves of one group")
            groups_per_pod = 1
        pods = fabric.pods or math.ceil(groups / groups_per_pod)
        spines = leaf_uplinks * pods
        auto.extend(["spines", "pods"] if not fabric.pods else ["spines"])
    if three_tier:
        if fabric.pods:
            pods = fabric.pods
        elif fabric.spines is not None:
            auto.append("pods")
        # Pods hold whole leaf groups; the fullest pod decides the spines' uplinks.
        leaves_per_pod = math.ceil(groups / pods) * leaves_per_group
        spines_per_pod = max(1, spines // pods)
        spine_down = math.ceil(leaves_per_pod * leaf_uplinks / spines_per_pod)
        if fabric.spine_uplinks is not None:
            spine_uplinks = fabric.spine_uplinks
        else:
            spine_uplinks = uplinks_needed(spine_down * up, core_up, ratio.spine)
            auto.append("spine_uplinks")
        if fabric.cores:
            cores = fabric.cores // planes
        else:
            cores = max(1, math.ceil(spines * spine_uplinks / fabric.core.ports))
            auto.append("cores")
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
    leaves: int
    nodes_per_leaf: int
    leaf_uplinks: int
    spines: int
    auto: tuple[str, ...] = ()


def size_network(network: NetworkSpec, devices: int, ports_per_device: int, device_gbps: int) -> NetworkPlan:
    """A leaf-spine for storage, management or out-of-band: devices cabled to one leaf each."""
    leaf, spine = network.leaf, network.spine
    down = link_gbps(device_gbps, leaf.port_gbps)
    up = link_gbps(uplink_port_gbps(leaf), spine.port_gbps)
    auto: list[str] = []
    if devices == 0 and network.leaves is None:
        return NetworkPlan(leaves=0, nodes_per_leaf=0, leaf_uplinks=0, spines=0)
    if network.leaves is not None:
        leaves = max(network.leaves, 1)
    else:
        if fits(leaf, devices * ports_per_device, 0) and not network.spines:
            capacity = devices
        else:
            capacity = max(1, max_down(leaf, ports_per_device, down, up, network.max_oversubscription))
        leaves = max(1, math.ceil(devices / capacity))
        auto.append("leaves")
    nodes_per_leaf = math.ceil(devices / leaves) if devices else 0
    if network.leaf_uplinks is not None:
        uplinks = network.leaf_uplinks
    elif leaves > 1 or network.spines:
        uplinks = uplinks_needed(nodes_per_leaf * ports_per_device * down, up, network.max_oversubscription)
        auto.append("leaf_uplinks")
    else:
        uplinks = 0
    if network.spines is not None:
        spines = network.spines
    elif uplinks:
        # Spare leaf ports may round the uplinks up to a count the spines divide evenly: 29
        # uplinks would otherwise need 29 spines of one link each (29 is prime).
        spare = 0 if network.leaf_uplinks is not None else max(
            0, min(uplinks, leaf.ports + leaf.uplink_ports - nodes_per_leaf * ports_per_device - uplinks))
        spines, uplinks = pick_spines(leaves, uplinks, spine.ports, spare)
        auto.append("spines")
    else:
        spines = 0
    return NetworkPlan(leaves=leaves, nodes_per_leaf=nodes_per_leaf, leaf_uplinks=uplinks, spines=spines, auto=tuple(auto))
