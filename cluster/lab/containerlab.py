"""`lab export`: the lab's fabric as a containerlab topology, for a fabric larger than one machine.

`topology_files(plan)` gives {relative path: text}: `<stack>.clab.yml` and, under `configs/<node>/`,
every file its nodes bind (or, for a plan containerlab cannot take, a LAB-INPUT finding for each
problem, all at once, and no files: `Exported`). `containerlab deploy -t <stack>.clab.yml` builds it
on one Linux host; clabernetes runs the same file across a Kubernetes cluster (its `clabverter` turns the file and the
configs it binds into a Topology resource and ConfigMaps).

The same devices, cables, addresses, MTUs and routing as `lab up` builds:

- switches: containerlab's `linux` kind with FRR's own image, `quay.io/frrouting/frr:8.4.4`, the
  FRR release the lab runs (Debian bookworm's frr 8.4.4). FRR publishes its releases since 8.4.2 on
  quay.io tagged `X.Y.Z`, and public topologies pull 8.4.0, 8.4.1, 8.4.2, 8.4.5 and 8.4.7 from
  there; 8.4.4 is not confirmed against quay.io's tag list, so `docker pull` it once before a first
  deploy (8.4.5 is the nearest known tag). The image has bash and iproute2.
  Each switch binds its frr.conf (what its rendered files translate to, as the plan's notes say:
  SONiC's own frr.conf, NVUE's and EOS's BGP lines in FRR's form), a `daemons` file
  starting zebra, bgpd and bfdd, and a `vtysh.conf` for FRR's integrated config. Its `exec`
  commands, which containerlab runs once the node's links exist, set zebra's lab-only setting
  (`no zebra nexthop kernel enable`, as `lab up` sets it), the loopback, and each interface's MTU and address;
- hosts: `linux` nodes with `nicolaka/netshoot:v0.13` (Alpine with bash, iproute2 and iputils'
  ping; plain Alpine has neither bash nor iproute2's policy routing and multipath routes). Each
  binds its routing script, the rendered per-rail routing of its pool's qos.sh with the rails
  bound, and its `exec` sets the rails' MTUs and runs the script;
- links: one per cable, endpoints named as the plan names them (`Ethernet0`, `swp1s0`, `rail0`:
  containerlab's linux kind takes any Linux name of at most 15 characters but `eth0`, its
  management interface), with the larger MTU of the two ends; each end then gets its own in exec.

Node names are the device names where containerlab and Kubernetes (clabernetes makes one
Deployment and Service per node) both take them, else mapped to lowercase letters, digits and `-`.
A fabric of many hosts on one machine may need the kernel's ARP table limits raised
(`net.ipv4.neigh.default.gc_thresh*`); they are machine-wide, so no node can set them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from cluster.findings import Finding
from cluster.lab.model import OOB_DHCP_NOTE, OOB_NOTE, Interface, LabHost, LabPlan, LabSwitch
from cluster.lab.rules import input_finding
from cluster.lab.runtime import DAEMONS, SWITCH_SYSCTLS, ZEBRA_CONF

FRR_IMAGE = "quay.io/frrouting/frr:8.4.4"
HOST_IMAGE = "nicolaka/netshoot:v0.13"
HOST_SCRIPT = "/etc/gpu-cluster/routing.sh"
#: zebra comes up from the image's init a moment after the container; exec waits for it this long.
FRR_WAIT_SECONDS = 60
CLAB_NODE_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9-._|]*")  # containerlab's schema, topology.nodes
KUBERNETES_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")  # a DNS label, as clabernetes needs
#: Words containerlab's short link form reads as link types, not nodes (links/link_brief.go).
LINK_TYPE_WORDS = frozenset({"host", "mgmt-net", "macvlan"})
MANAGEMENT_INTERFACE = "eth0"  # containerlab's linux kind keeps it for the management network


class _Flow(list[str]):
    """A YAML sequence written on one line (link endpoints)."""


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # list items indented under their key


def _represent_flow(dumper: yaml.SafeDumper, data: _Flow) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


_Dumper.add_representer(_Flow, _represent_flow)


@dataclass(frozen=True)
class Exported:
    """The containerlab files of a plan ({relative path: text}), or (files empty) every LAB-INPUT
    finding that kept them from being written."""

    files: dict[str, str] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()


def topology_files(plan: LabPlan) -> Exported:
    """The containerlab lab of `plan` (the topology and every bound file), or every reason
    containerlab could not take it."""
    names, findings = _naming(plan)
    findings += _management_findings(plan) + _cable_findings(plan)
    if findings:
        return Exported(findings=tuple(sorted(dict.fromkeys(findings), key=Finding.sort_key)))
    return Exported(_files(plan, names))


def _files(plan: LabPlan, names: Mapping[str, str]) -> dict[str, str]:
    files: dict[str, str] = {}
    nodes: dict[str, dict[str, Any]] = {}
    for switch in sorted(plan.switches, key=lambda switch: names[switch.name]):
        node = names[switch.name]
        folder = f"configs/{node}"
        files[f"{folder}/frr.conf"] = switch.frr_conf
        files[f"{folder}/daemons"] = daemons_file(switch)
        files[f"{folder}/vtysh.conf"] = "service integrated-vtysh-config\n"
        nodes[node] = _switch_node(switch, folder)
    for host in sorted(plan.hosts, key=lambda host: names[host.name]):
        node = names[host.name]
        folder = f"configs/{node}"
        files[f"{folder}/routing.sh"] = host.routing
        nodes[node] = _host_node(host, folder)
    topology: dict[str, Any] = {"nodes": nodes}
    links = _links(plan, names)
    if links:  # the schema wants at least one link where `links` is given
        topology["links"] = links
    document = {"name": _safe_name(plan.stack), "topology": topology}
    files[f"{plan.stack}.clab.yml"] = _header(plan) + yaml.dump(
        document, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=4096)
    return dict(sorted(files.items()))


def node_names(plan: LabPlan) -> dict[str, str]:
    """{device: containerlab node name}, one distinct name per device of the plan that has one
    (`topology_files` reports the others)."""
    return _naming(plan)[0]


def _naming(plan: LabPlan) -> tuple[dict[str, str], list[Finding]]:
    """The node names of the plan's devices, and a finding for the stack and each device no
    distinct containerlab name can be made of."""
    findings = []
    if _safe_name(plan.stack) is None:  # also the prefix of every container's name
        findings.append(input_finding("name", f"stack {plan.stack!r}: no containerlab topology name can be made "
                                      "of it", "name the stack with letters, digits and `-`"))
    names: dict[str, str] = {}
    taken: dict[str, str] = {}
    for device in sorted([switch.name for switch in plan.switches] + [host.name for host in plan.hosts]):
        name = _safe_name(device)
        if name is None:
            findings.append(input_finding(device, "no containerlab node name can be made of it",
                                          "rename it in the design with letters, digits and `-`"))
            continue
        if name in LINK_TYPE_WORDS:
            name = f"node-{name}"
        if name in taken:
            findings.append(input_finding(device, f"devices {taken[name]!r} and {device!r} both become containerlab "
                                          f"node {name!r}", "rename one of them in the design"))
            continue
        taken[name] = device
        names[device] = name
    return names, findings


def _management_findings(plan: LabPlan) -> list[Finding]:
    """A finding for each port of the plan on containerlab's management interface."""
    devices: list[LabSwitch | LabHost] = [*plan.switches, *plan.hosts]
    return [input_finding(device.name, f"port {_port(interface)} is containerlab's management interface on linux "
                          "nodes", "name the design's port otherwise (a pool's fabric_nics.interfaces): "
                          f"containerlab keeps {MANAGEMENT_INTERFACE} for its management network")
            for device in devices for interface in device.interfaces if interface.name == MANAGEMENT_INTERFACE]


