"""Host side, per node pool: the host intent (cluster.intent.host) as one QoS + rail-routing script,
an NCCL env file and the script that finds NCCL's socket interface.

Both come from the host side of the QoS intent (`cluster.intent.qos`), the plan the switches get the other side of.
One RoCE ToS byte everywhere (`cluster.intent.qos.roce_tos`: DSCP << 2 | ECT(0)): NCCL_IB_TC,
cma_roce_tos and the traffic_class knob of qos.sh.
"""

from __future__ import annotations

import json
import re

from cluster.intent.host import HostPool, SocketPool, StoragePorts, host_pool
from cluster.intent.hostnet import DhcpPlan, HostNetwork, NetNames
from cluster.intent.management import OobDhcpPlan
from cluster.intent.qos import QosSide, default_host_priority
from cluster.naming import fabric_device_source, fabric_devices, management_interfaces, management_interfaces_given
from cluster.render.engine import render
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import Topology


def render_socket(view: SocketPool) -> dict[str, str]:
    """nccl-socket.sh of one pool that has a management NIC; {} for a pool without one."""
    if view.netdev is None and not view.hosts:
        return {}
    return {"nccl-socket.sh": render("host/nccl-socket.sh.j2", pool=view)}


def render_storage(view: StoragePorts | None) -> dict[str, str]:
    """storage-qos.sh of one pool with storage ports on a storage QoS plan; {} otherwise."""
    return {"storage-qos.sh": render("host/storage-qos.sh.j2", ports=view)} if view is not None else {}


def render_pool(view: HostPool) -> dict[str, str]:
    """{file name: text} for one pool."""
    return {
        "qos.sh": render("host/qos.sh.j2", pool=view),
        "nccl.env": render("host/nccl.env.j2", pool=view, ib=False),
    }


def pool_nccl_env(spec: ClusterSpec, topology: Topology, pool: PoolSpec) -> str:
    """The nccl.env of one on-prem pool, as `render_pool` / `render_ib_pool` write it (no host addresses needed)."""
    if spec.fabric is not None and spec.fabric.transport == "infiniband":
        return render_ib_pool(spec, pool)["nccl.env"]
    return render_pool(host_pool(spec, topology, None, pool))["nccl.env"]


def render_ib_pool(spec: ClusterSpec, pool: PoolSpec) -> dict[str, str]:
    """InfiniBand pools: only the NCCL env file (the subnet manager owns QoS)."""
    view = {"stack": spec.name, "pool": pool.name,
            "nccl_ib_hca": "=" + ",".join(f"{device}:1" for device in fabric_devices(pool)),
            "management": tuple(management_interfaces(pool)), "device_source": fabric_device_source(pool),
            "management_given": bool(management_interfaces_given(pool))}
    return {"nccl.env": render("host/nccl.env.j2", pool=view, ib=True)}


def _side(mapping: dict[int, int], pfc: set[int], mtu: int, planned: list[int]) -> QosSide:
    return QosSide(dscp_to_priority={dscp: mapping[dscp] for dscp in planned}, pfc_priorities=frozenset(pfc),
                   strict_priorities=frozenset(), ecn_priorities=frozenset(), mtu=mtu)


def read_host(text: str, planned: list[int]) -> tuple[QosSide, QosSide]:
    """(mlnx_qos path, dcb path) of a qos.sh, each over the ConnectX default (DSCP >> 3, no PFC)."""
    mlnx = {dscp: default_host_priority(dscp) for dscp in range(64)}
    for dscp, priority in re.findall(r"mlnx_qos -i \S+ --dscp2prio set,(\d+),(\d+)$", text, re.M):
        mlnx[int(dscp)] = int(priority)
    flags = re.findall(r"mlnx_qos -i \S+ --pfc ([01,]+)$", text, re.M)
    mlnx_pfc = {index for index, flag in enumerate(flags[0].split(",")) if flag == "1"} if flags else set()
    dcb = {dscp: default_host_priority(dscp) for dscp in range(64)}
    for entries in re.findall(r"dcb app replace dev \S+ dscp-prio ([\d: ]+)$", text, re.M):
        dcb.update({int(d): int(p) for d, p in (entry.split(":") for entry in entries.split())})
    dcb_pfc: set[int] = set()
    for entries in re.findall(r"dcb pfc set dev \S+ prio-pfc ([\w: ]+)$", text, re.M):
        dcb_pfc = {int(entry.split(":")[0]) for entry in entries.split()
                   if entry.endswith(":on") and not entry.startswith("all")}
    mtus = re.findall(r"ip link set dev \S+ mtu (\d+) up$", text, re.M)
    mtu = int(mtus[0]) if mtus else 1500
    return _side(mlnx, mlnx_pfc, mtu, planned), _side(dcb, dcb_pfc, mtu, planned)


