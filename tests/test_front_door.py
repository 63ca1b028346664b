"""What a new user meets first, through the real CLI: counts that read as English."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from cluster.cli import main
from cluster.pipeline import Valid, validate
from cluster.report import notices
from cluster.words import counted, plural


def test_counts_agree_with_their_nouns_and_carry_separators() -> None:
    assert counted(1, "host pool") == "1 host pool"
    assert counted(2, "tier") == "2 tiers"
    assert counted(8687, "file") == "8,687 files"
    assert counted(3, "leaf") == "3 leaves" and counted(2, "switch") == "2 switches"
    assert plural("spine", 1) == "spine" and plural("leaf", 0) == "leaves"


def test_render_and_validate_print_counts_as_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "prod", "--out", str(tmp_path / "prod")]) == 0
    line = capsys.readouterr().out.strip()
    assert "(19 switches, 1 host pool)" in line, line
    main(["validate", "legacy"])
    text = capsys.readouterr().out
    assert "fabric: roce, rack-tor, 2 tiers, 1 plane, 8 rails," in text
    assert "(s)" not in text
    main(["validate", "legacy", "--format", "github"])
    assert capsys.readouterr().out.splitlines()[-1] == "gpu-cluster legacy: FAILED (2 errors, 2 warnings, exit 1)"


def write_stack(folder: Path, name: str, cluster: str) -> Path:
    """A stack file `Pulumi.<name>.yaml` in `folder` holding the `gpu-cluster:cluster` YAML given."""
    path = folder / f"Pulumi.{name}.yaml"
    body = "\n".join("    " + line if line else line for line in cluster.strip("\n").splitlines())
    path.write_text(f"config:\n  gpu-cluster:cluster:\n{body}\n", encoding="utf-8")
    return path


B200 = """
name: b200
target: onprem
node_pools:
  - {name: b200, nodes: 96, gpu: B200}
fabric:
  leaf: {switch: SN5600, port_gbps: 400, os: sonic}
storage:
  leaf: {switch: SN5600, os: sonic}
