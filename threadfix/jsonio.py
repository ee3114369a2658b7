"""JSON in and out without changing what we did not mean to change.

orjson is fast but its round trip is lossy on some legal JSON (integers beyond 64 bits become floats,
``-0`` becomes ``0``, duplicate keys collapse, and it writes at most 254 levels of nesting). Untouched
threads are therefore never re-serialised (their bytes are copied), and a thread we must rewrite is
first checked with :func:`fidelity_problem`; one that would change is refused, not corrupted.

When a thread is rewritten we also keep its layout: :func:`detect_style` finds the serialiser settings
that reproduce the original bytes exactly, so a repaired file differs only where items were added or
moved.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import orjson
from msgspec import Struct

#: orjson refuses to write deeper documents than this (it reads up to 1024).
MAX_WRITE_DEPTH = 254
_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1


class JsonReadError(ValueError):
    """Bytes that are not one JSON document; ``line``/``column`` are 1-based within those bytes."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


BOM = b"\xef\xbb\xbf"


def loads(data: bytes | memoryview | str) -> Any:
    """Parse one JSON document, turning every failure into a :class:`JsonReadError`.

    A leading UTF-8 byte-order mark is tolerated (orjson rejects it); callers keep it on write.
    """
    if isinstance(data, (bytes, bytearray)) and data[:3] == BOM:
        data = data[3:]
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return _explain_failure(data, exc)
    except (SystemError, MemoryError) as exc:  # orjson reports allocation failure as SystemError
        raise JsonReadError("too large to parse in the memory available") from exc


def _explain_failure(data: Any, exc: orjson.JSONDecodeError) -> Any:
    msg = str(exc.msg) if hasattr(exc, "msg") else str(exc)
    if "surrogate" in msg or "utf-8" in msg.lower() or "UTF-8" in msg:
        detail = "invalid UTF-8 or a lone surrogate"
    elif not bytes(data).strip():
        detail = "empty document"
    else:
        detail = msg.rstrip(".").split(":")[0] if msg else "not valid JSON"
    raise JsonReadError(f"not valid JSON ({detail})", getattr(exc, "lineno", None), getattr(exc, "colno", None))


def fidelity_problem(raw: bytes) -> str | None:
    """Say why ``raw`` cannot be parsed and written back with the same values, or None when it can.

    Runs the exact (slow) stdlib parser with hooks, so it is only called for threads repair changes.
    """
    problems: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        if len(set(keys)) != len(keys) and not problems:
            problems.append("an object has duplicate keys")
        return dict(items)

    def parse_int(text: str) -> int:
        value = int(text)
        if (value < _INT64_MIN or value > _UINT64_MAX) and not problems:
            problems.append(f"the integer {text[:24]} does not fit in 64 bits")
        elif value == 0 and text.startswith("-") and not problems:  # JavaScript reads -0 as negative zero
            problems.append("a number is negative zero")
        return value

    def parse_float(text: str) -> float:
        value = float(text)
        if (value == 0.0 and math.copysign(1.0, value) < 0) and not problems:
            problems.append("a number is negative zero")
        elif math.isinf(value) and not problems:
            problems.append(f"the number {text[:24]} is out of range")
        return value

    def parse_constant(text: str) -> float:
        raise ValueError(f"{text} is not JSON")

    text = raw[3:] if raw[:3] == BOM else raw
    if _round_trips(text):
        return None
    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_int=parse_int, parse_float=parse_float,
                           parse_constant=parse_constant)
    except RecursionError:
        return f"nesting is deeper than {MAX_WRITE_DEPTH} levels"
    except ValueError as exc:
        return f"not valid JSON ({exc})"
    if problems:
        return problems[0]
    if _depth(value) > MAX_WRITE_DEPTH:
        return f"nesting is deeper than {MAX_WRITE_DEPTH} levels"
    return None


def _round_trips(text: bytes) -> bool:
    """Compact JSON that orjson writes back byte for byte holds no value orjson would alter: the cheap
    proof for the common case (stores written by orjson or by ``json.dumps`` with compact separators)."""
    try:
        return orjson.dumps(orjson.loads(text)) == text
    except (orjson.JSONDecodeError, orjson.JSONEncodeError, TypeError):
        return False


