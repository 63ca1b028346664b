"""Whole `validate --format json` answers (every finding's rule, severity, path, message and hint,
and the design summary) of broken designs, against tests/golden/findings.json.

The rules read the topology through shared passes (edge list, link arrays) that are rewritten
for speed; the table of rule cases (tests/test_rules.py) checks which rule fires where, this
checks that their words and the summary stay byte for byte what they were. Regenerate with
`python scripts/regen_golden.py findings` only for a change meant to alter them, and review
`git diff tests/golden/findings.json`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from benchmarks.designs import stack as benchmark
from cluster.pipeline import Valid
from cluster.report import to_json
from cluster.rules.hosts import RailAlignment
from cluster.topology import Topology
from tests.conftest import run
from tests.test_rules import FAILING

GOLDEN = Path(__file__).parent / "golden" / "findings.json"


def _changed(gpus: int, change: str) -> dict[str, Any]:
    """The benchmark design of `gpus` GPUs, broken as `change` says."""
    data = copy.deepcopy(benchmark(gpus))
    if change == "200G leaf ports":
        data["fabric"]["leaf"] = {"switch": "SN5600", "port_gbps": 200}
    elif change == "a pool with half the rails":  # sharing the last leaf group with the first pool
        data["node_pools"][0]["nodes"] -= 32
        data["node_pools"].append({"name": "small", "nodes": 32, "gpu": "H100",
                                   "fabric_nics": {"count": 4, "gbps": 400}})
    elif change == "thin leaf uplinks":
        data["fabric"]["leaf_uplinks"] = 48
    elif change == "storage on the fabric":
        data["fabric"]["shared_with"] = ["storage"]
        del data["storage"]
    return data


BENCHMARK_CHANGES = ("200G leaf ports", "a pool with half the rails", "thin leaf uplinks", "storage on the fabric")
DESIGNS: dict[str, dict[str, Any]] = {
    **{f"rule case: {case}": data for case, data, *_ in FAILING},
    **{f"{gpus:,} GPUs, {change}": _changed(gpus, change) for gpus in (1_024, 8_192) for change in BENCHMARK_CHANGES},
}


def answers() -> dict[str, Any]:
    """{design: its `validate --format json` answer, parsed} for every design of the table."""
    return {name: json.loads(to_json(run(data))) for name, data in DESIGNS.items()}


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    stored: dict[str, Any] = json.loads(GOLDEN.read_text())
    return stored


@pytest.mark.parametrize("name", DESIGNS)
def test_findings_and_summary_are_the_golden_ones(name: str, golden: dict[str, Any]) -> None:
    assert json.loads(to_json(run(DESIGNS[name]))) == golden[name]


def test_the_golden_file_holds_exactly_the_table() -> None:
    assert sorted(json.loads(GOLDEN.read_text())) == sorted(DESIGNS)


def test_every_benchmark_change_breaks_its_design(golden: dict[str, Any]) -> None:
    """A change that broke nothing would compare findings that no rule produced."""
    for gpus in (1_024, 8_192):
        for change in BENCHMARK_CHANGES:
            assert golden[f"{gpus:,} GPUs, {change}"]["findings"], change


def test_a_port_cabled_to_another_rail_s_leaf_is_named() -> None:
    """FAB-RAIL's first check reads the link arrays: a host whose rail-0 port lands on the rail-1
    leaf is named with that leaf (a stack file cannot cable it so: the graph is changed here)."""
    result = run(_changed(1_024, "none"))
    assert isinstance(result, Valid)
    topology = result.topology
    graph = nx.MultiGraph(topology.graph)  # a copy with its own edge records
    host, leaf, wrong = "h200-node-001", "leaf-001-r0", "leaf-001-r1"
    data = dict(graph.adj[host][leaf]["fabric"])
    graph.remove_edge(host, leaf, key="fabric")
    graph.remove_edge(host, wrong, key="fabric")
    graph.add_edge(host, wrong, key="fabric", **{**data, "upper": wrong})
    miscabled = Topology(graph=graph, fabric_plan=topology.fabric_plan, network_plans=topology.network_plans,
                         hosts_by_pool=topology.hosts_by_pool)
    findings = list(RailAlignment().check(result.spec, miscabled))
    assert [(f.path, f.message) for f in findings] == [
        ("node_pools[0].fabric_nics", "h200-node-001 port for rail 0 lands on leaf-001-r1, a rail-1 leaf")]


def test_a_group_whose_rails_serve_different_hosts_is_named_with_each_rail_s_count() -> None:
    result = run(_changed(1_024, "a pool with half the rails"))
    assert isinstance(result, Valid)
    messages = [f.message for f in result.findings if f.rule == "FAB-RAIL" and f.path == "node_pools"]
    assert messages == ["leaf group 2 (plane 0) is not rail-consistent: its rail leaves serve different nodes "
                        "(rail 0: 64, rail 1: 64, rail 2: 64, rail 3: 64, rail 4: 32, rail 5: 32, rail 6: 32, rail 7: 32)"]