def render_netplan(view: HostNetwork) -> str:
    """One host's netplan file: its management and storage ports, addresses and routes."""
    return render("host/netplan.yaml.j2", net=view)


KEA_LEASES = "/var/lib/kea/kea-leases4.csv"  # Debian's and Ubuntu's kea-dhcp4-server default
KEA_OOB_LEASES = "/var/lib/kea/kea-leases4-oob.csv"  # the oob server's, where one machine runs both


def _kea(leases: str, about: dict[str, object], subnets: list[dict[str, object]],
         extra: dict[str, object] | None = None, sockets: str = "udp") -> str:
    """A kea-dhcp4.conf: one server on every interface, its leases in `leases`, a day's lease.
    `sockets`: `udp` for a server that only hears relayed requests, `raw` for one on the clients'
    own segment, which must receive broadcasts from clients without an address (Kea ARM,
    *Interface Configuration*: dhcp-socket-type)."""
    dhcp4: dict[str, object] = {
        "interfaces-config": {"interfaces": ["*"], "dhcp-socket-type": sockets},
        "authoritative": True,
        "lease-database": {"type": "memfile", "persist": True, "name": leases, "lfc-interval": 3600},
        "valid-lifetime": 86400,
        "renew-timer": 43200,
        "rebind-timer": 75600,
        "match-client-id": False,
        **(extra or {}),
        "user-context": about,
        "subnet4": subnets,
    }
    return json.dumps({"Dhcp4": dhcp4}, indent=2) + "\n"


def render_kea(plan: DhcpPlan) -> str:
    """kea-dhcp4.conf: a subnet per management port (its /31), each handing out the one address the
    plan gives the host, chosen by the relay's giaddr (the leaf's end of the same /31)."""
    subnets: list[dict[str, object]] = [
        {"id": subnet.id, "subnet": subnet.subnet, "pools": [{"pool": f"{subnet.address} - {subnet.address}"}],
         "option-data": [{"name": "routers", "data": subnet.router}],
         "user-context": {"host": subnet.host, "port": subnet.port, "relay": subnet.switch}}
        for subnet in plan.subnets]
    pxe: dict[str, object] = ({"next-server": plan.next_server, "boot-file-name": plan.boot_filename}
                              if plan.boot_filename is not None else {})
    return _kea(KEA_LEASES, {"stack": plan.stack, "server": plan.server,
                             "about": "every host management port is a /31: the relay's giaddr picks its subnet, "
                                      "whose one address is the host's planned address"}, subnets, pxe)


def render_kea_oob(plan: OobDhcpPlan) -> str:
    """kea-dhcp4-oob.conf: the oob segment, its pool and options (router, NTP and DNS servers: Kea's
    option names `routers`, `ntp-servers`, `domain-name-servers`, RFC 2132 options 3, 42 and 6)."""
    options = [{"name": "routers", "data": plan.router}]
    if plan.ntp:
        options.append({"name": "ntp-servers", "data": ", ".join(plan.ntp)})
    if plan.dns:
        options.append({"name": "domain-name-servers", "data": ", ".join(plan.dns)})
    subnet: dict[str, object] = {"id": 1, "subnet": plan.subnet, "pools": [{"pool": f"{plan.first} - {plan.last}"}],
                                 "option-data": options}
    return _kea(KEA_OOB_LEASES, {"stack": plan.stack, "server": plan.server,
                                 "about": "the out-of-band segment: BMCs and switches booting for ZTP lease from the pool "
                                          "(its second quarter); each switch then takes its planned management address "
                                          "from its rendered config; the first quarter is the site's static part"},
                [subnet], sockets="raw")


def render_netnames(view: NetNames) -> str:
    """A pool's netnames.sh: pins its netplan files' netdev names to each host's NICs by MAC."""
    return render("host/netnames.sh.j2", names=view)
