"""What `lab up` builds for one design: switches, hosts and cables, with the rendered configs.

Cables and their port names come from the design (`cluster.verify.expected.expected_cables`, the
names cabling.csv and `verify` use); everything a device is configured with comes from the
rendered files, read as the device would read them:

- SONiC switches: port MTU, admin state and addresses from `config_db.json` (PORT, INTERFACE,
  LOOPBACK_INTERFACE), and the rendered `frr.conf` unmodified, as FRR runs it in SONiC's
  `split-unified` routing mode (one integrated config);
- Cumulus (NVUE) and EOS switches: the FRR equivalent of the same routing plan (same ASN,
  router id, /31s, neighbors, multipath width and BFD timers, from the same switch view the
  dialect's renderer used), because neither OS runs here; the lab summary says so;
- hosts: the per-rail routing section of the rendered `hosts/<pool>/qos.sh` run as it is, with
  the rail netdevs bound to the lab's interfaces (the RDMA discovery and NIC QoS parts need
  ConnectX hardware), and the MTU the script sets.

A design larger than the machine is built as a slice: the first leaf groups, every switch above
them and the hosts below them (`Slice`).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from cluster.addressing import allocate
from cluster.naming import fabric_interfaces
from cluster.render.engine import render
from cluster.render.views import switch_views
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology
from cluster.verify.expected import Cable, expected_cables

#: The rendered qos.sh's per-rail routing section starts at this comment (host/_routing.j2) and
#: ends before the script's closing message.
ROUTING_START = "# --- Per-rail source routing"
ROUTING_END = 'echo "qos.sh:'
IFNAME = re.compile(r"[A-Za-z0-9_.-]{1,15}")  # what Linux takes as an interface name


class LabInputError(Exception):
    """A rendered file the lab cannot use; the message names the file and the fix."""


@dataclass(frozen=True)
class Interface:
    name: str  # the Linux interface in the device's namespace
    port: str  # the port as the platform (and cabling.csv, verify) names it
    address: str | None  # a.b.c.d/len as the rendered config sets it
    mtu: int
    up: bool = True


@dataclass(frozen=True)
class LabSwitch:
    name: str
    tier: str
    os: str
    loopback: str | None  # a.b.c.d/32
    interfaces: tuple[Interface, ...]
    frr_conf: str
    source: str  # where frr_conf and the addresses come from


@dataclass(frozen=True)
class LabHost:
    name: str
    pool: str
    interfaces: tuple[Interface, ...]  # in rail order
    routing: str  # a bash script: the rendered routing section with the rails bound


@dataclass(frozen=True)
class LabCable:
    a: str  # device (the end nearer the hosts)
    a_if: str
    b: str
    b_if: str


@dataclass(frozen=True)
class LabPlan:
    stack: str
    slice: str  # what the lab represents, in words
    switches: tuple[LabSwitch, ...]
    hosts: tuple[LabHost, ...]
    cables: tuple[LabCable, ...]
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def devices(self) -> tuple[LabSwitch | LabHost, ...]:
        """Switches, then hosts."""
        return (*self.switches, *self.hosts)

    def cable_addresses(self, switches_only: bool = False) -> list[tuple[LabCable, str | None, str | None]]:
        """Every cable (between two switches only, when asked) with the address, without its
        length, of each end as its device is configured (None: that end has none)."""
        devices = self.switches if switches_only else self.devices
        address = {(device.name, interface.name): interface.address.split("/")[0]
                   for device in devices for interface in device.interfaces if interface.address}
        names = {device.name for device in devices}
        return [(cable, address.get((cable.a, cable.a_if)), address.get((cable.b, cable.b_if)))
                for cable in self.cables if cable.a in names and cable.b in names]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabPlan:
        def interfaces(rows: list[dict[str, Any]]) -> tuple[Interface, ...]:
            return tuple(Interface(**row) for row in rows)
        return cls(
            stack=data["stack"], slice=data["slice"],
            switches=tuple(LabSwitch(**{**row, "interfaces": interfaces(row["interfaces"])})
                           for row in data["switches"]),
            hosts=tuple(LabHost(**{**row, "interfaces": interfaces(row["interfaces"])}) for row in data["hosts"]),
            cables=tuple(LabCable(**row) for row in data["cables"]),
            notes=tuple(data.get("notes", ())),
        )


@dataclass(frozen=True)
class Slice:
    """Which part of the design the lab holds: all of it, or its first `groups` leaf groups with
    every switch above them and the hosts below them."""

    groups: int | None = None  # None: the whole fabric

    @classmethod
    def parse(cls, text: str | None) -> Slice:
        if text in (None, "", "all"):
            return cls()
        assert text is not None
        key, _, value = text.partition("=")
        if key != "groups" or not value.isdigit() or int(value) < 1:
            raise ValueError(f"--slice {text!r}: use `all` or `groups=N` (N >= 1: the first N leaf groups, "
                             "every switch above them and the hosts below them)")
        return cls(int(value))

    def __str__(self) -> str:
        return "all" if self.groups is None else f"groups={self.groups}"


def leaf_groups(topology: Topology) -> dict[str, tuple[int, int]]:
    """Every fabric leaf -> its leaf group, as (pod, group)."""
    return {name: (data.get("pod") or 0, data.get("group") or 0) for name, data in topology.switches(FABRIC)
            if data["tier"] == "leaf"}


def slice_devices(topology: Topology, chosen: Slice) -> tuple[set[str], set[str], str]:
    """(fabric switches, hosts, a sentence saying what they represent) of a slice."""
    graph = topology.graph
    switches = {name for name, _ in topology.switches(FABRIC)}
    group_of = leaf_groups(topology)
    leaves = set(group_of)
    groups = sorted(set(group_of.values()))
    hosts_all = {host for hosts in topology.hosts_by_pool.values() for host in hosts}
    if chosen.groups is None or chosen.groups >= len(groups):
        return switches, hosts_all, (f"the whole GPU fabric: {len(switches)} switches, {len(hosts_all)} hosts "
                                     f"({len(groups)} leaf group{'s' if len(groups) != 1 else ''})")
    kept = set(groups[: chosen.groups])
    chosen_leaves = {name for name in leaves if group_of[name] in kept}
    selected = set(chosen_leaves)
    frontier = list(chosen_leaves)
    while frontier:  # every switch above the chosen leaves
        node = frontier.pop()
        for _, peer, network, data in graph.edges(node, keys=True, data=True):
            if network == FABRIC and data["lower"] == node and peer in switches and peer not in selected:
                selected.add(peer)
                frontier.append(peer)
    hosts = {host for host in hosts_all
             if all(peer in chosen_leaves for _, peer, network in graph.edges(host, keys=True) if network == FABRIC)}
    tiers = sorted({topology.switch(name)["tier"] for name in selected - chosen_leaves})
    return selected, hosts, (f"leaf groups 1-{chosen.groups} of {len(groups)} with every rail's leaves, "
                             f"all {' and '.join(tiers) or 'upper'} switches above them and their {len(hosts)} "
                             f"hosts: {len(selected)} of {len(switches)} switches, {len(hosts)} of "
                             f"{len(hosts_all)} hosts")


def lab_cables(spec: ClusterSpec, topology: Topology, devices: set[str]) -> list[Cable]:
    """The design's fabric cables with both ends among `devices`."""
    return [cable for cable in expected_cables(spec, topology)
            if cable.network == FABRIC and cable.lower.device in devices and cable.upper.device in devices]


