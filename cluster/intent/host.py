"""The host intent, per on-prem pool: its rails (RDMA device, netdev, routing table), each host's
addresses, the host side of the QoS plan, and what NCCL's socket interface is found by; the host
dialect (cluster/dialects/host/) renders it as qos.sh, nccl.env and nccl-socket.sh."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import NamedTuple

from cluster.addressing import HOST_REGIONS, Addresses
from cluster.intent.qos import QosPlan, qos_intent, roce_tos, storage_shares_fabric, tos
from cluster.intent.storage_qos import storage_port_intent
from cluster.naming import (
    fabric_device_source,
    fabric_devices,
    fabric_interfaces,
    fabric_interfaces_given,
    management_interfaces,
    management_interfaces_given,
    storage_interfaces,
)
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import FABRIC, Topology

FILTER_PREF_BASE = 10
MQPRIO_CLASSES = 8  # one traffic class per priority, as mlnx_qos --prio_tc / dcb ets prio-tc map them
RAIL_TABLE_BASE = 100  # rail r routes from table 100 + r, chosen by `ip rule from <rail address>`
RULE_PRIORITY_BASE = 100


@dataclass(frozen=True)
class Rail:
    index: int
    netdev: str  # as the stack file names it; used only when `HostPool.given_netdevs`
    rdma: str
    table: int
    rule_priority: int
    gbps: int


@dataclass(frozen=True)
class HostAddresses:
    name: str
    rails: tuple[tuple[str, str], ...]  # (address/31, gateway) per rail, in rail order


@dataclass(frozen=True)
class SocketPool:
    """What nccl-socket.sh needs: the management netdev as the stack file names it, else each host's
    planned management address, which the netdev holding it is found by."""

    stack: str
    pool: str
    path: str
    netdev: str | None  # management_nics.interfaces[0], when given
    hosts: tuple[tuple[str, str], ...]  # (host, management address) in host order


@dataclass(frozen=True)
class KernelClass:
    """Kernel traffic of one priority: its DSCPs, matched on egress to set the skb priority."""

    priority: int
    dscps: tuple[int, ...]

    @property
    def pref(self) -> int:
        """The tc filter preference of the class's matches (one per priority, stable)."""
        return FILTER_PREF_BASE + self.priority

    @property
    def dsfields(self) -> tuple[str, ...]:
        """u32 matches the whole ToS byte: DSCP d is `dsfield <d << 2> 0xfc`."""
        return tuple(f"{dscp << 2:#04x}" for dscp in self.dscps)


class RocePort(NamedTuple):
    """One port's RDMA device and netdev as a script names them: a name, or a bash array element
    the script fills at run time (`${STORAGE_RDMA[0]}`)."""

    rdma: str
    netdev: str

    @property
    def rdma_arg(self) -> str:
        """The RDMA device as a command argument (quoted when the script expands it)."""
        return f'"{self.rdma}"' if self.rdma.startswith("$") else self.rdma


@dataclass(frozen=True)
class NicQos:
    """The host side of one network's QoS plan as a NIC applies it: mlnx_qos, dcb and tc arguments
    (the same for the fabric's rails and the storage ports)."""

    qos: QosPlan

    @property
    def roce_tos(self) -> int:
        """The ToS byte the network's RoCE class is sent with (DSCP << 2 | ECT(0))."""
        return tos(self.qos.roce.dscp)

    @property
    def kernel_classes(self) -> tuple[KernelClass, ...]:
        return _kernel_classes(self.qos)

    @property
    def pfc_list(self) -> str:
        """mlnx_qos --pfc: 8 flags for priorities 0..7."""
        return ",".join("1" if priority in self.qos.lossless else "0" for priority in range(8))

    @property
    def tsa_list(self) -> str:
        return ",".join("strict" if priority in self.qos.strict else "ets" for priority in range(8))

    @property
    def tcbw_list(self) -> str:
        weights = dict(self.qos.dwrr)
        return ",".join(str(weights.get(priority, 0)) for priority in range(8))

    @property
    def dcb_dscp_prio(self) -> str:
        return " ".join(f"{dscp}:{priority}" for dscp, priority in self.qos.dscp_map)

    @property
    def dcb_tc_bw(self) -> str:
        return " ".join(["all:0"] + [f"{priority}:{weight}" for priority, weight in self.qos.dwrr])

    @property
    def dcb_tsa(self) -> str:
        return " ".join(["all:ets"] + [f"{priority}:strict" for priority in self.qos.strict])

    @property
    def lossless_pfc(self) -> str:
        return " ".join(["all:off"] + [f"{priority}:on" for priority in self.qos.lossless])

    @property
    def mqprio_map(self) -> str:
        """mqprio `map`: skb priority p (0..15) -> traffic class p for the 8 priorities, the rest to 0."""
        return " ".join(str(priority if priority < MQPRIO_CLASSES else 0) for priority in range(16))


@dataclass(frozen=True)
class HostPool:
    """Everything a pool's script and env file need."""

    stack: str
    pool: str
    path: str  # the pool's config path, for the script's messages
    qos: QosPlan
    rails: tuple[Rail, ...]
    hosts: tuple[HostAddresses, ...]
    storage: tuple[str, ...]
    management: tuple[str, ...]
    fabric_route: str  # the fabric's host address region, reached over every rail
    roce_tos: int  # NCCL_IB_TC, cma_roce_tos and traffic_class: one value
    device_source: str
    given_netdevs: bool  # the stack file names the netdevs; otherwise qos.sh finds them from the RDMA devices
    management_given: bool  # the stack file names the management netdev; otherwise nccl-socket.sh finds it

    @property
    def nic(self) -> NicQos:
        return NicQos(self.qos)

    @property
    def roce_ports(self) -> tuple[RocePort, ...]:
        """Each rail's RDMA device (known here) and netdev (found by qos.sh), for the RoCE knobs."""
        return tuple(RocePort(rail.rdma, f"${{RAILS[{rail.index}]}}") for rail in self.rails)

    @property
    def nccl_ib_hca(self) -> str:
        return "=" + ",".join(f"{rail.rdma}:1" for rail in self.rails)


