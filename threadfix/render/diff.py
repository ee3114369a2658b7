"""Unified diffs of repaired threads that a person can read.

A JSONL line or a compact document is one enormous line, so its diff would say nothing; such threads
are compared pretty-printed. Multi-line documents are compared as they are.
"""

from __future__ import annotations

import orjson

from threadfix.render.safe import terminal_safe


def _lines(data: bytes) -> list[str]:
    if data.count(b"\n") < 2:
        try:
            data = orjson.dumps(orjson.loads(data), option=orjson.OPT_INDENT_2)
        except (orjson.JSONDecodeError, TypeError):
            pass
    text = data.decode("utf-8", "replace")
    return [terminal_safe(line, None) + "\n" for line in text.split("\n")]


def unified_diff(address: str, before: bytes, after: bytes, context: int = 3) -> str:
    """The diff of one thread, labelled with its address."""
    import difflib

    label = terminal_safe(address, None)
    return "".join(difflib.unified_diff(_lines(before), _lines(after), f"{label} (before)", f"{label} (after)", n=context))
