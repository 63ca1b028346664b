"""The two test tiers: `python -m pytest` (the README's command and .ci/run's) runs every test,
`slow` included; the fast tier for editing is `python -m pytest -m "not slow"`."""

from __future__ import annotations

import shlex
import tomllib

from tests.conftest import ROOT


def test_the_full_suite_deselects_nothing() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    addopts = shlex.split(options.get("addopts", ""))
    assert not any(option.startswith(("-m", "-k", "--deselect", "--ignore")) for option in addopts), addopts
    assert "--strict-markers" in addopts  # a misspelt `slow` fails instead of running in the wrong tier
    assert any(marker.startswith("slow:") for marker in options["markers"])
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1] == "python -m pytest"


def test_the_readme_gives_both_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "\npip install -r requirements.txt && python -m pytest\n" in readme
    assert '\npython -m pytest -m "not slow"\n' in readme
