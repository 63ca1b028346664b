"""Switch port numbers: one deterministic numbering for the cabling plan, the rendered switch
configs and the verification of what devices report.

Per switch: downlinks from port 1 up, in the order of the devices below (hosts in cluster order,
then switches in graph order); uplinks fill the model's fixed uplink ports (`u1`..) first, then the
top main ports, so growing the hosts under a leaf never moves its uplinks. Where the builder gave
an edge a slot (cluster.topology: uplinks striped over the tier above, the out-of-band leaves'
two port ranges), its links take those ports instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from cluster.load import Edge
from cluster.naming import MANAGEMENT, PlanPort
from cluster.records import Node, Slot


class PortSpan(NamedTuple):
    """One switch's ports for the links of one edge: fixed uplink ports `u<first>`.., then main
    ports `p<first>`.., each run `stride` apart (1: contiguous); or its management port, once
    per link. (A tuple: one per switch edge, 700,000 at 131,072 GPUs, hashed as a key where the
    edges' port names are read once per run.)"""

    fixed_first: int
    fixed_count: int
    main_first: int
    main_count: int
    management: bool = False
    stride: int = 1

    def ports(self) -> list[PlanPort]:
        if self.management:
            return [MANAGEMENT] * self.main_count
        step = self.stride
        return ([PlanPort("fixed", self.fixed_first + index * step) for index in range(self.fixed_count)]
                + [PlanPort("main", self.main_first + index * step) for index in range(self.main_count)])


def switch_ports(nodes: Mapping[str, Node], edges: Sequence[Edge]) -> dict[tuple[str, str, str], PortSpan]:
    """(switch, peer, network) -> the switch's ports for the links of that edge, in order.

    Computed from the graph's node records (in graph order) and its `edge_list`; the topology
    keeps it (Topology.switch_ports). An edge's `upper_slot` / `lower_slot` place its links
    where the builder chose (a stable layout); without one they follow the order above.
    """
    order = {name: index for index, name in enumerate(nodes)}
    down: dict[str, list[tuple[int, str, str, int, Slot | None]]] = {}
    up: dict[str, list[tuple[int, str, str, int, Slot | None]]] = {}
    for _u, _v, key, data in edges:
        lower, upper, links = data["lower"], data["upper"], data["links"]
        if nodes[upper]["kind"] == "switch":
            down.setdefault(upper, []).append((order[lower], lower, key, links, data["upper_slot"]))
        if nodes[lower]["kind"] == "switch":
            up.setdefault(lower, []).append((order[upper], upper, key, links, data["lower_slot"]))
    ports: dict[tuple[str, str, str], PortSpan] = {}
    for name, node in nodes.items():
        if node["kind"] != "switch":
            continue
        own = node["network"]
        next_main = 1
        # (graph order, peer, network) names one edge of the switch: the links and slot are never compared
        for _, peer, network, links, slot in sorted(down.get(name, [])):
            if slot is None:
                ports[(name, peer, network)] = PortSpan(0, 0, next_main, links)
                next_main += links
            else:
                first, stride = slot
                ports[(name, peer, network)] = PortSpan(0, 0, first + 1, links, stride=stride)
                next_main = max(next_main, first + 1 + (links - 1) * stride + 1)
        uplinks = [(peer, network, links, slot) for _, peer, network, links, slot in sorted(up.get(name, []))]
        fixed = node["uplink_ports"]
        on_main = sum(links for peer, network, links, _ in uplinks
                      if not (network == "oob" and own != "oob")) - fixed
        # Main-port uplinks sit on the top ports, so adding a node never moves an uplink.
        main_base = max(next_main, node["ports"] - max(on_main, 0) + 1)
        next_slot = 0
        for peer, network, links, slot in uplinks:
            if network == "oob" and own != "oob":
                ports[(name, peer, network)] = PortSpan(0, 0, 0, links, management=True)
                continue
            if slot is None:
                slot = (next_slot, 1)
                next_slot += links
            ports[(name, peer, network)] = _uplink_span(slot, links, fixed, main_base)
    return ports


def _uplink_span(slot: Slot, links: int, fixed: int, main_base: int) -> PortSpan:
    """Uplink slots first, first + stride, ..: slot u is fixed port u + 1 while u < fixed, else
    main port main_base + u - fixed."""
    first, stride = slot
    on_fixed = min(links, max(0, -(-(fixed - first) // stride)))
    main_slot = first + on_fixed * stride
    return PortSpan(first + 1 if on_fixed else 0, on_fixed, main_base + max(0, main_slot - fixed), links - on_fixed,
                    stride=stride)
