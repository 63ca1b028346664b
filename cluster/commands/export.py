"""`export STACK [--out DIR]`: validate, then write scheduler topology, node labels, Kueue objects,
NCCL env per pool, cabling plan and bill of materials (default build/exports/<stack>/).

Exit 0 written; 1 the design fails validation (nothing written); 2 unreadable input, SCHEMA
errors, or an output path that cannot be written.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from cluster.cli import VERBS
from cluster.commands import out_target, publish_tree, refuse, tell
from cluster.commands.progress import Progress, progress
from cluster.exports.files import export_files
from cluster.findings import printable
from cluster.pipeline import Valid, validate
from cluster.words import counted


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("export", help=VERBS["export"])
    parser.add_argument("stack", help="stack name (dev -> stacks/Pulumi.dev.yaml) or path")
    parser.add_argument("--out", default=None, help="output directory (default build/exports/<stack>/)")


def run(args: argparse.Namespace) -> int:
    with progress("export", args.stack) as stage:
        return _run(args, stage)


def _run(args: argparse.Namespace, stage: Progress) -> int:
    started = time.perf_counter()
    result = validate(args.stack, stage)
    if not isinstance(result, Valid) or not result.ok:
        return refuse(result, "export")
    tell(result)
    out = args.out if args.out is not None else str(Path("build") / "exports" / result.stack)
    where = out_target("export", result.stack, out)
    if where is None:
        return 2
    stage(f"scheduler topology, labels, cabling and bill of materials ({counted(result.spec.nodes, 'node')})")
    files = export_files(result.spec, result.topology)
    code = publish_tree("export", result.stack, files, where)
    if code:
        return code
    for path, text in files.items():
        print(f"  {printable(str(Path(out) / path))}  ({counted(text.count(chr(10)), 'line')})")
    print(f"export: {result.stack}: {counted(len(files), 'file')} in {where.shown} ({time.perf_counter() - started:.2f} s)")
    return 0
