"""The HTML report: parsed back with html.parser, its SVG with xml.etree, and the CLI verb."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pytest
from conftest import ROOT, run, stack

from cluster.exports.bom import bill_of_materials
from cluster.exports.hierarchy import compress
from cluster.findings import Finding, Severity
from cluster.pipeline import Result, Valid, validate
from cluster.publish import FILE_MARK
from cluster.report_html.diagram import RAIL_COLOURS
from cluster.report_html.engine import render
from cluster.report_html.networks import NETWORK_COLOURS
from cluster.report_html.page import render_report, report_view

SVG = "{http://www.w3.org/2000/svg}"
# More than 96 leaves (25 groups x 8 rails) and three tiers: drawn aggregated.
LARGE = stack(node_pools=[{"name": "h200", "nodes": 200, "gpu": "H200"}],
              fabric={"leaf": {"ports": 16, "port_gbps": 400}, "spine": {"ports": 16, "port_gbps": 400},
                      "core": {"ports": 64, "port_gbps": 400}})


class _Page(HTMLParser):
    """Tags, attributes, section ids, table cells and the raw SVG text of a report."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> tuple[_Page, ET.Element]:
    page = _Page()
    page.feed(html)
    page.close()
    start, end = html.index("<svg"), html.index("</svg>") + len("</svg>")
    return page, ET.fromstring(html[start:end])


def _report(result: Result) -> str:
    assert isinstance(result, Valid), result.findings
    return render_report(result)


def _titles(svg: ET.Element) -> list[str]:
    return [element.text or "" for element in svg.iter(f"{SVG}title")]


def test_prod_report_is_self_contained_and_has_every_section() -> None:
    page, svg = _parse(_report(validate("prod")))
    tags = [tag for tag, _ in page.tags]
    assert tags.count("svg") == 4 and "script" not in tags and "link" not in tags and "img" not in tags
    for _, attrs in page.tags:  # no external asset of any kind
        for name in ("src", "href"):
            assert not (attrs.get(name) or "").startswith(("http", "//", "file:")), attrs
    sections = [attrs.get("id") for tag, attrs in page.tags if tag == "section"]
    assert sections == ["summary", "diagram", "findings", "oversubscription", "estimate", "bom"]
    assert svg.tag == f"{SVG}svg"
    text = " ".join(page.text)
    assert "512" in text and "No findings" in text and "UNVERIFIED" in text


def test_prod_diagram_draws_every_fabric_switch_with_rail_colours() -> None:
    result = validate("prod")
    _, svg = _parse(_report(result))
    assert isinstance(result, Valid)
    titles = _titles(svg)
    for name, _ in result.topology.switches("fabric"):
        assert any(title.startswith(name) for title in titles), name
    fills = [rect.get("fill") for rect in svg.iter(f"{SVG}rect")]
    for rail in range(8):  # one leaf per rail, coloured by rail (and the legend's swatch)
        assert fills.count(RAIL_COLOURS[rail]) == 2, rail
    assert any("h200-node-[001-064]" in title for title in titles)


def test_superpod_diagram_rows_and_bundles() -> None:
    result = validate("superpod")
    _, svg = _parse(_report(result))
    titles = _titles(svg)
    assert sum(1 for title in titles if title.startswith("leaf-") and "(plane" in title) == 32
    assert sum(1 for title in titles if title.startswith("spine-")) == 16
    lines = [line for line in svg.iter(f"{SVG}line") if line.get("stroke-opacity")]
    assert len(lines) == 32 * 16 + 32  # every leaf-spine bundle, and each group's hosts to its 8 leaves


