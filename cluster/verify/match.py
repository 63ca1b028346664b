"""Compare what the devices report with the design's cables: CABLE-* findings.

Three steps, each a pure function:
1. `claims`: every report "port X sees port Y" in design names (`observe.py` builds them);
2. `resolve`: one peer per port. A port may list an old neighbor beside the new one until the
   old one's hold time runs out (re-cabling), and the two ends of a moved cable may disagree
   for the same reason; the freshest report wins, so stale neighbors produce no findings;
3. `compare`: the resolved links against the designed cables.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from cluster.findings import Finding, Severity, shown
from cluster.records import Node
from cluster.verify.expected import BMC_PORT, Cable, End, by_end

# Rule id -> (title, what it means, default severity): the CABLE-* contract, for reports and SARIF.
CABLE_RULES: dict[str, tuple[str, str, Severity]] = {
    "CABLE-MISSING": ("designed cable not linked",
                      "A designed cable shows no link: neither end reports a neighbor on its port.", Severity.ERROR),
    "CABLE-WRONG-PEER": ("cable on the wrong port",
                         "A designed port reports a different device or port than the design has, naming the "
                         "expected and the found rail, leaf and port.", Severity.ERROR),
    "CABLE-SWAPPED": ("two cables exchanged",
                      "Two designed cables have exchanged ends; reported once for the pair.", Severity.ERROR),
    "CABLE-SPEED": ("link below design speed",
                    "A correctly cabled link runs slower than the design's link speed.", Severity.ERROR),
    "CABLE-UNEXPECTED": ("link the design lacks",
                         "Two ports the design leaves empty report each other.", Severity.WARNING),
    "CABLE-UNVERIFIED": ("designed cables not seen",
                         "Designed cables whose ends no neighbor data covers (no file from either end's device), "
                         "one finding per network and tier: the fabric is not shown to be built. An error; a warning "
                         "with verify --partial, except when not one designed cable was seen.", Severity.ERROR),
    "CABLE-INPUT": ("neighbor data that cannot be read",
                    "A neighbor file (or folder, or discovery) that cannot be read or parsed, or a second file for "
                    "one device: nothing is compared and verify exits 2.", Severity.ERROR),
}


#: Names and ports a device reports that the design does not have are shown up to this length
#: (LLDP allows 255 characters; a file may hold anything).
REPORTED_CHARACTERS = 64


class Claim(NamedTuple):
    """`local` reports `remote` as its neighbor; `age` in seconds (None: unknown). A tuple, as
    `End` is: one per port reported, a million at 131,072 GPUs."""

    local: End
    remote: End
    age: float | None = None
    gbps: float | None = None


class Link(NamedTuple):
    """A link both ends agree on (or one end reports and nothing contradicts)."""

    a: End
    b: End
    gbps: float | None


@dataclass
class Comparison:
    """The findings plus, per (network, tier), how many designed cables matched."""

    findings: list[Finding]
    matched: dict[tuple[str, str], int] = field(default_factory=dict)
    expected: dict[tuple[str, str], int] = field(default_factory=dict)
    unverified: dict[tuple[str, str], int] = field(default_factory=dict)
    observed_links: int = 0
    # per (network, tier), the designed cables no data covers, in design order
    unseen: dict[tuple[str, str], list[Cable]] = field(default_factory=dict)


def cable_finding(rule: str, path: str, message: str, hint: str) -> Finding:
    """A CABLE-* finding at its rule's default severity."""
    return Finding(rule, CABLE_RULES[rule][2], path, message, hint)


def _age_key(claim: Claim) -> float:
    return math.inf if claim.age is None else claim.age


