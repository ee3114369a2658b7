"""A transient progress line on stderr, only when stderr is a terminal (never in pipes, logs or CI).

One output discipline for every command (issue #22): the line is drawn only from the progress callback,
on the thread that prints results, never by a timer thread; and while it is up, stdout and stderr are
wrapped so that the line is erased before any other byte reaches the terminal, and stdout is flushed
before the line is drawn again. A result or an error line therefore always starts at the left margin,
and is never cut or re-wrapped by the progress display. The line is cut to the terminal's width so it
never wraps itself. Its only styled byte, the spinner, is coloured only when colour is on.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from threadfix.render.safe import terminal_safe

Progress = Callable[[str, int], None]

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
#: redraws at most this often (seconds)
EVERY = 0.08
ERASE = "\r\x1b[2K"
GREEN, RESET = "\x1b[32m", "\x1b[0m"


class ProgressLine:
    """The line itself: drawn on ``stream`` (a terminal), erased before anything else is written."""

    def __init__(self, verb: str, stream: IO[str], *, color: bool, before_draw: Callable[[], None]) -> None:
        self.verb = verb
        self.stream = stream
        self.color = color
        self.before_draw = before_draw
        self.started = time.monotonic()
        self.drawn = False
        self.frame = 0
        self.last = 0.0

    def update(self, store: str, threads: int) -> None:
        now = time.monotonic()
        if now - self.last < EVERY:
            return
        self.last = now
        rate = threads / max(now - self.started, 1e-6)
        self.draw(f"{self.verb} {terminal_safe(store, 80)}: {threads:,} threads ({rate:,.0f}/s)")

    def draw(self, text: str) -> None:
        self.before_draw()  # results printed so far reach the terminal before the line does
        try:
            width = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            width = 80
        text = text[: max(width - 3, 0)]  # the spinner, a space, and one column spare: never wraps
        spinner = FRAMES[self.frame % len(FRAMES)]
        self.frame += 1
        if self.color:
            spinner = f"{GREEN}{spinner}{RESET}"
        self.stream.write(f"{ERASE}{spinner} {text}")
        self.stream.flush()
        self.drawn = True

    def erase(self) -> None:
        if self.drawn:
            self.drawn = False
            self.stream.write(ERASE)
            self.stream.flush()


class _Guarded:
    """A stream that erases the progress line before each write (the stream's own attributes pass through)."""

    def __init__(self, stream: Any, line: ProgressLine) -> None:
        self._stream = stream
        self._line = line

    def write(self, data: Any) -> int:
        self._line.erase()
        return self._stream.write(data)

    def writelines(self, lines: Any) -> None:
        self._line.erase()
        self._stream.writelines(lines)

    @property
    def buffer(self) -> Any:
        return _Guarded(self._stream.buffer, self._line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _flush(stream: Any) -> None:
    try:
        stream.flush()
    except (OSError, ValueError):  # a closed pipe is the command's to report, when it writes next
        pass


@contextmanager
def progress_line(verb: str) -> Iterator[Progress | None]:
    """Yield a ``progress(store, threads)`` callback, or None when stderr is not a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from threadfix.cli import use_color

    out, err = sys.stdout, sys.stderr
    line = ProgressLine(verb, err, color=use_color(True), before_draw=lambda: _flush(sys.stdout))
    sys.stderr = _Guarded(err, line)  # type: ignore[assignment]
    if out.isatty():  # stdout on the same screen: erase before results too (a pipe or a file needs no erasing)
        sys.stdout = _Guarded(out, line)  # type: ignore[assignment]
    try:
        line.draw(f"{verb}…")
        yield line.update
    finally:
        sys.stdout, sys.stderr = out, err
        line.erase()
