"""One verification: design cables + neighbor data -> findings and a per-tier summary."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from cluster.findings import Finding, Severity, apply_policy, shown
from cluster.lldp import Neighbor
from cluster.spec import ClusterSpec
from cluster.topology import Topology
from cluster.verify.expected import Cable, by_end, port_aliases
from cluster.verify.infiniband import IbLink, parse_ib, parse_node_name_map
from cluster.verify.match import Claim, Comparison, Link, compare, resolve, unseen_findings
from cluster.verify.observe import Names, ib_claims, lldp_claims, parsed, read_lldp_dir


@dataclass
class Verification:
    """Findings after the stack's policy (suppress, fail_on), and the cable counts."""

    findings: list[Finding]
    comparison: Comparison
    fail_on: Severity

    @property
    def ok(self) -> bool:
        return not any(finding.severity >= self.fail_on for finding in self.findings)

    @property
    def unreadable(self) -> bool:
        """Some input could not be read (CABLE-INPUT): nothing was compared."""
        return any(finding.rule == "CABLE-INPUT" for finding in self.findings)

    @property
    def exit_code(self) -> int:
        return 2 if self.unreadable else 0 if self.ok else 1


@dataclass
class Gathered:
    """Claims from every input, which (device, network) reported ("*": every network), and a
    CABLE-INPUT finding for every input that could not be read (then nothing is compared).
    `foreign`: the neighbor files named after a device the design does not have."""

    claims: list[Claim]
    reporting: set[tuple[str, str]]
    unreadable: list[Finding]
    foreign: list[str] = field(default_factory=list)
    #: The claims already resolved in design names, when the caller holds them (an import whose
    #: reader resolved the same claims in the same names: cluster.importer.same_names); None:
    #: `verify` resolves `claims`.
    links: list[Link] | None = None


IB_HINT = "run `ibnetdiscover` (or `ibnetdiscover -p`) on a host of the fabric again and pass its output as it is"
IB_MAP_HINT = 'write one `0xGUID "design name"` line per node, as ibnetdiscover\'s --node-name-map takes it'


def gather(topology: Topology, cables: list[Cable], lldp: Path | None, ib: Path | None,
           ib_map: Path | None) -> Gathered:
    """Claims from every input, in design names; every unreadable input as a finding."""
    unreadable: list[Finding] = []
    devices: dict[str, list[Neighbor]] = {}
    links: list[IbLink] | None = None
    guid_names: dict[int, str] | None = {}
    if lldp is not None:
        devices, unreadable = read_lldp_dir(lldp)
    if ib is not None:
        guid_names = (parsed(ib_map, "node-name map", parse_node_name_map, IB_MAP_HINT, unreadable)
                      if ib_map is not None else {})
        links = parsed(ib, "ibnetdiscover output", parse_ib, IB_HINT, unreadable)
    gathered = claims_of(topology, cables, devices, links if guid_names is not None else None, guid_names or {})
    gathered.unreadable = unreadable
    return gathered


def design_names(topology: Topology, cables: list[Cable]) -> Names:
    """The design's device names and every name each of its ports may be reported by."""
    return Names(devices=frozenset(topology.graph.nodes), ports=port_aliases(topology, cables))


def claims_of(topology: Topology, cables: list[Cable], devices: dict[str, list[Neighbor]],
              links: list[IbLink] | None, guid_names: dict[int, str], names: Names | None = None,
              resolved: list[Link] | None = None) -> Gathered:
    """Claims in design names from parsed input: LLDP neighbors per reporting device (by the
    name its file gives) and an InfiniBand discovery's links, when there was one. `resolved`:
    the LLDP neighbors' links in design names, when the caller has them (then no claim is made)."""
    names = names or design_names(topology, cables)
    gathered = Gathered(claims=[], reporting=set(), unreadable=[], links=resolved)
    for device, neighbors in devices.items():
        name = names.device(device)
        if name not in names.devices:
            gathered.foreign.append(shown(device))
        gathered.reporting.add((name, "*"))
        if resolved is None:
            gathered.claims.extend(lldp_claims(name, neighbors, names))
    if links is not None:
        if resolved is not None:
            raise ValueError("resolved links stand for LLDP neighbors only, not a discovery's")
        gathered.claims.extend(ib_claims(links, guid_names, names))
        # A discovery walks the whole subnet: every fabric device has reported, present or not.
        gathered.reporting.update((name, "fabric") for name, node in topology.nodes.items()
                                  if node["kind"] == "host" or node["network"] == "fabric")
    return gathered


def verify(spec: ClusterSpec, topology: Topology, every: list[Cable], gathered: Gathered,
           networks: Collection[str] | None = None, partial: bool = False) -> Verification:
    """Compare the claims with the design's cables `every` (only those on `networks`, when given);
    with any input unreadable, compare nothing and report it (CABLE-INPUT cannot be suppressed).
    Designed cables no data covers are CABLE-UNVERIFIED: errors, warnings when the collection is
    `partial` on purpose, errors again when not one designed cable was seen."""
    if gathered.unreadable:
        return Verification(findings=list(gathered.unreadable), comparison=Comparison(findings=[]),
                            fail_on=spec.policy.fail_on)
    claims, reporting = gathered.claims, gathered.reporting
    cables: list[Cable] = [cable for cable in every if networks is None or cable.network in networks]
    designed = by_end(cables)
    excluded = set(by_end(cable for cable in every if networks is not None and cable.network not in networks))
    excluded -= designed.keys()  # a port with a cable on a network compared is compared
    if gathered.links is None:
        kept = ([claim for claim in claims if claim.local not in excluded and claim.remote not in excluded]
                if excluded else claims)
        links = resolve(kept, designed)
    else:  # the claims of a link name its two ends: they are all kept or none
        links = ([link for link in gathered.links if link.a not in excluded and link.b not in excluded]
                 if excluded else gathered.links)
    comparison = compare(topology.nodes, cables, links, reporting, designed)
    comparison.findings += unseen_findings(comparison, sorted(gathered.foreign), partial)
    findings = apply_policy(comparison.findings, spec.policy.suppress)
    return Verification(findings=findings, comparison=comparison, fail_on=spec.policy.fail_on)