def _port(interface: Interface) -> str:
    """The port as the platform names it, with its Linux name where that differs."""
    return interface.port if interface.port == interface.name else f"{interface.port} (Linux {interface.name})"


def _cable_findings(plan: LabPlan) -> list[Finding]:
    """A finding for each cable end that is no interface of its device in the plan."""
    devices: list[LabSwitch | LabHost] = [*plan.switches, *plan.hosts]
    interfaces = {(device.name, interface.name) for device in devices for interface in device.interfaces}
    return [input_finding(device, f"cable end {device}:{ifname} is no interface of {device} in the lab plan",
                          "build the plan again from one design")
            for cable in plan.cables for device, ifname in ((cable.a, cable.a_if), (cable.b, cable.b_if))
            if (device, ifname) not in interfaces]


def daemons_file(switch: LabSwitch) -> str:
    """FRR's /etc/frr/daemons for `switch`: the daemons the lab runs and the defaults profile its
    frr.conf names (`frr defaults datacenter`), which FRR takes from here, not from frr.conf."""
    profile = re.search(r"^frr defaults (\S+)", switch.frr_conf, re.MULTILINE)
    lines = [f"# FRR daemons of {switch.name}: {', '.join(DAEMONS)} (staticd starts in any case)",
             *(f"{daemon}=yes" for daemon in DAEMONS),
             "vtysh_enable=yes",
             # a larger netlink buffer keeps zebra in step when many ECMP routes change at once
             'zebra_options="-A 127.0.0.1 -s 90000000"',
             *(f'{daemon}_options="-A 127.0.0.1"' for daemon in (*DAEMONS, "staticd") if daemon != "zebra")]
    if profile:
        lines.append(f'frr_profile="{profile.group(1)}"')
    return "\n".join(lines) + "\n"


