"""One self-contained HTML report: summary, findings, oversubscription, diagram, bill of materials.

No external assets (inline CSS and SVG), no script, no timestamp: the same stack gives the same
bytes, so the file can be committed and diffed. This module prepares plain view data (numbers
formatted, rows as lists of strings); templates/report/page.html.j2 lays it out, and the report's
Jinja2 environment escapes every value, so nothing here escapes by hand.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from cluster.estimate.design import estimate_table
from cluster.estimate.placement import NoFabricPath
from cluster.exports.bom import Bom, bill_of_materials
from cluster.exports.cabling import MEDIA_RULES
from cluster.load import worst_per_tier
from cluster.pipeline import Valid
from cluster.report import summary, switch_text
from cluster.report_html.diagram import Svg, fabric_view
from cluster.report_html.engine import render
from cluster.report_html.networks import TITLES, network_view
from cluster.resizing import resize_text
from cluster.spec import ClusterSpec
from cluster.topology import NETWORKS, Topology
from cluster.words import counted, plural


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
    loads = topology.switch_loads
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
        worst_name, _ = worst_per_tier(loads, ((name, topology.switch(name)) for name, _ in members))[tier]
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


@dataclass(frozen=True)
class Table:
    """Rows of text cells; `numeric` columns are right-aligned; `total` is a bold last row."""

    head: list[str]
    rows: list[list[str]]
    numeric: frozenset[int] = frozenset()
    total: list[str] | None = None


@dataclass(frozen=True)
class FindingRow:
    severity: str  # error | warning | info: the CSS class
    label: str  # the severity as shown, "(suppressed)" added
    rule: str
    path: str
    where: str  # file:line as `validate` prints it, or ""
    message: str
    hint: str


@dataclass(frozen=True)
class TierRow:
    cells: list[str]
    limit: str  # "" where no limit applies
    within: bool


@dataclass(frozen=True)
class Estimate:
    problem: str  # why there is no estimate, or ""
    nodes: int = 0
    pool: str = ""
    table: Table | None = None


@dataclass(frozen=True)
class BomView:
    totals: Table
    lines: Table
    per_node: str
    per_gpu: str
    kwh: str
    price: str
    energy_source: str
    missing: str
    media: list[list[str]]  # network and link, medium, reach in m, source


@dataclass(frozen=True)
class Diagram:
    """One network's drawing, or why it has none."""

    id: str
    heading: str
    svg: Svg | None
    note: str


@dataclass(frozen=True)
class Page:
    """The prepared view of page.html.j2."""

    name: str
    ok: bool
    stack: str
    target: str
    errors: int
    warnings: int
    cards: list[tuple[str, str]]
    design: Table
    diagrams: list[Diagram]  # the GPU fabric first, then storage, management, out-of-band
    findings: list[FindingRow]
    tiers: list[TierRow]
    tier_head: list[str]
    estimate: Estimate
    bom: BomView | None
    tier_numeric: frozenset[int] = frozenset({2, 3, 4, 5, 6})


def _summary(data: dict[str, Any], bom: Bom | None) -> tuple[list[tuple[str, str]], Table]:
    cards = [(f"{data['gpus']:,}", "GPUs"), (f"{data['nodes']:,}", "nodes")]
    for pool, value in data["gbps_per_gpu"].items():
        cards.append((f"{value:g} Gbps", f"fabric per GPU ({pool})"))
    fabric = data["fabric"]
    if fabric:
        cards.append((f"{fabric['tiers']}", f"{plural('tier', fabric['tiers'])}, {fabric['design']}"))
        worst = max(data["oversubscription"].values(), default=None)
        if worst is not None:
            cards.append((f"{worst:g}:1", "worst fabric oversubscription"))
    if bom is not None:
        cards.append((_usd(bom.usd()), "network cost (UNVERIFIED ranges)"))
    rows = [["pools", ", ".join(f"{name}: {p['nodes']} x {p['gpu']}" for name, p in data["pools"].items())]]
    if fabric:
        rows.append(["fabric", f"{fabric['transport']}, {fabric['design']}, {counted(fabric['planes'], 'plane')}, "
                               f"{counted(fabric['rails'], 'rail')}, leaves {fabric['leaf_model']}"])
        rows.append(["leaf groups", f"{counted(fabric['leaf_groups'], 'group')} of up to {fabric['nodes_per_leaf']} nodes, "
                                    f"{fabric['leaf_uplinks']} uplinks per leaf"
                                    + (f", {fabric['pods']} pods, {fabric['spine_uplinks']} uplinks per spine"
                                       if fabric["tiers"] == 3 else "")])
        if fabric["auto_sized"]:
            rows.append(["auto-sized", ", ".join(fabric["auto_sized"])])
    for network, tiers in data["switch_models"].items():  # model, port speed and OS per tier
        rows.append([f"{network} switches", ", ".join(switch_text(tier, entry) for tier, entry in tiers.items())])
    rows.extend(["re-sized", resize_text(entry)] for entry in data["resized"])
    return cards, Table([], rows)


def _diagrams(spec: ClusterSpec, topology: Topology) -> list[Diagram]:
    """Every network drawn: the GPU fabric, then each other network, or what carries it instead."""
    diagrams = [Diagram("fabric", "GPU fabric", fabric_view(spec, topology), "")]
    shared = spec.fabric.shared_with if spec.fabric is not None else ()
    for network in ("storage", "management", "oob"):
        svg = network_view(spec, topology, network)
        if svg is not None:
            note = ""
        elif network in shared:
            note = f"Carried by the GPU fabric's leaves (fabric.shared_with: [{', '.join(shared)}]): drawn above."
        elif spec.is_cloud:
            note = f"The provider's ({spec.target}) subnets: no switch of ours to draw."
        else:
            note = "No switch of ours on this network."
        diagrams.append(Diagram(network, TITLES[network][0].upper() + TITLES[network][1:], svg, note))
    return diagrams


