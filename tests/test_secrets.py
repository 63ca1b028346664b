"""Credentials never leak: a sentinel set as secret config or in the environment reaches no
registered input, rendered file, plan, validate or report output; it leaves the program only
as a secret stack output. A credential set in plain config is refused without echoing it."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_components_support import ROOT, run_program

from cluster.cli import main
from cluster.loader import load_stack
from components import offline, secrets
from components.onprem.files import unpack

SENTINEL = "s3ntinel-Pa55-7f3a9c"
SECRETS = {key: f"{SENTINEL}-{key}" for key in sorted(secrets.CREDENTIALS)}
STACKS = ("aws-p5e", "gcp-a3ultra", "azure-ndh200", "dev")


def _leaks(text: str) -> list[str]:
    """Every place the sentinel shows up, also base64-encoded (a careless b64 'hides' nothing)."""
    encoded = base64.b64encode(SENTINEL.encode()).decode()[:16]
    return re.findall(rf".{{0,40}}(?:{re.escape(SENTINEL)}|{re.escape(encoded)}).{{0,40}}", text)


def _inputs_text(outcome: Any) -> str:
    """Every registered input as text, with on-prem file bundles unpacked to their content."""
    parts = []
    for registration in outcome.resources:
        inputs = dict(registration.inputs)
        files = inputs.pop("files", None)
        if isinstance(files, dict):
            parts.extend(unpack(packed) for packed in files.values())
        parts.append(json.dumps(inputs, default=str))
    return "\n".join(parts)


@pytest.mark.parametrize("stack", STACKS)
def test_secret_config_stays_a_secret_output(stack: str) -> None:
    loaded = load_stack(stack)
    outcome = offline.run(stack, loaded.data, secrets=SECRETS)
    assert outcome.ok, outcome.errors
    assert outcome.outputs["device_credentials"] == offline.SECRET
    rest = {key: value for key, value in outcome.outputs.items() if key != "device_credentials"}
    text = _inputs_text(outcome) + json.dumps(rest, default=str) + "\n".join(outcome.errors + outcome.warnings)
    assert len(text) > 1000 and _leaks(text) == []
    if loaded.data["target"] == "onprem":
        assert any("files" in registration.inputs for registration in outcome.resources)


def test_environment_credentials_become_secret_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(secrets.CREDENTIALS["bmc_password"], SENTINEL)
    outcome = run_program(load_stack("aws-p5e").data, stack="aws-p5e")
    assert outcome.ok and outcome.outputs["device_credentials"] == offline.SECRET
    assert _leaks(_inputs_text(outcome)) == []
    monkeypatch.delenv(secrets.CREDENTIALS["bmc_password"])
    assert "device_credentials" not in run_program(load_stack("aws-p5e").data, stack="aws-p5e").outputs


def test_plain_config_credential_is_refused_without_echo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_CONFIG_GPU_CLUSTER_SWITCH_PASSWORD", SENTINEL)  # plain, not --secret
    outcome = offline.run("dev", load_stack("dev").data)
    assert outcome.failure is not None and outcome.resources == []
    (error,) = outcome.errors
    assert "gpu-cluster:switch_password is set in plain text" in error
    assert "pulumi config set --secret gpu-cluster:switch_password" in error
    assert _leaks(error + outcome.failure) == []


def _stack_file(tmp_path: Path, stack: str, **extra: Any) -> Path:
    """A copy of an example stack file with the credentials beside the cluster key, as the
    Pulumi CLI stores them (`secure:` ciphertext; here the sentinel itself stands in)."""
    document = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))
    for key, value in SECRETS.items():
        document["config"][f"gpu-cluster:{key}"] = {"secure": value}
    document["config"]["gpu-cluster:cluster"].update(extra)
    path = tmp_path / f"Pulumi.{stack}-copy.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


@pytest.fixture()
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in secrets.CREDENTIALS.values():
        monkeypatch.setenv(variable, SENTINEL)


@pytest.mark.usefixtures("environment")
@pytest.mark.parametrize("stack", ["dev", "aws-p5e"])
def test_cli_outputs_and_rendered_files_carry_no_credential(stack: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = str(_stack_file(tmp_path, stack))
    runs = [["validate", path, "--format", form] for form in ("text", "json", "sarif", "github")]
    runs += [["plan", path, "--format", form] for form in ("text", "json")]
    runs += [["report", path, "--out", str(tmp_path / "report.html")]]
    if stack == "dev":
        runs.append(["render", path, "--out", str(tmp_path / "rendered")])
    for argv in runs:
        assert main(argv) == 0, argv
        captured = capsys.readouterr()
        assert _leaks(captured.out + captured.err) == [], argv
    plan = main(["plan", path, "--format", "json"]), json.loads(capsys.readouterr().out)
    assert plan[1]["outputs"]["device_credentials"] == offline.SECRET
    written = [file for file in tmp_path.rglob("*") if file.is_file() and file.suffix != ".yaml"]
    assert (tmp_path / "report.html").is_file() and (stack != "dev" or len(written) > 20)
    for file in written:
        assert _leaks(file.read_bytes().decode("utf-8", "replace")) == [], file


@pytest.mark.parametrize("key", ["switch_password", "bmc_password"])
def test_credential_misplaced_in_the_cluster_mapping_is_not_echoed(key: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = str(_stack_file(tmp_path, "dev", **{key: SENTINEL}))
    for form in ("text", "json", "sarif", "github"):
        assert main(["validate", path, "--format", form]) == 2
        out = capsys.readouterr().out
        assert key in out and _leaks(out) == [], form
    assert main(["report", path, "--out", str(tmp_path / "report.html")]) == 2
    captured = capsys.readouterr()
    assert _leaks(captured.out + captured.err) == []
    html = tmp_path / "report.html"
    assert not html.exists() or _leaks(html.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("form", ["text", "json", "sarif", "github"])
def test_validate_refuses_a_plaintext_credential_in_the_stack_file(form: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`pulumi config set gpu-cluster:switch_password ...` without --secret leaves the password in
    the stack file in git: the CI gate stops it (exit 2), naming key, line and fix, not the value."""
    path = _stack_file(tmp_path, "dev")
    text = path.read_text(encoding="utf-8").replace(f"secure: {SENTINEL}-switch_password", f"{SENTINEL}-plain")
    path.write_text(text.replace("gpu-cluster:switch_password:\n", "gpu-cluster:switch_password: "), encoding="utf-8")
    line = next(number for number, row in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if row.strip().startswith("gpu-cluster:switch_password:"))
    assert main(["validate", str(path), "--format", form]) == 2
    out = capsys.readouterr().out
    assert _leaks(out) == [] and "gpu-cluster:switch_password is set in plain text" in out
    assert "pulumi config set --secret gpu-cluster:switch_password" in out
    if form == "github":
        assert f"line={line}," in out
    if form == "sarif":
        locations = [result["locations"][0]["physicalLocation"]["region"]["startLine"]
                     for result in json.loads(out)["runs"][0]["results"]]
        assert locations == [line]


