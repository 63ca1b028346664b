"""The host intent of the management and storage networks: each host's ports on them, with the
address and gateway of the leaf port's /31, the routes the addressing plan implies, and the DHCP
plan that hands every management port its planned address at boot.

Routes (the fabric's are qos.sh's: its rails and their tables stay there):
- management: the default route, over the first management port: the management network is the
  host's way to everything that is not the fabric or storage (DHCP, PXE, DNS, NTP, SSH);
- storage: the storage network's host addresses and `storage.targets`, over every storage port,
  the first preferred (metric 100, then 101, ...), so a port whose link is down leaves them;
- every port: a table of its own, chosen by its address (`ip rule from`), holding only its own
  network's routes, so a reply leaves by the port that owns its source address and nothing sourced
  from a storage address is routed into the management network (or the other way).

DHCP: every management port is a /31 of its own, so a relayed request names its port by the relay's
address (giaddr: the leaf's end of that /31), and the DHCP server's subnet for that /31 holds one
address, the host's. No MAC address, circuit id or host reservation is needed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass

from cluster.addressing import HOST_REGIONS, Addresses, pow2, spread_index
from cluster.naming import (
    HostPort,
    fabric_devices,
    fabric_interfaces,
    fabric_interfaces_given,
    host_interfaces,
    management_interfaces,
    storage_interfaces,
    switch_port,
)
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import Topology

NETWORKS = ("management", "storage")
TABLE_BASE = {"management": 1000, "storage": 2000}  # a port's table and rule priority: base + its position
ROUTE_METRIC_BASE = 100  # storage routes in the main table: the first port first
MTU = {"management": 1500, "storage": 9000}  # storage carries RDMA (GDS, NVMe-oF): jumbo, as the fabric


@dataclass(frozen=True)
class NetPort:
    """One management or storage port of one host."""

    network: str
    position: int  # among the host's ports of that network (NIC-major)
    netdev: str  # its OS name: the stack file's, else the one netnames.sh pins (mgmt0, stor1): cabling.csv a_name
    label: str  # its plan port, the NIC's label (mgmt-nic0, stor-nic1): cabling.csv a_port
    address: str  # a.b.c.d/31, the host end
    gateway: str  # a.b.c.d, the leaf's end
    switch: str  # the leaf and its port (`mgmt-leaf-001 swp3`)
    table: int
    mtu: int

    @property
    def ip(self) -> str:
        return self.address.split("/")[0]

    @property
    def metric(self) -> int:
        """Its routes' metric in the main table: the first port of a network preferred."""
        return ROUTE_METRIC_BASE + self.position

    @property
    def network_prefix(self) -> str:
        """The /31 itself (the host's even address is its network)."""
        return f"{self.ip}/31"


@dataclass(frozen=True)
class HostNetwork:
    """What one host's netplan file says."""

    stack: str
    pool: str
    path: str  # the pool's config path
    host: str
    ports: tuple[NetPort, ...]  # management ports, then storage ports
    storage_routes: tuple[str, ...]  # prefixes every storage port routes
    named: bool  # every netdev comes from the stack file's `interfaces`

    @property
    def management(self) -> tuple[NetPort, ...]:
        return tuple(port for port in self.ports if port.network == "management")

    @property
    def storage(self) -> tuple[NetPort, ...]:
        return tuple(port for port in self.ports if port.network == "storage")

    @property
    def default_port(self) -> NetPort | None:
        """The port the default route leaves by: the first management port."""
        return self.management[0] if self.management else None


@dataclass(frozen=True)
class DhcpSubnet:
    """One management port as the DHCP server serves it: a /31 holding one address."""

    id: int  # stable: from the address, which is stable by name
    subnet: str  # a.b.c.d/31
    address: str  # the host's address, the only one handed out
    router: str  # the leaf's end: the relay's giaddr and the host's gateway
    host: str
    port: str  # the host end as its OS names it (mgmt0), as the relay port's description does
    switch: str  # the leaf and its port


@dataclass(frozen=True)
class DhcpPlan:
    """The DHCP server of the management network (`provisioning`)."""

    stack: str
    server: str
    next_server: str | None  # PXE siaddr (set with a boot file)
    boot_filename: str | None
    subnets: tuple[DhcpSubnet, ...]


