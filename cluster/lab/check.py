"""`lab check`: the running lab against the design, as findings (LAB-*).

- LAB-BGP: a session the design has (both ends in the lab) that is not configured or not
  Established; LAB-ASN: a switch or a peer speaking another ASN than the design gives it.
- LAB-BFD: a designed session without BFD up on the design's timers.
- LAB-ROUTE: a prefix (a loopback or a host /31) missing from a switch's kernel, or installed
  over a different number of next hops than the design's ECMP width.
- LAB-RAIL: a host rail whose own traffic leaves on another rail or toward another leaf.
- LAB-REACH: a host rail that does (not) reach another host's rail where the design says the
  opposite (same rail under other leaves, and across rails).
- LAB-MTU: a cable or a host-to-host path that does not carry the design's MTU with DF set.
- LAB-HOSTNET, LAB-NCCL, LAB-DHCP: the hosts' storage and management ports, NCCL's socket
  interface and the DHCP path (see each check).
- LAB-OOB: a switch whose management address does not answer from the out-of-band network, or
  whose management port is outside the design's management VRF or has another gateway.
- LAB-BMC: a host's BMC not cabled to the design's oob switch port (or without carrier, or on a
  port outside the bridge), and, where the design sets `management_plane.dhcp_server`, a BMC that
  gets no lease, one outside the design's pool or with another prefix or router, an address
  leased twice, or a lease holder that does not answer from the root oob switch.
- LAB-LLDP: an LLDP neighbor that is not the one `verify` expects.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from ipaddress import IPv4Address, ip_network
from pathlib import Path
from typing import Any

from cluster.addressing import allocate
from cluster.dialects import platform
from cluster.findings import Finding, Severity
from cluster.lab import observe
from cluster.lab.expect import Design, NetPort, OobLeases, RailAddress, design, oob_leases
from cluster.lab.model import (
    CABLING,
    DHCP_CONFIG,
    MANAGEMENT,
    OOB_DHCP,
    OOB_DHCP_CONFIG,
    LabBmc,
    Slice,
    ifname,
    lab_cables,
    slice_devices,
)
from cluster.lab.observe import Probe, RouteQuery
from cluster.lab.rules import lab_finding
from cluster.lab.runtime import Lab, run_each, wait_converged
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology
from cluster.verify.check import gather, verify

#: An address no design uses (RFC 5737 TEST-NET-2): where a rail's own table sends what is not
#: the fabric's. Only asked of the kernel (`ip route get`), never sent.
OUTSIDE = "198.51.100.1"

#: The findings a session that flapped after the lab converged gives until it is back, and how long
#: `lab check` waits for such a session (FRR's datacenter connect-retry is 10 s) and then for routing
#: to stay unchanged before it looks again.
UNSETTLED = frozenset({"LAB-BGP", "LAB-BFD", "LAB-ROUTE", "LAB-RAIL", "LAB-REACH"})
RECHECK_TIMEOUT_S = 30.0
RECHECK_QUIET_S = 3.0

#: What a veth cannot show: it always reports 10 Gb/s, so link speeds are not checked here.
NOT_EMULATED = frozenset({"CABLE-SPEED"})


@dataclass
class Checked:
    findings: list[Finding]
    counts: dict[str, int] = field(default_factory=dict)


def _switch_file(lab: Lab, name: str) -> str:
    """The rendered file that holds a switch's routing (BGP), which a routing finding names."""
    os_of = {switch.name: switch.os for switch in lab.plan.switches}
    return f"switches/{name}/{platform(os_of[name]).routing_file}"


def lab_design(lab: Lab, spec: ClusterSpec, topology: Topology) -> Design:
    switches, hosts, _ = slice_devices(topology, Slice.parse(lab.state["slice"]))
    return design(spec, topology, switches, hosts)


def check(lab: Lab, spec: ClusterSpec, topology: Topology, lldp: bool = True) -> Checked:
    expected = lab_design(lab, spec, topology)
    counts: dict[str, int] = {}
    findings = _routing(lab, expected, counts)
    if any(finding.rule in UNSETTLED for finding in findings):
        # A session torn down since the lab converged (BFD on a loaded machine) is still coming
        # back: wait for it, and for the routes it carries, then look once more.
        wait_converged(lab, RECHECK_TIMEOUT_S, RECHECK_QUIET_S, flapped_only=True)
        counts.clear()
        findings = _routing(lab, expected, counts)
    cut_off: set[tuple[str, str]] = set()  # (host, netdev): storage and management ports that reach no leaf
    findings += _host_networks(lab, expected, spec, counts, cut_off)
    findings += _mtu(lab, expected, counts, cut_off)
    findings += _nccl_socket(lab, expected, counts)
    findings += _dhcp(lab, expected, spec, topology, counts)
    findings += _oob(lab, spec, topology, counts)
    findings += _bmc(lab, spec, topology, counts)
    if lldp:
        findings += _lldp(lab, spec, topology, counts)
    return Checked(sorted(findings, key=Finding.sort_key), counts)


def _routing(lab: Lab, expected: Design, counts: dict[str, int]) -> list[Finding]:
    """The findings of what routing decides: sessions, BFD, switch routes, host rails, reach."""
    summaries, bfd = observe.bgp_and_bfd(lab)  # one vtysh per switch; the route attribution uses them too
    return (_sessions(lab, expected, counts, summaries) + _bfd(lab, expected, counts, bfd)
            + routes(lab, expected, counts, summaries=summaries) + _host_routes(lab, expected, counts)
            + _reachability(lab, expected, counts))


