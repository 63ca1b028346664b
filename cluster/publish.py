"""Publishing what gpu-cluster writes, so that it never replaces anything it did not write.

A tree (`render`, `export`) is written into a hidden sibling of its path, then swapped in with
one atomic exchange of the two directories (Linux `renameat2(RENAME_EXCHANGE)`, macOS
`renamex_np(RENAME_SWAP)`): at every instant the path holds the old tree or the whole new one.
Every tree carries a marker file (`.gpu-cluster-tree.json`) naming the verb, the stack and every
file written; only such a tree, holding nothing but those files, is ever replaced, and only
the files it lists are ever deleted. Anything else at the path (a file, a device, a symbolic
link, a directory of other files, `/`, the working directory or one of its ancestors, an empty
path) is refused with a message that says what is there and what to do.

Runs that publish to one path are serialized by a lock file beside it (`flock`, released by the
kernel when a process dies, so a crashed run never leaves it held). Staging trees that a killed
run left behind are removed by the next run into the same path. SIGTERM and SIGHUP during a
publish remove the staging tree and leave the old output in place.

One file (`report`) is written beside its path and renamed over it, and only over an empty
file or one the tool wrote (its first bytes carry the tool's mark).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from cluster.atomic import write_atomic
from cluster.findings import printable
from cluster.inputs import Unreadable, kind_of, read_bounded

MARKER = ".gpu-cluster-tree.json"
TOOL = "gpu-cluster"
#: The mark a file the tool writes carries in its first bytes (the report's generator meta tag).
FILE_MARK = 'name="generator" content="gpu-cluster'
MAX_MARKER_BYTES = 64 * 1024 * 1024
LOCK_WAIT_SECONDS = 600.0
_EXTRAS_SHOWN = 5


class OutputRefused(Exception):
    """The output path holds something gpu-cluster did not write, or cannot be written safely.
    The message says what is there and what to do, on one line: a path or a file name in it (the
    user's --out, names found in the tree) is shown escaped, so it cannot forge an output line."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


class Interrupted(BaseException):
    """A signal asked the process to stop while it was publishing."""

    def __init__(self, signum: int, published: bool = False) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.published = published  # the new output was already in place


def _no_step(_what: str) -> None:
    return None


#: Called between the steps of a publish (tests replace it to stop a process at each step).
step: Callable[[str], None] = _no_step


# --------------------------------------------------------------------------- the path itself


@dataclass(frozen=True)
class Target:
    """An output path that passed the checks: `path` (parent resolved, last part as given)."""

    path: Path
    shown: str  # as the user typed it, for messages

    @property
    def parent(self) -> Path:
        return self.path.parent

    def sibling(self, role: str) -> str:
        return f".{self.path.name}.{TOOL}.{role}"


def target(raw: str, option: str = "--out") -> Target:
    """The output path `raw` as a Target; raises OutputRefused for a path that can never be one.
    `shown` is `raw` escaped: it is printed, and may hold a newline or a terminal escape."""
    if raw.strip() == "":
        raise OutputRefused(f"{option} is empty (an unset shell variable?): give the directory to write, "
                            f"e.g. {option} build/mystack")
    stripped = raw.rstrip("/") or "/"
    head, name = os.path.split(stripped)
    # `x/..` and `.` name a directory through the kernel's view of the path, links included.
    path = Path(os.path.realpath(stripped)) if name in ("", ".", "..") else Path(os.path.realpath(head or ".")) / name
    if path == Path(path.anchor):
        raise OutputRefused(f"{option} {raw} is the root directory /: give a directory of its own, e.g. {option} build/mystack")
    here = Path(os.path.realpath(os.getcwd()))
    if here == path or path in here.parents:
        what = "the working directory" if here == path else f"an ancestor of the working directory ({here})"
        raise OutputRefused(f"{option} {raw} is {what}: replacing it would delete everything in it; "
                            f"give a directory of its own, e.g. {option} build/mystack")
    return Target(path, printable(raw))


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


# --------------------------------------------------------------------------- trees and their markers


@dataclass(frozen=True)
class Manifest:
    """What a marker says: who wrote the tree and which files."""

    verb: str
    stack: str
    files: tuple[str, ...]

    def text(self) -> str:
        return json.dumps({"written_by": TOOL, "verb": self.verb, "stack": self.stack, "files": list(self.files)},
                          indent=1) + "\n"


def _safe_name(name: str) -> bool:
    parts = Path(name).parts
    return bool(name) and not Path(name).is_absolute() and ".." not in parts and "." not in name.split("/") \
        and name == str(Path(name)) and name not in (MARKER, MARKER + ".part")


def read_manifest(tree: Path) -> Manifest | None:
    """The tree's marker, or None when it has none that gpu-cluster wrote (or one that names a
    file outside the tree, which gpu-cluster never writes). Anyone can write a marker: it is read
    as hostile input (bounded, nesting included)."""
    marker = tree / MARKER
    info = _lstat(marker)
    if info is None or not stat.S_ISREG(info.st_mode):
        return None
    try:
        raw = read_bounded(marker, MAX_MARKER_BYTES, "tree marker")
        data = json.loads(raw) if len(raw) <= MAX_MARKER_BYTES else None
    except (Unreadable, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("written_by") != TOOL:
        return None
    files, verb, stack = data.get("files"), data.get("verb"), data.get("stack")
    if not (isinstance(files, list) and all(isinstance(f, str) and _safe_name(f) for f in files)
            and isinstance(verb, str) and isinstance(stack, str)):
        return None
    return Manifest(verb, stack, tuple(files))


def _entries(tree: Path) -> Iterator[tuple[str, bool]]:
    """(relative path, is a real directory) of everything under `tree`, never following links."""
    for folder, dirs, names in os.walk(tree, followlinks=False):
        base = Path(folder).relative_to(tree)
        for name in dirs:
            yield str(base / name), not (Path(folder) / name).is_symlink()
        for name in names:
            yield str(base / name), False


def _foreign(tree: Path, manifest: Manifest) -> list[str]:
    """What is in `tree` that its marker does not list (sorted): files it does not name, folders
    no listed file is in, and anything that stands where a listed folder should be."""
    listed = set(manifest.files) | {MARKER}
    folders = {str(parent) for name in manifest.files for parent in Path(name).parents if str(parent) != "."}
    return sorted(name for name, is_dir in _entries(tree)
                  if (name not in folders if is_dir else name not in listed))


def _inside(tree: Path, name: str) -> bool:
    """True when every folder on the way from `tree` to `name` is a real directory (no link
    could lead a deletion out of the tree)."""
    path = tree
    for part in Path(name).parts[:-1]:
        path = path / part
        info = _lstat(path)
        if info is None or not stat.S_ISDIR(info.st_mode):
            return False
    return True


def _check_replaceable(where: Target, verb: str, stack: str) -> None:
    info = _lstat(where.path)
    if info is None:
        return
    if not stat.S_ISDIR(info.st_mode):
        extra = f" of {info.st_size:,} bytes" if stat.S_ISREG(info.st_mode) else ""
        if stat.S_ISLNK(info.st_mode):
            extra = f" (to {os.readlink(where.path)})"
        raise OutputRefused(f"{where.shown} is {kind_of(info.st_mode)}{extra}, not a directory gpu-cluster wrote: "
                            "nothing was written; remove it yourself or choose another --out")
    with os.scandir(where.path) as entries:
        if next(entries, None) is None:
            return
    manifest = read_manifest(where.path)
    if manifest is None:
        why = (f"its {MARKER} is not one gpu-cluster writes" if os.path.lexists(where.path / MARKER)
               else f"it has no {MARKER}")
        raise OutputRefused(f"{where.shown} is a directory that gpu-cluster did not write ({why}): "
                            "nothing was written; choose another --out, e.g. a new directory, or empty it yourself")
    if (manifest.verb, manifest.stack) != (verb, stack):
        raise OutputRefused(f"{where.shown} holds the {manifest.verb} output of stack {manifest.stack}, not of "
                            f"{verb} {stack}: nothing was written; choose another --out")
    foreign = _foreign(where.path, manifest)
    if foreign:
        shown = ", ".join(foreign[:_EXTRAS_SHOWN]) + (f" and {len(foreign) - _EXTRAS_SHOWN} more"
                                                       if len(foreign) > _EXTRAS_SHOWN else "")
        raise OutputRefused(f"{where.shown} holds {len(foreign)} file(s) gpu-cluster did not write ({shown}): "
                            "nothing was written; move them out of the tree, or choose another --out")


def remove_owned(tree: Path, manifest: Manifest | None) -> list[str]:
    """Delete from `tree` only the files its manifest lists, the marker and the folders left empty;
    return what stays (nothing, unless someone put files there)."""
    for name in sorted(manifest.files if manifest else (), reverse=True):
        path = tree / name
        info = _lstat(path) if _inside(tree, name) else None
        if info is not None and not stat.S_ISDIR(info.st_mode):
            path.unlink()
            step(f"removed {name}")
    for name in (MARKER, MARKER + ".part"):
        (tree / name).unlink(missing_ok=True)
    for folder, _dirs, _names in sorted(os.walk(tree, followlinks=False), key=lambda entry: -len(entry[0])):
        with contextlib.suppress(OSError):
            os.rmdir(folder)
    return [] if not os.path.lexists(tree) else sorted(name for name, _ in _entries(tree))


# --------------------------------------------------------------------------- atomic swaps


_RENAME_NOREPLACE, _RENAME_EXCHANGE, _AT_FDCWD = 1, 2, -100
_SWAP_MACOS, _EXCL_MACOS = 0x2, 0x4


def _rename_flags(source: Path, destination: Path, linux_flag: int, macos_flag: int) -> bool:
    """rename with a flag; False where the system or the file system has no such rename."""
    libc = ctypes.CDLL(None, use_errno=True)
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        result = libc.renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination), linux_flag)
    elif sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        result = libc.renamex_np(os.fsencode(source), os.fsencode(destination), macos_flag)
    else:
        return False
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(destination))


