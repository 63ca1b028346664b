"""What a Cumulus Linux switch runs, read from its rendered nvue.sh as NVUE applies it: every
`nv set` line is either translated into what the switch's Linux and FRR run (interface addresses
and MTUs, the BGP underlay with its prefix lists, route limits, graceful restart and BFD timers)
or one the lab knowingly leaves out (QoS, which needs the ASIC, and the management plane: system,
service, users, the eth0 management port). Any other line is refused, so an edit the translation
does not understand never passes silently.

Sources for what NVUE's defaults are, where the script leaves a setting out: Cumulus Linux 5.x
user guide, *Switch Port Attributes* (a swp port's MTU is 9216 unless set) and *Upgrading BGP*/
*Basic BGP Configuration* (NVUE enables the IPv4 unicast address family for every neighbor; NVUE
runs FRR with its datacenter defaults: 3 s keepalive, 9 s hold time).
"""

from __future__ import annotations

import ipaddress
import shlex
from collections import defaultdict
from dataclasses import dataclass, field

from cluster.dialects import RenderedFiles, Running, RunningPort

DEFAULT_MTU = 9216  # a swp port's MTU when nvue.sh sets none (Cumulus Linux 5.x, Switch Port Attributes)
SCRIPT_LINES = ("set -euo pipefail", "nv config apply -y")
# `nv set` paths the lab leaves out, with why (the README lists them): QoS needs the switch ASIC; the
# management plane (system settings, services, users, the out-of-band eth0) is not part of the fabric
NOT_RUN = (("qos",), ("system",), ("service",), ("interface", "eth0"))
NOT_RUN_ON_PORTS = ("description", "qos")  # per port: a label, and the port's QoS (watchdog)
LINK_NOT_RUN = ("speed", "breakout", "auto-negotiate", "fec")  # a veth has no speed, lanes or FEC


@dataclass
class _Bgp:
    asn: str | None = None
    router_id: str | None = None
    relax: bool = False
    paths: str | None = None
    networks: list[str] = field(default_factory=list)
    neighbors: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    restart: dict[str, str] = field(default_factory=dict)
    prefix_lists: dict[tuple[str, int], dict[str, str]] = field(default_factory=lambda: defaultdict(dict))


def translate(name: str, tree: RenderedFiles) -> Running | None:
    """The switch `name` as NVUE applies its rendered nvue.sh (None: it cannot say; reported)."""
    path = f"switches/{name}/nvue.sh"
    text = tree.text(path, "the switch's NVUE script")
    if text is None:
        return None
    addresses: dict[str, str] = {}
    mtus: dict[str, int] = {}
    bgp = _Bgp()
    ok = True
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if not stripped or stripped.startswith("#!") or stripped in SCRIPT_LINES:
            continue
        try:
            words = shlex.split(stripped)
        except ValueError as error:
            tree.problem(path, f"line {number}: {stripped!r} is not one shell command ({error})", tree.again)
            ok = False
            continue
        if words[:2] != ["nv", "set"] or not _line(words[2:], addresses, mtus, bgp):
            tree.problem(path, f"line {number}: {stripped!r} is a setting the lab does not translate",
                         f"remove it, or {tree.again} (the README lists what the lab runs of an NVUE script)")
            ok = False
    if not ok:
        return None
    loopback = addresses.pop("lo", None)
    ports = {port: RunningPort(addresses.get(port), mtus.get(port, DEFAULT_MTU), True)
             for port in sorted(set(addresses) | set(mtus))}
    return Running(loopback, ports, _frr(name, bgp), f"{path} (each `nv set` translated: interfaces, BGP, BFD)")


def _line(words: list[str], addresses: dict[str, str], mtus: dict[str, int], bgp: _Bgp) -> bool:
    """Take one `nv set` line's words (after `nv set`); False: not one the translation knows."""
    if any(tuple(words[:len(prefix)]) == prefix for prefix in NOT_RUN):
        return True
    match words:
        case ["interface", port, "ip", "address", address] if _interface(address):
            addresses[port] = address
        case ["interface", port, "link", "mtu", mtu] if mtu.isdigit():
            mtus[port] = int(mtu)
        case ["interface", port, "link", setting, *_] if setting in LINK_NOT_RUN:
            mtus.setdefault(port, DEFAULT_MTU)
        case ["interface", port, setting, *_] if setting in NOT_RUN_ON_PORTS:
            mtus.setdefault(port, DEFAULT_MTU)
        case ["router", "bgp", "autonomous-system", asn] if asn.isdigit():
            bgp.asn = asn
        case ["router", "bgp", "router-id", address] if _address(address):
            bgp.router_id = address
        case ["router", "bgp", "graceful-restart", setting, value]:
            bgp.restart[setting] = value
        case ["router", "policy", "prefix-list", name, "type", "ipv4"]:
            bgp.prefix_lists.setdefault((name, 0), {})
        case ["router", "policy", "prefix-list", name, "rule", rule, "action", ("permit" | "deny") as action] \
                if rule.isdigit():
            bgp.prefix_lists[(name, int(rule))]["action"] = action
        case ["router", "policy", "prefix-list", name, "rule", rule, "match", prefix,
              ("max-prefix-len" | "min-prefix-len") as bound, length] if rule.isdigit() and length.isdigit():
            entry = bgp.prefix_lists[(name, int(rule))]
            if entry.setdefault("prefix", prefix) != prefix:
                return False  # FRR holds one prefix per sequence number
            entry[bound] = length
        case ["vrf", "default", "router", "bgp", *rest]:
            return _router(rest, bgp)
        case _:
            return False
    return True


