"""Start-up: wall time of `python -m cluster validate` on a 1,024-GPU stack file, interpreter start
included (target 0.6 s on a 2-core machine), and where the import time goes.

    python benchmarks/startup.py [--repeat 7]

Prints the best and median of the runs and the ten slowest imports of one run (python -X
importtime). Timing lives here, never in tests.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.designs import stack  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "Pulumi.bench-1024.yaml"
        path.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": stack(1024)}}, sort_keys=False))
        command = [sys.executable, "-m", "cluster", "validate", str(path)]
        times = []
        for _ in range(args.repeat):
            mark = time.perf_counter()
            done = subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
            times.append(time.perf_counter() - mark)
            if done.returncode not in (0, 1):
                print(done.stderr.decode()[-2000:], file=sys.stderr)
                return 1
        profile = subprocess.run([sys.executable, "-X", "importtime", *command[1:]], cwd=ROOT, capture_output=True,
                                 text=True, check=False).stderr
    print(f"validate, 1,024 GPUs, from a file: best {min(times):.2f} s, median {statistics.median(times):.2f} s "
          f"over {args.repeat} runs (target 0.6 s)")
    rows = []
    for line in profile.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    print("slowest imports (cumulative ms):")
    for micros, name in sorted(rows, reverse=True)[:10]:
        print(f"  {micros / 1000:7.1f}  {name.strip()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
