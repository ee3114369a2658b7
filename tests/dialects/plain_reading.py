"""A dialect's fast index held to a plain reading of the same items, written in the test beside it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: what a plain reading raises on items no reading can take (a hostile shape): the index must raise it too
READ_FAILURES = (TypeError, AttributeError, ValueError)


def assert_reads_as_plain(index: Callable[[Any], Any], plain: Callable[[Any], Any], items: Any) -> None:
    """``index(items)`` equals ``plain(items)``, or fails as it does."""
    try:
        expected = plain(items)
    except READ_FAILURES as exc:  # the same failure from both
        try:
            index(items)
        except type(exc):
            return
        raise AssertionError("the index read what a plain reading could not") from exc
    assert index(items) == expected
