"""`python -m cluster plan`: validates first, then the program's own registrations, offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_components_support import EXAMPLE_KEY, ROOT

from cluster.cli import main


@pytest.mark.parametrize("stack", ["dev", "prod", "superpod", "aws-p5e", "gcp-a3ultra", "azure-ndh200"])
def test_every_example_stack_plans(capsys: pytest.CaptureFixture[str], stack: str) -> None:
    assert main(["plan", stack, "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["ok"] and plan["errors"] == []
    resources = plan["resources"]
    assert plan["counts"]["resources"] == len(resources) == len({r["urn"] for r in resources})
    assert plan["counts"]["by_type"]["gpu-cluster:cluster:GpuCluster"] == 1
    names = {r["name"] for r in resources} | {None}
    assert all(r["parent"] in names for r in resources)
    assert not any("__provider" in r["inputs"] for r in resources)


def test_text_tree_shows_the_efa_layout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "aws-p5e"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("aws-p5e: 27 resources (5 components)")  # NAT, SSM profile; no placement group
    assert "PlacementGroup" not in out
    assert "networkInterfaces=33 (efa-only x32, interface x1) on cards 0-31" in out
    assert "    aws:ec2/launchTemplate:LaunchTemplate  train-h200-template" in out  # under its pool
    assert "desiredCapacity=16" in out
    assert "\nCOUNTS\n" in out and '  node_group_ids: {"h200": "<train-h200-group>"}' in out


def test_json_lists_files_not_content(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "dev", "--format", "json", "--artifacts-dir", "out/dev"]) == 0
    plan = json.loads(capsys.readouterr().out)
    files = [r for r in plan["resources"] if r["type"].endswith("RenderedFiles")]
    assert files and all(r["inputs"]["files"] == [p for p in r["inputs"]["files"] if isinstance(p, str)] for r in files)
    assert {r["inputs"]["directory"] for r in files} == {"out/dev"}
    assert plan["outputs"]["artifacts_dir"] == "out/dev"


def test_failing_stack_prints_findings_and_plans_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "legacy", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and "resources" not in report
    assert {f["rule"] for f in report["findings"]} >= {"FAB-OVERSUB", "FAB-ISOLATION"}


def test_unreadable_stack_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "no-such-stack"]) == 2
    assert "not found" in capsys.readouterr().out


def test_plan_from_the_shell_never_imports_pulumi_for_a_failing_stack() -> None:
    code = ("import sys\nfrom cluster.cli import main\ncode = main(['plan', 'legacy'])\n"
            "assert 'pulumi' not in sys.modules\nraise SystemExit(code)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "FAB-OVERSUB" in done.stdout and "Traceback" not in done.stderr


def test_warnings_are_shown_with_the_plan(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.big-azure.yaml"
    stack.write_text("config:\n  gpu-cluster:cluster:\n    name: t\n    target: aws\n"
                     "    cloud: {region: us-east-1, zone: us-east-1a}\n    fabric: {design: rack-tor}\n"
                     "    node_pools: [{name: h100, nodes: 4, instance_type: p5.48xlarge}]\n")
    assert main(["plan", str(stack)]) == 0
    out = capsys.readouterr().out
    assert "  warning: SPEC-IGNORED (warning) at fabric: fabric is the provider's on aws" in out


def test_an_azure_pool_beyond_one_placement_group_plans_nothing(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.big-azure.yaml"
    stack.write_text("config:\n  gpu-cluster:cluster:\n    name: t\n    target: azure\n"
                     f"    cloud: {{region: eastus, ssh_public_key: {EXAMPLE_KEY}}}\n"
                     "    node_pools: [{name: h100, nodes: 150, instance_type: Standard_ND96isr_H100_v5}]\n")
    assert main(["plan", str(stack)]) == 1
    out = capsys.readouterr().out
    assert "CLOUD-PLACEMENT at node_pools[0].nodes: 150 VMs exceed one placement group (100)" in out
    assert "split the pool into 2 pools of at most 100 nodes each" in out and "resources (" not in out


def test_json_gives_card_and_device_indexes_as_integers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "aws-p5e", "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    template = next(r for r in plan["resources"] if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate")
    nics = template["inputs"]["networkInterfaces"]
    assert [(nic["networkCardIndex"], nic["deviceIndex"], nic["interfaceType"]) for nic in nics[:3]] == [
        (0, 0, "interface"), (0, 1, "efa-only"), (1, 0, "efa-only")]
    assert all(isinstance(nic["networkCardIndex"], int) for nic in nics)
