"""Address pools large enough for the design."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from cluster.findings import Finding
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
    for lower, _upper, data in graph.edges(data=True):
        if data["network"] == "oob" or (data["network"] == FABRIC and not routed_fabric):
            continue
        if graph.nodes[lower]["kind"] == "switch":
            links += 2 * data["links"]
        else:
            hosts += (2 if data["network"] == FABRIC else 1) * data["links"]
    return {"loopbacks": loopbacks, "fabric_links": links, "hosts": hosts}


class AddressPools(Rule):
    """addressing.loopbacks, fabric_links and hosts each hold what the design allocates."""

    id = "ADDR-POOL"
    title = "address pool sizes"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        for key, needed in address_demand(spec, topology).items():
            network = ipaddress.ip_network(getattr(spec.addressing, key))
            if needed > network.num_addresses:
                prefix = max(0, network.max_prefixlen - (needed - 1).bit_length())
                yield self.finding(
                    f"addressing.{key}",
                    f"{network} holds {network.num_addresses:,} addresses; the design needs {needed:,}",
                    f"use a /{prefix} or larger",
                )
