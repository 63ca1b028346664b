"""What `lab up` builds for one design: switches, hosts and cables, with the rendered configs.

Cables and their port names come from the design (`cluster.verify.expected.expected_cables`, the
names cabling.csv and `verify` use); everything a device is configured with comes from the
rendered files, read as the device would read them:

- switches whose dialect translates its rendered files (`PLATFORM.translate`, e.g. SONiC's
  config_db.json and frr.conf): the ports, addresses and FRR configuration they say the switch runs;
- the others: the FRR equivalent of the same routing plan (same ASN, router id, /31s, neighbors,
  multipath width and BFD timers, from the same switch view the dialect's renderer used),
  because their OS does not run here; the lab summary says so;
- hosts: the per-rail routing section of the rendered `hosts/<pool>/qos.sh` run as it is, with
  the rail netdevs bound to the lab's interfaces (the RDMA discovery and NIC QoS parts need
  ConnectX hardware), and the MTU the script sets;
- the out-of-band network, where the design has one: each lab switch's management port with the
  address, gateway and VRF its rendered files set, cabled to the oob switches that serve it, which
  run the design's layer-2 plan (one bridged VLAN; each link of a bundle to another oob switch a
  bridge port, spanning tree on) with their own management address on the bridge (`LabBridge`);
  each lab host's BMC, a device of its own (`<host>-bmc`, a name no design device can have: theirs
  end in a number), cabled as cabling.csv's row for the host's `bmc` port says (`LabBmc`); and,
  where the design sets `management_plane.dhcp_server`, that server (`oob-dhcp`) on the root oob
  switch's bridge with the rendered dhcp/kea-dhcp4-oob.conf (`OobDhcp`).

`build_plan` examines every file it needs and returns either the plan or a LAB-INPUT finding for
each file (or port) it cannot use, all at once (`Planned`).

A design larger than the machine is built as a slice: the first leaf groups, every switch above
them and the hosts below them (`Slice`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from ipaddress import ip_network
from typing import Any

from cluster.addressing import Addresses, allocate
from cluster.dialects import Management, Running, RunningPort, platform
from cluster.findings import Finding
from cluster.intent.oob import oob_l2
from cluster.intent.switch import switch_views
from cluster.lab import netplan
from cluster.lab.rules import input_finding
from cluster.naming import HostPort, host_interfaces
from cluster.render.engine import render
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import FABRIC, Topology
from cluster.verify.expected import Cable, expected_cables

#: The rendered qos.sh's per-rail routing section starts at this comment (host/_routing.j2) and
#: ends where the QoS part begins (host/qos.sh.j2): routing comes first on a host.
ROUTING_START = "# --- Per-rail source routing"
ROUTING_END = "# --- QoS runs in a subshell"
Translate = Callable[[str, Any], Running | None]
#: The networks a lab builds: the GPU fabric, and the storage and management networks hosts are on.
STORAGE, MANAGEMENT = "storage", "management"
HOST_NETWORKS = (STORAGE, MANAGEMENT)
LAB_NETWORKS = (FABRIC, *HOST_NETWORKS)
OOB = "oob"  # the out-of-band network: built beside them, from the switches' management ports up
OOB_NOTE = ("out-of-band switches run the design's layer-2 plan (one bridged VLAN, spanning tree; each bundle's links "
            "as bridge ports), not their rendered files; each switch's management port runs its rendered address "
            "and gateway, its VRF as a routing table of its own; each host's BMC is a namespace of its own cabled "
            "as cabling.csv says")
#: A host's BMC in the lab: a device of its own, named after its host. Every design device's name
#: ends in a number (`h200-node-001`, `leaf-001-r0`, `oob-spine-001`), so these never clash.
BMC_SUFFIX = "-bmc"
#: The oob segment's DHCP server in the lab (`management_plane.dhcp_server`): no design device either.
OOB_DHCP = "oob-dhcp"
OOB_DHCP_CONFIG = "dhcp/kea-dhcp4-oob.conf"


def bmc_name(host: str) -> str:
    """The lab device of `host`'s BMC."""
    return host + BMC_SUFFIX
