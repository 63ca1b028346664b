"""Device naming conventions: switch port names per dialect, host NIC names per pool.

Switch ports are numbered from 0 in cabling order (downlinks first, uplinks on the top
ports) and named the way each OS numbers front-panel ports:
- sonic: `Ethernet{4 * index}` (the 4-lane step of 51.2T boxes in 400G mode; a HWSKU's
  port_config.ini is the authority, check it before loading),
- nvue (Cumulus Linux): `swp{index + 1}`,
- eos: `Ethernet{index + 1}/1`.

Host NICs, per pool, in rail order (port r of the node is rail r):
- fabric RDMA devices `mlx5_{r}` and netdevs `rail{r}`; storage netdevs `stor{i}`;
  management netdevs `mgmt{i}`. A udev rule that names netdevs by PCI address makes these
  names true; pools whose hosts differ set `fabric_nics.devices` / `fabric_nics.interfaces`
  (and `interfaces` on storage_nics / management_nics) in the stack file instead.
"""

from __future__ import annotations

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


def fabric_devices(pool: PoolSpec) -> list[str]:
    """RDMA device of each fabric port, in rail order."""
    return list(_given(pool.fabric_nics, "devices")) or [f"mlx5_{port}" for port in range(pool.fabric_nics.ports)]


def fabric_interfaces(pool: PoolSpec) -> list[str]:
    """Netdev of each fabric port, in rail order."""
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