@pytest.mark.slow
def test_large_fabric_is_drawn_aggregated_per_pod_and_rail() -> None:
    result = run(LARGE)
    assert isinstance(result, Valid) and result.topology.fabric_plan is not None
    assert result.topology.fabric_plan.tiers == 3
    _, svg = _parse(_report(result))
    elements = sum(1 for _ in svg.iter())
    assert elements < 600, elements  # not one box per switch
    titles = _titles(svg)
    rail_boxes = [title for title in titles if " leaves of rail " in title]
    leaves = sum(1 for _ in result.topology.switches("fabric", "leaf"))
    shown_pods = {title.split(":")[0] for title in rail_boxes}
    hidden = [title for title in titles if "more pods" in title]
    counted = sum(int(title.split(": ")[1].split(" ")[0]) for title in rail_boxes)
    assert counted <= leaves and (counted == leaves or hidden)
    assert len(shown_pods) >= 1 and any("cores" in title or title.startswith("core-") for title in titles)


def _svgs(html: str) -> dict[str, ET.Element]:
    """Every SVG of the page by its aria-label."""
    found, start = {}, 0
    while (start := html.find("<svg", start)) != -1:
        end = html.index("</svg>", start) + len("</svg>")
        svg = ET.fromstring(html[start:end])
        found[svg.get("aria-label", "")] = svg
        start = end
    return found


def test_every_network_is_drawn_with_what_each_leaf_serves() -> None:
    """Beside the GPU fabric: storage, management and out-of-band, every switch of each, and under
    each leaf the nodes it serves (on the out-of-band network also the switches' management ports)."""
    result = validate("superpod")
    assert isinstance(result, Valid)
    svgs = _svgs(_report(result))
    assert list(svgs) == [f"superpod {title}" for title in
                          ("GPU fabric", "storage network", "management network", "out-of-band network")]
    hosts: dict[str, list[str]] = {}
    for _u, _v, key, data in result.topology.edges:
        if key in NETWORK_COLOURS and result.topology.nodes[data["lower"]]["kind"] == "host":
            hosts.setdefault(data["upper"], []).append(data["lower"])
    for network, title in (("storage", "storage network"), ("management", "management network"),
                           ("oob", "out-of-band network")):
        svg = svgs[f"superpod {title}"]
        titles = _titles(svg)
        fills = [rect.get("fill") for rect in svg.iter(f"{SVG}rect")]
        for name, node in result.topology.switches(network):
            assert any(t.startswith(f"{name}: {node['model']}, {node['ports']} x {node['port_gbps']}G") for t in titles)
        leaves = [name for name, _ in result.topology.switches(network, "leaf")]
        assert fills.count(NETWORK_COLOURS[network]) == len(leaves) + 1  # each leaf, and the legend
        for leaf in leaves:  # the nodes under each leaf, by name
            served = [t for t in titles if t.startswith(f"{leaf} serves ")]
            assert served and (leaf not in hosts or served[0].startswith(f"{leaf} serves {compress(hosts[leaf])}"))
        assert sum(len(hosts.get(leaf, [])) for leaf in leaves) == 127  # every DGX on every network, once
    oob = _titles(svgs["superpod out-of-band network"])
    # the switches, by name, in the order of the first host each serves: rail leaves, then the spines above them
    assert any("management ports of leaf-001-r[0-7],spine-[001-004]" in title for title in oob)


def test_a_network_without_switches_of_its_own_says_what_carries_it() -> None:
    converged = _report(validate("examples/converged/Pulumi.converged.yaml"))
    assert "converged storage network" not in _svgs(converged)
    assert "Carried by the GPU fabric&#39;s leaves (fabric.shared_with: [storage]): drawn above." in converged
    cloud = _report(validate("aws-p5e"))
    assert list(_svgs(cloud)) == ["train fabric"] and cloud.count("The provider&#39;s (aws) subnets") == 3


def test_failing_design_shows_its_findings_and_oversubscription() -> None:
    result = validate("legacy")
    page, _ = _parse(_report(result))
    text = " ".join(page.text)
    assert "FAILED" in text
    for finding in result.findings:
        assert finding.rule in text and finding.path in text
    assert "2.25:1" in text and "above" in text  # the rack-tor leaves are 2.25:1 against a 1:1 limit


