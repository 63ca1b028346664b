"""`lab` on this machine: time to build and converge, memory per switch, a silent spine's loss,
and the largest slice this machine holds.

    sudo python benchmarks/lab.py [--stack dev --stack article-c --stack pods:groups=2]

For each stack (STACK or STACK:SLICE): `lab up` (build and convergence times as the command reports them), the
daemons' resident memory per switch, `lab check` wall time (and per switch), and `lab fail spine-001 --mode
silent` (longest loss of any probe flow, time to settled routes). Then, from the largest
measured memory per switch and per host, how many switches this machine's MemAvailable holds
within the lab's 75% budget. Timing lives here, never in tests. Needs root, FRR, lldpd, nft.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lab(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPU_CLUSTER_LAB_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "cluster", "lab", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)


def available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", action="append",
                        help="stacks to boot, STACK or STACK:SLICE (default dev, article-c, pods:groups=2)")
    args = parser.parse_args()
    per_switch = []
    print(f"{'stack':<14} {'switches':>8} {'hosts':>6} {'cables':>6} {'build s':>8} {'converge s':>10} "
          f"{'MB/switch':>9} {'check s':>8} {'per switch':>10} {'silent loss s':>13} {'settled s':>9}")
    for given in args.stack or ["dev", "article-c", "pods:groups=2"]:
        stack, _, chosen = given.partition(":")
        with tempfile.TemporaryDirectory() as folder:
            state = Path(folder) / "lab"
            try:
                up = lab(state, "up", stack, "--format", "json", *(["--slice", chosen] if chosen else []))
                if up.returncode != 0:
                    print(f"{stack}: lab up failed: {up.stderr.strip()}")
                    return 1
                summary = json.loads(up.stdout)
                status = json.loads(lab(state, "status", stack, "--format", "json").stdout)
                started = time.perf_counter()
                checked = lab(state, "check", stack, "--format", "json")
                check_s = time.perf_counter() - started
                failed = json.loads(lab(state, "fail", stack, "spine-001", "--mode", "silent",
                                        "--format", "json").stdout)
                mb = status["switch_memory_mb"] / summary["switches"]
                host_mb = status["host_memory_mb"] / max(1, summary["hosts"])
                per_switch.append((mb, host_mb, summary["hosts"] / summary["switches"]))
                print(f"{given:<14} {summary['switches']:>8} {summary['hosts']:>6} {summary['cables']:>6} "
                      f"{summary['build_s']:>8} {summary['converge_s']!s:>10} {mb:>9.1f} {check_s:>8.1f} "
                      f"{check_s / summary['switches']:>10.2f} "
                      f"{failed['worst_loss_s']:>13} {failed['withdraw_s']!s:>9}"
                      + ("" if checked.returncode == 0 else "  (check found problems)"))
            finally:
                lab(state, "down", stack)
    budget = available_mb() * 0.75
    switch_mb, host_mb, ratio = max(per_switch)
    print(f"memory: up to {switch_mb:.0f} MB per switch (zebra, bgpd, bfdd, lldpd), {host_mb:.0f} MB per host "
          f"(lldpd); this machine's lab budget ({budget:,.0f} MB, 75% of MemAvailable) holds about "
          f"{int(budget / (switch_mb + host_mb * ratio)):,} switches with {ratio:.1f} hosts each")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
