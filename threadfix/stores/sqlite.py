"""Threads in a SQLite database: the SQLite adapter of the table engine (:mod:`threadfix.stores.table`).

What is SQLite's own lives here and in :mod:`threadfix.stores.sqlite_layout` (connections by URI,
``mode=ro`` to read so a mistyped path is never created and the journal mode never touched; result
codes mapped to errors; the pragma schema) and :mod:`threadfix.stores.sqlite_screen` (repair's fast
path, SQLite extracting two JSON fields per row): ``BEGIN IMMEDIATE`` to write (a deferred ``BEGIN``
that reads and then writes fails at once with "database is locked"), ``-o`` through SQLite's online
backup, the database's mtime as the newer of the file and its WAL, and the cut of a table for ``--jobs``.
Everything else about tables — layouts, read plans, batching, compare-and-swap, undo — is the engine's.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

from threadfix.errors import ConfigError, InputError, ThreadfixError
from threadfix.journal import Entry, UndoOutcome
from threadfix.stores import sqlite_screen
from threadfix.stores.atomic import TEMP_PREFIX, fsync_folder
from threadfix.stores.base import Medium, Store
from threadfix.stores.sqlite_layout import Schema, connect, recover_hot_journal, sqlite_error
from threadfix.stores.table import (  # noqa: F401 - the engine's tunables and classes, as they were named here
    FLUSH_BYTES, ID_CHUNK, IN_CHUNK, KEYS_PER_PART, STREAM_CHUNK, THREAD_CHUNK, WRITTEN_KEYS_PER_PART,
    ItemRowStore, TableAdapter, TableCopy, TablePart, TableStore, TableWriter, ThreadRowStore, items_blob, open_table_store,
    undo_table_entries,
)

#: the store kind of this module's journal entries (undo finds :func:`undo_entries` by it)
JOURNAL_KIND = "sqlite"
#: a table store over SQLite is the engine's (the names callers knew)
SQLiteStore = TableStore
SQLiteWriter = TableWriter


class SQLiteAdapter(TableAdapter):
    """The table engine's connection to one SQLite database file."""

    placeholder = "?"
    Error = sqlite3.Error
    IntegrityError = sqlite3.IntegrityError
    journal_kind = JOURNAL_KIND

    def __init__(self, path: Path, busy_timeout: float = 5.0, display: str | None = None) -> None:
        self.path = Path(path)
        self.spec = str(path)
        self.display = display if display is not None else str(path)
        self.busy_timeout = busy_timeout

    def connect(self, *, write: bool) -> sqlite3.Connection:
        return connect(self.path, write=write, timeout=self.busy_timeout)

    def error(self, exc: BaseException, where: str) -> ThreadfixError:
        return sqlite_error(exc, where, self.busy_timeout)  # type: ignore[arg-type]

    def schema(self, conn: sqlite3.Connection) -> Schema:
        return Schema(conn)

    def begin_write(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")

    def changed_time(self) -> float | None:
        """When the database last changed: the newer of the file and its WAL."""
        times = []
        for name in (str(self.path), str(self.path) + "-wal"):
            try:
                times.append(os.stat(name).st_mtime)
            except OSError:
                pass
        return max(times) if times else None

    def size(self) -> int | None:
        try:
            return os.stat(self.path).st_size
        except OSError:
            return None

    def location(self) -> str:
        return os.path.realpath(self.path)

    def screen(self, conn: sqlite3.Connection, store: ItemRowStore) -> tuple[dict[Any, int], set[Any], int] | None:
        """SQLite's screen (:mod:`.sqlite_screen`): None when it cannot read JSON as strictly as orjson."""
        layout, options = store.layout, store.options
        json = sqlite_screen.probe_json(conn)
        if json is None:
            return None
        low, high = conn.execute(store._sql.rowid_bounds).fetchone()
        if high is None:
            return {}, set(), -(2**63)
        try:
            ends = sqlite_screen.walk_ends(conn, layout)
        except sqlite3.OperationalError:  # a key that is not UTF-8: a full read says where
            return None
        if ends is None:
            return None
        task = sqlite_screen.Pass(self.path, layout, sqlite_screen.screen_sql(layout, json), self.busy_timeout,
                                  options.max_doc_bytes)
        suspects = sqlite_screen.screen_table(task, low, high, ends, options.jobs, options.spread)
        return None if suspects is None else (ends, suspects, high)

    def check_copy(self, dest: Path) -> None:
        """SQLite copies a live database with its online backup (see :class:`_BackupCopy`)."""

    def copy(self, dest: Path) -> TableCopy:
        return _BackupCopy(self, dest)


class _BackupCopy(TableCopy):
    """``-o``: the database copied with SQLite's online backup (a consistent snapshot of a live database) to a
    temporary file beside ``dest``, renamed over it when done."""

    def __init__(self, adapter: SQLiteAdapter, dest: Path) -> None:
        if dest.exists() and (os.path.realpath(dest) == os.path.realpath(adapter.path) or not dest.is_file()):
            raise ConfigError("--output must name a new file or another regular file, not the database itself", str(dest))
        self.dest = dest
        self.folder = dest.parent if str(dest.parent) else Path(".")
        fd, self.temp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".db", dir=self.folder)
        os.close(fd)
        self.conn = None
        try:
            source = adapter.connect(write=False)
            try:
                self.conn = connect(Path(self.temp), write=True, timeout=adapter.busy_timeout)
                source.backup(self.conn)
            finally:
                source.close()
        except BaseException:
            self.discard()
            raise

    def finish(self) -> None:
        self.conn.close()
        self.conn = None
        os.replace(self.temp, self.dest)
        self.temp = None
        fsync_folder(self.folder)

    def discard(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.temp is not None:
            try:
                os.unlink(self.temp)
            except FileNotFoundError:
                pass
            self.temp = None


class SQLiteMedium(Medium):
    """A SQLite database file (recognised by its header): the table that holds its threads."""

    def open(self, spec: str, options: Any, stdin: Any = None) -> Iterator[TableStore]:
        yield open_sqlite_store(Path(spec), options)

    def cut(self, spec: str, parts: int, options: Any, by_key: bool) -> list[Any] | None:
        """The database's store, opened once, cut as it cuts itself: a framework's by runs of its thread keys
        (:meth:`FrameworkStore.cut`), a table by :func:`cut_table`; None (read whole) when it cannot be opened here
        (a worker says why)."""
        try:
            store = open_sqlite_store(Path(spec), options)
        except (ThreadfixError, sqlite3.Error):
            return None
        if not isinstance(store, TableStore):
            return store.cut(parts)
        try:
            return cut_table(store, parts, by_key)
        except (ThreadfixError, sqlite3.Error):
            return None
        finally:
            store._close()


MEDIUM = SQLiteMedium()


def open_sqlite_store(path: Path, options: Any) -> Store:
    """A store for the database at ``path``: an agent framework's own store when its schema is one (see
    :mod:`threadfix.stores.framework_presets`), else a table whose layout is read from the options or detected."""
    from threadfix.stores.framework_presets import open_framework_store

    framework = open_framework_store(path, options)
    if framework is not None:
        return framework
    adapter = SQLiteAdapter(path, options.busy_timeout)
    recovered = options.writable and recover_hot_journal(path, options.busy_timeout)
    conn = adapter.connect(write=False)
    try:
        encoding = conn.execute("PRAGMA encoding").fetchone()[0]
        if encoding != "UTF-8":
            raise InputError(f"stores text as {encoding}; threadfix reads UTF-8 databases only", adapter.display)
        store = open_table_store(adapter, options, Schema(conn))
    except sqlite3.Error as exc:
        raise adapter.error(exc, adapter.display) from None
    finally:
        conn.close()
    if recovered:  # said on stderr with what was detected (issue #22)
        display = adapter.display
        store.description = "; ".join(filter(None, (
            f"{display}: a write to this database was interrupted; its -journal was rolled back, as SQLite does on "
            "opening it for writing (the database is as it was before that write)",
            store.description and store.description.removeprefix(f"{display}: "))))
    return store


def cut_table(store: TableStore, parts: int, by_key: bool) -> list[TablePart] | None:
    """A table cut into about ``parts`` parts, as a JSONL file of the database's size would be:

    - one thread per row: row id ranges that split its first to last row id evenly (the first and last ranges
      unbounded, so every row is in one; :attr:`TableStore.row_range`);
    - with ``by_key`` (lint and report), one item per row with an index that finds its threads by key: runs of
      its thread keys in key order, as many threads each (:attr:`TableStore.only_keys`); threads begun after this
      are not read (a snapshot);

    None for any other table, or an empty one: it is read whole."""
    if isinstance(store, ThreadRowStore):
        low, high = store._reader().execute(store._sql.rowid_bounds).fetchone()
        if high is None:
            return None
        cuts = sorted({low + (high - low) * k // parts for k in range(1, min(parts, high - low + 1))})
        edges: list[int | None] = [None, *cuts, None]
        return [TablePart(rows=(after, through)) for after, through in pairwise(edges)] if cuts else None
    if not (by_key and store.layout.thread_indexed) or parts < 2:
        return None
    ends = sqlite_screen.walk_ends(store._reader(), store.layout)
    keys = None if ends is None else list(map(sqlite_screen.stored_key, ends))
    if not keys:
        return None
    bounds = [len(keys) * k // parts for k in range(parts + 1)]
    return [TablePart(keys=tuple(keys[start:end]), last=end == len(keys)) for start, end in pairwise(bounds)
            if end > start]


def undo_entries(path: str, entries: list[Entry], *, dry_run: bool = False) -> Iterator[Any]:
    """Put back the threads of one database (see :func:`threadfix.stores.table.undo_table_entries`)."""
    if not os.path.exists(path):
        for entry in entries:
            yield UndoOutcome(entry.address, "missing", "the database no longer exists")
        return
    yield from undo_table_entries(SQLiteAdapter(Path(path), 5.0), entries, dry_run=dry_run)
