"""Threads in a live PostgreSQL database: the PostgreSQL adapter of the table engine (:mod:`threadfix.stores.table`).

The engine's layouts, read plans, batching, compare-and-swap, journal and undo are SQLite's; what is
PostgreSQL's own lives here and in :mod:`threadfix.stores.postgres_layout`:

- **Naming**: a libpq URL, passed through to libpq (``PG*`` variables, ``~/.pgpass``, service files);
  every message, journal entry and JSON output names it without its password.
- **Reading** never gets in the app's way: a read-only session in autocommit, so each keyset chunk is one
  statement, one short transaction, taking no lock beyond a ``SELECT``'s, under a ``statement_timeout``.
  JSON comes as its UTF-8 bytes (``convert_to(col::text, 'UTF8')``). With ``--jobs N`` the table is cut
  into N key ranges (row keys, or thread keys for one row per item), each read on a connection of its own
  in a thread of its own, a few chunks ahead, and given out in key order.
- **Writing**: the engine's short batched transactions, each thread's rows re-read ``FOR UPDATE`` and
  compared before it is written. One row per item also keeps the app from appending to the thread until
  the commit: the parent row is locked ``FOR UPDATE`` when the thread column references one (an insert's
  foreign-key check waits on it; the openai-agents ``SQLAlchemySession`` locks it too), else the table
  ``IN SHARE ROW EXCLUSIVE MODE`` (the app's writes wait for the batch, its reads do not). ``lock_timeout``
  is ``--busy-timeout`` (exit 75); serialization failures and deadlocks retry the batch. New rows get
  their ids from the key's sequence or identity.
- **jsonb** keeps values, not key order or spacing: it is read, compared and journaled in PostgreSQL's own
  text form of the value (so the comparison is by value), and new JSON is put in that form before it is
  hashed, so the journal, ``--diff`` and a second run see what is stored.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from threadfix.errors import ConfigError, ThreadfixError, UnrewritableError
from threadfix.journal import Entry
from threadfix.model import Thread
from threadfix.stores.base import Medium, ReadProblem
from threadfix.stores.postgres_layout import RETRIED, Schema, connect, driver, pg_error, q, redact, split_table
from threadfix.stores import table
from threadfix.stores.table import ItemRowStore, TableAdapter, TableStore, ThreadRowStore, items_blob, \
    undo_table_entries
from threadfix.stores.table_layout import find_layout, shown

#: chunks (of about 50 threads) a --jobs part's reader may hold ahead of the thread being given out
AHEAD = 4
JOURNAL_KIND = "postgres"
INTEGER_TYPES = ("smallint", "integer", "bigint")
#: column types psycopg loads from PostgreSQL's binary form as the same values as from its text form (so a read
#: of only these, and JSON as bytea, is fetched in binary: no hex of the JSON bytes to encode and decode)
BINARY_SAME = (*INTEGER_TYPES, "text", "boolean", "character varying")


class PostgresAdapter(TableAdapter):
    """The table engine's connection to one PostgreSQL database (one schema of it)."""

    placeholder = "%s"
    journal_kind = JOURNAL_KIND
    for_update = " FOR UPDATE"
    # (allowed, and without effect, on a serial or a BY DEFAULT identity key)
    restore_ids = "OVERRIDING SYSTEM VALUE "
    # (a round trip per 1000 rows measured a fifth of an item table's read; 5000 rows of items is a few MB)
    chunk_scale = 5
    #: the read phase's reads are fetched in binary (set when the store's columns allow, see BINARY_SAME)
    binary_scan = False

    def __init__(self, url: str, busy_timeout: float = 5.0, search_path: str | None = None) -> None:
        psycopg = driver()
        self.url = url
        self.display = redact(url)
        self.busy_timeout = busy_timeout
        #: the schema ``--table schema.table`` named (None: the session's own search_path)
        self.search_path = search_path
        self.Error = psycopg.Error
        # (a value the column refuses, a NUL in jsonb: that thread is left alone, not the batch)
        self.IntegrityError = (psycopg.IntegrityError, psycopg.DataError)
        #: per table: the statement that locks a thread's parent row, or None for the table's own lock
        self._parents: dict[str, str | None] = {}

    def connect(self, *, write: bool) -> Any:
        return connect(self.url, write=write, timeout=self.busy_timeout, search_path=self.search_path)

    def scan(self, conn: Any, statement: str, params: Any) -> list[tuple[Any, ...]]:
        return conn.execute(statement, params, binary=self.binary_scan).fetchall()

    def error(self, exc: BaseException, where: str) -> ThreadfixError:
        return pg_error(exc, self.url, self.busy_timeout)

    def schema(self, conn: Any) -> Schema:
        return Schema(conn)

    def quote(self, name: str) -> str:
        return q(name)

    def json_bytes(self, column: str) -> str:
        return f"convert_to({column}::text, 'UTF8')"

    def json_type(self, column: str) -> str:
        return "'text'"  # json, jsonb and text alike: written back as text, which the column parses

    def in_transaction(self, conn: Any) -> bool:
        from psycopg.pq import TransactionStatus

        return not conn.closed and conn.info.transaction_status != TransactionStatus.IDLE

    def inserted_id(self, conn: Any, statement: str, values: Any, rowid: str) -> int:
        return conn.execute(f"{statement} RETURNING {rowid}", values).fetchone()[0]

    def location(self) -> str:
        """The URL without its password, and the schema ``--table`` named after ``#`` (undo's way back)."""
        return self.display + (f"#{self.search_path}" if self.search_path is not None else "")

    def changed_time(self) -> float | None:
        """Now: nothing in PostgreSQL says when a table last changed, so a thread with no time of its own (no time
        column, no times in its items) counts as just changed, and ``--min-age`` leaves it alone, as a live
        SQLite database's mtime does."""
        return time.time()

    def retryable(self, exc: BaseException) -> bool:
        return getattr(exc, "sqlstate", None) in RETRIED

    def lock_thread(self, conn: Any, store: TableStore, key: Any) -> None:
        layout = store.layout
        if layout.kind != "item":
            return  # the row itself is locked by the compare
        if layout.table not in self._parents:
            parent = Schema(conn).parent_of(layout.table, layout.thread_column)
            self._parents[layout.table] = None if parent is None else (
                f"SELECT 1 FROM {parent[0]} WHERE {q(parent[1])} = %s FOR UPDATE")
        statement = self._parents[layout.table]
        if statement is not None:
            conn.execute(statement, (key,))
        else:  # (taken once per transaction: the first thread's)
            conn.execute(f"LOCK TABLE {q(layout.table)} IN SHARE ROW EXCLUSIVE MODE")


