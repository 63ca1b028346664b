"""`whatif STACK --fail NAME | --fail-any leaf|spine|core|link [--format text|json]`: N-1 analysis.

Exit 0 when the fabric stays within the degraded limit (FAB-N1's) after the failure and no
GPU is cut off, 1 when not, 2 for a stack that cannot be read or an unknown device.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from typing import Any

from cluster.bisection import Cut
from cluster.cli import VERBS
from cluster.commands import tell
from cluster.pipeline import Valid, validate
from cluster.report import to_text
from cluster.rules.base import plural
from cluster.rules.resilience import degraded_limit
from cluster.whatif import KINDS, Outcome, UnknownDevice, fabric_switches, fail, fail_link, worst_single


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("whatif", help=VERBS["whatif"])
    parser.add_argument("stack", help="stack name (dev -> stacks/Pulumi.dev.yaml) or path")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--fail", metavar="NAME", help="a fabric switch (spine-003, leaf-001-r3) or a cable LOWER~UPPER")
    which.add_argument("--fail-any", choices=KINDS, help="the worst single failure of this kind")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    result = validate(args.stack)
    if not isinstance(result, Valid) or result.schema_failed:
        print(to_text(result), file=sys.stderr)
        return 2
    tell(result)
    if result.spec.fabric is None or result.topology.fabric_plan is None:
        print(f"whatif: {result.stack} runs on {result.spec.target}: the GPU fabric is the provider's, "
              "so there is no switch of ours to fail; use an on-prem stack", file=sys.stderr)
        return 2
    try:
        if args.fail_any:
            outcome = worst_single(result.topology, result.spec, args.fail_any)
            if outcome is None:
                print(f"whatif: {result.stack} has no fabric {args.fail_any} to fail; {_inventory(result)}",
                      file=sys.stderr)
                return 2
        elif "~" in args.fail:
            lower, _, upper = args.fail.partition("~")
            outcome = fail_link(result.topology, result.spec, lower, upper)
        else:
            outcome = fail(result.topology, result.spec, args.fail)
    except UnknownDevice as error:
        known = list(fabric_switches(result.topology))
        close = difflib.get_close_matches(str(error), known, n=3)
        maybe = f"; did you mean {', '.join(close)}?" if close else ""
        print(f"whatif: unknown fabric device or cable {str(error)!r} in {result.stack}{maybe}\n"
              f"  --fail takes a fabric switch or LOWER~UPPER (a cable); --fail-any takes one of "
              f"{', '.join(KINDS)}\n  {_inventory(result)}", file=sys.stderr)
        return 2
    limits = _limits(result, outcome)
    if args.format == "json":
        print(json.dumps(to_dict(result, outcome, limits), indent=2))
    else:
        print(to_lines(result, outcome, limits))
    return exit_code(outcome, limits)


def exit_code(outcome: Outcome, limits: dict[str, float]) -> int:
    """1 when the failure leaves the fabric short of what the design promises: a tier beyond its
    degraded limit, a switch cut off from the tier above, or a GPU left without any fabric port of
    its own (its rail's traffic would have to cross NVLink to another GPU's NIC); 0 when GPUs only
    lose bandwidth within those limits."""
    beyond = any(ratio.after > limits[ratio.tier] + 1e-9 for ratio in outcome.ratios)
    without_rail = any(lost.gpus_without_rail for lost in outcome.lost_rails)
    return 1 if beyond or outcome.cut_off or without_rail else 0


def _limits(result: Valid, outcome: Outcome) -> dict[str, float]:
    return {ratio.tier: degraded_limit(result.spec, ratio.tier) for ratio in outcome.ratios}


def _inventory(result: Valid) -> str:
    by_tier: dict[str, list[str]] = {}
    for name, data in fabric_switches(result.topology).items():
        by_tier.setdefault(str(data["tier"]), []).append(name)
    parts = [f"{names[0]} .. {names[-1]} ({len(names)} {plural(tier, len(names))})" if len(names) > 1
             else f"{names[0]} (1 {tier})" for tier, names in by_tier.items()]
    return "fabric switches: " + "; ".join(parts)


def _ratio(value: float) -> str:
    return "cut off" if value == float("inf") else f"{value:.2f}:1"


def _cut(cut: Cut | None) -> dict[str, Any] | None:
    if cut is None:
        return None
    return {"ratio": round(cut.ratio, 4), "flow_gbps": cut.flow_gbps, "injection_gbps": cut.injection_gbps,
            "cut": cut.describe()}


def to_dict(result: Valid, outcome: Outcome, limits: dict[str, float]) -> dict[str, Any]:
    return {
        "stack": result.stack,
        "failed": outcome.failed,
        "oversubscription": [
            {"tier": r.tier, "before": _ratio(r.before), "before_at": r.before_at, "after": _ratio(r.after),
             "after_at": r.after_at, "limit": limits[r.tier], "within": r.after <= limits[r.tier] + 1e-9}
            for r in outcome.ratios
        ],
        "bisection": {"before": _cut(outcome.bisection_before), "after": _cut(outcome.bisection_after)},
        "pod_bisection": {"before": _cut(outcome.pod_before), "after": _cut(outcome.pod_after)},
        "lost_rails": [
            {"device": lost.device, "rail": lost.rail, "plane": lost.plane, "hosts": list(lost.hosts),
             "gpus_without_rail": lost.gpus_without_rail, "gpus_degraded": lost.gpus_degraded}
            for lost in outcome.lost_rails
        ],
        "cut_off": list(outcome.cut_off),
    }


def to_lines(result: Valid, outcome: Outcome, limits: dict[str, float]) -> str:
    lines = [f"{result.stack}: N-1 what-if, losing {outcome.failed}"]
    lines.append("  oversubscription (worst per tier, before -> after):")
    for r in outcome.ratios:
        verdict = "within" if r.after <= limits[r.tier] + 1e-9 else "BEYOND"
        lines.append(f"    {r.tier:<5} {_ratio(r.before)} at {r.before_at} -> {_ratio(r.after)} at {r.after_at} "
                     f"({verdict} the degraded limit {limits[r.tier]:g}:1)")
    cuts = [("bisection", outcome.bisection_before, outcome.bisection_after)]
    if outcome.pod_before is not None:
        cuts.append(("bisection inside a pod", outcome.pod_before, outcome.pod_after))
    for title, before, after in cuts:
        if before is None or after is None:
            lines.append(f"  {title}: one leaf group, no cut crosses a switch tier")
            continue
        lines.append(f"  {title}: {before.ratio:.3f} -> {after.ratio:.3f} of half the GPU injection "
                     f"({before.flow_gbps:,} -> {after.flow_gbps:,} Gbps one way)")
        lines.append(f"    worst cut after: {after.describe()}")
    if outcome.cut_off:
        shown = ", ".join(outcome.cut_off[:8])
        more = f" and {len(outcome.cut_off) - 8} more" if len(outcome.cut_off) > 8 else ""
        lines.append(f"  cut off (no uplink left): {shown}{more}")
    if not outcome.lost_rails:
        lines.append("  rails: no GPU loses its rail")
    for lost in outcome.lost_rails:
        rail = f"rail {lost.rail}" if lost.rail is not None else "its fabric ports"
        plane = f" (plane {lost.plane})" if result.spec.fabric and result.spec.fabric.planes > 1 else ""
        hosts = lost.hosts
        span = hosts[0] if len(hosts) == 1 else f"{hosts[0]} .. {hosts[-1]}"
        lines.append(f"  {lost.device} takes {rail}{plane} away from {len(hosts)} {'node' if len(hosts) == 1 else 'nodes'} "
                     f"({span}): {lost.gpus_without_rail} {'GPU' if lost.gpus_without_rail == 1 else 'GPUs'} without their rail"
                     + (f", {lost.gpus_degraded} at reduced bandwidth" if lost.gpus_degraded else ""))
    return "\n".join(lines)