def exchange(staging: Path, path: Path) -> bool:
    """Swap two directories atomically; False when this system cannot."""
    return _rename_flags(staging, path, _RENAME_EXCHANGE, _SWAP_MACOS)


def _place_new(staging: Path, path: Path) -> None:
    """Move `staging` to `path`, which does not exist; never over something that appeared meanwhile."""
    if not _rename_flags(staging, path, _RENAME_NOREPLACE, _EXCL_MACOS):
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, "appeared while writing", str(path))
        os.rename(staging, path)


# --------------------------------------------------------------------------- lock and leftovers


@contextlib.contextmanager
def _locked(where: Target, verb: str, stack: str, wait: float) -> Iterator[None]:
    """Hold the lock file beside the path (removed again when done).

    A run that acquires the lock checks that the file is still the one at the path: the last
    holder removes it while holding it, so a waiter may have locked a file that is gone."""
    lock = where.parent / where.sibling("lock")
    deadline, told = time.monotonic() + wait, False
    while True:
        handle = _open_lock(lock)
        try:
            if _try_lock(handle, lock):
                break
            holder = _holder(handle)
        except BaseException:
            os.close(handle)
            raise
        os.close(handle)
        if time.monotonic() >= deadline:
            raise OutputRefused(f"{where.shown} is still being written by {holder} after {wait:.0f} s "
                                f"(lock {lock}); wait for it to finish or stop it")
        if not told and holder:
            print(f"waiting: {where.shown} is being written by {holder}", file=sys.stderr)
            told = True
        time.sleep(0.05)
    try:
        os.ftruncate(handle, 0)
        os.pwrite(handle, json.dumps({"pid": os.getpid(), "verb": verb, "stack": stack}).encode() + b"\n", 0)
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
        os.close(handle)  # releases the lock