def open_postgres_store(url: str, options: Any) -> TableStore:
    """A store for the table of the database the URL names; its layout is read from the options or detected."""
    psycopg = driver()
    adapter = PostgresAdapter(url, options.busy_timeout)
    conn = adapter.connect(write=False)
    try:
        if options.table is not None:
            space, table = split_table(conn, options.table)
            if space is not None:
                found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (space,)).fetchone()
                if found is None:
                    raise ConfigError(f"no schema named {shown(space)} (from --table {shown(options.table)})")
                adapter.search_path = space
                conn.execute("SELECT set_config('search_path', %s, false)", (q(space),))
            options = replace(options, table=table)
        schema = Schema(conn)
        layout, detected = find_layout(schema, options)
        columns = {c.name: c.type for c in schema.table(layout.table).columns}
        key = columns[layout.rowid]
    except psycopg.Error as exc:
        raise adapter.error(exc, adapter.display) from None
    finally:
        conn.close()
    if layout.kind == "item" and key not in INTEGER_TYPES:
        raise ConfigError(f"table {shown(layout.table)} holds one item per row but its primary key "
                          f"{shown(layout.rowid)} is {key}: threadfix needs an integer one (a serial or identity "
                          "column) to give new rows their place", adapter.display)
    if layout.preset == "openai-agents SQLiteSession":
        # the same tables, written by SQLAlchemySession: read in id order (the SDK orders by created_at, then
        # id; the two agree but for two turns of one session committed out of their start order), and a new
        # row takes its neighbour's created_at, which the SDK's order reads first (its default, now, would put
        # an inserted output after every later item)
        layout = replace(layout, preset="openai-agents SQLAlchemySession", required_times=("created_at",))
    scanned = ([layout.rowid, layout.id_column, *layout.time_columns] if layout.kind == "thread" else
               [layout.rowid, layout.order_column, layout.thread_column])
    adapter.binary_scan = all(columns[c].split("(")[0] in BINARY_SAME for c in scanned if c is not None)
    kind = PostgresThreadStore if layout.kind == "thread" else PostgresItemStore
    return kind(adapter, layout, options, detected)


