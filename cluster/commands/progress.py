"""Progress of a verb's long work: one status line on a terminal, rewritten in place.

`render: big: [3.2 s] switch configs and host scripts (1,661 switches, 1 host pool)`: the verb,
the stack, the seconds since the verb started and the stage with its count, redrawn twice a second
so a long stage (the Pulumi program of a cloud stack, 32,768 GPUs of switch configs) shows it is
alive. Only when stderr is a terminal: piped or redirected (as CI runs it) nothing is written, so logs
and `--format json` stay as they were. While it runs, whatever the verb prints (stdout or stderr)
first erases the line, so the verb's own output never lands beside it; it is erased when the verb
ends.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from cluster.loader import stack_name, stack_path

ERASE = "\r\x1b[K"  # to the line's start, then erase it: the next line or the verb's output starts clean
TICK_S = 0.5
MIN_DRAW_S = 0.1  # stages told faster than this (a count per registered resource) are drawn by the tick


class Progress:
    """A stage reporter: call it with the stage's words; `clear()` before printing anything else."""

    def __init__(self, verb: str, stack: str = "", stream: TextIO | None = None) -> None:
        self.verb = verb
        self.stack = stack
        self.stream = stream if stream is not None else sys.stderr
        self.started = time.monotonic()
        self._text: str | None = None
        self._shown = False
        self._drawn_at = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, text: str) -> None:
        """Show `text` as the current stage (until the next stage or `clear`)."""
        with self._lock:
            self._text = text
            if time.monotonic() - self._drawn_at >= MIN_DRAW_S:
                self._draw()
            if self._ticker is None:  # stages may come from several threads (the Pulumi runtime's)
                self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
                self._ticker.start()

    def clear(self) -> None:
        """Erase the line and show nothing until the next stage."""
        with self._lock:
            self._text = None
            if self._shown:
                self._write(ERASE)
                self._shown = False

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        self.clear()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:
                if self._text is not None:
                    self._draw()

    def _draw(self) -> None:
        assert self._text is not None
        self._drawn_at = time.monotonic()
        elapsed = self._drawn_at - self.started
        subject = f"{self.stack}: " if self.stack else ""
        line = f"{self.verb}: {subject}[{elapsed:.1f} s] {self._text}"
        self._write(ERASE + line[:max(self._width() - 1, 20)])
        self._shown = True

    def _width(self) -> int:
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError):
            columns = 0
        return columns or 80  # a terminal that does not say its size (0)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a terminal that went away: progress is never worth an error
            self._stop.set()


class Silent(Progress):
    """Progress where nobody watches (stderr piped or redirected): writes nothing."""

    def __call__(self, text: str) -> None:
        return None

    def clear(self) -> None:
        return None

    def close(self) -> None:
        return None


def on_terminal(stream: TextIO) -> bool:
    """True when `stream` is a terminal that can erase a line (not TERM=dumb)."""
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


class _Erasing:
    """A stream that erases the progress line before anything is written to it."""

    def __init__(self, stream: TextIO, reporter: Progress) -> None:
        self._stream = stream
        self._reporter = reporter

    def write(self, text: str) -> int:
        self._reporter.clear()
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def progress(verb: str, stack: str) -> Iterator[Progress]:
    """A `Progress` for `verb` on STACK (a name or path, shown as the stack's name) on stderr when it
    is a terminal (stdout and stderr erasing its line before they print), else a `Silent` one; the
    line is erased at the end."""
    if not on_terminal(sys.stderr):
        yield Silent(verb)
        return
    reporter = Progress(verb, stack_name(stack_path(stack)), sys.stderr)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Erasing(sys.stdout, reporter), _Erasing(sys.stderr, reporter)  # type: ignore[assignment]
    try:
        yield reporter
    finally:
        sys.stdout, sys.stderr = saved
        reporter.close()