def _finding(rule: str, path: str, message: str, hint: str) -> Finding:
    return lab_finding(rule, path, message, hint)


def _sessions(lab: Lab, expected: Design, counts: dict[str, int],
              summaries: dict[str, tuple[int | None, dict[str, dict[str, Any]]]]) -> list[Finding]:
    findings = []
    established = 0
    for switch, (local, peers) in sorted(summaries.items()):
        path = _switch_file(lab, switch)
        if switch in expected.asns and local is not None and local != expected.asns[switch]:
            findings.append(_finding("LAB-ASN", path, f"{switch} runs BGP as AS {local}; the design gives it AS "
                                     f"{expected.asns[switch]}", f"render {switch} again (its `router bgp` line)"))
        for session in expected.sessions.get(switch, ()):
            peer = peers.get(session.peer_address)
            where = f"{switch} {session.port} -> {session.peer} ({session.peer_address})"
            if peer is None:
                findings.append(_finding("LAB-BGP", path, f"{where}: no BGP neighbor configured; the design peers them",
                                         f"add `neighbor {session.peer_address}` to {switch}'s BGP config "
                                         "(render it again)"))
                continue
            state = peer.get("state")
            remote = peer.get("remoteAs")
            if state != "Established":
                findings.append(_finding("LAB-BGP", path, f"{where}: session {state}, not Established",
                                         f"compare both ends' ASNs, addresses and neighbor lines with the design "
                                         f"(`vtysh -c 'show bgp neighbors {session.peer_address}'` in the lab)"))
            else:
                established += 1
            if remote is not None and remote != session.peer_asn and state == "Established":
                findings.append(_finding("LAB-ASN", path, f"{where}: the peer speaks AS {remote}; the design gives "
                                         f"{session.peer} AS {session.peer_asn}",
                                         f"render {session.peer} again (its `router bgp` line)"))
    counts["sessions"] = sum(len(sessions) for sessions in expected.sessions.values())
    counts["established"] = established
    return findings


def _bfd(lab: Lab, expected: Design, counts: dict[str, int],
         observed: dict[str, dict[str, dict[str, Any]]]) -> list[Finding]:
    """LAB-BFD: every designed session (both ends in the lab) has a BFD session that is up and
    runs the design's timers on this end (`observed`: each switch's `show bfd peers json`)."""
    findings = []
    up = 0
    timers = expected.bfd
    planned = (timers.transmit_ms, timers.receive_ms, timers.multiplier)
    for switch, peers in sorted(observed.items()):
        path = _switch_file(lab, switch)
        for session in expected.sessions.get(switch, ()):
            where = f"{switch} {session.port} -> {session.peer} ({session.peer_address})"
            peer = peers.get(session.peer_address)
            if peer is None:
                findings.append(_finding("LAB-BFD", path, f"{where}: no BFD session; the design runs BFD on every "
                                         f"BGP session (down after {timers.detect_ms} ms of silence)",
                                         f"enable BFD on {switch}'s session to {session.peer_address} (render it "
                                         "again)"))
                continue
            running = (peer.get("transmit-interval"), peer.get("receive-interval"), peer.get("detect-multiplier"))
            other_end = observed.get(session.peer)
            if peer.get("status") != "up" and other_end is not None and str(peer.get("local")) not in other_end:
                continue  # the peer runs no BFD toward it: the finding is the peer's, where the cause is
            if peer.get("status") != "up":
                findings.append(_finding("LAB-BFD", path, f"{where}: BFD {peer.get('status')}, not up",
                                         f"compare both ends' BFD settings (`vtysh -c 'show bfd peer "
                                         f"{session.peer_address}'` in the lab)"))
            elif running != planned:
                findings.append(_finding(
                    "LAB-BFD", path, f"{where}: BFD runs transmit {running[0]} ms, receive {running[1]} ms, "
                    f"multiplier {running[2]}; the design's are {planned[0]} ms, {planned[1]} ms, {planned[2]} "
                    f"(down after {timers.detect_ms} ms)", f"set {switch}'s BFD timers as the design renders them"))
            else:
                up += 1
    counts["bfd_up"] = up
    return findings


def routes(lab: Lab, expected: Design, counts: dict[str, int], failed: frozenset[str] = frozenset(),
           fewer: tuple[tuple[str, str, int], ...] = (),
           observed: dict[str, dict[str, tuple[str, ...]]] | None = None,
           summaries: dict[str, tuple[int | None, dict[str, dict[str, Any]]]] | None = None) -> list[Finding]:
    """LAB-ROUTE findings: every switch's kernel (as `observed` already read it, else read now)
    against the design (after `failed`/`fewer`); `summaries`: the BGP summaries already read."""
    findings = []
    alive = [switch.name for switch in lab.plan.switches if switch.name not in failed]
    if observed is None:
        observed = observe.kernel_routes(lab, alive)
    checked = 0
    narrowed: list[tuple[str, str, int, int]] = []  # (switch, prefix, next hops, the design's width)
    for switch in alive:
        want = expected.routes(switch, failed, fewer)
        have = observed[switch]
        path = _switch_file(lab, switch)
        for prefix, width in sorted(want.items()):
            checked += 1
            got = len(have.get(prefix, ()))
            if got < width and not failed and not fewer:
                narrowed.append((switch, prefix, got, width))  # attributed below, to where it is lost
            elif got != width:
                findings.append(_narrowed(switch, path, prefix, expected.origins[prefix], got, width))
        for prefix in sorted(set(have) - set(want)):
            announcer = expected.origins.get(prefix)
            if announcer is None or announcer in failed:
                findings.append(_finding("LAB-ROUTE", path, f"{switch} holds {prefix}, which no device of the design "
                                         "in this lab announces", "remove the extra `network` line"))
    findings += _attributed(lab, expected, narrowed, observed, summaries)
    counts["prefixes"] = checked
    return findings


