"""One verification: design cables + neighbor data -> findings and a per-tier summary."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from cluster.findings import Finding, Severity, apply_policy
from cluster.spec import ClusterSpec
from cluster.topology import Topology
from cluster.verify.expected import Cable, by_end, port_aliases
from cluster.verify.infiniband import parse_ib, parse_node_name_map
from cluster.verify.match import Claim, Comparison, compare, resolve
from cluster.verify.observe import InputError, Names, ib_claims, lldp_claims, read_lldp_dir, read_text
from cluster.verify.parsers import NeighborFormatError


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
    def exit_code(self) -> int:
        return 0 if self.ok else 1


def gather(topology: Topology, cables: list[Cable], lldp: Path | None, ib: Path | None,
           ib_map: Path | None) -> tuple[list[Claim], set[tuple[str, str]]]:
    """Claims from every input, and which (device, network) reported ("*": every network). Raises InputError."""
    names = Names(devices=frozenset(topology.graph.nodes), ports=port_aliases(topology, cables))
    claims: list[Claim] = []
    reporting: set[tuple[str, str]] = set()
    if lldp is not None:
        for device, neighbors in read_lldp_dir(lldp).items():
            name = names.device(device)
            reporting.add((name, "*"))
            claims.extend(lldp_claims(name, neighbors, names))
    if ib is not None:
        guid_names: dict[int, str] = {}
        try:
            if ib_map is not None:
                guid_names = parse_node_name_map(read_text(ib_map, "node-name map"))
        except NeighborFormatError as error:
            raise InputError(f"{ib_map}: {error}") from None
        try:
            links = parse_ib(read_text(ib, "ibnetdiscover output"))
        except NeighborFormatError as error:
            raise InputError(f"{ib}: {error}") from None
        claims.extend(ib_claims(links, guid_names, names))
        # A discovery walks the whole subnet: every fabric device has reported, present or not.
        reporting.update((name, "fabric") for name, attrs in topology.graph.nodes(data=True)
                         if attrs.get("network") == "fabric" or attrs["kind"] == "host")
    return claims, reporting


def verify(spec: ClusterSpec, topology: Topology, every: list[Cable], claims: list[Claim],
           reporting: set[tuple[str, str]], networks: Collection[str] | None = None) -> Verification:
    """Compare the claims with the design's cables `every` (only those on `networks`, when given)."""
    cables: list[Cable] = [cable for cable in every if networks is None or cable.network in networks]
    designed = by_end(cables)
    excluded = set(by_end(every)) - set(designed)
    kept = [claim for claim in claims if claim.local not in excluded and claim.remote not in excluded]
    links = resolve(kept, designed)
    comparison = compare(topology.graph, cables, links, reporting)
    findings = apply_policy(comparison.findings, spec.policy.suppress)
    return Verification(findings=findings, comparison=comparison, fail_on=spec.policy.fail_on)
