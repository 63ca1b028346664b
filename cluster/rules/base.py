"""Rules: one small class per check, each with a stable id and a default severity."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from dataclasses import replace
from typing import ClassVar

from cluster.findings import Finding, Severity
from cluster.spec import ClusterSpec
from cluster.topology import Topology, gc_paused


class Rule:
    """A design check. `check` yields findings and never changes the spec or the graph."""

    id: ClassVar[str]
    title: ClassVar[str]
    severity: ClassVar[Severity] = Severity.ERROR

    def applies(self, spec: ClusterSpec) -> bool:
        return True

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        raise NotImplementedError

    def finding(self, path: str, message: str, hint: str, severity: Severity | None = None) -> Finding:
        return Finding(self.id, self.severity if severity is None else severity, path, message, hint)


def run_rules(rules: list[Rule], spec: ClusterSpec, topology: Topology) -> list[Finding]:
    """Every applicable rule, every finding; a crashing rule becomes an ERROR finding of its own."""
    findings: list[Finding] = []
    for rule in rules:
        if not rule.applies(spec):
            continue
        try:
            with gc_paused():  # see gc_paused: passes over a 100k-GPU graph allocate heavily
                findings.extend(rule.check(spec, topology))
        except Exception as error:
            where = traceback.extract_tb(error.__traceback__)[-1]
            findings.append(
                Finding(
                    rule.id,
                    Severity.ERROR,
                    "(rule)",
                    f"rule {rule.id} crashed: {type(error).__name__}: {error} ({where.name}:{where.lineno})",
                    "report this as a bug in gpu-cluster; the design was not fully checked",
                )
            )
    return findings


#: Rules whose errors make the outputs impossible, and why: suppressing them changes nothing, and
#: the finding says so.
UNSUPPRESSIBLE_BECAUSE = {
    "ADDR-POOL": "without these addresses nothing can be rendered or deployed",
    "CLOUD-PLACEMENT": "the provider refuses this group at deploy",
}
UNSUPPRESSIBLE = frozenset(UNSUPPRESSIBLE_BECAUSE)


def apply_policy(findings: list[Finding], suppress: tuple[str, ...]) -> list[Finding]:
    """Suppressed rules stay visible as `info` with `suppressed: true`; output is sorted."""
    result = [_suppressed(finding) if finding.rule in suppress else finding for finding in findings]
    return sorted(result, key=Finding.sort_key)


def _suppressed(finding: Finding) -> Finding:
    if finding.rule not in UNSUPPRESSIBLE or finding.severity < Severity.ERROR:
        return finding.as_suppressed()
    return replace(finding, hint=f"{finding.hint} ({finding.rule} cannot be suppressed: "
                                 f"{UNSUPPRESSIBLE_BECAUSE[finding.rule]})")


def plural(tier: str, count: int) -> str:
    """leaf -> leaves, spine -> spines (tiers named in messages)."""
    if count == 1:
        return tier
    return "leaves" if tier == "leaf" else f"{tier}s"
