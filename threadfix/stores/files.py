"""The file medium: a file named on the command line, or stdin's bytes, and the walk of a folder, which finds
those files and SQLite databases.

A file store opens the bytes and hands them to the container they hold: a JSON document
(:mod:`.document`), JSONL with a thread per line or lines that are one thread's items (:mod:`.jsonl`), or a
coding agent's session (:mod:`.sessions`). Reading streams (one JSONL line at a time) and remembers each
thread's byte range, so that a repair rewrites only the ranges it changed and copies every other byte as it was.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from _thread import _local as thread_local
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from msgspec import Struct

from threadfix import jsonio
from threadfix.errors import InputError, ThreadfixError
from threadfix.given import nothing_there
from threadfix.journal import Entry, UndoOutcome, digest, restore_if_unchanged
from threadfix.model import Thread
from threadfix.stores import settle
from threadfix.stores.atomic import TEMP_PREFIX, Fingerprint, Rewriter, remove_stale_temps
from threadfix.stores.base import LineNumbering, Medium, PartLedger, ReadProblem, Settled, Store, StoreWriter
from threadfix.stores.document import (  # noqa: F401 - ID_KEYS, THREAD_KEYS, split_container, thread_id re-exported
    DOCUMENT,
    ID_KEYS,
    FileContainer,
    THREAD_KEYS,
    Span,
    encode_document,
    read_document,
    split_container,
    thread_id,
)
from threadfix.stores.jsonl import Bounded, JsonlReader, Lines, lines_are_items  # noqa: F401 - Bounded re-exported
from threadfix.stores.ranges import ByteRange, FirstLine
from threadfix.stores.sessions import container_of, session_container

#: the largest single document or JSONL line threadfix parses (parsing needs ~30x its size in memory)
DEFAULT_MAX_DOC_BYTES = 256 * 1024 * 1024
FILE_SUFFIXES = (".json", ".jsonl")
#: the store kind of this module's journal entries (undo finds :func:`undo_entries` by it)
JOURNAL_KIND = "file"
#: a folder walk takes a file of these names as a database when it starts with SQLite's header (named directly,
#: any file with the header is one)
DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".db3")
SQLITE_MAGIC = b"SQLite format 3\x00"
#: the names a folder walk takes up
FOUND_SUFFIXES = FILE_SUFFIXES + DATABASE_SUFFIXES
#: a NUL byte this early means binary (git's test); JSON text never holds a raw NUL
BINARY_SNIFF_BYTES = 8000
READ_BUFFER = 1 << 20
BINARY_MESSAGE = "is not JSON text (it has NUL bytes: binary, or UTF-16); left alone"
#: documents are screened (:mod:`.settle`) once this process has read this many bytes of them: the screen's
#: decoder costs more to build (~5 ms) than it saves on a few small files, and is built once for a folder of many
SCREEN_DOCUMENTS_AFTER = settle.MIN_DOCUMENTS_BYTES
#: the documents of a folder that lists at least this many thread files are screened from the first: what the
#: screen saves on the folder's files (a full parse, the sniff of every dialect) pays for its decoder
SCREEN_FOLDER_FILES = 32
_documents_read = 0


@cache
def _folder_screener(dialect: str | None) -> settle.Screener:
    """One screener for the documents of a process (the files of a folder share a dialect: it is tried first)."""
    return settle.Screener(dialect)


def _read_to_end(fd: int, size: int) -> bytes:
    """Everything left to read from ``fd``, whose file is ``size`` bytes: one read when it gives exactly those bytes
    of the ``size + 1`` asked for (the file's end, as of its ``fstat``: a later change is the compare-and-swap's
    to catch); else more until a read finds the end (a file that grew, shrank, or a short read)."""
    first = os.read(fd, size + 1)
    if len(first) == size:
        return first
    parts = [first]
    while parts[-1]:
        parts.append(os.read(fd, max(size + 1, 1 << 16)))
    return b"".join(parts)


def _binary(head: bytes) -> bool:
    """One error line for a binary file, instead of one per "line" of it."""
    return head.find(b"\x00", 0, BINARY_SNIFF_BYTES) != -1  # (no copy of the head, as a slice would make)


class SessionFile:
    """A coding agent's session file (:mod:`.records`) as the store's container: its app rebuilds the thread."""

    def __init__(self, container: Any, session: Any) -> None:
        self.container = container
        self.session = session

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        if thread is not self.session.thread:
            return encode_document(thread, new_items)  # (not the session's thread: never met in a read)
        from threadfix.stores.records import encode_session

        return encode_session(self.container, self.session, new_items)


class FileStore(Store):
    """One file (or stdin's bytes), in the container it holds: a JSON document, JSONL, or a coding agent's session."""

    def __init__(self, path: Path | str | None, display: str, data: bytes | None = None, *, jsonl: bool | None = None,
                 max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES, dialect: str | None = None) -> None:
        #: the file, as given: a str (a folder walk's) becomes a Path only when asked for (most files of a folder are
        #: read, screened and settled by the string alone: issue #28)
        self._path = path
        self.display = display
        self.data = data
        self.jsonl = jsonl
        self.max_doc_bytes = max_doc_bytes
        self.dialect = dialect

    # (the attributes every store starts with alike are the class's until a store sets its own: a folder of 1,000
    # files creates 1,000 stores, most of which only read, screen and settle their one document)
    #: what the file was as its read began (its compare-and-swap's), from the ``fstat`` of :meth:`_read`'s start
    _stat: os.stat_result | None = None
    mtime: float | None = None
    #: read only this byte range of a JSONL file of threads: (start, end, how its lines are numbered)
    byte_range: tuple[int, int, LineNumbering] | None = None
    #: how the threads read last sit in the file (set as a read finds out): what :meth:`encode` writes through
    container: FileContainer = DOCUMENT
    #: a JSON document a folder walk found: repaired in place in batches with the folder's other files
    batched = False
    #: screened from its first byte, whatever this process read before (a file of a folder of many)
    screen_always = False

    @property
    def fingerprint(self) -> Fingerprint | None:
        """What must not change before the file is replaced, as its read found it (None before a read); made from
        the read's ``fstat`` only when asked, which only a store that writes does."""
        st = self._stat
        return None if st is None else Fingerprint.of(st)

    def _note_stat(self, st: os.stat_result) -> None:
        self._stat = st
        self.mtime = st.st_mtime

    @property
    def path(self) -> Path | None:
        path = self._path
        if path.__class__ is str:
            path = self._path = Path(path)
        return path

    @path.setter
    def path(self, path: Path | None) -> None:
        self._path = path

    @property
    def session(self) -> Any:
        """The coding agent's session the file was read as (:mod:`.records`), or None."""
        return self.container.session if isinstance(self.container, SessionFile) else None

    def _adopt(self, container: FileContainer) -> None:
        self.container = container

    # ------------------------------------------------------------------ reading

    def threads(self) -> Iterator[Thread | ReadProblem]:
        return self._read(screen=False)

    def threads_indexed(self) -> Iterator[Thread | ReadProblem]:
        return self._read(screen=False, typed=True)

    def threads_to_repair(self) -> Iterator[Thread | ReadProblem | Settled]:
        """:meth:`threads`, except that healthy threads (JSONL lines; documents, once a run has read enough of them)
        may come as :class:`Settled` counts, told from a few fields of their items by their dialect's screen
        (:mod:`.settle`)."""
        return self._read(screen=True)

    def _read(self, screen: bool, typed: bool = False) -> Iterator[Thread | ReadProblem | Settled]:
        if self.jsonl is False and self.data is None and self.byte_range is None:
            return self._read_document_file(screen)  # (a folder's file: its own generator, not one more around it)
        return self._read_stream(screen, typed)

    def _read_stream(self, screen: bool, typed: bool) -> Iterator[Thread | ReadProblem | Settled]:
        if self.data is not None:
            yield from self._read_bytes(self.data, screen)
            return
        assert self._path is not None
        # a 1 MiB buffer halves readline's cost on ~20 KB lines (measured against the default 8 KiB)
        opened = self._open(READ_BUFFER)
        if isinstance(opened, ReadProblem):
            yield opened
            return
        handle, st = opened
        with handle:
            if _binary(handle.peek(BINARY_SNIFF_BYTES)):
                yield ReadProblem(self.display, BINARY_MESSAGE)
                return
            container = None if self.byte_range is not None else session_container(handle.peek(READ_BUFFER),
                                                                                   self.path.suffix)
            if container is not None:  # a coding agent's session: its container rebuilds the thread
                yield from self._read_session(container, handle, st.st_size)
                return
            reader = self._jsonl_reader()
            if self.jsonl and self.byte_range is not None:
                start, end, numbering = self.byte_range
                yield from reader.byte_range(handle, start, end, numbering,
                                             screen=screen and settle.screens_documents(self.dialect, end - start),
                                             typed=typed)
            elif self.jsonl:
                yield from reader.lines(Lines(handle, self.max_doc_bytes),
                                        screen=screen and settle.screens_documents(self.dialect, st.st_size),
                                        typed=typed)
            else:
                if (problem := self._too_large(st.st_size, "document")) is not None:
                    yield problem
                    return
                yield from self._read_document(handle.read())

    def _open(self, buffering: int) -> tuple[Any, os.stat_result] | ReadProblem:
        """The file opened for reading, and what it is now (noted for the compare-and-swap of its write)."""
        try:
            handle = open(self.path, "rb", buffering=buffering)  # noqa: SIM115 - the caller closes it
        except OSError as exc:
            return self._unopened(exc)
        st = os.fstat(handle.fileno())
        self._note_stat(st)
        return handle, st

    def _unopened(self, exc: OSError) -> ReadProblem:
        if isinstance(exc, FileNotFoundError):
            return ReadProblem(self.display, nothing_there(str(self.path)))
        if isinstance(exc, IsADirectoryError):
            return ReadProblem(self.display, "is a folder")
        if exc.errno == errno.ELOOP:  # (a folder's link to itself: the rest of the folder is still read)
            return ReadProblem(self.display, nothing_there(str(self.path)))
        return ReadProblem(self.display, reason(exc))

    def _too_large(self, size: int, what: str) -> ReadProblem | None:
        if size <= self.max_doc_bytes:
            return None
        return ReadProblem(self.display, f"is {size // 2**20} MiB, over the {self.max_doc_bytes // 2**20} MiB "
                           f"limit for one {what} (raise --max-doc-mb)")

    def _read_document_file(self, screen: bool) -> Iterator[Thread | ReadProblem | Settled]:
        """A ``.json`` file: read whole, unbuffered, and parsed once (a folder of small files pays per file what
        a JSONL line pays per thread). The session containers look at it first, as at any file."""
        global _documents_read
        try:
            # a descriptor, not a file object: Python's open and readall cost three more system calls a file
            fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            yield self._unopened(exc)
            return
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                yield self._unopened(IsADirectoryError())
                return
            self._note_stat(st)
            size = st.st_size
            if (problem := self._too_large(size, "document")) is not None:
                if _binary(os.read(fd, BINARY_SNIFF_BYTES)):
                    problem = ReadProblem(self.display, BINARY_MESSAGE)
                yield problem
                return
            raw = _read_to_end(fd, size)
        finally:
            os.close(fd)
        if _binary(raw):
            yield ReadProblem(self.display, BINARY_MESSAGE)
            return
        screened = screen and (self.screen_always or _documents_read >= SCREEN_DOCUMENTS_AFTER) and \
            (self.dialect is None or settle.has_screen(self.dialect))
        _documents_read += len(raw)
        known = None  # the dialect a screen knew the thread for, not settled: the full read takes it, unsniffed
        if screened:
            screener = _folder_screener(self.dialect)
            if (settled := screener(raw)) is not None:
                self.container = DOCUMENT  # (no session container holds a thread any dialect's screen settles)
                yield settled
                return
            known = screener.known
        try:
            value = jsonio.loads(raw)
        except jsonio.JsonReadError:
            value = None
        if value is None or len(raw) > READ_BUFFER:  # a session is told from the first MiB, as for JSONL files
            container = session_container(raw[:READ_BUFFER], self.path.suffix)
        else:
            container = container_of([value], self.path.suffix)
        if container is not None:
            yield from self._session(container, raw)
            return
        yield from self._read_document(raw, value, known)

    def _read_session(self, container: Any, handle: Any, size: int) -> Iterator[Thread | ReadProblem]:
        if (problem := self._too_large(size, "session")) is not None:
            yield problem
            return
        yield from self._session(container, handle.read())

    def _session(self, container: Any, data: bytes) -> Iterator[Thread | ReadProblem]:
        from threadfix.stores.records import read_session

        session = read_session(container, data, self.display, self.mtime)
        if isinstance(session, ReadProblem):
            yield session
            return
        self.container = SessionFile(container, session)
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

            yield from self._jsonl_reader().lines(Lines(io.BytesIO(data), self.max_doc_bytes),
                                                  screen=screen and settle.screens_documents(self.dialect, len(data)))
        else:
            yield from self._read_document(data)

    def _jsonl_reader(self) -> JsonlReader:
        return JsonlReader(self.display, self.max_doc_bytes, self.mtime, self.dialect, self._adopt)

    def _read_document(self, raw: bytes, value: Any = None, known: str | None = None) -> Iterator[Thread | ReadProblem]:
        """``known``: the dialect a screen found the document a thread of (what a sniff of it would say)."""
        self.container = DOCUMENT
        thread = read_document(raw, self.display, self.mtime, self.dialect or known, value)
        yield ReadProblem(*thread) if isinstance(thread, tuple) else thread

    # ------------------------------------------------------------------ writing

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        return self.container.encode(thread, new_items)

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
        self._note_stat(st)
        return True

    part_types = (ByteRange,)

    def restrict(self, part: ByteRange, ledger: PartLedger | None = None) -> None:
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

    @property
    def durable(self) -> bool:  # type: ignore[override]
        """Once the new file is in place: an interrupt from then on reports the file's threads as repaired."""
        return self._rewriter is not None and self._rewriter.swapped

    def replace(self, thread: Thread, data: bytes) -> None:
        span: Span = thread.locator
        if self.buffer is not None:
            self.buffer.append(self.store.data[self.pos:span.start])
            self.buffer.append(data)
            self.pos = span.end
        else:
            self.rewriter.splice(span.start, span.end, data)

    @property
    def staged(self) -> Rewriter | None:
        """The temp file of the file's new version, when it has one: what a folder's batch finishes, syncs and swaps
        in step by step with the batch's other files (:mod:`threadfix.batch`), instead of :meth:`commit`."""
        return self._rewriter if self._rewriter is not None and self._rewriter.changed else None

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

    def _read(self, screen: bool, typed: bool = False) -> Iterator[Thread | ReadProblem | Settled]:  # every read: threads and repair's
        yield ReadProblem(self.display, self.reason)


class UnopenedDatabase(FileStore):
    """A database a folder walk found but could not open (no table of threads, locked, damaged): reading it
    raises why, as naming it would, with its exit code, and the rest of the folder is still read."""

    def __init__(self, path: Path, error: ThreadfixError, reopen: Callable[[], Store]) -> None:
        super().__init__(path, str(path))
        self.error = error
        self._reopen = reopen

    def _read(self, screen: bool, typed: bool = False) -> Iterator[Thread | ReadProblem | Settled]:
        raise self.error
        yield  # (a generator, as every read is)

    def reopened(self) -> Store:
        try:
            return self._reopen()
        except ThreadfixError as exc:
            return UnopenedDatabase(self.path, exc, self._reopen)


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
        return lines_are_items(handle)


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

    #: its path, spelled as ``str(path)`` spells it (a walk joins names to it without building a Path for each)
    where: str
    database: bool = False
    #: why it is left alone, unread (reported as a problem of that file)
    refused: str | None = None
    #: a Strands storage, session or agent folder (``path``): its agent folders, each one store, not a file each
    agents: tuple[Path, ...] | None = None
    #: one of many thread files in its folder (at least SCREEN_FOLDER_FILES): screened from the first
    many: bool = False

    @property
    def path(self) -> Path:
        return Path(self.where)


class _KeptWalks(thread_local):
    """The folder walks of the run that keeps them (:func:`walks_kept`), by the path walked, in this thread only;
    ``walks`` None: each walk lists again. (``threading.local`` is this class of ``_thread``: the threading module
    itself would cost every run its import, and nothing else a repair of a folder runs imports it.)"""

    walks: dict[str, list[FolderEntry]] | None = None


_kept = _KeptWalks()


@contextmanager
def walks_kept() -> Iterator[None]:
    """Within the block, a folder walked again gives the entries its first walk in the block found, without listing
    it (or checking its databases' headers) again: a repair walks each folder it is given once to size its inputs
    (how many processes), then again to read them, which cost a folder of 1,000 small files a twentieth of its
    instructions. Each block keeps walks of its own and gives back the ones it found on leaving, so a run started
    while another's outcomes are paused lists afresh, and another thread never sees this one's walks."""
    before = _kept.walks
    _kept.walks = {}
    try:
        yield
    finally:
        _kept.walks = before


def walk_folder(spec: str) -> Iterator[FolderEntry]:
    """:func:`_walk_folder`, or the entries it found for ``spec`` before within :func:`walks_kept`."""
    kept = _kept.walks
    if kept is None:
        return _walk_folder(spec)
    found = kept.get(spec)
    if found is None:
        found = kept[spec] = list(_walk_folder(spec))
    return iter(found)


def _walk_folder(spec: str) -> Iterator[FolderEntry]:
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
    for folder, subfolders, links in _walk(spec, unlisted.append):
        yield from _unlisted(unlisted)
        files = list(links)
        agents = _strands_agents(Path(folder), subfolders, files)
        if agents is not None:
            subfolders[:] = []
            yield FolderEntry(str(Path(folder)), agents=agents)
            continue
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        child = _children_of(folder)
        found = sorted(name for name in files if name.endswith(FOUND_SUFFIXES) and not name.startswith(TEMP_PREFIX))
        many = len(found) >= SCREEN_FOLDER_FILES
        for name in found:
            database = name.endswith(DATABASE_SUFFIXES)
            path = child(name)
            kind = links[name]
            if kind is not True and kind is not False:
                yield FolderEntry(path, False, kind)
            elif kind and (refused := _refused_link(path, root, spec)) is not None:
                yield FolderEntry(path, database, refused)
            elif database and (refused := not_a_database(path)) is not None:
                yield FolderEntry(path, False, refused)
            else:
                yield FolderEntry(path, database, many=many)
    yield from _unlisted(unlisted)


def _refused_link(path: str, root: str, spec: str) -> str | None:
    """Why a folder's symbolic link is left alone: it names nothing, loops, leaves the folder, or names what is no
    file (a pipe would block the walk until someone writes to it); None when it is read."""
    try:
        st = os.stat(path)
    except OSError:
        return nothing_there(path)
    if os.path.commonpath([root, os.path.realpath(path)]) != root:
        return f"is a symlink to a file outside {spec}; name it directly to repair it"
    return None if stat.S_ISREG(st.st_mode) else f"is a symlink to {_what_is(st.st_mode)}, not a file; left alone"


def _what_is(mode: int) -> str:
    """What a file that is not a regular file is, in a message's words."""
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a folder" if stat.S_ISDIR(mode) else "something other than a file"


def _children_of(folder: str) -> Callable[[str], str]:
    """How ``str(Path(folder) / name)`` spells a file of ``folder``, without building a Path per file (1,000 files'
    Paths cost a repair of a folder a few ms, issue #28)."""
    base = str(Path(folder))
    if base == "." or (os.altsep is not None and base.endswith(":")):
        return lambda name: str(Path(base) / name)  # ("x", not "./x"; a drive's own folder: "C:x")
    prefix = base if base.endswith(os.sep) else base + os.sep
    return prefix.__add__


def _walk(top: str, onerror: Callable[[OSError], None]) -> Iterator[tuple[str, list[str], dict[str, bool | str]]]:
    """``os.walk(top, onerror=onerror)``, top down, except that each folder's files come with whether each is a
    symlink, as its listing tells (``os.walk`` gives names only, and the walk would ask the system again for
    each file), or why it is no file to read (a named pipe, a socket, a device). The caller may prune the
    subfolder names, as with ``os.walk``; symlinked folders are not entered."""
    try:
        with os.scandir(top) as listing:
            entries = list(listing)
    except OSError as exc:
        onerror(exc)
        return
    subfolders: list[str] = []
    files: dict[str, bool | str] = {}
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            subfolders.append(entry.name)
        else:
            try:
                if entry.is_symlink():
                    files[entry.name] = True
                elif entry.is_file(follow_symlinks=False):  # (the listing's type: no system call)
                    files[entry.name] = False
                else:  # opening a named pipe would wait for a writer
                    files[entry.name] = f"is {_what_is(entry.stat(follow_symlinks=False).st_mode)}, not a file; left alone"
            except OSError:
                files[entry.name] = os.path.islink(entry.path)
    yield top, subfolders, files
    for name in subfolders:
        path = os.path.join(top, name)
        if not os.path.islink(path):
            yield from _walk(path, onerror)


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
        yield FolderEntry(str(Path(error.filename)), False, f"cannot read this folder ({reason(error)})")


def reason(error: OSError) -> str:
    """An OSError's reason in the words every message uses (``permission denied``)."""
    return (os.strerror(error.errno) if error.errno else str(error)).lower()


def not_a_database(path: Path | str) -> str | None:
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
    if not path.exists():  # (what given.names_nothing tells of a path, before the stores are imported)
        raise InputError(nothing_there(spec), spec)
    yield FileStore(path, spec, jsonl=_looks_jsonl(path), max_doc_bytes=max_doc_bytes, dialect=dialect)


def folder_file_store(entry: FolderEntry, *, max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES, dialect: str | None = None
                      ) -> FileStore:
    """The store of a thread file a folder walk found (read by its suffix), or of one it refused."""
    if entry.refused is not None:
        return RefusedFile(entry.path, entry.refused)
    display = str(entry.where)  # (str of a str is itself; a caller may still hand a Path)
    # (the suffix as Path.suffix has it, without building one more path: a file named ".jsonl" has none)
    jsonl = display.endswith(".jsonl") and not display.endswith(("/.jsonl", "\\.jsonl")) and display != ".jsonl"
    store = FileStore(display, display, jsonl=jsonl, max_doc_bytes=max_doc_bytes, dialect=dialect)
    store.batched = store.jsonl is False
    store.screen_always = entry.many
    return store


class FileMedium(Medium):
    """A file named on the command line, or ``-`` (stdin): a JSON document or JSONL."""

    def open(self, spec: str, options: Any, stdin: Any = None) -> Iterator[Store]:
        return open_file_stores(spec, max_doc_bytes=options.max_doc_bytes, dialect=options.dialect, stdin=stdin)

    def cut(self, spec: str, parts: int, options: Any, by_key: bool) -> list[ByteRange] | None:
        return cut_file(Path(spec), spec, parts)

    def reopen(self, spec: str, options: Any) -> Iterator[Store]:
        # a file that was cut is JSONL by its suffix; one gone since is the read's to say
        yield folder_file_store(FolderEntry(str(Path(spec))), max_doc_bytes=options.max_doc_bytes, dialect=options.dialect)


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
            for number, start, line in Lines(handle, 1 << 40):
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