def _kernel_classes(qos: QosPlan) -> tuple[KernelClass, ...]:
    by_priority: dict[int, list[int]] = {}
    for dscp, priority in qos.dscp_to_priority:
        by_priority.setdefault(priority, []).append(dscp)
    return tuple(KernelClass(priority, tuple(dscp for dscp in sorted(dscps) if dscp != 0))
                 for priority, dscps in sorted(by_priority.items()))


def host_pool(spec: ClusterSpec, topology: Topology, addresses: Addresses | None, pool: PoolSpec) -> HostPool:
    """The view of one RoCE pool; without `addresses`, a view with no hosts (the QoS part only)."""
    assert spec.qos is not None
    qos = qos_intent(spec.qos, storage_shares_fabric(spec)).host
    netdevs, devices = fabric_interfaces(pool), fabric_devices(pool)
    hosts = []
    for host in topology.hosts_by_pool[pool.name] if addresses is not None else ():
        rails: dict[int, tuple[str, str]] = {}
        for upper, network, edge in topology.cables(host):
            if network != FABRIC:
                continue
            for index, (nic, port) in enumerate(edge["ports"]):
                own, gateway = addresses.link(host, upper, network, index)  # type: ignore[union-attr]
                rails[nic * pool.fabric_nics.ports_per_nic + port] = (own, gateway.split("/")[0])
        hosts.append(HostAddresses(host, tuple(rails[r] for r in sorted(rails))))
    host_pool_net = ipaddress.IPv4Network(spec.addressing.hosts)
    first, quarters = HOST_REGIONS[FABRIC]
    size = host_pool_net.num_addresses // 4
    region = ipaddress.IPv4Network((int(host_pool_net.network_address) + first * size,
                                    host_pool_net.max_prefixlen - (size * quarters).bit_length() + 1))
    return HostPool(
        stack=spec.name,
        pool=pool.name,
        path=pool.path,
        qos=qos,
        rails=tuple(Rail(r, netdevs[r], devices[r], RAIL_TABLE_BASE + r, RULE_PRIORITY_BASE + r, pool.fabric_nics.gbps)
                    for r in range(pool.fabric_nics.ports)),
        hosts=tuple(hosts),
        storage=tuple(storage_interfaces(pool)),
        management=tuple(management_interfaces(pool)),
        fabric_route=str(region),
        roce_tos=roce_tos(spec.qos),
        device_source=fabric_device_source(pool),
        given_netdevs=bool(fabric_interfaces_given(pool)),
        management_given=bool(management_interfaces_given(pool)),
    )


def socket_pool(spec: ClusterSpec, topology: Topology, addresses: Addresses, pool: PoolSpec) -> SocketPool:
    """The view of one pool's nccl-socket.sh: each host's address on its first management port."""
    given = management_interfaces_given(pool)
    hosts = []
    for host in topology.hosts_by_pool[pool.name] if not given else ():
        ports = sorted((nic * pool.management_nics.ports_per_nic + port, addresses.link(host, upper, network, index)[0])
                       for upper, network, edge in topology.cables(host) if network == "management"
                       for index, (nic, port) in enumerate(edge["ports"])
                       if (host, upper, network, index) in addresses.links)
        if ports:
            hosts.append((host, ports[0][1].split("/")[0]))
    return SocketPool(spec.name, pool.name, pool.path, given[0] if given else None, tuple(hosts))


@dataclass(frozen=True)
class StoragePorts:
    """What a pool's storage-qos.sh needs: its storage netdevs (netplan's names) and their RDMA
    devices (as the stack file names them, else found from sysfs by the script), and the host side
    of the plan their switches were rendered from."""

    stack: str
    pool: str
    path: str
    plan_name: str  # which plan: the storage network's own, or the fabric's where storage shares it
    nic: NicQos
    netdevs: tuple[str, ...]
    devices: tuple[str, ...]  # storage_nics.devices, in port order; (): found on the host

    @property
    def roce_ports(self) -> tuple[RocePort, ...]:
        return tuple(RocePort(f"${{STORAGE_RDMA[{index}]}}", f"${{STORAGE[{index}]}}")
                     for index in range(len(self.netdevs)))


def storage_ports(spec: ClusterSpec, pool: PoolSpec) -> StoragePorts | None:
    """The view of one pool's storage-qos.sh; None for a pool without storage ports or a design
    without a storage plan (cluster.intent.storage_qos)."""
    intent = storage_port_intent(spec)
    if intent is None or pool.storage_nics.ports == 0:
        return None
    shared = storage_shares_fabric(spec)
    return StoragePorts(
        stack=spec.name,
        pool=pool.name,
        path=pool.path,
        plan_name="the GPU fabric's QoS plan (storage shares the fabric leaves)" if shared
        else "the storage network's QoS plan",
        nic=NicQos(intent.host),
        netdevs=tuple(storage_interfaces(pool)),
        devices=tuple(pool.storage_nics.devices),
    )
