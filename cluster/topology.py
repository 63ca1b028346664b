"""One networkx model of the physical cluster, built once from the spec and never mutated.

Nodes are hosts and switches; edges are cables, aggregated per (device, device, network) with
a `links` count. Names are stable: a host is `<pool>-node-NNN`, a rail leaf `leaf-GGG-rR`
(`pP-` in front on dual-plane fabrics), a spine `spine-NNN`; the same spec always gives
the same graph.

A node's attributes are a HostNode, SwitchNode or ProviderNode record, an edge's a CableData
record (cluster/records.py: read-only TypedDicts over networkx's own attribute dicts).

Edge values are immutable (tuples, not lists): the graph is never changed after build, and a
dict holding only immutable atoms is not tracked by Python's cycle collector, which at 131,072
GPUs saves it rescanning the 260k switch-to-switch edges.

The Topology is frozen, and what is derived from its graph alone (the edge list, the link
arrays, switch loads, port numbers, the fabric tree) is a cached property of it: computed on
first use, once, and never stale, because nothing changes the graph after build.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

import networkx as nx

from cluster.load import Edge, LinkArrays, SwitchLoad, edge_list, link_arrays, switch_loads
from cluster.naming import FABRIC as FABRIC
from cluster.naming import number
from cluster.ports import PortSpan, switch_ports
from cluster.records import CableData, HostNode, Node, Ports, ProviderNode, Slot, SwitchNode, Tier
from cluster.sizing import (
    FabricPlan,
    NetworkPlan,
    link_gbps,
    size_fabric,
    size_network,
    uplink_port_gbps,
)
from cluster.spec import ClusterSpec, NetworkSpec, PoolSpec, SwitchModel
from cluster.tree import FabricTree, fabric_tree

NETWORKS = ("fabric", "storage", "management", "oob")
PREFIX = {"storage": "stor", "management": "mgmt", "oob": "oob"}


@dataclass(frozen=True, eq=False)
class Topology:
    """The graph plus the sizing that produced it, and what is derived from the graph alone."""

    graph: nx.MultiGraph
    fabric_plan: FabricPlan | None
    network_plans: Mapping[str, NetworkPlan]
    hosts_by_pool: Mapping[str, tuple[str, ...]]

    @cached_property
    def edges(self) -> Sequence[Edge]:
        """Every edge once as (u, v, key, data), in networkx's edge order (cluster.load.edge_list)."""
        return edge_list(self.graph)

    @cached_property
    def link_arrays(self) -> LinkArrays:
        """The edges as numpy columns, for rules that sum or flow over every edge."""
        return link_arrays(self.graph, self.edges)

    @cached_property
    def switch_loads(self) -> Mapping[str, SwitchLoad]:
        """Links and Gbps up and down of every switch and provider fabric."""
        return switch_loads(self.link_arrays)

    @cached_property
    def switch_ports(self) -> Mapping[tuple[str, str, str], PortSpan]:
        """(switch, peer, network) -> the switch's ports for that edge's links (cluster.ports)."""
        return switch_ports(self.nodes, self.edges)

    @cached_property
    def fabric_tree(self) -> FabricTree:
        """Leaf groups, pods and cores of the on-prem GPU fabric, as a scheduler sees them."""
        return fabric_tree(self.graph, self.switch_nodes, self.hosts_by_pool)

    @cached_property
    def host_fabric(self) -> Mapping[str, tuple[frozenset[str], int]]:
        """Every host's GPU-fabric attachment: (the fabric leaves it is cabled to, the Gbps of its
        fabric links at the speed they run), read off its edges once (estimates place every host
        of a pool, for each collective and size)."""
        attached: dict[str, tuple[frozenset[str], int]] = {}
        for hosts in self.hosts_by_pool.values():
            for host in hosts:
                leaves, gbps = [], 0
                for peer, keyed in self.graph.adj[host].items():
                    for network, data in keyed.items():
                        if network != FABRIC:
                            continue
                        gbps += data["links"] * data["gbps"]
                        if self.graph.nodes[peer]["kind"] == "switch":
                            leaves.append(peer)
                attached[host] = (frozenset(leaves), gbps)
        return attached

    @cached_property
    def nodes(self) -> Mapping[str, Node]:
        """Every node's record by name, in graph order (networkx's own attribute dicts, typed)."""
        nodes: dict[str, Node] = dict(self.graph.nodes(data=True))
        return nodes

    @cached_property
    def switch_nodes(self) -> Mapping[str, SwitchNode]:
        """Every switch's record by name, in graph order."""
        found: dict[str, SwitchNode] = {}
        for name, data in self.graph.nodes(data=True):
            if data["kind"] == "switch":
                found[name] = data
        return found

    def switch(self, name: str) -> SwitchNode:
        """The record of switch `name` (a KeyError when `name` is no switch)."""
        return self.switch_nodes[name]

    def host(self, name: str) -> HostNode:
        """The record of host `name`; a ValueError when `name` is no host."""
        node = self.nodes[name]
        if node["kind"] != "host":
            raise ValueError(f"{name} is a {node['kind']}, not a host")
        return node

    def cables(self, node: str) -> Iterator[tuple[str, str, CableData]]:
        """(peer, network, record) of every edge of `node`, in the order of graph.edges(node)."""
        for peer, keyed in self.graph.adj[node].items():
            for network, data in keyed.items():
                yield peer, network, data

    def cable(self, lower: str, upper: str, network: str) -> CableData:
        """The record of the edge between `lower` and `upper` on `network` (a KeyError if none)."""
        data: CableData = self.graph.adj[lower][upper][network]
        return data

    def switches(self, network: str | None = None, tier: str | None = None) -> Iterator[tuple[str, SwitchNode]]:
        """Every switch (of `network`, of `tier`) with its record, in graph order."""
        for name, data in self.switch_nodes.items():
            if network is not None and data["network"] != network:
                continue
            if tier is not None and data["tier"] != tier:
                continue
            yield name, data


