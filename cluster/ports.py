"""Switch port numbers: one deterministic numbering for the cabling plan, the rendered switch
configs and the verification of what devices report.

Per switch: downlinks from port 1 up, in the order of the devices below (hosts in cluster order,
then switches in graph order); uplinks fill the model's fixed uplink ports (`u1`..) first, then the
top main ports, so growing the hosts under a leaf never moves its uplinks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cluster.load import Edge
from cluster.naming import MANAGEMENT, PlanPort
from cluster.records import Node


@dataclass(frozen=True, slots=True)
class PortSpan:
    """One switch's ports for the links of one edge: fixed uplink ports `u<first>`.., then main
    ports `p<first>`.. (contiguous by construction); or its management port, once per link."""

    fixed_first: int
    fixed_count: int
    main_first: int
    main_count: int
    management: bool = False

    def ports(self) -> list[PlanPort]:
        if self.management:
            return [MANAGEMENT] * self.main_count
        return ([PlanPort("fixed", self.fixed_first + index) for index in range(self.fixed_count)]
                + [PlanPort("main", self.main_first + index) for index in range(self.main_count)])


def switch_ports(nodes: Mapping[str, Node], edges: Sequence[Edge]) -> dict[tuple[str, str, str], PortSpan]:
    """(switch, peer, network) -> the switch's ports for the links of that edge, in order.

    Computed from the graph's node records (in graph order) and its `edge_list`; the topology
    keeps it (Topology.switch_ports).
    """
    order = {name: index for index, name in enumerate(nodes)}
    down: dict[str, list[tuple[int, str, str, int]]] = {}
    up: dict[str, list[tuple[int, str, str, int]]] = {}
    for _u, _v, key, data in edges:
        lower, upper, links = data["lower"], data["upper"], data["links"]
        if nodes[upper]["kind"] == "switch":
            down.setdefault(upper, []).append((order[lower], lower, key, links))
        if nodes[lower]["kind"] == "switch":
            up.setdefault(lower, []).append((order[upper], upper, key, links))
    ports: dict[tuple[str, str, str], PortSpan] = {}
    for name, node in nodes.items():
        if node["kind"] != "switch":
            continue
        own = node["network"]
        next_main = 1
        for _, peer, network, links in sorted(down.get(name, [])):
            ports[(name, peer, network)] = PortSpan(0, 0, next_main, links)
            next_main += links
        uplinks = [(peer, network, links) for _, peer, network, links in sorted(up.get(name, []))]
        fixed = node["uplink_ports"]
        on_main = sum(links for peer, network, links in uplinks
                      if not (network == "oob" and own != "oob")) - fixed
        # Main-port uplinks sit on the top ports, so adding a node never moves an uplink.
        next_main = max(next_main, node["ports"] - max(on_main, 0) + 1)
        next_fixed = 1
        for peer, network, links in uplinks:
            if network == "oob" and own != "oob":
                ports[(name, peer, network)] = PortSpan(0, 0, 0, links, management=True)
                continue
            on_fixed = max(0, min(links, fixed - next_fixed + 1))
            ports[(name, peer, network)] = PortSpan(next_fixed, on_fixed, next_main, links - on_fixed)
            next_fixed += on_fixed
            next_main += links - on_fixed
    return ports

