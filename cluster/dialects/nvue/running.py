"""What a Cumulus Linux switch runs, read from its rendered nvue.sh as NVUE applies it: every
`nv set` line is either translated into what the switch's Linux, FRR and DHCP relay run (interface
addresses and MTUs, the BGP underlay with its prefix lists, route limits, graceful restart and BFD
timers, `service dhcp-relay`'s server, upstream and downstream ports, the eth0 management port's
address, gateway and VRF) or one the lab knowingly leaves out (QoS, which needs the ASIC, and the
rest of the management plane: system, the other services, users). Any other line is refused, so an
edit the translation does not understand never passes silently.

Sources for what NVUE's defaults are, where the script leaves a setting out: Cumulus Linux 5.x
user guide, *Switch Port Attributes* (a swp port's MTU is 9216 unless set) and *Upgrading BGP*/
*Basic BGP Configuration* (NVUE enables the IPv4 unicast address family for every neighbor; NVUE
runs FRR with its datacenter defaults: 3 s keepalive, 9 s hold time).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from cluster.dialects import Management, Relay, RenderedFiles, Running, RunningPort
from cluster.dialects.underlay import PrefixRule, Underlay, frr_conf, is_address, is_interface

DEFAULT_MTU = 9216  # a swp port's MTU when nvue.sh sets none (Cumulus Linux 5.x, Switch Port Attributes)
BFD_DEFAULTS = {"detect-multiplier": 3, "min-rx-interval": 300, "min-tx-interval": 300}  # NVUE's, when unset
SCRIPT_LINES = ("set -euo pipefail", "nv config apply -y")
MANAGEMENT_PORT = "eth0"  # a Cumulus switch's out-of-band management port
_PLAIN = re.compile(r"""[^'"\\\s]+(?: [^'"\\\s]+)*""")  # words that shlex.split leaves as they are
# `nv set` paths the lab leaves out, with why (docs/guides/lab.md lists them): QoS needs the switch ASIC;
# the management plane's system settings, services, users and eth0's other settings are not part of a
# network the lab checks (eth0's address, gateway and VRF are: read before these)
NOT_RUN = (("qos",), ("system",), ("service",), ("interface", "eth0"))
NOT_RUN_ON_PORTS = ("description", "qos")  # per port: a label, and the port's QoS (watchdog)
LINK_NOT_RUN = ("speed", "breakout", "auto-negotiate", "fec")  # a veth has no speed, lanes or FEC


@dataclass
class _Read:
    """What the script sets, as it is read."""

    addresses: dict[str, str] = field(default_factory=dict)
    mtus: dict[str, int] = field(default_factory=dict)
    underlay: Underlay = field(default_factory=Underlay)
    bfd: dict[str, dict[str, str]] = field(default_factory=dict)  # neighbor -> its `bfd` settings
    relay_servers: dict[str, str] = field(default_factory=dict)  # server group -> its server
    relay_up: dict[str, list[str]] = field(default_factory=dict)  # server group -> its upstream ports
    relay_down: dict[str, str] = field(default_factory=dict)  # downstream port -> its server group
    management: dict[str, str] = field(default_factory=dict)  # eth0's address, gateway and vrf


def translate(name: str, tree: RenderedFiles) -> Running | None:
    """The switch `name` as NVUE applies its rendered nvue.sh (None: it cannot say; reported)."""
    path = f"switches/{name}/nvue.sh"
    text = tree.text(path, "the switch's NVUE script")
    if text is None:
        return None
    read = _Read()
    ok = True
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if not stripped or stripped in SCRIPT_LINES:
            continue
        try:
            # shlex.split in posix mode splits a line of no quote, backslash or whitespace but
            # spaces at its spaces: the fast path for the lines the renderer writes (22 s of
            # shlex at 8,192 GPUs)
            words = stripped.split(" ") if _PLAIN.fullmatch(stripped) else shlex.split(stripped)
        except ValueError as error:
            tree.problem(path, f"line {number}: {stripped!r} is not one shell command ({error})", tree.again)
            ok = False
            continue
        if words[:2] != ["nv", "set"] or not _line(words[2:], read):
            tree.problem(path, f"line {number}: {stripped!r} is a setting the lab does not translate",
                         f"remove it, or {tree.again} (docs/guides/lab.md lists what the lab runs of an NVUE script)")
            ok = False
    if not ok:
        return None
    for peer, settings in read.bfd.items():
        if settings.get("enable") == "on":
            timers = {**BFD_DEFAULTS, **{key: int(value) for key, value in settings.items() if key != "enable"}}
            read.underlay.neighbor(peer).bfd = (timers["detect-multiplier"], timers["min-rx-interval"],
                                                timers["min-tx-interval"])
    loopback = read.addresses.pop("lo", None)
    ports = {port: RunningPort(read.addresses.get(port), read.mtus.get(port, DEFAULT_MTU), True)
             for port in sorted(set(read.addresses) | set(read.mtus))}
    return Running(loopback, ports, frr_conf(name, read.underlay),
                   f"{path} (each `nv set` translated: interfaces, BGP, BFD, DHCP relay)", _relay(read),
                   _management(read))


def _management(read: _Read) -> Management | None:
    """eth0 as the script sets it (None: no address on it). NVUE's eth0 is in the default VRF
    unless `ip vrf` names one (Cumulus Linux 5.x, *Management VRF*)."""
    settings = read.management
    if "address" not in settings:
        return None
    return Management(MANAGEMENT_PORT, settings["address"], settings.get("gateway"), settings.get("vrf"))


def _relay(read: _Read) -> Relay | None:
    """The DHCP relay of the script's one server group (NVUE relays each group to its servers)."""
    if not read.relay_servers:
        return None
    group, server = sorted(read.relay_servers.items())[0]
    return Relay(server, tuple(sorted(port for port, named in read.relay_down.items() if named == group)),
                 tuple(sorted(read.relay_up.get(group, []))))


