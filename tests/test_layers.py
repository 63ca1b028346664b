"""The house's layers: every package and module of cluster/ sits in one layer and imports only its
own layer and those below (function-level imports included), so there is no import cycle; and
cluster/ never imports pulumi."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

from tests.conftest import ROOT

DIALECT_JOBS = ("render", "lldp")  # a dialect's modules of these names; the rest are its platform facts
CLOUD_JOBS = ("plan", "kubernetes")  # a cloud's modules of these names; the rest are its facts


def _unit(module: str) -> str:
    """cluster.intent.switch -> cluster.render; cluster.pipeline -> cluster.pipeline. A dialect's
    modules sit in the layer of their job, whichever folder they are in: cluster.dialects.sonic
    and its other modules (its platform facts) -> cluster.dialects, cluster.dialects.sonic.render ->
    cluster.dialects.render; cluster.clouds.aws.plan -> cluster.clouds.plan."""
    parts = module.split(".")
    if parts[:2] == ["cluster", "dialects"] and len(parts) > 3 and parts[3] in DIALECT_JOBS:
        return f"cluster.dialects.{parts[3]}"
    if parts[:2] == ["cluster", "clouds"] and len(parts) > 3 and parts[3] in CLOUD_JOBS:
        return f"cluster.clouds.{parts[3]}"
    return ".".join(parts[:2])


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for path in (ROOT / "cluster").rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        source = _unit(module)
        graph.add_node(source)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = ([f"cluster.{alias.name}" for alias in node.names] if node.module == "cluster"
                           else [node.module])
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "import_module" and node.args and isinstance(node.args[0], ast.Constant)):
                targets = [str(node.args[0].value)]  # importlib.import_module("x.y") is an import too
            for target in targets:
                if target.split(".")[0] in ("cluster", "pulumi", "components") and _unit(target) != source:
                    graph.add_edge(source, _unit(target), file=str(path.relative_to(ROOT)))
    return graph


# Lowest first: a unit imports only units of its own layer or of layers before it. The stages of
# cluster.pipeline read upward through them: load and resolve, build the graph, derive, rules that
# only read (the derived facts and intents the pipeline hands them), artifacts, then what uses it all.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = tuple((name, frozenset(units)) for name, units in (
    ("data", {"cluster", "cluster.__version__", "cluster.findings", "cluster.inputs", "cluster.credentials", "cluster.atomic",
              "cluster.sshkeys", "cluster.catalog", "cluster.records", "cluster.load", "cluster.breakout",
              "cluster.lldp", "cluster.yamlfile", "cluster.words", "cluster.folders"}),
    ("platforms", {"cluster.dialects", "cluster.dialects.lldp", "cluster.clouds"}),
    ("contract", {"cluster.stackfile", "cluster.spec", "cluster.schema_errors", "cluster.sizing",
                  "cluster.naming", "cluster.limits", "cluster.scheduler"}),
    ("load and resolve", {"cluster.settings", "cluster.loader", "cluster.capacity", "cluster.filesystems", "cluster.resolve"}),
    ("graph", {"cluster.topology", "cluster.parts", "cluster.ports", "cluster.tree"}),
    ("derive", {"cluster.addressing", "cluster.bisection", "cluster.ecmp", "cluster.reach",
                "cluster.whatif", "cluster.intent"}),
    ("rules", {"cluster.rules"}),
    ("artifacts", {"cluster.render", "cluster.dialects.render", "cluster.clouds.kubernetes", "cluster.configs",
                   "cluster.readback", "cluster.exports",
                   "cluster.verify", "cluster.artifacts"}),
    ("pipeline", {"cluster.pipeline"}),
    ("uses", {"cluster.resizing", "cluster.starter", "cluster.report", "cluster.estimate", "cluster.formats",
              "cluster.report_html", "cluster.deployment", "cluster.clouds.plan", "cluster.lab", "cluster.publish",
              "cluster.importer", "cluster.change"}),
    ("cli", {"cluster.commands", "cluster.cli", "cluster.cli_reference", "cluster.__main__"}),
))


def _rank() -> dict[str, int]:
    return {unit: index for index, (_, units) in enumerate(LAYERS) for unit in units}


def upward_imports(graph: nx.DiGraph) -> list[tuple[str, str, str]]:
    rank = _rank()
    return [(a, b, graph.edges[a, b]["file"]) for a, b in graph.edges
            if b.startswith("cluster") and rank[b] > rank[a]]


def test_every_unit_has_a_layer() -> None:
    graph = import_graph()
    units = {unit for unit in graph if unit.startswith("cluster")}
    assert sorted(units - set(_rank())) == [], "place the new module in LAYERS"
    assert sorted(set(_rank()) - units) == [], "a unit in LAYERS no longer exists"
    assert sum(len(units) for _, units in LAYERS) == len(_rank()), "a unit sits in two layers"


def test_imports_run_downward_only() -> None:
    assert upward_imports(import_graph()) == []


def test_the_layer_check_sees_an_upward_import() -> None:
    graph = import_graph()
    graph.add_edge("cluster.rules", "cluster.render", file="(added)")
    assert upward_imports(graph) == [("cluster.rules", "cluster.render", "(added)")]


def test_no_import_cycle_between_packages() -> None:
    graph = import_graph()
    cycles = list(nx.simple_cycles(graph.subgraph(n for n in graph if n.startswith("cluster"))))
    assert cycles == [], [[(a, b, graph.edges[a, b]["file"]) for a, b in zip(c, c[1:] + c[:1], strict=True)]
                          for c in cycles]


def test_the_cycle_check_sees_a_cycle(tmp_path: Path) -> None:
    graph = import_graph()
    graph.add_edge("cluster.topology", "cluster.artifacts", file="(added)")
    assert list(nx.simple_cycles(graph))


def test_cluster_never_imports_pulumi() -> None:
    graph = import_graph()
    assert [edge for edge in graph.edges if edge[1].startswith("pulumi")] == []


def test_only_plan_runs_the_pulumi_program_and_only_when_it_runs() -> None:
    """cluster/ reaches the Pulumi program (components/) in one place: the `plan` verb, which runs
    it under the SDK's mock runtime, importing it inside run() so no other verb pays for pulumi."""
    graph = import_graph()
    assert [(a, b) for a, b in graph.edges if b.startswith("components")] == [("cluster.commands", "components.offline")]
    tree = ast.parse((ROOT / "cluster" / "commands" / "plan.py").read_text(encoding="utf-8"))
    module_level = [node for node in tree.body if not isinstance(node, (ast.FunctionDef, ast.ClassDef))
                    and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]  # the docstring
    assert not any("components" in ast.unparse(node) for node in module_level)