def _open_lock(lock: Path) -> int:
    try:
        handle = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OutputRefused(f"{lock} is a symbolic link; remove it (gpu-cluster keeps its lock file there)") from error
        raise
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise OutputRefused(f"{lock} is not a regular file; remove it (gpu-cluster keeps its lock file there)")
    return handle


def _try_lock(handle: int, lock: Path) -> bool:
    """True when this handle now holds the lock of the file that is at `lock`."""
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    held, current = os.fstat(handle), _lstat(lock)
    return current is not None and (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino)


def _holder(handle: int) -> str:
    """Who holds the lock, as its file says ("" when the file is gone or not yet written)."""
    try:
        data = json.loads(os.pread(handle, 4096, 0) or b"{}")
        return printable(f"pid {int(data['pid'])} ({data['verb']} of stack {data['stack']})")
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return "another gpu-cluster run" if os.fstat(handle).st_nlink else ""


def _clean_leftovers(where: Target) -> None:
    """Remove what a killed run left beside the path: staging trees and files, parked old trees.
    A parked tree with no output in its place is the old output of a run killed mid-swap: restore it."""
    prefix = where.sibling("")
    for entry in sorted(os.scandir(where.parent), key=lambda item: item.name):
        if not entry.name.startswith(prefix) or entry.name == where.sibling("lock"):
            continue
        path = Path(entry.path)
        parked = entry.name.startswith(where.sibling("old-")) and entry.is_dir(follow_symlinks=False)
        if parked and not os.path.lexists(where.path):
            os.rename(path, where.path)
            continue
        if entry.is_dir(follow_symlinks=False):
            left = remove_owned(path, read_manifest(path))
            if left:
                print(printable(f"warning: kept {path}: it holds files gpu-cluster did not write ({', '.join(left[:3])})"),
                      file=sys.stderr)
        elif entry.is_file(follow_symlinks=False) and entry.name.startswith(where.sibling("new-")):
            path.unlink()


