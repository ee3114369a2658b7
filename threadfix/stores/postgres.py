"""Threads in a live PostgreSQL database: the PostgreSQL adapter of the table engine (:mod:`threadfix.stores.table`).

The engine's layouts, read plans, batching, compare-and-swap, journal and undo are SQLite's; what is
PostgreSQL's own lives here and in :mod:`threadfix.stores.postgres_layout`:

- **Naming**: a libpq URL, passed through to libpq (``PG*`` variables, ``~/.pgpass``, service files);
  every message, journal entry and JSON output names it without its password.
- **Reading** never gets in the app's way: a read-only session in autocommit, so each keyset chunk is one
  statement, one short transaction, taking no lock beyond a ``SELECT``'s, under a ``statement_timeout``.
  JSON comes as its UTF-8 bytes (``convert_to(col::text, 'UTF8')``), in binary when every column read
  allows (no hex of bytea to encode and decode), item rows five times the engine's chunk at a time. With
  ``--jobs N`` the medium cuts the table into N ranges of keys (row keys, or thread keys for one row per
  item), each read on a connection of its own in a worker process of its own (:meth:`PostgresMedium.cut`).
- **Writing**: the engine's short batched transactions, each thread's rows re-read ``FOR UPDATE`` and
  compared before it is written. One row per item also keeps the app from appending to the thread until
  the commit: the parent row is locked ``FOR UPDATE`` when the thread column references one (an insert's
  foreign-key check waits on it; the openai-agents ``SQLAlchemySession`` locks it too), else the table
  ``IN SHARE ROW EXCLUSIVE MODE`` (the app's writes wait for the batch, its reads do not). ``lock_timeout``
  is ``--busy-timeout`` (exit 75); serialization failures and deadlocks retry the batch. New rows get
  their ids from the key's sequence, identity or default (a uuid or text key: :func:`_check_other_key`),
  and, in a table ordered by a timestamp, times between their neighbours' (:meth:`PostgresAdapter.between`);
  undo puts rows back with their own ids (``OVERRIDING SYSTEM VALUE``: an identity ``GENERATED ALWAYS``).
- **jsonb** keeps values, not key order or spacing: it is read, compared and journaled in PostgreSQL's own
  text form of the value (so the comparison is by value), and new JSON is put in that form before it is
  hashed, so the journal, ``--diff`` and a second run see what is stored.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from threadfix.errors import ConfigError, ThreadfixError
from threadfix.journal import Entry
from threadfix.stores.base import Medium
from threadfix.stores.postgres_layout import RETRIED, Schema, connect, driver, pg_error, q, quoted, redact, split_table
from threadfix.stores.table import ItemRowStore, TableAdapter, TablePart, TableStore, ThreadRowStore, undo_table_entries
from threadfix.stores.table_layout import Column, Layout, find_layout, shown

#: rows a large table's --jobs cut is taken from
CUT_SAMPLE = 50_000
#: parts a table is cut into at most, however many a large database is worth: key ranges cut at percentiles
#: hold about as many rows each already, and each part opens the store again in its worker (a connection and a
#: layout read: 20 parts of a 600 MB database cost more than their balance gained)
MAX_PARTS = 8
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
        self.url = self.spec = url
        self.display = redact(url)
        self.busy_timeout = busy_timeout
        #: the schema ``--table schema.table`` named (None: the session's own search_path)
        self.search_path = search_path
        self.Error = psycopg.Error
        # (a value the column refuses, a NUL in jsonb: that thread is left alone, not the batch)
        self.IntegrityError = (psycopg.IntegrityError, psycopg.DataError)
        #: the store's table as :func:`open_postgres_store` read it from the catalog, so that nothing reads it again
        #: while it plans or writes: each column's type (as ``format_type`` spells it), and for one row per item the
        #: statement that locks a thread's parent row (None: the table's own lock is taken)
        self.types: dict[str, str] = {}
        self.parent_lock: str | None = None

    def connect(self, *, write: bool) -> Any:
        return connect(self.url, write=write, timeout=self.busy_timeout, search_path=self.search_path)

    def scan(self, conn: Any, statement: str, params: Any) -> list[tuple[Any, ...]]:
        return conn.execute(statement, params, binary=self.binary_scan).fetchall()

    def stored_json(self, store: TableStore, column: str, data: bytes) -> bytes:
        """jsonb keeps values, not key order or spacing: new JSON in PostgreSQL's own text form of its value."""
        if self.types[column] != "jsonb":
            return data
        conn = store._reader()
        try:
            (stored,) = conn.execute("SELECT convert_to(%s::jsonb::text, 'UTF8')", (data.decode("utf-8"),)).fetchone()
        except (UnicodeDecodeError, driver().DataError) as exc:
            raise ValueError(f"jsonb cannot hold the repaired JSON ({' '.join(str(exc).split())})") from None
        return bytes(stored)

    def between(self, conn: Any, store: TableStore, low: Any, high: Any, count: int) -> list[Any] | None:
        """For a timestamp order column: evenly spaced between the two (a millisecond apart after the last one),
        in the column's own precision; None for any other type, or when they would not all fall strictly between."""
        kind = self.types[store.layout.order_column]
        if not kind.startswith("timestamp"):
            return None
        kind = kind.replace("%", "%%")  # (spelled in the statement's text)
        # (the type as format_type() spells it, from the catalog: a timestamp type, with its precision)
        step = ("%s::{t} + k * interval '1 millisecond'" if high is None else
                "%s::{t} + (%s::{t} - %s::{t}) * k / (%s + 1)").format(t=kind)
        params = (low,) if high is None else (low, high, low, count)
        found = conn.execute(
            f"WITH s AS (SELECT k, ({step})::{kind} AS v FROM generate_series(1, %s) k) SELECT v::text, (SELECT "
            f"bool_and(v > %s::{kind} AND (%s::{kind} IS NULL OR v < %s::{kind})) AND count(DISTINCT v) = %s FROM s) "
            "FROM s ORDER BY k", (*params, count, low, high, high, count)).fetchall()
        return [value for value, _ in found] if found and found[0][1] else None

    def check_copy(self, dest: Path) -> None:
        raise ConfigError("--output cannot copy a PostgreSQL database; repair it in place (undo puts it back), "
                          "or look first with --dry-run or --diff", self.display)

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
        if self.parent_lock is not None:
            conn.execute(self.parent_lock, (key,))
        else:  # (taken once per transaction: the first thread's)
            conn.execute(f"LOCK TABLE {q(layout.table)} IN SHARE ROW EXCLUSIVE MODE", ())


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
                conn.execute("SELECT set_config('search_path', %s, false)", (quoted(space),))
            options = replace(options, table=table)
        schema = Schema(conn)
        layout, detected = find_layout(schema, options)
        adapter.types = {c.name: c.type for c in schema.table(layout.table).columns}
        key = schema.table(layout.table).column(layout.rowid)
        if layout.kind == "item" and (parent := schema.parent_of(layout.table, layout.thread_column)) is not None:
            adapter.parent_lock = f"SELECT 1 FROM {q(parent[0])}.{q(parent[1])} WHERE {q(parent[2])} = %s FOR UPDATE"
    except psycopg.Error as exc:
        raise adapter.error(exc, adapter.display) from None
    finally:
        conn.close()
    if layout.kind == "item" and key.type not in INTEGER_TYPES:
        _check_other_key(layout, key, adapter.display)
    if layout.preset == "openai-agents SQLiteSession":
        # the same tables, written by SQLAlchemySession: read in id order (the SDK orders by created_at, then
        # id; the two agree but for two turns of one session committed out of their start order), and a new
        # row takes its neighbour's created_at, which the SDK's order reads first (its default, now, would put
        # an inserted output after every later item)
        layout = replace(layout, preset="openai-agents SQLAlchemySession", required_times=("created_at",))
    scanned = ([layout.rowid, layout.id_column, *layout.time_columns] if layout.kind == "thread" else
               [layout.rowid, layout.order_column, layout.thread_column])
    adapter.binary_scan = all(adapter.types[c].split("(")[0] in BINARY_SAME for c in scanned if c is not None)
    kind = ThreadRowStore if layout.kind == "thread" else ItemRowStore
    return kind(adapter, layout, options, detected)


