"""N-1 what-if: degraded ratios, lost rails, the FAB-N1 rule and the `whatif` verb."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, rules_of, run

from cluster.cli import main
from cluster.whatif import fail, fail_link, worst_single, worst_upper_failures


def rail_design(nodes: int = 16, spines: int = 4, leaf_uplinks: int = 8, **policy: Any) -> dict[str, Any]:
    """Two rail-optimized leaf groups of 8 nodes x 8 rails at 400G, one 8-port-up leaf per rail."""
    switch = {"ports": 64, "port_gbps": 400}
    return {
        "name": "t",
        "target": "onprem",
        "node_pools": [{"name": "h200", "nodes": nodes, "gpu": "H200", "fabric_nics": {"count": 8, "gbps": 400}}],
        "fabric": {"leaf": switch, "spine": switch, "leaves": 16, "spines": spines, "leaf_uplinks": leaf_uplinks},
        "policy": policy,
    }


def test_losing_a_spine_raises_every_leaf_by_its_share() -> None:
    result = run(rail_design())
    outcome = fail(result.topology, result.spec, "spine-001")
    [leaf] = outcome.ratios
    # 8 uplinks over 4 spines: 2 per spine; losing one leaves 6 for 8 x 400G down.
    assert (leaf.tier, leaf.before, round(leaf.after, 4)) == ("leaf", 1.0, round(8 / 6, 4))
    assert outcome.bisection_before.ratio == 1.0
    assert outcome.bisection_after.ratio == 0.75
    assert outcome.lost_rails == () and outcome.cut_off == ()


def test_losing_a_rail_leaf_takes_that_rail_from_its_group() -> None:
    result = run(rail_design())
    outcome = fail(result.topology, result.spec, "leaf-002-r3")
    [lost] = outcome.lost_rails
    assert lost.rail == 3
    assert lost.hosts == tuple(f"h200-node-{index:03d}" for index in range(9, 17))
    assert (lost.gpus_without_rail, lost.gpus_degraded) == (8, 0)  # GPU 3 of each of the 8 nodes


def test_graph_is_never_mutated() -> None:
    result = run(rail_design())
    graph = result.topology.graph
    before = (graph.number_of_nodes(), sorted((u, v, k, d["links"]) for u, v, k, d in graph.edges(keys=True, data=True)))
    for kind in ("leaf", "spine", "link"):
        worst_single(result.topology, result.spec, kind)
    fail_link(result.topology, result.spec, "leaf-001-r0", "spine-001")
    after = (graph.number_of_nodes(), sorted((u, v, k, d["links"]) for u, v, k, d in graph.edges(keys=True, data=True)))
    assert before == after


def test_worst_spine_matches_failing_each_one() -> None:
    # 8 uplinks over 3 spines: 3, 3, 2 per leaf (rotated), so some spine takes 3 links from a leaf.
    result = run(rail_design(spines=3))
    brute = max(fail(result.topology, result.spec, f"spine-00{index}").worst_after() for index in (1, 2, 3))
    fast = max(ratio for ratio, _ in worst_upper_failures(result.topology)["spine"].values())
    assert fast == pytest.approx(brute) == pytest.approx(8 / 5)


def test_single_cable_loss() -> None:
    result = run(rail_design())
    outcome = fail_link(result.topology, result.spec, "leaf-001-r0", "spine-001")
    assert outcome.worst_after() == pytest.approx(8 / 7)
    assert outcome.bisection_after.flow_gbps == outcome.bisection_before.flow_gbps - 400


def test_n1_rule_checks_ratios_when_a_degraded_limit_is_configured() -> None:
    assert "FAB-N1" not in rules_of(run(rail_design(spines=2)))  # unset: only single points are checked
    single = run(rail_design(spines=1, max_degraded_oversubscription=2.0))
    [finding] = [f for f in single.findings if f.rule == "FAB-N1"]
    assert str(finding.severity) == "warning"
    assert "cut off" in finding.message and "spine-001" in finding.message
    assert "FAB-N1" not in rules_of(run(rail_design(max_degraded_oversubscription=1.5)))  # 1.33:1 fits
    strict = run(rail_design(max_degraded_oversubscription=1.2))
    [finding] = [f for f in strict.findings if f.rule == "FAB-N1"]
    assert "1.33:1" in finding.message and finding.path == "policy.max_degraded_oversubscription"
    assert strict.exit_code == 0  # a warning by default


@pytest.fixture()
def stack_file(tmp_path: Path) -> Path:
    path = tmp_path / "Pulumi.n1.yaml"
    path.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": rail_design()}}))
    return path


def test_cli_fail_spine_json(stack_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["whatif", str(stack_file), "--fail", "spine-002", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["failed"] == "spine-002"
    assert data["oversubscription"][0]["after"] == "1.33:1" and data["oversubscription"][0]["within"]
    assert data["bisection"]["after"]["ratio"] == 0.75


def test_cli_fail_leaf_names_the_lost_rail_and_exits_1(stack_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GPUs left without any fabric port of their own: a failure, whatever the ratios say."""
    assert main(["whatif", str(stack_file), "--fail", "leaf-001-r3"]) == 1
    out = capsys.readouterr().out
    assert "leaf-001-r3 takes rail 3 away from 8 nodes (h200-node-001 .. h200-node-008)" in out


