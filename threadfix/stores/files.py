"""Threads stored in files: a ``.json`` document, a ``.jsonl`` file, or stdin; and the walk of a folder, which
finds those and SQLite databases.

Reading streams (one JSONL line at a time) and remembers each thread's byte range, so that a repair
rewrites only the ranges it changed and copies every other byte as it was.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct

from threadfix import jsonio
from threadfix.errors import InputError, ThreadfixError, UnrewritableError
from threadfix.journal import Entry, UndoOutcome, digest, restore_if_unchanged
from threadfix.model import Address, Thread
from threadfix.stores import settle
from threadfix.stores.atomic import TEMP_PREFIX, Fingerprint, Rewriter, remove_stale_temps
from threadfix.stores.base import LineNumbering, Medium, PartLedger, ReadProblem, Settled, Store, StoreWriter
from threadfix.stores.ranges import ByteRange, FirstLine
from threadfix.stores.document import ID_KEYS, THREAD_KEYS, encode_document, split_container, thread_id  # noqa: F401
from threadfix.stores.records import Container, Session, encode_session, read_session
from threadfix.stores.sessions import session_container

#: the largest single document or JSONL line threadfix parses (parsing needs ~30x its size in memory)
DEFAULT_MAX_DOC_BYTES = 256 * 1024 * 1024
FILE_SUFFIXES = (".json", ".jsonl")
#: the store kind of this module's journal entries (undo finds :func:`undo_entries` by it)
JOURNAL_KIND = "file"
#: a folder walk takes a file of these names as a database when it starts with SQLite's header (named directly,
#: any file with the header is one)
DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".db3")
SQLITE_MAGIC = b"SQLite format 3\x00"
#: a NUL byte this early means binary (git's test); JSON text never holds a raw NUL
BINARY_SNIFF_BYTES = 8000
READ_BUFFER = 1 << 20
BINARY_MESSAGE = "is not JSON text (it has NUL bytes: binary, or UTF-16); left alone"


def _binary(head: bytes) -> bool:
    """One error line for a binary file, instead of one per "line" of it."""
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


class Span(Struct, frozen=True):
    """A thread's byte range in its file."""

    start: int
    end: int


class _Lines:
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


