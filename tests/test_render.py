"""Rendering: one QoS plan on host and switch, determinism, the CLI's all-or-nothing writes."""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.artifacts import render_tree
from cluster.commands import render as render_command
from cluster.pipeline import Result, Valid, validate, validate_mapping
from cluster.publish import check, publish_tree
from tests.conftest import ROOT

PROD = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpu-cluster:cluster"]


def prod_with(**qos: Any) -> dict[str, Any]:
    data = copy.deepcopy(PROD)
    data["qos"].update(qos)
    return data


def rendered(data: dict[str, Any]) -> dict[str, str]:
    result = validate_mapping("t", data)
    assert result.ok, [f.message for f in result.findings if str(f.severity) == "error"]
    assert isinstance(result, Valid)
    return render_tree(result.spec, result.topology)


def run_render(stack: str, out: Path | None) -> int:
    return render_command.run(argparse.Namespace(stack=stack, out=None if out is None else str(out)))


@pytest.fixture(scope="module")
def prod_files() -> dict[str, str]:
    return rendered(PROD)


def test_render_twice_gives_byte_identical_trees(tmp_path: Path) -> None:
    """Two processes with different hash seeds (set and dict order must not leak into files)."""
    program = ("import argparse, sys; from pathlib import Path; from cluster.commands.render import run; "
               "sys.exit(run(argparse.Namespace(stack='prod', out=sys.argv[1])))")
    for out, seed in (("a", "1"), ("b", "2")):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", program, str(tmp_path / out)], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    first = {p.relative_to(tmp_path / "a"): p.read_bytes() for p in sorted((tmp_path / "a").rglob("*")) if p.is_file()}
    second = {p.relative_to(tmp_path / "b"): p.read_bytes() for p in sorted((tmp_path / "b").rglob("*")) if p.is_file()}
    assert first == second and len(first) > 20
    assert not any(re.search(rb"20\d\d-\d\d-\d\d", text) for text in first.values())  # no timestamps


def test_every_switch_of_every_network_gets_a_config(prod_files: dict[str, str]) -> None:
    result = validate("prod")
    assert isinstance(result, Valid)
    for name, _ in result.topology.switches():
        assert any(path.startswith(f"switches/{name}/") for path in prod_files), name
    assert "hosts/h200/qos.sh" in prod_files and "hosts/h200/nccl.env" in prod_files