def resolve(claims: Iterable[Claim], designed: dict[End, Cable]) -> list[Link]:
    """One peer per port, freshest report first; a stale report that contradicts a fresher one is dropped.

    Among equally fresh reports (or ages unknown), the one the design expects wins: a port
    listing its old and its new neighbor with no way to tell them apart is not a finding.

    When no two reports contradict each other (each port reported with one peer, as in a fabric
    cabled as built), the order decides nothing: the links are read off in one pass, unsorted.
    """
    claims = claims if isinstance(claims, list) else list(claims)
    links = uncontested(claims)
    if links is not None:
        return links

    def rank(claim: Claim) -> tuple[float, int]:
        cable = designed.get(claim.local)
        expected = cable is not None and (cable.upper if claim.local == cable.lower else cable.lower) == claim.remote
        return math.inf if claim.age is None else claim.age, 0 if expected else 1

    # stable: equal ranks keep the input's (sorted file) order; with no design, the age is the rank
    ranked = sorted(claims, key=rank if designed else _age_key)
    bound: dict[End, End] = {}
    # per link (by its lower end: a port, once bound, keeps its peer), the lowest speed reported (first on a tie)
    slowest: dict[End, float] = {}
    for local, remote, _, gbps in ranked:
        if local == remote:
            continue
        peer_of_local, peer_of_remote = bound.get(local), bound.get(remote)
        if (peer_of_local is not None and peer_of_local != remote) or (peer_of_remote is not None
                                                                      and peer_of_remote != local):
            continue  # a fresher report already placed one of these ports elsewhere
        bound[local], bound[remote] = remote, local
        _slowest(slowest, local, remote, gbps)
    return _links(bound, slowest)


def _slowest(slowest: dict[End, float], local: End, remote: End, gbps: float | None) -> None:
    """Keep the lowest speed reported for the link of `local` and `remote`, by its lower end."""
    if gbps is not None:
        lower = local if local < remote else remote
        known = slowest.get(lower)
        if known is None or gbps < known:
            slowest[lower] = gbps


def _links(bound: dict[End, End], slowest: dict[End, float]) -> list[Link]:
    """The links of `bound` (each port -> its peer), by their lower ends: each port is in one link,
    so its lower end alone orders them (and sorts faster than pairs)."""
    ends = sorted(end for end, peer in bound.items() if end < peer)
    return [Link(end, bound[end], slowest.get(end)) for end in ends]


def uncontested(claims: list[Claim]) -> list[Link] | None:
    """`resolve` of claims no two of which give one port different peers (None when two do):
    every claim then binds its two ports or repeats a binding, in any order. (A million claims at
    131,072 GPUs: each link's lower end is kept when it is bound, the links sorted by it.)"""
    bound: dict[End, End] = {}
    slowest: dict[End, float] = {}
    lower_ends: list[End] = []
    get = bound.get
    for local, remote, _, gbps in claims:
        if local == remote:
            continue
        peer_of_local = get(local)
        if peer_of_local is None:
            if get(remote) is not None:
                return None
            bound[local], bound[remote] = remote, local
            lower = local if local < remote else remote
            lower_ends.append(lower)
            if gbps is not None:
                slowest[lower] = gbps
        elif peer_of_local != remote or get(remote) != local:
            return None
        elif gbps is not None:
            _slowest(slowest, local, remote, gbps)
    lower_ends.sort()
    return [Link(end, bound[end], slowest.get(end)) for end in lower_ends]


def describe(nodes: Mapping[str, Node], end: End) -> str:
    """`rail 1 leaf leaf-001-r1 port swp7`, `spine spine-001 port swp9`, `host h-node-001 port rail0`."""
    node = nodes.get(end.device)
    port = shown(end.port, REPORTED_CHARACTERS)  # a port name as a device reported it: any length
    if node is None:
        return f"{shown(end.device, REPORTED_CHARACTERS)} port {port} (not in the design)"
    if node["kind"] == "host":
        return f"host {end.device} port {port}"
    rail = node["rail"] if node["kind"] == "switch" else None
    prefix = f"rail {rail} " if rail is not None and node["network"] == "fabric" else ""
    return f"{prefix}{node['tier']} {end.device} port {port}"


