"""CLI verbs, one module each: `add_parser(verbs)` registers it, `run(args)` returns the exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from cluster.pipeline import Result, Valid
from cluster.report import notices, to_text

if TYPE_CHECKING:  # the writer is loaded by the verbs that write, not by `validate`
    from cluster.publish import Target


def refuse(result: Result, verb: str) -> int:
    """Print why a design that did not pass stops `verb` (to stderr) and return the exit code
    (1 or 2): a verb that writes files writes nothing for a failing design."""
    print(to_text(result), file=sys.stderr)
    print(f"{verb}: {result.stack} fails validation; nothing written", file=sys.stderr)
    return result.exit_code or 1


def tell(result: Valid, findings: bool = True) -> None:
    """Before a verb builds on a design: what `validate` would say that matters to it (findings,
    unless the verb shows them itself; re-sized networks), to stderr, so it never vanishes behind
    the verb's own output."""
    for line in notices(result, findings=findings):
        print(line, file=sys.stderr)


def out_target(verb: str, stack: str, raw: str) -> Target | None:
    """The checked `--out` tree of `verb`, or None after saying why it is refused (exit 2)."""
    from cluster import publish

    try:
        return publish.check(raw, verb, stack)
    except publish.OutputRefused as refused:
        print(f"{verb}: {refused}", file=sys.stderr)
        return None


def written(verb: str, shown: str, write: Callable[[], None]) -> int:
    """Run `write` (a publish of cluster.publish); the exit code and one line for what stopped it:
    0 written; 2 refused or not writable; 128 + N stopped by signal N."""
    from cluster import publish

    try:
        write()
    except publish.OutputRefused as refused:
        print(f"{verb}: {refused}", file=sys.stderr)
        return 2
    except publish.Interrupted as stopped:
        done = "after it was written in full" if stopped.published else "left as it was"
        print(f"{verb}: stopped by {stopped}; {shown} {done}", file=sys.stderr)
        return 128 + stopped.signum
    except OSError as error:
        print(f"{verb}: cannot write {shown}: {error.strerror or error}; choose another --out", file=sys.stderr)
        return 2
    return 0


def publish_tree(verb: str, stack: str, files: Mapping[str, str], where: Target) -> int:
    """Publish `files` at `where` (see `written` for the exit code; the old tree stays on failure)."""
    from cluster import publish

    def write() -> None:
        for warning in publish.publish_tree(files, where, verb, stack):
            print(f"{verb}: warning: {warning}", file=sys.stderr)

    return written(verb, where.shown, write)
