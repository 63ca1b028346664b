"""InfiniBand fabrics: the subnet manager's configuration instead of an IP underlay and QoS."""

from __future__ import annotations

from cluster.render.engine import render
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology


def render_fabric(spec: ClusterSpec, topology: Topology) -> dict[str, str]:
    """opensm.conf (ftree routing) and partitions.conf (MTU 4096) for the fabric."""
    tiers = [data["tier"] for _, data in topology.switches(FABRIC)]
    host_ports = sum(data["links"] for _, _, key, data in topology.edges
                     if key == FABRIC and topology.nodes[data["lower"]]["kind"] == "host")
    fabric = {"name": spec.name, "leaves": tiers.count("leaf"), "spines": tiers.count("spine"),
              "cores": tiers.count("core"), "hosts": host_ports}
    return {
        "opensm.conf": render("opensm/opensm.conf.j2", fabric=fabric),
        "partitions.conf": render("opensm/partitions.conf.j2", fabric=fabric),
    }
