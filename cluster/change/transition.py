"""The fabric while a change is made: OLD less the cables being unplugged, one switch at a time.

A person moves a change's cables switch by switch: every cable of OLD that is removed or moved
is unplugged in the stage of the upper switch it was plugged into (a removed switch is a stage
of its own, with every cable on it), and is plugged in again, or not, before the next stage. Each
stage is `whatif`'s degraded fabric (cluster.whatif.degrade): the worst oversubscription per
tier, bisection, switches left without an uplink, and the hosts whose fabric ports are unplugged
(drained for the stage: their jobs are moved off first). A stage breaks a rule when a tier runs
beyond the degraded limit `whatif` uses (policy.max_degraded_oversubscription, else twice the
tier's max_oversubscription) or a switch with hosts is cut off from the tier above. The change
made all at once is stated too, as the worst case.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from cluster.change.compare import CableWork, Change
from cluster.pipeline import Valid
from cluster.rules.resilience import degraded_limit
from cluster.topology import FABRIC
from cluster.whatif import Outcome, degrade, fabric_switches

ALL_AT_ONCE = "all at once"


@dataclass(frozen=True)
class Stage:
    """One stage of the change: the switch whose cables are unplugged together (or
    ALL_AT_ONCE), how many fabric cables that is, the degraded fabric, each tier's limit, the
    hosts drained, and the rules it breaks (rule id, message)."""

    switch: str
    unplugged: int
    outcome: Outcome
    limits: dict[str, float]
    drained: tuple[str, ...]
    breaks: tuple[tuple[str, str], ...]


def _unplugged(change: Change) -> list[CableWork]:
    """The fabric cables of OLD that are removed or moved, as they were in OLD."""
    found = [work for work in change.cables_removed if work.network == FABRIC]
    for work in change.cables_moved:
        if work.network == FABRIC and work.was is not None:
            lower, upper = work.was
            found.append(CableWork(work.network, work.link, lower, upper, work.gbps))
    return found


def stages(old: Valid, change: Change) -> list[Stage]:
    """Every stage, in switch order, then the change all at once (when there is more than one)."""
    switches = fabric_switches(old.topology)
    removed = {name for name in change.switches_removed if name in switches}
    by_switch: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
    for work in _unplugged(change):
        lower, upper = work.lower.device, work.upper.device
        stage = lower if lower in removed else upper
        by_switch[stage][(lower, upper)] += 1
    for name in removed:
        by_switch.setdefault(name, Counter())
    found = [_stage(old, name, {name} if name in removed else set(), by_switch[name]) for name in sorted(by_switch)]
    if len(found) > 1:
        everything: Counter[tuple[str, str]] = Counter()
        for counted in by_switch.values():
            everything.update(counted)
        found.append(_stage(old, ALL_AT_ONCE, removed, everything))
    return found


def _stage(old: Valid, switch: str, failed: set[str], fewer: Counter[tuple[str, str]]) -> Stage:
    outcome = degrade(old.topology, old.spec, switch, failed, dict(fewer))
    limits = {ratio.tier: degraded_limit(old.spec, ratio.tier) for ratio in outcome.ratios}
    breaks = [("FAB-OVERSUB", f"{ratio.tier} tier at {ratio.after:.2f}:1 at {ratio.after_at}, beyond the degraded "
                              f"limit {limits[ratio.tier]:g}:1")
              for ratio in outcome.ratios if ratio.after > limits[ratio.tier] + 1e-9 and ratio.after != float("inf")]
    if outcome.cut_off:
        names = outcome.cut_off
        span = names[0] if len(names) == 1 else f"{len(names)} switches ({names[0]} .. {names[-1]})"
        breaks.append(("FAB-CONNECTED", f"{span} cut off from the tier above"))
    drained = tuple(sorted({host for lost in outcome.lost_rails for host in lost.hosts}))
    return Stage(switch, sum(fewer.values()), outcome, limits, drained, tuple(breaks))


def safe(found: list[Stage]) -> bool:
    """Whether made stage by stage the change breaks no rule (the all-at-once case is the worst
    case, stated but not required)."""
    return not any(stage.breaks for stage in found if stage.switch != ALL_AT_ONCE)