# --------------------------------------------------------------------------- signals


class _Signals:
    """SIGTERM and SIGHUP raise Interrupted (so the staging tree is removed), or, once the new
    tree is in place, wait until the old one is removed (main thread only)."""

    def __init__(self) -> None:
        self.deferred: int | None = None
        self.deferring = False

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.deferring:
            self.deferred = signum
            return
        raise Interrupted(signum)

    @contextlib.contextmanager
    def installed(self) -> Iterator[_Signals]:
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {signum: signal.signal(signum, self) for signum in (signal.SIGTERM, signal.SIGHUP)}
        try:
            yield self
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        if self.deferred is not None:
            raise Interrupted(self.deferred, published=True)


# --------------------------------------------------------------------------- publishing


def check(raw: str, verb: str, stack: str) -> Target:
    """Refuse early (before any work) an output path that cannot be published to."""
    where = target(raw)
    _check_replaceable(where, verb, stack)
    return where


def publish_tree(files: Mapping[str, str], where: Target, verb: str, stack: str,
                 wait: float = LOCK_WAIT_SECONDS) -> list[str]:
    """Write `files` as the tree at `where`; return warnings (files of others kept aside)."""
    for name in files:
        if not _safe_name(name):
            raise ValueError(f"rendered path {name!r} must be relative, inside the tree, and not {MARKER}")
    return publish_batches([files], where, verb, stack, wait)


