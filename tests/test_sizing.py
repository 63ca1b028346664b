"""Three-tier auto-sizing: the fewest spines and cores that keep every tier within its ratio with
even ECMP, checked on the built graph (not on the sizer's arithmetic) and by every fabric rule."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from typing import Any

import pytest

from cluster.findings import Severity
from cluster.pipeline import Valid
from cluster.report import summary
from tests.conftest import run, stack


def design(nodes: int, ports: int, rails: int = 8, gbps: int = 400, **fabric: Any) -> dict[str, Any]:
    """`nodes` x 8 GPUs with `rails` fabric ports each, on generic `ports`-port switches at every tier."""
    switch = {"ports": ports, "port_gbps": gbps}
    return stack(node_pools=[{"name": "h200", "nodes": nodes, "gpu": "H200", "fabric_nics": {"count": rails, "gbps": gbps}}],
                 fabric={"leaf": switch, "spine": switch, "core": switch, **fabric},
                 policy={"suppress": ["FAB-GPU-NIC"]})  # fewer than 8 rails on purpose


def sn5600(nodes: int, **fabric: Any) -> dict[str, Any]:
    switch = {"switch": "SN5600", "port_gbps": 400}
    return stack(node_pools=[{"name": "h200", "nodes": nodes, "gpu": "H200"}],
                 fabric={"leaf": switch, "spine": switch, "core": switch, **fabric})


def valid(data: dict[str, Any]) -> Valid:
    result = run(data)
    assert isinstance(result, Valid), [(f.rule, f.message) for f in result.findings]
    serious = [(f.rule, f.message) for f in result.findings if f.severity >= Severity.WARNING]
    assert result.exit_code == 0 and not serious, serious
    return result


def counts(result: Valid) -> Counter[str]:
    return Counter(data["tier"] for _, data in result.topology.switches("fabric"))


def spread(result: Valid) -> tuple[dict[str, dict[str, int]], dict[str, dict[tuple[int, int], int]]]:
    """From the graph: leaf -> {spine: links}, and core -> {(plane, pod): links from that pod's spines}."""
    graph = result.topology.graph
    leaf_links: dict[str, dict[str, int]] = defaultdict(dict)
    core_links: dict[str, dict[tuple[int, int], int]] = defaultdict(lambda: defaultdict(int))
    for _, _, data in graph.edges(data=True):
        if data["network"] != "fabric":
            continue
        lower, upper = graph.nodes[data["lower"]], graph.nodes[data["upper"]]
        if lower.get("tier") == "leaf" and upper.get("tier") == "spine":
            leaf_links[data["lower"]][data["upper"]] = data["links"]
        elif lower.get("tier") == "spine" and upper.get("tier") == "core":
            core_links[data["upper"]][(lower["plane"], lower["pod"])] += data["links"]
    return leaf_links, core_links


def assert_even(result: Valid) -> None:
    """Every leaf reaches every spine of its pod over the same number of links, and every core
    every pod of its plane over the same number of links."""
    graph = result.topology.graph
    spines_of: dict[tuple[int, int], set[str]] = defaultdict(set)
    pods_of: dict[int, set[int]] = defaultdict(set)
    for name, data in result.topology.switches("fabric"):
        if data["tier"] == "spine":
            spines_of[(data["plane"], data["pod"])].add(name)
            pods_of[data["plane"]].add(data["pod"])
    leaf_links, core_links = spread(result)
    for leaf, links in leaf_links.items():
        data = graph.nodes[leaf]
        assert set(links) == spines_of[(data["plane"], data["pod"])], leaf
        assert len(set(links.values())) == 1, (leaf, links)
    for core, links in core_links.items():
        plane = graph.nodes[core]["plane"]
        assert {pod for _, pod in links} == pods_of[plane], core
        assert len(set(links.values())) == 1, (core, dict(links))


def lower_bound(result: Valid) -> int:
    """Spines + cores no design can go below at the sized leaf uplinks: every leaf uplink ends on
    a spine that keeps its ratio (at most `down` downlinks), every spine uplink on a core port."""
    spec, plan = result.spec, result.topology.fabric_plan
    assert spec.fabric is not None and plan is not None
    spine, ratio = spec.fabric.spine, float(spec.fabric.max_oversubscription.spine)
    down = math.floor(spine.ports * ratio / (1 + ratio))  # one speed at every tier in these designs
    uplinks = plan.leaves * plan.leaf_uplinks
    spines = math.ceil(uplinks / down)
    return spec.fabric.planes * (spines + math.ceil(math.ceil(uplinks / ratio) / spec.fabric.core.ports))


def test_two_pods_take_the_fewest_spines() -> None:
    """256 x 8 H200 on SN5600 (128 x 400G) in two pods: a leaf has 64 uplinks, so 16 spines a pod with
    4 links from each leaf fill every spine port (64 down, 64 up); one spine per leaf uplink (128
    spines using 32 ports each) passes the same rules with 96 more switches."""
    result = valid(sn5600(256, pods=2))
    plan = result.topology.fabric_plan
    assert plan is not None
    assert (plan.pods, plan.leaf_uplinks, plan.spines, plan.spine_uplinks, plan.cores) == (2, 64, 32, 64, 16)
    assert counts(result) == {"leaf": 32, "spine": 32, "core": 16}
    assert sum(counts(result).values()) - 32 == lower_bound(result)
    for name, data in result.topology.switches("fabric"):
        if data["tier"] in ("spine", "core"):
            load = result.topology.switch_loads[name]
            assert load.down_links + load.up_links == 128, name
    assert_even(result)
    as_before = valid(sn5600(256, pods=2, spines=128, spine_uplinks=16, cores=16))
    assert sum(counts(as_before).values()) - sum(counts(result).values()) == 96


# (id, design, spines + cores expected to meet the counting bound: full pods and an even split exist)
DESIGNS = [
    ("two pods on SN5600", sn5600(256, pods=2), True),
    ("pods auto, 32-port", design(128, 32), True),
    ("pods auto, odd leaf groups", design(144, 32), False),
    ("a partial last pod, as designed", design(144, 32, pods=5), False),
    ("spine tier at 2:1", design(300, 64, max_oversubscription={"leaf": 1.0, "spine": 2.0}), False),
    ("two rails, three pods as designed", design(300, 64, rails=2, pods=3), False),
    ("rack-tor", design(80, 32, design="rack-tor"), False),
    ("dual plane", stack(node_pools=[{"name": "h200", "nodes": 128, "gpu": "H200",
                                      "fabric_nics": {"count": 8, "gbps": 400, "ports_per_nic": 2}}],
                         fabric={"planes": 2, "leaf": {"ports": 32, "port_gbps": 400},
                                 "spine": {"ports": 32, "port_gbps": 400}, "core": {"ports": 32, "port_gbps": 400}}),
     True),
    ("spine uplinks as designed", design(128, 32, spine_uplinks=16), True),
    ("cores as designed", design(128, 32, cores=48), False),
    ("spines as designed, pods sized", design(128, 32, spines=64, cores=32), True),
    ("7 leaf uplinks and spare leaf ports", design(33, 16, rails=2, pods=2), False),
]


@pytest.mark.parametrize(("case", "data", "at_bound"), DESIGNS, ids=[case for case, _, _ in DESIGNS])
def test_sized_designs_pass_every_rule_with_even_ecmp(case: str, data: dict[str, Any], at_bound: bool) -> None:
    result = valid(data)
    plan = result.topology.fabric_plan
    assert plan is not None and plan.tiers == 3
    assert_even(result)
    fabric = data["fabric"]
    planes = fabric.get("planes", 1)
    for key, value in (("pods", plan.pods), ("spines", plan.spines * planes), ("cores", plan.cores * planes),
                       ("spine_uplinks", plan.spine_uplinks)):
        if key in fabric:
            assert value == fabric[key], key  # as designed is kept, never renumbered
    upper = counts(result)["spine"] + counts(result)["core"]
    assert upper >= lower_bound(result)
    if at_bound:
        assert upper == lower_bound(result)


def test_odd_leaf_groups_beat_one_spine_per_leaf_uplink() -> None:
    """9 leaf groups of 32-port switches: pods of one group with 8 spines each (2 links per leaf
    and spine) need 8 fewer spines than pods of two groups with one link per leaf and spine."""
    sized = valid(design(144, 32))
    plan = sized.topology.fabric_plan
    assert plan is not None and (plan.pods, plan.spines) == (9, 72)
    in_pairs = valid(design(144, 32, pods=5))
    assert counts(in_pairs)["spine"] == 80
    assert counts(sized)["spine"] + counts(sized)["core"] < counts(in_pairs)["spine"] + counts(in_pairs)["core"]


def worst_shift_load(result: Valid) -> float:
    """Pod p sends all it injects to pod p + 1 over ECMP (every spine spreads over its uplinks
    alike): the worst load of a core's links down to one pod, 1.0 = full. Full pods only."""
    _, core_links = spread(result)
    graph = result.topology.graph
    injected: dict[int, int] = defaultdict(int)
    uplink_gbps: dict[int, int] = defaultdict(int)
    for _, _, data in graph.edges(data=True):
        if data["network"] != "fabric":
            continue
        lower, upper = graph.nodes[data["lower"]], graph.nodes[data["upper"]]
        if lower["kind"] == "host":
            injected[upper["pod"]] += data["links"] * data["gbps"]
        elif lower.get("tier") == "spine":
            uplink_gbps[lower["pod"]] += data["links"] * data["gbps"]
    full = sorted(pod for pod in injected if injected[pod] == max(injected.values()))
    worst = 0.0
    for links in core_links.values():
        for source, target in itertools.pairwise(full):
            sent = min(1.0, injected[source] / uplink_gbps[source]) * links[(0, source)]
            worst = max(worst, sent / links[(0, target)])
    return worst


def test_an_uneven_core_spread_overloads_core_links_under_ecmp() -> None:
    """Why the sizer wants each pod to reach each core over the same number of links: 40 cores
    for 5 pods of 256 spine uplinks give a pod 6 or 7 links to a core, which max-flow bisection
    accepts, but with ECMP a pod-to-pod shift sends 7 links' worth down 6 links of some cores."""
    uneven = valid(design(144, 32, pods=5, spines=80, spine_uplinks=16, cores=40))
    assert worst_shift_load(uneven) == pytest.approx(7 / 6)
    for data in (design(144, 32, pods=5), design(144, 32)):
        assert worst_shift_load(valid(data)) == pytest.approx(1.0)


def test_a_single_point_is_avoided_where_the_ports_allow() -> None:
    """Two pods of two leaves at 2:1 above the spines fit one core (4 spines x 4 uplinks on 16
    ports); the sizer gives two, so that losing a core cuts no spine off (FAB-N1), and says so."""
    result = valid(design(16, 16, rails=2, pods=2, max_oversubscription={"leaf": 1.0, "spine": 2.0}))
    plan = result.topology.fabric_plan
    assert plan is not None and (plan.spines, plan.spine_uplinks, plan.cores) == (4, 4, 2)
    assert not [f for f in result.findings if f.rule == "FAB-N1"]
    assert "6 spines and cores rather than 5, so that losing one spine or core cuts nothing off (FAB-N1)" in plan.notes
    one_core = run(design(16, 16, rails=2, pods=2, cores=1, max_oversubscription={"leaf": 1.0, "spine": 2.0}))
    assert [f.rule for f in one_core.findings if f.severity >= Severity.WARNING] == ["FAB-N1"]


def test_the_summary_says_how_the_tiers_were_sized() -> None:
    result = valid(sn5600(256, pods=2))
    notes = summary(result.spec, result.topology)["fabric"]["notes"]
    assert notes == ["32 spines in 2 pods, 4 links from each leaf to each spine of its pod, and 16 cores: the fewest "
                     "that keep every tier within its ratio with every link of a tier loaded alike"]


def test_sizing_is_deterministic_and_keeps_what_is_given() -> None:
    from cluster.sizing import size_fabric

    first = valid(sn5600(256, pods=2)).spec
    again = valid(sn5600(256, pods=2)).spec
    assert size_fabric(first) == size_fabric(again)
    given = valid(sn5600(256, pods=2, spines=128, spine_uplinks=16, cores=16)).topology.fabric_plan
    assert given is not None and (given.spines, given.spine_uplinks, given.cores) == (128, 16, 16)
