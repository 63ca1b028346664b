"""Device naming conventions: switch port names per dialect, host NIC names per pool.

Switch ports are numbered from 0 in cabling order (downlinks first, uplinks on the top
ports) and named the way each OS numbers front-panel ports: each dialect's folder says how
(cluster/dialects/<os>/), and this module asks it through the registry.

Host NICs, per pool, in rail order (port r of the node is rail r):
- fabric RDMA devices: the stack file's `fabric_nics.devices`, else the server catalog's
  (cluster/catalog/servers.yaml, e.g. a DGX H100's mlx5_0,3,4,5,6,9,10,11), else the generic
  `mlx5_{r}`, which no vendor promises (`fabric_device_source` says which one a pool got);
- fabric netdevs: the stack file's `fabric_nics.interfaces`, else `rail{r}`, storage netdevs
  `stor{i}`, management netdevs `mgmt{i}` (override with `interfaces` on storage_nics /
  management_nics); hosts/<pool>/netnames.sh pins the names the stack file does not give, by MAC
  (a rail's netdev found from its RDMA device, as qos.sh finds it).

A host port, like a switch port, has a plan port and one OS name. The plan port is the NIC's
label (`HostPort`: `gpu-nic0`, `stor-nic1p2`, `bmc`), cabling.csv's a_port, which a technician
reads on the cage. Its OS name (`host_port_names`) is the netdev (`rail0`, `stor1`, `mgmt0`), or
on an InfiniBand fabric the HCA port (`mlx5_0/1`) as ibnetdiscover reports it: cabling.csv's
a_name, the switches' port descriptions, the verify files and the netplan files all use it.
"""

from __future__ import annotations

from functools import cache
from typing import Literal, NamedTuple

from cluster.catalog import load_catalog
from cluster.dialects import platform
from cluster.records import SwitchNode
from cluster.spec import Nics, PoolSpec

FABRIC = "fabric"
#: A host port's netdev by its position where the stack file names none (netnames.sh pins it), and
#: the generic RDMA device of a fabric port where neither the stack file nor the catalog names one.
NETDEV_FORMS = {FABRIC: "rail{}", "storage": "stor{}", "management": "mgmt{}"}
GENERIC_RDMA_DEVICE = "mlx5_{}"


def number(index: int) -> str:
    """1-based, at least three digits; the 1,000th is `1000`, so growing never renames the others."""
    return f"{index + 1:03d}"


@cache
def switch_port(os: str, index: int, model: str, gbps: int) -> str:
    """Front-panel name of port `index` (0-based) on a `model` switch running `os`, ports at `gbps`
    (remembered: a function of the catalog, read once, and asked 5 million times at 131,072 GPUs)."""
    return platform(os).port_name(index, model, gbps)


def _given(nics: Nics, key: str) -> tuple[str, ...]:
    value: tuple[str, ...] = getattr(nics, key, ())
    return value


def _catalog_devices(pool: PoolSpec) -> tuple[str, ...]:
    """The server catalog's RDMA devices for the pool's server, if they fit its fabric ports."""
    server = load_catalog().servers.get(pool.server or "")
    devices = server.fabric_nics.devices if server is not None else ()
    return devices if len(devices) == pool.fabric_nics.ports else ()


def fabric_devices(pool: PoolSpec) -> list[str]:
    """RDMA device of each fabric port, in rail order: stack file, else server catalog, else mlx5_<r>."""
    given = _given(pool.fabric_nics, "devices") or _catalog_devices(pool)
    return list(given) or [GENERIC_RDMA_DEVICE.format(port) for port in range(pool.fabric_nics.ports)]


def fabric_device_source(pool: PoolSpec) -> str:
    """Where `fabric_devices` came from, for the comments of the files that use them."""
    if _given(pool.fabric_nics, "devices"):
        return f"{pool.path}.fabric_nics.devices"
    if _catalog_devices(pool):
        return f"the server catalog's {pool.server}"
    return (f"the generic default mlx5_<rail>, not documented for {pool.server or 'this server'}: check "
            f"`rdma link show` on a host and set {pool.path}.fabric_nics.devices")


def _netdevs(nics: Nics, network: str) -> list[str]:
    return list(_given(nics, "interfaces")) or [NETDEV_FORMS[network].format(port) for port in range(nics.ports)]