def _narrowed(switch: str, path: str, prefix: str, origin: str, got: int, width: int) -> Finding:
    """LAB-ROUTE at the switch itself: a route it lacks or holds over another ECMP width."""
    if got == 0:
        return _finding("LAB-ROUTE", path, f"{switch} has no route to {prefix} ({origin}); the design reaches it "
                        f"over {width} next hop{'s' if width != 1 else ''}",
                        f"check the sessions toward {origin} and that {origin} announces {prefix}")
    return _finding("LAB-ROUTE", path, f"{switch} reaches {prefix} ({origin}) over {got} next hops; the design's "
                    f"ECMP width is {width}", "check maximum-paths and the sessions of this switch's uplinks")


def _attributed(lab: Lab, expected: Design, narrowed: list[tuple[str, str, int, int]],
                observed: dict[str, dict[str, tuple[str, ...]]],
                summaries: dict[str, tuple[int | None, dict[str, dict[str, Any]]]] | None) -> list[Finding]:
    """LAB-ROUTE for routes a switch holds over fewer next hops than designed, at the switch where
    they are lost: a neighbor the design has offer the prefix that sent no path for it (its
    outbound policy, or this switch's inbound one) over an Established session is named in its own
    file; otherwise the switch itself (its maximum-paths, or a session LAB-BGP names). A neighbor
    that does not hold the prefix itself is no cause: the switch where it is lost is named instead."""
    if not narrowed:
        return []
    received = observe.bgp_received(lab, sorted({switch for switch, _, _, _ in narrowed}))
    established = {switch: {address for address, peer in peers.items() if peer.get("state") == "Established"}
                   for switch, (_, peers) in (summaries if summaries is not None else observe.bgp(lab)).items()}
    findings: dict[tuple[str, str, str], Finding] = {}
    for switch, prefix, got, width in narrowed:
        origin = expected.origins[prefix]
        senders = received.get(switch, {}).get(prefix, set())
        up = [session for session in expected.sessions.get(switch, ())
              if session.peer_address in established.get(switch, set())]
        offered = set(expected.offered_by(switch, prefix))
        silent = [session for session in up if session.peer in offered and session.peer_address not in senders]
        causes = [session for session in silent if session.peer == origin or prefix in observed.get(session.peer, {})]
        for session in causes:
            key = (session.peer, switch, origin)  # one finding per silent pair and origin: its routes go together
            findings.setdefault(key, _finding(
                "LAB-ROUTE", _switch_file(lab, session.peer), f"{switch} receives no path to {prefix} ({origin}) "
                f"from {session.peer} over {session.port} ({session.peer_address}), though the design has it offer the "
                f"prefix, so {switch} reaches it over {got} of {width} next hops",
                f"check {session.peer}'s outbound BGP policy toward {switch} (prefix lists, route maps), then "
                f"{switch}'s inbound one"))
        if not silent:  # every offer arrived, or a session is down (LAB-BGP): this switch narrows it
            findings.setdefault((switch, prefix, ""), _narrowed(switch, _switch_file(lab, switch), prefix, origin, got,
                                                                width))
    return list(findings.values())


def rail_probes(expected: Design) -> list[tuple[RailAddress, RailAddress]]:
    """Host rail pairs to test: on each rail, the next host and the first host under another leaf;
    across rails, the next host's next rail. Bounded: at most three per host rail."""
    by_rail: dict[int, list[RailAddress]] = {}
    for rail in expected.rails:
        by_rail.setdefault(rail.rail, []).append(rail)
    rails = sorted(by_rail)
    pairs: list[tuple[RailAddress, RailAddress]] = []
    for number in rails:
        members = by_rail[number]
        for index, source in enumerate(members):
            targets = []
            if len(members) > 1:
                targets.append(members[(index + 1) % len(members)])
            other = next((member for member in members if member.leaf != source.leaf), None)
            if other is not None and other not in targets:
                targets.append(other)
            if len(rails) > 1:
                across = by_rail[rails[(rails.index(number) + 1) % len(rails)]]
                targets.append(across[(index + 1) % len(across)])
            pairs.extend((source, target) for target in targets if target.host != source.host or
                         target.rail != source.rail)
    return pairs


