"""`report STACK [--out FILE]`: one self-contained HTML file (default build/<stack>-report.html).

Written for failing designs too, so the findings can be read in context. Exit 0 written and the
design passes; 1 written but the design fails validation; 2 unreadable input or SCHEMA errors
(nothing written), or a path that cannot be written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from cluster import publish
from cluster.cli import VERBS
from cluster.commands import tell, written
from cluster.commands.progress import Progress, progress
from cluster.findings import printable
from cluster.pipeline import Valid, validate
from cluster.report import to_text
from cluster.report_html.page import render_report
from cluster.words import counted


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("report", help=VERBS["report"])
    parser.add_argument("stack", help="stack name (dev -> stacks/Pulumi.dev.yaml) or path")
    parser.add_argument("--out", default=None, help="output file (default build/<stack>-report.html)")


def run(args: argparse.Namespace) -> int:
    with progress("report", args.stack) as stage:
        return _run(args, stage)


def _run(args: argparse.Namespace, stage: Progress) -> int:
    started = time.perf_counter()
    result = validate(args.stack, stage)
    if not isinstance(result, Valid) or result.schema_failed:
        print(to_text(result), file=sys.stderr)
        print(f"report: {result.stack} cannot be read as a design; nothing written", file=sys.stderr)
        return 2
    tell(result)
    out = args.out if args.out is not None else str(Path("build") / f"{result.stack}-report.html")
    html: list[str] = []

    def write() -> None:  # the path is checked before the report is rendered
        where = publish.check_file(out)
        stage(f"the report: summary, diagram, estimates, bill of materials ({counted(result.spec.gpus, 'GPU')})")
        html.append(render_report(result))
        publish.publish_file(where, html[0])

    code = written("report", printable(out), write)  # renamed into place last: never half a file
    if code:
        return code
    verdict = "passes" if result.ok else "FAILS validation (see the findings in the report)"
    print(f"report: {result.stack}: {printable(out)} ({len(html[0]) / 1024:.0f} KiB, {time.perf_counter() - started:.2f} s); "
          f"the design {verdict}")
    return result.exit_code
