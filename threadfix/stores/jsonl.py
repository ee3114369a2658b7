"""The two JSONL containers: a thread per line (:class:`ThreadLines`), and lines that are one thread's items
(:class:`ItemLines`). Which one a file is, its first readable line tells.

They read lines as :class:`Lines` gives them, from a file, a ``--jobs`` byte range of one, or stdin's bytes
(the medium, :mod:`.files`, opens those), remember each thread's byte range, and write a repaired thread back
in the file's own lines: a thread per line is a JSON document (:mod:`.document`); an item per line keeps every
original item's exact line and gives each new item a line of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from threadfix import jsonio
from threadfix.errors import UnrewritableError
from threadfix.model import Address, Thread, ThreadIndex
from threadfix.stores import settle, typed_read
from threadfix.stores.base import LineNumbering, ReadProblem, Settled
from threadfix.stores.document import NO_THREAD, Document, FileContainer, Span, encode_document, split_container, thread_id


class Lines:
    """Lines of a binary stream with their offsets; over-long lines are skipped, not loaded."""

    def __init__(self, stream: Any, max_bytes: int, offset: int = 0) -> None:
        """``offset``: where the stream starts in its file (a ``--jobs`` byte range, whose lines are numbered
        from 1 all the same)."""
        self.stream = stream
        self.max_bytes = max_bytes
        self.offset = offset

    def __iter__(self) -> Iterator[tuple[int, int, bytes | None]]:
        """(line number, start offset, content with its newline, or None when too long)."""
        offset = self.offset
        number = 0
        while True:
            line = self.stream.readline(self.max_bytes + 2)
            if not line:
                return
            number += 1
            start = offset
            offset += len(line)
            if len(line) > self.max_bytes + 1 or (not line.endswith(b"\n") and len(line) > self.max_bytes):
                while not line.endswith(b"\n"):
                    line = self.stream.readline(1 << 20)
                    if not line:
                        break
                    offset += len(line)
                yield number, start, None
                continue
            yield number, start, line


class Bounded:
    """A readline-able view of the next ``remaining`` bytes of a file."""

    def __init__(self, handle: Any, remaining: int) -> None:
        self.handle = handle
        self.remaining = remaining

    def readline(self, limit: int = -1) -> bytes:
        if self.remaining <= 0:
            return b""
        size = self.remaining if limit < 0 else min(limit, self.remaining)
        line = self.handle.readline(size)
        self.remaining -= len(line)
        return line

    def fileno(self) -> int:
        return self.handle.fileno()

    def peek(self, size: int = 0) -> bytes:
        return self.handle.peek(size)[: self.remaining]

    def close(self) -> None:
        self.handle.close()

    def __enter__(self) -> Bounded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ThreadLines(Document):
    """JSONL with a thread per line: each line is a JSON document, written back as one (its byte range is the
    line without its newline, so the document's encoding is the line's)."""


THREAD_LINES = ThreadLines()


class ItemLines:
    """JSONL whose lines are the items of one thread (the whole file): every line as read, blank ones included
    (``(start, line, value)``; value None for a blank line), so that a repair keeps each original item's exact
    line and the blank lines after it."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, bytes, Any]] = []

    def encode(self, thread: Thread, new_items: Sequence[Any]) -> bytes:
        if thread.document is not None or thread.address.line is not None:
            return encode_document(thread, list(new_items))  # (not this file's one thread: never met in a read)
        ending = b"\r\n" if self.lines and self.lines[0][1].endswith(b"\r\n") else b"\n"
        leading: list[bytes] = []
        lines_by_item: dict[int, list[bytes]] = {}
        last: list[bytes] = leading
        for _, line, value in self.lines:
            if value is None:
                last.append(line)
            else:
                last = lines_by_item[id(value)] = [line]
        out = list(leading)
        for item in new_items:
            original = lines_by_item.get(id(item))
            if original is None:
                try:
                    original = [jsonio.dumps(item) + ending]
                except jsonio.JsonWriteError as exc:
                    raise UnrewritableError(f"left alone: cannot be written back ({exc})", str(thread.address)) from None
            if out and not out[-1].endswith(b"\n"):
                out[-1] += ending  # the original last line had no newline and is no longer last
            out.extend(original)
        return b"".join(out)


