"""cluster.reach (FAB-CONNECTED's kernel) against networkx's own shortest paths on the switches."""

from __future__ import annotations

import itertools
from typing import Any

import networkx as nx
import pytest

from cluster.load import edge_list, link_arrays
from cluster.reach import PlaneReach, Twins, plane_reach
from cluster.topology import FABRIC
from tests.test_load import DESIGNS, graph_of

ONPREM = [name for name in DESIGNS if name != "aws"]


def fabric_switches(graph: Any) -> nx.Graph:
    """The fabric switches and their fabric cables, as a plain networkx graph."""
    switches = nx.Graph()
    for lower, upper, key in graph.edges(keys=True):
        kinds = graph.nodes[lower]["kind"], graph.nodes[upper]["kind"]
        if key == FABRIC and kinds == ("switch", "switch") and graph.nodes[lower]["network"] == FABRIC:
            switches.add_edge(lower, upper)
    return switches


def networkx_reach(graph: Any) -> dict[int, tuple[int, bool]]:
    """Per plane: (the most switches between two leaves with GPU ports, whether every pair connects),
    by networkx's BFS on `fabric_switches`."""
    switches = fabric_switches(graph)
    leaves: dict[int, set[str]] = {}
    for lower, upper, key in graph.edges(keys=True):
        if key == FABRIC and graph.nodes[lower]["kind"] == "host":
            leaves.setdefault(graph.nodes[upper]["plane"], set()).add(upper)
    answer = {}
    for plane, members in leaves.items():
        worst, connected = 1 if members else 0, True
        for a, b in itertools.combinations(sorted(members), 2):
            try:
                worst = max(worst, nx.shortest_path_length(switches, a, b) + 1)
            except (nx.NetworkXNoPath, nx.NodeNotFound):
                connected = False
        answer[plane] = (worst, connected)
    return answer


@pytest.mark.parametrize("name", ONPREM)
def test_plane_reach_equals_networkx(name: str) -> None:
    graph = graph_of(DESIGNS[name])
    expected = networkx_reach(graph)
    found = plane_reach(graph, link_arrays(graph, edge_list(graph)))
    assert {reach.plane: (reach.worst_hops, reach.unreachable is None) for reach in found} == expected
    for reach in found:  # the pair it names is that far apart
        if len(set(reach.worst)) == 2:
            assert nx.shortest_path_length(fabric_switches(graph), *reach.worst) + 1 == reach.worst_hops


def test_a_leaf_without_uplinks_is_unreachable() -> None:
    graph = graph_of(DESIGNS["rail-optimized"]).copy()
    leaf = next(n for n, d in graph.nodes(data=True) if d.get("tier") == "leaf" and d["network"] == FABRIC)
    for _, upper, key in list(graph.edges(leaf, keys=True)):
        if graph.nodes[upper]["kind"] == "switch" and key == FABRIC:
            graph.remove_edge(leaf, upper, key)
    assert networkx_reach(graph)[0][1] is False
    [reach] = plane_reach(graph, link_arrays(graph, edge_list(graph)))
    assert reach.unreachable is not None and leaf in reach.unreachable
    assert isinstance(reach, PlaneReach)


def test_twin_classes_give_the_plain_bfs_distances() -> None:
    """A small literal fabric: two leaves on the same two spines (twins), one spine further on."""
    adjacency = {0: [2, 3], 1: [2, 3], 2: [0, 1, 4], 3: [0, 1], 4: [2], 5: []}
    plain = nx.Graph((a, b) for a, peers in adjacency.items() for b in peers)
    plain.add_node(5)
    twins = Twins(adjacency)
    for source in adjacency:
        hops = twins.distances(source)
        lengths = nx.single_source_shortest_path_length(plain, source)
        assert {target: hops(target) for target in adjacency} == {t: lengths.get(t) for t in adjacency}
