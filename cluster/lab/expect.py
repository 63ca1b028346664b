"""What a correct lab shows, derived from the design alone (never from the rendered files or the
lab itself): the BGP sessions and the peer's ASN, every prefix on every switch with its ECMP
width, which host rails reach which, and the MTU every path carries.

ECMP widths follow eBGP as the rendered configs leave it (no policy, multipath-relax; RFC 7938):
a switch keeps the shortest AS paths to a prefix over every session that offers one and refuses a
path that holds its own ASN (RFC 4271's loop prevention), so spines sharing an ASN reach neither
each other's loopbacks nor anything through a valley. A width is the number of those sessions
(one per cable), capped at the most equal-cost paths the switch's OS installs (its dialect's
`max_paths`), never at the `maximum-paths` the renderer computes, so a config that narrows it
shows. With `failed` switches or cables, the same rules give the fabric after the failure.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from ipaddress import ip_interface, ip_network

from cluster.addressing import allocate
from cluster.dialects import platform
from cluster.intent.hostnet import MTU as HOST_NET_MTU
from cluster.intent.qos import SWITCH_MTU, fabric_qos_intent
from cluster.intent.switch import BFD_TIMERS, BfdTimers
from cluster.lab.model import LAB_NETWORKS
from cluster.naming import host_interfaces
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology
from cluster.verify.expected import expected_cables


@dataclass(frozen=True)
class Session:
    peer: str  # the peer switch
    peer_address: str
    peer_asn: int
    port: str  # this switch's port


@dataclass(frozen=True)
class RailAddress:
    host: str
    rail: int
    address: str  # a.b.c.d (no length)
    leaf: str
    gateway: str  # the leaf's end of the rail's /31 (a.b.c.d)


@dataclass(frozen=True)
class NetPort:
    """A host's port on the storage or management network, as the design addresses it."""

    host: str
    network: str
    position: int  # among the host's ports of that network (NIC-major)
    netdev: str
    address: str  # a.b.c.d (no length)
    leaf: str
    gateway: str  # the leaf's end of the port's /31 (a.b.c.d)


@dataclass(frozen=True)
class Design:
    """Expectations for the devices of one lab."""

    asns: dict[str, int]
    sessions: dict[str, tuple[Session, ...]]  # switch -> its in-lab sessions
    origins: dict[str, str]  # prefix -> the switch that announces it
    rails: tuple[RailAddress, ...]
    ports: tuple[NetPort, ...]  # the hosts' storage and management ports
    fabric: frozenset[str]  # the GPU fabric's switches (the others: storage and management)
    host_mtu: int
    switch_mtu: int
    port_mtu: dict[str, int]  # a host's storage or management port's MTU, per network
    maximum_paths: dict[str, int]  # each switch OS's most equal-cost paths (absent: no cap)
    links: dict[tuple[str, str], int]  # (lower, upper) switch pair -> cables between them
    upper_of: dict[str, tuple[str, ...]]
    lower_of: dict[str, tuple[str, ...]]
    bfd: BfdTimers  # on every session
    _memo: dict[tuple[object, ...], dict[str, dict[str, int]]] = field(default_factory=dict, compare=False, repr=False)
    _offers: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict, compare=False, repr=False)

    def routes(self, switch: str, failed: frozenset[str] = frozenset(),
               fewer: tuple[tuple[str, str, int], ...] = ()) -> dict[str, int]:
        """{prefix: ECMP width} the switch should hold, without the `failed` switches and with
        `fewer` cables ((lower, upper, count) taken away)."""
        if switch in failed:
            return {}
        key = (failed, fewer)
        if key not in self._memo:
            links = dict(self.links)
            for lower, upper, count in fewer:
                links[(lower, upper)] = links.get((lower, upper), 0) - count
            self._memo[key] = _routes(self, failed, tuple(sorted(links.items())),
                                      self._offers if key == (frozenset(), ()) else {})
        return dict(self._memo[key].get(switch, {}))

    def offered_by(self, switch: str, prefix: str) -> tuple[str, ...]:
        """The neighbor switches the design's routing (nothing failed) has offer `prefix` to `switch`
        on a shortest path: those its ECMP set holds."""
        self.routes(switch)  # the design's own routes, simulated once (memoized)
        return self._offers.get(switch, {}).get(prefix, ())

    def reachable(self, source: str, target: str, failed: frozenset[str] = frozenset()) -> bool:
        """Whether traffic from leaf `source` reaches leaf `target` along the fabric's routes."""
        if source == target:
            return source not in failed
        announced = next((prefix for prefix, origin in self.origins.items() if origin == target), None)
        return announced is not None and self.routes(source, failed).get(announced, 0) > 0


