"""Read a running lab: BGP sessions (vtysh JSON), kernel routes (`ip -j route`), pings and LLDP.

Every read is bounded: one process per namespace, each with a timeout, started together so a
lab of dozens of devices is read in about the time of its slowest device.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cluster.lab.runtime import Lab, read_bfd_peers, read_bgp_summary, run_each, vtysh_each, vtysh_json


@dataclass(frozen=True)
class Probe:
    """One ping: from a namespace and source address to a target, optionally a DF jumbo."""

    device: str
    source: str
    target: str
    size: int | None = None  # ICMP payload with don't-fragment set; None: a plain 56-byte ping


def bgp(lab: Lab) -> dict[str, tuple[int | None, dict[str, dict[str, Any]]]]:
    """switch -> (its local ASN, its peers as `show bgp summary json` lists them): one read per
    switch, all at once."""
    texts = vtysh_each(lab, [switch.name for switch in lab.plan.switches], "show bgp summary json")
    return {device: read_bgp_summary(device, text) for device, text in texts.items()}


def bgp_received(lab: Lab, devices: list[str]) -> dict[str, dict[str, set[str]]]:
    """device -> {prefix: the peer addresses it holds a BGP path from} (`show bgp ipv4 unicast
    json`: what arrived past the peers' outbound and its own inbound policy), read at once."""
    command = "show bgp ipv4 unicast json"
    result: dict[str, dict[str, set[str]]] = {}
    for device, text in vtysh_each(lab, devices, command).items():
        table = vtysh_json(device, command, text or "{}")
        routes = table.get("routes", {}) if isinstance(table, dict) else {}
        result[device] = {prefix: {str(path.get("peerId")) for path in paths if isinstance(path, dict)}
                          for prefix, paths in routes.items() if isinstance(paths, list)}
    return result


def bfd(lab: Lab) -> dict[str, dict[str, dict[str, Any]]]:
    """switch -> {peer address: its BFD session as `show bfd peers json` lists it}, read at once."""
    texts = vtysh_each(lab, [switch.name for switch in lab.plan.switches], "show bfd peers json")
    return {device: read_bfd_peers(device, text) for device, text in texts.items()}


def kernel_routes(lab: Lab, devices: Iterable[str]) -> dict[str, dict[str, tuple[str, ...]]]:
    """device -> {prefix: its next-hop addresses} of the BGP routes its kernel forwards with."""
    commands = {device: ["ip", "-j", "route", "show", "proto", "bgp"] for device in devices}
    result: dict[str, dict[str, tuple[str, ...]]] = {}
    for device, text in run_each(lab, commands).items():
        routes: dict[str, tuple[str, ...]] = {}
        for route in json.loads(text or "[]"):
            prefix = route["dst"] if "/" in route["dst"] else f"{route['dst']}/32"
            hops = [hop.get("gateway", "") for hop in route.get("nexthops", ())] or [route.get("gateway", "")]
            routes[prefix] = tuple(sorted(hop for hop in hops if hop))
        result[device] = routes
    return result


@dataclass(frozen=True)
class RouteQuery:
    """`ip route get TARGET [from SOURCE]` in a device's namespace."""

    device: str
    target: str
    source: str | None  # None: the route the kernel picks with no source given


def route_get(lab: Lab, queries: Iterable[RouteQuery]) -> dict[RouteQuery, dict[str, Any]]:
    """What each device's kernel answers for each query (its route: dev, gateway, prefsrc; empty
    when it has none), one process per device, all at once."""
    per_device: dict[str, list[RouteQuery]] = {}
    for query in queries:
        per_device.setdefault(query.device, []).append(query)
    scripts = {device: ["bash", "-c", "\n".join(
        f"ip -j route get {shlex.quote(query.target)}{f' from {shlex.quote(query.source)}' if query.source else ''}"
        " 2>/dev/null || echo '[]'"
        for query in batch)] for device, batch in per_device.items()}
    answers: dict[RouteQuery, dict[str, Any]] = {}
    for device, text in run_each(lab, scripts).items():
        for query, line in zip(per_device[device], text.splitlines(), strict=False):
            routes = json.loads(line or "[]")
            answers[query] = routes[0] if routes else {}
    return answers


def covering_routes(lab: Lab, targets: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """device -> the routes of its main table that cover its target (`ip -j route show match`)."""
    commands = {device: ["ip", "-j", "route", "show", "match", target] for device, target in targets.items()}
    return {device: json.loads(text or "[]") for device, text in run_each(lab, commands).items()}


def ping(lab: Lab, probes: Iterable[Probe], wait_s: float = 2, rounds: int = 2) -> dict[Probe, bool]:
    """Whether each probe was answered (one echo, `wait_s` to answer; a second try after a miss,
    since the first packet of a new pair may wait for ARP). What is still lost is probed again in
    a later round with twice the wait: on a loaded machine an echo can be late, while a fault (a
    wrong MTU, a missing route) loses it every time."""
    answered = _ping_once(lab, list(probes), wait_s)
    for _ in range(rounds - 1):
        lost = [probe for probe, ok in answered.items() if not ok]
        if not lost:
            break
        wait_s *= 2
        answered.update(_ping_once(lab, lost, wait_s))
    return answered


def _ping_once(lab: Lab, probes: list[Probe], wait_s: float) -> dict[Probe, bool]:
    per_device: dict[str, list[Probe]] = {}
    for probe in probes:
        per_device.setdefault(probe.device, []).append(probe)
    scripts = {}
    for device, batch in per_device.items():
        lines = []
        for index, probe in enumerate(batch):
            size = f"-M do -s {probe.size}" if probe.size else ""
            command = f"ping -n -q -c 1 -W {wait_s:g} -I {shlex.quote(probe.source)} {size} {shlex.quote(probe.target)}"
            lines.append(f"if {command} >/dev/null 2>&1 || {command} >/dev/null 2>&1; then echo {index} ok; "
                         f"else echo {index} lost; fi")
        scripts[device] = ["bash", "-c", "\n".join(lines)]
    answered: dict[Probe, bool] = {}
    for device, text in run_each(lab, scripts, timeout=30 + 2 * wait_s * max(map(len, per_device.values()),
                                                                               default=1)).items():
        batch = per_device[device]
        for line in text.splitlines():
            number, _, verdict = line.partition(" ")
            answered[batch[int(number)]] = verdict == "ok"
    return answered


def lldp(lab: Lab, folder: Path) -> None:
    """Write every switch's and host's `lldpctl -f json` to folder/<device>.json, as `verify --lldp`
    reads it (the oob switches run no lldpd)."""
    commands = {device.name: ["lldpctl", "-u", str(lab.node_dir(device.name) / "lldpd.sock"), "-f", "json"]
                for device in lab.plan.devices}
    for device, text in run_each(lab, commands).items():
        (folder / f"{device}.json").write_text(text)


def run_script(lab: Lab, scripts: dict[str, tuple[str, list[str], dict[str, str]]]) -> dict[str, tuple[int, str]]:
    """Run each device's script (its text, its arguments, extra environment) in the device's
    namespace at once, from a copy in its node folder; {device: (exit code, stdout and stderr)}."""
    commands = {}
    for device, (text, arguments, environment) in scripts.items():
        path = lab.node_dir(device) / "script.sh"
        path.write_text(text)
        run = shlex.join(["env", *(f"{key}={value}" for key, value in sorted(environment.items())), "bash", str(path),
                          *arguments])
        commands[device] = ["bash", "-c", f"{run} 2>&1; echo \"exit $?\""]
    result = {}
    for device, text in run_each(lab, commands).items():
        output, _, code = text.rstrip("\n").rpartition("\n")
        result[device] = (int(code.removeprefix("exit ")), output)
    return result
