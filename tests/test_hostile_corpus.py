"""The hostile-input corpus: one file per case under tests/hostile/, run through the real CLI.

Each case starts with comment lines that say what must happen:
  # argv: VERB ARGS...     (default `validate {stack}`; {stack} is the case file, {lldp} a folder
                           holding the `# data:` file of tests/hostile/data/ as leaf-001-r0.json)
  # expect: N              the exit code
  # message: TEXT          a fragment the output (stdout + stderr) must hold
  # absent: TEXT           a fragment it must never hold (a credential, say), in any format
  # findings: N            `validate --format json` reports exactly N findings (one cause, one finding)
Every case also holds to the general promise: no traceback, every output line printable.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster.cli import main
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "hostile"


@dataclass(frozen=True)
class Case:
    path: Path
    argv: list[str]
    expect: int
    message: str
    absent: str | None
    findings: int | None


def read_case(path: Path, scratch: Path) -> Case:
    header: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(": ")
        header[key] = value
    if "data" in header:
        (scratch / "lldp").mkdir()
        shutil.copy(CORPUS / "data" / header["data"], scratch / "lldp" / "leaf-001-r0.json")
    argv = [part.replace("{stack}", str(path)).replace("{lldp}", str(scratch / "lldp"))
            for part in shlex.split(header.get("argv", "validate {stack}"))]
    findings = int(header["findings"]) if "findings" in header else None
    return Case(path, argv, int(header["expect"]), header["message"], header.get("absent"), findings)


CASES = sorted(CORPUS.glob("*.yaml"))


def run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own usage errors
            code = int(exit_.code or 0)
    return code, out.getvalue() + err.getvalue()


def test_the_corpus_is_there() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_hostile_case(path: Path, tmp_path: Path) -> None:
    case = read_case(path, tmp_path)
    code, output = run(case.argv)
    assert code == case.expect, output
    assert case.message in output, output
    assert "Traceback" not in output
    for line in output.splitlines():
        assert line.isprintable(), repr(line)
    if case.findings is not None:
        assert len(json.loads(run([*case.argv, "--format", "json"])[1])["findings"]) == case.findings
    if case.absent is not None and case.argv[0] == "validate":
        for fmt in ("text", "json", "sarif", "github"):
            assert case.absent not in run([*case.argv, "--format", fmt])[1], fmt


def test_a_full_disk_on_stdout_is_a_message_not_a_traceback() -> None:
    import os
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "cluster", "validate", "dev"], cwd=ROOT, stdout=full,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr == "validate: cannot write the output: No space left on device\n"


def test_a_defect_of_ours_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    from cluster.commands import validate

    def broken(_args: object) -> int:
        raise KeyError("a defect")

    monkeypatch.setattr(validate, "run", broken)
    monkeypatch.delenv("GPU_CLUSTER_DEBUG", raising=False)
    code, output = run(["validate", "dev"])
    assert code == 2 and "Traceback" not in output
    assert output.startswith("validate: internal error (KeyError: 'a defect'); this is a defect of gpu-cluster")
