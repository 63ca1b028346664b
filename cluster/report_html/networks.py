"""Inline SVGs of the storage, management and out-of-band networks: spines, leaves, and under each
leaf what it serves (nodes, and on the out-of-band network the switches' management ports).

The drawing fits the same width as the fabric's (diagram.WIDTH): up to MAX_LEAVES leaves are
drawn one by one, the rest in one box that says how many and what they serve. Everything is read
off the graph; the markup is templates/report/diagram.svg.j2, like the fabric's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cluster.exports.hierarchy import compress
from cluster.report_html.diagram import (
    BOX_H,
    HOST_FILL,
    LEFT,
    ROW,
    SPINE_FILL,
    TEXT,
    TOP,
    WIDTH,
    Box,
    Drawing,
    Line,
    Svg,
    spread,
)
from cluster.spec import ClusterSpec
from cluster.topology import Topology
from cluster.words import counted

# One colour per network's leaves, apart from the fabric's rail colours.
NETWORK_COLOURS = {"storage": "#0b7285", "management": "#862e9c", "oob": "#5c940d"}
TITLES = {"storage": "storage network", "management": "management network", "oob": "out-of-band network"}
MAX_LEAVES = 24  # drawn one by one; more are one box
UPLINK_COLOUR = "#868e96"


@dataclass(frozen=True)
class Served:
    """What one leaf serves: nodes and (out-of-band) switch management ports."""

    hosts: tuple[str, ...]
    switches: tuple[str, ...]

    def label(self) -> str:
        return served_label(len(self.hosts), len(self.switches))

    def title(self) -> str:
        parts = [compress(self.hosts)] if self.hosts else []
        parts += [f"management ports of {compress(self.switches)}"] if self.switches else []
        return "; ".join(parts)


def served_label(nodes: int, switches: int) -> str:
    """`16 nodes, 8 switches`: what a leaf (or several) serves, in a box."""
    parts = [counted(nodes, "node")] if nodes else []
    parts += [counted(switches, "switch")] if switches else []
    return ", ".join(parts) or "nothing"


def _served(topology: Topology, network: str) -> tuple[dict[str, Served], dict[tuple[str, str], int]]:
    """Per leaf of `network`, what it serves; and the links of every leaf-to-spine bundle."""
    hosts: dict[str, list[str]] = {}
    switches: dict[str, list[str]] = {}
    uplinks: dict[tuple[str, str], int] = {}
    for _u, _v, key, data in topology.edges:
        if key != network:
            continue
        lower, upper = topology.nodes[data["lower"]], data["upper"]
        if lower["kind"] == "host":
            hosts.setdefault(upper, []).append(data["lower"])
        elif (lower.get("network"), lower.get("tier"), topology.nodes[upper].get("tier")) == (network, "leaf", "spine"):
            uplinks[(data["lower"], upper)] = uplinks.get((data["lower"], upper), 0) + data["links"]
        else:  # a switch's management port (the out-of-band network's own switches' too)
            switches.setdefault(upper, []).append(data["lower"])
    leaves = [name for name, _ in topology.switches(network, "leaf")]
    return ({leaf: Served(tuple(hosts.get(leaf, ())), tuple(switches.get(leaf, ()))) for leaf in leaves}, uplinks)


def network_view(spec: ClusterSpec, topology: Topology, network: str) -> Svg | None:
    """The diagram of `network` (storage, management or oob), or None when it has no switch of ours
    (carried by the GPU fabric, or a cloud provider's subnet)."""
    served, uplinks = _served(topology, network)
    if not served:
        return None
    spines = [name for name, _ in topology.switches(network, "spine")]
    leaves = list(served)
    shown = leaves if len(leaves) <= MAX_LEAVES else leaves[:MAX_LEAVES - 1]
    rest = leaves[len(shown):]
    drawing = Drawing()
    rows = {"spine": TOP, "leaf": TOP + ROW, "serves": TOP + 2 * ROW} if spines else {"leaf": TOP, "serves": TOP + ROW}
    inner = WIDTH - LEFT - 30
    columns = len(shown) + (1 if rest else 0)
    pitch = inner / columns
    leaf_w = min(150.0, pitch * 0.86)
    colour = NETWORK_COLOURS[network]
    for x, leaf in zip(spread(columns, inner, LEFT, leaf_w), shown, strict=False):
        node = topology.switch(leaf)
        short = leaf.rsplit("-", 1)[-1]
        drawing.box(Box(leaf, x, rows["leaf"], leaf_w, leaf if leaf_w >= 7 * len(leaf) else short, colour,
                        f"{leaf}: {node['model']}, {node['ports']} x {node['port_gbps']}G, {node['os']}"))
        drawing.box(Box(f"serves:{leaf}", x, rows["serves"], leaf_w, served[leaf].label(), HOST_FILL,
                        f"{leaf} serves {served[leaf].title()}", TEXT))
        drawing.lines.append(Line(f"serves:{leaf}", leaf, colour, 1.2))
    if rest:
        x = spread(columns, inner, LEFT, leaf_w)[-1]
        nodes = sum(len(served[leaf].hosts) for leaf in rest)
        ports = sum(len(served[leaf].switches) for leaf in rest)
        drawing.box(Box("more", x, rows["leaf"], leaf_w, f"+{len(rest):,} leaves", colour,
                        f"{compress(rest)}: drawn like the ones shown"))
        drawing.box(Box("serves:more", x, rows["serves"], leaf_w, served_label(nodes, ports), HOST_FILL,
                        f"{len(rest):,} more leaves serve {counted(nodes, 'node')} and "
                        f"{counted(ports, 'management port')}", TEXT))
        drawing.lines.append(Line("serves:more", "more", colour, 1.2))
    spine_w = min(150.0, inner / max(len(spines), 1) * 0.86)
    for x, spine in zip(spread(len(spines), inner, LEFT, spine_w), spines, strict=True):
        node = topology.switch(spine)
        drawing.box(Box(spine, x, rows["spine"], spine_w, spine if spine_w >= 7 * len(spine) else spine.rsplit("-", 1)[-1],
                        SPINE_FILL, f"{spine}: {node['model']}, {node['ports']} x {node['port_gbps']}G, {node['os']}"))
    drawn: set[tuple[str, str]] = set()  # the leaves in the "more" box: one line per spine
    for (leaf, spine), links in uplinks.items():
        lower = leaf if leaf in drawing.boxes else "more"
        if (lower, spine) not in drawn:
            drawn.add((lower, spine))
            drawing.lines.append(Line(lower, spine, UPLINK_COLOUR, 0.6 + math.log2(links) * 0.5))
    bundles, cables = len(uplinks), sum(uplinks.values())
    if bundles:
        drawing.notes.append(f"Leaf to spine: {bundles:,} bundles, {cables:,} cables (thicker = more).")
    legend = [(f"{network} leaf", colour)] + ([("spine", SPINE_FILL)] if spines else [])
    height = max(rows.values()) + BOX_H + 50 + 16 * len(drawing.notes) + 20
    labels = [(tier, float(y)) for tier, y in rows.items()]
    return drawing.view(WIDTH, height, labels, legend, f"{spec.name} {TITLES[network]}")
