"""A transient progress line on stderr, only when stderr is a terminal (never in pipes, logs or CI)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from threadfix.render.safe import terminal_safe

Progress = Callable[[str, int], None]


@contextmanager
def progress_line(verb: str) -> Iterator[Progress | None]:
    """Yield a ``progress(store, threads)`` callback, or None when stderr is not a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    console = Console(stderr=True, highlight=False, emoji=False, markup=False)
    started = time.monotonic()
    with console.status(f"{verb}…", spinner="dots") as status:
        def update(store: str, threads: int) -> None:
            rate = threads / max(time.monotonic() - started, 1e-6)
            status.update(f"{verb} {terminal_safe(store, 80)}: {threads:,} threads ({rate:,.0f}/s)")

        yield update
