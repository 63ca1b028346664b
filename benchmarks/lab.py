"""`lab` on this machine: time to build and converge, memory and idle CPU per switch, `lab check`'s
time per switch, a silent spine's loss, and the largest slice this machine holds.

    sudo python benchmarks/lab.py [--stack dev --stack article-c:all --stack pods:groups=2] [--idle S]

For each stack (STACK or STACK:SLICE): `lab up` (build and convergence times as the command reports them), the
daemons' resident memory per switch, their CPU over `--idle` seconds of the converged lab doing nothing
(utime + stime from /proc/PID/stat: per switch, and bfdd's per BGP session end), `lab check` wall time (and per
switch), and `lab fail spine-001 --mode silent` (longest loss of any probe flow, time to settled routes). Then,
from the largest measured memory per switch and per host, how many switches this machine's MemAvailable holds
within the lab's 75% budget, and from the largest measured CPU per session end how many session ends its cores
hold within the lab's CPU share. Timing lives here, never in tests. Needs root, FRR, lldpd, nft.
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
sys.path.insert(0, str(ROOT))

from cluster.lab.sizing import CPU_SHARE  # noqa: E402


def lab(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPU_CLUSTER_LAB_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "cluster", "lab", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)


def daemon_seconds(state: Path) -> dict[str, float]:
    """CPU seconds (user + system) each daemon of the lab has used: {"device/daemon": seconds}."""
    pids = json.loads((state / "state.json").read_text())["pids"]
    tick = os.sysconf("SC_CLK_TCK")
    used = {}
    for role, (pid, _) in pids.items():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used[role] = (int(fields[11]) + int(fields[12])) / tick
    return used


def idle_cores(state: Path, seconds: float) -> tuple[float, float]:
    """(cores all switch daemons take, cores bfdd takes) over `seconds` of the lab doing nothing."""
    before, started = daemon_seconds(state), time.monotonic()
    time.sleep(seconds)
    after, elapsed = daemon_seconds(state), time.monotonic() - started
    spent = {role: after[role] - before[role] for role in after if role in before}
    hosts = {host["name"] for host in json.loads((state / "state.json").read_text())["plan"]["hosts"]}
    switches = sum(value for role, value in spent.items() if role.split("/")[0] not in hosts)
    bfdd = sum(value for role, value in spent.items() if role.endswith("/bfdd"))
    return switches / elapsed, bfdd / elapsed


def available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", action="append",
                        help="stacks to boot, STACK or STACK:SLICE (default dev, article-c:all, pods:groups=2)")
    parser.add_argument("--idle", type=float, default=30, help="seconds to measure the idle lab's CPU (default 30)")
    args = parser.parse_args()
    per_switch = []
    per_end = []
    print(f"{'stack':<16} {'switches':>8} {'hosts':>6} {'cables':>6} {'build s':>8} {'converge s':>10} "
          f"{'MB/switch':>9} {'cores/switch':>12} {'bfdd cores/session end':>22} {'check s':>8} {'per switch':>10} "
          f"{'silent loss s':>13} {'settled s':>9}")
    for given in args.stack or ["dev", "article-c:all", "pods:groups=2"]:
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
                cores, bfdd = idle_cores(state, args.idle)
                ends = summary["sizing"]["session_ends"]
                per_end.append((ends, bfdd / max(1, ends)))
                started = time.perf_counter()
                checked = lab(state, "check", stack, "--format", "json")
                check_s = time.perf_counter() - started
                failed = json.loads(lab(state, "fail", stack, "spine-001", "--mode", "silent",
                                        "--format", "json").stdout)
                mb = status["switch_memory_mb"] / summary["switches"]
                host_mb = status["host_memory_mb"] / max(1, summary["hosts"])
                per_switch.append((mb, host_mb, summary["hosts"] / summary["switches"]))
                print(f"{given:<16} {summary['switches']:>8} {summary['hosts']:>6} {summary['cables']:>6} "
                      f"{summary['build_s']:>8} {summary['converge_s']!s:>10} {mb:>9.1f} "
                      f"{cores / summary['switches']:>12.4f} {bfdd / max(1, ends):>22.5f} {check_s:>8.1f} "
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
    cores = len(os.sched_getaffinity(0))
    ends, cost = max(per_end)  # the stack with the most sessions: a small lab's few add a fixed cost per packet
    print(f"CPU: bfdd takes {cost:.5f} cores per BGP session end (BFD at 200 ms x 3) idle at {ends:,} session ends; "
          f"this machine's lab CPU share ({cores} cores x {CPU_SHARE:.0%}) holds about "
          f"{int(cores * CPU_SHARE / cost):,} session ends")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