def fabric_interfaces_given(pool: PoolSpec) -> list[str]:
    """Netdev of each fabric port as the stack file names them; [] = found from the RDMA device on the host."""
    return list(_given(pool.fabric_nics, "interfaces"))


def fabric_interfaces(pool: PoolSpec) -> list[str]:
    """Netdev of each fabric port, in rail order: the stack file's, else `rail<r>`, which netnames.sh pins."""
    return _netdevs(pool.fabric_nics, FABRIC)


def storage_interfaces(pool: PoolSpec) -> list[str]:
    return _netdevs(pool.storage_nics, "storage")


def management_interfaces_given(pool: PoolSpec) -> list[str]:
    """Management netdevs as the stack file names them; [] = found on the host from its planned address."""
    return list(_given(pool.management_nics, "interfaces"))


def management_interfaces(pool: PoolSpec) -> list[str]:
    return _netdevs(pool.management_nics, "management")


def host_interfaces(pool: PoolSpec, network: str) -> list[str]:
    """Netdev of each of the pool's ports on `network` (fabric, storage or management), in port
    order: the one place that maps a network to a host's interface names."""
    names = {"fabric": fabric_interfaces, "storage": storage_interfaces, "management": management_interfaces}
    return names[network](pool)


class PlanPort(NamedTuple):
    """A switch's end of a cable in the cabling plan: main port `p<n>`, fixed uplink port `u<n>`
    (both from 1), or the switch's own management port `mgmt0`; as cabling.csv writes it."""

    kind: Literal["main", "fixed", "mgmt"]
    number: int = 0

    def __str__(self) -> str:
        return f"p{self.number}" if self.kind == "main" else f"u{self.number}" if self.kind == "fixed" else "mgmt0"

    def front_panel_index(self, main_ports: int) -> int:
        """0-based front-panel index: `p<N>` is N-1; the fixed uplink ports follow the main ports."""
        return self.number - 1 if self.kind == "main" else main_ports + self.number - 1


MANAGEMENT = PlanPort("mgmt")
HOST_PORT_PREFIX = {"fabric": "gpu-nic", "storage": "stor-nic", "management": "mgmt-nic"}
BMC_PORT = "bmc"


class HostPort(NamedTuple):
    """A host's end of a cable in the cabling plan: port `port` of NIC `nic` on `network`
    (`gpu-nic2`, `gpu-nic1p2` where the NICs have several ports, `stor-nic0`), or its BMC (`bmc`)
    on the oob network."""

    network: str
    nic: int = 0
    port: int = 0
    ports_per_nic: int = 1

    def __str__(self) -> str:
        if self.network == "oob":
            return BMC_PORT
        prefix = HOST_PORT_PREFIX[self.network]
        return f"{prefix}{self.nic}p{self.port + 1}" if self.ports_per_nic > 1 else f"{prefix}{self.nic}"

    @property
    def position(self) -> int:
        """The port's position among the host's ports on its network (NIC-major, as rails count)."""
        return self.nic * self.ports_per_nic + self.port


def host_port_names(pool: PoolSpec, network: str, transport: str) -> list[str]:
    """The OS name of each of a pool's ports on `network`, by `HostPort.position` (a BMC's is 0): its
    netdev (`host_interfaces`), its HCA port on an InfiniBand fabric (`mlx5_0/1`, as ibnetdiscover
    reports it: an IB port has no netdev that LLDP or a switch sees), `bmc` on the oob network."""
    if network == "oob":
        return [BMC_PORT]
    if network == FABRIC and transport == "infiniband":
        return [f"{device}/1" for device in fabric_devices(pool)]
    return host_interfaces(pool, network)


def management_port(switch: SwitchNode) -> str:
    """A switch's management port as its OS names it (on EOS, its platform's: a modular chassis'
    supervisors share Management0)."""
    return platform(switch["os"]).management_port(switch["model"])


def front_panel(switch: SwitchNode, number: int) -> str:
    """Front-panel port `number` (from 1) of a switch (its graph record) as the switch names it."""
    return switch_port(switch["os"], number - 1, switch["model"], switch["port_gbps"])


def plan_port_name(switch: SwitchNode, plan_port: PlanPort) -> str:
    """A plan port (`p3` main, `u1` fixed uplink, `mgmt0`) as the switch names it: one naming for
    the configs, the cabling plan and `verify`."""
    if plan_port.kind == "mgmt":
        return management_port(switch)
    return front_panel(switch, plan_port.front_panel_index(switch["ports"]) + 1)
