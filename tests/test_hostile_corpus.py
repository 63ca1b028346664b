"""The hostile-input corpus: one file per case under tests/hostile/, run through the real CLI.

Each case starts with comment lines that say what must happen:
  # argv: VERB ARGS...     (default `validate {stack}`; see the placeholders below)
  # expect: N              the exit code
  # message: TEXT          a fragment the output (stdout + stderr) must hold
  # absent: TEXT           a fragment it must never hold (a credential, say), in every format the verb
                           has (`--format`); the line may repeat
  # findings: N            `validate --format json` reports exactly N findings (one cause, one finding)
  # cpu: SECONDS           the run takes at most this much CPU time (for input built to be slow)
Input files for the case, written into a scratch folder before the run:
  # data: CONTENT          {lldp}: a folder holding CONTENT as leaf-001-r0.json
  # ib: CONTENT            {ib}: a file, for `verify --ib`
  # ibmap: CONTENT         {ibmap}: a file, for `verify --ib-map`
  # state: CONTENT         {state}: a folder holding CONTENT as state.json, for `lab --state-dir`
  # tree: CONTENT          {tree}: a folder holding CONTENT as .gpu-cluster-tree.json, for `--out`
  # stack-at: PATH         {stack} is a copy of the case file at PATH in the scratch folder
CONTENT is `+`-joined parts, each a file of tests/hostile/data/ or a quoted Python string literal,
either optionally repeated (`*N`): `'CA 0 1 ' + 'x'*300000`. Or `(fifo)` for a named pipe, or
`-> TARGET` for a symbolic link. `NAME = CONTENT` names the file in a folder (data, state, tree).
{scratch} is the scratch folder; {LF}, {ESC} and {RLO} (U+202E) stand for characters a header line
cannot hold, in argv, stack-at, message and absent.
Every case also holds to the general promise: no traceback, every output line printable.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import shlex
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster.cli import main, parser
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "hostile"
CHARACTERS = {"{LF}": "\n", "{ESC}": "\x1b", "{RLO}": "\u202e"}
#: Input files a case may give: header -> (placeholder, path in the scratch folder it stands for,
#: where the content goes below that path).
FILES = {"data": ("{lldp}", "lldp", "leaf-001-r0.json"), "ib": ("{ib}", "ib.txt", ""),
         "ibmap": ("{ibmap}", "ibmap.txt", ""), "state": ("{state}", "state", "state.json"),
         "tree": ("{tree}", "tree", ".gpu-cluster-tree.json")}
PART = re.compile(r"""\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[\w.-]+)(?:\*(\d+))?\s*(?:\+|$)""")


@dataclass(frozen=True)
class Case:
    path: Path
    argv: list[str]
    expect: int
    message: str
    absent: list[str]
    findings: int | None
    cpu: float | None


def characters(text: str) -> str:
    for placeholder, character in CHARACTERS.items():
        text = text.replace(placeholder, character)
    return text


def content(spec: str) -> bytes:
    """The bytes a CONTENT header describes (see the module docstring)."""
    result: list[bytes] = []
    position = 0
    while position < len(spec):
        match = PART.match(spec, position)
        assert match is not None and match.end() > position, f"cannot read {spec!r} at {position}"
        token, times = match.groups()
        quoted = token[0] in "'\""
        part = str(ast.literal_eval(token)).encode() if quoted else (CORPUS / "data" / token).read_bytes()
        result.append(part * int(times or 1))
        position = match.end()
    return b"".join(result)


def write_input(path: Path, spec: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if spec == "(fifo)":
        os.mkfifo(path)
    elif spec.startswith("-> "):
        path.symlink_to(spec[3:])
    else:
        path.write_bytes(content(spec))


def read_case(path: Path, scratch: Path) -> Case:
    header: dict[str, str] = {}
    absent: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(": ")
        if key == "absent":
            absent.append(characters(value))
        else:
            header[key] = value
    stack = path
    if "stack-at" in header:
        stack = scratch / characters(header["stack-at"])
        stack.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, stack)
    replacements = {"{stack}": str(stack), "{scratch}": str(scratch)}
    for key, (placeholder, folder, name) in FILES.items():
        replacements[placeholder] = str(scratch / folder)
        if key in header:
            named = re.fullmatch(r"([\w.-]+) = (.*)", header[key]) if name else None
            spec = header[key] if named is None else named.group(2)
            write_input(scratch / folder / (name if named is None else named.group(1)), spec)
    argv = []
    for part in shlex.split(header.get("argv", "validate {stack}")):
        for placeholder, value in replacements.items():
            part = part.replace(placeholder, value)
        argv.append(characters(part))
    findings = int(header["findings"]) if "findings" in header else None
    cpu = float(header["cpu"]) if "cpu" in header else None
    return Case(path, argv, int(header["expect"]), characters(header["message"]), absent, findings, cpu)


CASES = sorted(CORPUS.glob("*.yaml"))


def run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own usage errors
            code = int(exit_.code or 0)
    return code, out.getvalue() + err.getvalue()


def formats(argv: list[str]) -> list[str]:
    """The `--format` choices of the verb (and lab action) `argv` runs; none when it has no --format."""
    current: argparse.ArgumentParser = parser(argv[0])
    for token in argv:
        actions = [action for action in current._actions if isinstance(action, argparse._SubParsersAction)]
        if actions and token in actions[0].choices:
            current = actions[0].choices[token]
    option = next((action for action in current._actions if "--format" in action.option_strings), None)
    return list(option.choices or ()) if option is not None else []


def test_the_corpus_is_there() -> None:
    assert len(CASES) >= 20


def test_content_parts_join_and_repeat() -> None:
    assert content("""'a' + "b\\n"*2 + 'c'*3""") == b"ab\nb\nccc"
    assert sorted(formats(["validate", "dev"])) == ["github", "json", "sarif", "text"]
    assert sorted(formats(["lab", "status", "dev"])) == ["json", "text"]
    assert formats(["render", "dev"]) == []


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_hostile_case(path: Path, tmp_path: Path) -> None:
    case = read_case(path, tmp_path)
    started = time.process_time()
    code, output = run(case.argv)
    spent = time.process_time() - started
    assert code == case.expect, output
    assert case.message in output, output
    assert "Traceback" not in output
    for line in output.splitlines():
        assert line.isprintable(), repr(line)
    if case.cpu is not None:
        assert spent <= case.cpu, f"{spent:.1f} s of CPU, the bound is {case.cpu:g} s"
    if case.findings is not None:
        assert len(json.loads(run([*case.argv, "--format", "json"])[1])["findings"]) == case.findings
    for absent in case.absent:
        assert absent not in output
        for fmt in formats(case.argv):
            assert absent not in run([*case.argv, "--format", fmt])[1], fmt