IFNAME = re.compile(r"[A-Za-z0-9_.-]{1,15}")  # what Linux takes as an interface name
RENDER_AGAIN = "render the stack again into the --from folder (`render STACK --out DIR`)"
# A tree rendered from the design in the same run (no --from): a fault of the renderer, not of a file.
RENDERER_FAULT = ("the tree was rendered from the design in this run, so this is a fault of gpu-cluster's "
                  "renderer: report it with the stack file (`render STACK --out DIR` writes the same tree)")


@dataclass(frozen=True)
class Interface:
    name: str  # the Linux interface in the device's namespace
    port: str  # the port as the platform (and cabling.csv, verify) names it
    address: str | None  # a.b.c.d/len as the rendered config sets it
    mtu: int
    up: bool = True
    network: str = FABRIC  # the network of the cable it ends


@dataclass(frozen=True)
class LabSwitch:
    name: str
    tier: str
    os: str
    loopback: str | None  # a.b.c.d/32
    interfaces: tuple[Interface, ...]
    frr_conf: str
    source: str  # where frr_conf and the addresses come from
    model: str = ""  # the switch model, which its LLDP system description names as the switch's OS does
    relay_server: str = ""  # its DHCP relay's server (none: it relays nothing)
    relay_down: tuple[str, ...] = ()  # the interfaces whose requests it relays
    relay_up: tuple[str, ...] = ()  # the interfaces it reaches the server by
    management: Management | None = None  # its management port as its files set it, where the lab cables it


@dataclass(frozen=True)
class LabBridge:
    """An oob switch as the design's layer-2 plan makes it: every port of the lab cabled to it
    untagged in one bridged VLAN, its own management address on the bridge. The design bundles its
    links to another oob switch with LACP; the lab's kernel may have no bonding, so each link is a
    bridge port of its own and spanning tree (the design's, with its bridge priorities) leaves one
    link of each loop forwarding."""

    name: str
    address: str | None  # a.b.c.d/len
    ports: tuple[str, ...]  # its access ports' Linux interfaces (switch management ports in the lab)
    links: tuple[str, ...]  # its links to other oob switches in the lab
    priority: int  # its spanning-tree bridge priority


@dataclass(frozen=True)
class LabBmc:
    """A host's BMC: a namespace of its own with one port (as cabling.csv names it) on the oob
    network and no daemon; `lab check` has it ask the oob DHCP server for a lease."""

    name: str  # bmc_name(host)
    host: str
    interface: str  # its port's Linux interface


@dataclass(frozen=True)
class OobDhcp:
    """The oob segment's DHCP server: `management_plane.dhcp_server` with the segment's prefix on a
    port into the root oob switch's bridge, running the rendered Kea configuration."""

    address: str  # a.b.c.d/len
    bridge: str  # the oob switch whose bridge it is attached to
    config: str  # the rendered dhcp/kea-dhcp4-oob.conf


