"""`python -m cluster plan` of the AWS example stack at 16 and at 1,024 nodes.

    python benchmarks/plan_cloud.py

Prints wall seconds and the resource count for each: cloud resources are groups (placement
group, launch template, auto scaling group), not instances, so the count must not grow with
`nodes`. Each plan runs in a fresh interpreter, as a user runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
STACK = ROOT / "stacks" / "Pulumi.aws-p5e.yaml"


def plan(nodes: int) -> tuple[float, Any]:
    """(wall seconds, the plan's JSON) of the example stack with `nodes` nodes in its pool."""
    document = yaml.safe_load(STACK.read_text())
    document["config"]["gpu-cluster:cluster"]["node_pools"][0]["nodes"] = nodes
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"Pulumi.aws-{nodes}.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "cluster", "plan", str(path), "--format", "json"],
                              cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"plan failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout)


def count(data: Any) -> int:
    """Resources registered, as the plan's JSON counts them."""
    return int(data["counts"]["resources"])


def main() -> int:
    rows = []
    for nodes in (16, 1_024):
        seconds, data = plan(nodes)
        rows.append((nodes, seconds, count(data)))
        print(f"plan aws p5e.48xlarge x {nodes:>5,} nodes: {seconds:.2f} s, {rows[-1][2]} resources")
    if rows[0][2] != rows[1][2]:
        print("resource count grows with nodes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
