"""What a new user meets first, through the real CLI: counts that read as English."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.cli import main
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
    assert capsys.readouterr().out.splitlines()[-1] == "gpu-cluster legacy: FAILED (3 errors, 2 warnings, exit 1)"