def _label(cable: Cable) -> str:
    rail = f", rail {cable.rail}" if cable.rail is not None and cable.network == "fabric" else ""
    return f"{cable.network} {cable.tier}{rail}"


def compare(nodes: Mapping[str, Node], cables: list[Cable], links: list[Link],
            reporting: set[tuple[str, str]], designed: dict[End, Cable] | None = None) -> Comparison:
    """Findings for every designed cable that is not as designed, and every link the design lacks.

    `reporting`: (device, network) pairs whose neighbor data was read (network "*": all); a
    cable neither of whose ends the data covers is counted as unverified, not missing.
    `designed`: by_end(cables), when the caller has it.
    """
    designed = by_end(cables) if designed is None else designed
    linked: dict[End, End] = {}  # each linked port -> its peer: read only where a link or a cable is not as designed

    def peers() -> dict[End, End]:
        if links and not linked:
            for link in links:
                linked[link.a], linked[link.b] = link.b, link.a
        return linked

    result = Comparison(findings=[], observed_links=len(links))
    result.expected = dict(Counter((cable.network, cable.tier) for cable in cables))
    explained: set[int] = set()
    swaps: set[frozenset[int]] = set()
    for link in links:
        cable_a, cable_b = designed.get(link.a), designed.get(link.b)
        if cable_a is not None and cable_a is cable_b:
            key = (cable_a.network, cable_a.tier)
            result.matched[key] = result.matched.get(key, 0) + 1
            explained.add(id(cable_a))
            if link.gbps is not None and link.gbps < cable_a.gbps:
                result.findings.append(cable_finding(
                    "CABLE-SPEED", cable_a.path,
                    f"{cable_a} ({_label(cable_a)}) runs at {link.gbps:g} Gb/s, the design expects {cable_a.gbps} Gb/s",
                    "check the optic or cable type and the port speed on both ends, then re-seat or replace it"))
            continue
        if cable_a is not None and cable_b is not None:
            partner_a, partner_b = cable_a.other(link.a), cable_b.other(link.b)
            if peers().get(partner_a) == partner_b:
                pair = frozenset((id(cable_a), id(cable_b)))
                explained.update(pair)
                if pair not in swaps:
                    swaps.add(pair)
                    result.findings.append(_swapped(nodes, cable_a, cable_b, peers()))
                continue
        subject = _subject(link, cable_a, cable_b)
        if subject is None:
            result.findings.append(cable_finding(
                "CABLE-UNEXPECTED", _network_path(nodes, link),
                f"{describe(nodes, link.a)} <-> {describe(nodes, link.b)}: a link the design does not have",
                "remove the cable, or add the link to the design; suppress CABLE-UNEXPECTED to ignore extra links"))
            continue
        end, cable = subject
        found = link.b if end == link.a else link.a
        explained.add(id(cable))
        other = designed.get(found)
        owner = f", a port the design gives to {other.other(found)}" if other is not None else ""
        if other is not None:
            explained.add(id(other))
        result.findings.append(cable_finding(
            "CABLE-WRONG-PEER", cable.path,
            f"{describe(nodes, end)} ({_label(cable)}): expected {describe(nodes, cable.other(end))}, "
            f"found {describe(nodes, found)}{owner}",
            f"move the cable at {end} to {cable.other(end)}"))
    for cable in cables:
        if id(cable) in explained or cable.lower in peers() or cable.upper in peers():
            continue
        key = (cable.network, cable.tier)
        if not (_observed(cable.lower, cable.network, reporting) or _observed(cable.upper, cable.network, reporting)):
            result.unverified[key] = result.unverified.get(key, 0) + 1
            result.unseen.setdefault(key, []).append(cable)
            continue
        result.findings.append(cable_finding(
            "CABLE-MISSING", cable.path,
            f"{cable} ({_label(cable)}): no link, neither end reports a neighbor",
            "plug in the cable (or check optics and link state on both ends), then collect the neighbor data again"))
    result.findings.sort(key=Finding.sort_key)
    return result


