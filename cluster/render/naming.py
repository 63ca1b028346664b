"""Device naming conventions: switch port names per dialect, host NIC names per pool.

Switch ports are numbered from 0 in cabling order (downlinks first, uplinks on the top
ports) and named the way each OS numbers front-panel ports:
- sonic: `Ethernet{4 * index}` (the 4-lane step of 51.2T boxes in 400G mode; a HWSKU's
  port_config.ini is the authority, check it before loading),
- nvue (Cumulus Linux): `swp{index + 1}`,
- eos: `Ethernet{index + 1}/1`.

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

from cluster.catalog import load_catalog
from cluster.spec import Nics, PoolSpec

SONIC_LANE_STEP = 4


def switch_port(os: str, index: int) -> str:
    """Front-panel name of port `index` (0-based) on a switch running `os`."""
    if os == "nvue":
        return f"swp{index + 1}"
    if os == "eos":
        return f"Ethernet{index + 1}/1"
    return f"Ethernet{SONIC_LANE_STEP * index}"


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


def management_interfaces(pool: PoolSpec) -> list[str]:
    given = list(_given(pool.management_nics, "interfaces"))
    return given or [f"mgmt{port}" for port in range(pool.management_nics.ports)]


def host_port_label(network: str, nic: int, port: int, ports_per_nic: int) -> str:
    """How a switch port description names the host's end: `nic2`, `storage nic0 port1`."""
    label = f"nic{nic}" if network == "fabric" else f"{network} nic{nic}"
    return f"{label} port{port}" if ports_per_nic > 1 else label