@dataclass(frozen=True)
class LabHost:
    name: str
    pool: str
    interfaces: tuple[Interface, ...]  # the rails in rail order, then its management and storage ports
    routing: str  # a bash script: the rendered routing section with the rails bound
    network: str = ""  # a bash script: the `ip` equivalent of its rendered netplan file
    nccl_socket: str = ""  # the pool's rendered nccl-socket.sh

    @property
    def rails(self) -> tuple[Interface, ...]:
        return tuple(interface for interface in self.interfaces if interface.network == FABRIC)


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
    dhcp_host: str = ""  # the host that runs the DHCP server (none: the design plans no DHCP in this lab)
    dhcp_config: str = ""  # the rendered dhcp/kea-dhcp4.conf it runs
    bridges: tuple[LabBridge, ...] = ()  # the oob switches
    oob_cables: tuple[LabCable, ...] = ()  # the oob network's cables: management ports, BMCs, links between oob switches
    bmcs: tuple[LabBmc, ...] = ()  # the lab hosts' BMCs, where the oob network serves them
    oob_dhcp: OobDhcp | None = None  # the oob segment's DHCP server, where the design sets one

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
            switches=tuple(LabSwitch(**{**row, "interfaces": interfaces(row["interfaces"]),
                                        "relay_down": tuple(row.get("relay_down", ())),
                                        "relay_up": tuple(row.get("relay_up", ())),
                                        "management": Management(**row["management"]) if row.get("management")
                                        else None})
                           for row in data["switches"]),
            hosts=tuple(LabHost(**{**row, "interfaces": interfaces(row["interfaces"])}) for row in data["hosts"]),
            cables=tuple(LabCable(**row) for row in data["cables"]),
            notes=tuple(data.get("notes", ())),
            dhcp_host=data.get("dhcp_host", ""), dhcp_config=data.get("dhcp_config", ""),
            bridges=tuple(LabBridge(**{**row, "ports": tuple(row["ports"]), "links": tuple(row["links"])})
                          for row in data.get("bridges", ())),
            oob_cables=tuple(LabCable(**row) for row in data.get("oob_cables", ())),
            bmcs=tuple(LabBmc(**row) for row in data.get("bmcs", ())),
            oob_dhcp=OobDhcp(**data["oob_dhcp"]) if data.get("oob_dhcp") else None,
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
    """(switches, hosts, a sentence saying what they represent) of a slice: its fabric switches,
    and the storage and management switches its hosts are cabled to with every one above them."""
    switches, hosts, description = _fabric_slice(topology, chosen)
    networks = _above(topology, {peer for host in hosts for peer, network, _ in topology.cables(host)
                                 if network in HOST_NETWORKS}, HOST_NETWORKS)
    if not networks - switches:
        return switches, hosts, description
    return switches | networks, hosts, (f"{description}, and the {len(networks - switches)} storage and "
                                        "management switches that serve them")


def _above(topology: Topology, start: set[str], networks: tuple[str, ...]) -> set[str]:
    """`start` and every switch above one of them on `networks`."""
    selected = set(start)
    frontier = list(start)
    while frontier:
        node = frontier.pop()
        for peer, network, data in topology.cables(node):
            if network in networks and data["lower"] == node and peer not in selected and peer in topology.switch_nodes:
                selected.add(peer)
                frontier.append(peer)
    return selected


def _fabric_slice(topology: Topology, chosen: Slice) -> tuple[set[str], set[str], str]:
    """(fabric switches, hosts, a sentence saying what they represent) of a slice."""
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
    selected = _above(topology, chosen_leaves, (FABRIC,)) & switches
    hosts = {host for host in hosts_all
             if all(peer in chosen_leaves for peer, network, _ in topology.cables(host) if network == FABRIC)}
    tiers = sorted({topology.switch(name)["tier"] for name in selected - chosen_leaves})
    return selected, hosts, (f"leaf groups 1-{chosen.groups} of {len(groups)} with every rail's leaves, "
                             f"all {' and '.join(tiers) or 'upper'} switches above them and their {len(hosts)} "
                             f"hosts: {len(selected)} of {len(switches)} switches, {len(hosts)} of "
                             f"{len(hosts_all)} hosts")


def lab_cables(spec: ClusterSpec, topology: Topology, devices: set[str],
               networks: tuple[str, ...] = LAB_NETWORKS) -> list[Cable]:
    """The design's cables of the lab's networks (or `networks`) with both ends among `devices`."""
    return [cable for cable in expected_cables(spec, topology, devices)
            if cable.network in networks and cable.lower.device in devices and cable.upper.device in devices]


def oob_switches(topology: Topology, switches: set[str]) -> set[str]:
    """The oob switches that take the management port (a host's: its BMC) of one of `switches`, and every oob switch
    above them."""
    serving = {peer for name in switches for peer, network, data in topology.cables(name)
               if network == OOB and data["lower"] == name and peer in topology.switch_nodes}
    return _above(topology, serving, (OOB,))


