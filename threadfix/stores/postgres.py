"""Threads in a live PostgreSQL database, read and repaired while the app writes to it.

**Reading** (lint, report, ``--dry-run``, ``--check``, ``--diff``, and repair's own scan) uses a read-only
session (``SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY``) in autocommit: every chunk is one
statement, so one short transaction, keyed on the primary key or the thread key (no transaction is held
across chunks, no lock is taken beyond a ``SELECT``'s), under a ``statement_timeout``. JSON comes as its
UTF-8 bytes (``convert_to(col::text, 'UTF8')``) and is parsed with orjson. With ``--jobs N`` the table is
cut into N key ranges, each read on a connection of its own, and given out in key order.

**Writing** (repair) uses its own connection, in transactions of at most ``batch_size`` threads. Inside the
transaction each thread's rows are read again ``FOR UPDATE`` and compared with what the repair was planned
on; a thread the app changed meanwhile is left alone and reported (exit 75), never overwritten. One row per
item also takes the lock that keeps the app from appending to that thread until the commit: the parent
row's (``FOR UPDATE``, which an insert's foreign-key check waits on) when the thread column references a
parent table, else the table's ``SHARE ROW EXCLUSIVE`` lock for the batch. ``lock_timeout`` is
``--busy-timeout``: a lock held longer stops the repair (exit 75, the batches committed before it stay, and
say so). Serialization failures and deadlocks retry the batch a bounded number of times.

``jsonb`` keeps values, not key order or spacing: a thread in a ``jsonb`` column is read, compared and
journaled in PostgreSQL's own text form of the value, so the comparison is by value.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator, Sequence
from itertools import groupby
from pathlib import Path
from typing import Any

import orjson
from msgspec import Struct

from threadfix import jsonio
from threadfix.errors import BusyError, ConfigError, StoreError, ThreadfixError, UnrewritableError
from threadfix.journal import Entry, digest
from threadfix.model import Address, Thread
from threadfix.stores.base import ReadProblem, Store, StoreWriter
from threadfix.stores.files import THREAD_KEYS, encode_document, split_container
from threadfix.stores.postgres_layout import RETRIED, Layout, Schema, connect, driver, find_layout, item_layout, \
    pg_error, q, redact, thread_layout
from threadfix.stores.sqlite import CHANGED, ItemThread, RowThread, _as_bytes, _check_text, _row_time, items_blob
from threadfix.stores.sqlite_layout import shown

#: rows per read statement, one row per thread (each row may be a large document)
THREAD_CHUNK = 200
#: threads per read statement, one row per item
KEY_CHUNK = 200
#: keys per statement when grouping an unindexed table's rows by thread
ID_CHUNK = 5000
#: chunks a --jobs reader may hold ahead of the one being given out
AHEAD = 4
#: times a batch is tried again after a serialization failure or a deadlock
ATTEMPTS = 3
FLUSH_BYTES = 4 * 1024 * 1024


class RowLocator(Struct):
    """One row per thread: its key (as text) and the bytes it held."""

    key: str


class ItemsLocator(Struct):
    """One row per item: the thread's rows in order, and what the repair plans for them."""

    key: str
    keys: list[str]
    raws: list[bytes]
    #: the largest row key in the table when the thread was grouped (unindexed tables: later rows were appended)
    max_key: str | None = None
    snapshot: list[tuple[Any, ...]] | None = None
    stale: bool = False
    plan: list[int | bytes] | None = None


def open_postgres_store(url: str, options: Any) -> PostgresStore:
    """A store for the database the URL names; its layout is read from the options or detected."""
    conn = connect(url, write=False, timeout=options.busy_timeout)
    try:
        layout, detected = find_layout(conn, options)
    except driver().Error as exc:
        raise pg_error(exc, url) from None
    finally:
        conn.close()
    return PostgresStore(url, layout, options, detected)