def _findings(result: Valid) -> list[FindingRow]:
    rows = []
    for finding in result.findings:
        severity = str(finding.severity)
        line = result.loaded.line_of(finding.path) if result.loaded.source else 0
        rows.append(FindingRow(severity, severity + (" (suppressed)" if finding.suppressed else ""), finding.rule,
                               finding.path, f"{result.loaded.source}:{line}" if line else "", finding.message,
                               finding.hint))
    return rows


def _tiers(spec: ClusterSpec, topology: Topology) -> list[TierRow]:
    rows = []
    for load in tier_loads(spec, topology):
        rows.append(TierRow([load.network, load.tier, f"{load.switches:,}", f"{load.down_gbps:,.0f}",
                             f"{load.up_gbps:,.0f}", f"{load.best:.2f}:1", f"{load.worst:.2f}:1", load.worst_switch],
                            "" if load.limit is None else f"{load.limit:g}:1",
                            load.limit is None or load.worst <= load.limit + 1e-9))
    return rows


def _bom(bom: Bom) -> BomView:
    rows = [[line.network, line.tier, line.category, line.description, f"{line.quantity:,}", _usd(line.unit_usd),
             _usd(line.usd), f"{_short(line.watts[0])} - {_short(line.watts[1])}", line.source] for line in bom.lines]
    total = ["all", "", "", "total", "", "", _usd(bom.usd()), f"{_short(bom.watts()[0])} - {_short(bom.watts()[1])}", ""]
    lines = Table(["network", "tier / link", "category", "item", "qty", "unit USD", "total USD", "W", "source"],
                  rows, frozenset({4, 5, 6, 7}), total)
    per_network = [[network, _usd(bom.usd(network)), f"{bom.watts(network)[0] / 1000:,.1f} - "
                    f"{bom.watts(network)[1] / 1000:,.1f}", _usd(bom.energy_usd_per_year(network))]
                   for network in bom.networks()]
    totals = Table(["network", "cost", "power kW", "energy per year"], per_network, frozenset({1, 2, 3}),
                   ["all", _usd(bom.usd()), f"{bom.watts()[0] / 1000:,.1f} - {bom.watts()[1] / 1000:,.1f}",
                    _usd(bom.energy_usd_per_year())])
    gpu_low, gpu_high = bom.usd()
    return BomView(totals, lines, _usd(bom.per_node_usd()), _usd((gpu_low / bom.gpus, gpu_high / bom.gpus)),
                   f"{_short(bom.kwh_per_year()[0])} - {_short(bom.kwh_per_year()[1])}",
                   f"${bom.usd_per_kwh[0]:g} - ${bom.usd_per_kwh[1]:g}", bom.energy_source, ", ".join(bom.missing),
                   [[f"{network} {link}", rule[0], f"{rule[1]}", rule[2]] for (network, link), rule in MEDIA_RULES.items()])


ESTIMATE_SIZES = (2**24, 2**30, 2**33)  # 16 MiB, 1 GiB, 8 GiB


def _estimate(spec: ClusterSpec, topology: Topology) -> Estimate:
    """Predicted collectives over the whole first pool (cluster.estimate), packed and worst placement."""
    rows: list[list[str]] = []
    try:
        table = estimate_table(spec, topology, sizes=ESTIMATE_SIZES)
    except NoFabricPath as problem:
        return Estimate(str(problem))
    shown: dict[tuple[str, int, str, str, str, str], int] = {}  # identical placements: one row
    for row in table:
        cells = [row["collective"], row["placement"], _size(row["size_bytes"]), row["algorithm"],
                 f"{row['time_s'] * 1000:,.2f} ms", f"{row['busbw_GBps']:,.1f}", str(row["bottleneck"])]
        same = (row["collective"], row["size_bytes"], row["algorithm"], cells[4], cells[5], str(row["bottleneck"]))
        if same in shown:
            rows[shown[same]][1] += f" = {row['placement']}"
            continue
        shown[same] = len(rows)
        rows.append(cells)
    head = ["collective", "placement", "size", "algorithm", "time", "busbw GB/s", "bottleneck"]
    return Estimate("", spec.pools[0].nodes, spec.pools[0].name, Table(head, rows, frozenset({4, 5})))


def _size(size_bytes: int) -> str:
    return f"{size_bytes / 2**30:g} GiB" if size_bytes >= 2**30 else f"{size_bytes / 2**20:g} MiB"


def report_view(result: Valid) -> Page:
    """The view of the whole report for a design that was built."""
    spec, topology = result.spec, result.topology
    bom = None if spec.is_cloud else bill_of_materials(spec, topology)
    counts = Counter(str(f.severity) for f in result.findings if not f.suppressed)
    cards, design = _summary(summary(spec, topology), bom)
    head = ["network", "tier", "switches", "down Gbps", "up Gbps", "best", "worst", "worst switch", "limit"]
    return Page(spec.name, result.ok, result.stack, str(spec.target), counts.get("error", 0), counts.get("warning", 0),
                cards, design, _diagrams(spec, topology), _findings(result), _tiers(spec, topology), head,
                _estimate(spec, topology), None if bom is None else _bom(bom))


def render_report(result: Valid) -> str:
    """The whole report for a validated (spec-bearing) result."""
    return render("page.html.j2", page=report_view(result))