def ifname(port: str) -> str:
    """The Linux interface for a platform port: its own name where Linux takes it (SONiC
    `Ethernet8`, Cumulus `swp3s1`), else with `/` as `_` (EOS `Ethernet3/5` -> `Ethernet3_5`)."""
    name = port.replace("/", "_")
    if not IFNAME.fullmatch(name):
        raise LabInputError(f"port {port!r} has no Linux interface name of at most 15 characters")
    return name


def build_plan(spec: ClusterSpec, topology: Topology, files: Mapping[str, str], chosen: Slice) -> LabPlan:
    """The lab of `chosen` from the design and its rendered tree `files` ({path: text})."""
    switches, hosts, description = slice_devices(topology, chosen)
    cables = lab_cables(spec, topology, switches | hosts)
    ports: dict[str, list[str]] = {}
    for cable in cables:
        for end in (cable.lower, cable.upper):
            ports.setdefault(end.device, []).append(end.port)
    addresses = allocate(spec, topology)
    views = {view.name: view for view in switch_views(spec, topology, addresses, None, sorted(switches))}
    lab_switches = []
    notes = []
    for name in sorted(switches):
        view = views[name]
        if view.os == "sonic":
            lab_switches.append(_sonic_switch(name, view.tier, files, ports.get(name, [])))
        else:
            lab_switches.append(_equivalent_switch(view, ports.get(name, [])))
    equivalents = sorted({switch.os for switch in lab_switches if switch.os != "sonic"})
    if equivalents:
        notes.append(f"{' and '.join(equivalents).upper()} switches run the FRR equivalent of their rendered "
                     "routing plan (same ASN, router id, /31s, neighbors, ECMP width, BFD); SONiC switches run "
                     "their rendered frr.conf unmodified")
    pools = {pool.name: pool for pool in spec.pools}
    lab_hosts = []
    for name in sorted(hosts):
        pool = pools[topology.host(name)["pool"]]
        lab_hosts.append(_host(name, pool.name, files, _rail_names(spec, topology, name)))
    lab_cable_list = tuple(LabCable(cable.lower.device, ifname(cable.lower.port), cable.upper.device,
                                    ifname(cable.upper.port)) for cable in cables)
    return LabPlan(spec.name, description, tuple(lab_switches), tuple(lab_hosts), lab_cable_list, tuple(notes))


