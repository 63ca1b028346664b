"""What a correct lab shows, derived from the design alone (never from the rendered files or the
lab itself): the BGP sessions and the peer's ASN, every prefix on every switch with its ECMP
width, which host rails reach which, and the MTU every path carries.

ECMP widths follow eBGP as the rendered configs leave it (no policy, multipath-relax; RFC 7938):
a switch keeps the shortest AS paths to a prefix over every session that offers one and refuses a
path that holds its own ASN (RFC 4271's loop prevention), so spines sharing an ASN reach neither
each other's loopbacks nor anything through a valley. A width is the number of those sessions
(one per cable), capped at the switch's `maximum-paths` (cluster.ecmp), as FRR caps it. With `failed`
switches or cables, the same rules give the fabric after the failure (`lab fail`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from cluster.addressing import allocate
from cluster.intent.qos import qos_intent
from cluster.intent.switch import Switch, switch_views
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology


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


@dataclass(frozen=True)
class Design:
    """Expectations for the devices of one lab."""

    asns: dict[str, int]
    sessions: dict[str, tuple[Session, ...]]  # switch -> its in-lab sessions
    origins: dict[str, str]  # prefix -> the switch that announces it
    rails: tuple[RailAddress, ...]
    host_mtu: int
    switch_mtu: int
    maximum_paths: dict[str, int]
    links: dict[tuple[str, str], int]  # (lower, upper) switch pair -> cables between them
    upper_of: dict[str, tuple[str, ...]]
    lower_of: dict[str, tuple[str, ...]]
    _memo: dict[tuple[object, ...], dict[str, dict[str, int]]] = field(default_factory=dict, compare=False, repr=False)

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
            self._memo[key] = _routes(self, failed, tuple(sorted(links.items())))
        return dict(self._memo[key].get(switch, {}))

    def reachable(self, source: str, target: str, failed: frozenset[str] = frozenset()) -> bool:
        """Whether traffic from leaf `source` reaches leaf `target` along the fabric's routes."""
        if source == target:
            return source not in failed
        announced = next((prefix for prefix, origin in self.origins.items() if origin == target), None)
        return announced is not None and self.routes(source, failed).get(announced, 0) > 0


def design(spec: ClusterSpec, topology: Topology, switches: set[str], hosts: set[str]) -> Design:
    """The expectations for a lab holding `switches` and `hosts` of this design."""
    addresses = allocate(spec, topology)
    views: dict[str, Switch] = {view.name: view for view in switch_views(spec, topology, addresses, None,
                                                                        sorted(switches))}
    sessions = {}
    origins: dict[str, str] = {}
    rails = []
    for name, view in views.items():
        sessions[name] = tuple(Session(port.peer, port.peer_address, port.peer_asn, port.name)
                               for port in view.neighbors
                               if port.peer in switches and port.peer_address and port.peer_asn is not None)
        if view.loopback:
            origins[f"{view.loopback}/32"] = name
        for port in view.ports:
            if port.role == "host" and port.peer in hosts and port.peer_address:
                network = f"{port.peer_address}/31"
                origins[network] = name
    pools = {pool.name: pool for pool in spec.pools}
    for host in sorted(hosts):
        pool = pools[topology.host(host)["pool"]]
        for leaf, network, edge in topology.cables(host):
            if network != FABRIC or leaf not in switches:
                continue
            for index, (nic, nic_port) in enumerate(edge["ports"]):
                own, _ = addresses.link(host, leaf, network, index)
                rails.append(RailAddress(host, nic * pool.fabric_nics.ports_per_nic + nic_port, own.split("/")[0], leaf))
    links: dict[tuple[str, str], int] = defaultdict(int)
    upper_of: dict[str, set[str]] = defaultdict(set)
    lower_of: dict[str, set[str]] = defaultdict(set)
    for name in switches:
        for peer, network, data in topology.cables(name):
            if network == FABRIC and peer in switches and data["lower"] == name:
                links[(name, peer)] += data["links"]
                upper_of[name].add(peer)
                lower_of[peer].add(name)
    host_mtu = qos_intent(spec.qos).host.mtu if spec.qos is not None else 1500
    return Design(
        asns={name: addresses.asns[name] for name in views if name in addresses.asns},
        sessions=sessions,
        origins=origins,
        rails=tuple(sorted(rails, key=lambda rail: (rail.host, rail.rail))),
        host_mtu=host_mtu,
        switch_mtu=min((port.mtu for view in views.values() for port in view.ports), default=9216),
        maximum_paths={name: view.maximum_paths for name, view in views.items()},
        links=dict(links),
        upper_of={name: tuple(sorted(peers)) for name, peers in upper_of.items()},
        lower_of={name: tuple(sorted(peers)) for name, peers in lower_of.items()},
    )


def _routes(expected: Design, failed: frozenset[str],
            links: tuple[tuple[tuple[str, str], int], ...]) -> dict[str, dict[str, int]]:
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
            frontier = sorted(offers)
    return result