class FileStore(Store):
    """One file (or stdin's bytes): a JSON document or JSONL."""

    def __init__(self, path: Path | None, display: str, data: bytes | None = None, *, jsonl: bool | None = None,
                 max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES, dialect: str | None = None) -> None:
        self.path = path
        self.display = display
        self.data = data
        self.jsonl = jsonl
        self.max_doc_bytes = max_doc_bytes
        self.dialect = dialect
        self.fingerprint: Fingerprint | None = None
        self.mtime: float | None = None
        #: set while reading a JSONL file whose lines are items (the whole file is one thread)
        self.item_lines: list[tuple[int, bytes, Any]] | None = None
        #: read only this byte range of a JSONL file of threads: (start, end, how its lines are numbered)
        self.byte_range: tuple[int, int, LineNumbering] | None = None
        #: set once the file is read as a coding agent's session (:mod:`.records`)
        self.session: Session | None = None
        self.session_container: Container | None = None

    # ------------------------------------------------------------------ reading

    def threads(self) -> Iterator[Thread | ReadProblem]:
        return self._read(screen=False)

    def threads_to_repair(self) -> Iterator[Thread | ReadProblem | Settled]:
        """:meth:`threads`, except that JSONL lines of healthy OpenAI Responses threads may come as
        :class:`Settled` counts, told from their items' types and call ids alone (:mod:`.settle`)."""
        return self._read(screen=True)

    def _read(self, screen: bool) -> Iterator[Thread | ReadProblem | Settled]:
        if self.data is not None:
            yield from self._read_bytes(self.data, screen)
            return
        assert self.path is not None
        try:
            # a 1 MiB buffer halves readline's cost on ~20 KB lines (measured against the default 8 KiB)
            handle = open(self.path, "rb", buffering=READ_BUFFER)  # noqa: SIM115 - closed below
        except FileNotFoundError:
            yield ReadProblem(self.display, "no such file or folder")
            return
        except IsADirectoryError:
            yield ReadProblem(self.display, "is a folder")
            return
        except PermissionError:
            yield ReadProblem(self.display, "permission denied")
            return
        with handle:
            st = os.fstat(handle.fileno())
            self.fingerprint = Fingerprint.of(st)
            self.mtime = st.st_mtime
            if _binary(handle.peek(BINARY_SNIFF_BYTES)):
                yield ReadProblem(self.display, BINARY_MESSAGE)
                return
            container = None if self.byte_range is not None else session_container(handle.peek(READ_BUFFER),
                                                                                   self.path.suffix)
            if container is not None:  # a coding agent's session: its container rebuilds the thread
                yield from self._read_session(container, handle, st.st_size)
                return
            if self.jsonl and self.byte_range is not None:
                start, end, numbering = self.byte_range
                yield from self._read_range(handle, start, end, numbering,
                                            screen=screen and settle.worth_screening(self.dialect, end - start))
            elif self.jsonl:
                yield from self._read_lines(_Lines(handle, self.max_doc_bytes),
                                            screen=screen and settle.worth_screening(self.dialect, st.st_size))
            else:
                if st.st_size > self.max_doc_bytes:
                    yield ReadProblem(self.display, f"is {st.st_size // 2**20} MiB, over the {self.max_doc_bytes // 2**20} MiB "
                                      "limit for one document (raise --max-doc-mb)")
                    return
                yield from self._read_document(handle.read())

    def _read_session(self, container: Container, handle: Any, size: int) -> Iterator[Thread | ReadProblem]:
        if size > self.max_doc_bytes:
            yield ReadProblem(self.display, f"is {size // 2**20} MiB, over the {self.max_doc_bytes // 2**20} MiB "
                              "limit for one session (raise --max-doc-mb)")
            return
        yield from self._session(container, handle.read())

    def _session(self, container: Container, data: bytes) -> Iterator[Thread | ReadProblem]:
        session = read_session(container, data, self.display, self.mtime)
        if isinstance(session, ReadProblem):
            yield session
            return
        self.session, self.session_container = session, container
        yield session.thread

    def _read_bytes(self, data: bytes, screen: bool = False) -> Iterator[Thread | ReadProblem | Settled]:
        if _binary(data):
            yield ReadProblem(self.display, BINARY_MESSAGE)
            return
        container = session_container(data[:READ_BUFFER], ".jsonl" if b"\n" in data.strip() else ".json")
        if container is not None:  # a session piped in: read as from its file
            yield from self._session(container, data)
            return
        if self.jsonl is None:
            try:
                jsonio.loads(data)
                self.jsonl = False
            except jsonio.JsonReadError:
                self.jsonl = b"\n" in data.strip()
        if self.jsonl:
            import io

            yield from self._read_lines(_Lines(io.BytesIO(data), self.max_doc_bytes),
                                        screen=screen and settle.worth_screening(self.dialect, len(data)))
        else:
            yield from self._read_document(data)

    def _read_document(self, raw: bytes) -> Iterator[Thread | ReadProblem]:
        try:
            value = jsonio.loads(raw)
        except jsonio.JsonReadError as exc:
            yield ReadProblem(_at(self.display, exc.line, exc.column), exc.message)
            return
        parts = split_container(value)
        if parts is None:
            yield ReadProblem(self.display, "holds no thread (expected an array of items, or an object with one of "
                              f"{', '.join(THREAD_KEYS)})")
            return
        items, container, key = parts
        yield Thread(
            address=Address(self.display, key=None), items=items, document=container, items_key=key, raw=raw,
            mtime=self.mtime, dialect=self.dialect, locator=Span(0, len(raw)),
        )

    def _read_range(self, handle: Any, start: int, end: int, numbering: LineNumbering, screen: bool
                    ) -> Iterator[Thread | ReadProblem | Settled]:
        """A ``--jobs`` byte range of a file of threads (one per line: a file of items is never cut).

        Its first line's number is one past the newlines before it, which other processes are reading: the
        range is read through once, its lines numbered from 1, settled threads only counted and the others
        held; its own line count is then posted for the ranges after it, and the held lines read with the
        numbers the ranges before it posted. No process reads the file twice.
        """
        settles = settle.settles_document if screen else None
        held: list[tuple[int, int, bytes | None]] = []
        lines = 0
        try:
            handle.seek(start)
            for lines, offset, line in _Lines(Bounded(handle, end - start), self.max_doc_bytes, start):
                if line is not None:
                    body = _content(line, offset)
                    if body is None:
                        continue
                    if settles is not None and settles(body):
                        yield settle.SETTLED
                        continue
                held.append((lines, offset, line))
            shift = numbering.first_line(lines) - 1
        finally:
            numbering.abandon()  # (when the range could not be read through: the ranges after it count for themselves)
        yield from self._read_lines(((number + shift, offset, line) for number, offset, line in held), mode="threads")

    def _read_lines(self, lines: Iterable[tuple[int, int, bytes | None]], screen: bool = False,
                    mode: str | None = None) -> Iterator[Thread | ReadProblem | Settled]:
        """JSONL lines as :class:`_Lines` gives them. ``mode``: "threads" (one per line) or "items" (the file is one
        thread), None to tell from the first line read. ``screen``: once the lines are known to be threads,
        those :mod:`.settle` settles come as Settled."""
        settles = settle.settles_document if screen else None
        for number, start, line in lines:
            if line is None:
                yield ReadProblem(f"{self.display}:{number}", f"line is over the {self.max_doc_bytes // 2**20} MiB limit (raise --max-doc-mb)")
                if mode == "items":
                    self.item_lines = None
                    mode = "broken"
                continue
            body = _content(line, start)
            if body is None:
                if mode == "items":
                    self.item_lines.append((start, line, None))
                continue
            bom = len(line) - len(body)
            if settles is not None and mode == "threads" and settles(body):
                yield settle.SETTLED
                continue
            try:
                value = jsonio.loads(body)
            except jsonio.JsonReadError:
                exc = _read_error(body.rstrip(b"\r\n"))  # again without the newline: its column is on this line
                yield ReadProblem(_at(f"{self.display}:{number}", None, exc.column), exc.message)
                if mode == "items":
                    mode = "broken"
                continue
            parts = split_container(value)
            if mode is None:
                mode = "threads" if parts is not None else "items"
                if mode == "items":
                    self.item_lines = []
            if mode == "threads":
                if parts is None:
                    yield ReadProblem(f"{self.display}:{number}", "holds no thread (expected an array of items, or an object with one of "
                                      f"{', '.join(THREAD_KEYS)})")
                    continue
                items, container, key = parts
                end = len(line)
                while line[end - 1] in b"\r\n":  # what rstrip(b"\r\n") would cut, without copying the line
                    end -= 1
                yield Thread(
                    address=Address(self.display, line=number, key=_id_label(container)), items=items,
                    document=container, items_key=key, raw=line[bom:end], mtime=self.mtime,
                    dialect=self.dialect, locator=Span(start + bom, start + end),
                )
            elif mode == "items":
                self.item_lines.append((start, line, value))
        if mode == "items" and self.item_lines is not None:
            items = [value for _, _, value in self.item_lines if value is not None]
            end = self.item_lines[-1][0] + len(self.item_lines[-1][1]) if self.item_lines else 0
            yield Thread(address=Address(self.display), items=items, raw=b"", mtime=self.mtime,
                         dialect=self.dialect, locator=Span(0, end))
        elif mode == "broken":
            yield ReadProblem(self.display, "its lines are the items of one thread and some could not be read, so it "
                              "is left alone")

    # ------------------------------------------------------------------ writing

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        if self.session is not None and thread is self.session.thread:
            return encode_session(self.session_container, self.session, new_items)
        if self.item_lines is not None and thread.document is None and thread.address.line is None and self.jsonl:
            return self._encode_item_lines(new_items)
        return encode_document(thread, new_items)

    def _encode_item_lines(self, new_items: Sequence[Any]) -> bytes:
        """Item-per-line JSONL: every original item keeps its exact line (and the blank lines after it)."""
        assert self.item_lines is not None
        ending = b"\r\n" if self.item_lines and self.item_lines[0][1].endswith(b"\r\n") else b"\n"
        leading: list[bytes] = []
        lines_by_item: dict[int, list[bytes]] = {}
        last: list[bytes] = leading
        for _, line, value in self.item_lines:
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
                    raise UnrewritableError(f"left alone: cannot be written back ({exc})", self.display) from None
            if out and not out[-1].endswith(b"\n"):
                out[-1] += ending  # the original last line had no newline and is no longer last
            out.extend(original)
        return b"".join(out)

    def writer(self, dest: Path | None = None) -> StoreWriter:
        return _FileWriter(self, dest)

    def journal_entry(self, thread: Thread, data: bytes) -> Entry | None:
        if self.path is None:
            return None  # stdin: the original is not touched
        locator = {"line": thread.address.line} if thread.address.line is not None else {}
        return Entry(JOURNAL_KIND, os.path.realpath(self.path), str(thread.address), self.before_bytes(thread),
                     digest(data), locator)

    def pin(self) -> bool:
        try:
            st = os.stat(self.path)
        except (OSError, TypeError):
            return False
        self.fingerprint, self.mtime = Fingerprint.of(st), st.st_mtime
        return True

    def restrict(self, part: Any, ledger: PartLedger | None = None) -> None:
        if isinstance(part, ByteRange):
            self.byte_range = (part.start, part.end, FirstLine(self.path, part.start, ledger))

    def whole_bytes(self) -> bytes:
        if self.data is not None:
            return self.data
        with open(self.path, "rb") as handle:
            return handle.read()


