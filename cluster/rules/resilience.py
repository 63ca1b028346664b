"""N-1 resilience: losing any single switch keeps the fabric within a degraded ratio."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.findings import Finding, Severity
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
from cluster.topology import Topology
from cluster.whatif import worst_upper_failures

BELOW = {"spine": "leaf", "core": "spine"}


def degraded_limit(spec: ClusterSpec, tier_below: str) -> float:
    """policy.max_degraded_oversubscription, or (for `whatif` when it is unset) twice the
    affected tier's max_oversubscription."""
    assert spec.fabric is not None
    configured = spec.policy.max_degraded_oversubscription
    if configured is not None:
        return configured
    return 2.0 * float(getattr(spec.fabric.max_oversubscription, tier_below))


class SingleFailure(Rule):
    """When policy.max_degraded_oversubscription is set: losing any one spine (or core) leaves
    every switch below it within that ratio; a switch left with no uplinks cuts its GPUs off.
    Warning by default. Unset, the rule does not run: small auto-sized designs have one spine
    by construction, and `whatif` shows any failure's effect on demand."""

    id = "FAB-N1"
    title = "single switch failure"
    severity = Severity.WARNING

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None and spec.policy.max_degraded_oversubscription is not None

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        worst = worst_upper_failures(topology)
        for tier in ("spine", "core"):
            failures = worst.get(tier)
            if not failures:
                continue
            failed, (ratio, victim) = min(failures.items(), key=lambda item: (-item[1][0], item[0]))
            below = BELOW[tier]
            limit = degraded_limit(spec, below)
            if ratio <= limit + 1e-9:
                continue
            effect = (f"{victim} keeps no uplink: its GPUs are cut off from the rest of the fabric"
                      if ratio == float("inf") else f"{victim} runs at {ratio:.2f}:1")
            yield self.finding(
                "policy.max_degraded_oversubscription",
                f"losing {failed} (any single {tier}) should keep every {below} within {limit:g}:1; {effect}",
                f"spread each {below}'s uplinks over more {tier}s (fabric.spines / cores, leaf_uplinks), or raise "
                f"policy.max_degraded_oversubscription; see `python -m cluster whatif STACK --fail {failed}`"
            )