def test_dscp_46_on_priority_3_renders_the_same_map_on_host_and_every_dialect() -> None:
    data = prod_with(roce={"dscp": 46, "priority": 3})
    data["fabric"]["leaf"]["os"] = "sonic"
    data["fabric"]["spine"] = {**data["fabric"]["spine"], "switch": "7060X6", "os": "eos"}  # SN5600 runs no EOS
    files = rendered(data)
    script = files["hosts/h200/qos.sh"]
    assert "mlnx_qos -i \"$dev\" --dscp2prio set,46,3" in script
    [dcb] = re.findall(r"dcb app replace dev \S+ dscp-prio ([\d: ]+)$", script, re.M)
    host_map = dict(entry.split(":") for entry in dcb.split())
    assert len(host_map) == 64 and (host_map["0"], host_map["10"], host_map["46"], host_map["48"]) == ("0", "1", "3", "6")
    assert {dscp for dscp, priority in host_map.items() if priority == "3"} == {"46"}  # nothing else on PFC
    assert script.count("--dscp2prio set,") == 64
    assert "match ip dsfield 0xb8 0xfc action skbedit priority 3" in script
    assert "match ip dscp" not in script
    assert "cma_roce_tos -d mlx5_0 -t 186" in script  # 46 << 2 | ECT(0)
    assert "NCCL_IB_TC=186" in files["hosts/h200/nccl.env"]  # the same byte
    db = json.loads(files["switches/leaf-001-r0/config_db.json"])
    assert db["DSCP_TO_TC_MAP"]["ROCE"]["46"] == "3" and db["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "0"
    assert "qos map dscp 46 to traffic-class 3" in files["switches/spine-001/eos.cfg"]
    nvue = rendered(prod_with(roce={"dscp": 46, "priority": 3}))["switches/leaf-001-r0/nvue.sh"]
    assert "nv set qos mapping default-global dscp 46 switch-priority 3" in nvue
    assert "nv set qos pfc default-global switch-priority 3" in nvue


DEFAULT_CLASS_LINE = re.compile(r"^(nv set qos mapping default-global dscp \S+ switch-priority 0|"
                                r"qos map dscp [\d ]+ to traffic-class 0)$")


def test_changing_only_the_roce_dscp_changes_every_affected_file_consistently(prod_files: dict[str, str]) -> None:
    changed = rendered(prod_with(roce={"dscp": 34, "priority": 3}))
    assert set(changed) == set(prod_files)
    differing = {path for path in prod_files if prod_files[path] != changed[path]}
    fabric = {path for path in prod_files if path.startswith(("switches/leaf-", "switches/spine-"))}
    assert differing == fabric | {"hosts/h200/qos.sh", "hosts/h200/nccl.env", "nccl/h200.env"}
    for path in differing:
        old_lines = set(prod_files[path].splitlines()) - set(changed[path].splitlines())
        new_lines = set(changed[path].splitlines()) - set(prod_files[path].splitlines())
        # every changed line is about the RoCE DSCP (26 -> 34): ToS 106 -> 138, dsfield 0x68 -> 0x88,
        # NVUE's note that the plan no longer equals NVIDIA's profile, and the default class's DSCP
        # list, which gains 26 and loses 34 and nothing else
        default_lists = [line for line in old_lines | new_lines if DEFAULT_CLASS_LINE.match(line)]
        # (a host's full DSCP map moves both: 26 leaves the RoCE priority, 34 joins it)
        for line in old_lines - set(default_lists):
            assert re.search(r"\b26\b|set,34,|0x68|\b106\b|plan equals NVIDIA", line), (path, line)
        for line in new_lines - set(default_lists):
            assert re.search(r"\b34\b|set,26,|0x88|\b138\b|plan differs from NVIDIA", line), (path, line)
        if default_lists:
            (before,) = [set(re.findall(r"\d+", line.split("dscp ")[1].split(" to ")[0].split(" switch")[0]))
                         for line in old_lines if DEFAULT_CLASS_LINE.match(line)]
            (after,) = [set(re.findall(r"\d+", line.split("dscp ")[1].split(" to ")[0].split(" switch")[0]))
                        for line in new_lines if DEFAULT_CLASS_LINE.match(line)]
            assert before - after == {"34"} and after - before == {"26"}, path


def test_lossy_mode_writes_no_pfc_anywhere() -> None:
    data = prod_with(mode="lossy", pfc_priorities=[])
    data["fabric"]["leaf"]["os"] = "sonic"
    data["fabric"]["spine"]["os"] = "nvue"  # one design, both dialects (asked for: no NET-OS-MIX)
    files = rendered(data)
    db = json.loads(files["switches/leaf-001-r0/config_db.json"])
    assert {entry["pfc_enable"] for port, entry in db["PORT_QOS_MAP"].items() if port != "global"} == {""}
    assert "--pfc 0,0,0,0,0,0,0,0" in files["hosts/h200/qos.sh"]
    assert "nv set qos roce mode lossy" in files["switches/spine-001/nvue.sh"]


def test_nccl_env_uses_exact_match_devices_in_rail_order_and_the_plan_tc(prod_files: dict[str, str]) -> None:
    env = dict(line.split("=", 1) for line in prod_files["hosts/h200/nccl.env"].splitlines() if not line.startswith("#"))
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{rail}:1" for rail in range(8))
    assert env["NCCL_IB_TC"] == str(26 << 2 | 2)  # ECT(0) in the ECN bits, as cma_roce_tos
    # no management netdev named in the stack file: none is invented (`mgmt0` names no real netdev);
    # nccl-socket.sh finds it on each host from its planned management address
    assert "NCCL_SOCKET_IFNAME" not in env and "nccl-socket.sh" in prod_files["hosts/h200/nccl.env"]
    assert "h200-node-001) ADDRESS=10.176.0.0 ;;" in prod_files["hosts/h200/nccl-socket.sh"]
    assert "NCCL_IB_GID_INDEX" not in env


@pytest.mark.parametrize("stack", ["dev", "prod", "superpod", "pods"])
def test_no_nccl_env_names_a_socket_interface_the_stack_file_does_not(stack: str) -> None:
    """The cabling plan's host port labels (mgmt0, stor0, rail0) are labels, not netdevs on a host."""
    result = validate(stack)
    assert isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    envs = {path: text for path, text in files.items() if path.endswith("nccl.env")}
    assert envs and all("NCCL_SOCKET_IFNAME=" not in text for text in envs.values())
    for pool in result.spec.pools:
        assert f"hosts/{pool.name}/nccl-socket.sh" in files


def test_stack_file_device_names_override_the_convention() -> None:
    data = copy.deepcopy(PROD)
    devices = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    data["node_pools"][0]["fabric_nics"]["devices"] = devices
    data["node_pools"][0]["fabric_nics"]["interfaces"] = [f"ens{n}np0" for n in range(8)]
    data["node_pools"][0]["management_nics"]["interfaces"] = ["eno1"]
    files = rendered(data)
    assert "NCCL_IB_HCA==" + ",".join(f"{d}:1" for d in devices) in files["hosts/h200/nccl.env"]
    assert "NCCL_SOCKET_IFNAME==eno1" in files["hosts/h200/nccl.env"]
    assert "GIVEN=(ens0np0 ens1np0" in files["hosts/h200/qos.sh"]


def test_wrong_number_of_device_names_is_a_schema_error() -> None:
    data = copy.deepcopy(PROD)
    data["node_pools"][0]["fabric_nics"]["devices"] = ["mlx5_0"]
    result = validate_mapping("t", data)
    assert result.exit_code == 2
    assert any(f.rule == "SCHEMA" and f.path == "node_pools[0].fabric_nics" for f in result.findings)


def test_switch_ports_name_their_peers_with_addresses_and_asns(prod_files: dict[str, str]) -> None:
    nvue = prod_files["switches/leaf-001-r3/nvue.sh"]
    assert "nv set interface swp1 link breakout 2x" in nvue  # SN5600 at 400G: two ports per OSFP cage
    assert "nv set interface swp1s0 description 'h200-node-001 rail3'" in nvue
    assert "nv set router bgp autonomous-system 4200001004" in nvue
    spine = prod_files["switches/spine-001/nvue.sh"]
    assert "nv set router bgp autonomous-system 4200000000" in spine
    # every leaf neighbour of the spine is external and has the leaf's own ASN in the inventory
    inventory = json.loads(prod_files["inventory.json"])["switches"]
    assert {entry["asn"] for name, entry in inventory.items() if name.startswith("spine-")} == {4200000000}
    leaf_asns = [entry["asn"] for name, entry in inventory.items() if name.startswith("leaf-")]
    assert len(set(leaf_asns)) == len(leaf_asns)


# --------------------------------------------------------------------------- CLI


def test_cli_refuses_a_failing_design_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_render("legacy", tmp_path / "out") == 1
    assert not (tmp_path / "out").exists() and list(tmp_path.iterdir()) == []
    assert "nothing written" in capsys.readouterr().err


def test_cli_bad_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  gpu-cluster:cluster:\n    name: bad\n    target: onprem\n    node_pools: 3\n")
    assert run_render(str(bad), tmp_path / "out") == 2
    assert run_render("aws-p5e", tmp_path / "out") == 2  # a cloud target has nothing to render on premises
    assert not (tmp_path / "out").exists()


def test_cli_replaces_its_own_tree_and_leaves_no_staging(tmp_path: Path) -> None:
    out = tmp_path / "build" / "dev"
    assert run_render("dev", out) == 0
    (out / "inventory.json").write_text("edited by hand\n")  # a file render wrote: re-rendered
    assert run_render("dev", out) == 0
    assert (out / "inventory.json").read_text() != "edited by hand\n"
    assert (out / "hosts" / "h200" / "qos.sh").stat().st_mode & 0o111
    assert sorted(p.name for p in out.parent.iterdir()) == ["dev"]


def test_cli_never_replaces_a_directory_it_did_not_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "build" / "dev"
    out.mkdir(parents=True)
    (out / "notes.txt").write_text("a user's file")
    assert run_render("dev", out) == 2
    assert "did not write" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_cli_default_output_is_build_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_render("dev", None) == 0
    assert (tmp_path / "build" / "dev" / "inventory.json").is_file()


def test_render_streams_the_tree_in_batches_as_render_tree_has_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`render` writes its files as they are rendered, a batch at a time (here batches of about
    4 KiB, so dozens): the tree on disk is render_tree's, byte for byte, modes and marker too."""
    import cluster.commands as commands

    monkeypatch.setattr(commands, "BATCH_BYTES", 4096)
    assert run_render("prod", tmp_path / "streamed") == 0
    monkeypatch.undo()
    assert run_render("prod", tmp_path / "whole") == 0  # 32 MiB batches: one
    streamed = {p.relative_to(tmp_path / "streamed").as_posix(): (p.read_text(), p.stat().st_mode)
                for p in (tmp_path / "streamed").rglob("*") if p.is_file()}
    whole = {p.relative_to(tmp_path / "whole").as_posix(): (p.read_text(), p.stat().st_mode)
             for p in (tmp_path / "whole").rglob("*") if p.is_file()}
    assert streamed == whole
    result = validate("prod")
    assert isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    assert {path: text for path, (text, _) in streamed.items() if path != ".gpu-cluster-tree.json"} == files
    assert json.loads(streamed[".gpu-cluster-tree.json"][0])["files"] == sorted(files)


def test_writer_keeps_the_old_tree_when_writing_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "tree"
    publish_tree({"a.txt": "old\n"}, check(str(out), "render", "t"), "render", "t")

    def broken(self: Path, *args: Any, **kwargs: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", broken)
    with pytest.raises(OSError):
        publish_tree({"a.txt": "new\n", "b.txt": "new\n"}, check(str(out), "render", "t"), "render", "t")
    monkeypatch.undo()
    assert (out / "a.txt").read_text() == "old\n" and not (out / "b.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tree"]


# --------------------------------------------------------------------------- QOS-PFC-MAP on what was rendered


def _qos_findings(result: Result) -> list[str]:
    return [f.message for f in result.findings if f.rule == "QOS-PFC-MAP"]


@pytest.mark.parametrize(("tos", "expected"), [
    # the article's NCCL_IB_TC=104: DSCP 26 without ECT, so the switch's ECN marks become drops
    (26 << 2, "host and switch intents disagree: ECN on host [], switch [3]"),
    # the host marks RoCE with another DSCP than the one the switch queues on priority 3
    (27 << 2 | 0b10, "host and switch intents disagree: DSCP 26 on host priority 0, switch priority 3"),
])
def test_host_and_switch_plans_are_derived_apart(tos: int, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host plan follows the ToS byte the host sends, the switch plan the queues: a host that
    marks RoCE differently from the plan fails QOS-PFC-MAP (before, both plans had one body)."""
    from cluster.intent import qos

    assert _qos_findings(validate("prod")) == []
    monkeypatch.setattr(qos, "tos", lambda dscp: tos)
    result = validate("prod")
    assert result.exit_code == 1
    assert expected in _qos_findings(result), _qos_findings(result)


def test_validation_renders_nothing_and_imports_no_template_engine() -> None:
    """The rules read the QoS intent; rendering (jinja2) starts only with a verb that writes files."""
    program = ("import sys\nfrom cluster.cli import main\n"
               "for stack in ('prod', 'legacy', 'superpod'):\n    main(['validate', stack])\n"
               "print('jinja2' in sys.modules, 'cluster.render' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.splitlines()[-1] == "False False", done.stdout + done.stderr


def test_a_shared_fabric_is_judged_on_the_qos_intent() -> None:
    from tests.conftest import stack

    result = validate_mapping("t", stack(fabric={"shared_with": ["storage"]}))
    [isolation] = [f for f in result.findings if f.rule == "FAB-ISOLATION"]
    assert "RoCE keeps PFC-protected priority 3" in isolation.message


def test_render_is_a_registered_verb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cluster.cli import main

    assert main(["render", "dev", "--out", str(tmp_path / "dev")]) == 0
    assert "render: dev: " in capsys.readouterr().out
    with pytest.raises(SystemExit) as usage:
        main(["render"])
    assert usage.value.code == 2


