"""The installable package: one set of pinned versions, every data file in the wheel, --version."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from cluster import __version__
from tests.conftest import ROOT


def test_requirements_pin_what_the_package_and_its_extras_pin() -> None:
    """requirements.txt (pulumi install, CI) = the package's dependencies and every extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = set(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared |= set(extra)
    pinned = {line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    assert pinned == declared


@pytest.mark.slow
def test_the_wheel_holds_every_template_and_catalog(tmp_path: Path) -> None:
    """Built as pip builds it (setuptools from PyPI in an isolated build), from a copy of the
    sources, so the build leaves nothing in the checkout."""
    source = tmp_path / "source"
    for name in ("cluster", "components"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
                           str(source)], capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    [wheel] = tmp_path.glob("gpu_cluster-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = [path for pattern in ("cluster/**/*.yaml", "cluster/**/*.j2", "components/**/*.py", "cluster/**/*.py")
            for path in ROOT.glob(pattern)]
    missing = sorted(str(path.relative_to(ROOT)) for path in data if str(path.relative_to(ROOT)) not in names)
    assert not missing, missing
    assert f"gpu_cluster-{__version__}.dist-info/entry_points.txt" in names
    entry = zipfile.ZipFile(wheel).read(f"gpu_cluster-{__version__}.dist-info/entry_points.txt").decode()
    assert "gpu-cluster = cluster.cli:entry" in entry


def test_version() -> None:
    done = subprocess.run([sys.executable, "-m", "cluster", "--version"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() == f"gpu-cluster {__version__}"
