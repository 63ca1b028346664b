"""Rules: one small class per check, each with a stable id and a default severity."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from cluster import words
from cluster.addressing import Addresses
from cluster.findings import UNSUPPRESSIBLE, Finding, Severity
from cluster.intent.qos import QosIntent
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
        """A finding of this rule; its hint ends with how to suppress it (unless it cannot be)."""
        if self.id not in UNSUPPRESSIBLE and "suppress with" not in hint:
            hint = f"{hint}; suppress with {self.id}"
        return Finding(self.id, self.severity if severity is None else severity, path, message, hint)


@dataclass(frozen=True)
class Derived:
    """What rules read beyond the spec and the graph, each computed once by the stage that owns
    it and only when a rule asks: the address pools' fit check and the QoS intents, both sides of
    each plan as every config writes it: the GPU fabric's, and the one host storage ports follow
    (the storage network's own, or the fabric's sent from the storage class where storage shares
    the fabric; None where the design has no such plan)."""

    address_check: Callable[[], Addresses]
    qos_intent: Callable[[], QosIntent | None]
    storage_intent: Callable[[], QosIntent | None]


class ReadsDerived(Rule):
    """A rule that reads `Derived` facts (and so never computes them itself)."""

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        raise TypeError(f"{self.id} reads derived facts: run it through run_rules")

    def check_derived(self, spec: ClusterSpec, topology: Topology, derived: Derived) -> Iterator[Finding]:
        raise NotImplementedError


def run_rules(rules: list[Rule], spec: ClusterSpec, topology: Topology, derived: Derived) -> list[Finding]:
    """Every applicable rule, every finding; a crashing rule becomes an ERROR finding of its own."""
    findings: list[Finding] = []
    for rule in rules:
        if not rule.applies(spec):
            continue
        try:
            with gc_paused():  # see gc_paused: passes over a 100k-GPU graph allocate heavily
                if isinstance(rule, ReadsDerived):
                    findings.extend(rule.check_derived(spec, topology, derived))
                else:
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


def plural(tier: str, count: int) -> str:
    """leaf -> leaves, spine -> spines (tiers named in messages)."""
    return words.plural(tier, count)