class _Postgres:
    """What both layouts' PostgreSQL stores add to the engine's: jsonb as stored, ``--jobs`` by key ranges."""

    adapter: PostgresAdapter

    def _as_stored(self, data: bytes, thread: Thread) -> bytes:
        """What PostgreSQL will hold for ``data``: itself, or for jsonb its text form of the value."""
        if not self._jsonb:
            return data
        try:
            (stored,) = self._reader().execute("SELECT convert_to(%s::jsonb::text, 'UTF8')",
                                               (data.decode("utf-8"),)).fetchone()
        except (UnicodeDecodeError, driver().DataError) as exc:
            raise UnrewritableError(f"left alone: jsonb cannot hold the repaired JSON ({' '.join(str(exc).split())})",
                                    str(thread.address)) from None
        return bytes(stored)

    @property
    def _jsonb(self) -> bool:
        if not hasattr(self, "_jsonb_checked"):
            column = self.layout.json_column or self.layout.item_column
            kind = Schema(self._reader()).table(self.layout.table).column(column).type
            self._jsonb_checked = kind == "jsonb"
        return self._jsonb_checked

    def writer(self, dest: Path | None = None) -> Any:
        if dest is not None:
            raise ConfigError("--output cannot copy a PostgreSQL database; repair it in place (undo puts it back), "
                              "or look first with --dry-run or --diff", self.display)
        return super().writer(None)  # type: ignore[misc]

    def threads(self) -> Iterator[Thread | ReadProblem]:
        jobs = max(1, self.options.jobs)
        if jobs < 2 or self.row_range is not None or self.only_keys is not None:
            return super().threads()  # type: ignore[misc]
        try:
            parts = self._parts(jobs)
        except self.adapter.Error as exc:
            raise self.adapter.error(exc, self.display) from None
        finally:
            self._close()
        if parts is None:
            return super().threads()  # type: ignore[misc]
        return _in_order(parts)


class PostgresThreadStore(_Postgres, ThreadRowStore):
    """A table of one thread per row in a json, jsonb or text column."""

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        return self._as_stored(super().encode(thread, new_items), thread)

    def _parts(self, jobs: int) -> list[TableStore] | None:
        """``jobs`` stores of row key ranges ``(after, through]`` of about as many rows each."""
        key = q(self.layout.rowid)
        cuts = [cut for (cut,) in self._reader().execute(
            f"SELECT unnest(percentile_disc(%s::float8[]) WITHIN GROUP (ORDER BY {key})) FROM {q(self.layout.table)}",
            ([k / jobs for k in range(1, jobs)],)) if cut is not None]
        if not cuts:
            return None
        edges = [None, *dict.fromkeys(cuts), None]
        parts = []
        for after, through in zip(edges, edges[1:]):
            part = PostgresThreadStore(self.adapter, self.layout, replace(self.options, jobs=1))
            part.row_range = (after, through)
            parts.append(part)
        return parts