def _line(words: list[str], read: _Read) -> bool:
    """Take one `nv set` line's words (after `nv set`); False: not one the translation knows."""
    match words:  # the DHCP relay is the one service the lab runs (isc-dhcp-relay in the switch)
        case ["service", "dhcp-relay", "default", "server-group", group, "server", server] if is_address(server):
            # one server of one group: what the lab's relay runs
            return read.relay_servers.setdefault(group, server) == server and len(read.relay_servers) == 1
        case ["service", "dhcp-relay", "default", "server-group", group, "upstream-interface", port]:
            read.relay_up.setdefault(group, []).append(port)
            return True
        case ["service", "dhcp-relay", "default", "downstream-interface", port, "server-group-name", group]:
            read.relay_down[port] = group
            return True
        case ["service", "dhcp-relay", *_]:
            return False
        case ["interface", "eth0", "ip", "address", address] if is_interface(address):
            return read.management.setdefault("address", address) == address
        case ["interface", "eth0", "ip", "gateway", gateway] if is_address(gateway):
            return read.management.setdefault("gateway", gateway) == gateway
        case ["interface", "eth0", "ip", "vrf", vrf]:
            return read.management.setdefault("vrf", vrf) == vrf
    if any(tuple(words[:len(prefix)]) == prefix for prefix in NOT_RUN):
        return True
    bgp = read.underlay
    match words:
        case ["interface", port, "ip", "address", address] if is_interface(address):
            read.addresses[port] = address
        case ["interface", port, "link", "mtu", mtu] if mtu.isdigit():
            read.mtus[port] = int(mtu)
        case ["interface", port, "link", setting, *_] if setting in LINK_NOT_RUN:
            read.mtus.setdefault(port, DEFAULT_MTU)
        case ["interface", port, setting, *_] if setting in NOT_RUN_ON_PORTS:
            read.mtus.setdefault(port, DEFAULT_MTU)
        case ["router", "bgp", "autonomous-system", asn] if asn.isdigit():
            bgp.asn = int(asn)
        case ["router", "bgp", "router-id", address] if is_address(address):
            bgp.router_id = address
        case ["router", "bgp", "graceful-restart", "mode", mode]:
            bgp.graceful_restart = mode == "full"  # helper-only: every FRR is a helper already
        case ["router", "bgp", "graceful-restart", "restart-time", seconds] if seconds.isdigit():
            bgp.restart_time = int(seconds)
        case ["router", "bgp", "graceful-restart", "path-selection-deferral-time", seconds] if seconds.isdigit():
            bgp.select_defer_time = int(seconds)
        case ["router", "policy", "prefix-list", _, "type", "ipv4"]:
            pass
        case ["router", "policy", "prefix-list", name, "rule", rule, "action", ("permit" | "deny") as action] \
                if rule.isdigit():
            rules = bgp.prefix_lists.setdefault(name, {})
            old = rules.get(int(rule), PrefixRule(action, ""))
            rules[int(rule)] = PrefixRule(action, old.prefix, old.ge, old.le)
        case ["router", "policy", "prefix-list", name, "rule", rule, "match", prefix,
              ("max-prefix-len" | "min-prefix-len") as bound, length] if rule.isdigit() and length.isdigit():
            rules = bgp.prefix_lists.setdefault(name, {})
            old = rules.get(int(rule), PrefixRule("permit", ""))
            if old.prefix not in ("", prefix):
                return False  # FRR holds one prefix per sequence number
            rules[int(rule)] = PrefixRule(old.action, prefix, int(length) if bound == "min-prefix-len" else old.ge,
                                          int(length) if bound == "max-prefix-len" else old.le)
        case ["vrf", "default", "router", "bgp", *rest]:
            return _router(rest, read)
        case _:
            return False
    return True


def _router(words: list[str], read: _Read) -> bool:
    """The words after `nv set vrf default router bgp`."""
    bgp = read.underlay
    match words:
        case ["path-selection", "multipath", "aspath-ignore", "on"]:
            bgp.multipath_relax = True
        case ["address-family", "ipv4-unicast", "multipaths", "ebgp", paths] if paths.isdigit():
            bgp.maximum_paths = int(paths)
        case ["address-family", "ipv4-unicast", "network", prefix] if is_interface(prefix):
            bgp.networks.append(prefix)
        case ["neighbor", peer, "remote-as", remote] if is_address(peer) and (
                remote in ("external", "internal") or remote.isdigit()):
            bgp.neighbor(peer).remote_as = remote
        case ["neighbor", peer, "description", _] if is_address(peer):
            pass
        case ["neighbor", peer, "bfd", "enable", ("on" | "off") as state] if is_address(peer):
            read.bfd.setdefault(peer, {})["enable"] = state
        case ["neighbor", peer, "bfd", ("detect-multiplier" | "min-rx-interval" | "min-tx-interval") as key,
              value] if is_address(peer) and value.isdigit():
            read.bfd.setdefault(peer, {})[key] = value
        case ["neighbor", peer, "address-family", "ipv4-unicast", "policy", "inbound", "prefix-list", name] \
                if is_address(peer):
            bgp.neighbor(peer).prefix_in = name
        case ["neighbor", peer, "address-family", "ipv4-unicast", "policy", "outbound", "prefix-list", name] \
                if is_address(peer):
            bgp.neighbor(peer).prefix_out = name
        case ["neighbor", peer, "address-family", "ipv4-unicast", "prefix-limits", "inbound", "maximum",
              limit] if is_address(peer) and limit.isdigit():
            bgp.neighbor(peer).maximum_prefix = int(limit)
        case _:
            return False
    return True
