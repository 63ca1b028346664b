"""Per-switch port and bandwidth use, read off the topology graph."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter

import networkx as nx
import numpy as np

from cluster.records import CableData, SwitchNode


@dataclass(frozen=True)
class SwitchLoad:
    """What one switch carries: links and Gbps toward the hosts (down) and away from them (up)."""

    down_links: int
    up_links: int
    down_gbps: float
    up_gbps: float

    @property
    def oversubscription(self) -> float:
        return self.down_gbps / self.up_gbps if self.up_gbps else float("inf")


# Each function here computes from scratch; the topology keeps each result as a cached property
# (cluster.topology.Topology.edges, .link_arrays, .switch_loads), computed once per graph.
NETWORK_CODES = {"fabric": 0, "storage": 1, "management": 2, "oob": 3}

Edge = tuple[str, str, str, CableData]  # (u, v, network, the cable record)


def edge_list(graph: nx.MultiGraph) -> list[Edge]:
    """Every edge once as (u, v, key, data), in graph.edges(keys=True, data=True) order.

    Aggregated once per graph because at 131,072 GPUs (460k edges) each networkx edge view
    pass costs 0.2-0.4 s and seven rules walk every edge; a plain list walks in 0.03 s.
    """
    # The walk networkx's edge view makes, over graph.adjacency() directly: the view's
    # per-edge generator machinery doubled the cost (0.6 s instead of 0.3 at 461k edges).
    edges: list[Edge] = []
    append = edges.append
    seen: set[str] = set()
    for node, neighbours in graph.adjacency():
        for neighbour, keyed in neighbours.items():
            if neighbour not in seen:
                for key, data in keyed.items():
                    append((node, neighbour, key, data))
        seen.add(node)
    return edges


@dataclass(frozen=True)
class LinkArrays:
    """The edges of `edge_list` as columns, one row per edge in the same order.

    Node ends are positions in `names` (the graph's node order). Rules that sum, flow or compare
    over every edge read these instead of walking the edge list once each: at 131,072 GPUs a
    Python pass with per-edge bookkeeping costs 0.05-0.3 s, a numpy reduction a few milliseconds.
    """

    names: list[str]
    index: dict[str, int]
    lower: np.ndarray  # int64 position of the edge's `lower` end
    upper: np.ndarray  # int64 position of the edge's `upper` end
    links: np.ndarray  # int64
    gbps: np.ndarray  # int64, per link
    lower_gbps: np.ndarray  # int64, the lower end's port speed
    upper_gbps: np.ndarray  # int64, the upper end's port speed
    rail: np.ndarray  # int64, the rail of a host's fabric edge, -1 for none
    network: np.ndarray  # int8, NETWORK_CODES of the edge
    node_network: np.ndarray  # int8 per node, NETWORK_CODES of a switch's own network, -1 for none
    is_host: np.ndarray  # bool per node

    @property
    def bandwidth(self) -> np.ndarray:
        """links x Gbps per edge."""
        product: np.ndarray = self.links * self.gbps
        return product


COLUMNS = itemgetter("lower", "upper", "links", "gbps", "lower_gbps", "upper_gbps", "rail", "network")


def link_arrays(graph: nx.MultiGraph, edges: Sequence[Edge]) -> LinkArrays:
    """`LinkArrays` of the graph's `edge_list`.

    Every edge's record is read once for all its columns, then the columns are turned by zip
    (reading one key of 460k scattered dicts per column cost 0.04 s a column at 131,072 GPUs).
    """
    count = len(edges)
    names = list(graph.nodes)
    index = {name: position for position, name in enumerate(names)}
    rows = map(COLUMNS, map(itemgetter(3), edges))
    lower, upper, links, gbps, lower_gbps, upper_gbps, rail, network = zip(*rows, strict=True) if count else ((),) * 8

    def positions(ends: tuple[str, ...]) -> np.ndarray:
        return np.fromiter(map(index.__getitem__, ends), dtype=np.int64, count=count)

    networks = [NETWORK_CODES.get(network, -1) if network else -1 for _, network in graph.nodes(data="network")]
    return LinkArrays(
        names=names,
        index=index,
        lower=positions(lower),
        upper=positions(upper),
        links=np.array(links, dtype=np.int64),
        gbps=np.array(gbps, dtype=np.int64),
        lower_gbps=np.array(lower_gbps, dtype=np.int64),
        upper_gbps=np.array(upper_gbps, dtype=np.int64),
        rail=np.fromiter((-1 if value is None else value for value in rail), dtype=np.int64, count=count),
        network=np.fromiter(map(NETWORK_CODES.__getitem__, network), dtype=np.int8, count=count),
        node_network=np.array(networks, dtype=np.int8),
        is_host=np.array([kind == "host" for _, kind in graph.nodes(data="kind")], dtype=bool),
    )


def switch_loads(a: LinkArrays) -> dict[str, SwitchLoad]:
    """SwitchLoad of every node that has a `network` (switches, provider fabrics), in one pass.

    Every edge joins its `lower` and `upper` end: up for the one, down for the other. An oob
    edge at a switch that is not on the oob network is its management port, not a data port.
    Summed over the link arrays (FAB-OVERSUB, FAB-RADIX, NET-OVERSUB and the report all ask for
    every switch); the sums are of integers, exact in float64 far beyond any cluster.
    """
    size = len(a.names)
    oob = NETWORK_CODES["oob"]
    bandwidth = a.bandwidth
    not_oob = a.network != oob
    counts_up = not_oob | (a.node_network[a.lower] == oob)
    counts_down = not_oob | (a.node_network[a.upper] == oob)
    up_links = np.bincount(a.lower[counts_up], a.links[counts_up], size).tolist()
    up_gbps = np.bincount(a.lower[counts_up], bandwidth[counts_up], size).tolist()
    down_links = np.bincount(a.upper[counts_down], a.links[counts_down], size).tolist()
    down_gbps = np.bincount(a.upper[counts_down], bandwidth[counts_down], size).tolist()
    has_network = (a.node_network >= 0).tolist()
    return {name: SwitchLoad(int(down_links[i]), int(up_links[i]), float(down_gbps[i]), float(up_gbps[i]))
            for i, name in enumerate(a.names) if has_network[i]}


def ports_used(switch: SwitchNode, load: SwitchLoad) -> tuple[int, int]:
    """(main ports used, main ports available): uplinks fill the fixed uplink ports first."""
    spill = max(0, load.up_links - switch["uplink_ports"])
    return load.down_links + spill, switch["ports"]


def uplinks_for(switch: SwitchNode, load: SwitchLoad, ratio: float) -> tuple[int, float, int]:
    """(uplinks, Gbps per uplink, uplinks the switch has room for) that bring the switch within
    `ratio`: the number a hint gives (uplinks of the speed it has now)."""
    per_link = load.up_gbps / load.up_links if load.up_links else float(switch["port_gbps"])
    needed = max(1, math.ceil(load.down_gbps / (ratio * per_link) - 1e-9))
    room = max(0, switch["ports"] + switch["uplink_ports"] - load.down_links)  # none, when downlinks overflow it
    return needed, per_link, room


def worst_per_tier(loads: Mapping[str, SwitchLoad],
                   switches: Iterable[tuple[str, SwitchNode]]) -> dict[str, tuple[str, SwitchLoad]]:
    """The most oversubscribed switch of each tier, among switches that have uplinks."""
    worst: dict[str, tuple[str, SwitchLoad]] = {}
    for name, data in switches:
        load = loads[name]
        if not load.up_links:
            continue
        tier = data["tier"]
        if tier not in worst or load.oversubscription > worst[tier][1].oversubscription:
            worst[tier] = (name, load)
    return worst