def _check_other_key(layout: Layout, key: Column, where: str) -> None:
    """A table of one item per row keyed otherwise than by an integer (a uuid, text) is read and repaired in the
    order of its order column, then its key (keyset pages on thread, order, key), so it needs an order column
    (keys in no order cannot place a new row), an index that finds a thread (its rows cannot be found again by
    a key range), and a default for the key (a new row's id)."""
    table, name = shown(layout.table), shown(layout.rowid)
    if layout.order_column is None:
        raise ConfigError(f"table {table} holds one item per row keyed by {name}, a {key.type}, which does not order "
                          "its rows: pass --order-column (its position or time column)", where)
    if not layout.thread_indexed:
        raise ConfigError(f"table {table} holds one item per row keyed by {name}, a {key.type}, and no index finds "
                          f"a thread's rows by {shown(layout.thread_column)}: threadfix needs one (CREATE INDEX ON "
                          f"{table} ({shown(layout.thread_column)}, {shown(layout.order_column)}))", where)
    if key.default is None:
        raise ConfigError(f"table {table} holds one item per row keyed by {name}, a {key.type} with no default: "
                          "threadfix cannot give a new row its id (give the column a default, such as "
                          "gen_random_uuid())", where)


def key_cuts(store: TableStore, parts: int) -> list[Any] | None:
    """Where ``--jobs`` cuts the store's table into ``parts`` shares of about as many rows: the keys that end each
    share but the last, in key order (row keys for one thread per row, thread keys for one item per row); None
    when it is not cut (one item per row with no index that finds a thread, or too few keys)."""
    layout = store.layout
    column = layout.rowid if layout.kind == "thread" else layout.thread_column if layout.thread_indexed else None
    if column is None or parts < 2:
        return None
    conn, table = store._reader(), q(layout.table)
    (estimate,) = conn.execute("SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)",
                               (quoted(layout.table),)).fetchone()
    # (a large table's cut is taken from a sample of its pages: the cut only balances the shares, every key is in one)
    sample = f" TABLESAMPLE SYSTEM ({100 * CUT_SAMPLE / estimate:f})" if estimate > 2 * CUT_SAMPLE else ""
    cuts = [cut for (cut,) in conn.execute(
        f"SELECT unnest(percentile_disc(%s::float8[]) WITHIN GROUP (ORDER BY {q(column)})) FROM {table}{sample}",
        ([k / parts for k in range(1, parts)],)) if cut is not None]
    return list(dict.fromkeys(cuts)) or None


