"""Device naming conventions: switch port names per dialect, host NIC names per pool.

Switch ports are numbered from 0 in cabling order (downlinks first, uplinks on the top
ports) and named the way each OS numbers front-panel ports:
- sonic: the name of the index-th front-panel port of the model's SKU at the port speed, from
  the SKU's port_config.ini (catalog sonic_ports.yaml: `Ethernet0`, `Ethernet4`.. on an
  SN5600 at 400G, `Ethernet0`, `Ethernet2`.. at 200G); a model or speed with no SKU there is a
  SCHEMA error before anything renders,
- nvue (Cumulus Linux): `swp{index + 1}`,
- eos: `Ethernet{index + 1}/1`,
- opensm (InfiniBand): the port number, from 1.

Host NICs, per pool, in rail order (port r of the node is rail r):
- fabric RDMA devices `mlx5_{r}` and netdevs `rail{r}`; storage netdevs `stor{i}`;
  management netdevs `mgmt{i}`. A udev rule that names netdevs by PCI address makes these
  names true; pools whose hosts differ set `fabric_nics.devices` / `fabric_nics.interfaces`
  (and `interfaces` on storage_nics / management_nics) in the stack file instead.
"""

from __future__ import annotations

from cluster.catalog import SonicPort, load_catalog
from cluster.spec import Nics, PoolSpec


def sonic_port(model: str, gbps: int, index: int) -> SonicPort:
    """Port `index` (0-based, front-panel order) of the SONiC SKU of `model` at `gbps`."""
    sku = load_catalog().sonic_sku(model, gbps)
    if sku is None or index >= len(sku.port_map):
        raise ValueError(f"no SONiC port {index} for {model} at {gbps}G in catalog sonic_ports.yaml")
    return sku.port_map[index]


def switch_port(os: str, index: int, model: str, gbps: int) -> str:
    """Front-panel name of port `index` (0-based) on a `model` switch running `os`, ports at `gbps`."""
    if os == "nvue":
        return f"swp{index + 1}"
    if os == "eos":
        return f"Ethernet{index + 1}/1"
    if os == "opensm":
        return str(index + 1)  # InfiniBand switches number their ports from 1
    return sonic_port(model, gbps, index).name


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
