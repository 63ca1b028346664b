"""The README and the pages under docs/ are true to the output: every command they show is re-run
and compared (scripts/check_readme.py: timings as numbers, `...` for lines left out)."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

import check_readme


@pytest.mark.slow
@pytest.mark.parametrize("page", check_readme.pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_every_shown_command_prints_what_the_page_says(page) -> None:  # type: ignore[no-untyped-def]
    assert check_readme.check(page) == []


def test_the_check_reads_the_readme_and_every_page_under_docs() -> None:
    checked = {str(page.relative_to(ROOT)) for page in check_readme.pages()}
    assert {"README.md", "docs/guides/first-stack-file.md", "docs/guides/lab.md", "docs/reference/cli.md"} <= checked
    assert checked == {"README.md"} | {str(page.relative_to(ROOT)) for page in (ROOT / "docs").rglob("*.md")}


def test_the_check_catches_a_changed_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    readme = tmp_path / "README.md"
    readme.write_text("```\n$ python -m cluster validate dev\ndev: FAILED (9 errors, 0 warnings)\n...\n```\n")
    [problem] = check_readme.check(readme)
    assert "dev: FAILED (9 errors" in problem and "dev: OK" in problem
    assert problem.startswith("README.md:2 ")
