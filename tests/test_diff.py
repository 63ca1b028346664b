"""`diff OLD NEW`: a change as work (cluster.change): switches, cables to add, remove and move by
physical port, rendered files with their unified diffs, host ports, the bill of materials, and
the fabric while the change is made, one switch's cables at a time (whatif's degraded model)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cluster.change.compare import CableWork, compare
from cluster.change.transition import ALL_AT_ONCE, safe, stages
from cluster.cli import main
from cluster.exports.cabling import cables
from cluster.pipeline import Valid, validate, validate_mapping
from cluster.topology import FABRIC
from cluster.whatif import degrade, fail_link
from tests.conftest import ROOT

SMALL: dict[str, Any] = {
    "name": "small", "target": "onprem",
    "node_pools": [{"name": "a", "nodes": 16, "gpu": "H200"}, {"name": "b", "nodes": 8, "gpu": "H200"}],
    "fabric": {"leaf": {"ports": 16, "port_gbps": 400}, "spine": {"ports": 128, "port_gbps": 400}, "fill": "packed"},
}


def built(data: dict[str, Any]) -> Valid:
    result = validate_mapping(data["name"], data)
    assert isinstance(result, Valid) and result.ok, [finding.message for finding in result.findings]
    return result


def changed(**pools: int) -> dict[str, Any]:
    data = copy.deepcopy(SMALL)
    for pool in data["node_pools"]:
        pool["nodes"] = pools.get(pool["name"], pool["nodes"])
    return data


def write(tmp_path: Path, name: str, data: dict[str, Any]) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": {**data, "name": name}}}))
    return str(path)


def test_a_design_against_itself_is_no_change(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "dev", "dev"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("diff dev -> dev: no change") and "0 to add, 0 to remove, 0 to move" in out


def test_growing_the_last_pool_when_packed_moves_no_host_and_names_every_new_cable() -> None:
    old, new = built(SMALL), built(changed(b=16))
    change = compare(old, new)
    assert change.hosts_added == [f"b-node-{n:03d}" for n in range(9, 17)] and not change.hosts_removed
    assert not [work for work in change.cables_moved if work.link == "host-leaf"]
    assert not change.host_ports
    new_hosts = set(change.hosts_added)
    added_host_ends = {(work.lower.device, work.lower.port) for work in change.cables_added if work.link == "host-leaf"}
    expected = {(cable.a_device, str(cable.a_port)) for cable in cables(new.spec, new.topology)
                if cable.a_device in new_hosts}
    assert added_host_ends == expected
    assert change.switches_added and all(name in new.topology.switch_nodes for name in change.switches_added)
    assert any(delta.category == "switch" and delta.new > delta.old for delta in change.bom)


def test_more_spines_move_leaf_uplinks_keeping_the_leaf_end() -> None:
    data = copy.deepcopy(SMALL)
    data["fabric"].update(leaves=24, spines=2)
    more = copy.deepcopy(data)
    more["fabric"]["spines"] = 4
    old, new = built(data), built(more)
    change = compare(old, new)
    assert change.switches_added == ["spine-003", "spine-004"]
    moves = [work for work in change.cables_moved if work.network == FABRIC]
    assert moves and {work.link for work in moves} == {"leaf-spine"} and {work.kept for work in moves} == {"lower"}
    for work in moves:
        assert work.was is not None and work.was[0] == work.lower and work.was[1] != work.upper
        assert work.upper.name and work.lower.cage is not None
    leaves_changed = set(change.switch_files)
    assert {work.lower.device for work in moves} <= leaves_changed and "spine-001" in leaves_changed
    assert {f.status for f in change.switch_files["spine-003"]} == {"added"}
    found = stages(old, change)
    assert [stage.switch for stage in found] == ["spine-001", "spine-002", ALL_AT_ONCE]
    for stage in found[:-1]:
        assert stage.unplugged and not stage.drained
        [leaf] = [ratio for ratio in stage.outcome.ratios if ratio.tier == "leaf"]
        assert leaf.before == 1.0 and 1.0 < leaf.after <= stage.limits["leaf"]
    assert safe(found)


def test_a_tighter_degraded_limit_makes_the_same_change_break_a_rule(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    data = copy.deepcopy(SMALL)
    data["fabric"].update(leaves=24, spines=2)
    more = copy.deepcopy(data)
    more["fabric"]["spines"] = 4
    tight = copy.deepcopy(data)
    tight["policy"] = {"max_degraded_oversubscription": 1.0}
    code = main(["diff", write(tmp_path, "old", tight), write(tmp_path, "new", more), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and not report["safe"]
    stage = report["transition"][0]
    assert stage["switch"] == "spine-001" and stage["breaks"][0]["rule"] == "FAB-OVERSUB"
    assert "beyond the degraded limit 1:1" in stage["breaks"][0]["message"]


def test_a_removed_switch_is_a_stage_of_its_own() -> None:
    data = copy.deepcopy(SMALL)
    data["fabric"].update(leaves=24, spines=4)
    fewer = copy.deepcopy(data)
    fewer["fabric"]["spines"] = 2
    old, new = built(data), built(fewer)
    change = compare(old, new)
    assert change.switches_removed == ["spine-003", "spine-004"]
    found = {stage.switch: stage for stage in stages(old, change)}
    assert found["spine-003"].outcome.failed == "spine-003" and "spine-001" in found
    assert any(delta.item and delta.new < delta.old for delta in change.bom)


def test_text_and_json_name_the_cables_the_files_and_the_capacity(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    data = copy.deepcopy(SMALL)
    data["fabric"].update(leaves=24, spines=2)
    more = copy.deepcopy(data)
    more["fabric"]["spines"] = 4
    old, new = write(tmp_path, "old", data), write(tmp_path, "new", more)
    assert main(["diff", old, new, "--shown", "2", "--patch"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("diff old -> new: safe to make switch by switch")
    assert "switches: 2 added, 0 removed, 0 changed" in text
    assert "    move   fabric leaf-spine" in text and ": from spine-00" in text
    assert "while spine-001's cables are moved" in text and "all at once" in text
    assert "--- OLD/switches/spine-001/" in text and "+++ NEW/switches/spine-001/" in text
    assert main(["diff", old, new, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["switches"]["added"] == ["spine-003", "spine-004"]
    move = report["cables"]["move"][0]
    assert move["kept"] == "lower" and move["was"]["lower"] == move["lower"] and move["upper"]["name"]
    assert any(f["path"].startswith("switches/spine-001/") and f["diff"].startswith("--- OLD/")
               for f in report["files"])
    assert report["bom"]["new_usd"][0] > report["bom"]["old_usd"][0]


def test_degrade_of_one_cable_is_whatifs_failed_cable() -> None:
    result = validate("prod")
    assert isinstance(result, Valid)
    lower, upper = "leaf-001-r0", "spine-001"
    assert degrade(result.topology, result.spec, f"{lower}~{upper}", set(), {(lower, upper): 1}) == fail_link(
        result.topology, result.spec, lower, upper)
    assert result.topology.cable(lower, upper, FABRIC)["links"] > 1


@pytest.mark.parametrize(("argv", "expected"), [
    (["diff", "dev", "aws-p5e"], "compare on-prem stacks"),
    (["diff", "dev", "{tmp}/missing.yaml"], "missing.yaml"),
    (["diff", "dev", "dev", "--shown", "-1"], "--shown takes 0"),
])
def test_bad_input_exits_2(argv: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([arg.format(tmp=tmp_path) for arg in argv])
    captured = capsys.readouterr()
    assert code == 2 and expected in captured.err + captured.out
    assert "Traceback" not in captured.err + captured.out


def test_the_readme_lists_the_verb() -> None:
    assert "| `diff OLD NEW" in (ROOT / "README.md").read_text()


@st.composite
def growths(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A small packed design, and the same with nodes appended to its last pool."""
    pools = [{"name": name, "nodes": draw(st.integers(1, 12)), "gpu": "H200",
              "fabric_nics": {"count": draw(st.sampled_from([2, 4, 8])), "gbps": 400}}
             for name in draw(st.sampled_from([["a"], ["a", "b"]]))]
    fabric = {"leaf": {"ports": draw(st.sampled_from([16, 32])), "port_gbps": 400}, "fill": "packed",
              "planes": draw(st.sampled_from([1, 2])), "design": draw(st.sampled_from(["rail-optimized", "rack-tor"]))}
    old = {"name": "gen", "target": "onprem", "node_pools": pools, "fabric": fabric}
    new = copy.deepcopy(old)
    new["node_pools"][-1]["nodes"] += draw(st.integers(1, 8))
    return old, new


