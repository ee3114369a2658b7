"""Where a database keeps its threads: a table layout, found from the schema or from the options.

Two layouts are understood, whatever the database engine:

* **one row per thread**: a JSON column holds the thread (an array of items, or an object holding
  them under ``messages``/``input``/..., as for files);
* **one row per item**: a JSON column holds one item, a thread column names its thread, and an order
  column (or the row id) orders the items of a thread.

Presets are recognised from the schema first (the OpenAI Agents SDK's ``SQLiteSession``). Otherwise a
table is picked only when the schema and a few sampled values leave no doubt; when they do not, the
error lists the candidates and the options that choose one. Every name given on the command line is
checked against the schema before it is quoted into SQL (SQLite reads a double-quoted name that
matches nothing as a string literal, so quoting alone is not enough); values are always bound.

The schema is read by the database's adapter (:class:`Schema`, e.g. SQLite's pragma functions); this
module only decides from what it reports, so a second engine detects layouts exactly as SQLite does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from msgspec import Struct, field
from msgspec.structs import replace

from threadfix import jsonio
from threadfix.errors import ConfigError
from threadfix.stores.document import split_container
from threadfix.times import ITEM_TIME_KEYS, THREAD_TIME_KEYS

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


def shown(name: str) -> str:
    """A name for a message: quoted, and cut when absurdly long."""
    return '"' + (name if len(name) <= 60 else name[:57] + "...") + '"'


# --------------------------------------------------------------------------- what a schema reports


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




class Schema(Protocol):
    """The user tables of a database, as its adapter reads them (what layout detection needs of a schema)."""

    #: ordinary user tables, in name order (no system, virtual or full-text shadow tables)
    names: list[str]

    def table(self, name: str) -> TableInfo:
        """One table's columns, row id, indexes and references (``name`` is one of :attr:`names`)."""

    def sample(self, table: str, columns: Sequence[str], limit: int) -> list[tuple[bytes | None, ...]]:
        """Up to ``limit`` rows of these columns, each value as the bytes it holds (None for NULL)."""


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


def thread_layout(table: TableInfo, json_column: str, id_column: str | None) -> Layout:
    if id_column is None:
        pks = [c.name for c in table.columns if c.pk]
        id_column = pks[0] if len(pks) == 1 else None
    return Layout("thread", table.name, tuple(table.names), table.rowid, table.rowid_alias, json_column=json_column,
                  id_column=id_column, time_columns=_time_columns(table, THREAD_TIME_KEYS),
                  referenced_by=table.referenced_by)


def item_layout(table: TableInfo, item_column: str, thread_column: str, order_column: str | None,
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
            found.append(item_layout(table, "message_data", "session_id", None, dialect="openai-responses",
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
    rows = schema.sample(table.name, textual, SAMPLE_ROWS)
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
                found.layouts.append(thread_layout(table, column, options.id_column))
                continue
            threads = [options.thread_column] if options.thread_column else [
                c for c in _pick_named(table.names, THREAD_COLUMNS) if c != column]
            orders = [options.order_column] if options.order_column else _pick_named(table.names, ORDER_COLUMNS)
            if len(threads) == 1:
                found.layouts.append(item_layout(table, column, threads[0], orders[0] if len(orders) == 1 else None))
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


def check_table(schema: Schema, name: str) -> TableInfo:
    if name not in schema.names:
        raise ConfigError(f"no table named {shown(name)} (pass --table with one of: "
                          f"{', '.join(shown(n) for n in schema.names[:30]) or 'none'})")
    table = schema.table(name)
    if table.rowid is None:
        raise ConfigError(f"table {shown(name)} is a WITHOUT ROWID table, which threadfix does not support")
    return table


def check_column(table: TableInfo, name: str | None, option: str) -> str | None:
    if name is not None and name not in table.names:
        raise ConfigError(f"table {shown(table.name)} has no column {shown(name)}; pass {option} with one of: "
                          f"{', '.join(shown(n) for n in table.names)}")
    return name


def find_layout(schema: Schema, options: Any) -> tuple[Layout, bool]:
    """The layout the options name, completed from the schema; True when something was detected.

    ``options`` is a :class:`~threadfix.stores.StoreOptions`. Raises ConfigError with the candidates
    and the options to pass when the choice is not clear.
    """
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
        tables = [check_table(schema, options.table).name]
    else:
        wanted = [c for c in explicit if c]
        tables = [n for n in schema.names if all(c in schema.table(n).names for c in wanted)]
        if wanted and len(tables) != 1:
            where = ", ".join(shown(t) for t in tables) if tables else "no table"
            raise ConfigError(f"{where} has the columns given; pass --table")

    if len(tables) == 1:
        table = check_table(schema, tables[0])
        for value, option in ((options.json_column, "--json-column"), (options.id_column, "--id-column"),
                              (options.thread_column, "--thread-column"), (options.item_column, "--item-column"),
                              (options.order_column, "--order-column")):
            check_column(table, value, option)
        if not any(explicit):
            presets = [p for p in _agents_preset(schema) if p.table == table.name]
            if presets:
                return presets[0], True
        if options.json_column:
            return thread_layout(table, options.json_column, options.id_column), options.id_column is None
        if options.item_column and options.thread_column:
            order = options.order_column
            detected = False
            if order is None:
                orders = _pick_named(table.names, ORDER_COLUMNS)
                order = orders[0] if len(orders) == 1 else None
                detected = True
            return item_layout(table, options.item_column, options.thread_column, order), detected

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