def host_name(pool: PoolSpec, index: int) -> str:
    return f"{pool.name}-node-{number(index)}"


def leaf_name(planes: int, plane: int, group: int, rail: int, rail_optimized: bool) -> str:
    prefix = f"p{plane}-" if planes > 1 else ""
    suffix = f"-r{rail}" if rail_optimized else ""
    return f"{prefix}leaf-{number(group)}{suffix}"


def _switch(graph: nx.MultiGraph, name: str, model: SwitchModel, network: str, tier: Tier, index: int, plane: int,
            group: int | None, rail: int | None, pod: int | None) -> None:
    node: SwitchNode = {
        "kind": "switch", "model": model.model, "ports": model.ports, "port_gbps": model.port_gbps,
        "uplink_ports": model.uplink_ports, "uplink_gbps": model.uplink_gbps, "os": model.os, "path": model.path,
        "network": network, "tier": tier, "index": index, "plane": plane, "group": group, "rail": rail, "pod": pod,
    }
    graph.add_node(name, **node)


Cable = tuple[str, str, str, CableData]  # (lower, upper, network, edge data)


def _cable(
    cables: list[Cable], lower: str, upper: str, network: str, lower_gbps: int, upper_gbps: int, path: str,
    links: int, ports: Ports, rail: int | None = None, lower_slot: Slot | None = None, upper_slot: Slot | None = None,
) -> None:
    """One edge for all `links` cables between lower and upper on `network`.

    Callers aggregate first (a host's ports per leaf, a switch's uplinks per upper), so every
    edge is made exactly once with no lookup; the graph takes them all at the end (add_cables).
    """
    cables.append((lower, upper, network, _record(lower, upper, network, lower_gbps, upper_gbps, path, links, ports,
                                                  rail, lower_slot, upper_slot)))


def _record(lower: str, upper: str, network: str, lower_gbps: int, upper_gbps: int, path: str, links: int,
            ports: Ports, rail: int | None = None, lower_slot: Slot | None = None,
            upper_slot: Slot | None = None) -> CableData:
    """The record of one edge. Edges that differ in a field or two (a switch's uplinks, the hosts
    of one leaf group) are copies of one record with those fields replaced (`{**record, ...}`, a
    C-level copy: 0.15 s less than a record built per edge at 131,072 GPUs); the keys keep this order."""
    return {
        "network": network,
        "links": links,
        "gbps": link_gbps(lower_gbps, upper_gbps),
        "lower_gbps": lower_gbps,
        "upper_gbps": upper_gbps,
        "lower": lower,
        "upper": upper,
        "ports": ports,
        "rail": rail,
        "path": path,
        "lower_slot": lower_slot,
        "upper_slot": upper_slot,
    }


