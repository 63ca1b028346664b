"""Where a finding sits: the stack file (as CI tools want it named) and the line of its key."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from cluster.pipeline import Result


def display_path(source: Path) -> str:
    """The stack file relative to the working directory (a CI checkout's root) when it is inside
    it, else absolute; always with forward slashes."""
    absolute = source.resolve()
    try:
        return absolute.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return absolute.as_posix()


def artifact_uri(source: Path) -> str:
    """A SARIF artifact URI: relative and percent-encoded when possible, else a file: URI."""
    shown = display_path(source)
    if shown.startswith("/"):
        return source.resolve().as_uri()
    return quote(shown, safe="/")


def line_of(result: Result, path: str) -> int:
    """The 1-based line of the key at config `path` in the stack file, or 0 when there is no file line."""
    if result.loaded.source is None or not result.loaded.source.is_file():
        return 0
    return result.loaded.line_of(path)
