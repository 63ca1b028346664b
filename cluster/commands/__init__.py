"""CLI verbs, one module each: `add_parser(verbs)` registers it, `run(args)` returns the exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from cluster.findings import printable
from cluster.pipeline import Result, Valid
from cluster.report import notices, to_text

#: Text a streaming verb holds before it writes (render at 262,144 GPUs renders 1.3 GB of configs).
BATCH_BYTES = 32 * 1024 * 1024

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
    except OSError as error:  # a file where a folder of the path should be, a name too long
        print(printable(f"{verb}: cannot write {raw}: {error.strerror or error}; nothing written; choose another --out"),
              file=sys.stderr)
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


def publish_tree(verb: str, stack: str, files: Mapping[str, str] | Iterable[Mapping[str, str]], where: Target) -> int:
    """Publish `files` at `where`, or the batches of files an iterable makes, written as they come
    (see `written` for the exit code; the old tree stays on failure, and so does it when making a
    batch fails)."""
    from cluster import publish

    def write() -> None:
        warnings = (publish.publish_tree(files, where, verb, stack) if isinstance(files, Mapping)
                    else publish.publish_batches(files, where, verb, stack))
        for warning in warnings:
            print(f"{verb}: warning: {warning}", file=sys.stderr)

    return written(verb, where.shown, write)


def batched(files: Iterable[tuple[str, str]], names: list[str], last: Callable[[int], None],
            limit_bytes: int | None = None) -> Iterator[dict[str, str]]:
    """The (path, text) pairs of a renderer as batches of about `limit_bytes` of text, each path
    also appended to `names`; `last(count of files)` is called before the last batch is handed on."""
    limit = BATCH_BYTES if limit_bytes is None else limit_bytes
    batch: dict[str, str] = {}
    size = 0
    for path, text in files:
        batch[path] = text
        names.append(path)
        size += len(text)
        if size >= limit:
            yield batch
            batch, size = {}, 0
    last(len(names))
    yield batch