def publish_batches(batches: Iterable[Mapping[str, str]], where: Target, verb: str, stack: str,
                    wait: float = LOCK_WAIT_SECONDS) -> list[str]:
    """Write the files of every batch as one tree at `where`, a batch at a time as the iterable
    makes them (a renderer need not hold the whole tree); return warnings as `publish_tree`.

    Before a batch's files are written, the staging tree's marker is rewritten to name them too,
    so a run killed at any moment leaves a staging tree whose marker lists every file in it (the
    next run removes it); the last marker names every file, sorted, as one batch's does. A path
    given twice, or one outside the tree, stops the run with nothing published."""
    where.parent.mkdir(parents=True, exist_ok=True)
    with _Signals().installed() as signals, _locked(where, verb, stack, wait):
        _clean_leftovers(where)
        _check_replaceable(where, verb, stack)
        staging = Path(tempfile.mkdtemp(prefix=where.sibling("new-"), dir=where.parent))
        manifest = Manifest(verb, stack, ())
        try:
            step("staging created")
            written: set[str] = set()
            for batch in batches:
                for name in batch:
                    if not _safe_name(name) or name in written:
                        raise ValueError(f"rendered path {name!r} must be relative, inside the tree, not {MARKER} "
                                         "and given once")
                written.update(batch)
                manifest = Manifest(verb, stack, tuple(sorted(written)))
                _write_marker(staging, manifest)
                step("marker written")
                for name in sorted(batch):
                    path = staging / name
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(batch[name], encoding="utf-8")
                    if path.suffix == ".sh":
                        path.chmod(0o755)
                    step(f"wrote {name}")
            if not written:
                _write_marker(staging, manifest)
                step("marker written")
            staging.chmod(0o755)
            signals.deferring = True  # from here a signal waits until the swap and its clean-up are done
            old = _swap_in(staging, where)
        except BaseException:
            remove_owned(staging, manifest)
            raise
        step("published")
        if old is None:
            return []
        left = remove_owned(old, read_manifest(old))
        step("old tree removed")
        return [printable(f"kept {old}: it holds files gpu-cluster did not write ({', '.join(left[:3])})")] if left else []


def _write_marker(staging: Path, manifest: Manifest) -> None:
    """The staging tree's marker, replaced in one rename (a reader sees the old list or the new)."""
    (staging / (MARKER + ".part")).write_text(manifest.text(), encoding="utf-8")
    os.rename(staging / (MARKER + ".part"), staging / MARKER)


def _swap_in(staging: Path, where: Target) -> Path | None:
    """Put the staged tree at the path; return where the old tree now is (None if there was none)."""
    if not os.path.lexists(where.path):
        _place_new(staging, where.path)
        return None
    if exchange(staging, where.path):
        return staging  # the old tree, now under the staging name
    # No atomic exchange here: park the old tree under a name the next run restores from.
    parked = Path(tempfile.mkdtemp(prefix=where.sibling("old-"), dir=where.parent))
    os.rmdir(parked)
    os.rename(where.path, parked)
    step("old tree parked")
    os.rename(staging, where.path)
    return parked


def _check_file(where: Target, option: str) -> None:
    info = _lstat(where.path)
    if info is None:
        return
    if not stat.S_ISREG(info.st_mode):
        raise OutputRefused(f"{option} {where.shown} is {kind_of(info.st_mode)}, not a file gpu-cluster wrote: "
                            f"nothing was written; choose another {option}")
    with open(where.path, "rb") as existing:
        head = existing.read(4096)
    if info.st_size and FILE_MARK.encode() not in head:
        raise OutputRefused(f"{option} {where.shown} is a file of {info.st_size:,} bytes that gpu-cluster did not "
                            f"write: nothing was written; choose another {option} or remove it yourself")


def check_file(raw: str, option: str = "--out") -> Target:
    """Refuse early (before any work) a file path that cannot be published to."""
    where = target(raw, option)
    _check_file(where, option)
    return where


def publish_file(where: Target, text: str, option: str = "--out") -> Path:
    """Write one file atomically; only over nothing, an empty file, or a file gpu-cluster wrote."""
    if FILE_MARK not in text[:4096]:
        raise ValueError("publish_file writes only files that carry the tool's mark")
    where.parent.mkdir(parents=True, exist_ok=True)
    with _Signals().installed(), _locked(where, "write", where.path.name, LOCK_WAIT_SECONDS):
        _clean_leftovers(where)
        _check_file(where, option)
        write_atomic(where.path, text, 0o644, prefix=where.sibling("new-"))
    return where.path
