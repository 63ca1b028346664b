"""Leaf-to-leaf reachability over the GPU fabric's switches: the kernel FAB-CONNECTED reads.

From the shared link arrays (`cluster.load`), not a networkx walk: at 131,072 GPUs there are 260k
switch-to-switch cables, and a dict insertion per cable cost more than the searches. The search
runs on twin classes (see `Twins`). tests/test_reach.py checks every answer against networkx's
own shortest paths on the switch subgraph.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import networkx as nx
import numpy as np

from cluster.load import NETWORK_CODES, LinkArrays
from cluster.topology import FABRIC

Node = TypeVar("Node", bound=Hashable)


@dataclass(frozen=True)
class PlaneReach:
    """The answer for one plane: switch hops of the farthest pair of leaves that hold GPU ports,
    or the first pair (in name order) with no fabric path at all."""

    plane: int
    worst_hops: int  # switches on the path, both leaves included; 0 when no leaf pair exists
    worst: tuple[str, str]
    unreachable: tuple[str, str] | None = None


def plane_reach(graph: nx.MultiGraph, arrays: LinkArrays) -> list[PlaneReach]:
    """Per plane (in order), how far apart the leaves with GPU ports are over fabric switches."""
    names = arrays.names
    fabric = arrays.network == NETWORK_CODES[FABRIC]
    switch = (arrays.node_network == NETWORK_CODES[FABRIC]) & ~arrays.is_host
    between = fabric & switch[arrays.lower] & switch[arrays.upper]
    ends = np.concatenate([arrays.lower[between], arrays.upper[between]])
    peers = np.concatenate([arrays.upper[between], arrays.lower[between]])
    order = np.argsort(ends, kind="stable")
    peers = peers[order].tolist()
    bounds = np.concatenate([[0], np.cumsum(np.bincount(ends, minlength=len(names)))]).tolist()
    adjacency = {node: peers[bounds[node]:bounds[node + 1]] for node in np.flatnonzero(switch).tolist()}
    host_leaves = np.unique(arrays.upper[fabric & arrays.is_host[arrays.lower]]).tolist()
    plane_of = dict(graph.nodes(data="plane"))
    by_plane: dict[int, list[int]] = defaultdict(list)
    for leaf in sorted(host_leaves, key=names.__getitem__):
        by_plane[plane_of[names[leaf]]].append(leaf)
    twins = Twins(adjacency)
    answers = []
    for plane, leaves in sorted(by_plane.items()):
        worst = (0, "", "")
        unreachable = None
        # Leaves with the same neighbours are interchangeable: search from one of each kind.
        kinds: dict[frozenset[int], int] = {}
        for leaf in leaves:
            kinds.setdefault(frozenset(adjacency[leaf]), leaf)
        for source in kinds.values():
            distance = twins.distances(source)
            for leaf in leaves:
                hops = distance(leaf)
                if hops is None:
                    unreachable = unreachable or (names[source], names[leaf])
                elif hops + 1 > worst[0]:
                    worst = (hops + 1, names[source], names[leaf])
        answers.append(PlaneReach(plane, worst[0], (worst[1], worst[2]), unreachable))
    return answers


class Twins:
    """Switch-to-switch distances, searched on the graph of twin classes.

    Switches with the same neighbour set ("twins", never adjacent to each other) are at the
    same distance from every other switch, so the search runs on one node per class: 560
    classes instead of 5,120 switches and 1k instead of 260k edges at 131,072 GPUs, where one
    search per leaf class over every switch grew as pods x links. Exact: a shortest path never
    visits two twins (it could skip from the first to the second's successor), and twin
    classes that touch are joined member to member. Two twins are 2 apart via a shared neighbour.
    """

    def __init__(self, adjacency: Mapping[int, Iterable[int]]) -> None:
        keys: dict[frozenset[int], int] = {}
        self.class_of: dict[int, int] = {}
        for node, neighbours in adjacency.items():
            self.class_of[node] = keys.setdefault(frozenset(neighbours), len(keys))
        self.isolated = {index for key, index in keys.items() if not key}
        self.adjacent: dict[int, list[int]] = {
            index: sorted({self.class_of[node] for node in key}) for key, index in keys.items()
        }

    def distances(self, source: int) -> Callable[[int], int | None]:
        """Hops from switch `source` to a switch (None: unreachable); switches by graph position."""
        home = self.class_of[source]
        by_class = _bfs(self.adjacent, home)

        def hops(target: int) -> int | None:
            if target == source:
                return 0
            index = self.class_of[target]
            if index == home:
                return None if index in self.isolated else 2
            return by_class.get(index)

        return hops


def _bfs(graph: Mapping[Node, Iterable[Node]], source: Node) -> dict[Node, int]:
    distance = {source: 0}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        for neighbour in graph[node]:
            if neighbour not in distance:
                distance[neighbour] = distance[node] + 1
                queue.append(neighbour)
    return distance
