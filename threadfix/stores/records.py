"""Session files of coding agents, as containers on the file medium: what the three app modules share.

A session file is a list of JSON records, one a line (or one document). Its thread is not its records: each
app rebuilds the conversation it sends from them in its own way (a chain of parent ids, an ordered replay, a
map of messages by id). An app module (:mod:`.claude_code`, :mod:`.codex_rollout`, :mod:`.gemini_cli`) is a
pure mapping layer: it recognises its records by content, maps them to the items a dialect reads, and maps the
items a repair gives back onto record edits, keeping every other line's bytes. The file medium
(:mod:`.files`) chooses the container (:func:`.sessions.session_container`) and writes the bytes a container
returns.

``--jobs`` reads a session file whole: it is one thread, whose records only make sense together (a chain of
parent ids runs from its last record back to its first), so no cut of it is sound.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from msgspec import Struct

from threadfix import jsonio
from threadfix.errors import UnrewritableError
from threadfix.model import Address, Loc, Thread
from threadfix.stores.base import ReadProblem
from threadfix.times import parse_time

#: the namespace of the ids threadfix gives the records it writes (uuid5 of the call: a rerun writes the same)
ID_NAMESPACE = uuid.UUID("5d3a44c6-1f6b-4f1e-9a57-7c1f0e3a9b21")


class Line(Struct):
    """One line of a session file: its bytes without the ending, the ending, and the parsed record."""

    number: int
    start: int
    body: bytes
    ending: bytes
    value: Any = None


class SessionSpan(Struct, frozen=True):
    """A session thread's locator: the whole file (a session is one unit, never cut), and the line each item's
    blocks came from, so that findings name the file and line."""

    start: int
    end: int
    #: for each item, the line of each of its blocks (a flat item: one)
    lines: tuple[tuple[int, ...], ...] = ()

    def line_of(self, loc: Loc | None) -> int | None:
        """The line of the record an item (message, block) came from, None for a place no record holds."""
        if loc is None or not 0 <= loc[0] < len(self.lines) or not self.lines[loc[0]]:
            return None
        blocks = self.lines[loc[0]]
        return blocks[loc[1]] if 0 <= loc[1] < len(blocks) else blocks[0]


class Session(Protocol):
    """A parsed session: the thread it gives, and the bytes of the file once the thread's items change."""

    thread: Thread

    def encode(self, new_items: list[Any]) -> bytes: ...


class Container(Protocol):
    """An app module: recognise its records, read them into a session."""

    name: str

    def recognise(self, values: Sequence[Any], suffix: str) -> bool: ...

    def read(self, data: bytes, display: str, mtime: float | None) -> Session | ReadProblem: ...


def split_lines(data: bytes) -> list[Line]:
    """Every line with its offset and ending; values parsed (None for a blank line)."""
    lines: list[Line] = []
    start = 0
    number = 0
    size = len(data)
    while start < size:
        end = data.find(b"\n", start)
        if end < 0:
            stop, ending, after = size, b"", size
        else:
            stop, ending, after = end, b"\n", end + 1
            if stop > start and data[stop - 1:stop] == b"\r":
                stop, ending = stop - 1, b"\r\n"
        number += 1
        lines.append(Line(number, start, data[start:stop], ending))
        start = after
    return lines


def parse_lines(lines: list[Line], display: str) -> ReadProblem | None:
    """Parse every line in place; the first that is not JSON is why the session is left alone (a torn last line
    is the app still writing it)."""
    for line in lines:
        body = line.body[3:] if line.start == 0 and line.body[:3] == jsonio.BOM else line.body
        if not body.strip():
            continue
        try:
            line.value = jsonio.loads(body)
        except jsonio.JsonReadError as exc:
            if line is lines[-1] and not line.ending:
                return ReadProblem(f"{display}:{line.number}", "the last line is incomplete (the app may still be "
                                   "writing it); the session is left alone")
            return ReadProblem(f"{display}:{line.number}", f"{exc.message}; the session is left alone")
    return None


#: what a container raises on records that break the app's shape (the file is untrusted JSON)
MALFORMED = (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError)


def read_session(container: Container, data: bytes, display: str, mtime: float | None) -> Session | ReadProblem:
    """A session file read by its container; records that break the app's shape leave it alone, said."""
    try:
        return container.read(data, display, mtime)
    except MALFORMED as exc:
        return ReadProblem(display, f"its records do not follow the {container.name} session format "
                           f"({type(exc).__name__}); left alone")


def encode_session(container: Container, session: Session, new_items: list[Any]) -> bytes:
    """The session file's bytes once its thread's items are ``new_items``, proven by reading them back: the
    conversation the app rebuilds from the new bytes must hold no refusal that ``new_items`` does not (a repair the
    records cannot express is left alone, said, never written half-done)."""
    data = session.encode(new_items)
    thread = session.thread
    if data == thread.raw:
        raise UnrewritableError("left alone: its records cannot hold this repair", str(thread.address))
    again = container.read(data, str(thread.address), thread.mtime)
    if isinstance(again, ReadProblem):
        raise UnrewritableError(f"left alone: the repaired file would not read back ({again.message})", again.where)
    from threadfix import dialects

    dialect = dialects.get(thread.dialect or "")
    wanted = {(v.rule, v.call_id) for v in dialect.check(new_items)}
    extra = [v for v in dialect.check(again.thread.items) if (v.rule, v.call_id) not in wanted]
    if extra:
        raise UnrewritableError(f"left alone: its records cannot hold this repair ({extra[0].message[:200]})",
                                str(thread.address))
    return data


