"""A Python dynamic provider that owns rendered files under one directory.

One resource holds a bundle {relative path: content} (one switch, one pool's host files);
`pulumi preview` diffs it on content hashes, so it shows exactly which switch configs or host
scripts would change, and `pulumi refresh` re-hashes the files on disk, so a hand edit shows
up as drift that the next `pulumi up` overwrites.

State size: the provider class lives in this importable module and holds no data, so dill
pickles it by reference (60 bytes, base64 80, per resource); content is stored once, zlib
compressed (a 16,384-GPU fabric's 36 MB of rendered configs take 4.4 MB of state).
"""

from __future__ import annotations

import base64
import hashlib
import os
import zlib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult

from cluster.atomic import write_atomic


def sha256(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def pack(content: str) -> str:
    """Content as stored in state: zlib + base64 (rendered configs shrink about tenfold)."""
    return base64.b64encode(zlib.compress(content.encode("utf-8"), 9)).decode("ascii")


def unpack(stored: str) -> str:
    return zlib.decompress(base64.b64decode(stored)).decode("utf-8")


def safe_relative(path: str) -> str:
    """`path` if it stays inside the directory; raises ValueError otherwise."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or "\\" in path:
        raise ValueError(f"artifact path {path!r} must be relative and stay inside the artifacts directory")
    return str(pure)


def mode(relative: str) -> int:
    """The file mode `python -m cluster render` gives a file: scripts (`.sh`) executable, the rest
    readable by all (the tree is byte- and mode-identical to render's under the usual umask 022)."""
    return 0o755 if PurePosixPath(relative).suffix == ".sh" else 0o644


def _write(directory: Path, relative: str, content: str) -> None:
    """Write one file from its packed `content`."""
    target = directory / safe_relative(relative)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, unpack(content), mode(relative))  # a reader never sees half a config


def _refuse_foreign(directory: Path, relative: str, content: str) -> None:
    """A first write never replaces a file gpu-cluster did not write (one with other content, or
    anything that is not a regular file): `pulumi up` stops with the path instead."""
    target = directory / safe_relative(relative)
    if not os.path.lexists(target):
        return
    if target.is_symlink() or not target.is_file() or sha256(target.read_text(encoding="utf-8", errors="replace")) \
            != sha256(unpack(content)):
        raise RuntimeError(f"{target} exists and was not written by gpu-cluster: move it away or choose another "
                           "gpu-cluster:artifacts_dir; nothing was replaced")


def _remove(directory: Path, relative: str, written: str | None = None) -> None:
    """Remove a file of the bundle, only while it holds what was written (`written`: its hash):
    a file someone changed since is left in place."""
    target = directory / safe_relative(relative)
    if written and target.is_file() and not target.is_symlink() \
            and sha256(target.read_text(encoding="utf-8", errors="replace")) != written:
        return
    target.unlink(missing_ok=True)
    # Drop directories the bundle emptied, never the artifacts directory itself.
    parent = target.parent
    while parent != directory and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


class FilesProvider(ResourceProvider):
    """create/update/delete write, replace or remove files; diff compares content hashes."""

    serialize_as_secret_always = False  # nothing secret in here; keeps state readable

    def create(self, props: dict[str, Any]) -> CreateResult:
        directory = Path(props["directory"])
        files: dict[str, str] = props["files"]
        for relative in sorted(files):
            _refuse_foreign(directory, relative, files[relative])
        for relative in sorted(files):
            _write(directory, relative, files[relative])
        return CreateResult(id_=f"{props['directory']}:{props['bundle']}", outs=_outs(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        replaces = [key for key in ("directory", "bundle") if olds.get(key) != news.get(key)]
        changed = replaces or olds.get("hashes") != news.get("hashes")
        return DiffResult(changes=bool(changed), replaces=replaces, delete_before_replace=False)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """`pulumi refresh`: the hashes of the files as they are on disk ("" when missing)."""
        directory = Path(props["directory"])
        on_disk = {}
        for relative in sorted(props.get("hashes") or {}):
            target = directory / safe_relative(relative)
            on_disk[relative] = sha256(target.read_text(encoding="utf-8")) if target.is_file() else ""
        return ReadResult(id_, {**props, "hashes": on_disk})

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        directory = Path(news["directory"])
        old_hashes: dict[str, str] = olds.get("hashes") or {}
        files: dict[str, str] = news["files"]
        for relative in sorted(set(files) - set(old_hashes)):  # new to the bundle: a first write
            _refuse_foreign(directory, relative, files[relative])
        for relative in sorted(files):
            if old_hashes.get(relative) != news["hashes"][relative] or not (directory / relative).is_file():
                _write(directory, relative, files[relative])
        for relative in sorted(set(old_hashes) - set(files)):
            _remove(directory, relative, old_hashes[relative])
        return UpdateResult(outs=_outs(news))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        directory = Path(props["directory"])
        hashes: dict[str, str] = props.get("hashes") or {}
        for relative in sorted(hashes):
            _remove(directory, relative, hashes[relative])


def _outs(props: Mapping[str, Any]) -> dict[str, Any]:
    # Content is already stored once (packed) as an input; outputs carry only hashes.
    return {"directory": props["directory"], "bundle": props["bundle"], "hashes": dict(props["hashes"])}


def bundle_inputs(directory: str, bundle: str, files: Mapping[str, str]) -> dict[str, Any]:
    """The resource inputs for one bundle: paths checked, content hashed."""
    checked = {safe_relative(path): files[path] for path in sorted(files)}
    return {
        "directory": directory,
        "bundle": bundle,
        "files": {path: pack(content) for path, content in checked.items()},
        "hashes": {path: sha256(content) for path, content in checked.items()},
    }


class RenderedFiles(Resource, module="gpu-cluster", name="RenderedFiles"):
    """Rendered files (one bundle) written under `directory` by FilesProvider."""

    directory: pulumi.Output[str]
    hashes: pulumi.Output[dict[str, str]]

    def __init__(self, name: str, directory: str, files: Mapping[str, str],
                 opts: pulumi.ResourceOptions | None = None, gate: pulumi.Output[str] | None = None) -> None:
        inputs: dict[str, Any] = bundle_inputs(directory, name, files)
        if gate is not None:  # a pod part's core check: no write unless it resolves (diff ignores it)
            inputs["design"] = gate
        super().__init__(FilesProvider(), name, inputs, opts)
