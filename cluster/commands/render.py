"""`render STACK [--out DIR]`: validate, then write every on-prem artifact (default build/<stack>/).

Exit 0 written; 1 the design fails validation (nothing written); 2 unreadable input, SCHEMA
errors, a cloud target, or an output path that cannot be written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from cluster.artifacts import render_stream
from cluster.cli import VERBS
from cluster.commands import batched, out_target, publish_tree, refuse, tell
from cluster.commands.progress import Progress, progress
from cluster.pipeline import Valid, validate
from cluster.words import counted


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("render", help=VERBS["render"])
    parser.add_argument("stack", help="stack name (dev -> stacks/Pulumi.dev.yaml) or path")
    parser.add_argument("--out", default=None, help="output directory (default build/<stack>/)")


def run(args: argparse.Namespace) -> int:
    with progress("render", args.stack) as stage:
        return _run(args, stage)


def _run(args: argparse.Namespace, stage: Progress) -> int:
    started = time.perf_counter()
    result = validate(args.stack, stage)
    if not isinstance(result, Valid) or not result.ok:
        return refuse(result, "render")
    spec = result.spec
    if spec.is_cloud:
        print(f"render: {result.stack} targets {spec.target}; render writes on-prem artifacts only "
              "(set target: onprem, or use `plan` for cloud stacks)", file=sys.stderr)
        return 2
    tell(result)
    out = args.out if args.out is not None else str(Path("build") / result.stack)
    where = out_target("render", result.stack, out)
    if where is None:
        return 2
    files: list[str] = []  # written as they are rendered: the tree of 262,144 GPUs is 1.4 GB of text
    batches = batched(render_stream(spec, result.topology, stage=stage), files,
                      lambda count: stage(f"writing {counted(count, 'file')}"))
    code = publish_tree("render", result.stack, batches, where)
    if code:
        return code
    elapsed = time.perf_counter() - started
    switches = len({path.split("/")[1] for path in files if path.startswith("switches/") and path.count("/") == 2})
    # an InfiniBand fabric's switches get no file of their own: the subnet manager's fabric/ files configure them
    managed = len(result.topology.switch_nodes) - switches
    by_manager = f", {counted(managed, 'fabric switch')} set up by the subnet manager's fabric/ files" if managed else ""
    print(f"render: {result.stack}: {counted(len(files), 'file')} ({counted(switches, 'switch')}{by_manager}, "
          f"{counted(len(spec.pools), 'host pool')}) in {where.shown} ({elapsed:.2f} s)")
    return 0