class PostgresItemStore(_Postgres, ItemRowStore):
    """A table of one item per row, with an integer key whose sequence gives new rows their ids."""

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        data = super().encode(thread, new_items)
        if not self._jsonb:
            return data
        loc = thread.locator
        loc.plan = [p if isinstance(p, int) else self._as_stored(p, thread) for p in loc.plan]
        return items_blob([loc.raws[p] if isinstance(p, int) else p for p in loc.plan])

    #: read only the threads whose keys are in ``(after, through]`` (None: unbounded), a ``--jobs`` part's share
    key_window: tuple[Any, Any] | None = None

    def _parts(self, jobs: int) -> list[TableStore] | None:
        """``jobs`` stores of thread key ranges of about as many rows each, streamed when an index lists the rows
        in thread order, else runs of the thread keys read by key (threads begun after the cut are not read: a
        snapshot); None when no index finds a thread by key (one pass groups the table's rows)."""
        layout, thread = self.layout, q(self.layout.thread_column)
        if not layout.thread_indexed:
            return None
        conn, table = self._reader(), q(layout.table)
        options = replace(self.options, jobs=1)
        if layout.stream_indexed:
            cuts = [cut for (cut,) in conn.execute(
                f"SELECT unnest(percentile_disc(%s::float8[]) WITHIN GROUP (ORDER BY {thread})) FROM {table}",
                ([k / jobs for k in range(1, jobs)],)) if cut is not None]
            edges = [None, *dict.fromkeys(cuts), None]
            parts = []
            for after, through in zip(edges, edges[1:]):
                part = PostgresItemStore(self.adapter, layout, options)
                part.key_window, part.last_part = (after, through), through is None
                parts.append(part)
            return parts if len(parts) > 1 else None
        keys = [k for (k,) in conn.execute(
            f"SELECT DISTINCT {thread} FROM {table} WHERE {thread} IS NOT NULL ORDER BY {thread}")]
        if len(keys) < 2:
            return None
        ends = [len(keys) * k // jobs for k in range(jobs + 1)]
        parts = []
        for start, end in zip(ends, ends[1:]):
            if end > start:
                part = PostgresItemStore(self.adapter, layout, options)
                part.only_keys, part.last_part = tuple(keys[start:end]), end == len(keys)
                parts.append(part)
        return parts

    def _threads_streamed(self, conn: Any) -> Iterator[Thread | ReadProblem]:
        if self.key_window is None:
            return super()._threads_streamed(conn)
        return self._window_streamed(conn)

    def _window_streamed(self, conn: Any) -> Iterator[Thread | ReadProblem]:
        """The engine's stream of whole threads, within :attr:`key_window`."""
        sql, (after, through) = self._sql, self.key_window
        th, size = sql.thread, table.STREAM_CHUNK
        upto, bound = (f" AND {th} <= %s", (through,)) if through is not None else ("", ())
        tail = f"{upto} ORDER BY {th}, {sql.order}, {sql.rowid} LIMIT %s"
        while True:
            if after is None:
                rows = conn.execute(f"{sql._items_head} WHERE {th} IS NOT NULL{tail}", (*bound, size)).fetchall()
            else:
                rows = conn.execute(f"{sql._items_head} WHERE {th} > %s{tail}", (after, *bound, size)).fetchall()
            if not rows:
                return
            groups = [(key, list(group)) for key, group in groupby(rows, key=itemgetter(3))]
            if len(rows) == size:
                cut = groups.pop()[0]
                if not groups:
                    groups = [(cut, conn.execute(sql.items_by_key, (cut,)).fetchall())]
            for key, group in groups:
                yield from self._item_thread(key, group, -(2**63))
            after = groups[-1][0]

    def _orphans(self, conn: Any) -> list[ReadProblem]:
        """Said once, by the last part."""
        return super()._orphans(conn) if self.key_window is None or self.last_part else []


def _in_order(parts: list[TableStore]) -> Iterator[Thread | ReadProblem]:
    """Each part read on its own connection in a thread of its own, a few chunks ahead; given out in order."""
    stop = threading.Event()
    queues: list[queue.Queue] = [queue.Queue(AHEAD * 50) for _ in parts]
    done = object()

    def read(part: TableStore, out: queue.Queue) -> None:
        try:
            for thread in part.threads():
                while not stop.is_set():
                    try:
                        out.put(thread, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            out.put(done)
        except BaseException as exc:  # given out where the part's threads would be
            out.put(exc)

    workers = [threading.Thread(target=read, args=(part, out), daemon=True) for part, out in zip(parts, queues)]
    for worker in workers:
        worker.start()
    try:
        for out in queues:
            while (thread := out.get()) is not done:
                if isinstance(thread, BaseException):
                    raise thread
                yield thread
    finally:
        stop.set()
        for out in queues:
            while not out.empty():
                out.get_nowait()
        for worker in workers:
            worker.join(5)


def undo_entries(location: str, entries: list[Entry], *, dry_run: bool = False) -> Iterator[Any]:
    """Put back the threads of one database (see :func:`threadfix.stores.table.undo_table_entries`)."""
    url, _, space = location.partition("#")
    adapter = PostgresAdapter(url, 5.0, space or None)
    yield from undo_table_entries(adapter, entries, dry_run=dry_run)


class PostgresMedium(Medium):
    """A PostgreSQL database named by its libpq URL: the table that holds its threads."""

    def open(self, spec: str, options: Any, stdin: Any = None) -> Iterator[TableStore]:
        yield open_postgres_store(spec, options)


MEDIUM = PostgresMedium()


__all__ = ["PostgresAdapter", "open_postgres_store", "undo_entries"]
