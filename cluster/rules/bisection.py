"""Bisection bandwidth of the GPU fabric (see cluster.bisection for how the cuts are found)."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.bisection import Cut, bisections
from cluster.findings import Finding
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
from cluster.topology import Topology


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
    On three tiers the worst cut inside a pod is checked too. Found by max-flow over the graph."""

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
                yield from self._check(spec, cut, crossed, scope)

    def _check(self, spec: ClusterSpec, cut: Cut, crossed: tuple[str, ...], scope: str) -> Iterator[Finding]:
        limit, tier = bisection_limit(spec, crossed)
        if cut.ratio < limit - 1e-9:
            yield self.finding(
                "fabric.max_oversubscription",
                f"bisection bandwidth of {scope} expected >= {limit:.2f} of half the GPU injection (1 / the {tier} "
                f"tier's {1 / limit:g}:1), found {cut.ratio:.2f}: {cut.flow_gbps:,} Gbps one way across the "
                f"{cut.describe()}, over {cut.injection_gbps:,} Gbps",
                "add uplinks, spines or cores where the cut is thin (balance uneven fabric.leaf_uplinks, spines or "
                f"spine_uplinks), or raise fabric.max_oversubscription; suppress with {self.id}",
            )
