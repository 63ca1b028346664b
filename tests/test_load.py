"""The shared per-graph passes (edge list, link arrays, switch loads) against plain per-edge
walks of the graph, and ADDR-POOL's check-only allocation against the full one."""

from __future__ import annotations

import dataclasses
import gc
from collections import defaultdict
from typing import Any

import networkx as nx
import pytest

from cluster.addressing import allocate
from cluster.load import NETWORK_CODES, edge_list, link_arrays, switch_loads
from cluster.pipeline import Valid
from cluster.ports import switch_ports
from cluster.tree import fabric_tree
from tests.conftest import run, stack

H200 = {"name": "h200", "nodes": 16, "gpu": "H200"}
DESIGNS = {
    "rail-optimized": stack(),
    "rack-tor": stack(node_pools=[{**H200, "nodes": 64}], fabric={"design": "rack-tor"}),
    "dual-plane, dual-port NICs": stack(node_pools=[{**H200, "fabric_nics": {"count": 4, "gbps": 400, "ports_per_nic": 2}}],
                                        fabric={"planes": 2}),
    "storage on the fabric": stack(fabric={"shared_with": ["storage"]}),
    "three tiers": stack(node_pools=[{**H200, "nodes": 64}],
                         fabric={"leaf": {"ports": 32, "port_gbps": 400}, "leaves": 32, "spines": 32, "pods": 2,
                                 "cores": 8, "leaf_uplinks": 16, "spine_uplinks": 16}),
    "two pools": stack(node_pools=[H200, {"name": "b200", "nodes": 8, "gpu": "B200"}]),
    "aws": stack(target="aws", cloud={"region": "us-east-1", "zone": "us-east-1a"},
                 node_pools=[{"name": "gpu", "nodes": 4, "instance_type": "p5e.48xlarge"}]),
}


def graph_of(data: dict[str, Any]) -> Any:
    result = run(data)
    assert isinstance(result, Valid), [str(f) for f in result.findings]
    return result.topology.graph


@pytest.mark.parametrize("name", DESIGNS)
def test_edge_list_is_networkx_edge_order(name: str) -> None:
    graph = graph_of(DESIGNS[name])
    assert edge_list(graph) == list(graph.edges(keys=True, data=True))


@pytest.mark.parametrize("name", DESIGNS)
def test_link_arrays_are_the_edges(name: str) -> None:
    graph = graph_of(DESIGNS[name])
    arrays = link_arrays(graph, edge_list(graph))
    assert arrays.names == list(graph.nodes)
    columns = (arrays.lower, arrays.upper, arrays.links, arrays.gbps, arrays.lower_gbps, arrays.upper_gbps,
               arrays.rail, arrays.network)
    rows = [(arrays.names[low], arrays.names[high], *values)
            for low, high, *values in zip(*(column.tolist() for column in columns), strict=True)]
    assert rows == [(d["lower"], d["upper"], d["links"], d["gbps"], d["lower_gbps"], d["upper_gbps"],
                     -1 if d["rail"] is None else d["rail"], NETWORK_CODES[d["network"]])
                    for _, _, _, d in graph.edges(keys=True, data=True)]
    assert arrays.is_host.tolist() == [kind == "host" for _, kind in graph.nodes(data="kind")]


@pytest.mark.parametrize("name", DESIGNS)
def test_switch_loads_equal_a_walk_of_every_edge(name: str) -> None:
    graph = graph_of(DESIGNS[name])
    network_of = dict(graph.nodes(data="network"))
    expected: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0, 0.0])
    for _, _, data in graph.edges(data=True):
        oob = data["network"] == "oob"
        for end, down in ((data["lower"], False), (data["upper"], True)):
            # an oob cable at a switch off the oob network is its management port, not a data port
            if network_of.get(end) and (not oob or network_of[end] == "oob"):
                totals = expected[end]
                totals[0 if down else 1] += data["links"]
                totals[2 if down else 3] += data["links"] * data["gbps"]
    loads = switch_loads(link_arrays(graph, edge_list(graph)))
    assert set(loads) == {node for node, network in network_of.items() if network}
    for node, load in loads.items():
        assert [load.down_links, load.up_links, load.down_gbps, load.up_gbps] == expected.get(node, [0, 0, 0.0, 0.0])


SMALL_POOLS = [  # each too small for every design below
    {"loopbacks": "10.0.0.0/28", "fabric_links": "10.64.0.0/12", "hosts": "10.128.0.0/10"},
    {"loopbacks": "10.0.0.0/16", "fabric_links": "10.64.0.0/24", "hosts": "10.128.0.0/10"},
    {"loopbacks": "10.0.0.0/16", "fabric_links": "10.64.0.0/12", "hosts": "10.128.0.0/24"},
]


