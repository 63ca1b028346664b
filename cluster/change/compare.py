"""Two built designs compared as physical work: switches, cables, rendered files, host ports and
the bill of materials.

A cable is known by its two physical ends: device and plan port (`p3`, `u1`, a host NIC's label
`gpu-nic2`), never by the name an OS gives the port (`swp3`, `rail2`), so a switch whose naming
changes (another model or dialect) keeps its cables. A cable of OLD that NEW does not have is
removed, one NEW has and OLD does not is added, and a removed and an added cable that share an end
(the host port, or the lower switch's port, first; else the upper switch's port) are one cable
moved: its other end is unplugged and plugged elsewhere.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from dataclasses import dataclass, field

from cluster.addressing import allocate, dotted
from cluster.artifacts import render_tree
from cluster.breakout import breakout
from cluster.exports.bom import Bom, bill_of_materials
from cluster.exports.cabling import Cable, cables
from cluster.naming import HostPort, PlanPort
from cluster.pipeline import Valid
from cluster.records import SwitchNode
from cluster.topology import Topology

#: What a switch is; a change in any of these is a changed switch.
SWITCH_FIELDS = ("network", "tier", "plane", "group", "rail", "pod", "model", "os", "ports", "port_gbps",
                 "uplink_ports", "uplink_gbps")
SWITCH_FOLDER = "switches/"


@dataclass(frozen=True)
class SwitchChange:
    """A switch in both designs whose model or place differs: field -> (old, new)."""

    name: str
    fields: dict[str, tuple[object, object]]


@dataclass(frozen=True)
class CableEnd:
    """One end of a cable: device, plan port, the port as the device's OS names it, and the
    front-panel cage (1-based; None for a host port, a fixed uplink port or a management port).
    Shown by its OS name and what the technician finds it by: a switch port's cage, a host port's
    NIC label (its plan port, `gpu-nic0`)."""

    device: str
    port: str
    name: str
    cage: int | None
    host: bool = False

    def __str__(self) -> str:
        where = f" (cage {self.cage})" if self.cage is not None else f" ({self.port})" if self.host else ""
        return f"{self.device} {self.name}{where if self.name != self.port else ''}"


@dataclass(frozen=True)
class CableWork:
    """One cable to add, remove or move: `lower` is the end nearer the hosts; a move keeps one
    end plugged (`kept` is "lower" or "upper") and has the ends it had in OLD in `was`."""

    network: str
    link: str
    lower: CableEnd
    upper: CableEnd
    gbps: int
    was: tuple[CableEnd, CableEnd] | None = None
    kept: str | None = None


@dataclass(frozen=True)
class FileChange:
    """A rendered file that differs: added, removed or changed, its unified diff and line counts."""

    path: str
    status: str
    diff: str
    added: int
    removed: int


@dataclass(frozen=True)
class HostPortChange:
    """A host port of both designs whose address or leaf (and so rail or group) differs."""

    host: str
    port: str
    old_address: str | None
    new_address: str | None
    old_leaf: str
    new_leaf: str


@dataclass(frozen=True)
class BomDelta:
    """One bill of materials item whose quantity differs, and what the difference costs."""

    network: str
    tier: str
    category: str
    item: str
    old: int
    new: int
    usd: tuple[float, float]


@dataclass
class Change:
    """Everything that differs between OLD and NEW, as work."""

    switches_added: list[str] = field(default_factory=list)
    switches_removed: list[str] = field(default_factory=list)
    switches_changed: list[SwitchChange] = field(default_factory=list)
    hosts_added: list[str] = field(default_factory=list)
    hosts_removed: list[str] = field(default_factory=list)
    cables_added: list[CableWork] = field(default_factory=list)
    cables_removed: list[CableWork] = field(default_factory=list)
    cables_moved: list[CableWork] = field(default_factory=list)
    files: list[FileChange] = field(default_factory=list)
    host_ports: list[HostPortChange] = field(default_factory=list)
    bom: list[BomDelta] = field(default_factory=list)
    usd: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 0.0), (0.0, 0.0))  # OLD, NEW totals

    @property
    def switch_files(self) -> dict[str, list[FileChange]]:
        """The changed files of each switch (its folder under switches/)."""
        found: dict[str, list[FileChange]] = defaultdict(list)
        for change in self.files:
            if change.path.startswith(SWITCH_FOLDER):
                found[change.path.split("/")[1]].append(change)
        return dict(found)

    @property
    def empty(self) -> bool:
        return not (self.switches_added or self.switches_removed or self.switches_changed or self.hosts_added
                    or self.hosts_removed or self.cables_added or self.cables_removed or self.cables_moved
                    or self.files or self.host_ports or self.bom)


def compare(old: Valid, new: Valid) -> Change:
    """OLD and NEW (both built on-prem designs) compared as work."""
    change = Change()
    _switches(change, old.topology, new.topology)
    old_hosts = [host for hosts in old.topology.hosts_by_pool.values() for host in hosts]  # in pool, index order
    new_hosts = [host for hosts in new.topology.hosts_by_pool.values() for host in hosts]
    old_set, new_set = set(old_hosts), set(new_hosts)
    change.hosts_added = [host for host in new_hosts if host not in old_set]
    change.hosts_removed = [host for host in old_hosts if host not in new_set]
    cable_changes(change, keyed_cables(old), keyed_cables(new))
    change.files = file_changes(render_tree(old.spec, old.topology), render_tree(new.spec, new.topology))
    change.host_ports = host_port_changes(host_ports(old), host_ports(new))
    old_bom, new_bom = bill_of_materials(old.spec, old.topology), bill_of_materials(new.spec, new.topology)
    change.bom = bom_delta(old_bom, new_bom)
    change.usd = (old_bom.usd(), new_bom.usd())
    return change


def _switches(change: Change, old: Topology, new: Topology) -> None:
    before, after = dict(old.switches()), dict(new.switches())
    change.switches_added = sorted(set(after) - set(before))
    change.switches_removed = sorted(set(before) - set(after))
    for name in sorted(set(before) & set(after)):
        fields = {key: (before[name][key], after[name][key])  # type: ignore[literal-required]
                  for key in SWITCH_FIELDS if before[name][key] != after[name][key]}  # type: ignore[literal-required]
        if fields:
            change.switches_changed.append(SwitchChange(name, fields))


def cage(switch: SwitchNode, port: PlanPort) -> int | None:
    """The 1-based front-panel cage of a main port (a breakout's ports share one); None else."""
    if port.kind != "main":
        return None
    split = breakout(switch["model"], switch["port_gbps"])
    return port.number if split is None else split.cage(port.number - 1) + 1


CableKey = tuple[str, str, str, str, str]  # network, lower device, lower port, upper device, upper port
HostPorts = dict[tuple[str, str], tuple[str | None, str]]  # (host, plan port) -> (address, leaf)


def _ends(topology: Topology, cable: Cable) -> tuple[CableEnd, CableEnd]:
    switches = topology.switch_nodes
    lower_cage = (cage(switches[cable.a_device], cable.a_port)
                  if isinstance(cable.a_port, PlanPort) and cable.a_device in switches else None)
    return (CableEnd(cable.a_device, str(cable.a_port), cable.a_name, lower_cage, isinstance(cable.a_port, HostPort)),
            CableEnd(cable.b_device, str(cable.b_port), cable.b_name, cage(switches[cable.b_device], cable.b_port)))


def keyed_cables(result: Valid) -> dict[CableKey, CableWork]:
    """Every cable of a design, known by its two physical ends."""
    found = {}
    for cable in cables(result.spec, result.topology):
        lower, upper = _ends(result.topology, cable)
        found[(cable.network, lower.device, lower.port, upper.device, upper.port)] = CableWork(
            cable.network, cable.link, lower, upper, cable.gbps)
    return found


def cable_changes(change: Change, before: dict[CableKey, CableWork], after: dict[CableKey, CableWork]) -> None:
    """The cables OLD and NEW (their `keyed_cables`) differ by, into `change`: added, removed, and
    moved (one end kept)."""
    removed = {key: before[key] for key in before.keys() - after.keys()}
    added = {key: after[key] for key in after.keys() - before.keys()}
    for kept, side in (("lower", slice(0, 3)), ("upper", slice(3, 5))):
        def end(key: CableKey, side: slice = side) -> tuple[str, ...]:
            return (key[0], *key[side])

        waiting = {end(key): key for key in sorted(added)}
        for key in sorted(removed):
            match = waiting.pop(end(key), None)
            if match is None or match not in added:
                continue
            was, now = removed.pop(key), added.pop(match)
            change.cables_moved.append(CableWork(now.network, now.link, now.lower, now.upper, now.gbps,
                                                 (was.lower, was.upper), kept))
    change.cables_removed = [removed[key] for key in sorted(removed)]
    change.cables_added = [added[key] for key in sorted(added)]
    change.cables_moved.sort(key=lambda work: (work.network, work.lower.device, work.lower.port))


def file_changes(old: dict[str, str], new: dict[str, str]) -> list[FileChange]:
    """Every rendered file added, removed or changed, with its unified diff."""
    found = []
    for path in sorted(old.keys() | new.keys()):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        status = "added" if before is None else "removed" if after is None else "changed"
        lines = list(difflib.unified_diff((before or "").splitlines(keepends=True),
                                          (after or "").splitlines(keepends=True),
                                          fromfile=f"OLD/{path}", tofile=f"NEW/{path}"))
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        found.append(FileChange(path, status, text,
                                sum(1 for line in lines[2:] if line.startswith("+")),
                                sum(1 for line in lines[2:] if line.startswith("-"))))
    return found


def host_ports(result: Valid) -> HostPorts:
    """(host, plan port) -> (its address, its leaf) for every host port on a routed leaf or an
    out-of-band one (no address)."""
    pools = {pool.name: pool for pool in result.spec.pools}
    addresses = allocate(result.spec, result.topology).links
    nodes = result.topology.nodes
    found: HostPorts = {}
    for _u, _v, _key, data in result.topology.edges:
        lower, upper, network = data["lower"], data["upper"], data["network"]
        host = nodes[lower]
        if host["kind"] != "host" or network == "oob":
            continue
        per_nic = pools[host["pool"]].nics(network).ports_per_nic
        for index, (nic, port) in enumerate(data["ports"]):
            address = addresses.get((lower, upper, network, index))
            found[(lower, str(HostPort(network, nic, port, per_nic)))] = (
                dotted(address) if address is not None else None, upper)
    return found


def host_port_changes(before: HostPorts, after: HostPorts) -> list[HostPortChange]:
    """The ports of hosts in both designs (their `host_ports`) whose address or leaf differs."""
    changed = []
    for key in sorted(before.keys() & after.keys()):
        if before[key] != after[key]:
            (old_address, old_leaf), (new_address, new_leaf) = before[key], after[key]
            changed.append(HostPortChange(key[0], key[1], old_address, new_address, old_leaf, new_leaf))
    return changed


def bom_delta(old: Bom, new: Bom) -> list[BomDelta]:
    """Items whose quantity differs, with the difference's price range."""
    def counted(bom: Bom) -> dict[tuple[str, str, str, str], tuple[int, tuple[float, float]]]:
        found: dict[tuple[str, str, str, str], tuple[int, tuple[float, float]]] = {}
        for line in bom.lines:
            key = (line.network, line.tier, line.category, line.item)
            quantity, _ = found.get(key, (0, line.unit_usd))
            found[key] = (quantity + line.quantity, line.unit_usd)
        return found

    before, after = counted(old), counted(new)
    deltas = []
    for key in sorted(before.keys() | after.keys()):
        (was, unit), (now, new_unit) = before.get(key, (0, (0.0, 0.0))), after.get(key, (0, (0.0, 0.0)))
        if was != now:
            price = new_unit if now else unit
            deltas.append(BomDelta(*key, old=was, new=now, usd=((now - was) * price[0], (now - was) * price[1])))
    return deltas
