"""Shared test helpers: build a stack mapping from the contract and validate it in-process."""

from __future__ import annotations

import copy
import os
import shutil
import sys
from pathlib import Path
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cluster.pipeline import Result, validate_mapping  # noqa: E402

BASE: dict[str, Any] = {
    "name": "t",
    "target": "onprem",
    "node_pools": [{"name": "h200", "nodes": 16, "gpu": "H200"}],
}


def stack(**changes: Any) -> dict[str, Any]:
    """BASE with top-level keys replaced (a value of None deletes the key)."""
    data = copy.deepcopy(BASE)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def run(data: dict[str, Any]) -> Result:
    return validate_mapping("t", data)


def rules_of(result: Result, severity: str | None = None) -> set[str]:
    return {f.rule for f in result.findings if severity is None or str(f.severity) == severity}


def missing_tool(reason: str) -> NoReturn:
    """Skip for a missing Debian tool on a developer's machine; fail under CI (CI=true), where
    .ci/run installs .ci/apt-packages.txt, so a lost install step cannot hide behind a skip."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must install it")
    pytest.skip(reason)


def modes_bind() -> list[str]:
    """A command prefix under which file modes bind the process: root reads and writes past them
    unless it drops the capability (setpriv, util-linux); a skip where that cannot be done."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        missing_tool("running as root without setpriv (util-linux): file modes do not bind")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


@pytest.fixture()
def root() -> Path:
    return ROOT


def copy_templates(destination: Path) -> Path:
    """Every template folder the renderers read (shared and per dialect) merged into `destination`,
    for a test that breaks one template: point cluster.render.engine.TEMPLATES at `(destination,)`
    and clear `engine.environment`'s cache."""
    from cluster.render import engine

    for root in engine.TEMPLATES:
        shutil.copytree(root, destination, dirs_exist_ok=True)
    return destination