def design(spec: ClusterSpec, topology: Topology, switches: set[str], hosts: set[str]) -> Design:
    """The expectations for a lab holding `switches` and `hosts` of this design: sessions from
    the design's cables and the addressing plan, ECMP widths capped at each OS's own limit (not at
    the `maximum-paths` the renderer computes, so a renderer that writes ECMP 1 shows), the MTUs
    from the QoS plan, BFD timers from the design's."""
    addresses = allocate(spec, topology)
    sessions: dict[str, list[Session]] = {name: [] for name in sorted(switches)}
    origins: dict[str, str] = {}
    rails = []
    ports = []
    links: dict[tuple[str, str], int] = defaultdict(int)
    upper_of: dict[str, set[str]] = defaultdict(set)
    lower_of: dict[str, set[str]] = defaultdict(set)
    pools = {pool.name: pool for pool in spec.pools}
    for name in sessions:
        loopback = addresses.loopback(name)
        if loopback is not None:
            origins[f"{loopback}/32"] = name
    seen: dict[tuple[str, str, str], int] = defaultdict(int)  # a bundle's cables come in link order
    for cable in expected_cables(spec, topology, switches | hosts):
        lower, upper = cable.lower.device, cable.upper.device
        index = seen[(lower, upper, cable.network)]
        seen[(lower, upper, cable.network)] += 1
        if cable.network not in LAB_NETWORKS or lower not in switches | hosts or upper not in switches:
            continue
        lower_side, upper_side = addresses.link(lower, upper, cable.network, index)
        if lower in hosts:
            origins[str(ip_interface(lower_side).network)] = upper
            nic, nic_port = topology.cable(lower, upper, cable.network)["ports"][index]
            pool = pools[topology.host(lower)["pool"]]
            position = nic * pool.nics(cable.network).ports_per_nic + nic_port
            if cable.network == FABRIC:
                rails.append(RailAddress(lower, position, lower_side.split("/")[0], upper, upper_side.split("/")[0]))
            else:
                ports.append(NetPort(lower, cable.network, position, host_interfaces(pool, cable.network)[position],
                                     lower_side.split("/")[0], upper, upper_side.split("/")[0]))
            continue
        sessions[lower].append(Session(upper, upper_side.split("/")[0], addresses.asns[upper], cable.lower.port))
        sessions[upper].append(Session(lower, lower_side.split("/")[0], addresses.asns[lower], cable.upper.port))
        links[(lower, upper)] += 1
        upper_of[lower].add(upper)
        lower_of[upper].add(lower)
    qos = fabric_qos_intent(spec)
    limits = {name: platform(topology.switch(name)["os"]).max_paths for name in sessions}
    return Design(
        asns={name: addresses.asns[name] for name in sessions if name in addresses.asns},
        sessions={name: tuple(found) for name, found in sessions.items()},
        origins=origins,
        rails=tuple(sorted(rails, key=lambda rail: (rail.host, rail.rail))),
        ports=tuple(sorted(ports, key=lambda port: (port.host, port.network, port.position))),
        fabric=frozenset(name for name in switches if topology.switch(name)["network"] == FABRIC),
        host_mtu=qos.host.mtu if qos is not None else 1500,
        switch_mtu=qos.switch.mtu if qos is not None else SWITCH_MTU,
        port_mtu=dict(HOST_NET_MTU),
        maximum_paths={name: limit for name, limit in limits.items() if limit is not None},
        links=dict(links),
        upper_of={name: tuple(sorted(peers)) for name, peers in upper_of.items()},
        lower_of={name: tuple(sorted(peers)) for name, peers in lower_of.items()},
        bfd=BFD_TIMERS,
    )