@pytest.mark.parametrize("form", [
    "gpu-cluster:switch_password: VALUE", "gpu-cluster:switch_password: 'VALUE'", '"gpu-cluster:bmc_password": "VALUE"',
    "gpu-cluster:api_token: [VALUE]", "gpu-cluster:api_token: {nested: VALUE}", "? gpu-cluster:api_token\n  : VALUE",
])
def test_the_plaintext_credential_values_of_a_stack_file_are_found_in_its_yaml_events(form: str) -> None:
    from cluster.credentials import plaintext_values

    text = f"config:\n  gpu-cluster:cluster: {{name: t, node_pools: [{{name: a}}]}}\n  {form}\n  other: x\n"
    assert plaintext_values(text.replace("VALUE", SENTINEL), 1000) == {SENTINEL}
    aliased = f"anchors: [&pw {SENTINEL}]\nconfig:\n  gpu-cluster:bmc_password: *pw\n  name: t\n"
    assert plaintext_values(aliased, 1000) == {SENTINEL}
    assert plaintext_values(text.replace("VALUE", SENTINEL).replace("gpu-cluster:", "x:"), 1000) == set()
    assert plaintext_values("config: [" * 100 + SENTINEL, 50) == set()  # bounded, and broken YAML is no error


def test_a_finding_never_shows_a_credential_held_in_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A value the environment holds as a credential is taken out of every finding, as a word and
    in the forms a message quotes it (escaped, cut short)."""
    long_secret = SENTINEL * 3
    monkeypatch.setenv("GPU_CLUSTER_SWITCH_PASSWORD", SENTINEL)
    monkeypatch.setenv("GPU_CLUSTER_API_TOKEN", long_secret)
    stack = tmp_path / "Pulumi.env.yaml"
    stack.write_text("config:\n  gpu-cluster:cluster:\n    name: t\n    target: onprem\n    node_pools:\n"
                     "      - name: a\n        nodes: 4\n        gpu: H200\n        labels:\n"
                     f"          {SENTINEL}: a\n          {SENTINEL}: b\n          {long_secret}: a\n"
                     f"          {long_secret}: b\n")
    for fmt in ("text", "json", "sarif", "github"):
        assert main(["validate", str(stack), "--format", fmt]) == 2
        out = capsys.readouterr().out
        assert "duplicate key" in out and _leaks(out) == [], fmt
