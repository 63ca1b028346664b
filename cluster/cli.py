"""`python -m cluster VERB STACK ...`: one module per verb under cluster/commands/."""

from __future__ import annotations

import argparse
import contextlib
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
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        _drop_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except OSError as error:
        # Each verb reports its own input and --out errors; one without a file name is the output
        # itself (`validate > /dev/full`, a closed terminal).
        if error.filename is None:
            _drop_stdout()
            print(f"{args.verb}: cannot write the output: {error.strerror or error}", file=sys.stderr)
        else:
            print(f"{args.verb}: cannot use {error.filename}: {error.strerror or error}", file=sys.stderr)
        return 2
    except Exception as error:  # a defect of ours: say so in one line, never a traceback
        if os.environ.get("GPU_CLUSTER_DEBUG"):
            raise
        print(f"{args.verb}: internal error ({type(error).__name__}: {str(error)[:300]}); this is a defect of "
              "gpu-cluster, please report it with the stack file (GPU_CLUSTER_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 2
    return code


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail again at exit."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    raise SystemExit(main())