def _depth(value: Any) -> int:
    """Nesting depth, iteratively (a deep document must not exhaust Python's stack)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in node)
    return deepest


class JsonStyle(Struct, frozen=True):
    """A serialiser setting that reproduces a document's original layout."""

    name: str
    dump: Callable[[Any], bytes]


def _py(**kwargs: Any) -> Callable[[Any], bytes]:
    def dump(value: Any) -> bytes:
        return json.dumps(value, **kwargs).encode("utf-8", "surrogatepass")

    return dump


STYLES: tuple[JsonStyle, ...] = (
    JsonStyle("compact", orjson.dumps),
    JsonStyle("indent-2", lambda v: orjson.dumps(v, option=orjson.OPT_INDENT_2)),
    JsonStyle("python", _py()),
    JsonStyle("python-utf8", _py(ensure_ascii=False)),
    JsonStyle("python-indent-2", _py(indent=2)),
    JsonStyle("python-indent-2-utf8", _py(indent=2, ensure_ascii=False)),
    JsonStyle("python-indent-4", _py(indent=4)),
    JsonStyle("python-indent-4-utf8", _py(indent=4, ensure_ascii=False)),
    JsonStyle("python-compact", _py(separators=(",", ":"))),
)
COMPACT = STYLES[0]
INDENTED = STYLES[1]


def detect_style(raw: bytes, value: Any) -> JsonStyle | None:
    """The first style that writes ``value`` back to exactly ``raw`` (ignoring outer whitespace)."""
    body = raw[3:] if raw[:3] == BOM else raw
    body = body.strip()
    for style in STYLES:
        try:
            if style.dump(value) == body:
                return style
        except (TypeError, ValueError, orjson.JSONEncodeError):
            continue
    return None


def fallback_style(raw: bytes) -> JsonStyle:
    """For a document no style reproduces: keep it multi-line if it was, compact otherwise."""
    return INDENTED if b"\n" in raw.strip() else COMPACT


def dumps(value: Any, style: JsonStyle = COMPACT) -> bytes:
    """Serialise with ``style``; raises JsonWriteError when the value cannot be written."""
    try:
        return style.dump(value)
    except (TypeError, ValueError, orjson.JSONEncodeError, RecursionError) as exc:
        raise JsonWriteError(str(exc)) from exc


def dumps_os_strings(value: Any, option: int = 0) -> bytes:
    """JSON of a document whose strings may hold what the OS gave us: a result on stdout, a journal line.

    A path of undecodable bytes reaches Python as a string with lone surrogates (PEP 383), which orjson
    refuses. Such a document is written by ``json`` instead, each lone surrogate as its ``\\udcXX`` escape:
    :func:`loads_os_strings` (or any Python reader) loads the same string back, and ``os.fsencode`` gives the
    path's own bytes. Every other document is orjson's, byte for byte."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        indent = 2 if option & orjson.OPT_INDENT_2 else None
        text = json.dumps(value, ensure_ascii=False, indent=indent, separators=(",", ": ") if indent else (",", ":"))
        return text.encode("utf-8", "backslashreplace") + (b"\n" if option & orjson.OPT_APPEND_NEWLINE else b"")


def loads_os_strings(data: bytes) -> Any:
    """What :func:`dumps_os_strings` wrote; orjson refuses a lone surrogate's escape, which ``json`` reads."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(data)
        except ValueError:
            pass
        raise


class JsonWriteError(ValueError):
    """A value that cannot be serialised (too deep, lone surrogate...)."""


def rewrite(raw: bytes, value: Any, original: Any) -> tuple[bytes, str]:
    """Serialise the changed ``value`` in the layout of ``raw`` (which parsed to ``original``).

    Returns the bytes (with the original's BOM and surrounding whitespace kept) and the style name.
    """
    style = detect_style(raw, original)
    name = style.name if style else f"{fallback_style(raw).name} (original layout not reproducible)"
    body = dumps(value, style or fallback_style(raw))
    prefix = BOM if raw[:3] == BOM else b""
    stripped = raw[len(prefix):]
    lead = stripped[: len(stripped) - len(stripped.lstrip())]
    trail = stripped[len(stripped.rstrip()):]
    return prefix + lead + body + trail, name