class CableGraph(nx.MultiGraph):  # type: ignore[misc]  # networkx has no type hints
    """The topology's graph: a networkx MultiGraph, plus one bulk insert for the builder.

    `add_edge` costs about 1.6 us an edge (argument checks, a copy of the attribute dict, a
    cache clear); at 131,072 GPUs that was 0.75 s of a 1.2 s build for 461k edges. `add_cables`
    writes the same dict-of-dict-of-keydict structure networkx documents for subclasses
    (`_adj[u][v][key] = data`, one keydict shared by both directions), in the same order,
    keeping the builder's data dicts. Tests check the result equals an add_edge build.
    """

    def add_cables(self, cables: Iterable[Cable]) -> None:
        """Add edges (u, v, key, data) between nodes already in the graph; (u, v, key) must be new."""
        adjacency = self._adj
        for lower, upper, key, data in cables:
            neighbours = adjacency[lower]
            keyed = neighbours.get(upper)
            if keyed is None:
                neighbours[upper] = adjacency[upper][lower] = {key: data}
            elif key in keyed:
                raise ValueError(f"edge {lower} - {upper} ({key}) added twice")
            else:
                keyed[key] = data
        nx._clear_cache(self)


def _spread(cables: list[Cable], lower: str, uppers: list[str], links: int, offset: int, network: str,
            lower_gbps: int, upper_gbps: int, path: str, striped: bool = False, position: int = 0, lowers: int = 0,
            upper_down: int = 0) -> None:
    """Spread `links` uplinks of `lower` over `uppers` round-robin, starting at `offset` for balance.

    In blocks (the default) each upper takes a run of the lower's uplink ports and each lower a
    run of the upper's ports (cluster.ports). `striped` (fabric.uplink_layout): the lower's
    uplink k goes to upper (k + offset) mod len(uppers) (the offset only balances a count the
    uppers do not divide), and its t-th link to an upper takes that upper's port t x stride +
    `position` (its place among the upper's `lowers`; stride: as many lowers as the upper's
    `upper_down` ports hold at this many links each). Both ends then follow the uplink's own
    number and the upper's ports, not the count of uppers or lowers: doubling the uppers keeps
    every other uplink where it was, and more lowers take ports no lower had. With fewer links
    than uppers (spines to many cores) each lower reaches only some uppers: those stay in blocks.
    """
    count = len(uppers)
    if not uppers or links <= 0:
        return
    base, extra = divmod(links, count)
    if not extra and striped:
        offset = 0
    most = base + (1 if extra else 0)
    stride = max(lowers, upper_down // most)
    # With fewer links than uppers (64 spine uplinks over 1,024 cores) only `extra` uppers get a
    # link: visit just those, in the same ascending order, not every upper of every lower.
    indices = range(count) if base else sorted((offset + step) % count for step in range(extra))
    record = _record(lower, uppers[0], network, lower_gbps, upper_gbps, path, links, ())  # what every uplink shares
    for index in indices:
        first = (index - offset) % count
        links_here = base + (1 if first < extra else 0)
        if links_here:
            upper = uppers[index]
            data: CableData
            if striped and base:  # (with fewer links than uppers each lower reaches a few: in blocks)
                data = {**record, "links": links_here, "upper": upper, "lower_slot": (first, count),
                        "upper_slot": (position, stride)}
            else:
                data = {**record, "links": links_here, "upper": upper}
            cables.append((lower, upper, network, data))


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building or reading a large graph.

    At 100k+ GPUs the graph is hundreds of thousands of small acyclic dicts; every batch of
    new objects (edge dicts, tuples of a pass) made the collector rescan the whole heap, about
    40% of build time and half of rule time at 131,072 GPUs. Nothing here makes garbage cycles.

    On the way out, what the pause allocated joins the oldest generation unscanned (freeze, then
    unfreeze): the collector's first pass after the pause would otherwise walk every one of those
    objects once more (0.6 s after reading 131,072 GPUs' neighbor files). A cycle among them is
    still collected, by the next full collection.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def build(spec: ClusterSpec, plan: FabricPlan | None = None) -> Topology:
    """The whole physical topology of `spec`, its fabric laid out by `plan` (the pipeline sizes the
    fabric once, for the limits and for this; without one it is sized here)."""
    with gc_paused():
        return _build(spec, plan)


def _build(spec: ClusterSpec, plan: FabricPlan | None) -> Topology:
    graph = CableGraph(name=spec.name, target=spec.target)
    cables: list[Cable] = []
    hosts_by_pool: dict[str, tuple[str, ...]] = {}
    hosts: list[tuple[str, PoolSpec]] = []
    for pool in spec.pools:
        names = hosts_by_pool[pool.name] = tuple(host_name(pool, index) for index in range(pool.nodes))
        for index, name in enumerate(names):
            host: HostNode = {"kind": "host", "pool": pool.name, "gpus": pool.gpus_per_node, "index": index,
                              "cluster_index": len(hosts), "path": pool.path}
            graph.add_node(name, **host)
            hosts.append((name, pool))
    if spec.is_cloud:
        _build_cloud(spec, graph, cables)
        graph.add_cables(cables)
        return Topology(graph=graph, fabric_plan=None, network_plans={}, hosts_by_pool=hosts_by_pool)
    fabric_plan = _build_fabric(spec, graph, cables, hosts, plan or size_fabric(spec))
    assert spec.fabric is not None
    shared = spec.fabric.shared_with
    network_plans: dict[str, NetworkPlan] = {}
    for network in (spec.storage, spec.management):
        if network is not None and network.name not in shared:
            layout = {pool.name: (nics.ports, nics.gbps, nics.ports_per_nic)
                      for pool in spec.pools for nics in [pool.nics(network.name)]}
            network_plans[network.name] = _build_network(
                network, graph, cables, [(name, *layout[pool.name]) for name, pool in hosts])
    if spec.oob is not None:
        network_plans["oob"] = _build_network(spec.oob, graph, cables, [(name, 1, 1, 1) for name, _ in hosts],
                                              _in_order_of_service(graph, cables))
    graph.add_cables(cables)
    return Topology(graph=graph, fabric_plan=fabric_plan, network_plans=network_plans, hosts_by_pool=hosts_by_pool)


def _build_cloud(spec: ClusterSpec, graph: nx.MultiGraph, cables: list[Cable]) -> None:
    """The provider's fabric is one opaque node per pool: only host-side facts are ours."""
    for pool in spec.pools:
        fabric = f"{pool.name}-provider-fabric"
        provider: ProviderNode = {"kind": "provider", "network": FABRIC, "tier": "provider", "path": pool.path,
                                  "model": pool.fabric_kind}
        graph.add_node(fabric, **provider)
        for index in range(pool.nodes):
            nics = pool.fabric_nics
            _cable(cables, host_name(pool, index), fabric, FABRIC, nics.gbps, nics.gbps, f"{pool.path}.instance_type",
                   nics.count, ())


def _build_fabric(spec: ClusterSpec, graph: nx.MultiGraph, cables: list[Cable], hosts: list[tuple[str, PoolSpec]],
                  plan: FabricPlan) -> FabricPlan:
    fabric = spec.fabric
    assert fabric is not None
    rail_optimized = fabric.design == "rail-optimized"
    planes = fabric.planes
    up = uplink_port_gbps(fabric.leaf)
    groups_per_pod = -(-plan.groups // plan.pods)
    striped = fabric.uplink_layout == "striped"
    for plane in range(planes):
        leaves: list[str] = []
        for group in range(plan.groups):
            for rail in range(plan.rails):
                name = leaf_name(planes, plane, group, rail, rail_optimized)
                _switch(graph, name, fabric.leaf, network=FABRIC, tier="leaf", index=group, plane=plane, group=group,
                        rail=rail if rail_optimized else None, pod=group // groups_per_pod)
                leaves.append(name)
        prefix = f"p{plane}-" if planes > 1 else ""
        spines = [f"{prefix}spine-{number(index)}" for index in range(plan.spines)]
        spines_per_pod = max(1, plan.spines // plan.pods) if plan.spines else 0
        for index, name in enumerate(spines):
            pod = min(index // spines_per_pod, plan.pods - 1) if spines_per_pod else 0
            _switch(graph, name, fabric.spine, network=FABRIC, tier="spine", index=index, plane=plane, group=None,
                    rail=None, pod=pod)
        cores = [f"{prefix}core-{number(index)}" for index in range(plan.cores)]
        for index, name in enumerate(cores):
            _switch(graph, name, fabric.core, network=FABRIC, tier="core", index=index, plane=plane, group=None,
                    rail=None, pod=None)
        # A spine's downlink ports: all of them, less the main ports its uplinks to the cores take.
        spine_down = fabric.spine.ports - (max(0, plan.spine_uplinks - fabric.spine.uplink_ports) if cores else 0)
        leaves_per_pod = groups_per_pod * plan.rails if plan.pods > 1 else len(leaves)
        for index, leaf in enumerate(leaves):
            pod = graph.nodes[leaf]["pod"]
            pod_spines = spines[pod * spines_per_pod:(pod + 1) * spines_per_pod] if plan.pods > 1 else spines
            _spread(cables, leaf, pod_spines, plan.leaf_uplinks, index, FABRIC, up, fabric.spine.port_gbps,
                    "fabric.leaf_uplinks", striped, index % leaves_per_pod, leaves_per_pod, spine_down)
        core_up = uplink_port_gbps(fabric.spine)
        for index, spine in enumerate(spines):
            _spread(cables, spine, cores, plan.spine_uplinks, index * plan.spine_uplinks, FABRIC, core_up,
                    fabric.core.port_gbps, "fabric.spine_uplinks", striped, index, len(spines), fabric.core.ports)
    # Every host of one pool in one leaf group is cabled alike: its edge records (leaf, network,
    # rail, the immutable port tuples) are made once per (pool, group), and each host's are copies
    # naming it (16,384 hosts at 131,072 GPUs, a few dozen distinct cablings).
    cabling: dict[tuple[str, int], list[tuple[str, str, CableData]]] = {}
    for position, (host, pool) in enumerate(hosts):
        group = min(position // plan.nodes_per_leaf, plan.groups - 1)
        alike = cabling.get((pool.name, group))
        if alike is None:
            alike = cabling[(pool.name, group)] = [
                (leaf, network, _record(host, leaf, network, nic_gbps, fabric.leaf.port_gbps, path, len(ports), ports,
                                        port_rail))
                for leaf, network, nic_gbps, path, port_rail, ports in _host_cabling(spec, plan.rails, pool, group)]
        for leaf, network, record in alike:
            cables.append((host, leaf, network, {**record, "lower": host}))
    return plan


HostCable = tuple[str, str, int, str, int | None, tuple[tuple[int, int], ...]]  # leaf, network, gbps, path, rail, ports


def _host_cabling(spec: ClusterSpec, rails: int, pool: PoolSpec, group: int) -> list[HostCable]:
    """(leaf, network, NIC Gbps, config path, rail, (nic, port) pairs) of one host of `pool` in
    leaf group `group`: its fabric ports one per rail leaf (all of a plane on one leaf on
    rack-tor), then the storage or management ports a converged fabric carries."""
    fabric = spec.fabric
    assert fabric is not None
    planes, rail_optimized = fabric.planes, fabric.design == "rail-optimized"
    by_leaf: dict[tuple[str, str], tuple[int | None, list[tuple[int, int]]]] = {}
    nics = pool.fabric_nics
    for port_index in range(nics.ports):
        plane, rail = port_index % planes, port_index // planes
        leaf = leaf_name(planes, plane, group, rail if rail_optimized else 0, rail_optimized)
        by_leaf.setdefault((leaf, FABRIC), (rail, []))[1].append(divmod(port_index, nics.ports_per_nic))
    for network in fabric.shared_with:
        shared = pool.nics(network)
        for port_index in range(shared.ports):
            plane, rail = port_index % planes, (port_index // planes) % rails
            leaf = leaf_name(planes, plane, group, rail, rail_optimized)
            by_leaf.setdefault((leaf, network), (None, []))[1].append(divmod(port_index, shared.ports_per_nic))
    paths = {FABRIC: f"{pool.path}.fabric_nics", "storage": "fabric.shared_with", "management": "fabric.shared_with"}
    return [(leaf, network, pool.nics(network).gbps, paths[network], rail, tuple(ports))
            for (leaf, network), (rail, ports) in by_leaf.items()]


def _in_order_of_service(graph: nx.MultiGraph, cables: list[Cable]) -> list[str]:
    """Every switch, in the order of the first host it serves (a leaf: the first host cabled to
    it; a spine or core: the first of the switches below it), then in graph order. A scalable unit
    appended to the cluster serves only new hosts, so its switches come after every switch before
    it: the out-of-band leaves take switch management ports in this order."""
    # One pass over the cables with plain dicts (a networkx node view lookup per cable cost 0.2 s
    # at 131,072 GPUs): hosts give their leaves, then leaves give their spines, spines their cores.
    host_position = {name: data["cluster_index"] for name, data in graph.nodes(data=True) if data["kind"] == "host"}
    tier = {name: data["tier"] for name, data in graph.nodes(data=True) if data["kind"] == "switch"}
    upward: dict[str, list[tuple[str, str]]] = {"leaf": [], "spine": []}
    first: dict[str, int] = {}
    for lower, upper, _, _ in cables:
        position = host_position.get(lower)
        if position is None:
            above = upward.get(tier.get(lower, ""))
            if above is not None:
                above.append((lower, upper))
        elif position < first.get(upper, position + 1):
            first[upper] = position
    for tier_cables in upward.values():  # in tier order: a spine has every leaf's answer first
        for lower, upper in tier_cables:
            if lower in first:
                position = first[lower]
                if position < first.get(upper, position + 1):
                    first[upper] = position
    switches = list(tier)  # in graph order
    serving = len(graph)  # a switch with no host below it comes after those with one
    order = {name: index for index, name in enumerate(switches)}
    return sorted(switches, key=lambda name: (first.get(name, serving), order[name]))


def _build_network(network: NetworkSpec, graph: nx.MultiGraph, cables: list[Cable],
                   devices: list[tuple[str, int, int, int]], switches: list[str] | None = None) -> NetworkPlan:
    """Storage, management or out-of-band: each device cabled to one leaf, leaves to spines.
    `devices`: (name, ports, Gbps, ports per NIC); a cable's ports are (NIC, port) pairs, as the
    fabric's are, so that port p of a dual-port NIC has one place (and one address) of its own.
    Devices fill the leaves in order, each leaf to what it holds (NetworkPlan.nodes_per_leaf),
    each on the leaf's next ports. `switches` (out-of-band): the switches whose management ports
    it takes, in the order they fill the leaves' second port range (NetworkPlan)."""
    attached = [device for device in devices if device[1] > 0]
    ports_per_device = max((ports for _, ports, _, _ in attached), default=1)
    device_gbps = max((gbps for _, _, gbps, _ in attached), default=network.leaf.port_gbps)
    plan = size_network(network, len(attached), ports_per_device, device_gbps,
                        None if switches is None else len(switches))
    prefix = PREFIX[network.name]
    leaves = [f"{prefix}-leaf-{number(index)}" for index in range(plan.leaves)]
    spines = [f"{prefix}-spine-{number(index)}" for index in range(plan.spines)]
    for index, name in enumerate(leaves):
        _switch(graph, name, network.leaf, network=network.name, tier="leaf", index=index, plane=0, group=None,
                rail=None, pod=0)
    for index, name in enumerate(spines):
        _switch(graph, name, network.spine, network=network.name, tier="spine", index=index, plane=0, group=None,
                rail=None, pod=0)
    per_leaf = max(plan.nodes_per_leaf, 1)
    path = f"{network.name}.leaf"
    pairs: dict[tuple[int, int], Ports] = {}  # (ports, ports per NIC) -> the (NIC, port) pairs, one tuple shared
    for position, (device, ports, gbps, per_nic) in enumerate(attached):
        leaf_index, place = divmod(position, per_leaf)
        if leaf_index >= len(leaves):  # more than the leaves given hold: the last takes them (FAB-RADIX)
            leaf_index, place = len(leaves) - 1, position - (len(leaves) - 1) * per_leaf
        device_ports = pairs.get((ports, per_nic))
        if device_ports is None:
            device_ports = pairs[(ports, per_nic)] = tuple(divmod(port_index, per_nic) for port_index in range(ports))
        _cable(cables, device, leaves[leaf_index], network.name, gbps, network.leaf.port_gbps, path,
               ports, device_ports, upper_slot=(place * ports_per_device, 1) if switches is not None else None)
    if switches is not None and leaves:
        range_size = max(plan.switches_per_leaf, 1)
        for position, device in enumerate(switches):
            leaf_index, place = divmod(position, range_size)
            if leaf_index >= len(leaves):
                leaf_index, place = len(leaves) - 1, position - (len(leaves) - 1) * range_size
            _cable(cables, device, leaves[leaf_index], network.name, 1, network.leaf.port_gbps, path, 1,
                   ((0, 0),), upper_slot=(plan.nodes_per_leaf + place, 1))
    up = uplink_port_gbps(network.leaf)
    for index, leaf in enumerate(leaves):
        _spread(cables, leaf, spines, plan.leaf_uplinks, index, network.name, up, network.spine.port_gbps,
                f"{network.name}.leaf_uplinks")
    return plan