class _Sql:
    """Every statement a layout needs, built once from names checked against the catalog."""

    def __init__(self, layout: Layout) -> None:
        # every SELECT reads ``src.column``: an output column of the same name (``"id"::text``) would otherwise
        # be what ORDER BY sorts by, as text
        t, k = layout.qualified, "src." + q(layout.key)
        self.table, self.key = t, q(layout.key)
        src = f"{t} AS src"
        self.key_type = layout.type_of(layout.key)
        kt = self.key_type
        js = f"convert_to(src.{q(layout.json_column)}::text, 'UTF8')"
        self.json_cast = layout.type_of(layout.json_column)
        self.times = ", ".join(f"src.{q(c)}::text" for c in layout.time_columns)
        self.restored = layout.restored_columns
        self.full = ", ".join(f"src.{q(c)}::text" for c in self.restored)
        self.key_index = self.restored.index(layout.key)
        self.item_index = self.restored.index(layout.json_column)
        if layout.kind == "thread":
            ident = f", src.{q(layout.id_column)}::text" if layout.id_column else f", {k}::text"
            head = f"SELECT {k}::text{ident}, {js}{', ' + self.times if self.times else ''} FROM {src}"
            self.chunk = lambda lower, upper: (
                f"{head} WHERE TRUE{f' AND {k} > %s::{kt}' if lower else ''}{f' AND {k} <= %s::{kt}' if upper else ''} "
                f"ORDER BY {k} LIMIT %s")
            self.locked_row = f"SELECT {js} FROM {src} WHERE {k} = %s::{kt} FOR UPDATE"
            self.update = f"UPDATE {t} SET {q(layout.json_column)} = %s::{self.json_cast} WHERE {self.key} = %s::{kt}"
            self.bounds_column = k
            self.src = src
            return
        th = "src." + q(layout.thread_column)
        self.thread, self.thread_type = q(layout.thread_column), layout.type_of(layout.thread_column)
        self.src_thread = th
        tt = self.thread_type
        self.order = ", ".join([*("src." + q(c) for c in layout.order_columns), k])
        self.bounds_column = th
        self.src = src
        self.streamed = lambda lower, upper: (
            f"WITH k(tk) AS (SELECT DISTINCT {th} FROM {src} WHERE {th} IS NOT NULL"
            f"{f' AND {th} > %s::{tt}' if lower else ''}{f' AND {th} <= %s::{tt}' if upper else ''} ORDER BY {th} LIMIT %s) "
            f"SELECT {k}::text, {js}, {th}::text FROM {src} JOIN k ON {th} = k.tk ORDER BY {th}, {self.order}")
        self.ids = lambda lower: (f"SELECT {k}::text, {th}::text FROM {src}{f' WHERE {k} > %s::{kt}' if lower else ''} "
                                  f"ORDER BY {k} LIMIT %s")
        self.by_keys = (f"SELECT {k}::text, {js}, {th}::text FROM {src} WHERE {k} = ANY(%s::{kt}[]) OR ({k} > %s::{kt} "
                        f"AND {th} = %s::{tt}) ORDER BY {self.order}")
        self.orphans = f"SELECT count(*) FROM {t} WHERE {self.thread} IS NULL"
        self.times_in = f"SELECT {self.times or 'NULL'} FROM {src} WHERE {k} = ANY(%s::{kt}[])"

    def full_rows(self, conn: Any, layout: Layout, loc: ItemsLocator, lock: bool = False,
                  extra: Sequence[str] = ()) -> list[tuple[Any, ...]]:
        """Every row of one thread in full (each column as text), in thread order; ``lock``: FOR UPDATE."""
        tail = " FOR UPDATE" if lock else ""
        head = f"SELECT {self.full} FROM {self.src}"
        k, th = "src." + self.key, self.src_thread
        if layout.thread_indexed or loc.max_key is None:
            rows = conn.execute(f"{head} WHERE {th} = %s::{self.thread_type} ORDER BY {self.order}{tail}",
                                (loc.key,)).fetchall()
        else:
            rows = conn.execute(f"{head} WHERE {k} = ANY(%s::{self.key_type}[]) OR ({k} > %s::{self.key_type} "
                                f"AND {th} = %s::{self.thread_type}) ORDER BY {self.order}{tail}",
                                ([*loc.keys, *extra], loc.max_key, loc.key)).fetchall()
        return rows


