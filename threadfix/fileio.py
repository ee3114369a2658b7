"""Low-level file writing shared by the journal, the spill list and the stores' atomic rewrites."""

from __future__ import annotations

import os


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write all of ``data`` (``os.write`` may take less than it is given)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
