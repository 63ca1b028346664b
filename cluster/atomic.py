"""Writing one file so that a reader never sees half of it: the text goes to a temporary file
beside the target, gets its mode, and replaces the target in one rename. Every single-file write
of the tool goes through here (a published file, the lab's state, a file `pulumi up` writes)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str, mode: int = 0o644, prefix: str | None = None) -> None:
    """Replace `path` with `text` (UTF-8, newlines as given) in one rename; the temporary file,
    named `prefix` + random (default `.<name>.`), is removed if anything fails."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=prefix if prefix is not None else f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.chmod(temporary, mode)  # mkstemp's 0600 would leave scripts unrunnable and files unreadable
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