def test_cli_a_leaf_of_one_plane_only_degrades_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Dual-plane: a GPU keeps its NIC's port on the other plane, so it loses bandwidth, not its rail."""
    design = rail_design()
    design["node_pools"][0]["fabric_nics"] = {"count": 8, "gbps": 400, "ports_per_nic": 2}
    design["fabric"] = {"leaf": {"ports": 64, "port_gbps": 400}, "spine": {"ports": 64, "port_gbps": 400}, "planes": 2}
    path = tmp_path / "Pulumi.planes.yaml"
    path.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": design}}))
    assert main(["whatif", str(path), "--fail", "p1-leaf-001-r3", "--format", "json"]) == 0, capsys.readouterr()
    data = json.loads(capsys.readouterr().out)
    lost = data["lost_rails"]
    assert lost and all(rail["gpus_without_rail"] == 0 and rail["gpus_degraded"] > 0 for rail in lost)


def test_cli_fail_any_spine_beyond_the_limit_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "Pulumi.one.yaml"
    path.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": rail_design(spines=1)}}))
    assert main(["whatif", str(path), "--fail-any", "spine"]) == 1
    assert "cut off" in capsys.readouterr().out


def test_cli_unknown_device_exits_2_with_the_names(stack_file: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "cluster", "whatif", str(stack_file), "--fail", "spine-03"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "did you mean spine-003" in done.stderr
    assert "leaf, spine, core, link" in done.stderr and "spine-001 .. spine-004 (4 spines)" in done.stderr


def test_cli_cloud_stack_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    cloud = ROOT / "stacks" / "Pulumi.aws-p5e.yaml"
    assert main(["whatif", str(cloud), "--fail-any", "spine"]) == 2
    assert "provider's" in capsys.readouterr().err


def test_cli_needs_one_failure(stack_file: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["whatif", str(stack_file)])
    assert exit_info.value.code == 2


def test_three_tier_core_and_leaf_failures() -> None:
    from test_bisection import three_tier

    result = run(three_tier(spine_uplinks=8))
    core = worst_single(result.topology, result.spec, "core")
    assert core is not None and core.failed.startswith("core-")
    spine = next(ratio for ratio in core.ratios if ratio.tier == "spine")
    # 8 spine uplinks over 4 cores: 2 per core; losing one leaves 6 for 8 x 400G down.
    assert spine.after == pytest.approx(8 / 6)
    assert core.pod_before is not None and core.pod_after is not None
    assert core.bisection_after is not None and core.bisection_after.ratio == pytest.approx(0.75)
    leaf = worst_single(result.topology, result.spec, "leaf")
    # 2 NICs for 8 GPUs: each rail's NIC serves 4 GPUs, on each of the group's 4 nodes.
    assert leaf is not None and leaf.lost_rails[0].gpus_without_rail == 4 * 4


def test_small_auto_sized_fabrics_have_no_spine_that_cuts_every_leaf_off(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """16 nodes auto-sized: 8 rail leaves under two spines, not one, and the summary says why."""
    data = {"name": "t", "target": "onprem", "node_pools": [{"name": "h200", "nodes": 16, "gpu": "H200"}]}
    result = run(data)
    assert result.ok and "FAB-N1" not in {f.rule for f in result.findings}
    spines = [name for name, d in result.topology.switches("fabric") if d["tier"] == "spine"]
    assert len(spines) == 2
    assert any("2 spines rather than 1" in note for note in result.topology.fabric_plan.notes)
    path = tmp_path / "Pulumi.small.yaml"
    path.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": data}}))
    assert main(["whatif", str(path), "--fail-any", "spine"]) == 0
    assert "cut off" not in capsys.readouterr().out


def test_one_spine_as_designed_is_a_single_point_warning() -> None:
    result = run(rail_design(spines=1))
    [finding] = [f for f in result.findings if f.rule == "FAB-N1"]
    assert str(finding.severity) == "warning" and finding.path == "fabric.spines"
    assert "losing spine-001 cuts 16 leaves" in finding.message
