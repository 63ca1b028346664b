"""`python -m cluster VERB STACK ...`: one module per verb under cluster/commands/."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

# Verb modules, in help order. Each has add_parser(verbs) and run(args) -> exit code.
VERBS = [
    "validate",
    "render",
    "plan",
    "verify",
    "export",
    "report",
    "estimate",
    "whatif",
]


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with a message, never a traceback."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def parser() -> argparse.ArgumentParser:
    root = _Parser(prog="python -m cluster", description="Validate, render and plan GPU cluster designs.")
    verbs = root.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    for verb in VERBS:
        importlib.import_module(f"cluster.commands.{verb}").add_parser(verbs)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    module = importlib.import_module(f"cluster.commands.{args.verb.replace('-', '_')}")
    try:
        code: int = module.run(args)
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
