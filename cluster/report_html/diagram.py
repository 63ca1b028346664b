"""An inline SVG of the GPU fabric: tiers as rows (cores, spines, leaves, hosts), rails coloured.

Small fabrics (every switch at least MIN_PITCH px wide in WIDTH, the width the report shows at
1:1) are drawn switch by switch with every leaf-spine edge. Large ones are drawn
aggregated: one box per pod and rail ("r3 x 32 leaves"), one spine box per pod, one core box,
so a 131,072-GPU design is a few hundred SVG elements and draws in well under a second.
Everything is read off the graph; the drawing is deterministic. This module lays it out; the
markup is templates/report/diagram.svg.j2, which escapes every name and label.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cluster.exports.hierarchy import compress
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology
from cluster.tree import FabricTree
from cluster.words import counted

RAIL_COLOURS = ("#2f6fdf", "#e8590c", "#2b9348", "#c92a2a", "#7048e8", "#b7791f", "#d6336c", "#0c8599")
SPINE_FILL, CORE_FILL, HOST_FILL, TEXT = "#495057", "#212529", "#f1f3f5", "#212529"
RACK_LEAF_FILL = "#1864ab"  # a rack-tor leaf carries every rail of its nodes
DETAIL_LIMIT = {"leaves": 96, "spines": 64, "cores": 64}  # above any of these: aggregated drawing
MAX_COLUMNS = 16  # aggregated: pods drawn; the rest are summarised in one box
LEFT, TOP, ROW, BOX_H, WIDTH = 120, 40, 120, 30, 1320  # WIDTH: what the report's column shows at 1:1
GROUP_GAP = 26.0
MIN_PITCH = 12.0  # px per switch in a row: below it the fabric is drawn aggregated


def rail_colour(rail: int | None) -> str:
    return RACK_LEAF_FILL if rail is None else RAIL_COLOURS[rail % len(RAIL_COLOURS)]


@dataclass(frozen=True)
class Box:
    key: str
    x: float
    y: float
    w: float
    label: str
    fill: str
    title: str
    text_fill: str = "#ffffff"


@dataclass(frozen=True)
class Line:
    a: str
    b: str
    colour: str
    width: float


@dataclass(frozen=True)
class Text:
    """One SVG <text>, its numbers formatted; `halo` draws a white outline under it."""

    x: str
    y: str
    size: int
    anchor: str
    fill: str
    weight: str
    text: str
    halo: bool = False


def _text(x: float, y: float, text: str, size: int = 11, anchor: str = "middle", fill: str = TEXT,
          weight: str = "normal", halo: bool = False) -> Text:
    return Text(f"{x:.1f}", f"{y:.1f}", size, anchor, fill, weight, text, halo)


@dataclass(frozen=True)
class SvgLine:
    x1: str
    y1: str
    x2: str
    y2: str
    stroke: str
    width: str


@dataclass(frozen=True)
class SvgBox:
    title: str
    x: str
    y: str
    w: str
    fill: str
    label: Text


@dataclass(frozen=True)
class Swatch:
    x: str
    y: str
    fill: str
    label: Text


@dataclass(frozen=True)
class Svg:
    """The prepared view of diagram.svg.j2: every element in drawing order, every number a string."""

    width: str
    height: str
    title: str
    box_h: int
    guides: list[tuple[SvgLine, Text]]  # one faint line and a label per tier row
    links: list[SvgLine]
    boxes: list[SvgBox]
    labels: list[Text]
    legend: list[Swatch]
    notes: list[Text]


def spread(count: int, width: float, left: float, box: float) -> list[float]:
    """x of `count` boxes of width `box` spread evenly over [left, left + width]."""
    if count <= 0:
        return []
    step = width / count
    return [left + step * index + (step - box) / 2 for index in range(count)]


class Drawing:
    def __init__(self) -> None:
        self.boxes: dict[str, Box] = {}
        self.lines: list[Line] = []
        self.notes: list[str] = []
        self.labels: list[tuple[float, float, str]] = []  # free text (x centre, baseline y, text)

    def box(self, box: Box) -> None:
        self.boxes[box.key] = box

    def view(self, width: float, height: float, rows: list[tuple[str, float]], legend: list[tuple[str, str]],
             title: str) -> Svg:
        guides = [(SvgLine(f"{LEFT - 10}", f"{y + BOX_H / 2:.1f}", f"{width - 10:.0f}", f"{y + BOX_H / 2:.1f}", "#e9ecef", "1"),
                   _text(12, y + BOX_H / 2 + 4, label, 13, "start", "#495057", "bold")) for label, y in rows]
        links = []
        for line in self.lines:
            a, b = self.boxes[line.a], self.boxes[line.b]
            lower, upper = (a, b) if a.y > b.y else (b, a)
            links.append(SvgLine(f"{lower.x + lower.w / 2:.1f}", f"{lower.y:.1f}", f"{upper.x + upper.w / 2:.1f}",
                                 f"{upper.y + BOX_H:.1f}", line.colour, f"{line.width:.2f}"))
        boxes = []
        for box in self.boxes.values():
            size = 12 if len(box.label) * 7 < box.w else (10 if len(box.label) * 6 < box.w else 8)
            label = box.label if len(box.label) * 5 <= box.w else ""  # too narrow even at 8 px: the title names it
            boxes.append(SvgBox(box.title, f"{box.x:.1f}", f"{box.y:.1f}", f"{box.w:.1f}", box.fill,
                                _text(box.x + box.w / 2, box.y + BOX_H / 2 + 4, label, size, fill=box.text_fill)))
        labels = [_text(x, y, label, 11, fill="#495057", weight="bold", halo=True) for x, y, label in self.labels]
        swatches = []
        x, y = LEFT, height - 22
        for label, colour in legend:
            swatches.append(Swatch(f"{x}", f"{y - 10}", colour, _text(x + 17, y, label, 11, "start")))
            x += 24 + 7 * len(label)
        notes = [_text(LEFT, height - 42 - 16 * index, note, 11, "start", "#868e96") for index, note in enumerate(self.notes)]
        return Svg(f"{width:.0f}", f"{height:.0f}", title, BOX_H, guides, links, boxes, labels, swatches, notes)


def _short(name: str) -> str:
    """`spine-007` -> `s7`, `core-012` -> `c12`: a narrow box's label (its title keeps the name)."""
    tier, _, number = name.rpartition("-")
    return f"{tier[:1]}{int(number)}" if number.isdigit() and tier in ("spine", "core") else name