def host_region(spec: ClusterSpec, network: str) -> ipaddress.IPv4Network:
    """The part of addressing.hosts a network's host ports are addressed from (every pool's block)."""
    pool = ipaddress.IPv4Network(spec.addressing.hosts)
    first, quarters = HOST_REGIONS[network]
    size = pool.num_addresses // 4
    return ipaddress.IPv4Network((int(pool.network_address) + first * size,
                                  pool.max_prefixlen - (size * quarters).bit_length() + 1))


def address_owner(spec: ClusterSpec, topology: Topology, network: str, address: str) -> tuple[str, int] | None:
    """(host, port position) whose planned address on `network` is `address`, by the allocation's
    arithmetic (cluster.addressing: pool blocks, a block per node sized for its ports); None when no
    host port has it. Cheap at any size: no host port is enumerated."""
    value = int(ipaddress.IPv4Address(address))
    region = host_region(spec, network)
    base = int(region.network_address)
    blocks = pow2(max([len(spec.pools), *(pool.host_block + 1 for pool in spec.pools)]))
    block = region.num_addresses // blocks
    for pool in spec.pools:
        ports = pool.nics(network).ports
        stride = 2 * pow2(ports)
        if not ports or pool.nodes * stride > block:
            continue
        offset = value - (base + block * spread_index(pool.host_block, blocks))
        if 0 <= offset < pool.nodes * stride and offset % 2 == 0 and (offset % stride) // 2 < ports:
            return topology.hosts_by_pool[pool.name][offset // stride], (offset % stride) // 2
    return None


def _ports(spec: ClusterSpec, topology: Topology, addresses: Addresses, pool: PoolSpec, host: str,
           port_names: dict[tuple[str, str, str, int], str]) -> Iterator[NetPort]:
    names = {network: host_interfaces(pool, network) for network in NETWORKS}
    for network in NETWORKS:
        per_nic = pool.nics(network).ports_per_nic
        found = []
        for upper, key, edge in topology.cables(host):
            if key != network:
                continue
            for index, (nic, nic_port) in enumerate(edge["ports"]):
                if (host, upper, key, index) not in addresses.links:
                    continue  # not routed (an InfiniBand leaf carries no address)
                own, gateway = addresses.link(host, upper, key, index)
                position = nic * per_nic + nic_port
                label = str(HostPort(network, nic, nic_port, per_nic))
                found.append(NetPort(network, position, names[network][position], label, own,
                                     gateway.split("/")[0], f"{upper} {port_names.get((upper, host, key, index), '')}"
                                     .strip(), TABLE_BASE[network] + position, MTU[network]))
        yield from sorted(found, key=lambda port: port.position)


def leaf_port_names(topology: Topology) -> dict[tuple[str, str, str, int], str]:
    """(leaf, host, network, link) -> the leaf's name for that port, for the management and storage
    networks (the names the switch configs and cabling.csv use)."""
    from cluster.intent.switch import port_indexes

    switches = topology.switch_nodes
    return {key: switch_port(switches[key[0]]["os"], index, switches[key[0]]["model"], switches[key[0]]["port_gbps"])
            for key, index in port_indexes(topology).items()
            if key[2] in NETWORKS and topology.nodes[key[1]]["kind"] == "host"}


def host_networks(spec: ClusterSpec, topology: Topology, addresses: Addresses, pool: PoolSpec,
                  port_names: dict[tuple[str, str, str, int], str]) -> Iterator[HostNetwork]:
    """The netplan view of every host of `pool` that has a routed management or storage port."""
    storage_routes = (str(host_region(spec, "storage")), *(spec.storage.targets if spec.storage else ()))
    named = all(bool(nics.interfaces) for nics in (pool.management_nics, pool.storage_nics) if nics.ports)
    for host in topology.hosts_by_pool[pool.name]:
        ports = tuple(_ports(spec, topology, addresses, pool, host, port_names))
        if ports:
            yield HostNetwork(spec.name, pool.name, pool.path, host, ports, storage_routes, named)


def dhcp_plan(spec: ClusterSpec, topology: Topology, addresses: Addresses,
              port_names: dict[tuple[str, str, str, int], str]) -> DhcpPlan | None:
    """The DHCP server's plan: a subnet per management port of every host (None without `provisioning`)."""
    provisioning = spec.provisioning
    if provisioning is None:
        return None
    base = int(host_region(spec, "management").network_address)
    subnets = []
    for pool in spec.pools:
        for network in host_networks(spec, topology, addresses, pool, port_names):
            for port in network.management:
                subnets.append(DhcpSubnet(id=(int(ipaddress.IPv4Address(port.ip)) - base) // 2 + 1,
                                          subnet=port.network_prefix, address=port.ip, router=port.gateway,
                                          host=network.host, port=port.netdev, switch=port.switch))
    next_server = (provisioning.next_server or provisioning.dhcp_server) if provisioning.boot_filename else None
    return DhcpPlan(spec.name, provisioning.dhcp_server, next_server, provisioning.boot_filename,
                    tuple(sorted(subnets, key=lambda subnet: subnet.id)))


@dataclass(frozen=True)
class DhcpRelay:
    """DHCP relay on one switch: the management host ports it relays from (downstream, each its
    own /31, whose switch end becomes the request's giaddr) and the ports toward the server
    (upstream: the server's own port when it hangs on this switch, else the uplinks)."""

    server: str
    downstream: tuple[str, ...]
    upstream: tuple[str, ...]


def dhcp_relay(spec: ClusterSpec, ports: Iterator[tuple[str, str, str, str | None, str | None]]) -> DhcpRelay | None:
    """The relay of a switch from its ports as (name, role, network, address, peer address);
    None without `provisioning` or without a routed management host port."""
    if spec.provisioning is None:
        return None
    server = spec.provisioning.dhcp_server
    downstream: list[str] = []
    uplinks: list[str] = []
    own: list[str] = []
    for name, role, network, address, peer_address in ports:
        if address is None:
            continue
        if role == "up":
            uplinks.append(name)
        elif role == "host" and network == "management":
            (own if peer_address == server else downstream).append(name)
    if not downstream:
        return None
    return DhcpRelay(server, tuple(downstream), tuple(own or uplinks))


@dataclass(frozen=True)
class NetNames:
    """What a pool's netnames.sh needs: the netdev names the stack file does not give (its netplan
    files' management and storage ports, its fabric rails) and how each is found on a host."""

    stack: str
    pool: str
    path: str
    management: tuple[str, ...]  # netdev names of the management ports, in order ((): the stack file names them)
    storage: tuple[str, ...]
    storage_devices: tuple[str, ...]  # storage_nics.devices: RDMA device per storage port ((): not given)
    rails: tuple[str, ...]  # netdev name of each fabric rail (rail0..) ((): the stack file names them, or InfiniBand)
    rail_devices: tuple[str, ...]  # the RDMA device of each rail, as qos.sh finds the rail by it
    hosts: tuple[tuple[str, tuple[str, ...]], ...]  # (host, its management addresses in port order)

    @property
    def labels(self) -> tuple[str, ...]:
        return (*self.management, *self.storage, *self.rails)


def net_names(spec: ClusterSpec, topology: Topology, pool: PoolSpec, networks: list[HostNetwork]) -> NetNames | None:
    """The netnames.sh view of a pool (None when the stack file names every netdev it has): its
    netplan files' ports unless the stack file names them, and on a RoCE fabric its rails unless
    `fabric_nics.interfaces` names them (those are the host's own names, which qos.sh checks)."""
    named = not networks or networks[0].named
    roce = spec.fabric is not None and spec.fabric.transport == "roce"
    rails = () if fabric_interfaces_given(pool) or not roce else tuple(fabric_interfaces(pool))
    if named and not rails:
        return None
    addresses = {network.host: tuple(port.ip for port in network.management) for network in networks}
    return NetNames(spec.name, pool.name, pool.path, () if named else tuple(management_interfaces(pool)),
                    () if named else tuple(storage_interfaces(pool)), () if named else pool.storage_nics.devices,
                    rails, tuple(fabric_devices(pool)) if rails else (),
                    tuple((host, addresses.get(host, ())) for host in topology.hosts_by_pool[pool.name]))