class _FileWriter(StoreWriter):
    """Splices changed threads into a copy of the file (or of stdin's bytes), in read order."""

    def __init__(self, store: FileStore, dest: Path | None) -> None:
        self.store = store
        self.dest = dest
        self._rewriter: Rewriter | None = None
        self.buffer: list[bytes] | None = [] if store.data is not None else None
        self.pos = 0

    @property
    def rewriter(self) -> Rewriter:
        if self._rewriter is None:  # the fingerprint exists once reading has started
            assert self.store.path is not None and self.store.fingerprint is not None
            self._rewriter = Rewriter(self.store.path, self.store.fingerprint, self.dest)
            remove_stale_temps(self._rewriter.target.parent)  # what a killed repair left there, once stale
        return self._rewriter

    def replace(self, thread: Thread, data: bytes) -> None:
        span: Span = thread.locator
        if self.buffer is not None:
            self.buffer.append(self.store.data[self.pos:span.start])
            self.buffer.append(data)
            self.pos = span.end
        else:
            self.rewriter.splice(span.start, span.end, data)

    def commit(self) -> bytes | bool:
        if self.buffer is not None:
            self.buffer.append(self.store.data[self.pos:])
            return b"".join(self.buffer)
        if self.store.fingerprint is None:
            return False  # the file could not be read; there is nothing to write
        if self._rewriter is None and self.dest is None:
            return False
        return self.rewriter.commit(always=self.dest is not None)

    def abort(self) -> None:
        if self._rewriter is not None:
            self._rewriter.abort()


