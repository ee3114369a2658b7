"""What a user gives on the command line or in a settings file, read the same way by the library and by the
command line, without importing the library.

A run that is handed only paths that name nothing can say so before it imports msgspec, orjson and the stores
(about half of a small run's instructions), with the line and exit status the stores' own read gives (issue #28);
its settings are read first, and a duration among them is read here, not by the run's module. The stores use the
same words and the same test, from here, so that the two answers cannot drift apart.
"""

from __future__ import annotations

#: a libpq URL names a PostgreSQL database, not a file
URL_SCHEMES = ("postgresql://", "postgres://")
#: the reason given for a path that names no file, folder or database
NOTHING_THERE = "no such file or folder"


def names_nothing(spec: str) -> bool:
    """Whether the command-line path ``spec`` names nothing a store could open: not stdin (``-``), no database
    URL, and no file or folder by ``Path.exists`` (the file store's own test: a dangling symbolic link names
    nothing). A path that cannot be looked at (permission denied) is not known to name nothing: the stores say what
    is wrong with it."""
    if spec == "-" or spec.startswith(URL_SCHEMES):
        return False
    from pathlib import Path

    try:
        return not Path(spec).exists()
    except OSError:
        return False


def nothing_there(spec: str) -> str:
    """Why ``spec``, which :func:`names_nothing`, names nothing, in the words of every run's line: a symbolic link
    that loops or whose target is gone says so (``ls`` lists it, so "no such file" alone would read as wrong)."""
    import errno
    import os

    try:
        target = os.readlink(spec)
    except OSError:
        return NOTHING_THERE
    try:
        os.stat(spec)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link that loops (too many levels of symbolic links)"
    return f"is a symbolic link to {target}, which names nothing"


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``2h``, ``1d`` -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    text = text.strip().lower()
    try:
        if text and text[-1] in units:
            return float(text[:-1]) * units[text[-1]]
        return float(text)
    except ValueError:
        raise ValueError(f"not a duration: {text!r} (use e.g. 30s, 10m, 2h, 0)") from None
