"""`import` at 8,192 / 32,768 / 131,072 GPUs: the benchmark designs' neighbor files -> a stack file.

    python benchmarks/import_scale.py                 # all three sizes, one fresh process each
    python benchmarks/import_scale.py --sizes 131072  # one size

Each size writes what every device of the design reports (tests/neighbor_reports.py: one
`lldpctl -f json` per device, storage, management and out-of-band networks included) to a
temporary folder, in a process of its own (Linux keeps a process's peak memory across exec, so a
measuring process started by the writer would count the writer's), then times in a fresh process
started by this small one the two halves of `import`: reading the files
(the parsers `verify` uses, one link per cabled port pair) and the import itself (infer the
design, build it, compare it with the same data as `verify` does). Wall and CPU seconds, and the
peak memory of the process, beside the bound stated for the size (BOUNDS: the read and the
import together). The round trip is asserted: exit 0, no CABLE-* finding. Exit 1 when a size is
over its bound.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.designs import stack  # noqa: E402

SIZES = (8_192, 32_768, 131_072)
#: GPUs -> (CPU seconds of the read and the import together, peak MB): measured twice on the
#: 2-core reference machine, busy with other work (0.4 and 0.4 s, 2.5 and 2.5 s, 11.0 and 11.1 s;
#: 113, 323, 1,081 MB), with a margin of about a quarter for a busier one (the code before
#: measured 21 to 27 s at 131,072 GPUs on one day).
BOUNDS = {8_192: (0.6, 150), 32_768: (3.2, 410), 131_072: (14.0, 1_400)}


def write_reports(gpus: int, folder: Path) -> dict[str, Any]:
    from cluster.pipeline import Valid, validate_mapping
    from tests.neighbor_reports import reports

    result = validate_mapping("bench", stack(gpus))
    assert isinstance(result, Valid)
    files, _ = reports(result.spec, result.topology, None)
    for device, text in files.items():
        (folder / f"{device}.json").write_text(text)
    return {"devices": len(files), "megabytes": round(sum(len(text) for text in files.values()) / 1e6, 1)}


def measure(folder: Path) -> dict[str, Any]:
    """Read and import one folder in this process."""
    from cluster.importer.infer import Options
    from cluster.importer.observe import observe
    from cluster.importer.run import import_design

    wall, cpu = time.perf_counter(), time.process_time()
    observed = observe(folder, None, None)
    read_wall, read_cpu = time.perf_counter() - wall, time.process_time() - cpu
    wall, cpu = time.perf_counter(), time.process_time()
    done = import_design(observed, Options(name="bench"), str(folder))
    import_wall, import_cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert done.exit_code == 0 and not done.cable_findings, [finding.message for finding in done.cable_findings[:5]]
    return {"links": len(observed.links), "read_s": round(read_wall, 1), "read_cpu_s": round(read_cpu, 1),
            "import_s": round(import_wall, 1), "import_cpu_s": round(import_cpu, 1),
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), choices=SIZES)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # a child: measure this folder
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)  # a child: write the reports here
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(measure(args.one)))
        return 0
    if args.write is not None:
        print(json.dumps(write_reports(args.sizes[0], args.write)))
        return 0
    print("| GPUs | devices | MB of JSON | links | read (s, CPU s) | import (s, CPU s) | peak MB | bound (CPU s, MB) |")
    print("|---|---|---|---|---|---|---|---|")
    over = 0
    for gpus in args.sizes:
        with tempfile.TemporaryDirectory() as folder:
            writer = subprocess.run([sys.executable, __file__, "--sizes", str(gpus), "--write", folder],
                                    capture_output=True, text=True, check=True)
            written = json.loads(writer.stdout.splitlines()[-1])
            child = subprocess.run([sys.executable, __file__, "--one", folder], capture_output=True, text=True,
                                   check=True)
            row = json.loads(child.stdout.splitlines()[-1])
            cpu_s, peak_mb = BOUNDS[gpus]
            ok = row["read_cpu_s"] + row["import_cpu_s"] <= cpu_s and row["peak_mb"] <= peak_mb
            over += not ok
            print(f"| {gpus:,} | {written['devices']:,} | {written['megabytes']} | {row['links']:,} | "
                  f"{row['read_s']} ({row['read_cpu_s']}) | {row['import_s']} ({row['import_cpu_s']}) | "
                  f"{row['peak_mb']:,} | {cpu_s:g}, {peak_mb:,}{'' if ok else ' OVER'} |", flush=True)
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
