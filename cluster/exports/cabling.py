"""The cabling plan: every cable, device/port to device/port, with speed and media.

Switch ports come from cluster.ports (one numbering for cabling, configs and verification).
A switch's own management port is `mgmt0`; a host's BMC port is `bmc`. A host port's plan port is
its NIC label (`gpu-nic0`), its name the netdev netnames.sh pins (`rail0`): cluster.naming.

Media follow the tier, under stated distance assumptions (MEDIA_RULES): copper in the rack,
AOC across a row, transceivers and fibre from leaf to spine, single-mode fibre between halls.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from cluster.naming import HostPort, PlanPort, host_port_names, plan_port_name
from cluster.records import CableData, Ports
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, NETWORKS, Topology

# (network, link) -> (media, longest run assumed in metres, why). `host-leaf` on the fabric
# depends on the design: a rack-tor leaf sits in the host's rack, rail leaves do not.
MEDIA_RULES: dict[tuple[str, str], tuple[str, int, str]] = {
    ("fabric", "host-leaf/rack-tor"): ("dac", 3, "leaf in the host's rack: passive copper"),
    ("fabric", "host-leaf/rail-optimized"): ("optics-mmf", 50, "rail leaves in a network rack per leaf group, "
                                             "up to a row away: transceiver each end + multimode fibre"),
    ("fabric", "leaf-spine"): ("optics-mmf", 50, "spines in the same hall: transceivers + multimode fibre"),
    ("fabric", "spine-core"): ("optics-smf", 500, "cores may sit in another hall: single-mode fibre"),
    ("storage", "host-leaf"): ("aoc", 30, "storage leaves at the end of the row: active optical cable"),
    ("storage", "leaf-spine"): ("optics-mmf", 50, "transceivers + multimode fibre"),
    ("management", "host-leaf"): ("aoc", 30, "management leaves at the end of the row: active optical cable"),
    ("management", "leaf-spine"): ("optics-mmf", 50, "transceivers + multimode fibre"),
    ("oob", "host-leaf"): ("cat6", 100, "BMC ports are RJ45 copper"),
    ("oob", "switch-mgmt"): ("cat6", 100, "switch management ports are RJ45 copper"),
    ("oob", "leaf-spine"): ("optics-mmf", 50, "out-of-band uplinks: transceivers + multimode fibre"),
}
LINK_ORDER = ("host-leaf", "switch-mgmt", "leaf-spine", "spine-core")
# a_port / b_port: the plan's port (`p3`, `u1`, `mgmt0`, a host's NIC label `gpu-nic2`); a_name / b_name:
# that port as the device's OS names it (`swp2s0`, `Ethernet8`, `Ethernet3/5`; a host's netdev `rail2`,
# `stor0`, or its HCA port `mlx5_2/1` on InfiniBand), as the configs and `verify` do.
COLUMNS = ("cable", "network", "link", "a_device", "a_port", "b_device", "b_port", "gbps", "media", "max_m",
           "a_name", "b_name")


@dataclass(frozen=True)
class Cable:
    """One physical cable; `a` is the end nearer the hosts."""

    cable: str
    network: str
    link: str
    a_device: str
    a_port: PlanPort | HostPort
    b_device: str
    b_port: PlanPort
    gbps: int
    media: str
    max_m: int
    a_name: str
    b_name: str

    def row(self) -> tuple[str | int, ...]:
        return tuple(value if isinstance(value, int) else str(value)
                     for value in (getattr(self, column) for column in COLUMNS))


def media_of(spec: ClusterSpec, network: str, link: str) -> tuple[str, int]:
    """(media, longest run in metres) for a link, by MEDIA_RULES."""
    if network == FABRIC and link == "host-leaf":
        design = spec.fabric.design if spec.fabric is not None else "rail-optimized"
        link = f"host-leaf/{design}"
    media, reach, _ = MEDIA_RULES.get((network, link), ("optics-mmf", 50, ""))
    return media, reach




def ordered_links(topology: Topology) -> list[tuple[str, CableData]]:
    """(link kind, edge data) of every cabled edge, in cabling-plan order: network, tier, devices."""
    nodes = topology.nodes
    order = {name: index for index, name in enumerate(nodes)}
    rows: list[tuple[int, int, int, int, str, CableData]] = []
    for _u, _v, key, data in topology.edges:
        if nodes[data["upper"]]["kind"] != "switch":
            continue  # a cloud provider's fabric has no cables of ours
        lower = nodes[data["lower"]]
        if lower["kind"] == "host":
            link = "host-leaf"
        elif key == "oob" and lower["network"] != "oob":
            link = "switch-mgmt"
        else:
            link = "spine-core" if lower["tier"] == "spine" else "leaf-spine"
        rows.append((NETWORKS.index(key), LINK_ORDER.index(link), order[data["lower"]], order[data["upper"]], link, data))
    rows.sort()  # (network, kind, lower, upper) names one edge (a network keys an edge): the rest is never compared
    return [(row[4], row[5]) for row in rows]


def host_ports(pools: dict[str, Any], pool: str, data: CableData) -> list[HostPort]:
    """The host's ports for the links of one host edge, in link order."""
    network = data["network"]
    if network == "oob":
        return [HostPort("oob")] * data["links"]
    pairs: Ports = data["ports"]
    per_nic = pools[pool].nics(network).ports_per_nic
    return [HostPort(network, nic, port, per_nic) for nic, port in pairs]


