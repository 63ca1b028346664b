"""FAB-BISECTION: small designs whose bisection is known by hand, irregular ones, solver cross-checks."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pytest
from conftest import rules_of, run

from cluster.bisection import _FlowNetwork, bisection, bisections, networkx_max_flow, scipy_max_flow
from cluster.topology import Topology

SWITCH = {"ports": 64, "port_gbps": 400}


def rack_tor(leaf_uplinks: int, spines: int, ratio: Any = 1.0, nodes: int = 8, **policy: Any) -> dict[str, Any]:
    """Four rack leaves of `nodes / 4` nodes, 8 x 400G per node: 6,400 Gbps down per leaf at 8 nodes."""
    return {
        "name": "t",
        "target": "onprem",
        "node_pools": [{"name": "h200", "nodes": nodes, "gpu": "H200", "fabric_nics": {"count": 8, "gbps": 400}}],
        "fabric": {"design": "rack-tor", "leaf": SWITCH, "spine": SWITCH, "leaves": 4, "spines": spines,
                   "leaf_uplinks": leaf_uplinks, "max_oversubscription": ratio},
        "policy": policy,
    }


def findings(result: Any, rule: str) -> list[Any]:
    return [finding for finding in result.findings if finding.rule == rule]


def test_non_blocking_two_tier_has_bisection_one() -> None:
    result = run(rack_tor(leaf_uplinks=16, spines=2))
    cut = bisection(result.topology)
    # 2 leaves a side x 16 uplinks x 400G = 12,800 Gbps; 4 nodes x 8 x 400G injected a side.
    assert (cut.flow_gbps, cut.injection_gbps, cut.ratio) == (12_800, 12_800, 1.0)
    assert "FAB-BISECTION" not in rules_of(result)


def test_two_to_one_is_one_finding_at_the_uplinks_that_cause_it() -> None:
    """Half the uplinks: bisection 0.50, which the leaves' 2:1 explains. FAB-OVERSUB reports it at
    fabric.leaf_uplinks with the count that fixes it; FAB-BISECTION does not say it again elsewhere."""
    result = run(rack_tor(leaf_uplinks=8, spines=2))
    assert bisection(result.topology).ratio == 0.5
    [finding] = findings(result, "FAB-OVERSUB")
    assert finding.path == "fabric.leaf_uplinks" and "give fabric.leaf_uplinks: 16" in finding.hint
    assert findings(result, "FAB-BISECTION") == []


def test_a_cut_thinner_than_the_tiers_explain_fails_with_its_ratio() -> None:
    """16 uplinks over 3 spines (every leaf 1:1): the cut itself is the only cause."""
    result = run(rack_tor(leaf_uplinks=16, spines=3))
    [finding] = findings(result, "FAB-BISECTION")
    assert str(finding.severity) == "error"
    assert "found 0.97" in finding.message and "12,400 Gbps one way" in finding.message
    assert "bisection bandwidth of the fabric" in finding.message
    assert finding.path == "fabric.max_oversubscription"


def test_a_cut_thinner_than_an_oversubscribed_tier_explains_names_both() -> None:
    """Leaves at 2:1 explain 0.50, not less: 8 uplinks over 3 spines cut deeper, so both findings stay."""
    result = run(rack_tor(leaf_uplinks=8, spines=3))
    assert bisection(result.topology).ratio < 0.5
    [finding] = findings(result, "FAB-BISECTION")
    assert "thinner than the leaf tier's 2:1 explains" in finding.message
    assert findings(result, "FAB-OVERSUB")


def test_two_to_one_passes_when_two_to_one_is_allowed() -> None:
    result = run(rack_tor(leaf_uplinks=8, spines=2, ratio=2.0))
    assert "FAB-BISECTION" not in rules_of(result)
    assert bisection(result.topology).ratio == 0.5


def test_suppressed_stays_visible_as_info() -> None:
    result = run(rack_tor(leaf_uplinks=16, spines=3, suppress=["FAB-BISECTION"]))
    [finding] = findings(result, "FAB-BISECTION")
    assert finding.suppressed and str(finding.severity) == "info"


def test_spines_that_do_not_divide_the_uplinks_thin_the_cut() -> None:
    """16 uplinks over 3 spines: leaf i puts 6 links on spine i % 3 and 5 on the others.
    Leaves 1-2 reach the spines with 11, 11, 10 links, leaves 3-4 with 11, 10, 11, so the cut
    carries min per spine = 11 + 10 + 10 = 31 links: 12,400 of 12,800 Gbps although every leaf
    is 1:1 on its own (FAB-OVERSUB passes)."""
    result = run(rack_tor(leaf_uplinks=16, spines=3))
    cut = bisection(result.topology)
    assert (cut.flow_gbps, cut.injection_gbps) == (12_400, 12_800)
    assert "FAB-OVERSUB" not in rules_of(result)
    [finding] = findings(result, "FAB-BISECTION")
    assert "found 0.97" in finding.message


def test_uneven_leaf_groups_split_as_evenly_as_the_groups_allow() -> None:
    # 7 nodes over 4 leaves: groups of 2, 2, 2, 1; halves of 4 and 3 nodes, ratio over the smaller side.
    result = run(rack_tor(leaf_uplinks=16, spines=2, nodes=7))
    cut = bisection(result.topology)
    assert sorted((cut.gpus_a, cut.gpus_b)) == [24, 32]
    assert cut.injection_gbps == 3 * 8 * 400
    assert cut.ratio == 1.0


def three_tier(spine_uplinks: int, ratio: Any = 1.0) -> dict[str, Any]:
    """2 pods x 2 rail-optimized leaf groups (2 rails) of 4 nodes; 2 spines per pod; 4 cores."""
    switch = {"ports": 16, "port_gbps": 400}
    return {
        "name": "t",
        "target": "onprem",
        "node_pools": [{"name": "h200", "nodes": 16, "gpu": "H200", "fabric_nics": {"count": 2, "gbps": 400}}],
        "fabric": {"leaf": switch, "spine": switch, "core": switch, "leaves": 8, "spines": 4, "pods": 2,
                   "cores": 4, "leaf_uplinks": 4, "spine_uplinks": spine_uplinks, "max_oversubscription": ratio},
        "policy": {"suppress": ["FAB-GPU-NIC"]},
    }


def test_three_tier_pod_cut_follows_the_spine_uplinks() -> None:
    # Per pod: 8 nodes x 2 x 400G = 6,400 Gbps injected; 2 spines x spine_uplinks x 400G to the cores.
    full = bisection(run(three_tier(spine_uplinks=8)).topology)
    assert (full.flow_gbps, full.injection_gbps, full.pods) == (6_400, 6_400, True)
    half = run(three_tier(spine_uplinks=4))
    cut = bisection(half.topology)
    assert (cut.flow_gbps, cut.ratio) == (3_200, 0.5)
    # the spines' 2:1 explains the cut: one finding, FAB-OVERSUB's at fabric.spine_uplinks
    assert [f.path for f in half.findings if f.rule in ("FAB-OVERSUB", "FAB-BISECTION")] == ["fabric.spine_uplinks"]
    accepted = three_tier(spine_uplinks=4)
    accepted["policy"]["suppress"].append("FAB-OVERSUB")
    [finding] = findings(run(accepted), "FAB-BISECTION")
    assert str(finding.severity) == "info" and "as the spine tier's 2:1 explains" in finding.message


def test_three_tier_checks_the_cut_inside_a_pod_against_the_leaf_tier() -> None:
    # Inside a pod: 2 groups x 2 rail leaves x 4 uplinks x 400G each side; 4 nodes x 2 x 400G injected.
    cuts = bisections(run(three_tier(spine_uplinks=4)).topology)
    assert cuts.pod is not None and not cuts.pod.pods
    assert (cuts.pod.flow_gbps, cuts.pod.injection_gbps) == (3_200, 3_200)
    assert cuts.fabric is not None and cuts.fabric.ratio == 0.5
    thin = three_tier(spine_uplinks=8)
    thin["fabric"]["leaf_uplinks"] = 2  # 2 x 400G up for 4 x 400G down: 2:1 inside every pod
    thin["policy"]["suppress"].append("FAB-OVERSUB")  # accepted: the pod cut is shown as info naming it
    result = run(thin)
    messages = [f.message for f in result.findings if f.rule == "FAB-BISECTION"]
    assert any("of one pod is 0.50" in message and "leaf tier's 2:1 explains" in message for message in messages)


def test_three_tier_threshold_is_the_loosest_limit_the_cut_crosses() -> None:
    # Spines allowed 2:1: a pod cut at 0.5 is what that design accepted.
    result = run(three_tier(spine_uplinks=4, ratio={"leaf": 1.0, "spine": 2.0}))
    assert "FAB-BISECTION" not in rules_of(result)
    assert "FAB-OVERSUB" not in rules_of(result)


SAME_SPEED = {"lower_gbps": 100, "upper_gbps": 100, "rail": None}  # the rest of a cable record the arrays read


def test_weakest_first_finds_the_cut_that_index_order_misses() -> None:
    """Hand-made graph: groups 0 and 2 have 2 uplinks, groups 1 and 3 have 1. Index order
    (0,1 | 2,3) flows 3 links each way; weakest first (1,3 | 0,2) flows only 2."""
    graph = nx.MultiGraph()
    graph.add_node("spine", kind="switch", network="fabric", tier="spine", group=None, pod=0)
    hosts: dict[str, list[str]] = {"p": []}
    for group, uplinks in enumerate((2, 1, 2, 1)):
        leaf = f"leaf-{group}"
        graph.add_node(leaf, kind="switch", network="fabric", tier="leaf", group=group, pod=0)
        graph.add_edge(leaf, "spine", key="fabric", network="fabric", links=uplinks, gbps=100, lower=leaf,
                       upper="spine", **SAME_SPEED)
        host = f"host-{group}"
        hosts["p"].append(host)
        graph.add_node(host, kind="host", gpus=2)
        graph.add_edge(host, leaf, key="fabric", network="fabric", links=2, gbps=100, lower=host, upper=leaf,
                       **SAME_SPEED)
    cut = bisection(Topology(graph=graph, fabric_plan=None, network_plans={}, hosts_by_pool=hosts))
    assert cut is not None
    assert (cut.groups_a, cut.flow_gbps, cut.injection_gbps) == ((1, 3), 200, 400)


def test_failed_devices_and_cables_leave_the_graph_unchanged() -> None:
    result = run(rack_tor(leaf_uplinks=16, spines=2))
    before = sorted((u, v, k, d["links"]) for u, v, k, d in result.topology.graph.edges(keys=True, data=True))
    degraded = bisection(result.topology, without={"spine-001"})
    assert degraded.ratio == 0.5
    fewer = bisection(result.topology, fewer_links={("leaf-001", "spine-001"): 8})
    assert fewer.flow_gbps == 12_800 - 8 * 400
    after = sorted((u, v, k, d["links"]) for u, v, k, d in result.topology.graph.edges(keys=True, data=True))
    assert before == after


@pytest.mark.parametrize("design", [rack_tor(16, 3), three_tier(4), three_tier(8)])
def test_scipy_and_networkx_agree(design: dict[str, Any]) -> None:
    network = _FlowNetwork(run(design).topology, set(), {})
    groups = network.groups()
    half = len(groups) // 2
    size = network.size + 2
    source, sink = size - 2, size - 1
    side_a = {group.index for group in groups[:half]}
    hosts = network.host_ids
    on_a = np.array([int(network.host_group[host]) in side_a for host in hosts])
    tails = np.concatenate([network.tails, np.full(int(on_a.sum()), source), hosts[~on_a]])
    heads = np.concatenate([network.heads, hosts[on_a], np.full(int((~on_a).sum()), sink)])
    capacity = np.concatenate([network.capacity, network.injection[hosts][on_a], network.injection[hosts][~on_a]])
    expected = networkx_max_flow(tails, heads, capacity, size, source, sink)
    assert expected > 0
    assert scipy_max_flow(tails, heads, capacity, size, source, sink) == expected


def test_one_leaf_group_has_no_cut() -> None:
    result = run({"name": "t", "target": "onprem", "node_pools": [{"name": "h200", "nodes": 4, "gpu": "H200"}],
                  "fabric": {"leaf": {"ports": 32, "port_gbps": 400}, "spine": {"ports": 32, "port_gbps": 400}}})
    assert bisection(result.topology) is None
    assert "FAB-BISECTION" not in rules_of(result)


def test_a_cut_the_suppressed_tier_ratio_explains_is_info_naming_it() -> None:
    """The architect accepted a 2:1 leaf tier (FAB-OVERSUB suppressed): the bisection of 0.50 is the
    same cause, reported once as an error (none here) and once as info that names it."""
    result = run(rack_tor(leaf_uplinks=8, spines=2, suppress=["FAB-OVERSUB"]))
    assert result.ok
    [finding] = findings(result, "FAB-BISECTION")
    assert str(finding.severity) == "info" and not finding.suppressed
    assert "as the leaf tier's 2:1 explains (FAB-OVERSUB, suppressed)" in finding.message


def test_a_cut_thinner_than_the_suppressed_ratio_explains_stays_an_error() -> None:
    """Every leaf is 1:1, so a suppressed FAB-OVERSUB explains nothing: uneven spines still fail."""
    result = run(rack_tor(leaf_uplinks=16, spines=3, suppress=["FAB-OVERSUB"]))
    [finding] = findings(result, "FAB-BISECTION")
    assert str(finding.severity) == "error"
    assert "found 0.97" in finding.message and "explains" not in finding.message
