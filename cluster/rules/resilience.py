"""N-1 resilience: losing any single switch keeps the fabric within a degraded ratio."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cluster.findings import Finding, Severity
from cluster.load import NETWORK_CODES
from cluster.rules.base import Rule, plural
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology
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
    """No single spine or core cuts GPUs off: a fabric switch whose uplinks all reach one switch
    of the tier above loses the rest of the fabric with it (a warning, always checked). When
    policy.max_degraded_oversubscription is set, losing any one spine (or core) must also leave
    every switch below it within that ratio."""

    id = "FAB-N1"
    title = "single switch failure"
    severity = Severity.WARNING

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        if spec.policy.max_degraded_oversubscription is None:
            yield from self._single_points(topology)
            return
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

    def _single_points(self, topology: Topology) -> Iterator[Finding]:
        """Fabric switches whose every uplink reaches one upper switch (from the link arrays)."""
        arrays = topology.link_arrays
        fabric = NETWORK_CODES[FABRIC]
        switch_to_switch = ((arrays.network == fabric) & ~arrays.is_host[arrays.lower]
                            & (arrays.node_network[arrays.upper] == fabric))
        # An edge already aggregates every link between its two switches (one edge per pair and
        # network), so counting a lower switch's fabric edges counts its distinct upper peers.
        lower, upper = arrays.lower[switch_to_switch], arrays.upper[switch_to_switch]
        peers = np.bincount(lower, minlength=len(arrays.names))
        alone = peers[lower] == 1
        if not alone.any():
            return
        by_upper: dict[str, list[str]] = {}
        for low, high in zip(lower[alone].tolist(), upper[alone].tolist(), strict=True):
            by_upper.setdefault(arrays.names[high], []).append(arrays.names[low])
        upper, cut = min(by_upper.items(), key=lambda item: (-len(item[1]), item[0]))
        tier = topology.switch(upper)["tier"]
        below = topology.switch(cut[0])["tier"]
        shown = ", ".join(sorted(cut)[:3]) + (f" and {len(cut) - 3} more" if len(cut) > 3 else "")
        yield self.finding(
            f"fabric.{tier}s",
            f"losing {upper} cuts {len(cut)} {plural(below, len(cut))} ({shown}) off the rest of the fabric: "
            f"their uplinks all reach that one {tier}"
            + (f"; {len(by_upper) - 1} more {plural(tier, 2)} are such a single point" if len(by_upper) > 1 else ""),
            f"give fabric.{tier}s: 2 or more with {below} uplinks spread over them (see `python -m cluster whatif STACK "
            f"--fail {upper}`)",
        )
