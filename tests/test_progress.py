"""Progress through the real CLI: a status line of stages and counts when stderr is a terminal (a
pseudo-terminal here, as a user's shell gives), nothing when it is piped."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_front_door import SHARED, write_stack

ERASE = "\r\x1b[K"
RENDER_STAGES = ("reading the stack file", "resolving the spec", "sizing and building the graph (",
                 "checking ", "switch configs and host scripts (", "scheduler topology, labels, cabling and bill of materials (",
                 "what every device should see (", "writing ")
PLAN_STAGES = ("reading the stack file", "resolving the spec", "sizing and building the graph (", "checking ",
               "loading the Pulumi SDK", "running the Pulumi program")


def on_terminal(*args: str, columns: int = 250) -> tuple[int, str, str]:
    """Run `python -m cluster ARGS` with stderr on a pseudo-terminal `columns` wide and stdout piped:
    (exit code, what the terminal showed, stdout)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TERM": "xterm"}
    done = subprocess.Popen([sys.executable, "-m", "cluster", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=follower, env=env)
    os.close(follower)
    shown = bytearray()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: every writer has exited
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    out = done.stdout.read().decode() if done.stdout else ""
    return done.wait(timeout=60), shown.decode(), out


def status_lines(shown: str, verb: str, stack: str) -> list[str]:
    """The stages the status line showed, in order, each once."""
    stages: list[str] = []
    for piece in shown.split(ERASE):
        found = re.match(rf"{verb}: {re.escape(stack)}: \[\d+\.\d s\] (.+)$", piece)
        if found and (not stages or stages[-1] != found.group(1)):
            stages.append(found.group(1))
    return stages


def in_order(stages: list[str], known: tuple[str, ...]) -> bool:
    """Every stage shown is one of `known` (by its start), in `known`'s order."""
    positions = [next((index for index, prefix in enumerate(known) if stage.startswith(prefix)), -1) for stage in stages]
    return -1 not in positions and positions == sorted(positions)


def test_render_on_a_terminal_shows_its_stages_and_erases_them(tmp_path: Path) -> None:
    code, shown, out = on_terminal("render", "prod", "--out", str(tmp_path / "prod"))
    assert code == 0
    stages = status_lines(shown, "render", "prod")
    assert stages[0] == "reading the stack file"  # the first stage is drawn at once
    assert in_order(stages, RENDER_STAGES), stages
    assert shown.endswith(ERASE)  # nothing left on the line when the verb is done
    assert re.fullmatch(r"render: prod: \d[\d,]* files \(19 switches, 1 host pool\) in \S+ \(\d+\.\d\d s\)\n", out), out


@pytest.mark.slow
def test_what_a_verb_prints_erases_the_status_line_first(tmp_path: Path) -> None:
    """The shared-storage design's warning, printed on the terminal mid-run, starts on a clean line."""
    stack = str(write_stack(tmp_path, "shared", SHARED))
    code, shown, _ = on_terminal("render", stack, "--out", str(tmp_path / "tree"))
    assert code == 0
    notice = shown.index(f"shared: 1 warning (`validate {stack}` shows the design)")
    assert shown[:notice].endswith(ERASE), repr(shown[max(0, notice - 120):notice])
    assert "  FAB-ISOLATION at fabric.shared_with" in shown


@pytest.mark.slow
def test_plan_of_a_cloud_stack_shows_the_program_running() -> None:
    code, shown, out = on_terminal("plan", "aws-p5e")
    assert code == 0 and out.startswith("aws-p5e: ")
    stages = status_lines(shown, "plan", "aws-p5e")
    assert stages[0] == "reading the stack file" and in_order(stages, PLAN_STAGES), stages
    assert all(re.fullmatch(r"running the Pulumi program(: \d+ resources?)?", stage)
               for stage in stages if stage.startswith("running"))


@pytest.mark.slow
def test_nothing_when_piped(tmp_path: Path) -> None:
    for args in (["render", "prod", "--out", str(tmp_path / "prod")], ["plan", "aws-p5e"], ["validate", "dev"]):
        done = subprocess.run([sys.executable, "-m", "cluster", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=300, check=False, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                                                             "TERM": "xterm"})
        assert done.returncode == 0, done.stderr
        assert done.stderr == "" and "\r" not in done.stdout and "\x1b" not in done.stdout, (args, done.stderr[:300])