class JsonlReader:
    """Reads a JSONL file's lines as threads, in whichever container its first line says, and hands that container
    to ``adopt`` before the first thread it reads comes out (the store encodes through it)."""

    def __init__(self, display: str, max_doc_bytes: int, mtime: float | None, dialect: str | None,
                 adopt: Callable[[FileContainer], None]) -> None:
        self.display = display
        self.max_doc_bytes = max_doc_bytes
        self.mtime = mtime
        self.dialect = dialect
        self.adopt = adopt

    def byte_range(self, handle: Any, start: int, end: int, numbering: LineNumbering, screen: bool,
                   typed: bool = False) -> Iterator[Thread | ReadProblem | Settled]:
        """A ``--jobs`` byte range of a file of threads (one per line: a file of items is never cut).

        Its first line's number is one past the newlines before it, which other processes are reading: the
        range is read through once, its lines numbered from 1, settled threads only counted and the others
        held; its own line count is then posted for the ranges after it, and the held lines read with the
        numbers the ranges before it posted. No process reads the file twice.
        """
        settles = settle.Screener(self.dialect) if screen else None
        held: list[tuple[int, int, bytes | None]] = []
        lines = 0
        try:
            handle.seek(start)
            for lines, offset, line in Lines(Bounded(handle, end - start), self.max_doc_bytes, start):
                if line is not None:
                    body = content(line, offset)
                    if body is None:
                        continue
                    if settles is not None and (settled := settles(body)) is not None:
                        yield settled
                        continue
                held.append((lines, offset, line))
            shift = numbering.first_line(lines) - 1
        finally:
            numbering.abandon()  # (when the range could not be read through: the ranges after it count for themselves)
        yield from self.lines(((number + shift, offset, line) for number, offset, line in held), mode="threads",
                              typed=typed)

    def lines(self, lines: Iterable[tuple[int, int, bytes | None]], screen: bool = False,
              mode: str | None = None, typed: bool = False) -> Iterator[Thread | ReadProblem | Settled]:
        """JSONL lines as :class:`Lines` gives them. ``mode``: "threads" (one per line) or "items" (the file is one
        thread), None to tell from the first line read. ``screen``: once the lines are known to be threads,
        those :mod:`.settle` settles come as Settled. ``typed``: threads a typed read indexes
        (:mod:`threadfix.stores.typed_read`) come as :class:`IndexedThread`, their items read only if asked
        for (lint's and report's read)."""
        settles = settle.Screener(self.dialect) if screen else None
        read_typed = typed_read.typed_read_timed if typed and self.dialect in (None, typed_read.DIALECT) else None
        display = self.display
        items_of: ItemLines | None = None
        if mode == "threads":
            self.adopt(THREAD_LINES)
        for number, start, line in lines:
            if line is None:
                yield ReadProblem(f"{display}:{number}", f"line is over the {self.max_doc_bytes // 2**20} MiB limit (raise --max-doc-mb)")
                if mode == "items":
                    items_of = None
                    mode = "broken"
                continue
            body = content(line, start)
            if body is None:
                if mode == "items":
                    items_of.lines.append((start, line, None))
                continue
            bom = len(line) - len(body)
            if settles is not None and mode == "threads" and (settled := settles(body)) is not None:
                yield settled
                continue
            if read_typed is not None and mode != "items" and (timed := read_typed(body)) is not None:
                read, times = timed
                if mode is None:  # an object holding items, or an array of them: a thread per line
                    mode = "threads"
                    self.adopt(THREAD_LINES)
                end = _end(line)
                yield IndexedThread(
                    address=Address(display, line=number, key=None if read.thread_id is None else f"id={read.thread_id}"),
                    items=None, items_key=read.items_key, line=line, cut=(bom, end),  # type: ignore[arg-type]
                    mtime=self.mtime, dialect=self.dialect, locator=Span(start + bom, start + end), indexed=read.index,
                    document_times=times,
                )
                continue
            try:
                value = jsonio.loads(body)
            except jsonio.JsonReadError:
                exc = read_error(body.rstrip(b"\r\n"))  # again without the newline: its column is on this line
                yield ReadProblem(at(f"{display}:{number}", None, exc.column), exc.message)
                if mode == "items":
                    mode = "broken"
                continue
            parts = split_container(value)
            if mode is None:
                mode = "threads" if parts is not None else "items"
                if mode == "items":
                    items_of = ItemLines()
                else:
                    self.adopt(THREAD_LINES)
            if mode == "threads":
                if parts is None:
                    yield ReadProblem(f"{display}:{number}", NO_THREAD)
                    continue
                items, container, key = parts
                end = _end(line)
                yield Thread(
                    address=Address(display, line=number, key=_id_label(container)), items=items,
                    document=container, items_key=key, raw=line[bom:end], mtime=self.mtime,
                    dialect=self.dialect, locator=Span(start + bom, start + end),
                )
            elif mode == "items":
                items_of.lines.append((start, line, value))
        if mode == "items" and items_of is not None:
            self.adopt(items_of)
            kept = items_of.lines
            items = [value for _, _, value in kept if value is not None]
            end = kept[-1][0] + len(kept[-1][1]) if kept else 0
            yield Thread(address=Address(display), items=items, raw=b"", mtime=self.mtime,
                         dialect=self.dialect, locator=Span(0, end))
        elif mode == "broken":
            yield ReadProblem(display, "its lines are the items of one thread and some could not be read, so it "
                              "is left alone")