def _leaf_room(tree: FabricTree) -> float:
    """The width the leaf row has between its margins and the gaps between leaf groups."""
    return WIDTH - LEFT - 30 - GROUP_GAP * max(len(tree.groups) - 1, 0)


def _detailed(tree: FabricTree, topology: Topology) -> tuple[Drawing, float, dict[str, float]]:
    """Every switch and every leaf-spine / spine-core edge."""
    drawing = Drawing()
    leaves = sum(len(group.leaves) for group in tree.groups)
    # Fill WIDTH pixels, never more: wide boxes with full names on small fabrics, narrow ones on
    # big (fabric_view draws a fabric aggregated when its boxes would be narrower than MIN_PITCH).
    room = _leaf_room(tree)
    pitch = room / max(leaves, 1)
    leaf_w, gap = min(110.0, pitch * 0.82), min(18.0, pitch * 0.18)
    smallest = min(120.0, room / max(len(tree.groups), 1))
    widths = [max(len(group.leaves) * (leaf_w + gap) - gap, smallest) for group in tree.groups]
    width = float(WIDTH)
    spare = (room - sum(widths)) / max(len(widths), 1)
    widths = [group_width + spare for group_width in widths]
    spines = [spine for pod in tree.pods for spine in pod.spines]
    spine_w = min(110.0, (width - LEFT - 30) / max(len(spines), 1) * 0.86)
    rows: dict[str, float] = {"core": TOP, "spine": TOP + ROW, "leaf": TOP + 2 * ROW, "hosts": TOP + 3 * ROW}
    if not tree.cores:
        rows = {tier: y - ROW for tier, y in rows.items() if tier != "core"}
    inner = width - LEFT - 30
    core_w = min(110.0, inner / max(len(tree.cores), 1) * 0.86)
    for x, core in zip(spread(len(tree.cores), inner, LEFT, core_w), tree.cores, strict=True):
        drawing.box(Box(core, x, rows["core"], core_w, core if core_w >= 70 else _short(core), CORE_FILL, core))
    for x, spine in zip(spread(len(spines), inner, LEFT, spine_w), spines, strict=True):
        drawing.box(Box(spine, x, rows["spine"], spine_w, spine if spine_w >= 70 else _short(spine), SPINE_FILL, spine))
    x = float(LEFT)
    for group, group_width in zip(tree.groups, widths, strict=True):
        used = len(group.leaves) * (leaf_w + gap) - gap
        left = x + (group_width - used) / 2
        for index, leaf in enumerate(group.leaves):
            node = topology.switch(leaf)
            rail = node["rail"]
            short = (f"r{rail}" if rail is not None else "leaf") + ("'" if node["plane"] else "")
            drawing.box(Box(leaf, left + index * (leaf_w + gap), rows["leaf"], leaf_w,
                            leaf if leaf_w >= 7 * len(leaf) else short, rail_colour(rail),
                            f"{leaf} (plane {node['plane']})"))
        if leaf_w < 7 * len(group.leaves[0]):  # boxes show r0..r7: name the group under them
            drawing.labels.append((x + group_width / 2, rows["leaf"] + BOX_H + 16, group.name))
        gpus = sum(topology.host(host)["gpus"] for host in group.hosts)
        label = f"{len(group.hosts)} nodes, {gpus} GPUs"
        if group_width >= 6.5 * (len(label) + len(compress(group.hosts)) + 3):
            label = f"{compress(group.hosts)}: {label}"
        drawing.box(Box(f"hosts:{group.name}", x, rows["hosts"], group_width, label, HOST_FILL,
                        f"{group.name}: {compress(group.hosts)}", TEXT))
        for leaf in group.leaves:
            drawing.lines.append(Line(f"hosts:{group.name}", leaf, rail_colour(topology.switch(leaf)["rail"]), 1.2))
        x += group_width + GROUP_GAP
    bundles = cables = 0
    for _u, _v, key, data in topology.edges:
        lower = topology.nodes[data["lower"]]
        if key != FABRIC or lower["kind"] != "switch":
            continue
        colour = rail_colour(lower["rail"]) if lower["tier"] == "leaf" else "#868e96"
        drawing.lines.append(Line(data["lower"], data["upper"], colour, 0.6 + math.log2(data["links"]) * 0.5))
        bundles += 1
        cables += data["links"]
    if bundles:
        drawing.notes.append(f"Each line between switches is a bundle of parallel cables: {bundles:,} bundles, "
                             f"{cables:,} cables (thicker = more).")
    return drawing, width, rows


