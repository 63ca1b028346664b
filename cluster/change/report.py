"""A change as text (lists cut at `shown` lines each; the JSON has everything) and as JSON."""

from __future__ import annotations

from typing import Any

from cluster.bisection import Cut
from cluster.change.compare import CableEnd, CableWork, Change, HostPortChange
from cluster.change.keep import Keeping
from cluster.change.transition import ALL_AT_ONCE, Stage, safe


def _ratio(value: float) -> str:
    return "cut off" if value == float("inf") else f"{value:.2f}:1"


def _money(value: float) -> str:
    sign = "-" if value < 0 else "+"
    return f"{sign}${abs(value):,.0f}"


def _usd(low: float, high: float) -> str:
    return f"${low:,.0f}" if low == high else f"${low:,.0f}..${high:,.0f}"


def _cut(cut: Cut | None) -> dict[str, Any] | None:
    if cut is None:
        return None
    return {"ratio": round(cut.ratio, 4), "flow_gbps": cut.flow_gbps, "cut": cut.describe()}


def _end(end: CableEnd) -> dict[str, Any]:
    return {"device": end.device, "port": end.port, "name": end.name, "cage": end.cage}


def _cable(work: CableWork) -> dict[str, Any]:
    found: dict[str, Any] = {"network": work.network, "link": work.link, "gbps": work.gbps,
                             "lower": _end(work.lower), "upper": _end(work.upper)}
    if work.was is not None:
        found["was"] = {"lower": _end(work.was[0]), "upper": _end(work.was[1])}
        found["kept"] = work.kept
    return found


def _stage(stage: Stage) -> dict[str, Any]:
    outcome = stage.outcome
    return {
        "switch": stage.switch,
        "cables_unplugged": stage.unplugged,
        "oversubscription": [{"tier": r.tier, "before": _ratio(r.before), "after": _ratio(r.after),
                              "after_at": r.after_at, "limit": stage.limits[r.tier]} for r in outcome.ratios],
        "bisection": {"before": _cut(outcome.bisection_before), "after": _cut(outcome.bisection_after)},
        "cut_off": list(outcome.cut_off),
        "hosts_drained": list(stage.drained),
        "breaks": [{"rule": rule, "message": message} for rule, message in stage.breaks],
    }


def _keeping(kept: Keeping | None) -> dict[str, Any] | None:
    if kept is None:
        return None
    return {"host_ports": kept.disturbed.host_ports, "cables": kept.disturbed.cables,
            "edits": [{"path": e.path, "value": e.value, "why": e.why} for e in kept.edits],
            "with_edits": {"host_ports": kept.left.host_ports, "cables": kept.left.cables},
            "why": list(kept.reasons)}


def to_dict(old: str, new: str, change: Change, found: list[Stage], code: int,
            kept: Keeping | None = None) -> dict[str, Any]:
    """The change as JSON: every list in full, the unified diffs included."""
    return {
        "old": old, "new": new, "safe": code == 0, "exit_code": code,
        "switches": {"added": change.switches_added, "removed": change.switches_removed,
                     "changed": [{"name": c.name, "fields": {k: list(v) for k, v in c.fields.items()}}
                                 for c in change.switches_changed]},
        "hosts": {"added": change.hosts_added, "removed": change.hosts_removed},
        "cables": {"add": [_cable(w) for w in change.cables_added],
                   "remove": [_cable(w) for w in change.cables_removed],
                   "move": [_cable(w) for w in change.cables_moved]},
        "files": [{"path": f.path, "status": f.status, "added": f.added, "removed": f.removed, "diff": f.diff}
                  for f in change.files],
        "host_ports": [{"host": h.host, "port": h.port, "old_address": h.old_address, "new_address": h.new_address,
                        "old_leaf": h.old_leaf, "new_leaf": h.new_leaf} for h in change.host_ports],
        "bom": {"items": [{"network": d.network, "tier": d.tier, "category": d.category, "item": d.item,
                           "old": d.old, "new": d.new, "usd": list(d.usd)} for d in change.bom],
                "old_usd": list(change.usd[0]), "new_usd": list(change.usd[1])},
        "transition": [_stage(stage) for stage in found],
        "existing_hosts": _keeping(kept),
    }


def _cut_lines(items: list[str], shown: int) -> list[str]:
    if shown and len(items) > shown:
        return [*items[:shown], f"    ... and {len(items) - shown} more (--format json lists all, --shown 0 shows all)"]
    return items


def _span(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]}"


def _cable_line(verb: str, work: CableWork) -> str:
    where = f"{work.network} {work.link}"
    if work.was is None:
        return f"    {verb:<6} {where:<19} {work.lower} <-> {work.upper}  {work.gbps}G"
    if work.kept == "lower":
        return f"    {verb:<6} {where:<19} {work.lower}: from {work.was[1]} to {work.upper}"
    return f"    {verb:<6} {where:<19} {work.upper}: from {work.was[0]} to {work.lower}"


def _host_port(change: HostPortChange) -> list[str]:
    parts = []
    if change.old_leaf != change.new_leaf:
        parts.append(f"leaf {change.old_leaf} -> {change.new_leaf}")
    if change.old_address != change.new_address:
        parts.append(f"address {change.old_address} -> {change.new_address}")
    elif change.old_address is not None:
        parts.append(f"address {change.old_address} kept")
    return parts