def _end(line: bytes) -> int:
    """Where a line ends without its newline: what rstrip(b"\r\n") would cut, without copying the line."""
    end = len(line)
    while line[end - 1] in b"\r\n":
        end -= 1
    return end


class IndexedThread(Thread):
    """A thread line a typed read indexed (:mod:`threadfix.stores.typed_read`): an accepted Responses thread
    whose index is :attr:`indexed`. Its items and document are read in full from :attr:`raw` only when something
    asks for them (lint's rules do not, on an accepted thread), so it is every bit the thread a full read gives."""

    #: the index the typed read built (what ``OpenAIResponses().index(items)`` gives)
    indexed: ThreadIndex | None = None
    #: (items, document) once read in full
    full: Any = None
    #: the document's ``updated_at`` and ``created_at`` as the typed read decoded them (its only times: no item
    #: holds one), for a thread's day without reading the document in full
    document_times: typed_read.DocumentTimes = typed_read.NO_TIMES
    #: the dialect a sniff of its items names
    sniffed = typed_read.DIALECT
    #: the line as read, and where its document starts and ends in it: :attr:`raw` is cut from it only when asked
    #: (lint and report never ask on an accepted thread; a copy of every line otherwise)
    line: bytes = b""
    cut: tuple[int, int] = (0, 0)

    @property  # type: ignore[override]
    def raw(self) -> bytes:
        start, end = self.cut
        return self.line[start:end]

    @property  # type: ignore[override]
    def items(self) -> list[Any]:
        return self._full()[0]

    @property  # type: ignore[override]
    def document(self) -> dict[str, Any] | None:
        return self._full()[1]

    def _full(self) -> tuple[list[Any], dict[str, Any] | None, str | None]:
        if self.full is None:
            parts = split_container(jsonio.loads(self.raw))
            assert parts is not None  # the typed read decoded an object holding items, or an array
            self.full = parts
        return self.full

    def index(self, dialect: Any) -> ThreadIndex:
        if self.indexed is not None and dialect.name == self.sniffed and not self.waiting_calls:
            return self.indexed
        return super().index(dialect)


def content(line: bytes, start: int) -> bytes | None:
    """A JSONL line as the parser reads it, or None when it is blank: without the byte-order mark that may
    start the file, and with its newline (whitespace to the parser: no copy of every line)."""
    body = line[3:] if start == 0 and line[:3] == jsonio.BOM else line
    return None if not body or body.isspace() else body


def read_error(body: bytes) -> jsonio.JsonReadError:
    try:
        jsonio.loads(body)
    except jsonio.JsonReadError as exc:
        return exc
    raise AssertionError("a line that failed to parse parsed")  # pragma: no cover


def _id_label(container: dict[str, Any] | None) -> str | None:
    ident = thread_id(container)
    return None if ident is None else f"id={ident}"


def at(where: str, line: int | None, column: int | None) -> str:
    """``where`` with a line and a column, as messages name a place (``file:3:17``)."""
    if line is not None:
        where += f":{line}"
    if column is not None:
        where += f":{column}"
    return where


def lines_are_items(handle: Any) -> bool:
    """Whether a JSONL file's lines are the items of one thread, told from its first line that is not blank (a file
    whose first line cannot be read counts as one: only a whole read can tell what it holds)."""
    for line in handle:
        if line.strip():
            try:
                return split_container(jsonio.loads(line)) is None
            except jsonio.JsonReadError:
                return True
    return False