class PostgresStore(Store):
    """One table of a PostgreSQL database holding threads, in either layout."""

    all_or_nothing = False  # batches committed before a failure stay written (and say so)

    def __init__(self, url: str, layout: Layout, options: Any, detected: bool = False) -> None:
        self.url = url
        self.display = redact(url)
        self.layout = layout
        self.options = options
        self.description = f"{self.display}: reading {layout.describe()}" if detected else None
        self.dialect = options.dialect or layout.dialect
        self.mtime: float | None = None
        self._sql = _Sql(layout)
        self._conn: Any = None

    # ------------------------------------------------------------------ reading

    def _reader(self) -> Any:
        if self._conn is None or self._conn.closed:
            self._conn = connect(self.url, write=False, timeout=self.options.busy_timeout)
        return self._conn

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def threads(self) -> Iterator[Thread | ReadProblem]:
        psycopg = driver()
        try:
            # (an unindexed table of one item per row is grouped in one pass: not cut)
            jobs = max(1, self.options.jobs) if self.layout.kind == "thread" or self.layout.thread_indexed else 1
            ranges = self._ranges(jobs) if jobs > 1 else [(None, None)]
            if len(ranges) == 1:
                yield from self._range(self._reader(), None, None)
            else:
                yield from self._in_parallel(ranges)
            if self.layout.kind == "item":
                yield from self._orphans(self._reader())
        except psycopg.Error as exc:
            raise pg_error(exc, self.url, self.options.busy_timeout) from None
        finally:
            self._close()

    def _ranges(self, jobs: int) -> list[tuple[str | None, str | None]]:
        """``jobs`` key ranges ``(after, through]`` holding about as many rows each (None: unbounded)."""
        column = self._sql.bounds_column
        fractions = [k / jobs for k in range(1, jobs)]
        (cuts,) = self._reader().execute(
            f"SELECT (percentile_disc(%s::float8[]) WITHIN GROUP (ORDER BY {column}))::text[] FROM {self._sql.src} "
            f"WHERE {column} IS NOT NULL", (fractions,)).fetchone()
        edges = [None, *dict.fromkeys(c for c in (cuts or []) if c is not None), None]
        return list(zip(edges, edges[1:]))

    def _range(self, conn: Any, lower: str | None, upper: str | None) -> Iterator[Thread | ReadProblem]:
        for chunk in self._chunks(conn, lower, upper):
            yield from chunk

    def _chunks(self, conn: Any, lower: str | None, upper: str | None) -> Iterator[list[Thread | ReadProblem]]:
        """The threads within ``(lower, upper]``, a list per statement."""
        sql, bound = self._sql, [v for v in (lower, upper) if v is not None]
        if self.layout.kind == "thread":
            statement, resume = sql.chunk(lower is not None, upper is not None), sql.chunk(True, upper is not None)
            rows = conn.execute(statement, (*bound, THREAD_CHUNK), binary=True).fetchall()
            while rows:
                yield list(self._row_threads(rows))
                rows = conn.execute(resume, (rows[-1][0], *bound[len(bound) - (upper is not None):], THREAD_CHUNK),
                                    binary=True).fetchall() if len(rows) == THREAD_CHUNK else []
            return
        if not self.layout.thread_indexed:
            yield from self._by_key(conn)
            return
        statement, resume = sql.streamed(lower is not None, upper is not None), sql.streamed(True, upper is not None)
        rows = conn.execute(statement, (*bound, KEY_CHUNK), binary=True).fetchall()
        while rows:
            chunk: list[Thread | ReadProblem] = []
            last = None
            for key, group in groupby(rows, key=lambda row: row[2]):
                chunk.extend(self._item_thread(key, list(group), None))
                last = key
            yield chunk
            rows = conn.execute(resume, (last, *bound[len(bound) - (upper is not None):], KEY_CHUNK),
                                binary=True).fetchall()

    def _by_key(self, conn: Any) -> Iterator[list[Thread | ReadProblem]]:
        """No index finds a thread: group the row keys by thread in one keyed pass, then read each thread by its
        row keys, plus any row appended to it since the pass."""
        sql = self._sql
        groups: dict[str, list[str]] = {}
        rows = conn.execute(sql.ids(False), (ID_CHUNK,)).fetchall()
        max_key = None
        while rows:
            max_key = rows[-1][0]
            for key, thread in rows:
                if thread is not None:
                    groups.setdefault(thread, []).append(key)
            rows = conn.execute(sql.ids(True), (max_key, ID_CHUNK)).fetchall() if len(rows) == ID_CHUNK else []
        for thread in list(groups):
            rows = conn.execute(sql.by_keys, (groups.pop(thread), max_key, thread), binary=True).fetchall()
            yield list(self._item_thread(thread, rows, max_key))

    def _in_parallel(self, ranges: list[tuple[str | None, str | None]]) -> Iterator[Thread | ReadProblem]:
        """Each range read on its own connection in a thread of its own, a few chunks ahead; given out in order."""
        stop = threading.Event()
        queues: list[queue.Queue] = [queue.Queue(AHEAD) for _ in ranges]
        done = object()

        def read(index: int, lower: str | None, upper: str | None) -> None:
            out = queues[index]
            try:
                conn = connect(self.url, write=False, timeout=self.options.busy_timeout)
                try:
                    for chunk in self._chunks(conn, lower, upper):
                        while not stop.is_set():
                            try:
                                out.put(chunk, timeout=0.1)
                                break
                            except queue.Full:
                                continue
                        if stop.is_set():
                            return
                finally:
                    conn.close()
                out.put(done)
            except BaseException as exc:  # given out where the range's threads would be
                out.put(exc)

        workers = [threading.Thread(target=read, args=(i, *r), daemon=True) for i, r in enumerate(ranges)]
        for worker in workers:
            worker.start()
        try:
            for out in queues:
                while (chunk := out.get()) is not done:
                    if isinstance(chunk, BaseException):
                        raise chunk
                    yield from chunk
        finally:
            stop.set()
            for out in queues:  # unblock a reader waiting to put
                while not out.empty():
                    out.get_nowait()
            for worker in workers:
                worker.join(5)

    def _address(self, column: str, key: Any) -> Address:
        return Address(self.display, key=f"{self.layout.table}:{column}={key}")

    def _row_threads(self, rows: list[tuple[Any, ...]]) -> Iterator[Thread | ReadProblem]:
        layout = self.layout
        for key, ident, raw, *times in rows:
            if raw is None:
                continue  # a row with no thread yet
            address = self._address(layout.id_column or layout.key, ident)
            if len(raw) > self.options.max_doc_bytes:
                yield ReadProblem(str(address), f"is {len(raw) // 2**20} MiB, over the "
                                  f"{self.options.max_doc_bytes // 2**20} MiB limit for one document (raise --max-doc-mb)")
                continue
            try:
                value = jsonio.loads(raw)
            except jsonio.JsonReadError as exc:
                yield ReadProblem(str(address), exc.message)
                continue
            parts = split_container(value)
            if parts is None:
                yield ReadProblem(str(address), "holds no thread (expected an array of items, or an object with one of "
                                  f"{', '.join(THREAD_KEYS)})")
                continue
            items, container, item_key = parts
            yield RowThread(address=address, items=items, container=container, key=item_key, raw=raw, mtime=None,
                            dialect=self.dialect, locator=RowLocator(key), times=times)

    def _item_thread(self, key: str, rows: list[tuple[Any, ...]], max_key: str | None) -> Iterator[Thread | ReadProblem]:
        """One thread from its rows, in order: (row key, item bytes, thread key) each."""
        address = self._address(self.layout.thread_column, key)
        raws = [row[1] for row in rows]
        items: list[Any] = []
        problems = []
        for row_key, raw, _ in rows:
            where = f"{self.display}:{self.layout.table}:{self.layout.key}={row_key}"
            if raw is None:
                problems.append(ReadProblem(where, "holds no item"))
            elif len(raw) > self.options.max_doc_bytes:
                problems.append(ReadProblem(where, f"is over the {self.options.max_doc_bytes // 2**20} MiB limit for "
                                            "one item (raise --max-doc-mb)"))
            else:
                try:
                    items.append(orjson.loads(raw))
                except orjson.JSONDecodeError:
                    try:
                        items.append(jsonio.loads(raw))
                    except jsonio.JsonReadError as exc:
                        problems.append(ReadProblem(where, exc.message))
        if problems:
            yield from problems
            yield ReadProblem(str(address), "some of its rows could not be read, so the thread is left alone")
            return
        yield ItemThread(address=address, items=items, raw=items_blob(raws), dialect=self.dialect,
                         locator=ItemsLocator(key, [row[0] for row in rows], raws, max_key),
                         store=self if self.layout.time_columns else None)

    def _thread_time(self, thread: Thread) -> float | None:
        """The newest time in the time columns of a thread's last rows."""
        rows = self._reader().execute(self._sql.times_in, (thread.locator.keys[-3:],)).fetchall()
        return _row_time([value for row in rows for value in row])

    def _orphans(self, conn: Any) -> list[ReadProblem]:
        count = conn.execute(self._sql.orphans).fetchone()[0]
        if not count:
            return []
        return [ReadProblem(f"{self.display}:{self.layout.table}", f"{count} row{'s have' if count != 1 else ' has'} no "
                            f"{shown(self.layout.thread_column)} and belong{'' if count != 1 else 's'} to no thread")]

    # ------------------------------------------------------------------ planning what to write

    def _as_stored(self, data: bytes) -> bytes:
        """What PostgreSQL will hold for ``data``: itself, or for jsonb its text form of the value (so the journal's
        hash, the diff and a second run all see what is stored)."""
        if self.layout.json_type != "jsonb":
            return data
        try:
            (stored,) = self._reader().execute("SELECT convert_to(%s::jsonb::text, 'UTF8')", (data.decode("utf-8"),),
                                               binary=True).fetchone()
        except (UnicodeDecodeError, driver().DataError) as exc:
            raise UnrewritableError(f"left alone: jsonb cannot hold the repaired JSON ({exc})", "") from None
        return bytes(stored)

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        if self.layout.kind == "thread":
            data = encode_document(thread, new_items)
            _check_text(True, data, thread)
            return self._as_stored(data)
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
            plan.append(self._as_stored(data))
        loc.plan = plan
        return items_blob([loc.raws[p] if isinstance(p, int) else p for p in plan])

    def _prepare(self, thread: Thread) -> None:
        """Read a one-row-per-item thread's rows in full, once, before its journal entry and its write."""
        loc = thread.locator
        if not isinstance(loc, ItemsLocator) or loc.snapshot is not None:
            return
        sql = self._sql
        loc.snapshot = sql.full_rows(self._reader(), self.layout, loc)
        if [r[sql.key_index] for r in loc.snapshot] != loc.keys or \
                [_as_bytes(r[sql.item_index]) for r in loc.snapshot] != loc.raws:
            loc.stale = True

    def writer(self, dest: Path | None = None) -> StoreWriter:
        if dest is not None:
            raise ConfigError("--output cannot copy a PostgreSQL database; repair it in place (undo puts it back), "
                              "or use --dry-run / --diff", self.display)
        return PostgresWriter(self)

    def detached(self, thread: Thread) -> Thread:
        return Thread(thread.address, [], raw=thread.raw if self.layout.kind == "thread" else b"", locator=thread.locator)

    def journal_entry(self, thread: Thread, data: bytes) -> Entry | None:
        layout = self.layout
        locator = layout.locator()
        if layout.kind == "thread":
            return Entry("postgres", self.display, str(thread.address), thread.raw, digest(data),
                         {**locator, "row": thread.locator.key})
        self._prepare(thread)
        loc: ItemsLocator = thread.locator
        before = orjson.dumps({"columns": list(layout.restored_columns), "rows": [list(r) for r in loc.snapshot]})
        return Entry("postgres", self.display, str(thread.address), before, digest(data), {**locator, "thread": loc.key})

    # ------------------------------------------------------------------ writing one thread (inside a transaction)

    def write(self, conn: Any, thread: Thread, data: bytes) -> None:
        """Write one thread; BusyError when the app changed it since it was read."""
        if self.layout.kind == "item":
            _ItemWrite(self, conn, thread, data).run()
            return
        row = conn.execute(self._sql.locked_row, (thread.locator.key,), binary=True).fetchone()
        if row is None or bytes(row[0]) != thread.raw:
            raise BusyError(CHANGED, str(thread.address))
        conn.execute(self._sql.update, (data.decode("utf-8"), thread.locator.key))