def parsed_lines(data: bytes, display: str) -> list[Line] | ReadProblem:
    """A JSONL session's lines, parsed; a line that is not JSON leaves the session alone, said."""
    lines = split_lines(data)
    problem = parse_lines(lines, display)
    return lines if problem is None else problem


def record_id(*parts: str) -> str:
    """A fresh record id that a rerun of the same repair gives again."""
    return str(uuid.uuid5(ID_NAMESPACE, "\x1f".join(parts)))


def latest_time(values: Iterator[Any], key: str = "timestamp") -> float | None:
    """The newest of the records' own times (what ``--min-age`` reads, not the file's mtime)."""
    newest: float | None = None
    for value in values:
        if isinstance(value, dict):
            moment = parse_time(value.get(key))
            if moment is not None and (newest is None or moment > newest):
                newest = moment
    return newest


def file_style(lines: Sequence[Line], wanted: Callable[[Any], bool]) -> jsonio.JsonStyle:
    """The serialiser that writes the file's own records back byte for byte (tried on a few of them)."""
    tried = 0
    for line in lines:
        if isinstance(line.value, dict) and wanted(line.value):
            style = jsonio.detect_style(line.body, line.value)
            if style is not None:
                return style
            tried += 1
            if tried >= 4:
                break
    return jsonio.COMPACT


def ending_of(lines: Sequence[Line]) -> bytes:
    """The file's line ending (its first line's), ``\\n`` when it has none."""
    return next((line.ending for line in lines if line.ending), b"\n")


def dump(value: Any, style: jsonio.JsonStyle, where: str) -> bytes:
    try:
        return jsonio.dumps(value, style)
    except jsonio.JsonWriteError as exc:
        raise UnrewritableError(f"left alone: cannot be written back ({exc})", where) from None


def rewrite_record(line: Line, value: Any, where: str) -> bytes:
    """A changed record in the layout of its line, refused when its values would not survive a rewrite."""
    problem = jsonio.fidelity_problem(line.body)
    if problem:
        raise UnrewritableError(f"left alone: rewriting line {line.number} would alter values ({problem})", where)
    try:
        data, _style = jsonio.rewrite(line.body, value, line.value)
    except jsonio.JsonWriteError as exc:
        raise UnrewritableError(f"left alone: cannot be written back ({exc})", where) from None
    return data


def set_string_field(line: Line, key: str, new: str, where: str) -> bytes:
    """The line with its top-level string-or-null field ``key`` set to ``new``, every other byte kept.

    The value is replaced in the bytes (not re-serialised), then the result is parsed to prove that it is the
    record with only that field changed; otherwise the whole record is rewritten in its own layout."""
    pattern = re.compile(rb'(?<!\\)"' + re.escape(key.encode()) + rb'"(\s*:\s*)(null|"(?:[^"\\]|\\.)*")')
    encoded = jsonio.dumps(new)
    expected = {**line.value, key: new}
    for match in pattern.finditer(line.body):
        candidate = line.body[:match.start(2)] + encoded + line.body[match.end(2):]
        try:
            if jsonio.loads(candidate) == expected:
                return candidate
        except jsonio.JsonReadError:
            continue
    return rewrite_record(line, expected, where)


class Rewrite:
    """The edits of one session file: lines replaced, lines inserted after a line; :meth:`bytes` lays them in,
    every other line kept with its bytes and ending, and the final-newline state kept."""

    def __init__(self, data: bytes, lines: list[Line]) -> None:
        self.data = data
        self.lines = lines
        self.ending = ending_of(lines)
        self.replaced: dict[int, bytes] = {}
        self.removed: set[int] = set()
        self.after: dict[int, list[bytes]] = {}

    def replace(self, index: int, body: bytes) -> None:
        self.replaced[index] = body

    def body(self, index: int) -> bytes:
        return self.replaced.get(index, self.lines[index].body)

    def insert_after(self, index: int, body: bytes) -> None:
        self.after.setdefault(index, []).append(body)

    def bytes(self) -> bytes:
        if not self.replaced and not self.after and not self.removed:
            return self.data
        out: list[bytes] = []
        last = len(self.lines) - 1
        for i, line in enumerate(self.lines):
            pieces = [] if i in self.removed else [self.body(i)]
            pieces.extend(self.after.get(i, ()))
            if not pieces:
                continue
            if i == last and not line.ending:  # the file had no final newline: neither does it now
                out.append(self.ending.join(pieces))
            else:
                out.extend(piece + (line.ending or self.ending) for piece in pieces)
        return b"".join(out)


def session_thread(display: str, items: list[Any], data: bytes, lines: tuple[tuple[int, ...], ...],
                   dialect: str, modified: float | None, mtime: float | None, key: str | None = None) -> Thread:
    """The thread of a session file: the rebuilt conversation, the whole file as its bytes."""
    return Thread(address=Address(display, key=key), items=items, raw=data, modified=modified, mtime=mtime,
                  dialect=dialect, locator=SessionSpan(0, len(data), lines))
