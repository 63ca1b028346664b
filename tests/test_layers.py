"""The house's layers: no import cycle between the packages and modules of cluster/ (function-level
imports included), and cluster/ never imports pulumi."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

from tests.conftest import ROOT


def _unit(module: str) -> str:
    """cluster.render.sonic -> cluster.render; cluster.pipeline -> cluster.pipeline."""
    return ".".join(module.split(".")[:2])


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
            for target in targets:
                if target.split(".")[0] in ("cluster", "pulumi") and _unit(target) != source:
                    graph.add_edge(source, _unit(target), file=str(path.relative_to(ROOT)))
    return graph


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
