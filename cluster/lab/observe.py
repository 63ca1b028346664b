"""Read a running lab: BGP sessions (vtysh JSON), kernel routes (`ip -j route`), pings and LLDP.

Every read is bounded and costs one process per namespace at most (a switch's BGP and BFD state:
one vtysh; a device's route queries: one `ip -batch`), each with a timeout, a few at a time
(runtime.MAX_PARALLEL). Pings start no process: this process sends the echoes from raw ICMP sockets
it opens inside each namespace, all at once, so a check's cost grows with the lab's devices rather
than with its cables and sessions.
"""

from __future__ import annotations

import collections
import ctypes
import json
import os
import re
import select
import selectors
import shlex
import socket
import struct
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cluster.lab.runtime import (
    Lab,
    LabError,
    read_bfd_peers,
    read_bgp_summary,
    run_all,
    run_each,
    vtysh_each,
    vtysh_json,
    vtysh_many,
)


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


def bgp_and_bfd(lab: Lab) -> tuple[dict[str, tuple[int | None, dict[str, dict[str, Any]]]],
                                   dict[str, dict[str, dict[str, Any]]]]:
    """What `bgp` and `bfd` return, from one vtysh per switch (both commands in it)."""
    commands = ("show bgp summary json", "show bfd peers json")
    texts = vtysh_many(lab, [switch.name for switch in lab.plan.switches], commands)
    return ({device: read_bgp_summary(device, both[0]) for device, both in texts.items()},
            {device: read_bfd_peers(device, both[1]) for device, both in texts.items()})


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
    when it has none): one `ip -force -j -batch` per device, all at once. A query the kernel refuses
    (no route) prints nothing and is named on stderr by its line (`Command failed FILE:N`)."""
    per_device: dict[str, list[RouteQuery]] = {}
    for query in queries:
        per_device.setdefault(query.device, []).append(query)
    commands = {}
    for device, batch in per_device.items():
        path = lab.node_dir(device) / "routes.batch"
        path.write_text("".join(f"route get {query.target}{f' from {query.source}' if query.source else ''}\n"
                                for query in batch))
        commands[device] = ["ip", "-force", "-j", "-batch", str(path)]
    answers: dict[RouteQuery, dict[str, Any]] = {}
    for device, (code, out, err) in run_all(lab, commands).items():
        batch = per_device[device]
        refused = {int(number) - 1 for number in re.findall(r"^Command failed \S*:(\d+)$", err, re.MULTILINE)}
        printed = out.splitlines()
        if code is None or len(printed) != len(batch) - len(refused):
            raise LabError(f"{device}: `ip -batch` answered {len(printed)} of {len(batch) - len(refused)} route "
                           f"queries it did not refuse: {err.strip()[:200]}")
        routes = iter(printed)
        for index, query in enumerate(batch):
            found = [] if index in refused else json.loads(next(routes))
            answers[query] = found[0] if found else {}
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
    """Each probe's echo, and a second one after a miss: answered within `wait_s` of being sent.
    Every echo leaves at once from this process (one raw ICMP socket per namespace, source and
    DF setting, bound to the source as `ping -I` binds it), so no process starts per probe."""
    answered = dict.fromkeys(probes, False)
    with Pinger(lab) as pinger:
        for _ in range(2):  # as `ping -c 1 || ping -c 1`
            waiting = [probe for probe, ok in answered.items() if not ok]
            if not waiting:
                break
            answered.update(pinger.send_and_wait(waiting, wait_s))
    return answered


#: ICMP, as `ping` speaks it (RFC 792): echo request and reply, and ping's payload of 56 bytes.
ICMP_ECHO, ICMP_ECHOREPLY, PING_PAYLOAD = 8, 0, 56
#: Linux: setns(2)'s namespace type, IP_MTU_DISCOVER's "set DF, never fragment" (ping -M do), a
#: raw ICMP socket's filter of the types it is given (ip(7), raw(7)), the receive buffer it forces.
CLONE_NEWNET, IP_MTU_DISCOVER, IP_PMTUDISC_DO, SOL_RAW, ICMP_FILTER, SO_RCVBUFFORCE = 0x40000000, 10, 2, 255, 1, 33
RECEIVE_BUFFER = 4 * 1024 * 1024
WINDOW = 200


def _checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return int(~total & 0xFFFF)


def echo_request(identifier: int, sequence: int, size: int) -> bytes:
    """An ICMP echo request with `size` bytes of payload."""
    payload = bytes(index & 0xFF for index in range(size))
    header = struct.pack("!BBHHH", ICMP_ECHO, 0, 0, identifier, sequence)
    return struct.pack("!BBHHH", ICMP_ECHO, 0, _checksum(header + payload), identifier, sequence) + payload


def echo_reply(packet: bytes) -> tuple[int, int] | None:
    """(identifier, sequence) of an IPv4 packet holding an ICMP echo reply (None: it holds none)."""
    if len(packet) < 20:
        return None
    start = (packet[0] & 0x0F) * 4
    if len(packet) < start + 8 or packet[start] != ICMP_ECHOREPLY:
        return None
    identifier, sequence = struct.unpack("!HH", packet[start + 4:start + 8])
    return identifier, sequence


class Pinger:
    """Raw ICMP sockets opened in the lab's namespaces (setns(2) on this thread, then back), one per
    (device, source, DF), kept open across rounds; closed on exit."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.sockets: dict[tuple[str, str, bool], socket.socket | None] = {}  # None: the source cannot be bound
        self.identifiers: dict[int, tuple[str, str, bool]] = {}
        self.sequence = 0
        self.libc = ctypes.CDLL(None, use_errno=True)

    def __enter__(self) -> Pinger:
        return self

    def __exit__(self, *_: object) -> None:
        for handle in self.sockets.values():
            if handle is not None:
                handle.close()

    def _setns(self, fd: int, what: str) -> None:
        if self.libc.setns(fd, CLONE_NEWNET) != 0:
            raise LabError(f"cannot enter the network namespace of {what}: {os.strerror(ctypes.get_errno())}")

    def _open(self, keys: set[tuple[str, str, bool]]) -> None:
        """Open the sockets of `keys` not yet open, each inside its device's namespace."""
        new = sorted(keys - set(self.sockets))
        if not new:
            return
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            for key in new:
                device, source, df = key
                target = os.open(f"/run/netns/{self.lab.ns(device)}", os.O_RDONLY)
                try:
                    self._setns(target, device)
                finally:
                    os.close(target)
                try:
                    handle = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
                finally:
                    self._setns(own, "this process")
                try:
                    handle.bind((source, 0))
                except OSError:  # an address the device does not hold: `ping -I` fails the same way
                    handle.close()
                    self.sockets[key] = None
                    continue
                handle.setblocking(False)
                handle.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
                handle.setsockopt(SOL_RAW, ICMP_FILTER, struct.pack("I", 0xFFFFFFFF & ~(1 << ICMP_ECHOREPLY)))
                if df:
                    handle.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
                self.sockets[key] = handle
        finally:
            os.close(own)

    def send_and_wait(self, probes: list[Probe], wait_s: float) -> dict[Probe, bool]:
        """Send one echo per probe, at most WINDOW unanswered at a time (the kernel queues at most
        `netdev_max_backlog` packets per core: a burst of thousands would drop some), and wait until
        each is answered or `wait_s` has passed since it was sent: {probe: answered}."""
        keys = {probe: (probe.device, probe.source, probe.size is not None) for probe in probes}
        self._open(set(keys.values()))
        answered = dict.fromkeys(probes, False)
        queue = collections.deque(probes)
        flying: dict[tuple[int, int], tuple[Probe, float]] = {}  # (identifier, sequence) -> (probe, deadline)
        selector = selectors.DefaultSelector()
        try:
            while queue or flying:
                while queue and len(flying) < WINDOW:
                    probe = queue.popleft()
                    handle = self.sockets[keys[probe]]
                    if handle is None:
                        continue
                    identifier = handle.fileno() & 0xFFFF  # unique among this process' open sockets
                    self.sequence = (self.sequence + 1) & 0xFFFF
                    if not _send(handle, echo_request(identifier, self.sequence, PING_PAYLOAD if probe.size is None
                                                      else probe.size), probe.target):
                        continue  # too large for the route's MTU with DF (EMSGSIZE), no route: lost, as for ping
                    flying[(identifier, self.sequence)] = (probe, time.monotonic() + wait_s)
                    if handle.fileno() not in selector.get_map():
                        selector.register(handle, selectors.EVENT_READ)
                now = time.monotonic()
                for mark in [mark for mark, (_, deadline) in flying.items() if deadline <= now]:
                    del flying[mark]
                if not flying:
                    continue
                for key, _ in selector.select(min(deadline for _, deadline in flying.values()) - now):
                    ready = key.fileobj
                    assert isinstance(ready, socket.socket)
                    while True:
                        try:
                            packet = ready.recv(65535)
                        except (BlockingIOError, InterruptedError):
                            break
                        reply = echo_reply(packet)
                        if reply is not None and reply in flying:
                            answered[flying.pop(reply)[0]] = True
        finally:
            selector.close()
        return answered


