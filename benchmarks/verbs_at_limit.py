"""Every verb at the documented limit (262,144 GPUs, cluster/limits.py), CPU seconds and peak memory
beside the bound docs/guides/scale.md (Limits) states for it.

    python benchmarks/verbs_at_limit.py                     # every verb, both designs
    python benchmarks/verbs_at_limit.py --verbs render plan # some verbs
    python benchmarks/verbs_at_limit.py --designs pools     # one design

Two designs at the limit: `limit`, the benchmark design (benchmarks/designs.py) at 262,144 GPUs
(one pool of 32,768 nodes, three tiers), and `pools`, the same GPUs as 64 pools of 512 nodes.
Each verb runs as a user runs it (`python -m cluster VERB FILE ...`, a fresh interpreter, output
into a scratch folder); its CPU seconds (user + system) and peak resident memory are the child's
own (wait4's rusage), interpreter start included. A verb the limits refuse must refuse (exit 2,
its message) within the bound too. Exit 1 when any verb is over its bound or gives another exit
code than the one stated.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.designs import stack  # noqa: E402
from cluster.limits import MAX_GPUS  # noqa: E402

POOLS, POOL_NODES = 64, 512


def limit_design() -> dict[str, Any]:
    """The benchmark design at the GPU limit: one pool."""
    design = stack(MAX_GPUS)
    design["name"] = "limit"
    design["addressing"]["oob"] = "172.16.0.0/15"  # 12,364 switches: more than a /16's management half holds
    return design


def pools_design() -> dict[str, Any]:
    """The same GPUs as 64 pools of 512 nodes."""
    design = limit_design()
    design["name"] = "pools"
    pool = design["node_pools"][0]
    design["node_pools"] = [{**pool, "name": f"p{index:02d}", "nodes": POOL_NODES} for index in range(1, POOLS + 1)]
    assert sum(p["nodes"] for p in design["node_pools"]) * 8 == MAX_GPUS
    return design


DESIGNS = {"limit": limit_design, "pools": pools_design}


@dataclass(frozen=True)
class Verb:
    """One verb's command line ({stack}, {out} filled in), the exit code it must give at the limit,
    and its stated bound: CPU seconds and peak MB."""

    name: str
    argv: tuple[str, ...]
    expect: int
    cpu_s: float
    peak_mb: int


#: The bounds docs/guides/scale.md (Limits) states, measured on the 2-core reference machine
#: (the larger of the two designs, with a margin of about a quarter for a busy machine).
VERBS = (
    Verb("validate", ("validate", "{stack}"), 0, 10, 1_200),
    Verb("render", ("render", "{stack}", "--out", "{out}/render"), 0, 100, 2_400),
    Verb("export", ("export", "{stack}", "--out", "{out}/export"), 0, 35, 2_300),
    Verb("plan", ("plan", "{stack}", "--artifacts-dir", "{out}/plan"), 0, 170, 4_600),
    Verb("report", ("report", "{stack}", "--out", "{out}/report.html"), 0, 20, 1_600),
    Verb("estimate", ("estimate", "{stack}"), 0, 10, 1_200),
    # refused: a lab takes at most cluster.limits.MAX_LAB_DEVICES devices
    Verb("lab export", ("lab", "export", "{stack}", "--out", "{out}/lab"), 2, 15, 1_200),
)


@dataclass(frozen=True)
class Measured:
    code: int
    cpu_s: float
    peak_mb: float
    tail: str


def run(argv: list[str], cwd: Path) -> Measured:
    """One fresh interpreter running `argv`, with its own CPU seconds and peak memory."""
    with tempfile.TemporaryFile() as output:
        child = subprocess.Popen([sys.executable, "-m", "cluster", *argv], cwd=ROOT, stdout=output,
                                 stderr=subprocess.STDOUT, env={**os.environ, "PYTHONHASHSEED": "0"})
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read().decode(errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    return Measured(child.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, " | ".join(lines[-2:])[:160])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbs", nargs="*", default=[verb.name for verb in VERBS])
    parser.add_argument("--designs", nargs="*", default=list(DESIGNS), choices=list(DESIGNS))
    args = parser.parse_args()
    over = 0
    print(f"{'design':7} {'verb':11} {'exit':>4} {'CPU s':>7} {'bound':>6} {'peak MB':>8} {'bound':>6}  verdict")
    with tempfile.TemporaryDirectory(prefix="verbs-at-limit-") as folder:
        scratch = Path(folder)
        for design in args.designs:
            path = scratch / f"Pulumi.{design}.yaml"
            path.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": DESIGNS[design]()}}, sort_keys=False))
            for verb in VERBS:
                if verb.name not in args.verbs:
                    continue
                out = scratch / design
                argv = [part.replace("{stack}", str(path)).replace("{out}", str(out)) for part in verb.argv]
                got = run(argv, scratch)
                ok = got.code == verb.expect and got.cpu_s <= verb.cpu_s and got.peak_mb <= verb.peak_mb
                over += not ok
                verdict = "ok" if ok else f"OVER (exit {got.code}, expected {verb.expect})"
                print(f"{design:7} {verb.name:11} {got.code:>4} {got.cpu_s:7.1f} {verb.cpu_s:6g} {got.peak_mb:8.0f} "
                      f"{verb.peak_mb:6}  {verdict}", flush=True)
                if not ok:
                    print(f"        {got.tail}", flush=True)
                subprocess.run(["rm", "-rf", str(out)], check=False)
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
