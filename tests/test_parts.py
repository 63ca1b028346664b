"""One design, several stacks (cluster.parts): a core stack and one stack per pod, joined by a
StackReference. Run through the Pulumi program under the SDK's mocks and through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cluster import parts, settings
from cluster.loader import load_stack
from cluster.pipeline import Valid
from components import offline
from tests.conftest import run
from tests.test_components_support import ROOT, assert_well_formed, cloud_stack, of_type

FILES = "RenderedFiles"
CORE = "organization/gpu-cluster/pods"
DESIGN = load_stack("pods").data
assert DESIGN is not None
SHA = settings.design_sha256(DESIGN)
UP = {CORE: {"part": "core", "design_sha256": SHA}}
SPLIT = "examples/split"  # `pods` as five stacks (pods-core, pods-pod-001..004), to copy into stacks/


def program(part: str, references: dict[str, Any] | None = None, stack: str = "pods-x", **given: str) -> Any:
    outcome = offline.run(stack, None, part_settings={"design": "pods", "part": part, **given},
                          references=UP if references is None else references)
    assert_well_formed(outcome)
    return outcome


def files(outcome: Any) -> dict[str, Any]:
    return {registration.name: registration for registration in of_type(outcome, FILES)}


def test_the_example_splits_into_a_core_and_four_pods() -> None:
    result = run(DESIGN)
    assert result.ok and isinstance(result, Valid)
    assert parts.names(result.spec, result.topology) == ["core", "pod-001", "pod-002", "pod-003", "pod-004"]


@pytest.mark.slow
def test_the_parts_write_every_file_of_the_whole_design_exactly_once() -> None:
    whole = files(offline.run("pods", DESIGN))
    seen: dict[str, str] = {}
    for part in ("core", "pod-001", "pod-002", "pod-003", "pod-004"):
        outcome = program(part)
        assert outcome.ok, (outcome.failure, outcome.errors)
        for name, registration in files(outcome).items():
            assert name not in seen, f"{name} is in {seen.get(name)} and {part}"
            seen[name] = part
            assert registration.inputs["hashes"] == whole[name].inputs["hashes"]
    assert set(seen) == set(whole)
    # a pod owns its leaves and spines; cores, other networks and host files are the core's
    assert seen["leaf-003-r5"] == "pod-002" and seen["spine-017"] == "pod-002"
    assert {seen[name] for name in whole if name.startswith(("core-", "stor-", "mgmt-", "oob-", "h200"))} == {"core"}


IB_THREE_TIER = {
    "name": "ib", "target": "onprem", "node_pools": [{"name": "h200", "nodes": 64, "gpu": "H200"}],
    "fabric": {"transport": "infiniband", "leaf": {"ports": 32, "port_gbps": 400}, "leaves": 32, "spines": 32,
               "pods": 2, "cores": 16, "leaf_uplinks": 16, "spine_uplinks": 16},
}


@pytest.mark.parametrize("design", [DESIGN, IB_THREE_TIER], ids=["roce", "infiniband"])
def test_a_pod_renders_alone_exactly_the_files_the_whole_tree_gives_it(design: dict[str, Any]) -> None:
    from cluster.artifacts import render_part, render_tree
    from components.onprem.artifacts import owner

    result = run(design)
    assert result.ok and isinstance(result, Valid), result.findings
    spec, topology = result.spec, result.topology
    whole = render_tree(spec, topology)
    pods = parts.names(spec, topology)[1:]
    assert len(pods) >= 2
    for part in pods:
        expected = {path: text for path, text in whole.items()
                    if parts.of_bundle(topology, owner(path, topology)[1]) == part}
        assert expected and render_part(spec, topology, part) == expected


def test_every_part_writes_into_the_design_stacks_tree() -> None:
    for part in ("core", "pod-003"):
        assert {registration.inputs["directory"] for registration in of_type(program(part), FILES)} == {"build/pods"}


def test_a_pod_reads_its_core_stack_and_carries_the_checked_design() -> None:
    outcome = program("pod-003")
    [reference] = [registration for registration in outcome.resources if registration.read]
    assert reference.type == "pulumi:pulumi:StackReference" and reference.inputs["name"] == CORE
    assert {registration.inputs["design"] for registration in of_type(outcome, FILES)} == {SHA}
    assert outcome.outputs["part"] == "pod-003" and outcome.outputs["design_sha256"] == SHA


@pytest.mark.parametrize(("outputs", "message"), [
    ({"part": "core", "design_sha256": "0" * 64}, "is up with design 000000000000, this stack has"),
    ({"part": "all", "design_sha256": SHA}, "deploys part 'all', not 'core'"),
    ({"design_sha256": SHA}, "deploys part None, not 'core'"),
    ({}, "is not up (it has no outputs)"),  # a core stack created but never up: found by the engine
])
def test_a_pod_writes_nothing_unless_its_core_is_up_with_the_same_design(outputs: dict[str, Any], message: str) -> None:
    outcome = program("pod-002", references={CORE: outputs})
    assert outcome.failure is not None and message in outcome.failure
    assert f"run pulumi up on {CORE} first" in outcome.failure or "set gpu-cluster:part core" in outcome.failure
    assert not of_type(outcome, FILES)


def test_the_core_stack_can_be_named_explicitly() -> None:
    named = "acme/fabric/pods-core"
    outcome = program("pod-001", references={named: UP[CORE]}, core_stack=named)
    assert outcome.ok and of_type(outcome, FILES)


@pytest.mark.parametrize(("given", "message"), [
    ({"design": "pods", "part": "pod-009"}, "this design has the parts all, core, pod-001"),
    ({"design": "pods", "part": "rack-7"}, "use all, core or pod-NNN"),
    ({"part": "pod-001"}, "no core stack is named"),
])
def test_a_part_the_design_does_not_have_registers_nothing(given: dict[str, str], message: str) -> None:
    cluster = None if "design" in given else DESIGN
    outcome = offline.run("pods-x", cluster, part_settings=given, references=UP)
    assert outcome.failure is not None
    assert message in outcome.failure or any(message in error for error in outcome.errors)
    assert not outcome.resources


def test_a_cloud_stack_is_not_split() -> None:
    outcome = offline.run("t", cloud_stack("aws", "p5e.48xlarge"), part_settings={"part": "core"})
    # refused by validation itself (as `validate` refuses it), before any part is chosen
    assert outcome.failure is not None and "failed validation" in outcome.failure
    assert any("is not split" in error for error in outcome.errors)
    assert not outcome.resources


def test_design_and_cluster_together_are_refused() -> None:
    outcome = offline.run("pods-x", DESIGN, part_settings={"design": "pods", "part": "core"})
    assert outcome.failure is not None and any("both gpu-cluster:cluster and gpu-cluster:design" in error
                                               for error in outcome.errors)
    assert not outcome.resources


@pytest.mark.parametrize(("reference", "qualified"), [
    ("pods", "org/gpu-cluster/pods"), ("fabric/pods", "org/fabric/pods"), ("acme/fabric/pods", "acme/fabric/pods"),
])
def test_core_stack_names_are_qualified_like_pulumi(reference: str, qualified: str) -> None:
    assert settings.core_stack("pod-001", reference, None, "org", "gpu-cluster") == (qualified, [])
    assert settings.core_stack("core", reference, None, "org", "gpu-cluster") == (None, [])


@pytest.mark.parametrize(("part", "design", "core", "path", "message"), [
    ("pod-001", None, None, "config.gpu-cluster:core_stack", "no core stack is named"),
    ("pod-001", None, "a/b/c/d", "config.gpu-cluster:core_stack", "is not a stack name"),
])
def test_a_core_stack_that_cannot_be_read_is_a_schema_finding(part: str, design: str | None, core: str | None,
                                                              path: str, message: str) -> None:
    reference, [finding] = settings.core_stack(part, design, core, "org", "gpu-cluster")
    assert reference is None and (finding.rule, finding.path) == ("SCHEMA", path) and message in finding.message


def test_the_fingerprint_ignores_key_order_and_sees_every_value() -> None:
    reordered = dict(reversed(list(DESIGN.items())))
    assert settings.design_sha256(reordered) == SHA
    grown = json.loads(json.dumps(DESIGN))
    grown["node_pools"][0]["nodes"] += 1
    assert settings.design_sha256(grown) != SHA


# -- stack files and the CLI


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(text)
    return path


@pytest.mark.slow
def test_the_example_split_covers_the_design(cli: Any) -> None:
    """examples/split/ holds one stack per part of `pods`: together they write every file once."""
    names = sorted(path.name for path in (ROOT / SPLIT).glob("Pulumi.*.yaml"))
    assert names == ["Pulumi.pods-core.yaml", *(f"Pulumi.pods-pod-{n:03d}.yaml" for n in range(1, 5))]
    seen: dict[str, str] = {}
    for name in names:
        loaded = load_stack(str(ROOT / SPLIT / name))
        assert loaded.design == "pods" and loaded.data == DESIGN
        chosen = {key: str(value) for key, value in loaded.settings.items()}
        core, _ = settings.core_stack(chosen["part"], "pods", chosen.get("core_stack"), "organization", "gpu-cluster")
        outcome = offline.run(loaded.stack, None, part_settings=chosen,
                              references={core: UP[CORE]} if core else {})
        assert outcome.ok, (name, outcome.failure)
        for bundle in files(outcome):
            assert seen.setdefault(bundle, name) == name
    assert set(seen) == set(files(offline.run("pods", DESIGN)))


def test_a_pod_stack_file_validates_the_design_it_names(cli: Any) -> None:
    code, out = cli("validate", f"{SPLIT}/Pulumi.pods-pod-002.yaml", "--format", "json")
    assert code == 0 and json.loads(out)["ok"]
    code, sarif = cli("validate", f"{SPLIT}/Pulumi.pods-pod-002.yaml", "--format", "sarif")
    # findings of a pod stack point into the file that holds the design
    assert json.loads(sarif)["runs"][0]["artifacts"][0]["location"]["uri"].endswith("stacks/Pulumi.pods.yaml")


@pytest.mark.parametrize(("text", "path", "message"), [
    ("config:\n  gpu-cluster:design: pods\n  gpu-cluster:part: 7\n", "config.gpu-cluster:part", "is a int, not a string"),
    ("config:\n  gpu-cluster:design: pods\n  gpu-cluster:part: spine\n", "config.gpu-cluster:part", "'spine'"),
    ("config:\n  gpu-cluster:design: ../x\n", "config.gpu-cluster:design", "is not a stack name"),
    ("config:\n  gpu-cluster:design: nowhere\n", "(file)", "not found"),
    ("config:\n  gpu-cluster:design: pods\n  gpu-cluster:cluster: {name: x, target: onprem, node_pools: []}\n",
     "config.gpu-cluster:design", "both gpu-cluster:cluster and gpu-cluster:design"),
])
def test_bad_part_settings_are_schema_errors(cli: Any, tmp_path: Path, text: str, path: str, message: str) -> None:
    code, out = cli("validate", str(write(tmp_path, "bad", text)), "--format", "json")
    assert code == 2
    findings = json.loads(out)["findings"]
    assert any(f["rule"] == "SCHEMA" and f["path"] == path and message in f["message"] for f in findings), findings


@pytest.mark.slow
def test_plan_shows_the_split(cli: Any) -> None:
    code, out = cli("plan", "pods", "--parts", "--format", "json")
    assert code == 0
    summary = json.loads(out)
    rows = {row["part"]: row for row in summary["parts"]}
    assert list(rows) == ["core", "pod-001", "pod-002", "pod-003", "pod-004"]
    whole = offline.run("pods", DESIGN)
    assert sum(row["file_resources"] for row in rows.values()) == len(of_type(whole, FILES))
    for name, row in rows.items():
        outcome = program(name)
        assert row["resources"] == len(outcome.resources), name


def test_plan_of_a_pod_stack_says_what_it_assumes(cli: Any) -> None:
    code, out = cli("plan", f"{SPLIT}/Pulumi.pods-pod-004.yaml")
    assert code == 0
    assert f"assumes: the core stack {CORE}-core is up as part core with this design ({SHA[:12]})" in out
    assert "spine-049" in out and "spine-048" not in out
    code, out = cli("plan", "prod", "--part", "pod-002")
    assert code == 2 and "this design has the parts all, core, pod-001" in out


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    from cluster.cli import main

    monkeypatch.chdir(ROOT)

    def invoke(*argv: str) -> tuple[int, str]:
        code = main(list(argv))
        return code, capsys.readouterr().out

    return invoke


def test_a_design_chain_is_one_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stacks").mkdir()
    write(tmp_path / "stacks", "mid", "config:\n  gpu-cluster:design: other\n")
    write(tmp_path / "stacks", "top", "config:\n  gpu-cluster:design: mid\n  gpu-cluster:part: pod-001\n")
    monkeypatch.chdir(tmp_path)
    loaded = load_stack("top")
    assert loaded.data is None
    assert [(f.rule, f.path) for f in loaded.findings] == [("SCHEMA", "config.gpu-cluster:design")]
    assert "stack mid names a design itself" in loaded.findings[0].message


def test_a_stack_that_names_itself_as_its_design_is_one_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stacks").mkdir()
    write(tmp_path / "stacks", "loop", "config:\n  gpu-cluster:design: loop\n  gpu-cluster:part: core\n")
    monkeypatch.chdir(tmp_path)
    loaded = load_stack("loop")
    assert loaded.data is None
    assert [(f.rule, f.path) for f in loaded.findings] == [("SCHEMA", "config.gpu-cluster:design")]