def _safe_name(device: str) -> str | None:
    if CLAB_NODE_NAME.fullmatch(device) and KUBERNETES_NAME.fullmatch(device):
        return device
    name = re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")
    return name or None


def _switch_node(switch: LabSwitch, folder: str) -> dict[str, Any]:
    # zebra's setting first: it then holds before any address, so before BGP installs a route
    commands = [_once_frr_answers(ZEBRA_CONF.strip())]
    if switch.loopback:
        commands.append(f"ip addr add {switch.loopback} dev lo")
    for interface in switch.interfaces:
        commands.extend(_interface_commands(interface, with_address=True))
    return {"kind": "linux", "image": FRR_IMAGE,
            "binds": [f"{folder}/frr.conf:/etc/frr/frr.conf", f"{folder}/daemons:/etc/frr/daemons",
                      f"{folder}/vtysh.conf:/etc/frr/vtysh.conf"],
            "sysctls": dict(SWITCH_SYSCTLS), "exec": commands}


def _host_node(host: LabHost, folder: str) -> dict[str, Any]:
    # addresses, rules and routes come from the routing script, as on a real node
    commands = [command for interface in host.interfaces
                for command in _interface_commands(interface, with_address=False)]
    commands.append(f"bash {HOST_SCRIPT}")
    commands += [f"ip {line}" for line in host.network.splitlines()]  # its netplan file's ports
    return {"kind": "linux", "image": HOST_IMAGE, "binds": [f"{folder}/routing.sh:{HOST_SCRIPT}:ro"],
            "exec": commands}


def _interface_commands(interface: Interface, with_address: bool) -> list[str]:
    commands = [f"ip link set {interface.name} mtu {interface.mtu}"]
    if with_address and interface.address:
        commands.append(f"ip addr add {interface.address} dev {interface.name}")
    if not interface.up:  # containerlab brings every link up; the design has this port down
        commands.append(f"ip link set {interface.name} down")
    return commands


def _once_frr_answers(command: str) -> str:
    """An exec command applying `command` in vtysh as soon as FRR answers (exit 1 if it never does).
    containerlab splits exec commands as a shell does, without running one: hence `bash -c`."""
    if any(quote in command for quote in "'\""):
        raise ValueError(f"vtysh command {command!r} must not contain quotes")
    script = (f'for attempt in $(seq {FRR_WAIT_SECONDS}); do vtysh -c "configure terminal" -c "{command}" '
              f'>/dev/null 2>&1 && exit 0; sleep 1; done; echo "FRR did not answer vtysh within {FRR_WAIT_SECONDS} s" '
              '>&2; exit 1')
    return f"bash -c '{script}'"


def _links(plan: LabPlan, names: Mapping[str, str]) -> list[dict[str, Any]]:
    devices: list[LabSwitch | LabHost] = [*plan.switches, *plan.hosts]
    interfaces = {(device.name, interface.name): interface for device in devices for interface in device.interfaces}
    rows = []
    for cable in plan.cables:
        ends = ((cable.a, cable.a_if), (cable.b, cable.b_if))
        mtus = [interfaces[(device, ifname)].mtu for device, ifname in ends]  # _cable_findings: all there
        rows.append((_Flow(f"{names[device]}:{ifname}" for device, ifname in ends), max(mtus)))
    return [{"endpoints": endpoints, "mtu": mtu} for endpoints, mtu in sorted(rows)]


def _header(plan: LabPlan) -> str:
    lines: Sequence[str] = [
        f"# containerlab topology of {plan.stack}: {plan.slice}.",
        f"# Deploy: containerlab deploy -t {plan.stack}.clab.yml (files under configs/ are bound into the nodes).",
        *(f"# {note.rstrip('.')}." for note in plan.notes if note not in (OOB_NOTE, OOB_DHCP_NOTE)),
        *(["# The out-of-band network is not exported: containerlab's linux nodes keep eth0 for its own "
           "management network."] if plan.bridges else []),
    ]
    return "\n".join(lines) + "\n"
