"""Address pools large enough for the design."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.addressing import allocate
from cluster.findings import Finding
from cluster.load import edge_list
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology


def address_demand(spec: ClusterSpec, topology: Topology) -> dict[str, int]:
    """Addresses each pool must hold: a loopback per routed switch, a /31 per switch-to-switch
    link, and on RoCE a /31 per host fabric port (per-rail routed host links) plus one
    address per storage and management port."""
    graph = topology.graph
    routed_fabric = spec.fabric is not None and spec.fabric.transport == "roce"
    loopbacks = links = hosts = 0
    for _name, data in topology.switches():
        if data["network"] == "oob" or (data["network"] == FABRIC and not routed_fabric):
            continue
        loopbacks += 1
    kind = dict(graph.nodes(data="kind"))  # a plain dict: one lookup per edge, 460k at 131,072 GPUs
    for lower, _upper, _key, data in edge_list(graph):
        if data["network"] == "oob" or (data["network"] == FABRIC and not routed_fabric):
            continue
        if kind[lower] == "switch":
            links += 2 * data["links"]
        else:
            hosts += (2 if data["network"] == FABRIC else 1) * data["links"]
    return {"loopbacks": loopbacks, "fabric_links": links, "hosts": hosts}


class AddressPools(Rule):
    """addressing.loopbacks, fabric_links and hosts hold every allocation of `cluster.addressing`
    (fixed regions per tier, network and node pool, so growth never renumbers), and the leaf
    ASNs stay in range and clear of the spine ASNs. Overlapping pools are a SCHEMA error."""

    id = "ADDR-POOL"
    title = "address pool sizes"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        seen: set[tuple[str, str]] = set()
        for problem in allocate(spec, topology, host_links=False).problems:
            # one finding per pool and region: the first device that does not fit names the gap
            key = (problem.path, problem.message.split(";")[0])
            if key not in seen:
                seen.add(key)
                yield self.finding(problem.path, problem.message, problem.hint)
