"""The README is true to the output: every command it shows is re-run and compared
(scripts/check_readme.py: timings as numbers, `...` for lines left out)."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

import check_readme


@pytest.mark.slow
def test_every_shown_command_prints_what_the_readme_says() -> None:
    assert check_readme.check(ROOT / "README.md") == []


def test_the_check_catches_a_changed_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    readme = tmp_path / "README.md"
    readme.write_text("```\n$ python -m cluster validate dev\ndev: FAILED (9 errors, 0 warnings)\n...\n```\n")
    [problem] = check_readme.check(readme)
    assert "dev: FAILED (9 errors" in problem and "dev: OK" in problem
