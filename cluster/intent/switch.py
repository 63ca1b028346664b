"""The switch intent: one frozen, vendor-neutral record per switch of what it is to do, which its
dialect renders (no logic is left for Jinja but loops).

`switch_views` walks the topology once: every switch gets its ports in cabling order
(downlinks from port 0, uplinks on the top ports), each with speed, MTU, a description
naming the peer (`h200-node-003 nic2`, `spine-001 Ethernet8`), its /31 and the peer's ASN.
The QoS numbers come from the intent (`cluster.intent.qos`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from cluster.addressing import Addresses
from cluster.breakout import breakout
from cluster.catalog import load_catalog
from cluster.dialects import platform
from cluster.ecmp import ecmp_widths
from cluster.intent.bgp import BgpPolicy, bgp_policies, bgp_policy
from cluster.intent.hostnet import DhcpRelay, dhcp_relay
from cluster.intent.management import ManagementPlane, management_plane, services
from cluster.intent.qos import SWITCH_MTU, QosPlan
from cluster.naming import host_port_names, management_port, switch_port
from cluster.records import CableData, SwitchNode
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology

CABLE_METERS = {"host": 5, "leaf": 40, "spine": 300}  # by the lower end's kind/tier: DAC in rack, AOC/fibre above
PFC_WATCHDOG_MS = 200


@dataclass(frozen=True)
class BfdTimers:
    """BFD timers of every BGP session (RFC 5880): the interval this switch sends at, the one it
    asks its peer for, and how many missed packets declare the peer down."""

    transmit_ms: int
    receive_ms: int
    multiplier: int

    @property
    def detect_ms(self) -> int:
        """Time without a packet before the session goes down (RFC 5880 6.8.4): the peer's
        multiplier times the agreed interval, the larger of our receive and the peer's transmit
        interval. Both ends of every session run these same timers."""
        return max(self.transmit_ms, self.receive_ms) * self.multiplier


# 200 ms x 3 = 600 ms: a silent switch (links up, nothing forwarded or answered) is detected well
# under a second, with room left for BGP to withdraw and ECMP to reconverge, instead of after the
# 9 s hold timer. Not 50-100 ms: a lab runs hundreds of userspace bfdd sessions on 2 cores, and a
# real switch's control plane under load flaps sessions on timers that tight.
BFD_TIMERS = BfdTimers(transmit_ms=200, receive_ms=200, multiplier=3)


class Port(NamedTuple):
    """One front-panel port as configured (a NamedTuple: big fabrics have 100,000s of them)."""

    name: str
    number: int  # 0-based front-panel position
    role: str  # host | down | up | device (an oob leaf's BMC or management-port cable)
    network: str
    speed_gbps: int
    mtu: int
    description: str
    peer: str
    address: str | None  # this side, a.b.c.d/31
    peer_address: str | None  # the peer, a.b.c.d
    peer_asn: int | None
    qos: bool  # the switch's QoS plan (trust DSCP, PFC, ECN) applies on this port
    cable_m: int
    lanes: int | None = None  # electrical lanes of the port where the model's cages are known
    forced: bool = False  # the model cannot auto-negotiate at this speed: speed forced, auto-negotiation off

    @property
    def speed_mbps(self) -> int:
        return self.speed_gbps * 1000


@dataclass(frozen=True)
class Switch:
    """Everything one switch's config needs."""

    name: str
    cluster: str  # the cluster's name (stack file `name`): with `name`, what tells the switch apart on a site
    network: str
    tier: str
    os: str
    model: str
    port_gbps: int  # the speed its ports are set up for (the model's SKU at that speed, on SONiC)
    main_ports: int  # front-panel ports at port_gbps; fixed uplink ports follow them
    loopback: str | None
    asn: int | None
    ports: tuple[Port, ...]
    management: str  # the description of the management port's cable
    management_port: str  # the switch's name for its management port (`eth0`, `Management1`)
    networks: tuple[str, ...]  # prefixes BGP announces: loopback and host /31s
    qos: QosPlan | None
    maximum_paths: int = 1  # BGP ECMP width (cluster.ecmp), capped at the OS's most
    domain_routes: int = 0  # prefixes in its routing domain: what any one BGP neighbor can send it
    bfd: BfdTimers = BFD_TIMERS  # BFD on every BGP session (`neighbors`)
    policy: BgpPolicy | None = None  # what its BGP sessions may carry, their limit and restart (routed switches)
    management_plane: ManagementPlane | None = None  # its management address, VRF and services (on premises)
    dhcp_relay: DhcpRelay | None = None  # DHCP relay from its management host ports (`provisioning`)

    @property
    def routed(self) -> bool:
        return self.asn is not None

    @property
    def neighbors(self) -> tuple[Port, ...]:
        return tuple(port for port in self.ports if port.peer_asn is not None)

    @property
    def qos_ports(self) -> tuple[Port, ...]:
        return tuple(port for port in self.ports if port.qos)