def test_bom_totals_in_the_report_match_the_bill_of_materials() -> None:
    result = validate("superpod")
    assert isinstance(result, Valid)
    html = _report(result)
    bom = bill_of_materials(result.spec, result.topology)
    low, high = bom.usd()
    assert f"${low / 1e6:.2f}M - ${high / 1e6:.2f}M" in html
    assert ">1,016<" in html and ">1,024<" in html  # the SuperPOD cable counts, in the BOM table


@pytest.mark.slow
def test_report_is_deterministic() -> None:
    assert _report(validate("superpod")) == _report(validate("superpod"))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cluster", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.slow
def test_cli_report_writes_one_file(tmp_path: Path) -> None:
    out = tmp_path / "nested" / "prod.html"
    done = _cli("report", "prod", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert [path.name for path in out.parent.iterdir()] == ["prod.html"]  # no staging file left behind


@pytest.mark.slow
def test_cli_report_exit_codes(tmp_path: Path) -> None:
    failing = tmp_path / "legacy.html"
    done = _cli("report", "legacy", "--out", str(failing))
    assert done.returncode == 1 and failing.exists() and "FAILS" in done.stdout
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  gpu-cluster:cluster:\n    name: bad\n    target: moon\n    node_pools: []\n")
    nothing = tmp_path / "bad.html"
    done = _cli("report", str(bad), "--out", str(nothing))
    assert done.returncode == 2 and not nothing.exists() and "Traceback" not in done.stderr
    blocked = tmp_path / "file"
    blocked.write_text("")
    done = _cli("report", "prod", "--out", str(blocked / "x.html"))
    assert done.returncode == 2 and "cannot write" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", ["prod", "superpod"])
def test_cli_export_writes_every_file(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    done = _cli("export", name, "--out", str(out))
    assert done.returncode == 0, done.stderr
    written = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    pool = {"prod": "h200", "superpod": "dgx"}[name]
    assert written == [".gpu-cluster-tree.json", "bom.csv", "cabling.csv", "kubernetes/kueue.yaml", "kubernetes/label-nodes.sh",
                       "kubernetes/node-labels.yaml", f"nccl/{pool}.env", "slurm/topology.conf"]
    failed = _cli("export", "legacy", "--out", str(tmp_path / "legacy"))
    assert failed.returncode == 1 and not (tmp_path / "legacy").exists()


def test_report_shows_the_collective_estimates_of_the_design() -> None:
    """Every collective, packed and worst placement, at 16 MiB, 1 GiB and 8 GiB, as `estimate` computes them."""
    from cluster.estimate.design import estimate_table
    from cluster.report_html.page import ESTIMATE_SIZES

    result = validate("prod")
    html = _report(result)
    section = html[html.index('<section id="estimate">'):]
    section = section[:section.index("</section>")]
    assert isinstance(result, Valid)
    rows = estimate_table(result.spec, result.topology, sizes=ESTIMATE_SIZES)
    assert len(rows) == 5 * 2 * 3
    # Packed and worst placement give the same figures on a 1:1 fabric: one row says so.
    distinct = {(r["collective"], r["size_bytes"], r["algorithm"], f"{r['time_s'] * 1000:,.2f}",
                 f"{r['busbw_GBps']:,.1f}", str(r["bottleneck"])) for r in rows}
    assert len(distinct) == 15
    assert section.count("<tr") == len(distinct) + 1  # plus the header row
    assert section.count("<td>packed = worst</td>") == 15
    for row in rows:
        assert f"{row['busbw_GBps']:,.1f}" in section


def test_report_keeps_placements_apart_where_they_differ() -> None:
    html = _report(validate("legacy"))
    section = html[html.index('<section id="estimate">'):]
    assert "<td>worst</td>" in section and "<td>packed</td>" in section


def test_report_names_the_worst_switch_validate_names() -> None:
    result = validate("legacy")
    [oversub] = [f for f in result.findings if f.rule == "FAB-OVERSUB"]
    worst = oversub.message.split(" at ")[1].split(" ")[0]
    assert worst == "leaf-001"
    html = _report(result)
    table = html[html.index("worst switch"):]
    assert f"<td>{worst}</td>" in table[:table.index("</table>")]
    assert "stacks/Pulumi.legacy.yaml:22" in html  # findings carry file:line, as `validate` prints them


HOSTILE = """<script>alert('x')</script> "&amp;" & it's <b onclick="x">"""


def _dressed(name: str, text: str) -> Valid:
    """A real validated result whose stack name, spec name, first pool name and one finding carry `text`.

    The stack file's names are held to [a-z0-9-] by the schema, so the strings are put into the
    validated result; every other value still comes from the pipeline.
    """
    result = validate(name)
    assert isinstance(result, Valid)
    spec, topology = result.spec, result.topology
    first, *rest = spec.pools
    pool = first.model_copy(update={"name": f"pool {text}"})
    hosts = {pool.name if key == first.name else key: value for key, value in topology.hosts_by_pool.items()}
    finding = Finding("FAB-OVERSUB", Severity.WARNING, "node_pools[0].name", f"message {text}", f"hint {text}")
    assert finding.message == f"message {text}"  # Finding keeps printable text as it is
    return dataclasses.replace(
        result, loaded=dataclasses.replace(result.loaded, stack=f"stack {text}"),
        spec=spec.model_copy(update={"name": f"name {text}", "pools": (pool, *rest)}),
        topology=dataclasses.replace(topology, hosts_by_pool=hosts), findings=[*result.findings, finding])


class _Tree(HTMLParser):
    """Every start and end tag with its attribute names, and the text of each element by path."""

    def __init__(self) -> None:
        super().__init__()
        self.shape: list[tuple[str, ...]] = []
        self.texts: list[str] = []
        self.attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.shape.append((tag, *(name for name, _ in attrs)))
        self.attrs.extend(value or "" for _, value in attrs)

    def handle_endtag(self, tag: str) -> None:
        self.shape.append(("/" + tag,))

    def handle_data(self, data: str) -> None:
        self.texts.append(data)


def _tree(html: str) -> _Tree:
    tree = _Tree()
    tree.feed(html)
    tree.close()
    return tree


@pytest.mark.parametrize("name", ["prod", "aws-p5e"])
def test_hostile_names_and_findings_are_text_not_markup(name: str) -> None:
    """`<script>`, quotes and `&` in a stack, spec, pool name, finding message and hint inject nothing."""
    plain, hostile = _tree(render_report(_dressed(name, "plain words"))), _tree(render_report(_dressed(name, HOSTILE)))
    assert hostile.shape == plain.shape  # not one element or attribute more, fewer or other
    for text in (f"stack {HOSTILE}", f"pool {HOSTILE}", f"message {HOSTILE}", f"hint {HOSTILE}"):
        assert text in hostile.texts, text  # one element's whole text, read back exactly
    assert f"gpu-cluster report: name {HOSTILE}" in hostile.texts
    assert f"name {HOSTILE} " in hostile.texts  # the heading, before its badge
    assert f"name {HOSTILE} {'GPU fabric' if name == 'prod' else 'fabric'}" in hostile.attrs  # the SVG's aria-label
    html = render_report(_dressed(name, HOSTILE))
    assert FILE_MARK in html  # `report --out` still recognises the file as its own
    svg = ET.fromstring(html[html.index("<svg"):html.index("</svg>") + len("</svg>")])  # still well-formed XML
    assert svg.get("aria-label", "").startswith(f"name {HOSTILE}")


def test_report_templates_refuse_a_missing_value() -> None:
    """StrictUndefined: a view without a field the template prints fails instead of printing nothing."""
    view = report_view(validate("prod"))
    with pytest.raises(jinja2.UndefinedError, match="stack"):
        render("page.html.j2", page={field.name: getattr(view, field.name) for field in dataclasses.fields(view)
                                     if field.name != "stack"})