"""


def test_estimate_step_takes_dp_96_and_derives_the_global_batch(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    stack = str(write_stack(tmp_path, "b200", B200))
    step = ["estimate", stack, "--step", "--params", "70e9", "--dp", "96", "--tp", "8", "--step-compute-s", "7"]
    assert main(step) == 0
    out = capsys.readouterr().out
    assert "global batch 1,056 sequences: the multiple of dp x micro-batch = 96 nearest 1,024" in out
    assert "11 micro-batches of 1 x 4096 tokens" in out
    assert main([*step, "--global-batch", "1000"]) == 2
    assert "use 960 or 1,056" in capsys.readouterr().err
    assert main([*step, "--global-batch", "960"]) == 0  # a multiple given is taken as it is, without a note
    out = capsys.readouterr().out
    assert "10 micro-batches" in out and "global batch" not in out


def test_the_design_names_model_and_os_per_tier_and_keeps_the_os_given_for_a_network(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """storage.leaf.os: sonic is the storage network's OS: the spine the resolver picks by cost (an
    SN5400) runs SONiC too, and the summary, JSON and report say what each tier is and runs."""
    stack = str(write_stack(tmp_path, "b200", B200))
    assert main(["validate", stack]) == 0
    text = capsys.readouterr().out
    assert "  storage switches: 2 leaves SN5600 400G sonic, 1 spine SN5400 400G sonic (picked by cost)" in text
    assert "  fabric switches: 16 leaves SN5600 400G sonic, 6 spines SN5600 400G sonic" in text
    assert "management switches: 2 leaves SN5600 400G nvue (catalog OS, picked by cost)" in text
    assert main(["validate", stack, "--format", "json"]) == 0
    models = json.loads(capsys.readouterr().out)["summary"]["switch_models"]
    assert models["storage"]["spine"] | {"chosen": ""} == {
        "count": 1, "model": "SN5400", "ports": 64, "port_gbps": 400, "os": "sonic", "os_source": "storage.leaf.os",
        "chosen": ""}
    assert main(["report", stack, "--out", str(tmp_path / "b200.html")]) == 0
    capsys.readouterr()
    assert "1 spine SN5400 400G sonic (picked by cost)" in (tmp_path / "b200.html").read_text()


def test_a_tier_that_cannot_run_its_networks_os_is_a_warning_naming_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mixed = B200.replace("  leaf: {switch: SN5600, port_gbps: 400, os: sonic}\nstorage",
                         "  leaf: {switch: SN5600, port_gbps: 400, os: sonic}\n  spine: {switch: SN5600, port_gbps: 800}"
                         "\nstorage")
    stack = str(write_stack(tmp_path, "mixed", mixed))
    assert main(["validate", stack, "--format", "json"]) == 0
    [finding] = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "NET-OS-MIX"]
    assert finding["path"] == "fabric.spine.os" and finding["severity"] == "warning"
    assert "run nvue, not the sonic (fabric.leaf.os)" in finding["message"] and "SN5600 at 800G" in finding["message"]
    assert "set fabric.spine.os: nvue to run both on purpose" in finding["hint"]
    asked = mixed.replace("{switch: SN5600, port_gbps: 800}", "{switch: SN5600, port_gbps: 800, os: nvue}")
    assert main(["validate", str(write_stack(tmp_path, "asked", asked)), "--format", "json"]) == 0
    assert not [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "NET-OS-MIX"]


SHARED = B200.replace("  leaf: {switch: SN5600, port_gbps: 400, os: sonic}\nstorage",
                      "  leaf: {switch: SN5600, port_gbps: 400, os: sonic}\n  shared_with: [storage]\nstorage")
RESIZED = ("fabric.shared_with: [storage] re-sizes the fabric from 16 leaves, 6 spines to 24 leaves, 16 spines; "
           "bom.csv: fabric +$1.27M to +$2.49M, storage -$245k to -$517k")


@pytest.mark.parametrize("verb", ["render", "export", "report", "plan", "whatif", "lab export"])
def test_every_verb_that_builds_the_design_says_what_validate_would(
        verb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Storage on the GPU fabric: validate warns (FAB-ISOLATION) and the sizer grows the fabric;
    a verb that builds the design prints both, beside its own output, not only validate."""
    stack = str(write_stack(tmp_path, "shared", SHARED))
    argv = {"render": ["--out", str(tmp_path / "tree")], "export": ["--out", str(tmp_path / "exports")],
            "report": ["--out", str(tmp_path / "shared.html")], "plan": ["--artifacts-dir", str(tmp_path / "a")],
            "whatif": ["--fail", "spine-001"], "lab export": ["--out", str(tmp_path / "lab")]}[verb]
    assert main([*verb.split(), stack, *argv]) == 0
    captured = capsys.readouterr()
    assert RESIZED in captured.err
    if verb == "report":  # and the page says it beside the switches
        assert f"<td>re-sized</td><td>{RESIZED}" in (tmp_path / "shared.html").read_text()
    # plan lists every finding the Pulumi program logs; the others print them as validate does
    warning = ("warning: FAB-ISOLATION (warning) at fabric.shared_with" if verb == "plan" else
               f"shared: 1 warning (`validate {stack}` shows the design)\n  FAB-ISOLATION at fabric.shared_with:")
    assert warning in captured.out + captured.err


def test_the_summary_says_what_the_shared_fabric_costs_and_bom_agrees(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stack = str(write_stack(tmp_path, "shared", SHARED))
    assert main(["validate", stack, "--format", "json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)["summary"]["resized"]
    assert (entry["setting"], entry["without"], entry["with"]) == (
        "fabric.shared_with", {"leaves": 16, "spines": 6, "cores": 0}, {"leaves": 24, "spines": 16, "cores": 0})
    # the fabric's change is the difference of the two designs' bom.csv fabric totals
    totals = {}
    for name, text in (("shared", SHARED), ("apart", B200)):
        assert main(["export", str(write_stack(tmp_path, name, text)), "--out", str(tmp_path / name)]) == 0
        rows = list(csv.DictReader((tmp_path / name / "bom.csv").open()))
        [total] = [row for row in rows if row["network"] == "fabric" and row["category"] == "total"]
        totals[name] = total
    capsys.readouterr()
    low_key, high_key = [key for key in totals["shared"] if key.startswith("total_usd")]
    assert entry["usd"]["fabric"] == [float(totals["shared"][low_key]) - float(totals["apart"][low_key]),
                                      float(totals["shared"][high_key]) - float(totals["apart"][high_key])]


def test_past_the_limit_a_verb_counts_the_findings_and_names_validate(tmp_path: Path) -> None:
    stack = write_stack(tmp_path, "shared", SHARED)
    result = validate(str(stack))
    assert isinstance(result, Valid)
    lines = notices(result, limit=0)
    assert lines[0] == f"shared: 1 warning (`validate {stack}` shows the design)"
    assert lines[1] == f"  and 1 more: run `validate {stack}` for every one"
    assert lines[2].startswith("  " + RESIZED)
    # a clean design that nothing re-sized: nothing to say
    clean = validate(str(write_stack(tmp_path, "b200", B200)))
    assert isinstance(clean, Valid) and notices(clean) == []
