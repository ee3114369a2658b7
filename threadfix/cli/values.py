"""Option values: whole numbers and seconds, read as argparse ``type=`` functions, refused in one line.

A whole number is taken only in its plain spelling: ASCII digits (a ``+`` and surrounding spaces allowed, as a
shell user may type them); anything else (``5.0``, ``5_0``, other scripts' digits) is refused by name rather than
guessed at. Seconds are read as the command line always read them, by Python's ``float`` over ASCII text
(``0.5``, ``.5``, ``1e3``), except what is no finite number of seconds of at least 0 (``nan``, ``inf``, ``-1``).
"""

from __future__ import annotations

from collections.abc import Callable

from threadfix.cli.parser import UsageError


def whole(flag: str, minimum: int) -> Callable[[str], int]:
    """The value of an option that takes a whole number of at least ``minimum`` (``--jobs 2``)."""
    import re

    def read(text: str) -> int:
        if re.fullmatch(r"\s*\+?[0-9]+\s*", text, re.ASCII):
            number = int(text)
            if number >= minimum:
                return number
        raise UsageError(f"{flag} must be a whole number of at least {minimum}, not {text!r}")

    return read


def seconds(flag: str) -> Callable[[str], float]:
    """The value of an option that takes a number of seconds of at least 0 (``--busy-timeout 0.5``)."""

    def read(text: str) -> float:
        try:
            number = float(text) if text.isascii() else -1.0
        except ValueError:
            number = -1.0
        if 0 <= number < float("inf"):
            return number
        raise UsageError(f"{flag} must be a number of seconds of at least 0, not {text!r}")

    return read