def _port_name(switch: SwitchNode, index: int) -> str:
    return switch_port(switch["os"], index, switch["model"], switch["port_gbps"])


_Link = tuple[str, str, str, int]  # (switch, peer, network, link index)


def _cables(topology: Topology, switch: str) -> Iterator[tuple[str, str, int, CableData]]:
    """(peer, network, link index, edge data) for every cable of `switch`, sorted by peer."""
    cables = []
    for peer, network, data in topology.cables(switch):
        for index in range(data["links"]):
            cables.append((peer, network, index, data))
    cables.sort(key=lambda cable: (cable[0], cable[1], cable[2]))
    yield from cables


def port_indexes(topology: Topology) -> dict[_Link, int]:
    """0-based port index of every switch-side cable end, from the one numbering in cluster.ports."""
    switches = topology.switch_nodes
    indexes: dict[_Link, int] = {}
    for (switch, peer, network), span in topology.switch_ports.items():
        if span.management:
            continue  # the switch's own management port, not a front-panel port
        main_ports = switches[switch]["ports"]
        for link, port in enumerate(span.ports()):
            indexes[(switch, peer, network, link)] = port.front_panel_index(main_ports)
    return indexes


def switch_views(spec: ClusterSpec, topology: Topology, addresses: Addresses,
                 switch_qos: QosPlan | None, names: Collection[str] | None = None,
                 storage_qos: QosPlan | None = None) -> Iterator[Switch]:
    """A view of every switch (of `names`, or all), in name order: fabric switches with the fabric's
    QoS plan `switch_qos` (on their storage and management ports too where those share the fabric),
    storage switches with the storage network's own plan `storage_qos`."""
    nodes, switches = topology.nodes, topology.switch_nodes  # plain dict lookups: this loop runs once per port
    indexes = port_indexes(topology)
    pools = {pool.name: pool for pool in spec.pools}
    shared = set(spec.fabric.shared_with) if spec.fabric else set()
    transport = spec.fabric.transport if spec.fabric is not None else "roce"
    host_names: dict[tuple[str, str], list[str]] = {}  # (pool, network) -> its hosts' port names
    links = addresses.links
    wanted = sorted(names if names is not None else [name for name, _ in topology.switches()])
    widths = ecmp_widths(topology, wanted)
    routes = domain_routes(addresses, topology)
    catalog = load_catalog()
    plans = bgp_policies(spec)
    design_services = services(spec)
    for name in wanted:
        data = switches[name]
        plan = {FABRIC: switch_qos, "storage": storage_qos}.get(data["network"])
        qos_networks = ({FABRIC, *shared} if data["network"] == FABRIC else {data["network"]}) if plan else set()
        own_split = breakout(data["model"], data["port_gbps"])
        entry = catalog.switches.get(data["model"])
        ports: list[Port] = []
        networks: list[str] = []
        management = ""
        for peer, network, index, edge in _cables(topology, name):
            peer_data = nodes[peer]
            if network == "oob" and data["network"] != "oob":
                management = f"{peer} {_port_name(switches[peer], indexes[(peer, name, network, index)])}"
                continue
            port_index = indexes[(name, peer, network, index)]
            if peer_data["kind"] == "host":
                role = "host"
                # the host's end as its OS names it (cluster.naming.host_port_names), as cabling.csv's a_name
                # and the verify files do: `rail0`, `stor1`, `bmc`
                pool_key = (peer_data["pool"], network)
                if pool_key not in host_names:
                    host_names[pool_key] = host_port_names(pools[pool_key[0]], network, transport)
                position = 0  # a BMC
                if network != "oob":
                    nic, nic_port = edge["ports"][index]
                    position = nic * pools[pool_key[0]].nics(network).ports_per_nic + nic_port
                description = f"{peer} {host_names[pool_key][position]}"
            else:
                peer_switch = switches[peer]
                role = "down" if edge["upper"] == name else "up"
                if network == "oob" and peer_switch["network"] != "oob":
                    role = "device"  # another network's switch: its management port
                peer_index = indexes.get((peer, name, network, index))
                peer_port = _port_name(peer_switch, peer_index) if peer_index is not None else "mgmt"
                description = f"{peer} {peer_port}"
            address = peer_address = None
            peer_asn = None
            key = (edge["lower"], edge["upper"], network, index)
            if key in links:
                lower_side, upper_side = addresses.link(*key)
                address, peer_address = (upper_side, lower_side) if edge["upper"] == name else (lower_side, upper_side)
                peer_address = peer_address.split("/")[0]
                if role == "host":
                    networks.append(lower_side)  # the host's even address is the /31's network
                peer_asn = addresses.asns.get(peer)
            lower = nodes[edge["lower"]]
            cable = CABLE_METERS["host"] if lower["kind"] == "host" else CABLE_METERS.get(lower["tier"], 300)
            ports.append(Port(
                name=_port_name(data, port_index),
                number=port_index,
                role=role,
                network=network,
                speed_gbps=edge["gbps"],
                mtu=SWITCH_MTU,
                description=description,
                peer=peer,
                address=address,
                peer_address=peer_address,
                peer_asn=peer_asn,
                qos=network in qos_networks,
                cable_m=cable,
                lanes=own_split.lanes(edge["gbps"]) if own_split is not None else None,
                forced=entry is not None and entry.forces_speed(edge["gbps"]),
            ))
        ports.sort(key=lambda port: port.number)
        loopback = addresses.loopback(name)
        if loopback is not None:
            networks.insert(0, f"{loopback}/32")
        yield Switch(
            name=name,
            cluster=spec.name,
            network=data["network"],
            tier=data["tier"],
            os=data["os"],
            model=data["model"],
            port_gbps=data["port_gbps"],
            main_ports=data["ports"],
            loopback=loopback,
            asn=addresses.asns.get(name),
            ports=tuple(ports),
            management=management,
            management_port=management_port(data),
            networks=tuple(networks),
            qos=plan,
            maximum_paths=min(widths[name][1], platform(data["os"]).max_paths or widths[name][1]),
            domain_routes=routes.get(data["network"], 0),
            policy=(bgp_policy(plans, data["network"], data["tier"], routes.get(data["network"], 0))
                    if name in addresses.asns else None),
            management_plane=management_plane(spec, design_services, addresses.management_address(name),
                                              data["network"]),
            dhcp_relay=dhcp_relay(spec, ((port.name, port.role, port.network, port.address, port.peer_address)
                                         for port in ports)) if platform(data["os"]).relays_on_routed_ports else None,
        )


def domain_routes(addresses: Addresses, topology: Topology) -> dict[str, int]:
    """Prefixes in each routing domain (fabric, storage, management): a loopback per routed switch
    and a /31 per host port, which is what every BGP neighbor in it can send."""
    nodes, switches = topology.nodes, topology.switch_nodes
    routes: dict[str, int] = {}
    for name in addresses.loopbacks:
        network = switches[name]["network"]
        routes[network] = routes.get(network, 0) + 1
    for lower, upper, _, _ in addresses.links:
        if nodes[lower]["kind"] == "host":
            network = switches[upper]["network"]
            routes[network] = routes.get(network, 0) + 1
    return routes
