"""Reading what users hand the tool (stack files, neighbor data, discovery output, GUID maps, a
lab's state) with a bound: never more than `limit + 1` bytes, never from a FIFO, device or
directory (a FIFO would block forever, /dev/zero never ends), whatever the file's size claims to
be, and never from /proc or /sys (`/proc/self/environ` holds every credential of the process).

What a message quotes of such input is an `excerpt`: short, escaped, and cut before the value
of anything that looks like a secret."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

from cluster.findings import printable

_CHUNK = 1024 * 1024
#: Kernel interfaces, not files a user collected: refused by the path the input resolves to.
KERNEL_TREES = ("/proc", "/sys")
EXCERPT_CHARACTERS = 60
#: A key that may name a secret, then `=` or `:` (a closing quote between: JSON); or an HTTP
#: authorization scheme. Everything after it is left out of an excerpt.
SECRET = re.compile(r"(?:pass|pwd|secret|token|key|cred|auth|cookie|session|private|sign)[\w.-]*[\"']?\s*[:=]"
                    r"|\b(?:bearer|basic|digest)\s", re.IGNORECASE)


class Unreadable(Exception):
    """The input cannot be read; the message names the path and what it is instead."""


def kind_of(mode: int) -> str:
    """What a stat mode is, in words: `a directory`, `a FIFO`, `a character device`..."""
    kinds = [(stat.S_ISLNK, "a symbolic link"), (stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
             (stat.S_ISSOCK, "a socket")]
    return next((name for test, name in kinds if test(mode)), "a special file")


def kernel_interface(path: Path, what: str) -> str | None:
    """Why `path` is no input when it resolves under /proc or /sys (None: it does not)."""
    resolved = os.path.realpath(path)
    for tree in KERNEL_TREES:
        if resolved == tree or resolved.startswith(tree + "/"):
            through = f" ({resolved})" if resolved != str(path) else ""
            return (f"{what} is under {tree}{through}, a kernel interface, not a file gpu-cluster reads; save the "
                    "output to a regular file and give that file")
    return None


def _why(error: OSError) -> str:
    """The system's reason, with the fix where it is the reader's to make."""
    if isinstance(error, PermissionError):
        return f"{error.strerror or error}: make it readable by the user that runs gpu-cluster"
    return str(error.strerror or error)


def read_bounded(path: Path, limit: int, what: str) -> bytes:
    """At most `limit + 1` bytes of the regular file at `path` (links followed); a caller that
    gets more than `limit` knows the file is too large without having read it whole.
    Raises Unreadable (missing, not a regular file, no permission, under /proc or /sys) and never
    blocks on a FIFO."""
    kernel = kernel_interface(path, what)
    if kernel is not None:
        raise Unreadable(f"{path}: {kernel}")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise Unreadable(f"{path}: {what} not found") from None
    except OSError as error:
        raise Unreadable(f"{path}: cannot read {what}: {_why(error)}") from None
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable(f"{path}: {what} is {kind_of(info.st_mode)}, not a regular file")
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        raise Unreadable(f"{path}: cannot read {what}: {_why(error)}") from None
    try:
        opened = os.fstat(handle)
        if not stat.S_ISREG(opened.st_mode):  # replaced between the stat and the open
            raise Unreadable(f"{path}: {what} is {kind_of(opened.st_mode)}, not a regular file")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            try:
                chunk = os.read(handle, min(left, _CHUNK))
            except OSError as error:
                raise Unreadable(f"{path}: cannot read {what}: {error.strerror or error}") from None
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        with contextlib.suppress(OSError):
            os.close(handle)


def read_text_bounded(path: Path, limit: int, what: str) -> str:
    """The UTF-8 text of `path`, refused past `limit` bytes (read no further than that)."""
    raw = read_bounded(path, limit, what)
    if len(raw) > limit:
        shown = f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit:,} bytes"
        raise Unreadable(f"{path}: {what} is larger than {shown}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Unreadable(f"{path}: {what} is not UTF-8 text (byte {error.start})") from None


def excerpt(text: str, limit: int = EXCERPT_CHARACTERS) -> str:
    """A line (or key, or value) of user input as a message may quote it: quoted, at most `limit`
    characters with control characters escaped, and nothing from the first secret-looking key's
    `=` or `:` on (`password=`, `"api_key": `, `Authorization: Bearer`), so neither a credential
    nor a flood reaches a report."""
    window = text[: limit * 4]  # the excerpt comes from here: the search below stays bounded
    secret = SECRET.search(window)
    head = window[: secret.end()] if secret else window
    shown = printable(head)
    cut = len(shown) > limit or (len(text) > len(head) and not secret)
    quoted = f"'{shown[:limit]}{'...' if cut else ''}'"
    notes = []
    if secret:
        notes.append("the rest is not shown: it may hold a secret")
    if len(text) > limit:
        notes.append(f"{len(text):,} characters")
    return quoted + (f" ({'; '.join(notes)})" if notes else "")
