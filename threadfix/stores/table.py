"""Threads in a database table, read and repaired while the app may be writing to it: the table engine.

A table store is a container and a medium, each a class. The containers, :class:`ThreadRowStore` (one row
per thread) and :class:`ItemRowStore` (one row per item), hold everything about tables that is not one
database's own: the two layouts' read plans, the screen's place in a repair, batching and
compare-and-swap, the minimal row moves of item writes, and undo; a layout
(:mod:`threadfix.stores.table_layout`) picks the container. The medium is a :class:`TableAdapter`
(connections, identifier quoting, the bytes-of-a-JSON-column expression, read-only opening, busy/lock
error mapping, placeholders, schema introspection, the read phase's fetch, what a column will hold);
:mod:`threadfix.stores.sqlite` and :mod:`threadfix.stores.postgres` are its two. No container branches on
the medium: each difference is one of the adapter's methods.

**Reading** (lint, report, ``--dry-run``, ``--check``, ``--diff``, and repair's own scan) uses a
read-only connection: a mistyped path is never created and the database's settings are never touched.
Rows come in short keyed chunks (``WHERE rowid > ? ORDER BY rowid LIMIT n``), each its own read
transaction, because an open read can block the app's commit (SQLite's rollback journal). JSON is
fetched as bytes (SQLite's ``CAST(col AS BLOB)``) and parsed with orjson.

One row per item is read the cheapest way the table's indexes allow: when an index lists the rows by
thread and order (openai-agents has one), whole threads stream in keyed chunks; when an index only
finds a thread, threads are read one by one by key; with no index, row ids are grouped by thread in one
pass in row order (no sort of an interleaved table), then each thread is read by row id, plus any row
appended to it since. Time columns are read only for threads whose age is asked. Repair reads through
:meth:`ItemRowStore.threads_to_repair`, which lets the adapter's screen (SQLite:
:mod:`threadfix.stores.sqlite_screen`) tell which threads need no repair and reads only the others in
full, and settles the rows of one healthy thread from their items' types and call ids
(:mod:`threadfix.stores.settle`). With ``--jobs``, a table of one thread per row is read as row id
ranges, one per worker; in SQLite a table of one item per row is screened in row id parts, one per
worker, and a repair's workers then read and plan its suspects in parts of their keys
(:meth:`ItemRowStore.parts_to_repair`); in PostgreSQL (no screen) it is read in ranges of thread keys,
each streamed or walked by key within its range. A repair's parent writes what its workers planned.

A key other than an integer (PostgreSQL: a uuid or text key) orders nothing: such a table of one item per
row is read in keyset pages on (thread, order column, key) and needs an index that finds a thread.

**Writing** (repair) uses its own writable connection and transactions that take the write lock at
once (SQLite: ``BEGIN IMMEDIATE``; a deferred ``BEGIN`` that reads and then writes fails at once with
"database is locked") of at most ``batch_size`` threads. Inside the transaction each thread is read
again and compared with what the repair was planned on; a thread the app changed meanwhile is left
alone and reported (run again), never overwritten. Each thread is written under a savepoint, so one
that cannot be written (a constraint) is left alone without losing the rest of the batch. After a full
disk or an I/O error the database may already have rolled back, so the transaction state is checked
before ``ROLLBACK``.

In the one-row-per-item layout, an output inserted in the middle of a thread keeps every other row's
data: when the order is the row id (openai-agents), the thread's later rows are copied, all their
columns intact, to new row ids after it in the same transaction; when it is an integer column, only
the rows that must make room move, and by as little as possible.
"""

from __future__ import annotations

import base64
from abc import ABC, abstractmethod
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson
from msgspec import Struct

from threadfix import jsonio
from threadfix.errors import BusyError, ConfigError, StoreError, ThreadfixError, UnrewritableError
from threadfix.journal import Entry, UndoOutcome, digest, restore_if_unchanged
from threadfix.model import Address, Thread
from threadfix.stores import settle
from threadfix.stores.base import ReadProblem, RepairParts, Settled, Shard, Store, StoreWriter, parse_time
from threadfix.stores.document import THREAD_KEYS, encode_document, split_container
from threadfix.stores.table_layout import Layout, Schema, check_column, check_table, item_layout, shown, thread_layout

#: rows per read transaction, one row per thread (each row may be a large document)
THREAD_CHUNK = 200
#: rows per read transaction when grouping row ids by thread
ID_CHUNK = 5000
#: item rows per read transaction when streaming whole threads (smaller chunks measured faster)
STREAM_CHUNK = 1000
#: row ids bound in one ``IN (...)`` (SQLite allowed at most 999 variables before 3.32)
IN_CHUNK = 500
#: a ``--jobs`` repair reads and plans a screened table's suspects in about this many parts per process (so
#: that a slow part does not leave a core idle, and the parent holds a few parts' plans at a time), each of
#: at least this many threads
PARTS_PER_JOB = 8
KEYS_PER_PART = 16
#: and of at most this many when they are to be written: each changed thread's rows come with its plan, and
#: the parent holds a few parts' plans at a time, so such parts must not grow with the table
WRITTEN_KEYS_PER_PART = 16
#: new JSON queued for writing before a batch is written, however few threads hold it (a changed thread is
#: held whole until then, its items decoded: several times these bytes)
FLUSH_BYTES = 4 * 1024 * 1024
#: times one batch is written before its error stands, when the adapter says the error is worth retrying
BATCH_ATTEMPTS = 3
CHANGED = "changed while threadfix worked on it (the app wrote to it); left alone, run again"
#: the fields of an item row as scanned: row id, order, item bytes, thread
_ROWID, _RAW, _THREAD = itemgetter(0), itemgetter(2), itemgetter(3)


# --------------------------------------------------------------------------- the adapter


