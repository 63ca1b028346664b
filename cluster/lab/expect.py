"""What a correct lab shows, derived from the design alone (never from the rendered files or the
lab itself): the BGP sessions and the peer's ASN, every prefix on every switch with its ECMP
width, which host rails reach which, and the MTU every path carries.

ECMP widths follow eBGP over a Clos (RFC 7938): traffic climbs to a switch from which the
destination lies below and then descends (a valley would repeat an upper tier's ASN, which BGP
refuses), so a switch's next hops for a prefix are its links on the shortest such path. A width
is capped at the switch's `maximum-paths` (cluster.ecmp), as FRR caps it. With `failed`
switches or cables, the same rules give the fabric after the failure (`lab fail`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache

from cluster.addressing import allocate
from cluster.qos import host_plan
from cluster.render.views import Switch, qos_view, switch_views
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology

INFINITY = 10**6


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
    _memo: dict[tuple[object, ...], dict[str, int]] = field(default_factory=dict, compare=False, repr=False)

    def routes(self, switch: str, failed: frozenset[str] = frozenset(),
               fewer: tuple[tuple[str, str, int], ...] = ()) -> dict[str, int]:
        """{prefix: ECMP width} the switch should hold, without the `failed` switches and with
        `fewer` cables ((lower, upper, count) taken away)."""
        key = (switch, failed, fewer)
        if key not in self._memo:
            links = dict(self.links)
            for lower, upper, count in fewer:
                links[(lower, upper)] = links.get((lower, upper), 0) - count
            self._memo[key] = _routes(self, switch, failed, tuple(sorted(links.items())))
        return self._memo[key]

    def reachable(self, source: str, target: str, failed: frozenset[str] = frozenset()) -> bool:
        """Whether traffic from leaf `source` reaches leaf `target` along the fabric's routes."""
        if source == target:
            return source not in failed
        origin_prefixes = [prefix for prefix, origin in self.origins.items() if origin == target]
        routes = self.routes(source, failed)
        return bool(origin_prefixes) and all(routes.get(prefix, 0) > 0 for prefix in origin_prefixes[:1])


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
        pool = pools[topology.graph.nodes[host]["pool"]]
        for _, leaf, network, edge in topology.graph.edges(host, keys=True, data=True):
            if network != FABRIC or leaf not in switches:
                continue
            for index, (nic, port) in enumerate(edge["ports"]):
                own, _ = addresses.link(host, leaf, network, index)
                rails.append(RailAddress(host, nic * pool.fabric_nics.ports_per_nic + port, own.split("/")[0], leaf))
    links: dict[tuple[str, str], int] = defaultdict(int)
    upper_of: dict[str, set[str]] = defaultdict(set)
    lower_of: dict[str, set[str]] = defaultdict(set)
    for name in switches:
        for _, peer, network, data in topology.graph.edges(name, keys=True, data=True):
            if network == FABRIC and peer in switches and data["lower"] == name:
                links[(name, peer)] += data["links"]
                upper_of[name].add(peer)
                lower_of[peer].add(name)
    host_mtu = qos_view(spec.qos, host_plan(spec.qos)).mtu if spec.qos is not None else 1500
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


def _routes(expected: Design, switch: str, failed: frozenset[str],
            links: tuple[tuple[tuple[str, str], int], ...]) -> dict[str, int]:
    counts = {pair: count for pair, count in links if count > 0}
    if switch in failed:
        return {}

    def uppers(name: str) -> list[str]:
        return [up for up in expected.upper_of.get(name, ()) if up not in failed and counts.get((name, up), 0) > 0]

    def lowers(name: str) -> list[str]:
        return [low for low in expected.lower_of.get(name, ()) if low not in failed and counts.get((low, name), 0) > 0]

    result: dict[str, int] = {}
    by_origin: dict[str, list[str]] = defaultdict(list)
    for prefix, origin in expected.origins.items():
        if origin != switch and origin not in failed:
            by_origin[origin].append(prefix)
    for origin, prefixes in by_origin.items():

        @cache
        def down(name: str, target: str = origin) -> int:
            """Hops from `name` down to the origin, descending only."""
            if name == target:
                return 0
            return min((1 + down(low) for low in lowers(name)), default=INFINITY)

        @cache
        def anywhere(name: str) -> int:
            """Hops along the shortest up-then-down path."""
            return min([down(name), *(1 + anywhere(up) for up in uppers(name))])

        best = anywhere(switch)
        if best >= INFINITY:
            continue
        width = 0
        if down(switch) == best:
            width += sum(counts[(low, switch)] for low in lowers(switch) if 1 + down(low) == best)
        else:
            width += sum(counts[(switch, up)] for up in uppers(switch) if 1 + anywhere(up) == best)
        width = min(width, expected.maximum_paths.get(switch, width))
        for prefix in prefixes:
            result[prefix] = width
    return result