@dataclass(frozen=True)
class Run:
    """The cables of one edge of the graph (`data`, its record), `first` the plan number of the
    first: the lower device's ports and the upper's, in cable order."""

    link: str
    data: CableData
    first: int
    lower_ports: list[PlanPort] | list[HostPort]
    upper_ports: list[PlanPort]


def runs(spec: ClusterSpec, topology: Topology, devices: Collection[str] | None = None) -> Iterator[Run]:
    """The cables edge by edge, in plan order (`cables` lists them one by one); with `devices`,
    the edges that end on one of them."""
    pools = {pool.name: pool for pool in spec.pools}
    ports = topology.switch_ports
    count = 0
    for link, data in ordered_links(topology):
        lower, upper, network = data["lower"], data["upper"], data["network"]
        first, count = count + 1, count + data["links"]
        if devices is not None and lower not in devices and upper not in devices:
            continue
        lower_node = topology.nodes[lower]
        lower_ports: list[PlanPort] | list[HostPort]
        if lower_node["kind"] == "host":
            lower_ports = host_ports(pools, lower_node["pool"], data)
        else:
            lower_ports = ports[(lower, upper, network)].ports()
        yield Run(link, data, first, lower_ports, ports[(upper, lower, network)].ports())


def cables(spec: ClusterSpec, topology: Topology, devices: Collection[str] | None = None) -> Iterator[Cable]:
    """Every cable, by network (fabric, storage, management, oob), then tier, then device order;
    with `devices`, only the cables that end on one of them (numbered as in the whole plan)."""
    switches = topology.switch_nodes
    pools = {pool.name: pool for pool in spec.pools}
    transport = spec.fabric.transport if spec.fabric is not None else "roce"
    host_names: dict[tuple[str, str], list[str]] = {}  # (pool, network) -> its hosts' port names
    for run in runs(spec, topology, devices):
        data = run.data
        lower, upper, network = data["lower"], data["upper"], data["network"]
        if topology.nodes[lower]["kind"] == "host":
            key = (topology.host(lower)["pool"], network)
            if key not in host_names:
                host_names[key] = host_port_names(pools[key[0]], network, transport)
            lower_names = [host_names[key][port.position] for port in run.lower_ports if isinstance(port, HostPort)]
        else:
            lower_names = [plan_port_name(switches[lower], port) for port in run.lower_ports
                           if isinstance(port, PlanPort)]
        upper_names = [plan_port_name(switches[upper], port) for port in run.upper_ports]
        media, reach = media_of(spec, network, run.link)
        for index in range(data["links"]):
            yield Cable(cable=f"C{run.first + index:07d}", network=network, link=run.link, a_device=lower,
                        a_port=run.lower_ports[index], b_device=upper, b_port=run.upper_ports[index],
                        gbps=data["gbps"], media=media, max_m=reach, a_name=lower_names[index],
                        b_name=upper_names[index])


def cabling_csv(spec: ClusterSpec, topology: Topology, plan: Iterable[Cable] | None = None) -> str:
    """The cabling plan as CSV (header row, then one row per cable); `plan` if already listed."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for cable in plan if plan is not None else cables(spec, topology):
        writer.writerow(cable.row())
    return out.getvalue()
