"""`validate STACK [--format text|json]`: every rule, every finding, exit 0 / 1 / 2."""

from __future__ import annotations

import argparse

from cluster.pipeline import validate
from cluster.report import to_json, to_text

FORMATS = {"text": to_text, "json": to_json}


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("validate", help="check a stack against every rule")
    parser.add_argument("stack", help="stack name (dev -> stacks/Pulumi.dev.yaml) or path")
    parser.add_argument("--format", choices=sorted(FORMATS), default="text")


def run(args: argparse.Namespace) -> int:
    result = validate(args.stack)
    print(FORMATS[args.format](result))
    return result.exit_code