def _aggregated(tree: FabricTree, topology: Topology) -> tuple[Drawing, float, dict[str, float]]:
    """One column per pod: a box per rail (and plane), one spine box, hosts; one core box on top."""
    drawing = Drawing()
    rails: dict[int, dict[tuple[int, int | None], int]] = {}
    for group in tree.groups:
        for leaf in group.leaves:
            node = topology.switch(leaf)
            plane_rail = (node["plane"], node["rail"])
            counts_of_pod = rails.setdefault(group.pod, {})
            counts_of_pod[plane_rail] = counts_of_pod.get(plane_rail, 0) + 1
    pods = list(tree.pods)
    # As many pod columns as fit WIDTH with rail boxes at least 16 px wide; the rest in one box.
    gap, pod_gap, available = 3.0, 22.0, WIDTH - LEFT - 30
    per_pod = max((len(counts) for counts in rails.values()), default=1)
    narrowest = max(per_pod * (16 + gap) - gap, 110.0)
    fit = max(1, min(MAX_COLUMNS, int((available + pod_gap) // (narrowest + pod_gap))))
    shown = pods if len(pods) <= fit else pods[:max(1, fit - 1)]
    columns = len(shown) + (1 if len(shown) < len(pods) else 0)
    column = max((available + pod_gap) / columns - pod_gap, 110.0)
    rail_w = max(16.0, min(48.0, (column - gap * (per_pod - 1)) / per_pod))
    width = max(LEFT + columns * (column + pod_gap) - pod_gap + 30, WIDTH)
    rows: dict[str, float] = {"core": TOP, "spine": TOP + ROW, "leaf": TOP + 2 * ROW, "hosts": TOP + 3 * ROW}
    if not tree.cores:
        rows = {tier: y - ROW for tier, y in rows.items() if tier != "core"}
    hosts_of_pod: dict[int, int] = {}
    gpus_of_pod: dict[int, int] = {}
    for group in tree.groups:
        hosts_of_pod[group.pod] = hosts_of_pod.get(group.pod, 0) + len(group.hosts)
        gpus_of_pod[group.pod] = gpus_of_pod.get(group.pod, 0) + sum(topology.host(h)["gpus"] for h in group.hosts)
    if tree.cores:
        drawing.box(Box("cores", LEFT + (width - LEFT - 30) / 2 - 90, rows["core"], 180,
                        f"{len(tree.cores)} cores", CORE_FILL, compress(tree.cores)))
    x = float(LEFT)
    for pod in shown:
        counts = rails.get(pod.index, {})
        used = len(counts) * (rail_w + gap) - gap
        left = x + (column - used) / 2
        spine_key = f"spines:{pod.name}"
        drawing.box(Box(spine_key, x + column / 2 - 55, rows["spine"], 110, f"{pod.name}: {len(pod.spines)} sp",
                        SPINE_FILL, f"{pod.name}: {compress(pod.spines)}"))
        if tree.cores:
            drawing.lines.append(Line(spine_key, "cores", "#868e96", 2.0))
        for index, ((plane, rail), count) in enumerate(sorted(counts.items(), key=lambda item: (item[0][0], item[0][1] or 0))):
            key = f"rail:{pod.name}:{plane}:{rail}"
            label = f"{'leaf' if rail is None else f'r{rail}'}{chr(39) * plane}"
            if rail_w >= 44:
                label += f" x{count}"
            drawing.box(Box(key, left + index * (rail_w + gap), rows["leaf"], rail_w, label, rail_colour(rail),
                            f"{pod.name}: {count} leaves of rail {rail}, plane {plane}"))
            drawing.lines.append(Line(key, spine_key, rail_colour(rail), 1.5))
            drawing.lines.append(Line(f"hosts:{pod.name}", key, rail_colour(rail), 1.0))
        leaves_per_rail = max(counts.values(), default=0)
        drawing.box(Box(f"hosts:{pod.name}", x, rows["hosts"], column,
                        f"{hosts_of_pod.get(pod.index, 0):,} nodes, {leaves_per_rail} leaves/rail", HOST_FILL,
                        f"{pod.name}: {hosts_of_pod.get(pod.index, 0):,} nodes, {gpus_of_pod.get(pod.index, 0):,} GPUs",
                        TEXT))
        x += column + pod_gap
    if len(shown) < len(pods):
        rest = pods[len(shown):]
        nodes = sum(hosts_of_pod.get(pod.index, 0) for pod in rest)
        drawing.box(Box("more", x, rows["spine"], column, f"+{len(rest)} pods alike", "#adb5bd",
                        f"{len(rest)} more pods ({nodes:,} nodes), drawn like the ones shown", TEXT))
        drawing.box(Box("more-hosts", x, rows["hosts"], column, f"{nodes:,} nodes", HOST_FILL,
                        f"{len(rest)} more pods", TEXT))
        if tree.cores:
            drawing.lines.append(Line("more", "cores", "#868e96", 2.0))
    drawing.notes.append(f"Aggregated view: {sum(len(g.leaves) for g in tree.groups):,} leaves in "
                         f"{counted(len(pods), 'pod')}, one box per pod and rail; hover a box for the switches it stands for.")
    return drawing, width, rows


def fabric_view(spec: ClusterSpec, topology: Topology) -> Svg:
    """The diagram of the GPU fabric (cloud stacks: pools and their provider fabric), as the view that
    templates/report/diagram.svg.j2 writes out; the page includes that template."""
    if spec.is_cloud:
        return _cloud_view(spec, topology)
    tree = topology.fabric_tree
    spines = sum(len(pod.spines) for pod in tree.pods)
    leaves = sum(len(group.leaves) for group in tree.groups)
    inner = WIDTH - LEFT - 30
    detailed = (leaves <= DETAIL_LIMIT["leaves"] and spines <= DETAIL_LIMIT["spines"]
                and len(tree.cores) <= DETAIL_LIMIT["cores"] and _leaf_room(tree) / max(leaves, 1) >= MIN_PITCH
                and inner / max(spines, len(tree.cores), 1) >= MIN_PITCH)
    drawing, width, rows = _detailed(tree, topology) if detailed else _aggregated(tree, topology)
    rails = {topology.switch(leaf)["rail"] for group in tree.groups for leaf in group.leaves}
    legend = [(f"rail {rail}", rail_colour(rail)) for rail in sorted(rail for rail in rails if rail is not None)]
    if None in rails:
        legend.append(("leaf (rack-tor: all of a node's ports)", RACK_LEAF_FILL))
    legend += [("spine", SPINE_FILL)] + ([("core", CORE_FILL)] if tree.cores else [])
    if spec.fabric is not None and spec.fabric.planes > 1:
        drawing.notes.append("r3' = plane 1; unmarked = plane 0.")
    height = max(rows.values()) + BOX_H + 50 + 16 * len(drawing.notes) + 20
    labels = [(tier if tier != "hosts" else "hosts", y) for tier, y in rows.items()]
    return drawing.view(width, height, labels, legend, f"{spec.name} GPU fabric")


def _cloud_view(spec: ClusterSpec, topology: Topology) -> Svg:
    drawing = Drawing()
    width = min(max(720.0, LEFT + len(spec.pools) * 240 + 30), WIDTH)
    box_w = min(200.0, (width - LEFT - 30) / len(spec.pools) * 0.86)
    xs = spread(len(spec.pools), width - LEFT - 30, LEFT, box_w)
    for x, pool in zip(xs, spec.pools, strict=True):
        fabric = f"{pool.name}-provider-fabric"
        drawing.box(Box(fabric, x, TOP, box_w, f"{pool.fabric_kind} ({spec.target})", SPINE_FILL, fabric))
        drawing.box(Box(f"hosts:{pool.name}", x, TOP + ROW, box_w, f"{pool.nodes} x {pool.instance_type}", HOST_FILL,
                        compress(topology.hosts_by_pool[pool.name]), TEXT))
        drawing.lines.append(Line(f"hosts:{pool.name}", fabric, rail_colour(0), 2.0))
    drawing.notes.append("Cloud target: the fabric is the provider's; only the host side is modelled.")
    return drawing.view(width, TOP + 2 * ROW + 60, [("provider", TOP), ("hosts", TOP + ROW)], [], f"{spec.name} fabric")
