"""Re-run every command the README and the pages under docs/ show (`$ python -m cluster ...` in a
``` block) and compare what it prints with what the page says it prints: the docs stay true to
the output.

A shown line must appear in the real output, in order; a line `...` (alone, indented or not)
stands for lines left out; timings (`0.16 s`, `9.5 s`) and sizes in KiB are compared as numbers
of any value. A shell line that is not the CLI (`cat FILE`) runs as it is. Commands run in the
checkout, except a block that starts with `init`: it runs in an empty folder of its own, as a new
user's would.

Usage: python scripts/check_readme.py [--update] [PAGE.md ...]   (exit 1 and the difference per block)
  PAGE.md   the pages to check (default: README.md and every docs/**/*.md)
  --update  rewrite the output of every block that leaves nothing out (no `...`) with the real
            output, timings as measured; blocks with `...` are only checked.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMING = re.compile(r"\d+(?:\.\d+)?( s\b| ms\b| KiB\b)")


@dataclass
class Shown:
    """One command of the README and the lines it shows under it."""

    line: int
    command: str
    output: list[str]
    block: int  # which ``` block (its opening line)


def blocks(text: str) -> list[Shown]:
    """Every `$ ` command inside a ``` block, with the lines up to the next command or the fence."""
    found: list[Shown] = []
    inside = False
    opened = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            inside = not inside
            opened = number
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            found.append(Shown(number, line[2:], [], opened))
        elif found and found[-1].line < number and _open(found[-1], text, number):
            found[-1].output.append(line)
    return found


def _open(shown: Shown, text: str, number: int) -> bool:
    """True while `number` is in the same ``` block as the command."""
    lines = text.splitlines()
    return not any(lines[index].startswith("```") for index in range(shown.line, number - 1))


def normal(line: str) -> str:
    return TIMING.sub(lambda match: "N" + match.group(1), line.rstrip())


def compare(shown: list[str], real: list[str]) -> list[str]:
    """Problems: shown lines (in order, `...` skipping) that the real output does not have."""
    problems: list[str] = []
    position = 0
    skipping = False
    wanted = [normal(line) for line in real]
    for line in shown:
        if line.strip() == "...":
            skipping = True
            continue
        target = normal(line)
        if skipping:
            try:
                position = wanted.index(target, position) + 1
            except ValueError:
                problems.append(f"not in the output: {line}")
            skipping = False
            continue
        if position < len(wanted) and wanted[position] == target:
            position += 1
            continue
        problems.append(f"expected: {line}\n      got: {real[position] if position < len(real) else '(end of output)'}")
        break
    if not problems and position < len(wanted) and not (shown and shown[-1].strip() == "..."):
        problems.append(f"the output goes on: {real[position]}")
    return problems


def run(command: str, cwd: Path = ROOT) -> list[str]:
    argv = shlex.split(command)
    if argv[:3] == ["python", "-m", "cluster"]:
        argv[0] = sys.executable
    # stderr into stdout, unbuffered: the lines in the order a terminal shows them (a verb's
    # notes on stderr come before its own output)
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900,
                          check=False, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100",
                                            "PYTHONUNBUFFERED": "1"})
    return done.stdout.splitlines()


def folders(shown: list[Shown], scratch: Path) -> dict[int, Path]:
    """Where each block's commands run: the checkout, or for a block that starts with `init` an
    empty folder under `scratch`."""
    where: dict[int, Path] = {}
    for item in shown:
        if item.block not in where:
            starts = shlex.split(item.command)[3:4] == ["init"]
            where[item.block] = Path(tempfile.mkdtemp(dir=scratch)) if starts else ROOT
    return where


def pages() -> list[Path]:
    """The pages whose commands are checked by default: README.md and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name


def check(readme: Path) -> list[str]:
    problems = []
    shown = blocks(readme.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as scratch:
        where = folders(shown, Path(scratch))
        for item in shown:
            for problem in compare(item.output, run(item.command, where[item.block])):
                problems.append(f"{_name(readme)}:{item.line} `{item.command}`: {problem}")
    return problems


def update(readme: Path) -> None:
    """Write the real output under every command whose shown output leaves nothing out."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    shown = blocks("\n".join(lines))
    with tempfile.TemporaryDirectory() as scratch:
        where = folders(shown, Path(scratch))
        # in the README's order: a block's commands build on each other
        real = {item.line: run(item.command, where[item.block]) for item in shown}
    for item in reversed(shown):
        if any(line.strip() == "..." for line in item.output) or not compare(item.output, real[item.line]):
            continue
        start = item.line  # the index after the command's line
        lines[start:start + len(item.output)] = real[item.line]
    readme.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    updating = argv[:1] == ["--update"]
    chosen = [Path(arg).resolve() for arg in argv[1 if updating else 0:]] or pages()
    problems = []
    for page in chosen:
        if updating:
            update(page)
        problems += check(page)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