@pytest.mark.parametrize("addressing", [None, *SMALL_POOLS])
@pytest.mark.parametrize("name", ["rack-tor", "three tiers", "two pools"])
def test_check_only_allocation_finds_what_the_full_one_finds(name: str, addressing: dict[str, str] | None) -> None:
    data = {**DESIGNS[name], **({"addressing": addressing} if addressing else {})}
    result = run(data)
    assert isinstance(result, Valid)
    full = allocate(result.spec, result.topology)
    checked = allocate(result.spec, result.topology, links=False)
    assert checked.findings == full.findings
    assert (checked.loopbacks, checked.asns) == (full.loopbacks, full.asns)
    assert not checked.links
    assert bool(full.findings) == (addressing is not None)


def test_switch_to_switch_edges_are_not_rescanned_by_the_cycle_collector() -> None:
    graph = graph_of(DESIGNS["three tiers"])
    between = [data for _, _, data in graph.edges(data=True) if not data["ports"]]
    assert between and not any(gc.is_tracked(data) for data in between)


@pytest.mark.parametrize("name", DESIGNS)
def test_the_bulk_edge_insert_builds_what_add_edge_builds(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """CableGraph.add_cables writes networkx's structure itself: the graph must be the one that
    networkx's own add_edge makes from the same cables (nodes, edges, data, adjacency order)."""
    import networkx as nx

    from cluster.topology import CableGraph

    fast = graph_of(DESIGNS[name])

    def add_edge_each(graph: CableGraph, cables: Any) -> None:
        for lower, upper, key, data in cables:
            nx.MultiGraph.add_edge(graph, lower, upper, key=key, **data)

    monkeypatch.setattr(CableGraph, "add_cables", add_edge_each)
    plain = graph_of(DESIGNS[name])
    assert list(fast.nodes(data=True)) == list(plain.nodes(data=True))
    assert list(fast.edges(keys=True, data=True)) == list(plain.edges(keys=True, data=True))
    assert {node: list(neighbours) for node, neighbours in fast.adjacency()} == \
        {node: list(neighbours) for node, neighbours in plain.adjacency()}
    assert nx.utils.graphs_equal(fast, plain)
    # one key dict shared by both directions, as networkx keeps it
    for lower, upper in list(fast.edges())[:50]:
        assert fast._adj[lower][upper] is fast._adj[upper][lower]


def test_an_edge_added_twice_is_refused() -> None:
    from cluster.topology import CableGraph

    graph = CableGraph()
    graph.add_nodes_from(["a", "b"])
    graph.add_cables([("a", "b", "fabric", {"links": 1})])
    with pytest.raises(ValueError, match="added twice"):
        graph.add_cables([("b", "a", "fabric", {"links": 1})])


@pytest.mark.parametrize("shared", [["storage"], ["management"], ["storage", "management"], []])
def test_isolation_guests_equal_a_walk_of_every_edge(shared: list[str]) -> None:
    from cluster.rules.isolation import _guests

    result = run(stack(fabric={"shared_with": shared}))
    assert isinstance(result, Valid)
    graph = result.topology.graph
    fabric_switches = {name for name, data in graph.nodes(data=True)
                       if data["kind"] == "switch" and data["network"] == "fabric"}
    expected: dict[str, set[str]] = defaultdict(set)
    for lower, upper, data in graph.edges(data=True):
        if data["network"] in ("storage", "management"):
            expected[data["network"]].update({lower, upper} & fabric_switches)
    assert _guests(result.topology) == {network: names for network, names in expected.items() if names}
    assert set(_guests(result.topology)) == set(shared)


def test_derived_data_is_computed_once_and_equals_a_fresh_computation() -> None:
    """The topology is frozen and keeps what it derives from its graph as cached properties:
    each is computed on first use, once, and is what the plain functions give for the graph."""
    result = run(DESIGNS["three tiers"])
    assert isinstance(result, Valid)
    topology = result.topology
    graph = topology.graph
    with pytest.raises(dataclasses.FrozenInstanceError):
        topology.graph = nx.MultiGraph()  # type: ignore[misc]
    for name in ("edges", "link_arrays", "switch_loads", "switch_ports", "fabric_tree", "nodes", "switch_nodes"):
        assert getattr(topology, name) is getattr(topology, name), f"{name} is rebuilt on every read"
    assert topology.edges == edge_list(graph)
    assert topology.switch_loads == switch_loads(link_arrays(graph, edge_list(graph)))
    assert topology.switch_ports == switch_ports(dict(graph.nodes(data=True)), edge_list(graph))
    assert topology.fabric_tree == fabric_tree(graph, dict(topology.switches()), topology.hosts_by_pool)
    assert [len(group.hosts) for group in topology.fabric_tree.groups] != []


def test_the_bulk_insert_clears_networkx_s_own_cache() -> None:
    """CableGraph.add_cables writes networkx's adjacency directly and then clears the graph's
    own cache (`__networkx_cache__`, where networkx keeps e.g. backend conversions) with the
    private `nx._clear_cache`: if the pinned networkx changes that, this fails."""
    graph = graph_of(DESIGNS["rail-optimized"]).copy()
    graph.__networkx_cache__["gpu_cluster.probe"] = 1
    nx._clear_cache(graph)
    assert "gpu_cluster.probe" not in graph.__networkx_cache__