def ifname(port: str) -> str:
    """The Linux interface for a platform port: its own name where Linux takes it (SONiC
    `Ethernet8`, Cumulus `swp3s1`), else with `/` as `_` (EOS `Ethernet3/5` -> `Ethernet3_5`);
    `IFNAME` says whether Linux takes the result."""
    return port.replace("/", "_")


@dataclass(frozen=True)
class Planned:
    """A lab plan, or (plan None) every LAB-INPUT finding that kept it from being built."""

    plan: LabPlan | None
    findings: tuple[Finding, ...] = ()


@dataclass
class _Tree:
    """The rendered tree as the lab reads it, gathering a LAB-INPUT finding for each file it cannot use."""

    files: Mapping[str, str]
    unreadable: Mapping[str, str]  # {path: why} of files that exist but could not be read
    again: str  # the fix of a file the lab cannot use: RENDER_AGAIN, or RENDERER_FAULT for a fresh render
    findings: list[Finding] = field(default_factory=list)

    def text(self, path: str, what: str) -> str | None:
        """The file at `path` (None, with a finding, when it is missing or unreadable)."""
        if path in self.unreadable:
            self.problem(path, f"cannot be read ({self.unreadable[path]}); the lab needs {what}", self.again)
            return None
        if path not in self.files:
            self.problem(path, f"missing; the lab needs {what}", self.again)
            return None
        return self.files[path]

    def problem(self, path: str, message: str, hint: str) -> None:
        """Record a LAB-INPUT finding at `path` (a file of the tree, or a device)."""
        self.findings.append(input_finding(path, message, hint))

    def result(self) -> tuple[Finding, ...]:
        """Every finding once (hosts of one pool share a script and its problems), sorted."""
        return tuple(sorted(dict.fromkeys(self.findings), key=Finding.sort_key))


def build_plan(spec: ClusterSpec, topology: Topology, files: Mapping[str, str], chosen: Slice,
               unreadable: Mapping[str, str] | None = None, rendered_now: bool = False) -> Planned:
    """The lab of `chosen` from the design and its rendered tree `files` ({path: text}; `unreadable`:
    {path: why} of files that could not be read; `rendered_now`: the tree was rendered in this run,
    not read from --from), or every LAB-INPUT finding of that tree: each file is examined, so one
    run names every file (and port) to fix."""
    tree = _Tree(files, unreadable or {}, RENDERER_FAULT if rendered_now else RENDER_AGAIN)
    switches, hosts, description = slice_devices(topology, chosen)
    cables = lab_cables(spec, topology, switches | hosts)
    ports: dict[str, list[str]] = {}
    for cable in cables:
        for end in (cable.lower, cable.upper):
            ports.setdefault(end.device, []).append(end.port)
    netdevs = {name: _netdevs(spec, topology, name) for name in sorted(hosts)}
    _check_port_names(tree, ports, {name: [port for names in nets.values() for port in names]
                                    for name, nets in netdevs.items()})
    addresses = allocate(spec, topology)
    lab_switches = _switches(spec, topology, addresses, sorted(switches), tree, ports)
    cabled = {(end.device, cable.network) for cable in cables for end in (cable.lower, cable.upper)}
    lab_hosts = [_host(name, topology.host(name)["pool"], tree, netdevs[name], cabled) for name in sorted(hosts)]
    # without findings every device was built
    built_switches = tuple(switch for switch in lab_switches if switch is not None)
    built_hosts = tuple(host for host in lab_hosts if host is not None)
    wired = _wired(tree, spec, topology, switches | hosts, ports, netdevs, LAB_NETWORKS)
    oob = oob_switches(topology, switches | hosts)  # the switches' management ports and the hosts' BMCs
    oob_ports: dict[str, list[str]] = {}
    for cable in lab_cables(spec, topology, switches | hosts | oob, (OOB,)):
        for end in (cable.lower, cable.upper):
            oob_ports.setdefault(end.device, []).append(end.port)
    _check_port_names(tree, oob_ports, {})
    oob_wired = _wired(tree, spec, topology, switches | hosts | oob, oob_ports, {}, (OOB,)) if oob else []
    if tree.findings or wired is None or oob_wired is None:
        return Planned(None, tree.result())
    lab_cable_list = tuple(LabCable(a, ifname(a_port), b, ifname(b_port)) for a, a_port, b, b_port in wired)
    bmcs = tuple(LabBmc(bmc_name(a), a, ifname(a_port)) for a, a_port, _, _ in oob_wired if a in hosts)
    oob_cables = tuple(LabCable(bmc_name(a) if a in hosts else a, ifname(a_port), b, ifname(b_port))
                       for a, a_port, b, b_port in oob_wired)
    dhcp_host, dhcp_config = _dhcp_server(spec, tree, built_hosts)
    if tree.findings:
        return Planned(None, tree.result())
    managed = {cable.a for cable in oob_cables if cable.a in switches}
    built_switches = tuple(switch if switch.name in managed else replace(switch, management=None)
                           for switch in built_switches)
    bridges = _bridges(spec, topology, addresses, sorted(oob), oob_cables)
    oob_dhcp = _oob_dhcp(spec, tree, bridges)
    if tree.findings:
        return Planned(None, tree.result())
    notes = _notes(built_switches, bridges) + ((OOB_DHCP_NOTE,) if oob_dhcp else ())
    return Planned(LabPlan(spec.name, description + _oob_description(bridges, bmcs), built_switches, built_hosts,
                           lab_cable_list, notes, dhcp_host, dhcp_config, bridges, oob_cables, bmcs, oob_dhcp))


