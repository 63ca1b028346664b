"""The cables the design expects, end to end, in the names the devices report.

The cable list and each switch's port numbering come from the cabling plan
(`cluster.exports.cabling.cables`: downlinks first in device order, then uplinks; fixed uplink
ports `uN` after the main ports). Its generic port names become what LLDP and ibnetdiscover
report, by the same conventions the rendered configs use (`cluster.naming`):

- switch main port `pN` -> the dialect's front-panel name (Cumulus `swpN`, SONiC
  `Ethernet<4*(N-1)>`, EOS `EthernetN/1`); InfiniBand switches report the number `N`. SONiC
  advertises its port alias `etpN` in LLDP, accepted as the same port. Fixed uplink port `uK`
  is the next front-panel port after the main ports. A switch's `mgmt0` is its management
  port (`eth0`, EOS `Management1`, InfiniBand `mgmt0`).
- host ports are the pool's netdevs (`rail<r>`, `stor<i>`, `mgmt<i>`, or the stack file's
  `interfaces`); on InfiniBand the HCA and port, `mlx5_<r>/1`; the BMC `bmc`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import NamedTuple

from cluster import naming
from cluster.dialects import platform
from cluster.exports.cabling import host_ports, ordered_links
from cluster.ports import PortSpan
from cluster.records import SwitchNode
from cluster.spec import ClusterSpec
from cluster.topology import Topology

BMC_PORT = naming.BMC_PORT


class End(NamedTuple):
    """One end of a cable: a device and one of its ports, by design name (a tuple: cheap to hash and sort)."""

    device: str
    port: str

    def __str__(self) -> str:
        return f"{self.device} port {self.port}" if self.port.isdigit() else f"{self.device} {self.port}"


class Cable(NamedTuple):
    """One physical cable of the design. `lower` is the end nearer the hosts. (A tuple, as `End`
    is: half a million of them at 131,072 GPUs.)"""

    lower: End
    upper: End
    network: str
    tier: str  # host-leaf | leaf-spine | spine-core | mgmt-port | ...
    gbps: int
    rail: int | None
    path: str

    def other(self, end: End) -> End:
        return self.upper if end == self.lower else self.lower

    def __str__(self) -> str:
        return f"{self.lower} <-> {self.upper}"


def expected_cables(spec: ClusterSpec, topology: Topology, devices: Collection[str] | None = None) -> list[Cable]:
    """Every cable of an on-prem design with both ends as devices report them (with `devices`,
    those that end on one of them), in the cabling plan's order. Cloud designs have none.

    Half a million cables at 131,072 GPUs, but few distinct port runs: a run of a switch's
    ports (cluster.ports) is named once per switch kind, a host's ports once per pool, network
    and (NIC, port) pairs, and every edge that has them shares the names."""
    transport = spec.fabric.transport if spec.fabric is not None else "roce"
    rail_optimized = spec.fabric is not None and spec.fabric.design == "rail-optimized"
    pools = {pool.name: pool for pool in spec.pools}
    nodes, switches, spans = topology.nodes, topology.switch_nodes, topology.switch_ports
    result: list[Cable] = []
    append = result.append
    host_ends: dict[tuple[str, str], list[str]] = {}  # (pool, network) -> the names of its hosts' ports
    host_runs: dict[tuple[str, str, object], list[str]] = {}  # + the edge's (NIC, port) pairs -> names
    kinds: dict[str, tuple[str, str, int, int]] = {}  # switch -> what its port names depend on
    switch_runs: dict[tuple[tuple[str, str, int, int], PortSpan], list[str]] = {}

    def switch_names(name: str, peer: str, network: str) -> list[str]:
        kind = kinds.get(name)
        if kind is None:
            switch = switches[name]
            kind = kinds[name] = (switch["os"], switch["model"], switch["port_gbps"], switch["ports"])
        span = spans[(name, peer, network)]
        names = switch_runs.get((kind, span))
        if names is None:
            names = switch_runs[(kind, span)] = [naming.plan_port_name(switches[name], port) for port in span.ports()]
        return names

    for link, edge in ordered_links(topology):
        lower, upper, network = edge["lower"], edge["upper"], edge["network"]
        if devices is not None and lower not in devices and upper not in devices:
            continue
        node = nodes[lower]
        if node["kind"] == "host":
            pool = pools[node["pool"]]
            pairs = edge["links"] if network == "oob" else edge["ports"]
            key = (pool.name, network, pairs)
            lower_ports = host_runs.get(key)
            if lower_ports is None:
                if (pool.name, network) not in host_ends:
                    host_ends[(pool.name, network)] = naming.host_port_names(pool, network, transport)
                ends = host_ends[(pool.name, network)]
                lower_ports = host_runs[key] = [ends[0 if port.network == "oob" else port.position]
                                                for port in host_ports(pools, pool.name, edge)]
        else:
            lower_ports = switch_names(lower, upper, network)
        upper_ports = switch_names(upper, lower, network)
        rail = edge["rail"] if network == "fabric" and link == "host-leaf" and rail_optimized else None
        gbps, path = int(edge["gbps"]), str(edge["path"])
        for index in range(edge["links"]):  # (most edges are one cable: no generator per edge)
            append(Cable(End(lower, lower_ports[index]), End(upper, upper_ports[index]), network, link, gbps, rail, path))
    return result


def port_aliases(topology: Topology, cables: Iterable[Cable]) -> dict[str, dict[str, str]]:
    """Per device: every name a port may be reported by (lower-cased) -> its design name: the
    names its cables give, its front panel's where they give none, its OS's aliases over both.
    (Two million names at 131,072 GPUs: each name is lower-cased once, each switch kind's front
    panel named once.)"""
    aliases: dict[str, dict[str, str]] = {}
    lowered: dict[str, str] = {}
    for cable in cables:
        for device, port in (cable.lower, cable.upper):
            low = lowered.get(port)
            if low is None:
                low = lowered[port] = port.lower()
            table = aliases.get(device)
            if table is None:
                table = aliases[device] = {}
            table[low] = port
    panels: dict[tuple[str, str, int, int, int], tuple[dict[str, str], dict[str, str]]] = {}
    for name, attrs in topology.switches():
        kind = (attrs["os"], attrs["model"], attrs["port_gbps"], attrs["ports"], attrs["uplink_ports"])
        panel = panels.get(kind)
        if panel is None:
            panel = panels[kind] = _front_panel(attrs)
        front, renamed = panel
        aliases[name] = {**front, **aliases.get(name, {}), **renamed}
    return aliases


def _front_panel(switch: SwitchNode) -> tuple[dict[str, str], dict[str, str]]:
    """A switch's front-panel ports by their lower-cased names, and by its OS's aliases."""
    front: dict[str, str] = {}
    renamed: dict[str, str] = {}
    for number in range(1, switch["ports"] + switch["uplink_ports"] + 1):
        port = naming.front_panel(switch, number)
        front.setdefault(port.lower(), port)
        for alias in platform(switch["os"]).port_aliases(number):
            renamed[alias] = port
    return front, renamed


def by_end(cables: Iterable[Cable]) -> dict[End, Cable]:
    """Each designed port -> its cable."""
    return {end: cable for cable in cables for end in (cable.lower, cable.upper)}


def expected_neighbors(spec: ClusterSpec, topology: Topology, devices: Collection[str] | None = None,
                       cables: Iterable[Cable] | None = None) -> dict[str, str]:
    """Per device (of `devices`, or all), the neighbors its ports should see:
    `port  neighbor  neighbor-port  network  gbps` lines. `cables`: expected_cables of the same
    design and devices, when the caller has them already (they take most of the time)."""
    rows: dict[str, list[tuple[str, str, str, str, int]]] = {}
    for cable in expected_cables(spec, topology, devices) if cables is None else cables:
        for end in (cable.lower, cable.upper):
            if devices is not None and end.device not in devices:
                continue
            peer = cable.other(end)
            rows.setdefault(end.device, []).append((end.port, peer.device, peer.port, cable.network, cable.gbps))
    files: dict[str, str] = {}
    for device in sorted(rows):
        lines = [f"# {device}: the LLDP / ibnetdiscover neighbor each port should report ({spec.name})",
                 "# port\tneighbor\tneighbor-port\tnetwork\tgbps"]
        lines += ["\t".join(map(str, row)) for row in sorted(rows[device], key=_port_order)]
        files[device] = "\n".join(lines) + "\n"
    return files


def _port_order(row: tuple[str, str, str, str, int]) -> tuple[str, int, str]:
    """swp2 before swp10: the name without its digits, then the number."""
    digits = "".join(ch for ch in row[0] if ch.isdigit())
    return "".join(ch for ch in row[0] if not ch.isdigit()), int(digits[:9] or 0), row[0]


def ptm_dot(spec: ClusterSpec, topology: Topology, cables: Iterable[Cable] | None = None) -> str:
    """Cumulus PTM's topology.dot: one `"dev":"port" -- "dev":"port";` edge per cable (`cables`:
    expected_cables of the whole design, when the caller has them already)."""
    lines = [f'graph "{spec.name}" {{']
    every = expected_cables(spec, topology) if cables is None else cables
    for cable in sorted(every, key=lambda c: (c.lower, c.upper)):
        lines.append(f'  "{cable.lower.device}":"{cable.lower.port}" -- "{cable.upper.device}":"{cable.upper.port}";')
    lines.append("}")
    return "\n".join(lines) + "\n"
