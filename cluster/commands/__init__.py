"""CLI verbs, one module each: `add_parser(verbs)` registers it, `run(args)` returns the exit code."""

from __future__ import annotations

import sys

from cluster.pipeline import Result
from cluster.report import to_text


def refusal(result: Result, verb: str) -> int | None:
    """None when the design passed; else print why to stderr and return the exit code (1 or 2):
    a verb that writes files writes nothing for a failing design."""
    if result.ok and result.spec is not None and result.topology is not None:
        return None
    print(to_text(result), file=sys.stderr)
    print(f"{verb}: {result.stack} fails validation; nothing written", file=sys.stderr)
    return result.exit_code or 1
