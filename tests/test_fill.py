"""fabric.fill: `even` spreads nodes over the leaf groups (DESIGN's default), `packed` fills each
group to what a leaf holds at its ratio, in order, so that appended nodes never move a host."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from cluster.artifacts import render_tree
from cluster.pipeline import Valid
from tests.conftest import run, stack

SWITCH = {"ports": 64, "port_gbps": 400}  # 1:1 rail leaf: 32 nodes down, 32 uplinks


def design(nodes: int, fill: str, **fabric: Any) -> dict[str, Any]:
    return stack(node_pools=[{"name": "h200", "nodes": nodes, "gpu": "H200"}],
                 fabric={"leaf": SWITCH, "spine": SWITCH, "fill": fill, **fabric})


def hosts_per_group(result: Any) -> dict[int, int]:
    graph = result.topology.graph
    return dict(Counter(graph.nodes[leaf]["group"] for _, leaf, key in graph.edges(keys=True)
                        if key == "fabric" and graph.nodes[leaf].get("rail") == 0
                        and graph.nodes[_]["kind"] == "host"))


@pytest.mark.parametrize(("fill", "groups", "uplinks"), [("even", {0: 20, 1: 20}, 20), ("packed", {0: 32, 1: 8}, 32)])
def test_forty_nodes_on_leaves_that_hold_thirty_two(fill: str, groups: dict[int, int], uplinks: int) -> None:
    result = run(design(40, fill))
    assert isinstance(result, Valid) and result.ok, [str(f) for f in result.findings]
    assert hosts_per_group(result) == groups
    plan = result.topology.fabric_plan
    assert (plan.groups, plan.leaf_uplinks) == (2, uplinks)  # packed leaves are cabled for a full group


def test_packed_leaves_beyond_the_nodes_stay_empty_and_the_design_still_validates_and_renders() -> None:
    result = run(design(40, "packed", leaves=24))
    assert result.ok, [str(f) for f in result.findings]
    assert hosts_per_group(result) == {0: 32, 1: 8}
    assert isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    assert any(path.startswith("switches/leaf-003-r0/") for path in files)


def test_packed_fills_what_a_leaf_holds_beside_the_uplinks_it_was_given() -> None:
    """16 uplinks on a 64-port leaf at 4:1 leave room for 48 nodes (ports), not the 51 of auto uplinks."""
    result = run(design(80, "packed", leaves=16, spines=16, leaf_uplinks=16, max_oversubscription=4.0))
    assert result.ok, [str(f) for f in result.findings]
    assert hosts_per_group(result) == {0: 48, 1: 32}


def test_packed_never_puts_more_on_a_group_than_the_groups_can_share() -> None:
    """As-designed leaves too few for full groups: every group still takes its share, and the
    rules judge the result (here 60 nodes on 32 ports of a 64-port leaf with 32 uplinks)."""
    result = run(design(120, "packed", leaves=16, spines=16, leaf_uplinks=32))
    assert hosts_per_group(result) == {0: 60, 1: 60}
    assert {f.rule for f in result.findings if str(f.severity) == "error"} >= {"FAB-RADIX"}


def test_an_unknown_fill_is_a_schema_error() -> None:
    result = run(design(8, "sparse"))
    assert result.exit_code == 2
    assert any(f.rule == "SCHEMA" and f.path == "fabric.fill" for f in result.findings)