def _router(words: list[str], bgp: _Bgp) -> bool:
    """The words after `nv set vrf default router bgp`."""
    match words:
        case ["path-selection", "multipath", "aspath-ignore", "on"]:
            bgp.relax = True
        case ["address-family", "ipv4-unicast", "multipaths", "ebgp", paths] if paths.isdigit():
            bgp.paths = paths
        case ["address-family", "ipv4-unicast", "network", prefix] if _interface(prefix):
            bgp.networks.append(prefix)
        case ["neighbor", peer, "remote-as", ("external" | "internal") as kind] if _address(peer):
            bgp.neighbors[peer]["remote-as"] = kind
        case ["neighbor", peer, "remote-as", asn] if _address(peer) and asn.isdigit():
            bgp.neighbors[peer]["remote-as"] = asn
        case ["neighbor", peer, "description", _] if _address(peer):
            pass
        case ["neighbor", peer, "bfd", ("enable" | "detect-multiplier" | "min-rx-interval" | "min-tx-interval") as key,
              value] if _address(peer):
            bgp.neighbors[peer][f"bfd {key}"] = value
        case ["neighbor", peer, "address-family", "ipv4-unicast", "policy", ("inbound" | "outbound") as way,
              "prefix-list", name] if _address(peer):
            bgp.neighbors[peer][f"prefix-list {way}"] = name
        case ["neighbor", peer, "address-family", "ipv4-unicast", "prefix-limits", "inbound", "maximum",
              limit] if _address(peer) and limit.isdigit():
            bgp.neighbors[peer]["maximum-prefix"] = limit
        case _:
            return False
    return True


def _frr(name: str, bgp: _Bgp) -> str:
    """The BGP underlay as FRR's integrated configuration."""
    lines = ["frr defaults datacenter", f"hostname {name}", "service integrated-vtysh-config", "!"]
    for (list_name, rule), entry in sorted(bgp.prefix_lists.items()):
        if rule and "prefix" in entry:
            bounds = "".join(f" {word} {entry[key]}" for word, key in (("ge", "min-prefix-len"), ("le", "max-prefix-len"))
                             if key in entry)
            lines.append(f"ip prefix-list {list_name} seq {rule} {entry.get('action', 'permit')} {entry['prefix']}{bounds}")
    profiles: dict[tuple[str, str, str], str] = {}
    for settings in bgp.neighbors.values():
        if settings.get("bfd enable") == "on":
            timers = (settings.get("bfd detect-multiplier", "3"), settings.get("bfd min-rx-interval", "300"),
                      settings.get("bfd min-tx-interval", "300"))
            profiles.setdefault(timers, f"NVUE{len(profiles) + 1}")
    if profiles:
        lines.append("bfd")
        for (multiplier, receive, transmit), profile in profiles.items():
            lines += [f" profile {profile}", f"  detect-multiplier {multiplier}", f"  receive-interval {receive}",
                      f"  transmit-interval {transmit}", " exit"]
        lines += ["exit", "!"]
    if bgp.asn is None:
        return "\n".join([*lines, ""])
    lines.append(f"router bgp {bgp.asn}")
    lines += [f" bgp router-id {bgp.router_id}"] if bgp.router_id else []
    if bgp.restart.get("mode") == "full":
        lines += [f" bgp graceful-restart restart-time {bgp.restart['restart-time']}"] if "restart-time" in bgp.restart else []
        lines.append(" bgp graceful-restart")
        lines += ([f" bgp graceful-restart select-defer-time {bgp.restart['path-selection-deferral-time']}"]
                  if "path-selection-deferral-time" in bgp.restart else [])
    lines += [" bgp bestpath as-path multipath-relax"] if bgp.relax else []
    family = []
    for peer, settings in sorted(bgp.neighbors.items(), key=lambda item: ipaddress.ip_address(item[0])):
        lines.append(f" neighbor {peer} remote-as {settings.get('remote-as', 'external')}")
        if settings.get("bfd enable") == "on":
            timers = (settings.get("bfd detect-multiplier", "3"), settings.get("bfd min-rx-interval", "300"),
                      settings.get("bfd min-tx-interval", "300"))
            lines.append(f" neighbor {peer} bfd profile {profiles[timers]}")
        for way, direction in (("inbound", "in"), ("outbound", "out")):
            if f"prefix-list {way}" in settings:
                family.append(f"  neighbor {peer} prefix-list {settings[f'prefix-list {way}']} {direction}")
        if "maximum-prefix" in settings:
            family.append(f"  neighbor {peer} maximum-prefix {settings['maximum-prefix']}")
    lines += [" address-family ipv4 unicast", *(f"  network {network}" for network in bgp.networks), *family]
    lines += [f"  maximum-paths {bgp.paths}"] if bgp.paths else []
    lines += [" exit-address-family", "exit", "!", ""]
    return "\n".join(lines)


def _address(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _interface(text: str) -> bool:
    try:
        ipaddress.IPv4Interface(text)
    except ValueError:
        return False
    return "/" in text