def _host_routes(lab: Lab, expected: Design, counts: dict[str, int]) -> list[Finding]:
    """LAB-RAIL: from each rail's own address, the kernel sends to other hosts' rails (up to
    four, spread over them) and to an address outside the fabric (OUTSIDE: the rail's own table's
    default route) over that rail to its own leaf; and the host's route toward them without a
    source (its main table's most specific covering route) has one next hop per rail's leaf.
    Within the fabric Linux picked the source's own rail from the multipath route in every case
    tried, so OUTSIDE is what shows a missing source rule."""
    by_host: dict[str, list[RailAddress]] = {}
    for rail in expected.rails:
        by_host.setdefault(rail.host, []).append(rail)
    interfaces = {host.name: host.rails for host in lab.plan.hosts}
    queries: dict[RouteQuery, tuple[RailAddress, str]] = {}
    covering: dict[str, str] = {}
    for host, rails in by_host.items():
        others = [rail for rail in expected.rails if rail.host != host]
        targets = sorted({others[index * len(others) // 4].address for index in range(4)} if others else set())
        targets.append(OUTSIDE)
        for rail, interface in zip(rails, interfaces[host], strict=True):
            for target in targets:
                queries[RouteQuery(host, target, rail.address)] = (rail, interface.name)
        if others:
            covering[host] = targets[0]
    answers = observe.route_get(lab, queries)
    findings = []
    for query, (rail, device) in queries.items():
        answer = answers.get(query, {})
        got = (answer.get("dev"), answer.get("gateway"))
        if got != (device, rail.gateway):
            findings.append(_finding(
                "LAB-RAIL", f"hosts/{_pool(lab, query.device)}/qos.sh",
                f"{query.device} rail {rail.rail} ({rail.address}) sends to {query.target} via "
                f"{got[1] or 'no gateway'} on {got[0] or 'no interface'}; the design sends it on its own rail "
                f"{device} via {rail.leaf} ({rail.gateway})",
                f"check the rail's source rule and its table's default route (`ip rule`, `ip route show table all` "
                f"in namespace {lab.ns(query.device)})"))
    for host, routes in sorted(observe.covering_routes(lab, covering).items()):
        specific = max(routes, key=lambda route: _prefix_length(str(route.get("dst", ""))), default={})
        hops = specific.get("nexthops") or [specific]
        gateways = sorted({str(hop.get("gateway")) for hop in hops if hop.get("gateway")})
        want = sorted({rail.gateway for rail in by_host[host]})
        if gateways != want:
            findings.append(_finding(
                "LAB-RAIL", f"hosts/{_pool(lab, host)}/qos.sh",
                f"{host}'s route to {covering[host]} ({specific.get('dst', 'none')}) goes via "
                f"{', '.join(gateways) or 'no gateway'}; the design spreads it over every rail's leaf "
                f"({', '.join(want)})", "check the fabric's multipath route: one nexthop per rail"))
    counts["host_route_queries"] = len(queries) + len(covering)
    return findings


def _prefix_length(destination: str) -> int:
    """The length of a route's `dst` (`default` is 0, a bare address 32)."""
    if destination == "default":
        return 0
    return int(destination.partition("/")[2] or 32)


def _reachability(lab: Lab, expected: Design, counts: dict[str, int],
                  failed: frozenset[str] = frozenset()) -> list[Finding]:
    pairs = rail_probes(expected)
    answered = observe.ping(lab, [Probe(source.host, source.address, target.address) for source, target in pairs])
    findings = []
    for source, target in pairs:
        want = expected.reachable(source.leaf, target.leaf, failed)
        got = answered[Probe(source.host, source.address, target.address)]
        if got != want:
            verdict = "does not reach" if want else "reaches"
            findings.append(_finding(
                "LAB-REACH", f"hosts/{_pool(lab, source.host)}/qos.sh",
                f"{source.host} rail {source.rail} ({source.address}) {verdict} {target.host} rail {target.rail} "
                f"({target.address}, under {target.leaf}); the design says it {'should' if want else 'cannot'}",
                f"trace it: `ip netns exec {lab.ns(source.host)} ping -I {source.address} {target.address}`, then "
                f"the routes of {source.leaf} and {target.leaf}"))
    counts["reach_probes"] = len(pairs)
    return findings


def _pool(lab: Lab, host: str) -> str:
    return next(item.pool for item in lab.plan.hosts if item.name == host)


def _mtu(lab: Lab, expected: Design, counts: dict[str, int], cut_off: set[tuple[str, str]]) -> list[Finding]:
    """LAB-MTU: every cable, and host-to-host paths, carry the design's MTU with DF set. A cable
    that does not is blamed on the end whose file sets a port MTU below the design's (both, when
    both do; the lower end's when neither does, as the cause is then elsewhere). A host port
    `cut_off` from its leaf (LAB-HOSTNET names it) is not probed again."""
    probes: dict[Probe, tuple[list[str], str]] = {}
    hosts = {host.name for host in lab.plan.hosts}
    files = {host.name: f"hosts/{host.pool}/qos.sh" for host in lab.plan.hosts}
    files.update({switch.name: f"switches/{switch.name}/{platform(switch.os).config_file}"
                  for switch in lab.plan.switches})
    interfaces = {(device.name, interface.name): interface
                  for device in lab.plan.devices for interface in device.interfaces}
    for cable, own, gateway in lab.plan.cable_addresses():
        if not own or not gateway or (cable.a, cable.a_if) in cut_off:
            continue
        lower, upper = interfaces[(cable.a, cable.a_if)], interfaces[(cable.b, cable.b_if)]
        size = expected.switch_mtu if cable.a not in hosts else \
            expected.host_mtu if lower.network == FABRIC else expected.port_mtu[lower.network]
        planned = {cable.a: size, cable.b: expected.switch_mtu}
        short = [device for device, interface in ((cable.a, lower), (cable.b, upper))
                 if interface.mtu < planned[device]]
        where = {cable.a: _netplan(lab, cable.a)} if cable.a in hosts and lower.network != FABRIC else {}
        probes[Probe(cable.a, own, gateway, size - 28)] = (
            [where.get(device, files[device]) for device in short or [cable.a]],
            f"the cable {cable.a} {lower.port} - {cable.b} {upper.port}"
            + "".join(f" ({device} sets MTU {interfaces[(device, name)].mtu}, the design {planned[device]})"
                      for device, name in ((cable.a, cable.a_if), (cable.b, cable.b_if)) if device in short))
    for source, target in rail_probes(expected):
        if expected.reachable(source.leaf, target.leaf):
            probes[Probe(source.host, source.address, target.address, expected.host_mtu - 28)] = (
                [files[source.host]],
                f"the path {source.host} rail {source.rail} -> {target.host} rail {target.rail} ({target.address})")
    answered = observe.ping(lab, probes)
    findings = []
    for probe, (paths, what) in probes.items():
        if not answered[probe]:
            mtu = probe.size + 28 if probe.size else 0
            findings += [_finding("LAB-MTU", path, f"{what} does not carry {mtu}-byte packets with DF set (from "
                                  f"{probe.source} to {probe.target}); the design's MTU there is {mtu}",
                                  "set the MTU of every port on it as the design renders it (jumbo end to end)")
                         for path in paths]
    counts["mtu_probes"] = len(probes)
    return findings


def _netplan(lab: Lab, host: str) -> str:
    return f"hosts/{_pool(lab, host)}/netplan/{host}.yaml"


def _host_networks(lab: Lab, expected: Design, spec: ClusterSpec, counts: dict[str, int],
                   cut_off: set[tuple[str, str]]) -> list[Finding]:
    """LAB-HOSTNET: each host's storage and management ports as the design addresses them: each
    reaches its leaf's end of its /31 and the same port of the next host (through the network's
    switches); traffic from a port's own address leaves on that port, and with no source given the
    first management port carries what is outside every network (OUTSIDE: the default route) and
    the first storage port the storage network and `storage.targets`. A port that does not reach
    its own leaf is named once, at its host, and added to `cut_off` (others' probes toward it are
    then not findings of theirs)."""
    by_network: dict[str, list[NetPort]] = {}
    for port in expected.ports:
        by_network.setdefault(port.network, []).append(port)
    probes: dict[Probe, tuple[NetPort, str]] = {}
    queries: dict[RouteQuery, tuple[NetPort, str]] = {}
    targets = [str(ip_network(target, strict=False).network_address) for target in
               (spec.storage.targets if spec.storage is not None else ())]
    for network, ports in sorted(by_network.items()):
        for index, port in enumerate(ports):
            probes[Probe(port.host, port.address, port.gateway)] = (port, f"its leaf {port.leaf} ({port.gateway})")
            other = next((peer for peer in ports[index + 1:] + ports[:index] if peer.host != port.host
                          and peer.position == port.position), None)
            if other is not None:
                probes[Probe(port.host, port.address, other.address)] = (
                    port, f"{other.host} {other.netdev} ({other.address}, under {other.leaf})")
                queries[RouteQuery(port.host, other.address, port.address)] = (port, other.address)
            if port.position == 0:
                away = [OUTSIDE] if network == MANAGEMENT else [*targets, *([other.address] if other else [])]
                queries.update({RouteQuery(port.host, target, None): (port, target) for target in away})
    answered = observe.ping(lab, probes)
    cut_off.update((port.host, port.netdev) for probe, (port, _) in probes.items()
                   if probe.target == port.gateway and not answered[probe])
    addresses = {port.address: (port.host, port.netdev) for port in expected.ports}
    findings = [_finding("LAB-HOSTNET", _netplan(lab, probe.device),
                         f"{port.host} {port.network} port {port.netdev} ({port.address}) does not reach {what}",
                         f"check the port's address and routes in its netplan file (`ip addr`, `ip route show table "
                         f"all` in namespace {lab.ns(port.host)})")
                for probe, (port, what) in probes.items() if not answered[probe] and (
                    probe.target == port.gateway or not {(port.host, port.netdev), addresses[probe.target]} & cut_off)]
    answers = observe.route_get(lab, queries)
    for query, (port, target) in queries.items():
        got = (answers.get(query, {}).get("dev"), answers.get(query, {}).get("gateway"))
        if got != (port.netdev, port.gateway) and (port.host, port.netdev) not in cut_off:
            source = f"from {port.address}" if query.source else "with no source address"
            findings.append(_finding(
                "LAB-HOSTNET", _netplan(lab, port.host),
                f"{port.host} sends to {target} {source} via {got[1] or 'no gateway'} on {got[0] or 'no interface'}; "
                f"the design sends it on its {port.network} port {port.netdev} via {port.leaf} ({port.gateway})",
                "check the port's routes, their metrics and its source rule in the netplan file"))
    counts["host_network_probes"] = len(probes) + len(queries)
    return findings


def _nccl_socket(lab: Lab, expected: Design, counts: dict[str, int]) -> list[Finding]:
    """LAB-NCCL: each host's pool's nccl-socket.sh, run on the host, finds the netdev that holds
    the host's management address and writes it as NCCL's socket interface."""
    first = {port.host: port for port in expected.ports if port.network == MANAGEMENT and port.position == 0}
    hosts = {host.name: host for host in lab.plan.hosts if host.name in first and host.nccl_socket}
    for name in hosts:  # what an earlier check's run wrote is not this run's answer
        (lab.node_dir(name) / "nccl.conf").unlink(missing_ok=True)
    ran = observe.run_script(lab, {name: (host.nccl_socket, [name], {"NCCL_CONF_PATH": str(
        lab.node_dir(name) / "nccl.conf")}) for name, host in hosts.items()})
    findings = []
    for name, (code, output) in sorted(ran.items()):
        port = first[name]
        conf = lab.node_dir(name) / "nccl.conf"
        written = conf.read_text() if conf.exists() else ""
        want = f"NCCL_SOCKET_IFNAME=={port.netdev}"
        if code != 0 or want not in written.splitlines():
            said = output.strip().splitlines()[-1][:300] if output.strip() else f"exit {code}"
            findings.append(_finding(
                "LAB-NCCL", f"hosts/{hosts[name].pool}/nccl-socket.sh",
                f"{name}: the script does not set {want} (its management port, {port.address}): {said}",
                "check the script's management address for the host and the port's address in its netplan file"))
    counts["nccl_sockets"] = len(ran)
    return findings


#: A DHCP client's query on the host (udhcpc: no address applied, the lease printed; 3 discovers 2 s apart).
DHCP_QUERY = """lease=$(mktemp)
printf '#!/bin/sh\\n[ "$1" = bound ] && echo "LEASE $ip/$mask $router"\\nexit 0\\n' > "$lease"
chmod +x "$lease"
udhcpc -i "$1" -n -q -f -s "$lease" -t 3 -T 2
code=$?
rm -f "$lease"
exit $code
"""


def _dhcp(lab: Lab, expected: Design, spec: ClusterSpec, topology: Topology, counts: dict[str, int]) -> list[Finding]:
    """LAB-DHCP: with the design's DHCP server (`provisioning.dhcp_server`, a host's management
    address) in the lab, every other host's first management port asks for a lease (udhcpc) through
    its leaf's relay and gets the design's address, prefix and gateway. Hosts behind a leaf whose OS
    relays nothing on a routed port (HOST-NET says so) are not asked."""
    counts["dhcp_leases"] = 0
    if spec.provisioning is None:
        return []
    server = str(spec.provisioning.dhcp_server)
    first = [port for port in expected.ports if port.network == MANAGEMENT and port.position == 0]
    if not any(port.address == server for port in first):
        return []  # the server is outside this lab (a slice)
    leaf_os = {port.leaf: platform(topology.switch(port.leaf)["os"]) for port in first}
    asked = {port.host: port for port in first if port.address != server and leaf_os[port.leaf].relays_on_routed_ports}
    leases = observe.run_script(lab, {host: (DHCP_QUERY, [port.netdev], {}) for host, port in asked.items()})
    findings = []
    for host, port in sorted(asked.items()):
        got = next((line.split(" ", 1)[1] for line in leases[host][1].splitlines() if line.startswith("LEASE ")), None)
        want = f"{port.address}/31 {port.gateway}"
        if got != want:
            relay = f"switches/{port.leaf}/{leaf_os[port.leaf].config_file}"
            findings.append(_finding(
                "LAB-DHCP", DHCP_CONFIG, f"{host} {port.netdev} gets {f'the lease {got}' if got else 'no lease'} "
                f"from the DHCP server ({server}, through {port.leaf}'s relay); the design hands it {port.address}/31 "
                f"with gateway {port.gateway}",
                f"check {host}'s subnet in {DHCP_CONFIG}, the relay lines of {relay}, and that the server's host "
                "holds its address"))
    counts["dhcp_leases"] = len(asked) - len(findings)
    return findings


#: Each switch's management port as its kernel runs it: the routes of the fabric's (main) table out
#: of the port, then the route of what its management address sends outside every network.
MANAGEMENT_STATE = f"""ip -j route show table main dev "$1"
ip -j route get {OUTSIDE} from "$2" 2>/dev/null || echo '[]'
"""


def _oob(lab: Lab, spec: ClusterSpec, topology: Topology, counts: dict[str, int]) -> list[Finding]:
    """LAB-OOB: every switch whose management port the lab cables answers a ping to its planned
    management address (the oob plan's, from the design) from the lab's root oob switch, across the
    oob network; the fabric's (main) routing table routes nothing by its port (the design's
    management VRF: management never shares the fabric's routing table); and what its management
    address sends off the segment leaves by the port to the design's gateway."""
    counts["oob_probes"] = 0
    plan = lab.plan
    if not plan.bridges:
        return []
    addresses = allocate(spec, topology, links=False)
    root = min(plan.bridges, key=lambda bridge: (bridge.priority, bridge.name))
    switches = {switch.name: switch for switch in plan.switches}
    ports = {cable.a: cable.a_if for cable in plan.oob_cables if cable.a in switches}
    planned = {name: address for name in ports if (address := addresses.management_address(name)) is not None}
    if root.address is None or not planned:
        return []
    probes = {Probe(root.name, root.address.split("/")[0], address.split("/")[0]): name
              for name, address in planned.items()}
    answered = observe.ping(lab, probes)
    ran = observe.run_script(lab, {name: (MANAGEMENT_STATE, [ports[name], address.split("/")[0]], {})
                                   for name, address in planned.items()})
    gateway = str(spec.management_plane.gateway)
    findings = []
    for probe, name in sorted(probes.items(), key=lambda item: item[1]):
        switch = switches[name]
        path = f"switches/{name}/{platform(switch.os).config_file}"
        set_by_file = switch.management.address if switch.management else None
        if not answered[probe]:
            findings.append(_finding(
                "LAB-OOB", path, f"{name}'s management address {planned[name]} does not answer from the oob network "
                f"({root.name}, {probe.source}); its file sets {set_by_file or 'no address'} on {ports[name]}",
                "set the management port's address from the oob plan (render the switch again)"))
            continue  # what it routes from an address it does not hold says nothing more
        code, output = ran[name]
        lines = output.splitlines()
        shared, away = (_json(lines[0]), _json(lines[1])) if code == 0 and len(lines) >= 2 else ([], [])
        if shared:
            findings.append(_finding(
                "LAB-OOB", path, f"{name}'s management port {ports[name]} is in no VRF: the fabric's routing table "
                f"routes {', '.join(str(route.get('dst')) for route in shared)} by it; the design puts it in a "
                "management VRF", "put the management port in the management VRF (render the switch again)"))
        got = (away[0].get("gateway"), away[0].get("dev")) if away else (None, None)
        if got != (gateway, ports[name]):
            findings.append(_finding(
                "LAB-OOB", path, f"{name}'s management address sends what leaves the oob segment via "
                f"{got[0] or 'no gateway'} on {got[1] or 'no port'}; the design's gateway is {gateway} on "
                f"{ports[name]}", "set the management port's gateway from management_plane.gateway "
                "(render the switch again)"))
    counts["oob_probes"] = len(probes)
    return findings


#: A BMC's port as its kernel runs it (carrier, the veth's peer: its index and the namespace it is
#: in), then, when asked ($2 = lease), a lease as the BMC takes one at boot: udhcpc applies the
#: address (and the router as its default route) and prints it; 3 discovers 2 s apart.
BMC_STATE = """ip -j -d link show dev "$1"
ip -j netns list-id
[ "$2" = lease ] || exit 0
bound=$(mktemp)
cat > "$bound" <<'END'
#!/bin/sh
if [ "$1" = bound ]; then
  ip address flush dev "$interface"
  ip address add "$ip/$mask" dev "$interface"
  [ -n "$router" ] && ip route replace default via "${router%% *}" dev "$interface" 2>/dev/null
  echo "LEASE $ip $mask $router"
fi
exit 0
END
chmod +x "$bound"
udhcpc -i "$1" -n -q -f -s "$bound" -t 3 -T 2 2>/dev/null
code=$?
rm -f "$bound"
exit $code
"""


def _bmc(lab: Lab, spec: ClusterSpec, topology: Topology, counts: dict[str, int]) -> list[Finding]:
    """LAB-BMC: every lab host's BMC is cabled to the oob switch port the design gives it (the
    veth's peer, as a technician finds a BMC's MAC in the switch's table), with carrier, the port
    a member of the switch's bridge; and where the design sets `management_plane.dhcp_server`,
    each BMC asks for a lease (udhcpc, as at boot) and gets one of the design's pool (the second
    quarter of addressing.oob) with the segment's prefix and management_plane.gateway as its
    router, no address twice, and the lease holder answers a ping from the root oob switch.
    Expectations from the design alone (expect.oob_leases)."""
    counts["bmc_links"] = counts["bmc_leases"] = counts["oob_dhcp_planned"] = 0
    plan = lab.plan
    if not plan.bridges:
        return []
    _, hosts, _ = slice_devices(topology, Slice.parse(lab.state["slice"]))
    expected = oob_leases(spec, topology, hosts)
    counts["oob_dhcp_planned"] = int(expected.server is not None)
    built = {bmc.host: bmc for bmc in plan.bmcs}
    asked = expected.server is not None and plan.oob_dhcp is not None
    ran = observe.run_script(lab, {bmc.name: (BMC_STATE, [bmc.interface, "lease" if asked else "link"], {})
                                   for bmc in plan.bmcs})
    tables = {name: _json(text) for name, text in run_each(
        lab, {bridge.name: ["ip", "-j", "link", "show"] for bridge in plan.bridges}).items()}
    by_ns = {lab.ns(device): device for device in lab.state["namespaces"]}
    findings = []
    linked = []
    for host, (switch, port) in sorted(expected.ports.items()):
        where = f"{host}'s BMC"
        hint = f"cable the BMC as the design says, {host} bmc to {switch} {port} (correct its row of {CABLING})"
        if host not in built:
            findings.append(_finding("LAB-BMC", CABLING, f"{where} is not cabled (no oob row for {host} bmc); the "
                                     f"design cables it to {switch} {port}", hint))
            continue
        bmc = built[host]
        lines = ran[bmc.name][1].splitlines()
        link = (_json(lines[0]) or [{}])[0] if lines else {}
        ids = {entry.get("nsid"): entry.get("name") for entry in (_json(lines[1]) if len(lines) > 1 else [])}
        peer_device = by_ns.get(str(ids.get(link.get("link_netnsid"))), "")
        peer = next((entry for entry in tables.get(peer_device, []) if entry.get("ifindex") == link.get("link_index")),
                    {})
        found = f"{peer_device} {peer.get('ifname')}" if peer else "no oob switch port"
        if (peer_device, peer.get("ifname")) != (switch, ifname(port)):
            findings.append(_finding("LAB-BMC", CABLING, f"{where} ({bmc.interface}) is cabled to {found}; the "
                                     f"design cables it to {switch} {port}", hint))
        elif "LOWER_UP" not in link.get("flags", ()) or "LOWER_UP" not in peer.get("flags", ()) \
                or peer.get("master") != "br0":
            state = "no carrier" if "LOWER_UP" not in link.get("flags", ()) else "the port is not in its bridge"
            findings.append(_finding("LAB-BMC", CABLING, f"{where} ({bmc.interface}) to {found}: {state}; the "
                                     "design's oob switch bridges the port into its VLAN",
                                     f"check the cable and {switch}'s port {port} (`ip -d link` in namespace "
                                     f"{lab.ns(switch)})"))
        else:
            linked.append(host)
    counts["bmc_links"] = len(linked)
    if not asked:
        return findings
    return findings + _bmc_leases(lab, expected, {host: built[host] for host in linked}, ran, counts)


def _bmc_leases(lab: Lab, expected: OobLeases, bmcs: dict[str, LabBmc], ran: dict[str, tuple[int, str]],
                counts: dict[str, int]) -> list[Finding]:
    """LAB-BMC of the leases of the BMCs cabled as designed (`ran`: each one's BMC_STATE output)."""
    first, last = (IPv4Address(address) for address in expected.pool)
    pool = f"{expected.pool[0]} - {expected.pool[1]}"
    hint = (f"give {OOB_DHCP_CONFIG} the subnet addressing.oob with the pool {pool} (its second quarter) and the "
            f"routers option {expected.router} (management_plane.gateway): render it again")
    leases: dict[str, str] = {}
    faulty: set[str] = set()
    findings = []
    for host, bmc in sorted(bmcs.items()):
        got = next((line.split()[1:] for line in ran[bmc.name][1].splitlines() if line.startswith("LEASE ")), [])
        if len(got) < 2 or not got[1].isdigit():
            faulty.add(host)
            findings.append(_finding("LAB-BMC", OOB_DHCP_CONFIG, f"{host}'s BMC gets no lease from the oob DHCP "
                                     f"server ({expected.server}); the design leases it an address of {pool}",
                                     f"{hint}; the server's log: {lab.node_dir(OOB_DHCP) / 'kea-dhcp4.log'}"))
            continue
        address, prefix, router = got[0], int(got[1]), " ".join(got[2:])
        leases[host] = address
        wrong = []
        if not first <= IPv4Address(address) <= last:
            wrong.append(f"{address}, outside the design's pool {pool}")
        if prefix != expected.prefix:
            wrong.append(f"prefix /{prefix}, not the segment's /{expected.prefix}")
        if router != expected.router:
            wrong.append(f"router {router or 'none'}, not management_plane.gateway {expected.router}")
        if wrong:
            faulty.add(host)
            findings.append(_finding("LAB-BMC", OOB_DHCP_CONFIG, f"{host}'s BMC leases {'; '.join(wrong)}", hint))
    holders: dict[str, list[str]] = {}
    for host, address in leases.items():
        holders.setdefault(address, []).append(host)
    for address, names in sorted(holders.items()):
        if len(names) > 1:
            faulty.update(names)
            findings.append(_finding("LAB-BMC", OOB_DHCP_CONFIG, f"{' and '.join(names)} lease the same address "
                                     f"{address}", f"one address per BMC: check {OOB_DHCP_CONFIG}'s pool"))
    root = min(lab.plan.bridges, key=lambda bridge: (bridge.priority, bridge.name))
    probes = {Probe(root.name, root.address.split("/")[0], address): host
              for host, address in leases.items() if root.address}
    answered = observe.ping(lab, probes)
    for probe, host in sorted(probes.items(), key=lambda item: item[1]):
        if not answered[probe]:
            faulty.add(host)
            findings.append(_finding("LAB-BMC", OOB_DHCP_CONFIG, f"{host}'s BMC leases {probe.target} but does not "
                                     f"answer from the oob network ({root.name}, {probe.source})", hint))
    counts["bmc_leases"] = len(set(leases) - faulty)
    return findings


def _json(text: str) -> list[dict[str, Any]]:
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def _lldp(lab: Lab, spec: ClusterSpec, topology: Topology, counts: dict[str, int]) -> list[Finding]:
    devices = set(lab.state["namespaces"]) & set(topology.nodes)  # the BMCs and the oob DHCP server are no design device
    cables = lab_cables(spec, topology, devices)
    with tempfile.TemporaryDirectory() as folder:
        for name, text in observe.lldp_files(lab).items():
            (Path(folder) / name).write_text(text)
        gathered = gather(topology, cables, Path(folder), None, None)
    result = verify(spec, topology, cables, gathered, networks={"fabric"})
    counts["lldp_cables"] = len(cables)
    return [_finding("LAB-LLDP", finding.path, f"{finding.rule}: {finding.message}", finding.hint)
            for finding in result.findings
            if finding.severity >= Severity.WARNING and finding.rule not in NOT_EMULATED]