OOB_DHCP_NOTE = (f"the oob segment's DHCP server (management_plane.dhcp_server) runs the rendered {OOB_DHCP_CONFIG} "
                 "on the root oob switch's bridge (leases in memory); `lab check` has each BMC ask it for a lease")


def _oob_description(bridges: tuple[LabBridge, ...], bmcs: tuple[LabBmc, ...] = ()) -> str:
    if not bridges:
        return ""
    held = f" and their hosts' {len(bmcs)} BMC{'s' if len(bmcs) != 1 else ''}" if bmcs else ""
    return (f"; their management ports{held} on {len(bridges)} out-of-band "
            f"switch{'es' if len(bridges) != 1 else ''}")


def _oob_dhcp(spec: ClusterSpec, tree: _Tree, bridges: tuple[LabBridge, ...]) -> OobDhcp | None:
    """The oob segment's DHCP server where the design sets `management_plane.dhcp_server`: its
    address with the segment's prefix, on the root oob switch's bridge (the lowest bridge priority,
    then name: the spanning tree's root), running the rendered Kea configuration."""
    server = spec.management_plane.dhcp_server
    if server is None or not bridges:
        return None
    text = tree.text(OOB_DHCP_CONFIG, "the oob segment's DHCP server configuration, which the lab runs")
    if text is None:
        return None
    try:
        config = json.loads(text)
    except ValueError as error:
        tree.problem(OOB_DHCP_CONFIG, f"not a Kea configuration ({error})", tree.again)
        return None
    if not isinstance(config, dict) or not isinstance(config.get("Dhcp4"), dict):
        tree.problem(OOB_DHCP_CONFIG, "not a Kea configuration (no Dhcp4 object)", tree.again)
        return None
    root = min(bridges, key=lambda bridge: (bridge.priority, bridge.name))
    prefix = ip_network(spec.addressing.oob).prefixlen
    return OobDhcp(f"{server}/{prefix}", root.name, text)


def _bridges(spec: ClusterSpec, topology: Topology, addresses: Addresses, names: list[str],
             cables: tuple[LabCable, ...]) -> tuple[LabBridge, ...]:
    """Each oob switch of `names` as the design's layer-2 plan makes it, with the ports and links to
    other oob switches (its bundles' members) the lab cables."""
    if not names:
        return ()
    cabled = {(device, port) for cable in cables for device, port in ((cable.a, cable.a_if), (cable.b, cable.b_if))}
    bridges = []
    for view in switch_views(spec, topology, addresses, None, names):
        plan = oob_l2(view)
        assert plan is not None, view.name  # an oob switch
        members = tuple(port for bundle in plan.bundles for port in bundle.members)
        bridges.append(LabBridge(view.name, addresses.management_address(view.name),
                                 _cabled(view.name, plan.access, cabled), _cabled(view.name, members, cabled),
                                 plan.bridge_priority))
    return tuple(bridges)


