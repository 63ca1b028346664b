"""Device naming conventions: switch port names per dialect, host NIC names per pool.

Switch ports are numbered from 0 in cabling order (downlinks first, uplinks on the top
ports) and named the way each OS numbers front-panel ports:
- sonic: the name of the index-th front-panel port of the model's SKU at the port speed, from
  the SKU's port_config.ini (catalog sonic_ports.yaml: `Ethernet0`, `Ethernet4`.. on an
  SN5600 at 400G, `Ethernet0`, `Ethernet2`.. at 200G); a model or speed with no SKU there is a
  SCHEMA error before anything renders,
- nvue (Cumulus Linux): on a model with cage data (catalog `cages`) whose port speed splits each
  cage into k > 1 ports, port i is `swp{C}s{S}` (cage C = i // k + 1, subport S = i % k; at a speed
  that splits only the odd cages, C = 2 (i // k) + 1, and NVUE disables each even neighbour), the names
  `nv set interface swpC link breakout kx` creates (NVUE reference, docs.nvidia.com/networking-
  ethernet-software/nvue-reference: "breakout 4x, parent ports swp1 through swp32 split into
  sub-interfaces swp1s0 through swp32s3"); otherwise `swp{index + 1}`,
- eos: on a model with cage data, `Ethernet{C}/{L}` with L the first of the port's lanes (an OSFP
  cage N exposes Ethernet N/1 to N/8, one per lane, arista.com/en/um-eos/eos-layer-1-profiles; so
  2 x 400G on an 8-lane cage is N/1 and N/5, each `speed 400g-4`), and on a modular chassis
  (catalog `linecards`) `Ethernet{S}/{P}/{L}`, the card in slot S, its cage P (a 7808R3's
  first port is Ethernet3/1/1); otherwise `Ethernet{index + 1}/1`,
- opensm (InfiniBand): the port number, from 1.

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

from typing import Literal, NamedTuple

from cluster.catalog import EosPlatform, SonicPort, load_catalog
from cluster.records import SwitchNode
from cluster.spec import Nics, PoolSpec

FABRIC = "fabric"


def number(index: int) -> str:
    """1-based, at least three digits; the 1,000th is `1000`, so growing never renames the others."""
    return f"{index + 1:03d}"


def sonic_port(model: str, gbps: int, index: int) -> SonicPort:
    """Port `index` (0-based, front-panel order) of the SONiC SKU of `model` at `gbps`."""
    sku = load_catalog().sonic_sku(model, gbps)
    if sku is None or index >= len(sku.port_map):
        raise ValueError(f"no SONiC port {index} for {model} at {gbps}G in catalog sonic_ports.yaml")
    return sku.port_map[index]


class Breakout(NamedTuple):
    """How a model's cages split at one port speed (catalog `cages`)."""

    ports: int  # per cage in use
    stride: int  # lanes from one subport's first lane to the next one's (the cage's lanes / ports)
    step: int  # 1: every cage in use; 2: the odd cages only (each one's even neighbour disabled)
    lane_gbps: int  # the cage's fastest lane

    def lanes(self, gbps: int) -> int:
        """Lanes a port of this split runs on at `gbps` (EOS `speed 400g-8`): the speed over the
        lane rate, within the port's share of the cage."""
        return min(self.stride, -(-gbps // self.lane_gbps))

    def cage(self, index: int) -> int:
        """The 0-based cage of port `index` (0-based, cabling order)."""
        return index // self.ports * self.step

    def lane(self, index: int) -> int:
        """The first lane (1-based) of port `index` in its cage, as EOS numbers interfaces."""
        return index % self.ports * self.stride + 1


def breakout(model: str, gbps: int) -> Breakout | None:
    """How `model`'s cages split at `gbps`, when the catalog knows its cages."""
    entry = load_catalog().switches.get(model)
    if entry is None or entry.cages is None or gbps not in entry.port_modes:
        return None
    cages = entry.cages
    step = 2 if gbps in cages.odd_only else 1
    ports, spare = divmod(entry.port_modes[gbps], cages.count // step)
    if spare or not ports or cages.lanes % ports:
        raise ValueError(f"catalog: {model} has {entry.port_modes[gbps]} ports at {gbps}G, not a breakout "
                         f"of its {cages.count // step} cages of {cages.lanes} lanes")
    return Breakout(ports, cages.lanes // ports, step, cages.lane_gbps)


def _eos_port(model: str, split: Breakout, index: int) -> str:
    """`EthernetC/L`, or `EthernetS/P/L` on a modular chassis (linecard in slot S, its cage P)."""
    cage, lane = split.cage(index), split.lane(index)
    cards = load_catalog().switches[model].linecards
    if cards is None:
        return f"Ethernet{cage + 1}/{lane}"
    card, port = divmod(cage, cards.ports)
    return f"Ethernet{cards.first_slot + card}/{port + 1}/{lane}"


def switch_port(os: str, index: int, model: str, gbps: int) -> str:
    """Front-panel name of port `index` (0-based) on a `model` switch running `os`, ports at `gbps`."""
    if os in ("nvue", "eos"):
        split = breakout(model, gbps)
        if split is None:
            return f"swp{index + 1}" if os == "nvue" else f"Ethernet{index + 1}/1"
        if os == "eos":
            return _eos_port(model, split, index)
        cage = split.cage(index) + 1
        return f"swp{cage}s{index % split.ports}" if split.ports > 1 else f"swp{cage}"
    if os == "opensm":
        return str(index + 1)  # InfiniBand switches number their ports from 1
    return sonic_port(model, gbps, index).name


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


#: The management port as each OS names it (InfiniBand switches: their management interface).
MGMT_PORT = {"nvue": "eth0", "sonic": "eth0", "eos": "Management1", "opensm": "mgmt0"}


def dialect(switch: SwitchNode) -> str:
    """A switch's port-naming dialect: its config os (InfiniBand switches number their ports)."""
    os_name = switch["os"]
    return os_name if os_name in MGMT_PORT else "sonic"


#: What a model without an `eos` catalog entry gets: a fixed Trident/Tomahawk-style box's forms.
FIXED_BOX_EOS = EosPlatform(source="no eos entry in the catalog: a fixed box (uc-tx-queue, Management1)")


def eos_platform(model: str) -> EosPlatform:
    """The EOS forms of `model`: its catalog `eos` entry, else a fixed box's."""
    entry = load_catalog().switches.get(model)
    return entry.eos if entry is not None and entry.eos is not None else FIXED_BOX_EOS


def management_port(switch: SwitchNode) -> str:
    """A switch's management port: its OS's name, or its EOS platform's (a modular chassis'
    supervisors share Management0)."""
    os_name = dialect(switch)
    return eos_platform(switch["model"]).management if os_name == "eos" else MGMT_PORT[os_name]


def front_panel(switch: SwitchNode, number: int) -> str:
    """Front-panel port `number` (from 1) of a switch (its graph record) as the switch names it."""
    os_name = dialect(switch)
    if os_name == "opensm":
        return str(number)
    return switch_port(os_name, number - 1, switch["model"], switch["port_gbps"])


def plan_port_name(switch: SwitchNode, plan_port: PlanPort) -> str:
    """A plan port (`p3` main, `u1` fixed uplink, `mgmt0`) as the switch names it: one naming for
    the configs, the cabling plan and `verify`."""
    if plan_port.kind == "mgmt":
        return management_port(switch)
    return front_panel(switch, plan_port.front_panel_index(switch["ports"]) + 1)