class TableAdapter(ABC):
    """What the table engine needs of one database engine, and nothing else.

    Every statement the engine runs is plain SQL built from identifiers the adapter quotes, values bound at
    the adapter's placeholder, and JSON read through the adapter's expressions; so a second engine
    (PostgreSQL) is one module that fills in these methods, and gets the layouts, read plans, batching,
    compare-and-swap, the journal and undo of SQLite's tables unchanged. Connections are DB-API-like: they
    must offer ``execute(sql, params)`` returning a cursor with ``fetchone``/``fetchall``, in autocommit mode
    (the engine opens its transactions itself).
    """

    #: the database as messages name it (a path; never a password from a URL)
    display: str
    #: the database as it was named, to open it again in a ``--jobs`` worker (a path, a URL)
    spec: str
    #: seconds to wait for another writer's lock before :meth:`error` says "locked"
    busy_timeout: float = 5.0
    #: the bound-value marker of the driver's paramstyle ("?" for qmark, "%s" for format)
    placeholder: str = "?"
    #: the driver's exception classes: any error, and a constraint the table refused
    Error: type[BaseException] | tuple[type[BaseException], ...] = Exception
    IntegrityError: type[BaseException] | tuple[type[BaseException], ...] = ()
    #: the journal's name for this kind of store (undo finds its adapter by it)
    journal_kind: str = "table"

    @abstractmethod
    def connect(self, *, write: bool) -> Any:
        """An autocommit connection to the existing database: read-only unless ``write`` (never creates one)."""

    @abstractmethod
    def error(self, exc: BaseException, where: str) -> ThreadfixError:
        """One actionable error for a driver error: BusyError when another process holds the lock (exit code
        for "locked, safe to retry"), StoreError/InputError otherwise."""

    @abstractmethod
    def schema(self, conn: Any) -> Schema:
        """The database's user tables, for layout detection and for checking a journal's names before undo."""

    def quote(self, name: str) -> str:
        """A schema name quoted for SQL (only ever called on names checked against the schema)."""
        return '"' + name.replace('"', '""') + '"'

    def json_bytes(self, column: str) -> str:
        """An expression for the bytes a (quoted) JSON column holds, so no text is decoded before orjson."""
        return f"CAST({column} AS BLOB)"

    def json_type(self, column: str) -> str:
        """An expression for how a (quoted) JSON column's value is stored: 'text', 'blob', or anything else
        (a number, NULL), which holds no thread; a rewrite keeps the type the app reads."""
        return f"typeof({column})"

    def begin_write(self, conn: Any) -> None:
        """Open a write transaction that holds the write lock from its start (a transaction that reads and
        then asks for the lock can fail at once when the app writes meanwhile)."""
        conn.execute("BEGIN")

    def in_transaction(self, conn: Any) -> bool:
        return bool(conn.in_transaction)

    def inserted_id(self, conn: Any, statement: str, values: Sequence[Any], rowid: str) -> int:
        """Run an ``INSERT`` of one row; the new row's id (``rowid``: the quoted name that reaches it)."""
        return conn.execute(statement, values).lastrowid

    def changed_time(self) -> float | None:
        """When the database last changed as a whole (a thread's age when nothing in it tells), or None."""
        return None

    def size(self) -> int | None:
        """The database's size in bytes, if known (is screening one-thread-per-row documents worth it)."""
        return None

    def location(self) -> str:
        """What the journal records as the database's place, to find it again for undo."""
        return self.display

    def screen(self, conn: Any, store: ItemRowStore) -> tuple[dict[Any, int], set[Any], int] | None:
        """Repair's fast path over a table of one item per row (see :meth:`ItemRowStore._screen`): each
        thread's last row id, the suspects and the last row id screened; None (the default): read in full."""
        return None

    def check_copy(self, dest: Path) -> None:
        """ConfigError, before anything is read, when ``-o`` cannot copy this database (the default: it cannot)."""
        raise ConfigError("--output is not supported for this database; repair it in place", str(dest))

    def copy(self, dest: Path) -> TableCopy:
        """A consistent copy of the database at ``dest`` to write ``-o`` into, renamed into place on finish."""
        self.check_copy(dest)
        raise NotImplementedError

    #: what ends a write's compare-and-swap read of a thread's rows, so the rows stay as read until the commit
    #: (PostgreSQL: " FOR UPDATE"; SQLite's write transaction holds the database's lock already)
    for_update: str = ""

    def lock_thread(self, conn: Any, store: TableStore, key: Any) -> None:
        """Inside a write transaction, before one thread is compared and written: keep the app from adding
        rows to it until the commit (SQLite: nothing to do; its write transaction excludes other writers)."""

    def retryable(self, exc: BaseException) -> bool:
        """Whether a batch that failed with ``exc`` (a serialization failure, a deadlock) is tried again."""
        return False

    #: a stream of item rows reads this many times STREAM_CHUNK rows at a time (a server's round trip costs more
    #: than a file's read)
    chunk_scale: int = 1

    def scan(self, conn: Any, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows of one read of the read phase (row ids, keys, orders, JSON bytes, time columns), fetched whole:
        its hot path, which an adapter may fetch its fastest way (PostgreSQL: in binary when the types allow)."""
        return conn.execute(statement, params).fetchall()

    def stored_json(self, store: TableStore, column: str, data: bytes) -> bytes:
        """What the database will hold, and a read give back, for new JSON ``data`` written to ``column`` of the
        store's table, so that the journal, ``--diff`` and a second run see what is stored (SQLite: ``data``;
        PostgreSQL's jsonb: its own text form of the value). ValueError, saying why, when the column cannot hold it."""
        return data

    def between(self, conn: Any, store: TableStore, low: Any, high: Any, count: int) -> list[Any] | None:
        """``count`` increasing values of the store's order column strictly between ``low`` and ``high`` (None:
        after ``low``), to place new rows in a table ordered by a column of times; None (the default) when this
        database cannot say (the new rows are then not written)."""
        return None

    #: what goes before ``VALUES`` when undo puts rows back with the ids they had (PostgreSQL: an identity
    #: column ``GENERATED ALWAYS`` refuses an id given unless told ``OVERRIDING SYSTEM VALUE``)
    restore_ids: str = ""


class TableCopy(ABC):
    """A copy of a database being written for ``-o``: nothing of it is visible until :meth:`finish`."""

    conn: Any

    @abstractmethod
    def finish(self) -> None:
        """Close the copy and put it in place."""

    @abstractmethod
    def discard(self) -> None:
        """Close the copy and remove it."""


# --------------------------------------------------------------------------- locators


class RowLocator(Struct):
    """One row per thread: where the thread's row is, and how its JSON is stored."""

    rowid: int
    key: Any
    #: stored as TEXT (else BLOB): a rewrite keeps the type the app reads
    text: bool


class ItemsLocator(Struct):
    """One row per item: the thread's rows in order, and what the repair plans for them."""

    key: Any
    rowids: list[int]
    raws: list[bytes]
    #: the largest row id in the table when the thread was grouped (later rows were appended since)
    max_rowid: int
    #: every row in full (row id first), read just before writing and compared inside the transaction
    snapshot: list[tuple[Any, ...]] | None = None
    stale: bool = False
    #: the new rows in order: the index of a kept row, or the bytes of a new item
    plan: list[int | bytes] | None = None


class ItemThread(Thread):
    """A one-row-per-item thread: its time columns are read only if its age is asked (most never are)."""

    #: the store that reads its time columns on demand (None once read, or when the table has none)
    store: Any = None

    def exact_time(self) -> float | None:
        store = self.store
        if self.modified is None and store is not None:
            self.store = None
            self.modified = store._thread_time(self)
        return self.modified


class RowThread(Thread):
    """A one-row-per-thread thread: its time columns are parsed only if its age is asked (most never are)."""

    #: its time columns as read, parsed on demand (None once parsed)
    times: Any = None

    def exact_time(self) -> float | None:
        times = self.times
        if self.modified is None and times:
            self.times = None
            self.modified = _row_time(times)
        return self.modified


def items_blob(raws: Sequence[bytes]) -> bytes:
    """A one-row-per-item thread as one document (one item per line): what diffs, hashes and undo see."""
    return b"[\n" + b",\n".join(raws) + b"\n]" if raws else b"[]"


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return b"null" if value is None else str(value).encode()


def _label(key: Any) -> str:
    if isinstance(key, bytes):
        return "x'" + key.hex() + "'"
    return str(key)


def _cell(value: Any) -> Any:
    """A SQLite value as JSON (for the journal): BLOBs and non-finite REALs are tagged."""
    if isinstance(value, bytes):
        return {"$blob": base64.b64encode(value).decode("ascii")}
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return {"$real": repr(value)}
    return value


def _uncell(value: Any) -> Any:
    if isinstance(value, dict):
        if "$blob" in value:
            return base64.b64decode(value["$blob"])
        if "$real" in value:
            return float(value["$real"])
    return value


def _order_key(value: Any) -> tuple[int, Any]:
    """SQLite's order of values of mixed types: NULL, numbers, text, blobs."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    return (2, value) if isinstance(value, str) else (3, value)


def _last_key(rows: list[tuple[Any, ...]]) -> Any:
    """Where a keyset read resumes by default: after the key that leads its chunk's last row."""
    return rows[-1][0]


def _keyset(adapter: TableAdapter, conn: Any, first: str, after: str, size: int,
            resume: Callable[[list[tuple[Any, ...]]], Any] = _last_key, start: tuple[Any, ...] = (),
            upto: tuple[Any, ...] = ()) -> Iterator[list[tuple[Any, ...]]]:
    """Rows in chunks, each its own short read transaction (fetched whole, so no read stays open between
    chunks): ``first`` takes ``(*upto, size)``, ``after`` takes ``(resume(previous chunk), *upto, size)``; ``start``:
    the first chunk is ``after`` the key it holds instead."""
    rows = adapter.scan(conn, after, (*start, *upto, size)) if start else adapter.scan(conn, first, (*upto, size))
    while rows:
        yield rows
        rows = adapter.scan(conn, after, (resume(rows), *upto, size))


def _after_whole_threads(size: int) -> Callable[[list[tuple[Any, ...]]], Any]:
    """Where a stream of item rows in chunks of ``size`` resumes: after the last thread the chunk holds whole (a
    full chunk's last thread may be cut; when it is the only one, it is read by key and the stream goes on after it)."""
    def resume(rows: list[tuple[Any, ...]]) -> Any:
        last = rows[-1][3]
        if len(rows) < size:
            return last
        return next((row[3] for row in reversed(rows) if row[3] != last), last)
    return resume


def _chunks(values: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start:start + size]


# --------------------------------------------------------------------------- the store


def open_table_store(adapter: TableAdapter, options: Any, schema: Schema | None = None) -> TableStore:
    """The store of the table the options name in ``adapter``'s database (detected when they name none):
    a :class:`ThreadRowStore` or an :class:`ItemRowStore`, as its layout says."""
    from threadfix.stores.table_layout import find_layout

    if schema is None:
        conn = adapter.connect(write=False)
        try:
            layout, detected = find_layout(adapter.schema(conn), options)
        except adapter.Error as exc:
            raise adapter.error(exc, adapter.display) from None
        finally:
            conn.close()
    else:
        layout, detected = find_layout(schema, options)
    kind = ThreadRowStore if layout.kind == "thread" else ItemRowStore
    return kind(adapter, layout, options, detected)


class TablePart(Struct, frozen=True):
    """A ``--jobs`` part of a table, as :meth:`TableStore.restrict` takes it: ``rows``, ``(after, through]`` (None:
    unbounded at that end), row ids of one thread per row or thread keys of one item per row whose threads an
    index finds (:attr:`TableStore.row_range`); or ``keys``, the keys of the threads to read of one item per row,
    in order (``last``: the last part, which also says how many rows belong to no thread)."""

    rows: tuple[Any, Any] | None = None
    keys: tuple[Any, ...] | None = None
    last: bool = False


class TableStore(Store):
    """One database table holding threads; the two layouts are its two subclasses."""

    all_or_nothing = False  # batches committed before a failure stay written (and say so)

    def __init__(self, adapter: TableAdapter, layout: Layout, options: Any, detected: bool = False) -> None:
        self.adapter = adapter
        self.display = adapter.display
        self.layout = layout
        self.options = options
        #: what was detected from the schema, for the person at the terminal (None: all given)
        self.description = f"{self.display}: reading {layout.describe()}" if detected else None
        self.dialect = options.dialect or layout.dialect
        self.mtime: float | None = None
        self._conn: Any = None
        self._sql = self.statements(adapter, layout)
        #: a ``--jobs`` worker's share, ``(after, through]`` (None: unbounded at that end): the rows of those row ids
        #: in a table of one thread per row; the threads of those keys in one of one item per row whose threads an
        #: index finds (any other such table is not cut this way: its first share reads it all)
        self.row_range: tuple[Any, Any] | None = None
        #: read only these threads (by key, in this order), a ``--jobs`` worker's share of a table of one item
        #: per row; ``last_part``: the last share, which also says how many rows belong to no thread
        self.only_keys: tuple[Any, ...] | None = None
        self.last_part = False

    #: the statements of this layout (a :class:`_Sql`), built once per store
    statements: Callable[[TableAdapter, Layout], Any]

    @property
    def path(self) -> Any:
        """The database's file, for an adapter that has one (SQLite)."""
        return getattr(self.adapter, "path", None)

    # ------------------------------------------------------------------ reading

    def _reader(self) -> Any:
        if self._conn is None:
            self._conn = self.adapter.connect(write=False)
        return self._conn

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def threads(self) -> Iterator[Thread | ReadProblem]:
        return self._read(screen=False)

    def threads_to_repair(self) -> Iterator[Thread | ReadProblem | Settled]:
        """:meth:`threads`, except that threads the database shows need no repair may come as :class:`Settled`
        counts (see :mod:`threadfix.stores.sqlite_screen`)."""
        return self._read(screen=True)

    def _read(self, screen: bool) -> Iterator[Thread | ReadProblem | Settled]:
        self.mtime = self.adapter.changed_time()
        conn = None
        try:
            conn = self._reader()
            yield from self._rows(conn, screen)
        except self.adapter.Error as exc:
            raise self.adapter.error(exc, self.display) from None
        finally:
            if conn is not None and conn is self._conn:  # (a read left unfinished must not close a later one's)
                self._close()

    @abstractmethod
    def _rows(self, conn: Any, screen: bool) -> Iterator[Thread | ReadProblem | Settled]:
        """The table's threads in order (``screen``: for repair, healthy ones may come as Settled counts)."""

    def _address(self, column: str | None, key: Any) -> Address:
        return Address(self.display, key=f"{self.layout.table}:{column or 'rowid'}={_label(key)}")

    def writer(self, dest: Path | None = None) -> StoreWriter:
        if dest is not None:
            self.adapter.check_copy(dest)
        return TableWriter(self, dest)

    part_types = (TablePart,)

    def restrict(self, part: TablePart, ledger: Any = None) -> None:
        self.row_range, self.only_keys, self.last_part = part.rows, part.keys, part.last

    def _entry(self, thread: Thread, before: bytes, data: bytes, locator: dict[str, Any]) -> Entry:
        layout, *rest = locator.items()
        return Entry(self.adapter.journal_kind, self.adapter.location(), str(thread.address), before, digest(data),
                     dict([layout, ("table", self.layout.table), *rest]))

    def _stored(self, thread: Thread, column: str, data: bytes) -> bytes:
        """New JSON for ``column`` as the database will hold it (:meth:`TableAdapter.stored_json`)."""
        try:
            return self.adapter.stored_json(self, column, data)
        except ValueError as exc:
            raise UnrewritableError(f"left alone: {exc}", str(thread.address)) from None

    def _prepare(self, thread: Thread) -> None:
        """Read what a thread's write must compare, once, before its journal entry and its write (nothing here)."""

    @abstractmethod
    def write(self, conn: Any, thread: Thread, data: bytes) -> None:
        """Write one thread inside the writer's transaction; BusyError when the app changed it since it was
        read, ThreadfixError when it cannot be."""


class ThreadRowStore(TableStore):
    """A table of one thread per row: a JSON column holds the thread, as a file would."""

    statements = staticmethod(lambda adapter, layout: _ThreadSql(adapter, layout))

    def _rows(self, conn: Any, screen: bool) -> Iterator[Thread | ReadProblem | Settled]:
        yield from self._thread_rows(conn, screen and self._documents_settle())

    def _row_address(self, key: Any, rowid: int) -> Address:
        """The address of a row of one thread: by its id column, or by its row id when the table has none."""
        return self._address(self.layout.id_column, key if self.layout.id_column else rowid)

    def _documents_settle(self) -> bool:
        """Whether rows of one thread are screened (:func:`.settle.screens_documents`, on the database's size)."""
        size = self.adapter.size()
        return size is not None and settle.screens_documents(self.dialect, size)

    def _thread_rows(self, conn: Any, screen: bool = False) -> Iterator[Thread | ReadProblem | Settled]:
        """Each row's thread (within :attr:`row_range`); ``screen``: rows :mod:`.settle` settles as Settled."""
        settles = settle.Screener(self.dialect) if screen else None
        sql = self._sql
        for rows in sql.keyset(self.adapter, conn, sql.chunks, self.row_range, THREAD_CHUNK):
            yield from self._row_threads(rows, settles)

    def _row_threads(self, rows: list[tuple[Any, ...]], settles: Callable[[bytes], Settled | None] | None
                     ) -> Iterator[Thread | ReadProblem | Settled]:
        """Each row's thread, in a table of one thread per row; ``settles``: rows it settles come as Settled."""
        for rowid, key, raw, kind, *times in rows:
            if raw is None:
                continue  # a row with no thread yet
            if kind not in ("text", "blob"):
                yield ReadProblem(str(self._row_address(key, rowid)), f"holds a {kind}, not a JSON thread")
                continue
            if len(raw) > self.options.max_doc_bytes:
                yield ReadProblem(str(self._row_address(key, rowid)), f"is {len(raw) // 2**20} MiB, over the "
                                  f"{self.options.max_doc_bytes // 2**20} MiB limit for one document (raise --max-doc-mb)")
                continue
            if settles is not None and (settled := settles(raw)) is not None:
                yield settled  # (no address built: most rows)
                continue
            address = self._row_address(key, rowid)
            try:
                value = jsonio.loads(raw)
            except jsonio.JsonReadError as exc:
                yield ReadProblem(str(address), exc.message)
                continue
            parts = split_container(value)
            if parts is None:
                yield ReadProblem(str(address), "holds no thread (expected an array of items, or an object "
                                  f"with one of {', '.join(THREAD_KEYS)})")
                continue
            items, container, item_key = parts
            thread = RowThread(address=address, items=items, document=container, items_key=item_key, raw=raw,
                               mtime=self.mtime, dialect=self.dialect, locator=RowLocator(rowid, key, kind == "text"),
                               times=times)
            yield thread

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        data = encode_document(thread, new_items)
        _check_text(thread.locator.text, data, thread)
        return self._stored(thread, self.layout.json_column, data)

    def detached(self, thread: Thread) -> Thread:
        """A thread's row is written only if it still holds what the plan was made from, so its bytes go too."""
        return Thread(thread.address, [], raw=thread.raw, locator=thread.locator)

    def journal_entry(self, thread: Thread, data: bytes) -> Entry | None:
        layout, loc = self.layout, thread.locator
        return self._entry(thread, thread.raw, data, {
            "layout": "thread", "json_column": layout.json_column, "id_column": layout.id_column,
            "rowid": loc.rowid, "key": _cell(loc.key), "text": loc.text})

    def write(self, conn: Any, thread: Thread, data: bytes) -> None:
        loc: RowLocator = thread.locator
        row = conn.execute(self._sql.thread_row + self.adapter.for_update, (loc.rowid,)).fetchone()
        if row is None or row[0] != loc.key or _as_bytes(row[1]) != thread.raw or (row[2] == "text") != loc.text:
            raise BusyError(CHANGED, str(thread.address))
        conn.execute(self._sql.update_json, (data.decode("utf-8") if loc.text else data, loc.rowid))


class ItemRowStore(TableStore):
    """A table of one item per row: a thread column names each row's thread, an order column (or the row
    id) orders a thread's rows."""

    statements = staticmethod(lambda adapter, layout: _ItemSql(adapter, layout))

    def __init__(self, adapter: TableAdapter, layout: Layout, options: Any, detected: bool = False) -> None:
        super().__init__(adapter, layout, options, detected)
        #: the screen found this table better read in full (so a full read does not screen it again)
        self._unscreened = False

    def _rows(self, conn: Any, screen: bool) -> Iterator[Thread | ReadProblem | Settled]:
        if self.only_keys is not None:
            yield from self._threads_of(conn, self.only_keys)
            if self.last_part:
                yield from self._orphans(conn)
        elif self.row_range is None or self.layout.thread_indexed or self.row_range[0] is None:
            yield from self._item_threads(conn, screen)

    def _item_threads(self, conn: Any, screen: bool = False) -> Iterator[Thread | ReadProblem | Settled]:
        window = self.row_range if self.layout.thread_indexed else None
        screened = self._screen(conn) if screen and window is None and not self._unscreened else None
        if screened is not None:
            yield from self._threads_screened(conn, *screened)
        elif self.layout.stream_indexed:
            yield from self._threads_streamed(conn, window)
        elif self.layout.thread_indexed:
            yield from self._threads_by_key(conn, window)
        else:
            yield from self._threads_by_rowid(conn)
        if window is None or window[1] is None:  # (said once, by the last share)
            yield from self._orphans(conn)

    def _orphans(self, conn: Any) -> list[ReadProblem]:
        """Rows of one item that belong to no thread, said once after the threads."""
        orphans = conn.execute(self._sql.count_orphans, ()).fetchone()[0]
        if not orphans:
            return []
        return [ReadProblem(f"{self.display}:{self.layout.table}", f"{orphans} row{'s have' if orphans != 1 else ' has'} "
                            f"no {shown(self.layout.thread_column)} and belong{'' if orphans != 1 else 's'} to no thread")]

    def parts_to_repair(self) -> RepairParts | None:
        """A table of one item per row, screened (in workers of its own), in parts of the suspects' keys, in
        key order: reading and planning them in workers too leaves the parent only the walk for thread ends
        and the writing (else about a third of a two-process repair's time was the parent reading and
        planning them alone)."""
        if self.options.jobs < 2 or self.only_keys is not None:
            return None
        try:
            conn = self._reader()
            screened = self._screen(conn)
            self._unscreened = screened is None
            if screened is None:
                return None
            settled, keys = 0, []
            for entry in in_key_order(*screened):
                if isinstance(entry, Settled):
                    settled += entry.count
                else:
                    keys.append(entry)
            problems = self._orphans(conn)
        except self.adapter.Error as exc:
            raise self.adapter.error(exc, self.display) from None
        finally:
            self._close()
        size = max(KEYS_PER_PART, -(-len(keys) // (self.options.jobs * PARTS_PER_JOB)))
        if self.options.writable:
            size = min(size, WRITTEN_KEYS_PER_PART)
        shards = [Shard(self.adapter.spec, TablePart(keys=tuple(keys[at:at + size])), number)
                  for number, at in enumerate(range(0, len(keys), size))]
        return RepairParts(Settled(settled, settle.DIALECT), shards, problems)

    def _threads_streamed(self, conn: Any, window: tuple[Any, Any] | None = None) -> Iterator[Thread | ReadProblem]:
        """An index lists the rows in thread order: read them in chunks of whole threads (the last thread
        of a full chunk may be cut, so it starts the next chunk; a thread bigger than a chunk is read by key);
        only the threads of keys in ``window`` when given."""
        sql, adapter = self._sql, self.adapter
        size = STREAM_CHUNK * adapter.chunk_scale
        for rows in sql.keyset(adapter, conn, sql.stream, window, size, _after_whole_threads(size)):
            groups = [(key, list(group)) for key, group in groupby(rows, key=_THREAD)]
            if len(rows) == size:
                cut_key = groups.pop()[0]
                if not groups:
                    groups = [(cut_key, adapter.scan(conn, sql.items_by_key, (cut_key,)))]
            for key, group in groups:
                yield from self._item_thread(key, group, -(2**63))

    def _threads_by_key(self, conn: Any, window: tuple[Any, Any] | None = None) -> Iterator[Thread | ReadProblem]:
        """The thread column leads an index: walk its keys in chunks (those in ``window`` when given), then read
        each thread by key (streams)."""
        sql, adapter = self._sql, self.adapter
        for keys in sql.keyset(adapter, conn, sql.keys, window, ID_CHUNK):
            for (key,) in keys:
                yield from self._item_thread(key, adapter.scan(conn, sql.items_by_key, (key,)), -(2**63))

    def _threads_by_rowid(self, conn: Any) -> Iterator[Thread | ReadProblem]:
        """No index to find a thread by: group row ids by thread in one pass in row order (no sort of an
        interleaved table), then read each thread's rows by row id, plus any appended since the pass."""
        sql, adapter = self._sql, self.adapter
        groups: dict[Any, array] = {}
        max_rowid = -(2**63)
        for rows in _keyset(adapter, conn, sql.ids_first, sql.ids_after, ID_CHUNK):
            max_rowid = rows[-1][0]
            for rowid, key in rows:
                if key is not None:
                    groups.setdefault(key, array("q")).append(rowid)
        for key in list(groups):
            rows = []
            for chunk in _chunks(groups.pop(key), IN_CHUNK):
                rows.extend(adapter.scan(conn, sql.items_in(len(chunk)), tuple(chunk)))
            rows.extend(adapter.scan(conn, sql.items_appended, (max_rowid, key)))
            rows.sort(key=lambda row: (_order_key(row[1]), row[0]))
            yield from self._item_thread(key, rows, max_rowid)

    def _screen(self, conn: Any) -> tuple[dict[Any, int], set[Any], int] | None:
        """Each thread's last row id, the suspects and the last row id screened; None when this table is better
        read in full: its threads cannot be found by key, keys compare otherwise than in Python, another
        dialect is forced, or the adapter has no screen (or finds it cannot screen this one)."""
        layout = self.layout
        if not (layout.thread_indexed and layout.thread_binary and settle.worth_screening(self.dialect)):
            return None
        return self.adapter.screen(conn, self)

    def _threads_screened(self, conn: Any, ends: dict[Any, int], suspects: set[Any], max_rowid: int
                          ) -> Iterator[Thread | ReadProblem | Settled]:
        """Threads in key order, as a full read gives them: suspects read in full by key, the rest counted."""
        for entry in in_key_order(ends, suspects, max_rowid):
            if isinstance(entry, Settled):
                yield entry
            else:
                yield from self._threads_of(conn, (entry,))

    def _threads_of(self, conn: Any, keys: Iterable[Any]) -> Iterator[Thread | ReadProblem]:
        """The threads of these keys, read in full by key, in this order (a key with no rows any more: none)."""
        items_by_key, scan = self._sql.items_by_key, self.adapter.scan
        for key in keys:
            rows = scan(conn, items_by_key, (key,))
            if rows:
                yield from self._item_thread(key, rows, -(2**63))

    def _item_thread(self, key: Any, rows: list[tuple[Any, ...]], max_rowid: int) -> Iterator[Thread | ReadProblem]:
        """One thread from its rows, in order: (row id, order, item bytes, thread key) each."""
        address = self._address(self.layout.thread_column, key)
        raws = list(map(_RAW, rows))
        try:  # the fast path, in C loops: every row holds JSON, none too big
            if None in raws or max(map(len, raws), default=0) > self.options.max_doc_bytes:
                raise ValueError
            items = list(map(orjson.loads, raws))
        except ValueError:
            items = []
            for problem in self._read_rows(rows, items):
                yield problem
            if len(items) != len(rows):
                yield ReadProblem(str(address), "some of its rows could not be read, so the thread is left alone")
                return
        thread = ItemThread(address=address, items=items, raw=items_blob(raws), mtime=self.mtime, dialect=self.dialect,
                            locator=ItemsLocator(key, list(map(_ROWID, rows)), raws, max_rowid),
                            store=self if self.layout.time_columns else None)
        yield thread

    def _thread_time(self, thread: Thread) -> float | None:
        """The newest time in the time columns of a thread's last rows (rows are in order: the newest last)."""
        rowids = thread.locator.rowids[-3:]
        conn = self._reader()
        return _row_time([value for row in conn.execute(self._sql.times_in(len(rowids)), tuple(rowids)) for value in row])

    def _read_rows(self, rows: list[tuple[Any, ...]], items: list[Any]) -> Iterator[ReadProblem]:
        """The slow path: parse row by row into ``items``, with a problem for each row that cannot be read."""
        for rowid, _order, raw, _key in rows:
            where = f"{self.display}:{self.layout.table}:rowid={rowid}"
            if raw is None:
                yield ReadProblem(where, "holds no item")
            elif len(raw) > self.options.max_doc_bytes:
                yield ReadProblem(where, f"is over the {self.options.max_doc_bytes // 2**20} MiB limit for one item "
                                  "(raise --max-doc-mb)")
            else:
                try:
                    items.append(jsonio.loads(raw))
                except jsonio.JsonReadError as exc:
                    yield ReadProblem(where, exc.message)

    # ------------------------------------------------------------------ planning what to write

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        loc: ItemsLocator = thread.locator
        by_id = {id(item): i for i, item in enumerate(thread.items)}
        style = jsonio.detect_style(loc.raws[0], thread.items[0]) if loc.raws else None
        plan: list[int | bytes] = []
        used: set[int] = set()
        for item in new_items:
            index = by_id.get(id(item))
            if index is not None and index not in used:
                used.add(index)
                plan.append(index)
                continue
            try:
                data = jsonio.dumps(item, style or jsonio.COMPACT)
            except jsonio.JsonWriteError as exc:
                raise UnrewritableError(f"left alone: cannot be written back ({exc})", str(thread.address)) from None
            _check_text(True, data, thread)
            plan.append(self._stored(thread, self.layout.item_column, data))
        loc.plan = plan
        return items_blob([loc.raws[p] if isinstance(p, int) else p for p in plan])

    def _prepare(self, thread: Thread) -> None:
        """Read a one-row-per-item thread's rows in full, once, before its journal entry and its write."""
        loc = thread.locator
        if not isinstance(loc, ItemsLocator) or loc.snapshot is not None:
            return
        rows = self._sql.full_rows(self._reader(), loc.key, loc.rowids, loc.max_rowid)
        loc.snapshot = rows
        item = self._sql.item_index
        if [row[0] for row in rows] != loc.rowids or [_as_bytes(row[item]) for row in rows] != loc.raws:
            loc.stale = True

    def detached(self, thread: Thread) -> Thread:
        """A thread of one item per row keeps its rows' bytes in its locator."""
        return Thread(thread.address, [], raw=b"", locator=thread.locator)

    def journal_entry(self, thread: Thread, data: bytes) -> Entry | None:
        layout = self.layout
        self._prepare(thread)
        items: ItemsLocator = thread.locator
        before = orjson.dumps({"columns": list(layout.copied_columns),
                               "rows": [[_cell(v) for v in row] for row in items.snapshot]})
        return self._entry(thread, before, data, {
            "layout": "item", "thread_column": layout.thread_column, "item_column": layout.item_column,
            "order_column": layout.order_column, "key": _cell(items.key)})

    def write(self, conn: Any, thread: Thread, data: bytes) -> None:
        _ItemWrite(self, conn, thread, data).run()


def _row_time(times: Sequence[Any]) -> float | None:
    """The newest time the rows' time columns give (None: the thread's JSON or the file's mtime will tell)."""
    found = [t for value in times if (t := parse_time(value)) is not None]
    return max(found) if found else None


def _check_text(text: bool, data: bytes, thread: Thread) -> None:
    if text:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise UnrewritableError("left alone: the repaired JSON is not valid UTF-8 text", str(thread.address)) from None


def in_key_order(ends: dict[Any, int], suspects: set[Any], max_rowid: int) -> Iterator[Any]:
    """A screen's result as a read gives it: the walked keys in key order: suspects, and threads written to past ``max_rowid`` since the pass began,
    as keys as the table holds them (to be read in full); the others as Settled counts."""
    settled = 0
    for key, last in ends.items():
        if key in suspects or last > max_rowid:
            if settled:
                yield Settled(settled, settle.DIALECT)
                settled = 0
            yield stored_key(key)
        else:
            settled += 1
    if settled:
        yield Settled(settled, settle.DIALECT)


def stored_key(key: Any) -> Any:
    """A walked or screened key as the table holds it: the screen reads text keys as bytes."""
    return key.decode() if type(key) is bytes else key


# --------------------------------------------------------------------------- statements


class _Sql:
    """The statements every layout needs, built once from names checked against the schema, quoted and bound
    the adapter's way."""

    def __init__(self, adapter: TableAdapter, layout: Layout) -> None:
        self.layout = layout
        q, self.p = adapter.quote, adapter.placeholder
        self.q = q
        t, r = q(layout.table), q(layout.rowid) if layout.rowid not in ("rowid", "_rowid_", "oid") else layout.rowid
        self.table, self.rowid = t, r
        self.times = "".join(f", {q(c)}" for c in layout.time_columns)
        self.copied = ", ".join(q(c) for c in layout.copied_columns)
        #: the first and last row ids (each found in the row id b-tree: two single lookups, not a scan)
        self.rowid_bounds = f"SELECT (SELECT min({r}) FROM {t}), (SELECT max({r}) FROM {t})"

    def marks(self, count: int) -> str:
        """``count`` placeholders, comma-separated."""
        return ", ".join([self.p] * count)

    @staticmethod
    def keyset(adapter: TableAdapter, conn: Any, statements: dict[bool, tuple[str, str]], window: tuple[Any, Any] | None,
               size: int, resume: Callable[[list[tuple[Any, ...]]], Any] = _last_key) -> Iterator[list[tuple[Any, ...]]]:
        """A keyset read in chunks of ``size`` (:func:`_keyset`) kept to the keys ``(after, through]`` of ``window``
        (None: all; either end None: unbounded there): ``statements[bounded]`` are its first and following
        statements, ``bounded`` when they also take a ``through`` bound."""
        low, high = window if window is not None else (None, None)
        first, after = statements[high is not None]
        return _keyset(adapter, conn, first, after, size, resume, () if low is None else (low,),
                       () if high is None else (high,))


class _ThreadSql(_Sql):
    def __init__(self, adapter: TableAdapter, layout: Layout) -> None:
        super().__init__(adapter, layout)
        q, p, t, r = self.q, self.p, self.table, self.rowid
        js = q(layout.json_column)
        ident = q(layout.id_column) if layout.id_column else r
        body, kind = adapter.json_bytes(js), adapter.json_type(js)
        head = f"SELECT {r}, {ident}, {body}, {kind}{self.times} FROM {t}"
        #: the rows in row id order, in chunks (:meth:`keyset`): each row's id, key, JSON bytes, how it is stored and
        #: time columns; with its ``through`` bound too, for a --jobs share of row ids
        self.chunks: dict[bool, tuple[str, str]] = {
            bounded: (f"{head}{' WHERE ' + upto if upto else ''} ORDER BY {r} LIMIT {p}",
                      f"{head} WHERE {r} > {p}{' AND ' + upto if upto else ''} ORDER BY {r} LIMIT {p}")
            for bounded, upto in ((False, ""), (True, f"{r} <= {p}"))}
        self.thread_row = f"SELECT {ident}, {body}, {kind} FROM {t} WHERE {r} = {p}"
        self.update_json = f"UPDATE {t} SET {js} = {p} WHERE {r} = {p}"


class _ItemSql(_Sql):
    def __init__(self, adapter: TableAdapter, layout: Layout) -> None:
        super().__init__(adapter, layout)
        q, p, t, r = self.q, self.p, self.table, self.rowid
        th, it = q(layout.thread_column), q(layout.item_column)
        order = q(layout.order_column) if layout.order_column else r
        self.thread, self.item, self.order = th, it, order
        self.ids_first = f"SELECT {r}, {th} FROM {t} ORDER BY {r} LIMIT {p}"
        self.ids_after = f"SELECT {r}, {th} FROM {t} WHERE {r} > {p} ORDER BY {r} LIMIT {p}"
        self._items_head = f"SELECT {r}, {order}, {adapter.json_bytes(it)}, {th} FROM {t}"
        self._times_head = f"SELECT {', '.join(q(c) for c in layout.time_columns) or 'NULL'} FROM {t}"
        self.items_appended = f"{self._items_head} WHERE {r} > {p} AND {th} = {p}"
        self.items_by_key = f"{self._items_head} WHERE {th} = {p} ORDER BY {order}, {r}"
        # (each with its ``through`` bound too, for a --jobs share of thread keys)
        self.stream: dict[bool, tuple[str, str]] = {}
        self.keys: dict[bool, tuple[str, str]] = {}
        for bounded, upto in ((False, ""), (True, f" AND {th} <= {p}")):
            self.stream[bounded] = tuple(f"{self._items_head} WHERE {where}{upto} ORDER BY {th}, {order}, {r} LIMIT {p}"
                                         for where in (f"{th} IS NOT NULL", f"{th} > {p}"))
            self.keys[bounded] = tuple(f"SELECT DISTINCT {th} FROM {t} WHERE {where}{upto} ORDER BY {th} LIMIT {p}"
                                       for where in (f"{th} IS NOT NULL", f"{th} > {p}"))
        self.count_orphans = f"SELECT count(*) FROM {t} WHERE {th} IS NULL"
        self._full_head = f"SELECT {r}, {self.copied} FROM {t}"
        self.delete_row = f"DELETE FROM {t} WHERE {r} = {p}"
        self.delete_thread = f"DELETE FROM {t} WHERE {th} = {p}"
        self.set_order = f"UPDATE {t} SET {order} = {p} WHERE {r} = {p}"
        self.max_order = f"SELECT max({order}) FROM {t}"
        columns = layout.copied_columns
        self.copy_row = f"INSERT INTO {t} ({self.copied}) VALUES ({self.marks(len(columns))})"
        self.restore_row = (f"INSERT INTO {t} ({r}, {self.copied}) {adapter.restore_ids}"
                            f"VALUES ({self.marks(len(columns) + 1)})")
        #: where the item and the order are in a full row (the row id is at 0)
        self.item_index = 1 + columns.index(layout.item_column)
        self.order_index = 1 + columns.index(layout.order_column) if layout.order_column else 0

    def items_in(self, count: int) -> str:
        return f"{self._items_head} WHERE {self.rowid} IN ({self.marks(count)})"

    def times_in(self, count: int) -> str:
        return f"{self._times_head} WHERE {self.rowid} IN ({self.marks(count)})"

    def full_rows(self, conn: Any, key: Any, rowids: Sequence[int], max_rowid: int, lock: str = ""
                  ) -> list[tuple[Any, ...]]:
        """Every row of one thread in full, in thread order (``lock``: the adapter's :attr:`~TableAdapter.for_update`)."""
        p = self.p
        if self.layout.thread_indexed:
            rows = conn.execute(f"{self._full_head} WHERE {self.thread} = {p}{lock}", (key,)).fetchall()
        else:
            rows = []
            for chunk in _chunks(list(rowids), IN_CHUNK):
                rows.extend(conn.execute(f"{self._full_head} WHERE {self.rowid} IN ({self.marks(len(chunk))}){lock}",
                                         tuple(chunk)).fetchall())
            rows.extend(conn.execute(f"{self._full_head} WHERE {self.rowid} > {p} AND {self.thread} = {p}{lock}",
                                     (max_rowid, key)).fetchall())
            known: set[Any] = set()
            rows = [row for row in rows if not (row[0] in known or known.add(row[0]))]
        index = self.order_index
        rows.sort(key=lambda row: (_order_key(row[index]), row[0]))
        return rows


class _ItemWrite:
    """Lay a planned one-row-per-item thread into its rows, keeping every other row's data."""

    def __init__(self, store: ItemRowStore, conn: Any, thread: Thread, data: bytes) -> None:
        self.store, self.conn, self.thread, self.data = store, conn, thread, data
        self.layout, self.sql = store.layout, store._sql
        self.loc: ItemsLocator = thread.locator
        self.inserted: list[int] = []

    def run(self) -> None:
        loc, sql = self.loc, self.sql
        if loc.snapshot is None:
            self.store._prepare(self.thread)
        current = sql.full_rows(self.conn, loc.key, loc.rowids, loc.max_rowid, self.store.adapter.for_update)
        if loc.stale or current != loc.snapshot:
            raise BusyError(CHANGED, str(self.thread.address))
        plan = loc.plan
        first = 0
        while first < min(len(plan), len(loc.rowids)) and plan[first] == first:
            first += 1
        tail = plan[first:]
        kept = {p for p in tail if isinstance(p, int)}
        removed = [i for i in range(first, len(loc.rowids)) if i not in kept]
        if self.layout.order_kind == "rowid":
            self._by_rowid(first, tail)
        else:
            self._by_column(first, tail, removed)
        written = sql.full_rows(self.conn, loc.key, list(loc.rowids) + self.inserted, loc.max_rowid)
        if items_blob([_as_bytes(row[sql.item_index]) for row in written]) != self.data:
            raise StoreError("left alone: its rows did not read back as planned", str(self.thread.address))

    def _refuse_if_referenced(self) -> None:
        if self.layout.referenced_by:
            raise UnrewritableError(
                f"left alone: rows of {shown(self.layout.table)} are referenced from "
                f"{', '.join(shown(t) for t in self.layout.referenced_by)}, and repairing this thread would move "
                "or delete rows", str(self.thread.address))

    def _delete(self, index: int) -> None:
        self.conn.execute(self.sql.delete_row, (self.loc.rowids[index],))

    def _insert(self, statement: str, values: Sequence[Any]) -> None:
        self.inserted.append(self.store.adapter.inserted_id(self.conn, statement, values, self.sql.rowid))

    def _insert_new(self, data: bytes, neighbour: int, order: int | None = None) -> None:
        """A row for a new item: its thread and item, its order when the order is a column, and the time of
        the row before it (``neighbour``) in time columns that must not be empty; defaults for the rest."""
        sql, loc, layout = self.sql, self.loc, self.layout
        row = loc.snapshot[neighbour]
        columns = [sql.thread, sql.item]
        values = [loc.key, data.decode("utf-8") if isinstance(row[sql.item_index], str) else data]
        if order is not None:
            columns.append(sql.order)
            values.append(order)
        for name in layout.required_times:
            if name == layout.order_column:
                continue
            columns.append(sql.q(name))
            values.append(row[1 + layout.copied_columns.index(name)])
        self._insert(f"INSERT INTO {sql.table} ({', '.join(columns)}) VALUES ({sql.marks(len(values))})", values)

    def _by_rowid(self, first: int, tail: list[int | bytes]) -> None:
        """Order is the row id: the later rows are copied, every column intact, to new row ids after the new ones."""
        loc, sql = self.loc, self.sql
        if first < len(loc.rowids):
            self._refuse_if_referenced()
        for index in range(first, len(loc.rowids)):
            self._delete(index)
        neighbour = first - 1 if first else 0
        for entry in tail:
            if isinstance(entry, int):
                self._insert(sql.copy_row, loc.snapshot[entry][1:])
                neighbour = entry
            else:
                self._insert_new(entry, neighbour)

    def _values_between(self, first: int, tail: list[int | bytes], orders: list[Any]) -> dict[int, Any] | None:
        """Order values for the new items of ``tail`` (by their place in it) when the order column holds no
        integers (a time): each run of new items gets values strictly between its kept neighbours' (after the
        last row's, at the end), as the adapter computes them; None when it cannot (no earlier row, no room)."""
        values: dict[int, Any] = {}
        low = orders[first - 1] if first else None
        run: list[int] = []
        for at, entry in enumerate([*tail, None]):
            if isinstance(entry, bytes):
                run.append(at)
                continue
            high = None if entry is None else orders[entry]
            if run:
                found = None if low is None else self.store.adapter.between(self.conn, self.store, low, high, len(run))
                if found is None:
                    return None
                values.update(zip(run, found))
                run = []
            low = high
        return values

    def _by_column(self, first: int, tail: list[int | bytes], removed: list[int]) -> None:
        """Order is a column: rows that must make room move up by as little as possible; the rest stay."""
        loc, sql, layout = self.loc, self.sql, self.layout
        orders = [row[sql.order_index] for row in loc.snapshot]
        kept = [e for e in tail if isinstance(e, int)]
        reordered = kept != sorted(kept)
        adds = any(not isinstance(e, int) for e in tail)
        if removed:
            self._refuse_if_referenced()
        if layout.order_kind == "other" or not all(isinstance(v, int) and not isinstance(v, bool) for v in orders):
            between = self._values_between(first, tail, orders) if adds and not reordered else {}
            if between is None or reordered:
                # (PostgreSQL places it between its neighbours' times when they leave room: TableAdapter.between)
                raise UnrewritableError(f"left alone: items are ordered by {shown(layout.order_column)}, which does "
                                        "not hold integers, so a new item cannot be placed", str(self.thread.address))
            for index in removed:
                self._delete(index)
            neighbour = first - 1 if first else 0
            for at, entry in enumerate(tail):
                if isinstance(entry, int):
                    neighbour = entry
                else:
                    self._insert_new(entry, neighbour, between[at])
            return
        for index in removed:
            self._delete(index)
        if layout.order_unique:  # a sequence over the whole table (indexed alone): go past its end
            top = self.conn.execute(sql.max_order, ()).fetchone()[0] or 0
            values = [top + 1 + k for k in range(len(tail))]
        else:
            values = []
            prev = orders[first - 1] if first else (orders[0] - 1 if orders else -1)
            for entry in tail:
                value = orders[entry] if isinstance(entry, int) and orders[entry] > prev else prev + 1
                values.append(value)
                prev = value
        moves = [(loc.rowids[e], v) for e, v in zip(tail, values) if isinstance(e, int) and v != orders[e]]
        if moves and not layout.order_unique:
            # out of the way first, past every final value in this thread, so a UNIQUE (thread, position)
            # never trips midway
            past = max(orders) + len(tail) + 1
            for k, (rowid, _) in enumerate(moves):
                self.conn.execute(sql.set_order, (past + k, rowid))
        for rowid, value in moves:
            self.conn.execute(sql.set_order, (value, rowid))
        neighbour = first - 1 if first else 0
        for entry, value in zip(tail, values):
            if isinstance(entry, int):
                neighbour = entry
            else:
                self._insert_new(entry, neighbour, value)


# --------------------------------------------------------------------------- the writer


class TableWriter(StoreWriter):
    """Writes changed threads in short write transactions of ``batch_size`` threads (50), as they come
    (:meth:`due`, :meth:`flush`): it holds one batch of threads, never every changed one of the store.

    With ``dest`` (``-o``), the adapter first makes a consistent copy of the database there (SQLite: its
    online backup of a live database), the changes are written to the copy, and the copy is put in place
    at :meth:`commit`; the original is only read.
    """

    def __init__(self, store: TableStore, dest: Path | None = None) -> None:
        self.store = store
        self.dest = dest
        self.queue: list[tuple[Thread, bytes]] = []
        #: bytes of new JSON in the queue (a few huge threads make a batch too)
        self.queued_bytes = 0
        self.written = 0
        self._unwritten: list[tuple[Thread, ThreadfixError]] = []
        self._conn: Any = None
        self._copy: TableCopy | None = None

    @property
    def durable(self) -> bool:  # type: ignore[override]
        """In place, every committed batch is; a copy (``-o``) is nothing until it is put into place."""
        return self.written > 0 and self.dest is None

    def replace(self, thread: Thread, data: bytes) -> None:
        self.store._prepare(thread)
        self.queue.append((thread, data))
        self.queued_bytes += len(data)

    def due(self) -> bool:
        return len(self.queue) >= max(1, self.store.options.batch_size) or self.queued_bytes >= FLUSH_BYTES

    def unwritten(self) -> list[tuple[Thread, ThreadfixError]]:
        unwritten, self._unwritten = self._unwritten, []
        return unwritten

    def flush(self) -> None:
        """Write the queued threads now."""
        pending, self.queue, self.queued_bytes = self.queue, [], 0
        if pending:
            self._write(pending)

    def commit(self) -> bool:
        try:
            if self.queue or (self.dest is not None and self._conn is None):  # (-o: the copy, changed or not)
                self._write(self.queue)
                self.queue = []
            if self._copy is not None:
                self._conn = None
                copy, self._copy = self._copy, None
                copy.finish()
        finally:
            self.abort()
        return self.written > 0 or self.dest is not None

    def _write(self, pending: list[tuple[Thread, bytes]]) -> None:
        """Write ``pending`` in transactions of ``batch_size`` threads; a thread that cannot be written (changed
        by the app meanwhile, refused by the table) is rolled back alone and left for :meth:`unwritten`."""
        store, adapter = self.store, self.store.adapter
        where = str(self.dest) if self.dest is not None else store.display
        size = max(1, store.options.batch_size)
        batch: list[tuple[Thread, bytes]] = []
        committing, done, left = False, 0, []
        try:
            conn = self._conn if self._conn is not None else self._open()
            while pending:
                batch, pending = pending[:size], pending[size:]
                for attempt in range(BATCH_ATTEMPTS):
                    try:
                        left = self._batch(conn, batch)
                        done = len(batch) - len(left)
                        committing = True
                        conn.execute("COMMIT")
                        committing = False
                        break
                    except adapter.Error as exc:
                        committing = False
                        if attempt + 1 == BATCH_ATTEMPTS or not adapter.retryable(exc):
                            raise
                        self._rollback()  # (a deadlock or a serialization failure: nothing of it was written)
                self._unwritten.extend(left)
                self.written += done
                batch = []
        except BaseException as exc:
            if committing and self._conn is not None and not adapter.in_transaction(self._conn):
                # an interrupt that arrived during COMMIT is raised once it returns: the batch is written (issue #22)
                self._unwritten.extend(left)
                self.written += done
                batch = []
            self._rollback()
            error = adapter.error(exc, where) if isinstance(exc, adapter.Error) else None
            reason = error or (exc if isinstance(exc, ThreadfixError) else StoreError("not written: interrupted", where))
            marked = {id(t) for t, _ in self._unwritten}
            self._unwritten.extend((t, reason) for t, _ in batch + pending if id(t) not in marked)
            if error is not None:
                raise error from None
            raise

    def _batch(self, conn: Any, batch: list[tuple[Thread, bytes]]) -> list[tuple[Thread, ThreadfixError]]:
        """One write transaction, up to its COMMIT (the caller's); each thread under a savepoint, so one the table
        refuses is left alone by itself: the threads left alone, and why."""
        store, adapter = self.store, self.store.adapter
        left: list[tuple[Thread, ThreadfixError]] = []
        adapter.begin_write(conn)
        for thread, data in batch:
            conn.execute("SAVEPOINT threadfix")
            try:
                adapter.lock_thread(conn, store, thread.locator.key)
                store.write(conn, thread, data)
            except (ThreadfixError, *_classes(adapter.IntegrityError)) as exc:
                conn.execute("ROLLBACK TO SAVEPOINT threadfix")
                if not isinstance(exc, ThreadfixError):
                    exc = StoreError(f"left alone: the table refused the change ({exc})", str(thread.address))
                left.append((thread, exc))
            conn.execute("RELEASE SAVEPOINT threadfix")
        return left

    def _open(self) -> Any:
        adapter = self.store.adapter
        if self.dest is None:
            self._conn = adapter.connect(write=True)
        else:
            self._copy = adapter.copy(self.dest)
            self._conn = self._copy.conn
        return self._conn

    def _rollback(self) -> None:
        # after a full disk or an I/O error the database may have rolled back already; ROLLBACK would then fail
        # and hide the real error
        adapter = self.store.adapter
        if self._conn is not None and adapter.in_transaction(self._conn):
            try:
                self._conn.execute("ROLLBACK")
            except adapter.Error:
                pass

    def abort(self) -> None:
        self._rollback()
        self.store._close()
        if self._copy is not None:
            copy, self._copy, self._conn = self._copy, None, None
            copy.discard()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _classes(errors: type[BaseException] | tuple[type[BaseException], ...]) -> tuple[type[BaseException], ...]:
    return errors if isinstance(errors, tuple) else (errors,)


# --------------------------------------------------------------------------- undo


def undo_table_entries(adapter: TableAdapter, entries: list[Entry], *, dry_run: bool = False) -> Iterator[Any]:
    """Put back the threads of one database, newest repair first, in one write transaction.

    A thread is restored only while it holds exactly what the repair wrote; one the app changed since
    is refused, and one that already holds its original counts as restored. ``dry_run``: the same, rolled back.
    """
    conn = adapter.connect(write=True)
    outcomes = []
    try:
        schema = adapter.schema(conn)
        adapter.begin_write(conn)
        for entry in reversed(entries):
            conn.execute("SAVEPOINT threadfix")
            try:
                outcome = _undo_one(adapter, conn, schema, entry)
            except _classes(adapter.IntegrityError) as exc:
                conn.execute("ROLLBACK TO SAVEPOINT threadfix")
                outcome = UndoOutcome(entry.address, "refused", f"the table refused the restore ({exc})")
            except ThreadfixError as exc:
                conn.execute("ROLLBACK TO SAVEPOINT threadfix")
                outcome = UndoOutcome(entry.address, "refused", exc.message)
            conn.execute("RELEASE SAVEPOINT threadfix")
            outcomes.append(outcome)
        conn.execute("ROLLBACK" if dry_run else "COMMIT")
    except adapter.Error as exc:
        if adapter.in_transaction(conn):
            conn.execute("ROLLBACK")
        raise adapter.error(exc, adapter.display) from None
    finally:
        if adapter.in_transaction(conn):
            conn.execute("ROLLBACK")
        conn.close()
    yield from reversed(outcomes)


def _undo_layout(schema: Schema, locator: dict[str, Any]) -> Layout:
    """The layout a journal entry names, every name checked against the schema as it is now."""
    table = check_table(schema, str(locator.get("table")))
    if locator.get("layout") == "thread":
        check_column(table, locator["json_column"], "--json-column")
        check_column(table, locator.get("id_column"), "--id-column")
        return thread_layout(table, locator["json_column"], locator.get("id_column"))
    for name in ("item_column", "thread_column", "order_column"):
        check_column(table, locator.get(name), f"--{name.replace('_', '-')}")
    return item_layout(table, locator["item_column"], locator["thread_column"], locator.get("order_column"))


def _undo_one(adapter: TableAdapter, conn: Any, schema: Schema, entry: Entry) -> Any:
    try:
        layout = _undo_layout(schema, entry.locator)
    except (ConfigError, KeyError) as exc:
        return UndoOutcome(entry.address, "missing", f"the table changed since the repair ({exc})")
    key = _uncell(entry.locator.get("key"))
    if layout.kind == "thread":
        sql = _ThreadSql(adapter, layout)
        row = conn.execute(sql.thread_row, (entry.locator["rowid"],)).fetchone()
        if row is None or row[0] != key:
            return UndoOutcome(entry.address, "missing", "the row is no longer in the table")
        return restore_if_unchanged(entry, _as_bytes(row[1]), entry.before, lambda: conn.execute(sql.update_json, (
            entry.before.decode("utf-8") if entry.locator.get("text") else entry.before, entry.locator["rowid"])))
    sql = _ItemSql(adapter, layout)
    before = orjson.loads(entry.before)
    if list(before["columns"]) != list(layout.copied_columns):
        return UndoOutcome(entry.address, "refused", "the table's columns changed since the repair")
    rows = [[_uncell(v) for v in row] for row in before["rows"]]
    current = sql.full_rows(conn, key, [], -(2**63))
    original = items_blob([_as_bytes(row[sql.item_index]) for row in rows])

    def restore() -> None:
        conn.execute(sql.delete_thread, (key,))
        for row in rows:
            conn.execute(sql.restore_row, row)

    return restore_if_unchanged(entry, items_blob([_as_bytes(row[sql.item_index]) for row in current]), original, restore)