def _cabled(device: str, ports: tuple[str, ...], cabled: set[tuple[str, str]]) -> tuple[str, ...]:
    """The Linux interfaces of `ports` of `device` that a cable of the lab ends on."""
    return tuple(ifname(port) for port in ports if (device, ifname(port)) in cabled)


DHCP_CONFIG = "dhcp/kea-dhcp4.conf"


def _dhcp_server(spec: ClusterSpec, tree: _Tree, hosts: tuple[LabHost, ...]) -> tuple[str, str]:
    """(the lab host that runs the DHCP server, the rendered Kea config it runs): the host whose
    management port holds `provisioning.dhcp_server` as its netplan file sets it; none where the
    design plans no DHCP or its server is outside the lab (a slice)."""
    if spec.provisioning is None:
        return "", ""
    server = str(spec.provisioning.dhcp_server)
    holder = next((host.name for host in hosts for interface in host.interfaces
                   if interface.network == MANAGEMENT and (interface.address or "").split("/")[0] == server), "")
    if not holder:
        return "", ""
    text = tree.text(DHCP_CONFIG, "the DHCP server's configuration, which the lab runs")
    return (holder, text) if text is not None else ("", "")


CABLING = "cabling.csv"
CABLING_COLUMNS = ("cable", "network", "a_device", "a_port", "b_device", "b_name")


def _wired(tree: _Tree, spec: ClusterSpec, topology: Topology, devices: set[str], ports: Mapping[str, list[str]],
           netdevs: Mapping[str, dict[str, list[str]]],
           networks: tuple[str, ...]) -> list[tuple[str, str, str, str]] | None:
    """The lab's cables as the rendered cabling plan (the file a technician follows) lays them:
    (a device, its port, b device, its port) of every row of `networks` with both ends in
    the lab, a switch port as the switch names it, a host's plan port (the NIC label a technician
    reads: `gpu-nic3`, `gpu-nic1p2`, `stor-nic0`) as its netdev, the one name cabling.csv's a_name,
    the switches' descriptions and netnames.sh give it (`rail3`, `stor0`). A row naming a
    port the design does not give that device, or a port twice, is a LAB-INPUT finding (None: no
    plan to read). Crossed rows are wired as written, so `lab check` shows them."""
    text = tree.text(CABLING, "the cabling plan the lab wires its veths from")
    if text is None:
        return None
    reader = csv.DictReader(io.StringIO(text))
    missing = [column for column in CABLING_COLUMNS if column not in (reader.fieldnames or ())]
    if missing:
        tree.problem(CABLING, f"no cabling plan (columns {', '.join(missing)} missing)", tree.again)
        return None
    pools = {pool.name: pool for pool in spec.pools}
    wired: list[tuple[str, str, str, str]] = []
    used: dict[tuple[str, str], str] = {}
    for row in reader:
        a, b = row["a_device"], row["b_device"]
        if row["network"] not in networks or a not in devices or b not in devices:
            continue
        where = f"{CABLING} row {row['cable']}"
        if a in netdevs:
            pool = pools[topology.host(a)["pool"]]
            a_port = _plan_ports(pool, row["network"], netdevs[a].get(row["network"], [])).get(row["a_port"], "")
            known = bool(a_port)
        else:
            a_port = row.get("a_name") or row["a_port"]
            known = a_port in ports.get(a, ())
        ends = ((a, a_port, known, row["a_port"]), (b, row["b_name"], row["b_name"] in ports.get(b, ()), row["b_name"]))
        for device, port, exists, written in ends:
            if not exists:
                tree.problem(CABLING, f"{where}: {device} has no {row['network']} port {written!r} in the design",
                             f"give the row a port of {device} the design cables, or {tree.again}")
            elif (device, port) in used:
                tree.problem(CABLING, f"{where}: {device} {port} is cabled twice (also row {used[(device, port)]})",
                             f"one cable per port: correct one of the two rows, or {tree.again}")
            used.setdefault((device, port), row["cable"])
        wired.append((a, a_port, b, row["b_name"]))
    return wired