def undo_entries(location: str, entries: list[Entry], *, dry_run: bool = False) -> Iterator[Any]:
    """Put back the threads of one database (see :func:`threadfix.stores.table.undo_table_entries`)."""
    url, _, space = location.partition("#")
    adapter = PostgresAdapter(url, 5.0, space or None)
    yield from undo_table_entries(adapter, entries, dry_run=dry_run)


class PostgresMedium(Medium):
    """A PostgreSQL database named by its libpq URL: the table that holds its threads."""

    def open(self, spec: str, options: Any, stdin: Any = None) -> Iterator[TableStore]:
        yield open_postgres_store(spec, options)

    def size(self, spec: str) -> int:
        """The database's size (as a SQLite file's is the database's): 0 when it cannot be read here (its reader
        says why)."""
        try:
            conn = connect(spec, write=False, timeout=5.0)
        except ThreadfixError:
            return 0
        try:
            return int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])
        except driver().Error:
            return 0
        finally:
            conn.close()

    def cut(self, spec: str, parts: int, options: Any, by_key: bool) -> list[TablePart] | None:
        """The table in ranges of keys ``(after, through]`` (:func:`key_cuts`), one per ``--jobs`` worker, each read on
        a connection of its own in a process of its own; lint, report and repair alike (PostgreSQL has no screen
        to run first). None: read whole (a database that cannot be read here: its reader says why)."""
        try:
            store = open_postgres_store(spec, replace(options, jobs=1))
        except ThreadfixError:
            return None
        try:
            cuts = key_cuts(store, min(parts, MAX_PARTS))
        except store.adapter.Error:
            return None
        finally:
            store._close()
        if cuts is None:
            return None
        edges = [None, *cuts, None]
        return [TablePart(rows=(after, through), last=through is None) for after, through in pairwise(edges)]


MEDIUM = PostgresMedium()


__all__ = ["PostgresAdapter", "open_postgres_store", "undo_entries"]
