"""Where a SQLite database keeps its threads: a layout, found from the schema or from the options.

Two layouts are understood:

* **one row per thread**: a JSON column holds the thread (an array of items, or an object holding
  them under ``messages``/``input``/..., as for files);
* **one row per item**: a JSON column holds one item, a thread column names its thread, and an order
  column (or the row id) orders the items of a thread.

Presets are recognised from the schema first (the OpenAI Agents SDK's ``SQLiteSession``). Otherwise a
table is picked only when the schema and a few sampled values leave no doubt; when they do not, the
error lists the candidates and the options that choose one. Every name given on the command line is
checked against the schema before it is quoted into SQL (SQLite reads a double-quoted name that
matches nothing as a string literal, so quoting alone is not enough); values are always bound.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from msgspec import Struct, field
from msgspec.structs import replace

from threadfix import jsonio
from threadfix.errors import BusyError, ConfigError, InputError, StoreError, ThreadfixError
from threadfix.stores.base import ITEM_TIME_KEYS, THREAD_TIME_KEYS
from threadfix.stores.files import split_container

#: column names that usually name an item's thread, in the order they are preferred
THREAD_COLUMNS = ("thread_id", "session_id", "conversation_id", "chat_id", "thread", "session", "conversation", "chat")
#: column names that usually order the items of a thread
ORDER_COLUMNS = ("position", "seq", "sequence", "idx", "item_index", "message_index", "ordinal", "turn",
                 "sort_order", "index", "order")
#: rows sampled per table to tell what its JSON columns hold
SAMPLE_ROWS = 8
ROWID_NAMES = ("rowid", "_rowid_", "oid")
#: the options that choose a layout, for error messages
THREAD_OPTIONS = "--table and --json-column (one row per thread, optionally --id-column)"
ITEM_OPTIONS = "--table, --thread-column and --item-column (one row per item, optionally --order-column)"


def q(name: str) -> str:
    """A schema name quoted for SQL, as sqlite-utils' ``quote_identifier`` does (only ever called on names
    checked against the schema)."""
    return '"' + name.replace('"', '""') + '"'


def shown(name: str) -> str:
    """A name for a message: quoted, and cut when absurdly long."""
    return '"' + (name if len(name) <= 60 else name[:57] + "...") + '"'


# --------------------------------------------------------------------------- connections and errors


def connect(path: Path, *, write: bool, timeout: float) -> sqlite3.Connection:
    """Open an existing database by URI: ``mode=ro`` to read, ``mode=rw`` to write; never create one.

    Autocommit mode (``isolation_level=None``): threadfix opens its transactions itself, with
    ``BEGIN IMMEDIATE`` when it writes. The journal mode is never touched.
    """
    uri = Path(path).absolute().as_uri() + ("?mode=rw" if write else "?mode=ro")
    try:
        return sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
    except sqlite3.Error as exc:
        raise sqlite_error(exc, str(path), timeout) from None


#: the first bytes of a rollback journal that holds a transaction (https://sqlite.org/fileformat.html#the_rollback_journal)
JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def hot_journal(path: Path) -> bool:
    """Whether the database's ``-journal`` holds a transaction: a write that was interrupted (a crash, a kill)
    left it for the next read-write open to roll back, or the app is writing now (it then holds a lock)."""
    try:
        with open(f"{path}-journal", "rb") as handle:
            return handle.read(len(JOURNAL_MAGIC)) == JOURNAL_MAGIC
    except OSError:
        return False


def recover_hot_journal(path: Path, timeout: float) -> bool:
    """Roll back the transaction an interrupted write left in the database's ``-journal``, as SQLite itself does
    on the first read of a read-write open (issue #22); True when it did. A journal the app is writing now is
    not hot (the app holds its lock), and is left alone."""
    if not hot_journal(path):
        return False
    conn = connect(path, write=True, timeout=timeout)
    try:
        conn.execute("PRAGMA schema_version").fetchone()  # the first read rolls a hot journal back
    except sqlite3.Error as exc:
        raise sqlite_error(exc, str(path), timeout) from None
    finally:
        conn.close()
    return not hot_journal(path)


#: primary result codes (https://sqlite.org/rescode.html)
SQLITE_PERM, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR = 3, 5, 6, 8, 10
SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_TOOBIG, SQLITE_NOTADB = 11, 13, 14, 18, 26
#: extended codes: a WAL database whose -shm cannot be created (a reader needs it too)
SQLITE_READONLY_CANTINIT, SQLITE_READONLY_DIRECTORY = SQLITE_READONLY | 5 << 8, SQLITE_READONLY | 6 << 8
#: a read-only open met a hot journal, which only a read-write open may roll back
SQLITE_READONLY_ROLLBACK = SQLITE_READONLY | 3 << 8
#: what a read-only command says of a database with a hot journal, and what to run
INTERRUPTED_WRITE = ("a write to this database was interrupted: its -journal holds an unfinished transaction, which "
                     "a read-only open cannot roll back; run `threadfix repair` on it (it rolls the journal back, as "
                     "SQLite does on a read-write open), or open it with the app, then run this again")


def sqlite_error(exc: sqlite3.Error, where: str, timeout: float | None = None) -> ThreadfixError:
    """One actionable error for a SQLite failure, with the exit code its kind calls for."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if primary in (SQLITE_BUSY, SQLITE_LOCKED) or (primary is None and "locked" in text):
        waited = f" for longer than --busy-timeout ({timeout:g}s)" if timeout is not None else ""
        return BusyError(f"the database stayed locked by another process{waited}; nothing more was written, "
                         "safe to retry", where)
    if primary == SQLITE_FULL:
        return StoreError("no space left for the database (disk full or its size limit reached); the "
                          "transaction was rolled back", where)
    if code == SQLITE_READONLY_ROLLBACK:
        return StoreError(INTERRUPTED_WRITE, where)
    if code in (SQLITE_READONLY_DIRECTORY, SQLITE_READONLY_CANTINIT):
        return StoreError("cannot read this WAL-mode database: SQLite must create its -shm file beside it and "
                          "the folder is not writable; run threadfix as the app's user", where)
    if primary == SQLITE_READONLY:
        return StoreError(f"the database cannot be written here ({text}); run threadfix as the app's user, or "
                          "use --dry-run", where)
    if primary == SQLITE_IOERR:
        return StoreError(f"I/O error ({text}); the transaction was rolled back", where)
    if primary == SQLITE_CANTOPEN:
        return StoreError(f"cannot open the database ({text}); a WAL-mode database needs write access to its "
                          "folder even to be read (run as the app's user)", where)
    if primary in (SQLITE_NOTADB, SQLITE_CORRUPT):
        return InputError(f"is not a usable SQLite database ({text})", where)
    if primary == SQLITE_PERM:
        return StoreError(f"permission denied ({text})", where)
    return StoreError(f"SQLite error: {text}", where)


# --------------------------------------------------------------------------- schema


class Column(Struct, frozen=True):
    name: str
    type: str
    notnull: bool
    default: Any
    pk: int


class TableInfo(Struct):
    name: str
    columns: list[Column]
    #: the name that reaches the row id; None for a WITHOUT ROWID table
    rowid: str | None
    #: the INTEGER PRIMARY KEY column that is the row id itself, if any
    rowid_alias: str | None
    #: each index's columns, in order, and whether it is unique
    indexes: list[tuple[tuple[str, ...], bool]] = field(default_factory=list)
    #: tables with a foreign key into this one (moving or deleting rows would break their references)
    referenced_by: tuple[str, ...] = ()
    #: the table's schema names a collation somewhere, so a column may compare values other than byte for byte
    collated: bool = False

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def leads_index(self, name: str) -> bool:
        return any(cols and cols[0] == name for cols, _ in self.indexes)

    def orders(self, thread: str, order: str | None) -> bool:
        """An index lists rows by thread, then by ``order`` (None: the row id, which every index ends with)."""
        if order is None:
            return any(cols in ((thread,), (thread, self.rowid_alias)) or cols[:2] == (thread, self.rowid_alias)
                       for cols, _ in self.indexes)
        return any(cols[:2] == (thread, order) for cols, _ in self.indexes)

    def unique_alone(self, name: str) -> bool:
        return any(unique and cols == (name,) for cols, unique in self.indexes)


class Schema:
    """The user tables of a database, read through SQLite's own pragma functions.

    Table names are bound as values (``pragma_table_info(?)``), so reading the schema needs no quoting.
    (sqlite-utils' introspection does the same job, but importing it costs more than a whole scan of a
    small database.)
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._tables: dict[str, TableInfo] = {}
        self.names = self._table_names()

    def _table_names(self) -> list[str]:
        """Ordinary tables: no ``sqlite_*`` tables, no virtual tables, no FTS shadow tables."""
        rows = self.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
        virtual = [name for name, sql in rows if (sql or "").lstrip().upper().startswith("CREATE VIRTUAL")]
        return [name for name, sql in rows if not name.startswith("sqlite_") and name not in virtual
                and not any(name.startswith(v + "_") for v in virtual)]

    def table(self, name: str) -> TableInfo:
        if name not in self._tables:
            conn = self.conn
            columns = [Column(n, t or "", bool(nn), d, pk) for n, t, nn, d, pk in conn.execute(
                'SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid', (name,))]
            names = {c.name.lower() for c in columns}
            rowid = next((r for r in ROWID_NAMES if r not in names), None)
            if rowid is not None:
                try:
                    conn.execute(f"SELECT {rowid} FROM {q(name)} LIMIT 0")
                except sqlite3.OperationalError:
                    rowid = None  # WITHOUT ROWID
            pks = sorted((c for c in columns if c.pk), key=lambda c: c.pk)
            alias = pks[0].name if rowid and len(pks) == 1 and pks[0].type.upper() == "INTEGER" else None
            indexes = [(tuple(n for (n,) in conn.execute("SELECT name FROM pragma_index_info(?) ORDER BY seqno", (index,))),
                        bool(unique)) for index, unique in conn.execute('SELECT name, "unique" FROM pragma_index_list(?)', (name,))]
            if pks:
                indexes.append((tuple(c.name for c in pks), True))
            referenced_by = tuple(other for other in self.names if conn.execute(
                'SELECT 1 FROM pragma_foreign_key_list(?) WHERE "table" = ? COLLATE NOCASE LIMIT 1', (other, name)).fetchone())
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
            collated = "COLLATE" in (sql[0] or "").upper() if sql else True
            self._tables[name] = TableInfo(name, columns, rowid, alias, indexes, referenced_by, collated)
        return self._tables[name]


# --------------------------------------------------------------------------- layouts


class Layout(Struct, frozen=True):
    """Everything the store needs to read and write one table's threads; every name checked."""

    #: "thread" (one row per thread) or "item" (one row per item)
    kind: str
    table: str
    columns: tuple[str, ...]
    #: the name that reaches the row id
    rowid: str
    #: the INTEGER PRIMARY KEY column that is the row id, if any (left out when rows are copied)
    rowid_alias: str | None
    #: one row per thread: the JSON column, and the column naming the thread (None: the row id)
    json_column: str | None = None
    id_column: str | None = None
    #: one row per item
    item_column: str | None = None
    thread_column: str | None = None
    #: None: items are ordered by the row id
    order_column: str | None = None
    #: "rowid", "integer" (an integer column) or "other" (new items cannot be placed)
    order_kind: str = "rowid"
    #: the order column alone is unique across the table (a global sequence)
    order_unique: bool = False
    #: the thread column leads an index, so one thread's rows can be read by key
    thread_indexed: bool = False
    #: an index holds the rows in (thread, order) order, so whole threads can be streamed in chunks
    stream_indexed: bool = False
    #: thread keys compare byte for byte in SQL (no collation declared), as they do in Python
    thread_binary: bool = False
    #: columns whose values say when the row last changed
    time_columns: tuple[str, ...] = ()
    #: tables whose foreign keys point into this one
    referenced_by: tuple[str, ...] = ()
    #: time columns a new row must be given (NOT NULL, no default): it takes its neighbour's time
    required_times: tuple[str, ...] = ()
    dialect: str | None = None
    preset: str | None = None

    @property
    def copied_columns(self) -> tuple[str, ...]:
        """The columns a copied row carries (the row id alias gets a new value)."""
        return tuple(c for c in self.columns if c != self.rowid_alias)

    def describe(self) -> str:
        if self.kind == "thread":
            ident = self.id_column or "row id"
            return f"table {shown(self.table)}, one thread per row in {shown(self.json_column)} (keyed by {ident})"
        order = shown(self.order_column) if self.order_column else "row id"
        text = (f"table {shown(self.table)}, one item per row in {shown(self.item_column)}, threads by "
                f"{shown(self.thread_column)}, ordered by {order}")
        if self.preset:
            text = f"{self.preset}: {text}, dialect {self.dialect}"
        return text


def _time_columns(table: TableInfo, keys: tuple[str, ...]) -> tuple[str, ...]:
    lower = {c.name.lower(): c.name for c in table.columns}
    return tuple(lower[k.lower()] for k in keys if k.lower() in lower)


def _thread_layout(table: TableInfo, json_column: str, id_column: str | None) -> Layout:
    if id_column is None:
        pks = [c.name for c in table.columns if c.pk]
        id_column = pks[0] if len(pks) == 1 else None
    return Layout("thread", table.name, tuple(table.names), table.rowid, table.rowid_alias, json_column=json_column,
                  id_column=id_column, time_columns=_time_columns(table, THREAD_TIME_KEYS),
                  referenced_by=table.referenced_by)


def _item_layout(table: TableInfo, item_column: str, thread_column: str, order_column: str | None,
                 dialect: str | None = None, preset: str | None = None) -> Layout:
    if order_column is not None and order_column == table.rowid_alias:
        order_column = None  # ordering by the INTEGER PRIMARY KEY is ordering by row id
    if order_column is None:
        kind = "rowid"
    else:
        kind = "integer" if "INT" in table.column(order_column).type.upper() else "other"
    return Layout("item", table.name, tuple(table.names), table.rowid, table.rowid_alias, item_column=item_column,
                  thread_column=thread_column, order_column=order_column, order_kind=kind,
                  order_unique=order_column is not None and table.unique_alone(order_column),
                  thread_indexed=table.leads_index(thread_column),
                  stream_indexed=table.orders(thread_column, order_column), thread_binary=not table.collated,
                  time_columns=_time_columns(table, ITEM_TIME_KEYS), referenced_by=table.referenced_by,
                  required_times=tuple(c for c in _time_columns(table, ITEM_TIME_KEYS)
                                       if table.column(c).notnull and table.column(c).default is None),
                  dialect=dialect, preset=preset)


def _agents_preset(schema: Schema) -> list[Layout]:
    """OpenAI Agents SDK ``SQLiteSession``: a messages table keyed by an autoincrement id, and its sessions.

    The table names are the SDK's defaults (``agent_messages``, ``agent_sessions``) unless the app chose
    others, so the shape is matched, not the names.
    """
    sessions = {name for name in schema.names if set(schema.table(name).names) == {"session_id", "created_at", "updated_at"}}
    found = []
    for name in schema.names:
        table = schema.table(name)
        if set(table.names) == {"id", "session_id", "message_data", "created_at"} and table.rowid_alias == "id" and sessions:
            found.append(_item_layout(table, "message_data", "session_id", None, dialect="openai-responses",
                                      preset="openai-agents SQLiteSession"))
    return found


def _kind_of(raw: bytes) -> str | None:
    """What a sampled value holds: a "thread", an "item", other JSON ("json"), or None (not JSON)."""
    body = raw.strip()
    if not body[:1] in (b"[", b"{"):
        return None
    try:
        value = jsonio.loads(body)
    except jsonio.JsonReadError:
        return None
    parts = split_container(value)
    if parts is not None:
        items = parts[0]
        if not items:
            return None  # an empty thread says nothing either way
        return "thread" if all(isinstance(i, dict) for i in items) else "json"
    if isinstance(value, dict) and ("type" in value or "role" in value):
        return "item"
    return "json"


def _json_columns(schema: Schema, table: TableInfo) -> dict[str, str]:
    """The columns of ``table`` whose sampled values agree on holding threads or items."""
    textual = [c.name for c in table.columns if not any(t in c.type.upper() for t in ("INT", "REAL", "FLOA", "DOUB", "NUM", "BOOL", "DATE", "TIME"))]
    if not textual:
        return {}
    select = ", ".join(f"CAST({q(c)} AS BLOB)" for c in textual)
    rows = schema.conn.execute(f"SELECT {select} FROM {q(table.name)} LIMIT {SAMPLE_ROWS}").fetchall()
    found: dict[str, str] = {}
    for i, name in enumerate(textual):
        kinds = [kind for row in rows if row[i] is not None and (kind := _kind_of(row[i])) is not None]
        threads, items = kinds.count("thread"), kinds.count("item")
        # most sampled values must agree; a broken row or two does not hide a thread column
        if threads and not items and threads >= len(kinds) / 2:
            found[name] = "thread"
        elif items and not threads and items >= len(kinds) / 2:
            found[name] = "item"
    return found


def _pick_named(names: list[str], preferred: tuple[str, ...]) -> list[str]:
    lower = {n.lower(): n for n in names}
    return [lower[p] for p in preferred if p in lower]


class _Candidates(Struct):
    layouts: list[Layout] = field(default_factory=list)
    #: what could not be completed, for the error message
    partial: list[str] = field(default_factory=list)


def _candidates(schema: Schema, tables: list[str], options: Any) -> _Candidates:
    """Every (table, JSON column) that holds threads or items, completed with the options given."""
    found = _Candidates()
    for name in tables:
        table = schema.table(name)
        if table.rowid is None:
            continue
        for column, kind in _json_columns(schema, table).items():
            if kind == "thread":
                found.layouts.append(_thread_layout(table, column, options.id_column))
                continue
            threads = [options.thread_column] if options.thread_column else [
                c for c in _pick_named(table.names, THREAD_COLUMNS) if c != column]
            orders = [options.order_column] if options.order_column else _pick_named(table.names, ORDER_COLUMNS)
            if len(threads) == 1:
                found.layouts.append(_item_layout(table, column, threads[0], orders[0] if len(orders) == 1 else None))
            else:
                found.partial.append(f"{shown(name)} holds one item per row in {shown(column)} but no single thread "
                                     "column (pass --thread-column)")
    return found


def _table_list(schema: Schema) -> str:
    parts = []
    for name in schema.names[:20]:
        cols = ", ".join(shown(c)[1:-1] for c in schema.table(name).names[:12])
        parts.append(f"{shown(name)} ({cols})")
    more = f" and {len(schema.names) - 20} more" if len(schema.names) > 20 else ""
    return "; ".join(parts) + more if parts else "none"


def _check_table(schema: Schema, name: str) -> TableInfo:
    if name not in schema.names:
        raise ConfigError(f"no table named {shown(name)} (pass --table with one of: "
                          f"{', '.join(shown(n) for n in schema.names[:30]) or 'none'})")
    table = schema.table(name)
    if table.rowid is None:
        raise ConfigError(f"table {shown(name)} is a WITHOUT ROWID table, which threadfix does not support")
    return table


def _check_column(table: TableInfo, name: str | None, option: str) -> str | None:
    if name is not None and name not in table.names:
        raise ConfigError(f"table {shown(table.name)} has no column {shown(name)}; pass {option} with one of: "
                          f"{', '.join(shown(n) for n in table.names)}")
    return name


def find_layout(conn: sqlite3.Connection, options: Any) -> tuple[Layout, bool]:
    """The layout the options name, completed from the schema; True when something was detected.

    ``options`` is a :class:`~threadfix.stores.StoreOptions`. Raises ConfigError with the candidates
    and the options to pass when the choice is not clear.
    """
    schema = Schema(conn)
    if options.order_column and options.order_column.lower() in ROWID_NAMES:
        options = replace(options, order_column=None)  # "ordered by row id", said out loud
    item_options = options.thread_column or options.item_column or options.order_column
    if options.json_column and item_options:
        raise ConfigError("--json-column (one row per thread) cannot be combined with --thread-column, "
                          "--item-column or --order-column (one row per item)")
    if options.id_column and item_options:
        raise ConfigError("--id-column applies to one row per thread; for one row per item pass --thread-column")
    explicit = [options.json_column, options.id_column, options.thread_column, options.order_column, options.item_column]

    if options.table is None and not any(explicit):
        presets = _agents_preset(schema)
        if len(presets) == 1:
            return presets[0], True
        if len(presets) > 1:
            raise ConfigError("holds several openai-agents session tables: "
                              f"{', '.join(shown(p.table) for p in presets)}; pass --table")

    if options.table is not None:
        tables = [_check_table(schema, options.table).name]
    else:
        wanted = [c for c in explicit if c]
        tables = [n for n in schema.names if all(c in schema.table(n).names for c in wanted)]
        if wanted and len(tables) != 1:
            where = ", ".join(shown(t) for t in tables) if tables else "no table"
            raise ConfigError(f"{where} has the columns given; pass --table")

    if len(tables) == 1:
        table = _check_table(schema, tables[0])
        for value, option in ((options.json_column, "--json-column"), (options.id_column, "--id-column"),
                              (options.thread_column, "--thread-column"), (options.item_column, "--item-column"),
                              (options.order_column, "--order-column")):
            _check_column(table, value, option)
        if not any(explicit):
            presets = [p for p in _agents_preset(schema) if p.table == table.name]
            if presets:
                return presets[0], True
        if options.json_column:
            return _thread_layout(table, options.json_column, options.id_column), options.id_column is None
        if options.item_column and options.thread_column:
            order = options.order_column
            detected = False
            if order is None:
                orders = _pick_named(table.names, ORDER_COLUMNS)
                order = orders[0] if len(orders) == 1 else None
                detected = True
            return _item_layout(table, options.item_column, options.thread_column, order), detected

    found = _candidates(schema, tables, options)
    layouts = [l for l in found.layouts if _fits(l, options)]
    if len(layouts) == 1:
        return layouts[0], True
    if layouts:
        listed = "; ".join(_candidate_text(l) for l in layouts)
        raise ConfigError(f"holds threads in more than one place: {listed}; choose with {THREAD_OPTIONS}, or "
                          f"{ITEM_OPTIONS}")
    hints = f" ({'; '.join(found.partial)})" if found.partial else ""
    raise ConfigError(f"no table recognisably holds chat threads{hints}; tables: {_table_list(schema)}; pass "
                      f"{THREAD_OPTIONS}, or {ITEM_OPTIONS}")


def _fits(layout: Layout, options: Any) -> bool:
    """A detected candidate agrees with every option given."""
    if layout.kind == "thread":
        return not (options.item_column or options.thread_column or options.order_column) and (
            options.json_column in (None, layout.json_column))
    return not options.json_column and options.item_column in (None, layout.item_column)


def _candidate_text(layout: Layout) -> str:
    if layout.kind == "thread":
        return f"table {shown(layout.table)} column {shown(layout.json_column)} (one row per thread)"
    return (f"table {shown(layout.table)} column {shown(layout.item_column)} by {shown(layout.thread_column)} "
            "(one row per item)")