@settings(max_examples=15, deadline=None)
@given(pair=growths())
def test_appending_nodes_to_a_packed_design_recables_no_existing_host_on_the_fabric(
        pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Within the tiers the design has: a lone leaf that grows a spine tier gives half its ports
    to uplinks, and its hosts move to make room (a rebuild, not an append; `diff` lists them)."""
    old, new = (validate_mapping("gen", data) for data in pair)
    assume(isinstance(old, Valid) and isinstance(new, Valid) and not old.schema_failed and not new.schema_failed)
    assert isinstance(old, Valid) and isinstance(new, Valid)
    assert old.topology.fabric_plan is not None and new.topology.fabric_plan is not None
    assume(old.topology.fabric_plan.spines > 0 and old.topology.fabric_plan.tiers == new.topology.fabric_plan.tiers)
    assert compare(old, old).empty and stages(old, compare(old, old)) == []
    change = compare(old, new)
    existing = {host for hosts in old.topology.hosts_by_pool.values() for host in hosts}
    assert not [work for work in change.cables_moved + change.cables_removed
                if work.network == FABRIC and work.lower.device in existing]
    assert not [port for port in change.host_ports if port.port.startswith("gpu-")]
    assert set(change.hosts_added) == {host for hosts in new.topology.hosts_by_pool.values() for host in hosts} - existing


def test_a_pool_inserted_first_is_explained_with_the_order_that_keeps_every_host(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = copy.deepcopy(SMALL)
    first["node_pools"].insert(0, {"name": "c", "nodes": 4, "gpu": "H200"})
    old, new = write(tmp_path, "old", SMALL), write(tmp_path, "new", first)
    assert main(["diff", old, new, "--shown", "1"]) == 0
    text = capsys.readouterr().out
    assert "  existing hosts: " in text
    assert ("    with these edits to the new stack file (checked by building it: every existing host stays):\n"
            "      node_pools: in the order a, b, c  # hosts are cabled pool by pool in file order") in text
    assert main(["diff", old, new, "--format", "json"]) == 0
    kept = json.loads(capsys.readouterr().out)["existing_hosts"]
    assert kept["host_ports"] > 0 and kept["with_edits"] == {"host_ports": 0, "cables": 0}
    assert [edit["path"] for edit in kept["edits"]] == ["node_pools"] and kept["why"] == []
    appended = copy.deepcopy(SMALL)
    appended["node_pools"].append({"name": "c", "nodes": 4, "gpu": "H200"})
    assert main(["diff", old, write(tmp_path, "appended", appended), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["existing_hosts"] is None  # packed, at the end: nothing moves


ONPREM = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in (ROOT / "stacks").glob("*.yaml")
                if "target: onprem" in path.read_text())


@pytest.mark.parametrize("stack", [name for name in ONPREM if name != "dev"])
def test_every_example_against_dev_both_ways_is_the_same_work_reversed(stack: str) -> None:
    dev, other = validate("dev"), validate(stack)
    assert isinstance(dev, Valid) and isinstance(other, Valid)
    there, back = compare(dev, other), compare(other, dev)
    assert there.switches_added == back.switches_removed and there.switches_removed == back.switches_added
    assert there.hosts_added == back.hosts_removed and there.hosts_removed == back.hosts_added

    def ends(works: list[CableWork]) -> set[tuple[str, str, str, str]]:
        return {(w.lower.device, w.lower.port, w.upper.device, w.upper.port) for w in works}

    assert ends(there.cables_added) == ends(back.cables_removed)
    assert ends(there.cables_removed) == ends(back.cables_added)
    assert len(there.cables_moved) == len(back.cables_moved)
    mirror = {"added": "removed", "removed": "added", "changed": "changed"}
    assert {(f.path, f.status) for f in there.files} == {(f.path, mirror[f.status]) for f in back.files}
    assert [delta.new - delta.old for delta in there.bom] == [delta.old - delta.new for delta in back.bom]
    stages(dev, there)  # the transition is computed on every design without error


def test_a_scalable_unit_on_spines_provisioned_for_it_moves_no_fabric_cable() -> None:
    """docs/guides/brownfield.md, Plan a change: prod with 8 spines from the start, then a second leaf group."""
    old, new = (validate(str(ROOT / "tests/data/diff" / name))
                for name in ("Pulumi.prod-8-spines.yaml", "Pulumi.prod-plus-su.yaml"))
    assert isinstance(old, Valid) and isinstance(new, Valid)
    change = compare(old, new)
    assert not [work for work in change.cables_moved + change.cables_removed if work.network == FABRIC]
    assert not [port for port in change.host_ports if port.port.startswith("gpu-")]
    assert stages(old, change) == []
    fabric_hosts = {work.lower.device for work in change.cables_added if work.link == "host-leaf" and work.network == FABRIC}
    assert fabric_hosts == set(change.hosts_added) and len(change.hosts_added) == 64
    leaves = {name: files for name, files in change.switch_files.items() if name.startswith("leaf-001-")}
    # each leaf's file changes only where the design says the unit reaches it: its management port's
    # place on the out-of-band leaves, and the route limit per session, which follows the routing domain
    assert len(leaves) == 8
    for files in leaves.values():
        changed = [line[1:] for file in files for line in file.diff.splitlines()
                   if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
        assert changed and all(line.startswith("# Management port ") or "prefix-limits inbound maximum" in line
                               for line in changed), changed[:4]


# --------------------------------------------------------------------------- a scalable unit added

DIFF_DATA = ROOT / "tests" / "data" / "diff"


def cable_ends(result: Valid) -> set[tuple[str, str, str, str]]:
    return {(cable.a_device, str(cable.a_port), cable.b_device, str(cable.b_port))
            for cable in cables(result.spec, result.topology)}


def assert_appended_only(old: Valid, new: Valid) -> None:
    """The unit is pure addition: no cable of OLD moves or goes, no host port of OLD changes its
    address or leaf, and the cables to add are exactly NEW's cables that OLD lacks."""
    change = compare(old, new)
    assert change.cables_moved == [] and change.cables_removed == []
    assert change.host_ports == []
    added = {(work.lower.device, work.lower.port, work.upper.device, work.upper.port) for work in change.cables_added}
    assert added == cable_ends(new) - cable_ends(old)
    assert cable_ends(old) <= cable_ends(new)
    # every switch of OLD that gains a cable is named among the switches whose files change
    gained = {end for work in change.cables_added for end in (work.lower.device, work.upper.device)}
    assert {name for name in gained if name in old.topology.switch_nodes} <= set(change.switch_files)
    assert not change.switches_removed and not change.switches_changed


def test_a_scalable_unit_added_to_prod_with_spines_for_it_moves_no_cable_of_any_network() -> None:
    """prod with its spine tier bought for a second unit (README, Provisioned for growth): the GPU
    fabric, the storage, management and out-of-band networks all take the unit on new ports."""
    old = validate(str(DIFF_DATA / "Pulumi.prod-8-spines.yaml"))
    new = validate(str(DIFF_DATA / "Pulumi.prod-plus-su.yaml"))
    assert isinstance(old, Valid) and isinstance(new, Valid) and old.ok and new.ok
    assert_appended_only(old, new)
    change = compare(old, new)
    assert {"management", "oob"} <= {work.network for work in change.cables_added}
    assert len(change.hosts_added) == 64 and safe(stages(old, change))


def pods_for_growth(pods: int) -> dict[str, Any]:
    """The three-tier `pods` stack with `pods` pods, its cores (64, for up to eight pods) and its
    storage leaf-spine (a spine from the start) bought for growth: only a pod's own switches grow."""
    data: dict[str, Any] = yaml.safe_load((ROOT / "stacks" / "Pulumi.pods.yaml").read_text())["config"][
        "gpu-cluster:cluster"]
    data["node_pools"][0]["nodes"] = 32 * pods
    data["fabric"].update(leaves=16 * pods, spines=16 * pods, pods=pods, cores=64, leaf_uplinks=16, spine_uplinks=16)
    data["storage"].update(spine={"switch": "SN5600", "port_gbps": 200}, spines=1)
    return data


def test_a_pod_added_to_the_three_tier_pods_stack_moves_no_cable_of_any_network() -> None:
    old, new = built(pods_for_growth(4)), built(pods_for_growth(5))
    assert old.topology.fabric_plan is not None and old.topology.fabric_plan.tiers == 3
    assert_appended_only(old, new)
    change = compare(old, new)
    assert {f"spine-{index:03d}" for index in range(65, 81)} <= set(change.switches_added)
    assert len(change.hosts_added) == 32


def test_a_network_that_outgrows_one_leaf_moves_the_hosts_beyond_a_leaf_with_uplinks() -> None:
    """Without a spine from the start, the storage network of `pods` is one leaf holding all 128
    hosts; a fifth pod makes it a leaf-spine, whose leaves hold 96 hosts beside their uplinks, so
    hosts 97-128 move to the second leaf (what `storage.spines: 1` above avoids)."""
    old_data, new_data = pods_for_growth(4), pods_for_growth(5)
    for data in (old_data, new_data):
        del data["storage"]["spines"], data["storage"]["spine"]
    old, new = validate_mapping("pods", old_data), validate_mapping("pods", new_data)
    assert isinstance(old, Valid) and isinstance(new, Valid)
    change = compare(old, new)
    moved = {work.lower.device for work in change.cables_moved if work.network == "storage"}
    assert moved == {f"h200-node-{index:03d}" for index in range(97, 129)}


# --------------------------------------------------------------------------- uplinks when spines are added


def stack_data(path: Path, **fabric: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text())["config"]["gpu-cluster:cluster"]
    data["fabric"].update(fabric)
    return data


@pytest.mark.parametrize(("layout", "moved"), [("blocks", 504), ("striped", 256)])
def test_doubling_the_spines_moves_half_the_uplinks_when_striped(layout: str, moved: int) -> None:
    """prod (4 spines, 16 links from each leaf to each) plus a unit on 8 spines: each old leaf must
    move 8 of its 16 links to each old spine to the new spines, 256 of 512. In blocks a leaf's
    uplinks are numbered by spine, so a new spine count renumbers nearly all (504); striped
    (fabric.uplink_layout) keeps the other 256 on their ports at both ends."""
    old = built(stack_data(ROOT / "stacks" / "Pulumi.prod.yaml", uplink_layout=layout))
    new = built(stack_data(DIFF_DATA / "Pulumi.prod-plus-su.yaml", uplink_layout=layout))
    change = compare(old, new)
    uplinks = [work for work in change.cables_moved if work.network == FABRIC]
    assert len(uplinks) == moved and {work.link for work in uplinks} == {"leaf-spine"}
    assert {work.kept for work in uplinks} == {"lower"}
    assert change.host_ports == [] and not change.cables_removed
    if layout == "striped":  # every old leaf keeps 8 links on each old spine, on the same ports
        kept = cable_ends(old) & cable_ends(new)
        for leaf in (name for name, _ in old.topology.switches(FABRIC, "leaf")):
            for spine in ("spine-001", "spine-002", "spine-003", "spine-004"):
                assert sum(1 for a, _, b, _ in kept if a == leaf and b == spine) == 8, (leaf, spine)
        # and the unit bought with its spines moves nothing, as in blocks
        provisioned = built(stack_data(DIFF_DATA / "Pulumi.prod-8-spines.yaml", uplink_layout=layout))
        assert_appended_only(provisioned, new)


def fabric_links(result: Valid) -> dict[tuple[str, str], int]:
    return {(data["lower"], data["upper"]): data["links"] for _, _, key, data in result.topology.edges if key == FABRIC}


def test_striped_uplinks_keep_each_spine_port_to_one_leaf_and_the_counts_of_blocks() -> None:
    """The same links per (leaf, spine) as blocks; no port of any switch carries two cables."""
    for path in (ROOT / "stacks" / "Pulumi.pods.yaml", DIFF_DATA / "Pulumi.prod-plus-su.yaml"):
        blocks = built(stack_data(path))
        striped = built(stack_data(path, uplink_layout="striped"))
        assert fabric_links(blocks) == fabric_links(striped)
        ends = [(cable.b_device, str(cable.b_port)) for cable in cables(striped.spec, striped.topology)]
        ends += [(cable.a_device, str(cable.a_port)) for cable in cables(striped.spec, striped.topology)
                 if cable.a_device in striped.topology.switch_nodes and str(cable.a_port) != "mgmt0"]
        assert len(ends) == len(set(ends))
        for cable in cables(striped.spec, striped.topology):  # every port within the switch's ports
            node = striped.topology.switch_nodes[cable.b_device]
            assert cable.b_port.kind != "main" or cable.b_port.number <= node["ports"]