def _routes(expected: Design, failed: frozenset[str], links: tuple[tuple[tuple[str, str], int], ...],
            offers_out: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, dict[str, int]]:
    """{switch: {prefix: ECMP width}} for every switch that is up, by simulating eBGP's choice per
    originating switch: a route travels one session hop at a time, a switch refuses one whose AS
    path holds its own ASN, keeps the shortest AS paths over all its sessions that offer them
    (multipath-relax: equal length, any ASNs) and passes on one of them (its best: the first
    neighbor by name, as the next switches only read its ASNs)."""
    counts = {pair: count for pair, count in links if count > 0}
    neighbors: dict[str, dict[str, int]] = defaultdict(dict)
    for (lower, upper), count in counts.items():
        if lower not in failed and upper not in failed:
            neighbors[lower][upper] = count
            neighbors[upper][lower] = count
    asn = expected.asns
    by_origin: dict[str, list[str]] = defaultdict(list)
    for prefix, origin in expected.origins.items():
        if origin not in failed:
            by_origin[origin].append(prefix)
    result: dict[str, dict[str, int]] = defaultdict(dict)
    for origin, prefixes in by_origin.items():
        sent: dict[str, tuple[int | None, ...]] = {origin: (asn.get(origin),)}  # switch -> the AS path it announces
        frontier = [origin]
        while frontier:
            offers: dict[str, list[str]] = defaultdict(list)
            for speaker in frontier:
                for peer in neighbors[speaker]:
                    if peer not in sent and asn.get(peer) not in sent[speaker]:
                        offers[peer].append(speaker)
            for peer, speakers in offers.items():
                speakers.sort()
                sent[peer] = (asn.get(peer), *sent[speakers[0]])
                width = sum(neighbors[peer][speaker] for speaker in speakers)
                width = min(width, expected.maximum_paths.get(peer, width))
                for prefix in prefixes:
                    result[peer][prefix] = width
                    offers_out.setdefault(peer, {})[prefix] = tuple(speakers)
            frontier = sorted(offers)
    return result


@dataclass(frozen=True)
class OobLeases:
    """What the hosts' BMCs show on the out-of-band network, from the design alone: the oob switch
    port each BMC is cabled to and, where the design sets `management_plane.dhcp_server`, the lease
    each gets from it: an address of the pool (the second quarter of `addressing.oob`; the first is
    the site's static part, the upper half the switches'), the segment's prefix length and
    `management_plane.gateway` as its router."""

    ports: dict[str, tuple[str, str]]  # host -> (oob switch, its port as the switch names it)
    server: str | None  # the DHCP server's address (None: the design plans none)
    pool: tuple[str, str]  # its first and last address
    prefix: int
    router: str


def oob_leases(spec: ClusterSpec, topology: Topology, hosts: set[str]) -> OobLeases:
    """The BMC expectations of a lab holding `hosts`."""
    segment = ip_network(spec.addressing.oob)
    quarter = segment.num_addresses // 4
    first, last = segment.network_address + quarter, segment.network_address + 2 * quarter - 1
    plane = spec.management_plane
    ports = {cable.lower.device: (cable.upper.device, cable.upper.port)
             for cable in expected_cables(spec, topology, hosts)
             if cable.network == "oob" and cable.lower.device in hosts}
    router = plane.gateway if plane.gateway is not None else segment.network_address + 1
    return OobLeases(ports, str(plane.dhcp_server) if plane.dhcp_server is not None else None,
                     (str(first), str(last)), segment.prefixlen, str(router))