def _rail_names(spec: ClusterSpec, topology: Topology, host: str) -> list[str]:
    pools = {pool.name: pool for pool in spec.pools}
    return fabric_interfaces(pools[topology.host(host)["pool"]])


def _file(files: Mapping[str, str], path: str, what: str) -> str:
    if path not in files:
        raise LabInputError(f"{path}: missing; the lab needs {what} (run `render` again into the --from folder)")
    return files[path]


def _sonic_switch(name: str, tier: str, files: Mapping[str, str], ports: list[str]) -> LabSwitch:
    path = f"switches/{name}/config_db.json"
    try:
        db = json.loads(_file(files, path, "the switch's SONiC config"))
        port_table: dict[str, dict[str, Any]] = db.get("PORT", {})
        keys = list(db.get("INTERFACE", {})) + list(db.get("LOOPBACK_INTERFACE", {}))
    except (ValueError, AttributeError, TypeError) as error:
        raise LabInputError(f"{path}: not a SONiC config_db ({error}); render it again") from None
    addresses: dict[str, str] = {}
    for key in keys:
        port, _, prefix = key.partition("|")
        if prefix:
            try:
                ipaddress.IPv4Interface(prefix)
            except ValueError:
                raise LabInputError(f"{path}: {key!r} is not an IPv4 interface address") from None
            addresses[port] = prefix
    interfaces = []
    for port in ports:
        entry = port_table.get(port)
        if not isinstance(entry, dict):  # SONiC creates no port that PORT lacks: a dead interface
            interfaces.append(Interface(ifname(port), port, None, 1500, up=False))
            continue
        try:
            mtu = int(entry.get("mtu", 9100))  # SONiC's default port MTU
        except (TypeError, ValueError):
            raise LabInputError(f"{path}: PORT|{port} mtu {entry.get('mtu')!r} is not a number") from None
        interfaces.append(Interface(ifname(port), port, addresses.get(port), mtu, entry.get("admin_status") == "up"))
    routed = f"switches/{name}/frr.conf"
    return LabSwitch(name, tier, "sonic", addresses.get("Loopback0"), tuple(interfaces),
                     _file(files, routed, "the switch's FRR config"),
                     f"{path} and {routed} (split-unified: FRR's integrated config)")


def _equivalent_switch(view: Any, ports: list[str]) -> LabSwitch:
    by_name = {port.name: port for port in view.ports}
    interfaces = tuple(Interface(ifname(port), port, by_name[port].address, by_name[port].mtu) for port in ports)
    dialect = "nvue.sh" if view.os == "nvue" else "eos.cfg"
    return LabSwitch(view.name, view.tier, view.os, f"{view.loopback}/32" if view.loopback else None, interfaces,
                     render("frr/bgpd.conf.j2", switch=view),
                     f"FRR equivalent of switches/{view.name}/{dialect}'s routing plan")


def _host(name: str, pool: str, files: Mapping[str, str], rails: list[str]) -> LabHost:
    path = f"hosts/{pool}/qos.sh"
    script = _file(files, path, "the pool's host script")
    lines = script.splitlines()
    starts = [index for index, line in enumerate(lines) if line.startswith(ROUTING_START)]
    ends = [index for index, line in enumerate(lines) if line.startswith(ROUTING_END)]
    if not starts or not ends or ends[-1] < starts[0]:
        raise LabInputError(f"{path}: no per-rail routing section ({ROUTING_START!r} ... {ROUTING_END!r}); "
                            "render it again")
    section = lines[starts[0]:ends[-1]]
    case = re.search(rf"^\s*{re.escape(name)}\) ADDRS=\(([^)]*)\); GWS=\(([^)]*)\)", script, re.MULTILINE)
    if case is None:
        raise LabInputError(f"{path}: host {name} has no ADDRS/GWS line; render it again")
    own = case.group(1).split()
    mtu = re.search(r'mtu (\d+) up', script)
    if len(own) != len(rails):
        raise LabInputError(f"{path}: host {name} has {len(own)} rail addresses for {len(rails)} rails")
    interfaces = tuple(Interface(ifname(rail), rail, address, int(mtu.group(1)) if mtu else 1500)
                       for rail, address in zip(rails, own, strict=True))
    bound = "\n".join(["set -euo pipefail", f"HOST={name}",
                       "RAILS=(" + " ".join(interface.name for interface in interfaces) + ")", *section, ""])
    return LabHost(name, pool, interfaces, bound)
