"""One self-contained HTML report: summary, findings, oversubscription, diagram, bill of materials.

No external assets (inline CSS and SVG), no script, no timestamp: the same stack gives the same
bytes, so the file can be committed and diffed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from html import escape
from typing import Any

from cluster.estimate.design import estimate_table
from cluster.estimate.placement import NoFabricPath
from cluster.exports.bom import Bom, bill_of_materials
from cluster.exports.cabling import MEDIA_RULES
from cluster.load import switch_loads, worst_per_tier
from cluster.pipeline import Result
from cluster.publish import FILE_MARK
from cluster.report import summary
from cluster.report_html.diagram import fabric_svg
from cluster.spec import ClusterSpec
from cluster.topology import NETWORKS, Topology

CSS = """
body{font-family:Helvetica,Arial,sans-serif;color:#212529;margin:0;background:#f8f9fa}
main{max-width:1400px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 10px;border-bottom:2px solid #dee2e6;padding-bottom:4px}
.sub{color:#495057;margin:0 0 16px}
.badge{display:inline-block;padding:3px 10px;border-radius:12px;font-weight:bold;font-size:13px;color:#fff;vertical-align:middle}
.ok{background:#2b9348}.failed{background:#c92a2a}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:14px 0}
.card{background:#fff;border:1px solid #dee2e6;border-radius:8px;padding:10px 16px;min-width:150px}
.card b{display:block;font-size:22px}.card span{color:#495057;font-size:13px}
table{border-collapse:collapse;background:#fff;font-size:13px;width:100%}
th,td{border:1px solid #dee2e6;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#e9ecef}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.total td{font-weight:bold;background:#f1f3f5}
.sev-error{color:#c92a2a;font-weight:bold}.sev-warning{color:#b7791f;font-weight:bold}.sev-info{color:#495057}
.diagram{background:#fff;border:1px solid #dee2e6;border-radius:8px;padding:8px;overflow-x:auto}
.note{color:#495057;font-size:13px}code{background:#e9ecef;padding:1px 4px;border-radius:3px}
"""


@dataclass(frozen=True)
class TierLoad:
    """Oversubscription of one network tier: switches with uplinks, best and worst ratio, limit."""

    network: str
    tier: str
    switches: int
    down_gbps: float
    up_gbps: float
    best: float
    worst: float
    worst_switch: str
    limit: float | None


def tier_loads(spec: ClusterSpec, topology: Topology) -> list[TierLoad]:
    """Per network and tier, down/up bandwidth of the switches that have uplinks."""
    loads = switch_loads(topology.graph)
    groups: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for name, data in topology.switches():
        load = loads.get(name)
        if load is not None and load.up_links:
            groups.setdefault((data["network"], data["tier"]), []).append((name, load))
    limits: dict[tuple[str, str], float] = {}
    if spec.fabric is not None:
        ratio = spec.fabric.max_oversubscription
        limits.update({("fabric", "leaf"): ratio.leaf, ("fabric", "spine"): ratio.spine, ("fabric", "core"): ratio.core})
    for other in (spec.storage, spec.management, spec.oob):
        if other is not None:
            limits[(other.name, "leaf")] = other.max_oversubscription
    rows = []
    for (network, tier), members in sorted(groups.items(), key=lambda item: (NETWORKS.index(item[0][0]), item[0][1])):
        ratios = sorted(load.oversubscription for _, load in members)
        # The worst switch as FAB-OVERSUB and `validate` name it (the first of equals, in graph order).
        worst_name, _ = worst_per_tier(topology.graph, ((name, topology.graph.nodes[name]) for name, _ in members))[tier]
        rows.append(TierLoad(network, tier, len(members), sum(load.down_gbps for _, load in members),
                             sum(load.up_gbps for _, load in members), ratios[0], ratios[-1], worst_name,
                             limits.get((network, tier))))
    return rows


def _usd(value: tuple[float, float]) -> str:
    return f"${_short(value[0])} - ${_short(value[1])}"


def _short(value: float) -> str:
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.2f}{suffix}".replace(".00", "")
    return f"{value:,.0f}"


def _table(head: list[str], rows: list[list[str]], numeric: set[int], total: list[str] | None = None) -> str:
    out = ["<table>"]
    if head:
        out += ["<thead><tr>", *(f"<th>{escape(cell)}</th>" for cell in head), "</tr></thead>"]
    out.append("<tbody>")
    for row in [*rows, *([total] if total else [])]:
        cls = ' class="total"' if row is total else ""
        cells = "".join(f'<td class="n">{cell}</td>' if index in numeric else f"<td>{cell}</td>"
                        for index, cell in enumerate(row))
        out.append(f"<tr{cls}>{cells}</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _summary_section(result: Result, data: dict[str, Any], bom: Bom | None) -> str:
    cards = [(f"{data['gpus']:,}", "GPUs"), (f"{data['nodes']:,}", "nodes")]
    for pool, value in data["gbps_per_gpu"].items():
        cards.append((f"{value:g} Gbps", f"fabric per GPU ({pool})"))
    fabric = data["fabric"]
    if fabric:
        cards.append((f"{fabric['tiers']}", f"tier(s), {fabric['design']}"))
        worst = max(data["oversubscription"].values(), default=None)
        if worst is not None:
            cards.append((f"{worst:g}:1", "worst fabric oversubscription"))
    if bom is not None:
        cards.append((_usd(bom.usd()), "network cost (UNVERIFIED ranges)"))
    out = ['<div class="cards">', *(f'<div class="card"><b>{escape(a)}</b><span>{escape(b)}</span></div>'
                                    for a, b in cards), "</div>"]
    rows = [["pools", escape(", ".join(f"{name}: {p['nodes']} x {p['gpu']}" for name, p in data["pools"].items()))]]
    if fabric:
        rows.append(["fabric", escape(f"{fabric['transport']}, {fabric['design']}, {fabric['planes']} plane(s), "
                                      f"{fabric['rails']} rails, leaves {fabric['leaf_model']}")])
        rows.append(["leaf groups", escape(f"{fabric['leaf_groups']} group(s) of up to {fabric['nodes_per_leaf']} nodes, "
                                           f"{fabric['leaf_uplinks']} uplinks per leaf"
                                           + (f", {fabric['pods']} pods, {fabric['spine_uplinks']} uplinks per spine"
                                              if fabric["tiers"] == 3 else ""))])
        if fabric["auto_sized"]:
            rows.append(["auto-sized", escape(", ".join(fabric["auto_sized"]))])
    for network, tiers in data["switches"].items():
        rows.append([f"{network} switches", escape(", ".join(f"{count} {tier}" for tier, count in tiers.items()))])
    return "\n".join(out) + _table([], rows, set())


def _findings_section(result: Result) -> str:
    if not result.findings:
        return '<p class="note">No findings: every rule passes.</p>'
    rows = []
    for finding in result.findings:
        severity = str(finding.severity)
        tag = " (suppressed)" if finding.suppressed else ""
        line = result.loaded.line_of(finding.path) if result.loaded.source else 0
        where = f"{result.loaded.source}:{line}" if line else ""  # as `validate` prints it
        rows.append([f'<span class="sev-{severity}">{severity}{tag}</span>', f"<code>{escape(finding.rule)}</code>",
                     f"<code>{escape(finding.path)}</code>", f"<code>{escape(where)}</code>" if where else "",
                     escape(finding.message), escape(finding.hint)])
    return _table(["severity", "rule", "path", "file:line", "message", "hint"], rows, set())


def _oversubscription_section(spec: ClusterSpec, topology: Topology) -> str:
    rows = []
    for load in tier_loads(spec, topology):
        within = load.limit is None or load.worst <= load.limit + 1e-9
        verdict = "" if load.limit is None else ("within" if within else '<span class="sev-error">above</span>')
        rows.append([load.network, load.tier, f"{load.switches:,}", f"{load.down_gbps:,.0f}",
                     f"{load.up_gbps:,.0f}", f"{load.best:.2f}:1", f"{load.worst:.2f}:1", escape(load.worst_switch),
                     f"{load.limit:g}:1 {verdict}" if load.limit is not None else "-"])
    if not rows:
        return '<p class="note">No switch of ours has uplinks (single-tier or cloud fabric).</p>'
    return _table(["network", "tier", "switches", "down Gbps", "up Gbps", "best", "worst", "worst switch", "limit"],
                  rows, {2, 3, 4, 5, 6}) + ('<p class="note">Down / up bandwidth per switch; the top tier has no '
                                            "uplinks and is checked for radix instead (FAB-RADIX).</p>")


def _bom_section(bom: Bom) -> str:
    rows = []
    for line in bom.lines:
        rows.append([line.network, line.tier, line.category, escape(line.description), f"{line.quantity:,}",
                     _usd(line.unit_usd), _usd(line.usd), f"{_short(line.watts[0])} - {_short(line.watts[1])}",
                     escape(line.source)])
    total = ["all", "", "", "total", "", "", _usd(bom.usd()),
             f"{_short(bom.watts()[0])} - {_short(bom.watts()[1])}", ""]
    table = _table(["network", "tier / link", "category", "item", "qty", "unit USD", "total USD", "W", "source"],
                   rows, {4, 5, 6, 7}, total)
    per_network = [[network, _usd(bom.usd(network)), f"{bom.watts(network)[0] / 1000:,.1f} - "
                    f"{bom.watts(network)[1] / 1000:,.1f}", _usd(bom.energy_usd_per_year(network))]
                   for network in bom.networks()]
    gpu_low, gpu_high = bom.usd()
    totals = _table(["network", "cost", "power kW", "energy per year"], per_network, {1, 2, 3},
                    ["all", _usd(bom.usd()), f"{bom.watts()[0] / 1000:,.1f} - {bom.watts()[1] / 1000:,.1f}",
                     _usd(bom.energy_usd_per_year())])
    per_gpu = _usd((gpu_low / bom.gpus, gpu_high / bom.gpus))
    facts = (f"<p><b>Network cost per node</b> {_usd(bom.per_node_usd())}; per GPU {per_gpu}. "
             f"Energy {_short(bom.kwh_per_year()[0])} - {_short(bom.kwh_per_year()[1])} kWh per year at "
             f"${bom.usd_per_kwh[0]:g} - ${bom.usd_per_kwh[1]:g} per kWh ({escape(bom.energy_source)}).</p>")
    warn = ('<p class="note"><b>Prices are UNVERIFIED ranges</b> for budgeting only (cluster/catalog/prices.yaml); '
            "override them per stack under <code>costs.prices</code>. Switch watts exclude optics, which are "
            "counted as their own lines.</p>")
    missing = (f'<p class="sev-warning">No price for: {escape(", ".join(bom.missing))}</p>' if bom.missing else "")
    media = "".join(f"<li><code>{escape(network)} {escape(link)}</code>: {escape(rule[0])}, up to {rule[1]} m "
                    f"({escape(rule[2])})</li>" for (network, link), rule in MEDIA_RULES.items())
    return (warn + missing + totals + facts + table +
            f'<p class="note">Media assumptions by tier:</p><ul class="note">{media}</ul>')


ESTIMATE_SIZES = (2**24, 2**30, 2**33)  # 16 MiB, 1 GiB, 8 GiB


def _estimate_section(spec: ClusterSpec, topology: Topology) -> str:
    """Predicted collectives over the whole first pool (cluster.estimate), packed and worst placement."""
    rows: list[list[str]] = []
    try:
        table = estimate_table(spec, topology, sizes=ESTIMATE_SIZES)
    except NoFabricPath as problem:
        return f'<p class="note">No estimate: {escape(str(problem))}.</p>'
    shown: dict[tuple[str, int, str, str, str, str], int] = {}  # identical placements: one row
    for row in table:
        cells = [row["collective"], row["placement"], _size(row["size_bytes"]), row["algorithm"],
                 f"{row['time_s'] * 1000:,.2f} ms", f"{row['busbw_GBps']:,.1f}", row["bottleneck"]]
        same = (row["collective"], row["size_bytes"], row["algorithm"], cells[4], cells[5], str(row["bottleneck"]))
        if same in shown:
            rows[shown[same]][1] += f" = {row['placement']}"
            continue
        shown[same] = len(rows)
        rows.append(cells)
    pool = spec.pools[0]
    intro = (f'<p class="note">{pool.nodes} nodes of pool <code>{escape(pool.name)}</code>; busbw in GB/s, '
             "nccl-tests convention; model and calibration in <code>python -m cluster estimate</code>.</p>")
    return intro + _table(["collective", "placement", "size", "algorithm", "time", "busbw GB/s", "bottleneck"],
                          rows, {4, 5})


def _size(size_bytes: int) -> str:
    return f"{size_bytes / 2**30:g} GiB" if size_bytes >= 2**30 else f"{size_bytes / 2**20:g} MiB"


def render_report(result: Result) -> str:
    """The whole report for a validated (spec-bearing) result."""
    spec, topology = result.spec, result.topology
    assert spec is not None and topology is not None, "report needs a spec that passed SCHEMA"
    data = summary(spec, topology)
    bom = None if spec.is_cloud else bill_of_materials(spec, topology)
    counts = Counter(str(f.severity) for f in result.findings if not f.suppressed)
    verdict = '<span class="badge ok">OK</span>' if result.ok else '<span class="badge failed">FAILED</span>'
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta {FILE_MARK} report">',
        f"<title>gpu-cluster report: {escape(spec.name)}</title>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<style>{CSS}</style></head><body><main>",
        f"<h1>{escape(spec.name)} {verdict}</h1>",
        f'<p class="sub">Stack <code>{escape(result.stack)}</code>, target {escape(spec.target)}: '
        f"{counts.get('error', 0)} error(s), {counts.get('warning', 0)} warning(s). "
        "Generated by gpu-cluster from the validated topology graph.</p>",
        '<section id="summary"><h2>Design</h2>', _summary_section(result, data, bom), "</section>",
        '<section id="diagram"><h2>Topology</h2><div class="diagram">', fabric_svg(spec, topology), "</div>",
        '<p class="note">Tiers as rows; leaves coloured by rail (a rail-optimized leaf group has one leaf per '
        "rail); grey boxes are spines, black cores; the bottom row is the nodes of each leaf group.</p></section>",
        '<section id="findings"><h2>Findings</h2>', _findings_section(result), "</section>",
        '<section id="oversubscription"><h2>Oversubscription per tier</h2>',
        _oversubscription_section(spec, topology), "</section>",
    ]
    parts += ['<section id="estimate"><h2>Collective estimates</h2>', _estimate_section(spec, topology), "</section>"]
    if bom is not None:
        parts += ['<section id="bom"><h2>Bill of materials</h2>', _bom_section(bom), "</section>"]
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"
