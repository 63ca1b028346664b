"""Write a rendered tree so that DIR is either the old tree or the whole new one, never half."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_tree(files: dict[str, str], out: Path) -> None:
    """Write `files` into a temporary sibling of `out`, then swap it into place."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for relative in sorted(files):
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[relative], encoding="utf-8")
            if target.suffix == ".sh":
                target.chmod(0o755)
        staging.chmod(0o755)
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            os.rename(out, old / "tree")
        os.rename(staging, out)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