def _send(handle: socket.socket, packet: bytes, target: str) -> bool:
    """Send `packet` to `target` (waiting up to a second for room in the socket's buffer); False
    when the kernel refuses it."""
    for _ in range(2):
        try:
            handle.sendto(packet, (target, 0))
            return True
        except BlockingIOError:
            select.select([], [handle], [], 1.0)
        except OSError:
            return False
    return False


def lldp_files(lab: Lab) -> dict[str, str]:
    """Every switch's and host's `lldpctl -f json` as `verify --lldp` reads it, by file name
    (`<device>.json`; the oob switches run no lldpd), each local port under the name its OS gives it."""
    commands = {device.name: ["lldpctl", "-u", str(lab.node_dir(device.name) / "lldpd.sock"), "-f", "json"]
                for device in lab.plan.devices}
    names = {device.name: {i.name: i.port for i in device.interfaces if i.name != i.port} for device in lab.plan.devices}
    return {f"{device}.json": platform_names(text, names[device]) for device, text in run_each(lab, commands).items()}


def platform_names(text: str, names: dict[str, str]) -> str:
    """lldpctl's JSON with each local port renamed by `names` (netdev -> the port as the switch's OS
    names it): a lab port whose platform name Linux cannot carry (EOS Ethernet3/5, netdev
    Ethernet3_5) is reported as the switch reports it, as its neighbors already see it advertised."""
    if not names:
        return text
    data = json.loads(text)
    found = data.get("lldp", {}).get("interface")
    if isinstance(found, dict):  # lldpctl writes one interface as an object, several as a list
        data["lldp"]["interface"] = {names.get(port, port): entry for port, entry in found.items()}
    elif isinstance(found, list):
        data["lldp"]["interface"] = [{names.get(port, port): entry for port, entry in item.items()} for item in found]
    return json.dumps(data, indent=2) + "\n"


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
