"""`python -m cluster`: validate (and, as they land, render, plan, ...) stack files."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from cluster.pipeline import validate
from cluster.report import to_json, to_text


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def parser() -> argparse.ArgumentParser:
    root = _Parser(prog="python -m cluster", description="Validate GPU cluster designs from Pulumi stack files.")
    verbs = root.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    check = verbs.add_parser("validate", help="check a stack against every rule")
    check.add_argument("stack", help="stack name (dev -> stacks/Pulumi.dev.yaml) or path")
    check.add_argument("--format", choices=("text", "json"), default="text")
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.verb == "validate":
        result = validate(args.stack)
        print(to_json(result) if args.format == "json" else to_text(result))
        return result.exit_code
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
