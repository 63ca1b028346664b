"""The validate verb as a user meets it: exit codes, JSON shape, text report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cluster.cli import main
from tests.conftest import ROOT


@pytest.mark.parametrize(("stack", "code"), [("dev", 0), ("prod", 0), ("superpod", 0), ("legacy", 1)])
def test_exit_codes(stack: str, code: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", stack]) == code
    capsys.readouterr()


def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "legacy", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["stack"] == "legacy" and data["ok"] is False
    for finding in data["findings"]:
        assert set(finding) >= {"rule", "severity", "path", "message", "hint"}
        assert finding["severity"] in {"error", "warning", "info"}
    assert data["summary"]["gpus"] == 256


def test_text_report_groups_and_summarises(capsys: pytest.CaptureFixture[str]) -> None:
    main(["validate", "legacy"])
    text = capsys.readouterr().out
    first = text.splitlines()[0]
    assert first.startswith("legacy: FAILED (2 errors")
    assert text.index("ERRORS") < text.index("WARNINGS") < text.index("DESIGN")
    assert "Pulumi.legacy.yaml:" in text  # findings point at the stack file's line
    assert "oversubscription (worst per tier): leaf 2.25:1" in text


def test_path_argument_and_stack_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(ROOT / "stacks" / "Pulumi.dev.yaml"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["stack"] == "dev"


def test_no_traceback_from_a_real_process(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.yaml"
    bad.write_text("config: {gpu-cluster:cluster: {name: x, target: onprem, node_pools: [{name: a, nodes: -1}]}}")
    done = subprocess.run([sys.executable, "-m", "cluster", "validate", str(bad)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "Traceback" not in done.stdout + done.stderr
    assert "node_pools[0].nodes" in done.stdout


def test_cloud_design_names_the_instance_and_its_fabric(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "aws-p5e"]) == 0
    assert "h200: p5e.48xlarge, fabric 32 x 100G efa per node (the provider's)" in capsys.readouterr().out


def test_render_counts_the_switches_the_subnet_manager_sets_up(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """An InfiniBand fabric's switches get no folder of their own; render says who sets them up."""
    assert main(["render", "superpod", "--out", str(tmp_path / "tree")]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    folders = {path.name for path in (tmp_path / "tree" / "switches").iterdir()}
    assert f"({len(folders)} switches, 48 fabric switches set up by the subnet manager's fabric/ files, 1 host pool)" in line
    assert (tmp_path / "tree" / "fabric" / "opensm.conf").is_file()


def test_lab_refuses_an_infiniband_fabric_and_names_its_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", "export", str(ROOT / "tests" / "golden" / "stacks" / "infiniband.yaml")]) == 2
    said = capsys.readouterr().err
    assert "GPU fabric is infiniband" in said and "verify/fabric.topo" in said and "OpenSM" in said