def _plan_ports(pool: PoolSpec, network: str, names: list[str]) -> dict[str, str]:
    """A host's plan ports on `network` as cabling.csv's a_port names them (`gpu-nic3`, `gpu-nic1p2`,
    `mgmt-nic0`) -> their netdevs `names` (by position, as cluster.naming.host_port_names gives a_name)."""
    per_nic = pool.nics(network).ports_per_nic
    return {str(HostPort(network, position // per_nic, position % per_nic, per_nic)): name
            for position, name in enumerate(names)}


def _check_port_names(tree: _Tree, ports: Mapping[str, list[str]], netdevs: Mapping[str, list[str]]) -> None:
    """A finding at each device for each of its ports that Linux cannot name."""
    for device in sorted(set(ports) | set(netdevs)):
        for port in dict.fromkeys([*ports.get(device, ()), *netdevs.get(device, ())]):
            if not IFNAME.fullmatch(ifname(port)):
                tree.problem(device, f"port {port!r} has no Linux interface name of at most 15 characters",
                             "name the port with at most 15 letters, digits, `_`, `.` or `-` (a pool's "
                             "fabric_nics.interfaces, or the switch model's port names)")


def _switches(spec: ClusterSpec, topology: Topology, addresses: Addresses, names: list[str], tree: _Tree,
              ports: Mapping[str, list[str]]) -> list[LabSwitch | None]:
    """Each switch of `names`: as its dialect translates its rendered files, else the FRR equivalent of its plan."""
    views = {view.name: view for view in switch_views(spec, topology, addresses, None, names)}
    switches = []
    for name in names:
        translate = platform(views[name].os).translate
        switches.append(_translated(views[name], tree, ports.get(name, []), translate) if translate is not None
                        else _equivalent_switch(views[name], ports.get(name, [])))
    return switches


def _notes(switches: tuple[LabSwitch, ...], bridges: tuple[LabBridge, ...]) -> tuple[str, ...]:
    """What the switches of each OS run: their rendered files as the lab reads them, or the FRR
    equivalent of their routing plan where no translation exists; what the oob switches run."""
    notes = []
    for os in sorted({switch.os for switch in switches}):
        first = next(switch for switch in switches if switch.os == os)
        title = platform(os).title
        if platform(os).translate is None:
            notes.append(f"{title} switches run the FRR equivalent of their rendered routing plan (same ASN, "
                         "router id, /31s, neighbors, ECMP width, BFD)")
        else:
            notes.append(f"{title} switches run " + first.source.replace(f"/{first.name}/", "/<switch>/"))
    if bridges:
        notes.append(OOB_NOTE)
    return tuple(notes)


def _netdevs(spec: ClusterSpec, topology: Topology, host: str) -> dict[str, list[str]]:
    """A host's netdevs per network: its rails, and its storage and management ports."""
    pool = next(pool for pool in spec.pools if pool.name == topology.host(host)["pool"])
    return {network: host_interfaces(pool, network) for network in LAB_NETWORKS}


def _translated(view: Any, tree: _Tree, ports: list[str], translate: Translate) -> LabSwitch | None:
    """A switch whose OS's rendered files say what it runs: as they say it."""
    running = translate(view.name, tree)
    if running is None:
        return None
    dead = RunningPort(None, 1500, up=False)  # a port the files do not create
    interfaces = tuple(Interface(ifname(port), port, (found := running.ports.get(port, dead)).address, found.mtu, found.up)
                       for port in ports)
    relay = running.relay
    return LabSwitch(view.name, view.tier, view.os, running.loopback, interfaces, running.frr_conf, running.source,
                     view.model, relay.server if relay else "",
                     tuple(ifname(port) for port in relay.downstream) if relay else (),
                     tuple(ifname(port) for port in relay.upstream) if relay else (), running.management)


def _equivalent_switch(view: Any, ports: list[str]) -> LabSwitch:
    by_name = {port.name: port for port in view.ports}
    interfaces = tuple(Interface(ifname(port), port, by_name[port].address, by_name[port].mtu) for port in ports)
    dialect = platform(view.os).config_file
    return LabSwitch(view.name, view.tier, view.os, f"{view.loopback}/32" if view.loopback else None, interfaces,
                     render("frr/bgpd.conf.j2", switch=view),
                     f"FRR equivalent of switches/{view.name}/{dialect}'s routing plan", view.model)


def _host(name: str, pool: str, tree: _Tree, netdevs: dict[str, list[str]],
          cabled: set[tuple[str, str]]) -> LabHost | None:
    """A host as its pool's qos.sh routes its rails and its netplan file configures its storage and
    management ports (those cabled in this lab), with its pool's nccl-socket.sh."""
    rails = netdevs[FABRIC]
    path = f"hosts/{pool}/qos.sh"
    script = tree.text(path, "the pool's host script")
    if script is None:
        return None
    section = _routing_section(tree, path, script)
    own = _rail_addresses(tree, path, script, name, rails)
    networks = [network for network in HOST_NETWORKS if (name, network) in cabled]
    ported = netplan.translate(f"hosts/{pool}/netplan/{name}.yaml", tree,
                               [netdev for network in networks for netdev in netdevs[network]]) if networks else None
    nccl = tree.text(f"hosts/{pool}/nccl-socket.sh", "the script that finds NCCL's socket interface") \
        if MANAGEMENT in networks else ""
    if section is None or own is None or (networks and ported is None) or nccl is None:
        return None
    mtu = re.search(r'mtu (\d+) up', script)
    interfaces = [Interface(ifname(rail), rail, address, int(mtu.group(1)) if mtu else 1500)
                  for rail, address in zip(rails, own, strict=True)]
    for network in networks:
        assert ported is not None
        interfaces += [Interface(ifname(netdev), netdev, *ported.ports.get(netdev, (None, netplan.DEFAULT_MTU)),
                                 network=network) for netdev in netdevs[network]]
    bound = "\n".join(["set -euo pipefail", f"HOST={name}",
                       "RAILS=(" + " ".join(ifname(rail) for rail in rails) + ")", *section, ""])
    return LabHost(name, pool, tuple(interfaces), bound, "\n".join(ported.commands) + "\n" if ported else "", nccl)


def _routing_section(tree: _Tree, path: str, script: str) -> list[str] | None:
    """The lines of the script's per-rail routing section (None: it has none)."""
    lines = script.splitlines()
    starts = [index for index, line in enumerate(lines) if line.startswith(ROUTING_START)]
    ends = [index for index, line in enumerate(lines) if line.startswith(ROUTING_END)]
    if not starts or not ends or ends[-1] < starts[0]:
        tree.problem(path, f"no per-rail routing section ({ROUTING_START!r} ... {ROUTING_END!r})", tree.again)
        return None
    return lines[starts[0]:ends[-1]]


def _rail_addresses(tree: _Tree, path: str, script: str, host: str, rails: list[str]) -> list[str] | None:
    """The host's rail addresses, from its `HOST) ADDRS=(...); GWS=(...)` line, one per rail."""
    case = re.search(rf"^\s*{re.escape(host)}\) ADDRS=\(([^)]*)\); GWS=\(([^)]*)\)", script, re.MULTILINE)
    if case is None:
        tree.problem(path, f"host {host} has no ADDRS/GWS line", tree.again)
        return None
    own = case.group(1).split()
    if len(own) != len(rails):
        tree.problem(path, f"host {host} has {len(own)} rail addresses for {len(rails)} rails", tree.again)
        return None
    return own
