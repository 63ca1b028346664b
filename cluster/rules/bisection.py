"""Bisection bandwidth of the GPU fabric (see cluster.bisection for how the cuts are found)."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.bisection import Cut, bisections
from cluster.findings import Finding, Severity
from cluster.load import worst_per_tier
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology


def _oversubscribed(spec: ClusterSpec, topology: Topology, crossed: tuple[str, ...]) -> tuple[float, str] | None:
    """(ratio, tier): the most oversubscribed crossed tier as built, when it is beyond its own
    max_oversubscription, so that FAB-OVERSUB reports it (or would, suppressed); None otherwise."""
    assert spec.fabric is not None
    limits = spec.fabric.max_oversubscription
    worst = worst_per_tier(topology.switch_loads, topology.switches(FABRIC))
    ratios = [(worst[tier][1].oversubscription, tier) for tier in crossed
              if tier in worst and worst[tier][1].oversubscription > float(getattr(limits, tier)) + 1e-9]
    return max(ratios) if ratios else None


def bisection_limit(spec: ClusterSpec, crossed: tuple[str, ...]) -> tuple[float, str]:
    """(allowed ratio, the tier it comes from) for a cut whose traffic crosses tiers `crossed`.

    Traffic across the cut climbs through every crossed tier, so it is bounded by the most
    oversubscribed of them: a design that keeps each tier within its own max_oversubscription
    has bisection >= 1 / max(limits crossed). With one ratio for the whole fabric (the usual
    case) this is 1 / max_oversubscription.
    """
    assert spec.fabric is not None
    limits = spec.fabric.max_oversubscription
    tier = max(crossed, key=lambda name: float(getattr(limits, name)))
    return 1.0 / float(getattr(limits, tier)), tier


class Bisection(Rule):
    """One-way bandwidth across the worst cut that splits the GPUs into equal halves along
    leaf-group / pod boundaries, over half the GPU injection bandwidth, is at least
    1 / max_oversubscription of the tiers the cut crosses (leaf; leaf and spine between pods).
    On three tiers the worst cut inside a pod is checked too. Found by max-flow over the graph.
    A cut no thinner than a crossed tier's own oversubscription explains is FAB-OVERSUB's finding,
    at the key that sets that tier's uplinks, and is not reported twice."""

    id = "FAB-BISECTION"
    title = "fabric bisection bandwidth"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        plan = topology.fabric_plan
        if plan is None:
            return
        cuts = bisections(topology)
        between: tuple[str, ...] = ("leaf", "spine") if cuts.pod is not None or plan.tiers >= 3 else ("leaf",)
        for cut, crossed, scope in ((cuts.fabric, between, "the fabric"), (cuts.pod, ("leaf",), "one pod")):
            if cut is not None:
                yield from self._check(spec, topology, cut, crossed, scope)

    def _check(self, spec: ClusterSpec, topology: Topology, cut: Cut, crossed: tuple[str, ...],
               scope: str) -> Iterator[Finding]:
        limit, tier = bisection_limit(spec, crossed)
        if cut.ratio >= limit - 1e-9:
            return
        accepted = _oversubscribed(spec, topology, crossed)
        if accepted is not None and cut.ratio >= 1 / accepted[0] - 1e-9:
            # One cause, one finding: a tier beyond its ratio explains the cut. FAB-OVERSUB reports
            # it at the key that sets it, with the fix; suppressed, the architect accepted that
            # ratio, and the cut is shown as info naming it.
            if "FAB-OVERSUB" not in spec.policy.suppress:
                return
            yield self.finding(
                "fabric.max_oversubscription",
                f"bisection bandwidth of {scope} is {cut.ratio:.2f} of half the GPU injection, as the {accepted[1]} "
                f"tier's {accepted[0]:g}:1 explains (FAB-OVERSUB, suppressed); no thinner than that",
                "the suppressed FAB-OVERSUB finding is the one to revisit",
                Severity.INFO,
            )
            return
        accepted_word = "accepted " if "FAB-OVERSUB" in spec.policy.suppress else ""
        thinner = (f"; thinner than the {accepted[1]} tier's {accepted_word}{accepted[0]:g}:1 explains"
                   if accepted is not None else "")
        yield self.finding(
            "fabric.max_oversubscription",
            f"bisection bandwidth of {scope} expected >= {limit:.2f} of half the GPU injection (1 / the {tier} "
            f"tier's {1 / limit:g}:1), found {cut.ratio:.2f}: {cut.flow_gbps:,} Gbps one way across the "
            f"{cut.describe()}, over {cut.injection_gbps:,} Gbps{thinner}",
            "add uplinks, spines or cores where the cut is thin (balance uneven fabric.leaf_uplinks, spines or "
            "spine_uplinks), or raise fabric.max_oversubscription",
        )