class _ItemWrite:
    """Lay a planned one-row-per-item thread into its rows, keeping every other row's data."""

    def __init__(self, store: PostgresStore, conn: Any, thread: Thread, data: bytes) -> None:
        self.store, self.conn, self.thread, self.data = store, conn, thread, data
        self.layout, self.sql = store.layout, store._sql
        self.loc: ItemsLocator = thread.locator
        self.inserted: list[str] = []

    def run(self) -> None:
        loc, sql, layout = self.loc, self.sql, self.layout
        if loc.snapshot is None:
            self.store._prepare(self.thread)
        current = sql.full_rows(self.conn, layout, loc, lock=True)
        if loc.stale or current != loc.snapshot:
            raise BusyError(CHANGED, str(self.thread.address))
        plan = loc.plan
        first = 0
        while first < min(len(plan), len(loc.keys)) and plan[first] == first:
            first += 1
        tail = plan[first:]
        kept = [p for p in tail if isinstance(p, int)]
        removed = [i for i in range(first, len(loc.keys)) if i not in set(kept)]
        adds = len(kept) != len(tail)
        if layout.order_kind == "integer":
            self._by_column(first, tail, removed)
        elif layout.order_kind == "key" or not (adds or kept != sorted(kept)):
            self._by_key(first, tail, layout.order_kind == "key")
        else:
            raise UnrewritableError(f"left alone: the rows of {shown(layout.table)} are ordered by a column new rows "
                                    "cannot be placed in", str(self.thread.address))
        written = sql.full_rows(self.conn, layout, loc, extra=self.inserted)
        if items_blob([_as_bytes(r[sql.item_index]) for r in written]) != self.data:
            raise StoreError("left alone: its rows did not read back as planned", str(self.thread.address))

    def _refuse_if_referenced(self) -> None:
        if self.layout.referenced_by:
            raise UnrewritableError(f"left alone: rows of {shown(self.layout.table)} are referenced from "
                                    f"{', '.join(shown(t) for t in self.layout.referenced_by)}, and repairing this "
                                    "thread would move or delete rows", str(self.thread.address))

    def _delete(self, index: int) -> None:
        sql = self.sql
        self.conn.execute(f"DELETE FROM {sql.table} WHERE {sql.key} = %s::{sql.key_type}", (self.loc.keys[index],))

    def _insert(self, columns: Sequence[str], values: Sequence[Any]) -> None:
        layout, sql = self.layout, self.sql
        names = ", ".join(q(c) for c in columns)
        marks = ", ".join(f"%s::{layout.type_of(c)}" for c in columns)
        (key,) = self.conn.execute(f"INSERT INTO {sql.table} ({names}) VALUES ({marks}) RETURNING {sql.key}::text",
                                   values).fetchone()
        self.inserted.append(key)

    def _insert_new(self, data: bytes, neighbour: int, order: int | None = None) -> None:
        """A row for a new item: its thread and item, its order, and what it takes from the row before it."""
        layout, sql = self.layout, self.sql
        row = self.loc.snapshot[neighbour] if self.loc.snapshot else None
        columns = [layout.thread_column, layout.json_column]
        values: list[Any] = [self.loc.key, data.decode("utf-8")]
        if order is not None:
            columns.append(layout.order_columns[0])
            values.append(str(order))
        for name in layout.inherited:
            if row is not None and name not in columns:
                columns.append(name)
                values.append(row[sql.restored.index(name)])
        self._insert(columns, values)

    def _by_key(self, first: int, tail: list[int | bytes], may_add: bool) -> None:
        """Order ends with the key: the later rows are copied, every column intact, to new keys (the sequence's)
        after the new ones."""
        loc, sql = self.loc, self.sql
        if first < len(loc.keys):
            self._refuse_if_referenced()
        for index in range(first, len(loc.keys)):
            self._delete(index)
        copied = self.layout.copied_columns
        neighbour = first - 1 if first else 0
        for entry in tail:
            if isinstance(entry, int):
                self._insert(copied, [loc.snapshot[entry][sql.restored.index(c)] for c in copied])
                neighbour = entry
            elif may_add:
                self._insert_new(entry, neighbour)

    def _by_column(self, first: int, tail: list[int | bytes], removed: list[int]) -> None:
        """Order is an integer column: rows that must make room move up by as little as possible; the rest stay."""
        loc, sql, layout = self.loc, self.sql, self.layout
        at = sql.restored.index(layout.order_columns[0])
        orders = [int(row[at]) if row[at] is not None else None for row in loc.snapshot]
        if None in orders:
            raise UnrewritableError(f"left alone: some rows have no {shown(layout.order_columns[0])}",
                                    str(self.thread.address))
        if removed:
            self._refuse_if_referenced()
        for index in removed:
            self._delete(index)
        column = q(layout.order_columns[0])
        if layout.order_unique:
            top = self.conn.execute(f"SELECT max({column}) FROM {sql.table}").fetchone()[0] or 0
            values = [int(top) + 1 + k for k in range(len(tail))]
        else:
            values = []
            prev = orders[first - 1] if first else (orders[0] - 1 if orders else -1)
            for entry in tail:
                value = orders[entry] if isinstance(entry, int) and orders[entry] > prev else prev + 1
                values.append(value)
                prev = value
        moves = [(loc.keys[e], v) for e, v in zip(tail, values) if isinstance(e, int) and v != orders[e]]
        set_order = f"UPDATE {sql.table} SET {column} = %s WHERE {sql.key} = %s::{sql.key_type}"
        if moves and not layout.order_unique:
            past = max(orders) + len(tail) + 1  # out of the way first: a UNIQUE (thread, position) never trips midway
            for k, (key, _) in enumerate(moves):
                self.conn.execute(set_order, (past + k, key))
        for key, value in moves:
            self.conn.execute(set_order, (value, key))
        neighbour = first - 1 if first else 0
        for entry, value in zip(tail, values):
            if isinstance(entry, int):
                neighbour = entry
            else:
                self._insert_new(entry, neighbour, value)


