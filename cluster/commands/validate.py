"""`validate STACK [--format text|json|sarif|github]`: every rule, every finding, exit 0 / 1 / 2."""

from __future__ import annotations

import argparse

from cluster.cli import VERBS
from cluster.commands.progress import progress
from cluster.formats.github import to_github
from cluster.formats.sarif import to_sarif
from cluster.pipeline import validate
from cluster.report import to_json, to_text

FORMATS = {"text": to_text, "json": to_json, "sarif": to_sarif, "github": to_github}


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("validate", help=VERBS["validate"])
    parser.add_argument("stack", help="stack name (dev -> stacks/Pulumi.dev.yaml) or path")
    parser.add_argument(
        "--format", choices=sorted(FORMATS), default="text",
        help="text for people; json; sarif (2.1.0, for code scanning); github (Actions annotations)",
    )


def run(args: argparse.Namespace) -> int:
    with progress("validate", args.stack) as stage:
        result = validate(args.stack, stage)
        stage("the report")
        text = FORMATS[args.format](result)
    print(text)
    return result.exit_code
