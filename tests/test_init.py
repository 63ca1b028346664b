"""A new user's start, through the real CLI: `init` writes a stack file (commented, or from an
example the package holds) and a Pulumi project; `catalog` lists what a key can name."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cluster import starter
from cluster.catalog import load_catalog
from cluster.cli import main
from cluster.pipeline import Valid, validate
from cluster.report import summary
from tests.conftest import ROOT, modes_bind


def cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m cluster ARGS` run in `folder`, the checkout's package on the path."""
    return subprocess.run([sys.executable, "-m", "cluster", *args], cwd=folder, capture_output=True, text=True,
                          timeout=300, check=False, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_init_in_an_empty_folder_writes_a_project_that_validates_and_plans(tmp_path: Path) -> None:
    done = cli(tmp_path, "init", "lab")
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["Pulumi.yaml", "__main__.py", "stacks"]
    assert "init: wrote stacks/Pulumi.lab.yaml (a commented starter), Pulumi.yaml, __main__.py" in done.stdout
    checked = cli(tmp_path, "validate", "lab")
    assert checked.returncode == 0 and checked.stdout.startswith("lab: OK (0 errors, 0 warnings)"), checked.stdout
    # plan runs the program inside the package, not a copy in this folder
    planned = cli(tmp_path, "plan", "lab", "--format", "json")
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    assert plan["ok"] and plan["counts"]["resources"] > 10
    project = (tmp_path / "Pulumi.yaml").read_text()
    assert "stackConfigDir: stacks" in project and "name: gpu-cluster" in project
    assert "from components.program import main" in (tmp_path / "__main__.py").read_text()


def uncommented(text: str) -> str:
    """The stack file with every commented line of the config block taken in."""
    head, body = text.split("config:\n", 1)
    return head + "config:\n" + re.sub(r"(?m)^(\s*)# ", r"\1", body)


def test_the_starters_commented_lines_are_its_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Uncommented, every line the starter shows changes nothing: the same design and the same
    rendered tree, byte for byte. Only the catalog's NIC defaults stop being reported as such."""
    text = starter.starter("lab")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "Pulumi.lab.yaml").write_text(text)
    (tmp_path / "b" / "Pulumi.lab.yaml").write_text(uncommented(text))
    assert uncommented(text).count("\n    # ") == 0 and "      transport: roce" in uncommented(text)
    designs = []
    for side in ("a", "b"):
        result = validate(str(tmp_path / side / "Pulumi.lab.yaml"))
        assert isinstance(result, Valid) and result.ok and not result.findings, [f.message for f in result.findings]
        designs.append({key: value for key, value in summary(result.spec, result.topology).items() if key != "host_nics"})
        assert main(["render", str(tmp_path / side / "Pulumi.lab.yaml"), "--out", str(tmp_path / side / "tree")]) == 0
    capsys.readouterr()
    assert designs[0] == designs[1]
    trees = [{str(path.relative_to(tmp_path / side / "tree")): path.read_bytes()
              for path in sorted((tmp_path / side / "tree").rglob("*")) if path.is_file()} for side in ("a", "b")]
    assert trees[0] == trees[1] and len(trees[0]) > 20


def test_init_from_an_example_renames_its_cluster_and_keeps_its_design(tmp_path: Path) -> None:
    done = cli(tmp_path, "init", "big", "--from", "prod")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "stacks" / "Pulumi.big.yaml").read_text()
    example = (ROOT / "stacks" / "Pulumi.prod.yaml").read_text()
    # the example's text and comments, its cluster's name replaced where it stands
    assert text == "# big: `gpu-cluster init big --from prod` wrote it from the example below.\n" + example.replace(
        "    name: prod\n", "    name: big\n")
    ours, theirs = validate(str(tmp_path / "stacks" / "Pulumi.big.yaml")), validate("prod")
    assert isinstance(ours, Valid) and isinstance(theirs, Valid)
    assert ours.spec.name == "big"
    assert json.dumps(summary(ours.spec, ours.topology)) == json.dumps(
        summary(theirs.spec, theirs.topology)).replace('"name": "prod"', '"name": "big"')


def test_init_never_overwrites_and_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\n")
    assert cli(tmp_path, "init", "lab").returncode == 0
    assert (tmp_path / "Pulumi.yaml").read_text() == "name: mine\nruntime: python\n"  # the project's own, kept
    (tmp_path / "stacks" / "Pulumi.lab.yaml").write_text("# edited\n")
    again = cli(tmp_path, "init", "lab", "--from", "dev")
    assert again.returncode == 2 and "stacks/Pulumi.lab.yaml exists; nothing written" in again.stderr
    assert (tmp_path / "stacks" / "Pulumi.lab.yaml").read_text() == "# edited\n"
    unknown = cli(tmp_path, "init", "x", "--from", "nope")
    assert unknown.returncode == 2 and "no example 'nope'; the examples:" in unknown.stderr
    assert re.search(r"(?m)^  prod +64 nodes x 8 H200 = 512 GPUs for 70B-class training\.$", unknown.stderr)
    assert set(starter.examples()) == {path.name[7:-5] for path in (ROOT / "stacks").glob("Pulumi.*.yaml")}
    bad = cli(tmp_path, "init", "Lab_1")
    assert bad.returncode == 2 and "is not a DNS label" in bad.stderr and not (tmp_path / "stacks" / "Pulumi.Lab_1.yaml").exists()


def test_init_that_cannot_write_its_project_leaves_nothing_half_made(tmp_path: Path) -> None:
    """The stack file is written first: when Pulumi.yaml then cannot be, it goes again (exit 2)."""
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    project.chmod(0o555)  # stacks/ takes files, the project folder does not
    try:
        done = subprocess.run([*modes_bind(), sys.executable, "-m", "cluster", "init", "lab", "--dir", str(project)],
                              capture_output=True, text=True, timeout=300, check=False,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    finally:
        project.chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert f"init: cannot write {project}/Pulumi.yaml: Permission denied; nothing written; choose another --dir" \
        in done.stderr
    assert "Traceback" not in done.stderr and list((project / "stacks").iterdir()) == []


def test_catalog_lists_what_each_key_can_name(capsys: pytest.CaptureFixture[str]) -> None:
    catalog = load_catalog()
    assert main(["catalog", "switches"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"switches: values of a leaf's, spine's or core's switch ({len(catalog.switches)})"
    assert re.fullmatch(r"  SN5400 +ethernet +64 x 400G, 128 x 200G, 256 x 100G, 256 x 50G, 256 x 25G, 256 x 10G +nvue"
                        r" +nvue, sonic +VERIFIED", next(line for line in lines if line.startswith("  SN5400 ")))
    assert main(["catalog"]) == 0
    text = capsys.readouterr().out
    every = [*catalog.gpus, *catalog.servers, *catalog.switches,
             *(key for by_type in catalog.instances.values() for key in by_type)]
    assert all(re.search(rf"(?m)^  {re.escape(key)} ", text) for key in every)
    assert re.search(r"(?m)^  p5e\.48xlarge +aws +H200 +8 +32 x 100G efa +3,200 +VERIFIED$", text)
    assert main(["catalog", "gpus", "--format", "json"]) == 0
    gpus = json.loads(capsys.readouterr().out)["gpus"]
    assert gpus["B200"] == catalog.gpus["B200"].model_dump(mode="json")  # whole, with its source note
    assert main(["catalog", "instances", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["instances"]["a3-ultragpu-8g"]["provider"] == "gcp"
    with pytest.raises(SystemExit) as refused:
        main(["catalog", "routers"])
    assert refused.value.code == 2