def _parent(conn: Any, layout: Layout) -> str | None:
    """The statement that locks a thread's parent row, when the thread column references a parent table (an
    insert into the thread waits on that lock through its foreign-key check); None when there is none."""
    row = conn.execute(
        "SELECT c.confrelid::regclass::text, pa.attname FROM pg_constraint c "
        "JOIN pg_attribute ca ON ca.attrelid = c.conrelid AND ca.attnum = c.conkey[1] "
        "JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = c.confkey[1] "
        "WHERE c.contype = 'f' AND c.conrelid = %s::regclass AND array_length(c.conkey, 1) = 1 AND ca.attname = %s",
        (layout.qualified, layout.thread_column)).fetchone()
    if row is None:
        return None
    return f"SELECT 1 FROM {row[0]} WHERE {q(row[1])}::text = %s FOR UPDATE"


# --------------------------------------------------------------------------- the writer


class PostgresWriter(StoreWriter):
    """Writes changed threads in short transactions of ``batch_size`` threads, as they come."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.queue: list[tuple[Thread, bytes]] = []
        self.queued_bytes = 0
        self.written = 0
        self._unwritten: list[tuple[Thread, ThreadfixError]] = []
        self._conn: Any = None
        self._lock_parent: str | None = None

    @property
    def durable(self) -> bool:  # type: ignore[override]
        return self.written > 0

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
        pending, self.queue, self.queued_bytes = self.queue, [], 0
        if pending:
            self._write(pending)

    def commit(self) -> bool:
        try:
            self.flush()
        finally:
            self.abort()
        return self.written > 0

    def _open(self) -> Any:
        store = self.store
        self._conn = connect(store.url, write=True, timeout=store.options.busy_timeout)
        if store.layout.kind == "item":
            self._lock_parent = _parent(self._conn, store.layout)
            self._conn.commit()
        return self._conn

    def _write(self, pending: list[tuple[Thread, bytes]]) -> None:
        psycopg = driver()
        store = self.store
        size = max(1, store.options.batch_size)
        batch: list[tuple[Thread, bytes]] = []
        try:
            conn = self._conn if self._conn is not None else self._open()
            while pending:
                batch, pending = pending[:size], pending[size:]
                for attempt in range(ATTEMPTS):
                    try:
                        left = self._batch(conn, batch)
                        break
                    except psycopg.Error as exc:
                        if getattr(exc, "sqlstate", None) not in RETRIED or attempt + 1 == ATTEMPTS:
                            raise
                        time.sleep(0.05 * (attempt + 1))
                self._unwritten.extend(left)
                self.written += len(batch) - len(left)
                batch = []
        except BaseException as exc:
            self._rollback()
            error = pg_error(exc, store.url, store.options.busy_timeout) if isinstance(exc, psycopg.Error) else None
            if error is not None and self.written:
                error.message += f" ({self.written} thread{'s were' if self.written != 1 else ' was'} written before it)"
            reason = error or (exc if isinstance(exc, ThreadfixError) else StoreError("not written: interrupted",
                                                                                     store.display))
            self._unwritten.extend((t, reason) for t, _ in batch + pending)
            if error is not None:
                raise error from None
            raise

    def _batch(self, conn: Any, batch: list[tuple[Thread, bytes]]) -> list[tuple[Thread, ThreadfixError]]:
        """One transaction: each thread under a savepoint, so one the table refuses is left alone by itself."""
        psycopg = driver()
        store, layout = self.store, self.store.layout
        left: list[tuple[Thread, ThreadfixError]] = []
        with conn.transaction():
            if layout.kind == "item" and self._lock_parent is None:
                # nothing else keeps the app from appending to a thread while its rows move: the table's
                # lock for this batch (a moment; the app's writes wait, its reads do not)
                conn.execute(f"LOCK TABLE {layout.qualified} IN SHARE ROW EXCLUSIVE MODE")
            for thread, data in batch:
                try:
                    with conn.transaction():
                        if self._lock_parent is not None:
                            conn.execute(self._lock_parent, (thread.locator.key,))
                        store.write(conn, thread, data)
                except ThreadfixError as exc:
                    left.append((thread, exc if exc.where else type(exc)(exc.message, str(thread.address))))
                except (psycopg.errors.IntegrityError, psycopg.errors.DataError) as exc:
                    text = " ".join(str(exc).split())
                    left.append((thread, StoreError(f"left alone: the table refused the change ({text})",
                                                    str(thread.address))))
        return left

    def _rollback(self) -> None:
        if self._conn is not None and not self._conn.closed:
            try:
                self._conn.rollback()
            except Exception:
                pass

    def abort(self) -> None:
        self._rollback()
        self.store._close()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


# --------------------------------------------------------------------------- undo


def undo_entries(url: str, entries: list[Entry]) -> Iterator[Any]:
    """Put back the threads of one database, newest repair first, in one transaction; a thread is restored
    only while it holds exactly what the repair wrote."""
    from threadfix.undo import UndoOutcome

    psycopg = driver()
    conn = connect(url, write=True, timeout=5.0)
    outcomes = []
    try:
        schema = Schema(conn)
        conn.commit()  # (the catalog's read opened a transaction; the restore is one of its own)
        with conn.transaction():
            for entry in reversed(entries):
                try:
                    with conn.transaction():
                        outcome = _undo_one(conn, schema, entry)
                except (psycopg.errors.IntegrityError, psycopg.errors.DataError) as exc:
                    outcome = UndoOutcome(entry.address, "refused", f"the table refused the restore ({exc})")
                except ThreadfixError as exc:
                    outcome = UndoOutcome(entry.address, "refused", exc.message)
                outcomes.append(outcome)
    except psycopg.Error as exc:
        raise pg_error(exc, url, 5.0) from None
    finally:
        conn.close()
    yield from reversed(outcomes)


def _undo_layout(schema: Schema, locator: dict[str, Any]) -> Layout:
    from threadfix.stores.postgres_layout import _check_column, _check_table

    table = _check_table(schema, str(locator.get("table")))
    names = ("json_column", "key", "id_column") if locator.get("layout") == "thread" else (
        "json_column", "key", "thread_column")
    for name in names:
        _check_column(table, locator.get(name), name)
    for name in locator.get("order_columns") or ():
        _check_column(table, name, "order_columns")
    if table.pk != (locator.get("key"),):
        raise ConfigError("its primary key changed")
    if locator.get("layout") == "thread":
        return thread_layout(table, locator["json_column"], locator.get("id_column"))
    return item_layout(table, locator["json_column"], locator["thread_column"], tuple(locator.get("order_columns") or ()))


def _undo_one(conn: Any, schema: Schema, entry: Entry) -> Any:
    from threadfix.undo import UndoOutcome, _decide

    try:
        layout = _undo_layout(schema, entry.locator)
    except (ConfigError, KeyError) as exc:
        return UndoOutcome(entry.address, "missing", f"the table changed since the repair ({exc})")
    sql = _Sql(layout)
    if layout.kind == "thread":
        key = entry.locator["row"]
        row = conn.execute(sql.locked_row, (key,), binary=True).fetchone()
        if row is None:
            return UndoOutcome(entry.address, "missing", "the row is no longer in the table")
        return _decide(entry, bytes(row[0]), lambda: conn.execute(sql.update, (entry.before.decode("utf-8"), key)))
    before = orjson.loads(entry.before)
    if list(before["columns"]) != list(layout.restored_columns):
        return UndoOutcome(entry.address, "refused", "the table's columns changed since the repair")
    loc = ItemsLocator(entry.locator["thread"], [], [])
    current = sql.full_rows(conn, layout, loc, lock=True)
    original = items_blob([_as_bytes(row[sql.item_index]) for row in before["rows"]])

    def restore() -> None:
        conn.execute(f"DELETE FROM {sql.table} WHERE {sql.thread} = %s::{sql.thread_type}", (loc.key,))
        columns = layout.restored_columns
        names = ", ".join(q(c) for c in columns)
        marks = ", ".join(f"%s::{layout.type_of(c)}" for c in columns)
        override = " OVERRIDING SYSTEM VALUE" if layout.identity else ""
        for row in before["rows"]:
            conn.execute(f"INSERT INTO {sql.table} ({names}){override} VALUES ({marks})", row)

    found = items_blob([_as_bytes(row[sql.item_index]) for row in current])
    return _decide(Entry(entry.store, entry.path, entry.address, original, entry.after_sha256), found, restore)
