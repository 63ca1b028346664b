"""Golden files per dialect: small stacks under tests/golden/stacks, expected trees beside them.

After an intended change run `python scripts/regen_golden.py` and review `git diff tests/golden`.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from cluster.artifacts import render_tree
from cluster.pipeline import Valid, validate
from cluster.publish import MARKER
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"
STACKS = sorted(path.stem for path in (GOLDEN / "stacks").glob("*.yaml"))


def test_every_dialect_has_a_golden_stack() -> None:
    assert {"sonic", "nvue", "eos", "infiniband"} <= set(STACKS)


@pytest.mark.parametrize("name", STACKS)
def test_rendering_matches_the_golden_tree(name: str) -> None:
    result = validate(str(GOLDEN / "stacks" / f"{name}.yaml"))
    assert result.ok and isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    expected_root = GOLDEN / name
    expected = {str(path.relative_to(expected_root)): path.read_text() for path in expected_root.rglob("*")
                if path.is_file() and path.name != MARKER}
    assert sorted(files) == sorted(expected), "file list changed: run scripts/regen_golden.py and review the diff"
    for path in sorted(files):
        if files[path] != expected[path]:
            diff = "".join(difflib.unified_diff(expected[path].splitlines(True), files[path].splitlines(True),
                                                f"golden/{name}/{path}", "rendered", n=1))
            pytest.fail(f"{path} differs from the golden file (run scripts/regen_golden.py to accept):\n{diff[:3000]}")


def test_golden_trees_use_their_dialect() -> None:
    assert list((GOLDEN / "sonic" / "switches").glob("*/config_db.json"))
    assert list((GOLDEN / "nvue" / "switches").glob("*/nvue.sh"))
    assert list((GOLDEN / "eos" / "switches").glob("*/eos.cfg"))
    assert (GOLDEN / "infiniband" / "fabric" / "opensm.conf").read_text().count("routing_engine ftree") == 1
    assert "mtu=5" in (GOLDEN / "infiniband" / "fabric" / "partitions.conf").read_text()
    assert not list((GOLDEN / "infiniband" / "switches").glob("leaf-*"))  # the subnet manager owns the IB fabric
    assert Path(GOLDEN / "nvue" / "hosts" / "h200" / "qos.sh").read_text().count("--dscp2prio set,46,3") == 1
