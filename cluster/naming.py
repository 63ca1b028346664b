"""Device naming conventions: switch port names per dialect, host NIC names per pool.

Switch ports are numbered from 0 in cabling order (downlinks first, uplinks on the top
ports) and named the way each OS numbers front-panel ports: each dialect's folder says how
(cluster/dialects/<os>/), and this module asks it through the registry.

Host NICs, per pool, in rail order (port r of the node is rail r):
- fabric RDMA devices: the stack file's `fabric_nics.devices`, else the server catalog's
  (cluster/catalog/servers.yaml, e.g. a DGX H100's mlx5_0,3,4,5,6,9,10,11), else the generic
  `mlx5_{r}`, which no vendor promises (`fabric_device_source` says which one a pool got);
- fabric netdevs: the stack file's `fabric_nics.interfaces`; without them `qos.sh` finds each
  rail's netdev from its RDMA device at run time. `rail{r}` names the host end in the cabling and
  verify files only; storage netdevs `stor{i}`, management netdevs `mgmt{i}` (override with
  `interfaces` on storage_nics / management_nics).
"""

from __future__ import annotations

from functools import cache
from typing import Literal, NamedTuple

from cluster.catalog import load_catalog
from cluster.dialects import platform
from cluster.records import SwitchNode
from cluster.spec import Nics, PoolSpec

FABRIC = "fabric"


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
    return list(given) or [f"mlx5_{port}" for port in range(pool.fabric_nics.ports)]


def fabric_device_source(pool: PoolSpec) -> str:
    """Where `fabric_devices` came from, for the comments of the files that use them."""
    if _given(pool.fabric_nics, "devices"):
        return f"{pool.path}.fabric_nics.devices"
    if _catalog_devices(pool):
        return f"the server catalog's {pool.server}"
    return (f"the generic default mlx5_<rail>, not documented for {pool.server or 'this server'}: check "
            f"`rdma link show` on a host and set {pool.path}.fabric_nics.devices")


def fabric_interfaces_given(pool: PoolSpec) -> list[str]:
    """Netdev of each fabric port as the stack file names them; [] = found from the RDMA device on the host."""
    return list(_given(pool.fabric_nics, "interfaces"))


def fabric_interfaces(pool: PoolSpec) -> list[str]:
    """Netdev of each fabric port, in rail order, as cabling and verify files name the host end."""
    return list(_given(pool.fabric_nics, "interfaces")) or [f"rail{port}" for port in range(pool.fabric_nics.ports)]


def storage_interfaces(pool: PoolSpec) -> list[str]:
    return list(_given(pool.storage_nics, "interfaces")) or [f"stor{port}" for port in range(pool.storage_nics.ports)]


def management_interfaces_given(pool: PoolSpec) -> list[str]:
    """Management netdevs as the stack file names them; [] = found on the host from its planned address."""
    return list(_given(pool.management_nics, "interfaces"))


def management_interfaces(pool: PoolSpec) -> list[str]:
    given = list(_given(pool.management_nics, "interfaces"))
    return given or [f"mgmt{port}" for port in range(pool.management_nics.ports)]


def host_interfaces(pool: PoolSpec, network: str) -> list[str]:
    """Netdev of each of the pool's ports on `network` (fabric, storage or management), in port
    order: the one place that maps a network to a host's interface names."""
    names = {"fabric": fabric_interfaces, "storage": storage_interfaces, "management": management_interfaces}
    return names[network](pool)


def host_port_label(network: str, nic: int, port: int, ports_per_nic: int) -> str:
    """How a switch port description names the host's end: `nic2`, `storage nic0 port1`."""
    label = f"nic{nic}" if network == "fabric" else f"{network} nic{nic}"
    return f"{label} port{port}" if ports_per_nic > 1 else label


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
