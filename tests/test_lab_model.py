"""`lab` without a lab: what it would build (from the rendered files), what it expects (from the
design alone), slices, memory refusals and usage errors. No root needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cluster.artifacts import render_tree
from cluster.cli import main
from cluster.lab.expect import design
from cluster.lab.model import LabInputError, LabPlan, Slice, build_plan, slice_devices
from cluster.pipeline import validate
from cluster.topology import FABRIC


@pytest.fixture(scope="module")
def dev():  # type: ignore[no-untyped-def]
    result = validate("dev")
    assert result.spec is not None and result.topology is not None
    return result


def test_plan_takes_addresses_mtus_and_routing_from_the_rendered_files(dev) -> None:  # type: ignore[no-untyped-def]
    files = render_tree(dev.spec, dev.topology)
    plan = build_plan(dev.spec, dev.topology, files, Slice())
    assert (len(plan.switches), len(plan.hosts), len(plan.cables)) == (10, 4, 64)
    leaf = next(switch for switch in plan.switches if switch.name == "leaf-001-r0")
    assert leaf.frr_conf == files["switches/leaf-001-r0/frr.conf"]
    db = json.loads(files["switches/leaf-001-r0/config_db.json"])
    for interface in leaf.interfaces:
        assert interface.mtu == int(db["PORT"][interface.port]["mtu"])
        assert f"{interface.port}|{interface.address}" in db["INTERFACE"]
    host = plan.hosts[0]
    assert "ip rule add from" in host.routing and "RAILS=(rail0 rail1" in host.routing
    assert LabPlan.from_dict(json.loads(json.dumps(plan.to_dict()))) == plan

    edited = dict(files)
    edited["switches/leaf-001-r0/config_db.json"] = files["switches/leaf-001-r0/config_db.json"].replace(
        '"mtu": "9216"', '"mtu": "1500"', 1)
    changed = build_plan(dev.spec, dev.topology, edited, Slice())
    mtus = {i.mtu for s in changed.switches if s.name == "leaf-001-r0" for i in s.interfaces}
    assert mtus == {1500, 9216}


def test_missing_or_broken_rendered_files_are_named(dev) -> None:  # type: ignore[no-untyped-def]
    files = render_tree(dev.spec, dev.topology)
    without = {path: text for path, text in files.items() if path != "hosts/h200/qos.sh"}
    with pytest.raises(LabInputError, match=r"hosts/h200/qos\.sh: missing"):
        build_plan(dev.spec, dev.topology, without, Slice())
    broken = {**files, "switches/spine-001/config_db.json": "{not json"}
    with pytest.raises(LabInputError, match=r"switches/spine-001/config_db\.json: not a SONiC config_db"):
        build_plan(dev.spec, dev.topology, broken, Slice())


def test_ecmp_widths_follow_the_cabling(dev) -> None:  # type: ignore[no-untyped-def]
    graph = dev.topology.graph
    switches = {name for name, _ in dev.topology.switches(FABRIC)}
    hosts = {host for hosts in dev.topology.hosts_by_pool.values() for host in hosts}
    expected = design(dev.spec, dev.topology, switches, hosts)
    uplinks = sum(data["links"] for _, peer, network, data in graph.edges("leaf-001-r0", keys=True, data=True)
                  if network == FABRIC and data["lower"] == "leaf-001-r0")
    routes = expected.routes("leaf-001-r0")
    other_leaf = [prefix for prefix, origin in expected.origins.items() if origin == "leaf-001-r1"]
    assert other_leaf and all(routes[prefix] == uplinks for prefix in other_leaf)
    # Without spine-001 the leaf keeps only its links to the other spines.
    to_spine_001 = graph.edges["leaf-001-r0", "spine-001", FABRIC]["links"]
    after = expected.routes("leaf-001-r0", frozenset({"spine-001"}))
    assert all(after[prefix] == uplinks - to_spine_001 for prefix in other_leaf)
    assert not any(origin == "spine-001" for origin in (expected.origins[p] for p in after))
    # A spine reaches a leaf's hosts over its parallel links to that leaf.
    spine = expected.routes("spine-001")
    assert all(spine[prefix] == to_spine_001 for prefix in expected.origins
               if expected.origins[prefix] == "leaf-001-r0" and not prefix.endswith("/32"))


def test_a_slice_keeps_its_leaf_groups_every_switch_above_and_their_hosts() -> None:
    result = validate("article-c")
    assert result.topology is not None
    every, hosts, _ = slice_devices(result.topology, Slice())
    one, one_hosts, text = slice_devices(result.topology, Slice.parse("groups=1"))
    spines = {name for name in every if result.topology.graph.nodes[name]["tier"] == "spine"}
    assert spines <= one and len(one - spines) == 8 and len(one_hosts) == len(hosts) // 2
    assert "leaf groups 1-1 of 2" in text
    for bad in ("groups=0", "pods=1", "groups=x"):
        with pytest.raises(ValueError, match="--slice"):
            Slice.parse(bad)


def test_a_lab_that_would_not_fit_in_memory_is_refused_with_the_numbers(monkeypatch, capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from cluster.commands import lab
    from cluster.lab import runtime

    monkeypatch.setattr(runtime, "missing_requirements", lambda: [])
    monkeypatch.setattr(lab, "_available_mb", lambda: 100.0)
    code = main(["lab", "up", "dev", "--slice", "all", "--state-dir", str(tmp_path / "state")])
    err = capsys.readouterr().err
    assert code == 2
    assert "needs about" in err and "MB" in err and "75 MB for a lab" in err and "--slice groups=N" in err
    assert not (tmp_path / "state" / "state.json").exists()


def test_lab_commands_without_a_lab_say_so(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    state = str(tmp_path / "none")
    assert main(["lab", "check", "dev", "--state-dir", state]) == 2
    assert "no lab is up" in capsys.readouterr().err
    assert main(["lab", "down", "dev", "--state-dir", state]) == 0
    assert main(["lab", "status", "dev", "--state-dir", state]) == 0
    assert "no lab is up" in capsys.readouterr().out


def test_cloud_and_infiniband_designs_have_no_lab(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for stack in ("aws-p5e", "superpod"):
        assert main(["lab", "up", stack, "--state-dir", str(tmp_path)]) == 2
        assert "on-prem Ethernet designs" in capsys.readouterr().err


def test_plan_of_a_from_folder_reads_only_rendered_configs(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["lab", "up", "dev", "--from", str(tmp_path / "absent"), "--state-dir", str(tmp_path / "s")]) == 2
    assert "not a directory" in capsys.readouterr().err
