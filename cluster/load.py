"""Per-switch port and bandwidth use, read off the topology graph."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import networkx as nx


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


def switch_load(graph: nx.MultiGraph, name: str) -> SwitchLoad:
    down_links = up_links = 0
    down_gbps = up_gbps = 0.0
    own_network = graph.nodes[name]["network"]
    for _, _, data in graph.edges(name, data=True):
        if data["network"] == "oob" and own_network != "oob":
            continue  # the switch's own management port, not a data port
        bandwidth = data["links"] * data["gbps"]
        if data["lower"] == name:
            up_links += data["links"]
            up_gbps += bandwidth
        else:
            down_links += data["links"]
            down_gbps += bandwidth
    return SwitchLoad(down_links, up_links, down_gbps, up_gbps)


def ports_used(graph: nx.MultiGraph, name: str, load: SwitchLoad) -> tuple[int, int]:
    """(main ports used, main ports available): uplinks fill the fixed uplink ports first."""
    data = graph.nodes[name]
    spill = max(0, load.up_links - data["uplink_ports"])
    return load.down_links + spill, data["ports"]


def worst_per_tier(graph: nx.MultiGraph, switches: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, tuple[str, SwitchLoad]]:
    """The most oversubscribed switch of each tier, among switches that have uplinks."""
    worst: dict[str, tuple[str, SwitchLoad]] = {}
    for name, data in switches:
        load = switch_load(graph, name)
        if not load.up_links:
            continue
        tier = data["tier"]
        if tier not in worst or load.oversubscription > worst[tier][1].oversubscription:
            worst[tier] = (name, load)
    return worst