SHOWN_DEVICES = 4


def unseen_findings(comparison: Comparison, foreign: list[str], partial: bool) -> list[Finding]:
    """CABLE-UNVERIFIED per (network, tier) with designed cables that no data covers: an error (a
    warning when the collection is `partial` on purpose), and an error in any case when not one
    designed cable matched. `foreign` names the neighbor files of devices the design lacks."""
    nothing_seen = not any(comparison.matched.values())
    severity = Severity.WARNING if partial and not nothing_seen else Severity.ERROR
    findings = []
    for key, cables in sorted(comparison.unseen.items()):
        devices = sorted({end.device for cable in cables for end in (cable.lower, cable.upper)})
        listed = ", ".join(devices[:SHOWN_DEVICES]) + (f" and {len(devices) - SHOWN_DEVICES} more"
                                                       if len(devices) > SHOWN_DEVICES else "")
        network, tier = key
        message = (f"{len(cables)} of {comparison.expected[key]} designed {network} {tier} cables not seen: no neighbor "
                   f"data from either end (none from {listed})")
        if nothing_seen:
            message += "; not one designed cable was seen in the data given"
        hint = ("collect the neighbor data of one end of each cable (a switch's file covers every cable on it), "
                "or check only the networks collected with --network; --partial makes this a warning for a "
                "collection that is partial on purpose")
        if foreign:
            named = ", ".join(foreign[:SHOWN_DEVICES]) + (f" and {len(foreign) - SHOWN_DEVICES} more"
                                                         if len(foreign) > SHOWN_DEVICES else "")
            hint = (f"the data names devices the design does not have ({named}): name each file after its device "
                    f"as the design does (leaf-001-r0.json); or {hint}")
        findings.append(Finding("CABLE-UNVERIFIED", severity, cables[0].path, message, hint))
    return findings


def _observed(end: End, network: str, reporting: set[tuple[str, str]]) -> bool:
    """Whether the data read covers this port. A host's own LLDP never sees its BMC port."""
    if end.port == BMC_PORT:
        return False
    return (end.device, "*") in reporting or (end.device, network) in reporting


def _subject(link: Link, cable_a: Cable | None, cable_b: Cable | None) -> tuple[End, Cable] | None:
    """The end to report a wrong link at: the one nearer the hosts that has a designed cable."""
    options = [(end, cable) for end, cable in ((link.a, cable_a), (link.b, cable_b)) if cable is not None]
    if not options:
        return None
    options.sort(key=lambda item: (item[1].lower != item[0], item[0]))
    return options[0]


def _swapped(nodes: Mapping[str, Node], first: Cable, second: Cable, linked: dict[End, End]) -> Finding:
    """Two designed cables whose ends are exchanged, reported once, described from the hosts' side."""
    first, second = sorted((first, second), key=lambda cable: (cable.lower, cable.upper))

    def reaches(cable: Cable) -> str:
        end = cable.lower if cable.lower in linked else cable.upper
        return f"{describe(nodes, end)} reaches {describe(nodes, linked[end])}"

    rails = ""
    if first.rail is not None and second.rail is not None and first.network == "fabric":
        rails = f" (both rail {first.rail})" if first.rail == second.rail else f" (rail {first.rail} and rail {second.rail})"
    return cable_finding(
        "CABLE-SWAPPED", first.path,
        f"cables swapped{rails}: {reaches(first)} and {reaches(second)}; the design has {first} and {second}",
        f"exchange the cables plugged into {first.upper} and {second.upper}")


def _network_path(nodes: Mapping[str, Node], link: Link) -> str:
    for end in (link.a, link.b):
        node = nodes.get(end.device)
        if node is not None:
            return node["network"] if node["kind"] != "host" else "node_pools"
    return "(cabling)"
