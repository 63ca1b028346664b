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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built as pip builds it (setuptools from PyPI in an isolated build) from a copy of
    the sources (cluster/examples, a link to stacks/ in the checkout, copied as files), so the build
    leaves nothing in the checkout."""
    folder = tmp_path_factory.mktemp("wheel")
    source = folder / "source"
    for name in ("cluster", "components"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.cfg", "README.md"):
        shutil.copy(ROOT / name, source / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder),
                           str(source)], capture_output=True, text=True, timeout=600, check=False, cwd=folder)
    assert done.returncode == 0, done.stderr[-2000:]
    # pip builds in the source folder: setuptools' work folder must not land in build/, where
    # render, export and report write their trees
    assert not (source / "build").exists(), sorted(path.name for path in (source / "build").iterdir())
    [built] = folder.glob("gpu_cluster-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_holds_every_template_catalog_and_example(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    data = [path for pattern in ("cluster/**/*.yaml", "cluster/**/*.j2", "components/**/*.py", "cluster/**/*.py")
            for path in ROOT.glob(pattern)]
    missing = sorted(str(path.relative_to(ROOT)) for path in data if str(path.relative_to(ROOT)) not in names)
    assert not missing, missing
    examples = sorted(f"cluster/examples/{path.name}" for path in (ROOT / "stacks").glob("Pulumi.*.yaml"))
    assert examples and [name for name in examples if name not in names] == []
    assert "components/program.py" in names  # the Pulumi program: plan runs it from any directory
    assert f"gpu_cluster-{__version__}.dist-info/entry_points.txt" in names
    entry = zipfile.ZipFile(wheel).read(f"gpu_cluster-{__version__}.dist-info/entry_points.txt").decode()
    assert "gpu-cluster = cluster.cli:entry" in entry


def test_version() -> None:
    done = subprocess.run([sys.executable, "-m", "cluster", "--version"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() == f"gpu-cluster {__version__}"


@pytest.mark.slow
def test_installed_it_starts_a_project_anywhere(wheel: Path, tmp_path: Path) -> None:
    """After `pip install` (the wheel into a folder of its own, nothing of the checkout on the path),
    in an empty folder: catalog, init, validate and plan the new stack, and validate an example by
    name from the examples the package holds."""
    site, project = tmp_path / "site", tmp_path / "project"
    project.mkdir()
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cluster", *args], cwd=project, capture_output=True, text=True,
                              timeout=300, check=False, env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})

    where = subprocess.run([sys.executable, "-c", "import cluster, components; print(cluster.__file__, components.__file__)"],
                           cwd=project, capture_output=True, text=True, check=False, env={"PYTHONPATH": str(site)})
    assert where.stdout.split() == [str(site / "cluster" / "__init__.py"), str(site / "components" / "__init__.py")]
    catalog = cli("catalog", "gpus")
    assert catalog.returncode == 0 and "  B200 " in catalog.stdout
    assert cli("init", "lab").returncode == 0
    validated = cli("validate", "lab")
    assert validated.returncode == 0 and validated.stdout.startswith("lab: OK"), validated.stdout + validated.stderr
    planned = cli("plan", "lab")  # the program inside the package: this folder's __main__.py only calls it
    assert planned.returncode == 0 and planned.stdout.startswith("lab: "), planned.stdout[-2000:] + planned.stderr
    example = cli("validate", "legacy")  # an example by name: the package's copy
    assert example.returncode == 1 and f"{site / 'cluster' / 'examples' / 'Pulumi.legacy.yaml'}:23" in example.stdout
    assert cli("init", "big", "--from", "prod").returncode == 0
    assert cli("validate", "big").returncode == 0