class RefusedFile(FileStore):
    """A file a folder walk found but leaves alone, unread: a symlink out of the folder. Following it would
    let whoever can write the folder point repair at any file the user can write."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(path, str(path))
        self.reason = reason

    def _read(self, screen: bool) -> Iterator[Thread | ReadProblem | Settled]:  # every read: threads and repair's
        yield ReadProblem(self.display, self.reason)


class UnopenedDatabase(FileStore):
    """A database a folder walk found but could not open (no table of threads, locked, damaged): reading it
    raises why, as naming it would, with its exit code, and the rest of the folder is still read."""

    def __init__(self, path: Path, error: ThreadfixError, reopen: Callable[[], Store]) -> None:
        super().__init__(path, str(path))
        self.error = error
        self._reopen = reopen

    def _read(self, screen: bool) -> Iterator[Thread | ReadProblem | Settled]:
        raise self.error
        yield  # (a generator, as every read is)

    def reopened(self) -> Store:
        try:
            return self._reopen()
        except ThreadfixError as exc:
            return UnopenedDatabase(self.path, exc, self._reopen)


def _content(line: bytes, start: int) -> bytes | None:
    """A JSONL line as the parser reads it, or None when it is blank: without the byte-order mark that may
    start the file, and with its newline (whitespace to the parser: no copy of every line)."""
    body = line[3:] if start == 0 and line[:3] == jsonio.BOM else line
    return None if not body or body.isspace() else body


def _read_error(body: bytes) -> jsonio.JsonReadError:
    try:
        jsonio.loads(body)
    except jsonio.JsonReadError as exc:
        return exc
    raise AssertionError("a line that failed to parse parsed")  # pragma: no cover


def _id_label(container: dict[str, Any] | None) -> str | None:
    ident = thread_id(container)
    return None if ident is None else f"id={ident}"


def _at(where: str, line: int | None, column: int | None) -> str:
    if line is not None:
        where += f":{line}"
    if column is not None:
        where += f":{column}"
    return where


def cut_file(path: Path, spec: str, parts: int) -> list[ByteRange] | None:
    """A JSONL file of threads (one per line) cut into ``parts`` byte ranges for ``--jobs``; None for any other
    file (a document, or a file whose lines are one thread's items, which is one thread)."""
    if path.suffix != ".jsonl" or _lines_are_items(path):
        return None
    return cut_lines(path, spec, parts)


def _lines_are_items(path: Path) -> bool:
    """A JSONL file whose lines are the items of one thread cannot be cut (nor one whose first line cannot be
    read: a whole read decides whether its lines are threads or items)."""
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                try:
                    return split_container(jsonio.loads(line)) is None
                except jsonio.JsonReadError:
                    return True  # what the file holds is left to a whole read to tell
    return False


def cut_lines(path: Path, spec: str, parts: int) -> list[ByteRange]:
    """About ``parts`` newline-aligned byte ranges (``--jobs`` asks for more than it has workers on large files:
    workers take the next range as they finish, so an uneven range does not leave a core idle, and a repair's
    parent holds one range's results at a time)."""
    size = path.stat().st_size
    bounds = [0]
    with open(path, "rb") as handle:
        for k in range(1, parts):
            handle.seek(max(bounds[-1], size * k // parts))
            handle.readline()  # to the start of the next line
            cut = handle.tell()
            if bounds[-1] < cut < size:
                bounds.append(cut)
    bounds.append(size)
    return [ByteRange(start, end) for start, end in zip(bounds, bounds[1:])]


def is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


class FolderEntry(Struct, frozen=True):
    """A file a folder walk found: a thread file (read by its suffix), a SQLite database, or one it refuses."""

    path: Path
    database: bool = False
    #: why it is left alone, unread (reported as a problem of that file)
    refused: str | None = None
    #: a Strands storage, session or agent folder (``path``): its agent folders, each one store, not a file each
    agents: tuple[Path, ...] | None = None


def walk_folder(spec: str) -> Iterator[FolderEntry]:
    """The files of the folder ``spec``, recursively and sorted: ``.json`` and ``.jsonl`` files, and SQLite
    databases by suffix. Hidden folders and threadfix's own temporary files are skipped. A symlink to a file
    outside the folder is refused: following it would let whoever can write the folder point repair at any file
    the user can write.

    Nothing that cannot be read is passed over in silence (issue #22): a folder that cannot be listed (the one
    named included) and a file named like a database that is not SQLite are refused entries, read as a problem
    naming the path and the reason.

    A Strands session folder it meets (the one named included) is one entry, not walked: its message files are
    one thread per agent (see :mod:`threadfix.stores.strands_folder`)."""
    root = os.path.realpath(spec)
    unlisted: list[OSError] = []
    for folder, subfolders, files in os.walk(spec, onerror=unlisted.append):
        yield from _unlisted(unlisted)
        agents = _strands_agents(Path(folder), subfolders, files)
        if agents is not None:
            subfolders[:] = []
            yield FolderEntry(Path(folder), agents=agents)
            continue
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        for name in sorted(files):
            if name.startswith(TEMP_PREFIX):
                continue
            path = Path(folder) / name
            database = name.endswith(DATABASE_SUFFIXES)
            if not (database or name.endswith(FILE_SUFFIXES)):
                continue
            if path.is_symlink() and os.path.commonpath([root, os.path.realpath(path)]) != root:
                yield FolderEntry(path, database, f"is a symlink to a file outside {spec}; name it directly to "
                                  "repair it")
            elif database and (refused := not_a_database(path)) is not None:
                yield FolderEntry(path, False, refused)
            else:
                yield FolderEntry(path, database)
    yield from _unlisted(unlisted)


def _strands_agents(folder: Path, subfolders: list[str], files: list[str]) -> tuple[Path, ...] | None:
    """The agent folders of ``folder`` when it is a Strands storage, session or agent folder (what the walk listed
    of it tells first whether it may be one); None otherwise, or when it cannot be looked into (walked as any
    folder, which says why)."""
    if not ({"agent.json", "session.json"} & set(files) or any(d.startswith("session_") for d in subfolders)):
        return None
    from threadfix.stores.strands_folder import agent_folders

    try:
        found = agent_folders(folder)
    except OSError:
        return None
    return None if found is None else tuple(found)


def _unlisted(errors: list[OSError]) -> Iterator[FolderEntry]:
    """The folders ``os.walk`` could not list, as refused entries (it passes them over otherwise)."""
    while errors:
        error = errors.pop(0)
        yield FolderEntry(Path(error.filename), False, f"cannot read this folder ({reason(error)})")


def reason(error: OSError) -> str:
    """An OSError's reason in the words every message uses (``permission denied``)."""
    return (os.strerror(error.errno) if error.errno else str(error)).lower()


def not_a_database(path: Path) -> str | None:
    """Why a file named like a SQLite database (``.db``...) cannot be read as one, or None when it is one."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(16)
    except OSError as exc:
        return f"cannot read it ({reason(exc)})"
    if header == SQLITE_MAGIC:
        return None
    if not header:
        return "is empty: named like a SQLite database, but not one (yet)"
    return "is named like a SQLite database but is not one (no SQLite header)"


def open_file_stores(spec: str, *, max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES, dialect: str | None = None,
                     stdin: Any = None) -> Iterator[FileStore]:
    """The file store a command-line path names: a file, or ``-`` (stdin). (A folder: :func:`walk_folder`.)"""
    if spec == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        yield FileStore(None, "<stdin>", stream.read(), max_doc_bytes=max_doc_bytes, dialect=dialect)
        return
    path = Path(spec)
    if not path.exists():
        raise InputError("no such file or folder", spec)
    yield FileStore(path, spec, jsonl=_looks_jsonl(path), max_doc_bytes=max_doc_bytes, dialect=dialect)


def folder_file_store(entry: FolderEntry, *, max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES, dialect: str | None = None
                      ) -> FileStore:
    """The store of a thread file a folder walk found (read by its suffix), or of one it refused."""
    if entry.refused is not None:
        return RefusedFile(entry.path, entry.refused)
    return FileStore(entry.path, str(entry.path), jsonl=entry.path.suffix == ".jsonl", max_doc_bytes=max_doc_bytes,
                     dialect=dialect)


class FileMedium(Medium):
    """A file named on the command line, or ``-`` (stdin): a JSON document or JSONL."""

    def open(self, spec: str, options: Any, stdin: Any = None) -> Iterator[Store]:
        return open_file_stores(spec, max_doc_bytes=options.max_doc_bytes, dialect=options.dialect, stdin=stdin)

    def cut(self, spec: str, parts: int, options: Any, by_key: bool) -> list[ByteRange] | None:
        return cut_file(Path(spec), spec, parts)

    def reopen(self, spec: str, options: Any) -> Iterator[Store]:
        # a file that was cut is JSONL by its suffix; one gone since is the read's to say
        yield folder_file_store(FolderEntry(Path(spec)), max_doc_bytes=options.max_doc_bytes, dialect=options.dialect)


MEDIUM = FileMedium()


def _looks_jsonl(path: Path) -> bool | None:
    if path.suffix == ".jsonl":
        return True
    if path.suffix == ".json":
        return False
    return None if path.stat().st_size < 1 else _sniff_jsonl(path)


def _sniff_jsonl(path: Path) -> bool:
    """An unknown suffix: JSONL when the first line is a whole JSON value and more lines follow."""
    with open(path, "rb") as handle:
        first = handle.readline(1 << 20)
        rest = handle.read(1)
    if not rest:
        return False
    try:
        jsonio.loads(first)
    except jsonio.JsonReadError:
        return False
    return True


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


# --------------------------------------------------------------------------- undo


def undo_entries(path: str, entries: list[Entry], *, dry_run: bool = False) -> Iterator[UndoOutcome]:
    """Restore threads of one JSON/JSONL file in a single atomic replacement (``dry_run``: decide, write nothing)."""
    if not os.path.exists(path):
        for entry in entries:
            yield UndoOutcome(entry.address, "missing", "the file no longer exists")
        return
    fingerprint = Fingerprint.of(os.stat(path))
    splices: list[tuple[int, int, bytes]] = []
    outcomes: list[UndoOutcome] = []
    by_line = {entry.locator["line"]: entry for entry in entries if "line" in entry.locator}
    for entry in entries:
        if "line" not in entry.locator:
            with open(path, "rb") as handle:
                current = handle.read()
            outcomes.append(restore_if_unchanged(entry, current, entry.before,
                                                 lambda e=entry, size=len(current): splices.append((0, size, e.before))))
    if by_line:
        with open(path, "rb") as handle:
            for number, start, line in _Lines(handle, 1 << 40):
                entry = by_line.pop(number, None)
                if entry is None or line is None:
                    continue
                content = line.rstrip(b"\r\n")
                outcomes.append(restore_if_unchanged(entry, content, entry.before, lambda e=entry, s=start, n=len(content):
                                                     splices.append((s, s + n, e.before))))
        outcomes.extend(UndoOutcome(e.address, "missing", "the line is no longer in the file") for e in by_line.values())
    if splices and not dry_run:
        rewriter = Rewriter(Path(path), fingerprint)
        try:
            for start, end, data in sorted(splices):
                rewriter.splice(start, end, data)
            rewriter.commit()
        except BaseException:
            rewriter.abort()
            raise
    yield from outcomes