def _stage_line(stage: Stage) -> list[str]:
    outcome = stage.outcome
    title = "all at once" if stage.switch == ALL_AT_ONCE else f"while {stage.switch}'s cables are moved"
    if not stage.unplugged and stage.switch != ALL_AT_ONCE:
        title = f"while {stage.switch} is taken out"
    tiers = ", ".join(f"{r.tier} {_ratio(r.after)} at {r.after_at}" for r in outcome.ratios) or "no switch with uplinks left"
    line = f"    {title} ({stage.unplugged} fabric cables unplugged): {tiers}"
    before, after = outcome.bisection_before, outcome.bisection_after
    if before is not None and after is not None:
        line += f"; bisection {before.ratio:.3f} -> {after.ratio:.3f}"
    lines = [line]
    if stage.drained:
        lines.append(f"      hosts drained: {len(stage.drained)} ({_span(list(stage.drained))})")
    verb = "would break" if stage.switch == ALL_AT_ONCE else "BREAKS"
    lines += [f"      {verb} {rule}: {message}" for rule, message in stage.breaks]
    return lines


def _keeping_lines(kept: Keeping) -> list[str]:
    lines = [f"  existing hosts: {kept.disturbed}"]
    if kept.edits:
        result = "every existing host stays" if kept.left.none else f"left: {kept.left}"
        lines.append(f"    with these edits to the new stack file (checked by building it: {result}):")
        lines += [f"      {edit.path}: {edit.value}  # {edit.why}" for edit in kept.edits]
    else:
        lines.append("    no stack-file key keeps them (tried: new pools last, address_block, fabric.fill: packed)")
    return [*lines, *(f"    why: {reason}" for reason in kept.reasons)]


def to_lines(old: str, new: str, change: Change, found: list[Stage], code: int, shown: int = 20,
             patch: bool = False, kept: Keeping | None = None) -> str:
    """The change as text: each list cut at `shown` lines (0: all); `patch` adds the unified
    diffs of every changed switch file."""
    verdict = ("no change" if change.empty else "safe to make switch by switch" if code == 0
               else "BREAKS A RULE while it is made")
    lines = [f"diff {old} -> {new}: {verdict}"]
    lines.append(f"  switches: {len(change.switches_added)} added, {len(change.switches_removed)} removed, "
                 f"{len(change.switches_changed)} changed")
    for title, names in (("added", change.switches_added), ("removed", change.switches_removed)):
        if names:
            lines += _cut_lines([f"    {title}: {name}" for name in names], shown)
    lines += _cut_lines([f"    changed: {c.name}: " + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in c.fields.items())
                         for c in change.switches_changed], shown)
    lines.append(f"  hosts: {len(change.hosts_added)} added"
                 + (f" ({_span(change.hosts_added)})" if change.hosts_added else "")
                 + f", {len(change.hosts_removed)} removed"
                 + (f" ({_span(change.hosts_removed)})" if change.hosts_removed else ""))
    lines.append(f"  cables: {len(change.cables_added)} to add, {len(change.cables_removed)} to remove, "
                 f"{len(change.cables_moved)} to move")
    lines += _cut_lines([_cable_line("move", w) for w in change.cables_moved], shown)
    lines += _cut_lines([_cable_line("remove", w) for w in change.cables_removed], shown)
    lines += _cut_lines([_cable_line("add", w) for w in change.cables_added], shown)
    per_switch = change.switch_files
    others = [f for f in change.files if not f.path.startswith("switches/")]
    lines.append(f"  configs: {len(per_switch)} switches' files change; {len(others)} other files")
    lines += _cut_lines([f"    {name}: " + ", ".join(f"{f.path.split('/', 2)[2]} {f.status} +{f.added} -{f.removed}"
                                                      for f in files) for name, files in per_switch.items()], shown)
    lines += _cut_lines([f"    {f.path} {f.status} +{f.added} -{f.removed}" for f in others], shown)
    lines.append(f"  host ports: {len(change.host_ports)} change address or leaf")
    lines += _cut_lines([f"    {h.host} {h.port}: " + ", ".join(_host_port(h)) for h in change.host_ports], shown)
    if kept is not None:
        lines += _keeping_lines(kept)
    (old_low, old_high), (new_low, new_high) = change.usd
    lines.append(f"  bill of materials: {_usd(old_low, old_high)} -> {_usd(new_low, new_high)}")
    lines += _cut_lines([f"    {d.network} {d.tier} {d.category} {d.item}: {d.old} -> {d.new} "
                         f"({_money(d.usd[0])}" + (f"..{_money(d.usd[1])[1:]})" if d.usd[0] != d.usd[1] else ")")
                         for d in change.bom], shown)
    if found:
        lines.append("  while the change is made (the old fabric less the cables unplugged, one switch at a time;"
                     f" degraded limit {', '.join(f'{t} {v:g}:1' for t, v in found[0].limits.items())}):")
        for stage in found:
            lines += _stage_line(stage)
        if not safe(found):
            lines.append("  the change breaks a rule while it is made: move fewer cables at a time, or drain first")
    elif not change.empty:
        lines.append("  while the change is made: no fabric cable is unplugged")
    if patch:
        for files in per_switch.values():
            lines += [f.diff.rstrip("\n") for f in files]
    return "\n".join(lines)
