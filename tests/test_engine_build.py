"""scripts/pulumi_engine.sh's refusals: a clear message and a distinct exit code when Go or the
vendored language host is missing (the build itself is exercised by tests/test_engine.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from test_components_support import ROOT

BUILD = ROOT / "scripts" / "pulumi_engine.sh"


def _run(tmp_path: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPU_CLUSTER_PULUMI_CACHE": str(tmp_path / "cache"), **settings}
    return subprocess.run(["bash", str(BUILD)], capture_output=True, text=True, env=env, timeout=60, check=False)


def test_without_go_it_says_so_and_exits_3(tmp_path: Path) -> None:
    done = _run(tmp_path, GPU_CLUSTER_GO=str(tmp_path / "no-go"))
    assert done.returncode == 3 and done.stdout == ""
    assert f"Go is not installed ({tmp_path / 'no-go'} not found)" in done.stderr
    assert "curl -fsSL https://get.pulumi.com | sh" in done.stderr
    assert not (tmp_path / "cache" / "bin").exists()


def test_without_the_vendored_host_it_says_so_and_exits_4(tmp_path: Path) -> None:
    done = _run(tmp_path, GPU_CLUSTER_PULUMI_VENDOR=str(tmp_path / "vendor"))
    assert done.returncode == 4
    assert f"the Pulumi Python language host source is missing: expected {tmp_path / 'vendor'}" in done.stderr


def test_check_reports_a_missing_build_without_building(tmp_path: Path) -> None:
    env = {**os.environ, "GPU_CLUSTER_PULUMI_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(["bash", str(BUILD), "--check"], capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert done.returncode == 1 and "no build of pulumi v3.260.0" in done.stderr
    assert not (tmp_path / "cache").exists()
