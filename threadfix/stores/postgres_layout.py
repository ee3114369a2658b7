"""A PostgreSQL database named by a libpq URL: connecting, redacting, errors, the schema and the layout.

The URL is handed to libpq as it is, so the ``PG*`` environment variables, ``~/.pgpass`` and service
files work as they do for psql. What threadfix shows of it (messages, journal, ``--format json``) is
:func:`redact`: the URL without its password, wherever the password was written.

Layouts are those of SQLite (:mod:`threadfix.stores.sqlite_layout`): one row per thread in a ``json``,
``jsonb`` or ``text`` column, or one row per item with a thread column and an order. Every name is
checked against ``pg_catalog`` before it is quoted into SQL; values are always bound.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from msgspec import Struct

from threadfix.errors import BusyError, ConfigError, InputError, StoreError, ThreadfixError
from threadfix.stores.base import ITEM_TIME_KEYS, THREAD_TIME_KEYS
from threadfix.stores.sqlite_layout import ITEM_OPTIONS, ORDER_COLUMNS, SAMPLE_ROWS, THREAD_COLUMNS, THREAD_OPTIONS, \
    _kind_of, _pick_named, shown

SCHEMES = ("postgresql://", "postgres://")
#: query parameters whose values are secrets
SECRET_PARAMS = ("password", "sslpassword")
#: seconds a read statement may run (unless the session already has a statement_timeout of its own)
STATEMENT_TIMEOUT = 60.0
#: SQLSTATEs retried a bounded number of times by the writer
RETRIED = ("40001", "40P01")  # serialization_failure, deadlock_detected
LOCK_NOT_AVAILABLE, QUERY_CANCELED = "55P03", "57014"
TEXTUAL = ("json", "jsonb", "text", "varchar", "bpchar")


def is_postgres_url(spec: str) -> bool:
    return spec.startswith(SCHEMES)


def redact(url: str) -> str:
    """The URL without any password (in the user part or the query string): safe to show and to journal, and
    still a URL libpq can connect with (the password then comes from ``~/.pgpass`` or ``PGPASSWORD``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("://", 1)[0] + "://…"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hosts = netloc.rpartition("@")
        netloc = userinfo.split(":", 1)[0] + "@" + hosts
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, v) for k, v in pairs if k.lower() not in SECRET_PARAMS], safe="/:,")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _secrets(url: str) -> list[str]:
    """Every password the URL or the environment holds, to scrub from the server's and libpq's messages."""
    # (by pattern too: a URL too broken for urlsplit still has its password where libpq looks for it)
    found = re.findall(r"://[^/@?#:]*:([^@/?#]*)@", url) + re.findall(r"(?i)[?&](?:ssl)?password=([^&#]*)", url)
    try:
        parts = urlsplit(url)
        if parts.password:
            found += [parts.password, unquote(parts.password), quote(parts.password)]
        found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() in SECRET_PARAMS]
    except ValueError:
        pass
    if os.environ.get("PGPASSWORD"):
        found.append(os.environ["PGPASSWORD"])
    return sorted({s for s in found if s}, key=len, reverse=True)


def scrub(text: str, url: str) -> str:
    """A driver message with every password replaced, on one line (libpq quotes a URL it cannot parse whole)."""
    text = text.replace(url, redact(url))
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return " ".join(text.split())


def driver() -> Any:
    """The psycopg module, or the one-line error that names the extra."""
    try:
        import psycopg
    except ImportError:
        raise ConfigError("PostgreSQL needs the psycopg driver: pip install 'threadfix[postgres]'") from None
    return psycopg


def pg_error(exc: Exception, url: str, timeout: float | None = None) -> ThreadfixError:
    """One actionable error for a driver failure, with the exit code its kind calls for, never a password."""
    where = redact(url)
    state = getattr(getattr(exc, "diag", None), "sqlstate", None) or getattr(exc, "sqlstate", None)
    text = scrub(str(exc), url)
    if state == LOCK_NOT_AVAILABLE:
        waited = f" for longer than --busy-timeout ({timeout:g}s)" if timeout is not None else ""
        return BusyError(f"rows stayed locked by another session{waited}; nothing more was written, safe to retry",
                         where)
    if state in RETRIED:
        return BusyError(f"the server kept aborting the transaction ({text}); nothing more was written, safe to retry",
                         where)
    if state == QUERY_CANCELED:
        return BusyError(f"a statement ran past its statement_timeout ({text}); run again, or raise it with "
                         "PGOPTIONS='-c statement_timeout=...'", where)
    if state == "25006":  # read_only_sql_transaction
        return StoreError(f"the database cannot be written here ({text}); use a role that may write, or --dry-run",
                          where)
    if state is not None and state.startswith("42501"):
        return StoreError(f"permission denied ({text})", where)
    if state is None:
        return StoreError(f"cannot connect ({text})", where)
    return StoreError(f"PostgreSQL error {state}: {text}", where)


def connect(url: str, *, write: bool, timeout: float) -> Any:
    """A connection by the URL, libpq resolving the rest (environment, pgpass, service files).

    Reading: autocommit, every statement its own short transaction, the session read-only (so lint, report
    and ``--dry-run`` cannot write even by mistake), and a ``statement_timeout`` unless one is set already.
    Writing: transactions opened by the writer, ``lock_timeout`` = ``timeout`` (``--busy-timeout``).
    """
    psycopg = driver()
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise InputError(f"is not a valid PostgreSQL URL ({scrub(str(exc), url)})", redact(url)) from None
    try:
        conn = psycopg.connect(url, autocommit=not write, application_name="threadfix",
                               connect_timeout=int(os.environ.get("PGCONNECT_TIMEOUT") or 10))
    except psycopg.Error as exc:
        raise pg_error(exc, url) from None
    try:
        if not write:
            conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        if conn.execute("SHOW statement_timeout").fetchone()[0] in ("0", "0s"):
            conn.execute("SELECT set_config('statement_timeout', %s, false)", (f"{int(STATEMENT_TIMEOUT * 1000)}ms",))
        conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{max(1, int(timeout * 1000))}ms",))
        if write:
            conn.commit()
    except psycopg.Error as exc:
        conn.close()
        raise pg_error(exc, url) from None
    return conn


def q(name: str) -> str:
    """An identifier quoted for SQL (only ever called on names read from the catalog)."""
    return '"' + name.replace('"', '""') + '"'


# --------------------------------------------------------------------------- schema


class Column(Struct, frozen=True):
    name: str
    #: the type as SQL writes it (``format_type``), and its base type's name
    type: str
    typname: str
    notnull: bool
    #: has a default (a sequence, an identity, an expression)
    default: bool
    #: a generated column: never written
    generated: bool = False
    #: an identity column (``GENERATED ... AS IDENTITY``): restoring its value needs OVERRIDING SYSTEM VALUE
    identity: bool = False


class TableInfo(Struct):
    name: str  # as shown: ``table``, or ``schema.table`` outside public
    qualified: str  # quoted for SQL
    oid: int
    columns: list[Column]
    pk: tuple[str, ...]
    indexes: list[tuple[tuple[str, ...], bool]]
    referenced_by: tuple[str, ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def leads_index(self, name: str) -> bool:
        return any(cols and cols[0] == name for cols, _ in self.indexes)

    def unique_alone(self, name: str) -> bool:
        return any(unique and cols == (name,) for cols, unique in self.indexes)


class Schema:
    """The user tables of a database, read from ``pg_catalog`` (every name bound as a value)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        rows = conn.execute(
            "SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
            "AND n.nspname NOT LIKE 'pg\\_toast%%' AND NOT c.relispartition ORDER BY n.nspname <> 'public', n.nspname, "
            "c.relname").fetchall()
        self._oids = {}
        for oid, space, rel in rows:
            self._oids[rel if space == "public" else f"{space}.{rel}"] = (oid, space, rel)
        self.names = list(self._oids)
        self._tables: dict[str, TableInfo] = {}

    def find(self, name: str) -> str | None:
        """The shown name of the table ``--table`` names: ``table``, ``schema.table`` or ``public.table``."""
        if name in self._oids:
            return name
        if name.startswith("public.") and name[7:] in self._oids:
            return name[7:]
        return None

    def table(self, name: str) -> TableInfo:
        if name not in self._tables:
            oid, space, rel = self._oids[name]
            conn = self.conn
            columns = [Column(*row) for row in conn.execute(
                "SELECT a.attname, format_type(a.atttypid, a.atttypmod), "
                "CASE WHEN t.typtype = 'd' THEN (SELECT b.typname FROM pg_type b WHERE b.oid = t.typbasetype) "
                "ELSE t.typname END, a.attnotnull, a.atthasdef OR a.attidentity <> '', a.attgenerated <> '', "
                "a.attidentity <> '' FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                "WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum", (oid,))]
            by_num = dict(conn.execute("SELECT attnum, attname FROM pg_attribute WHERE attrelid = %s AND attnum > 0",
                                       (oid,)).fetchall())
            indexes, pk = [], ()
            for keys, unique, primary, partial in conn.execute(
                    "SELECT indkey::int2[], indisunique, indisprimary, indpred IS NOT NULL OR indexprs IS NOT NULL "
                    "FROM pg_index WHERE indrelid = %s", (oid,)):
                if partial:
                    continue
                cols = tuple(by_num.get(k, "") for k in keys)
                indexes.append((cols, unique))
                if primary:
                    pk = cols
            referenced_by = tuple(r for (r,) in conn.execute(
                "SELECT DISTINCT conrelid::regclass::text FROM pg_constraint WHERE contype = 'f' AND confrelid = %s",
                (oid,)))
            self._tables[name] = TableInfo(name, f"{q(space)}.{q(rel)}", oid, columns, pk, indexes, referenced_by)
        return self._tables[name]


# --------------------------------------------------------------------------- layouts


class Layout(Struct, frozen=True):
    """Everything the store needs to read and write one table's threads; every name checked."""

    kind: str  # "thread" or "item"
    table: str
    qualified: str
    #: every column, and the SQL type of each, in table order
    columns: tuple[str, ...]
    types: tuple[str, ...]
    #: the single-column primary key: keyset pagination, CAS, and new rows' ids
    key: str
    #: the key has a default (a sequence or an identity), so new rows get their ids from it
    key_default: bool = False
    #: columns a row copy or a restore may not write (generated ones)
    generated: tuple[str, ...] = ()
    identity: bool = False
    json_column: str | None = None  # the thread's (one per row) or the item's (one per item) JSON column
    json_type: str = "text"  # json, jsonb or text
    id_column: str | None = None  # one row per thread: the column naming the thread (the key when None)
    thread_column: str | None = None
    #: the columns items are ordered by, before the key (none: the key alone)
    order_columns: tuple[str, ...] = ()
    #: "key" (rows that must make room are copied to new key values), "integer" (a single integer order
    #: column, moved as little as possible) or "other" (new items cannot be placed)
    order_kind: str = "key"
    order_unique: bool = False
    thread_indexed: bool = False
    time_columns: tuple[str, ...] = ()
    referenced_by: tuple[str, ...] = ()
    #: columns a new item's row takes from the row before it (its time, when the time orders the items or
    #: must not be empty)
    inherited: tuple[str, ...] = ()
    dialect: str | None = None
    preset: str | None = None

    @property
    def copied_columns(self) -> tuple[str, ...]:
        """The columns a copied row carries (the key gets a new value)."""
        return tuple(c for c in self.columns if c != self.key and c not in self.generated)

    @property
    def restored_columns(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.generated)

    def type_of(self, name: str) -> str:
        return self.types[self.columns.index(name)]

    def describe(self) -> str:
        if self.kind == "thread":
            return (f"table {shown(self.table)}, one thread per row in {shown(self.json_column)} ({self.json_type}, "
                    f"keyed by {shown(self.id_column or self.key)})")
        order = ", ".join(shown(c) for c in (*self.order_columns, self.key))
        text = (f"table {shown(self.table)}, one item per row in {shown(self.json_column)} ({self.json_type}), threads "
                f"by {shown(self.thread_column)}, ordered by {order}")
        return f"{self.preset}: {text}, dialect {self.dialect}" if self.preset else text

    def locator(self) -> dict[str, Any]:
        """The layout as a journal entry names it (checked against the schema again by undo)."""
        return {"layout": self.kind, "table": self.table, "json_column": self.json_column, "key": self.key,
                "id_column": self.id_column, "thread_column": self.thread_column,
                "order_columns": list(self.order_columns)}


def _json_type(column: Column) -> str | None:
    if column.typname in ("json", "jsonb"):
        return column.typname
    return "text" if column.typname in ("text", "varchar", "bpchar") else None


def _times(table: TableInfo, keys: tuple[str, ...]) -> tuple[str, ...]:
    lower = {c.name.lower(): c.name for c in table.columns}
    return tuple(lower[k.lower()] for k in keys if k.lower() in lower)


def _base(table: TableInfo) -> dict[str, Any]:
    if len(table.pk) != 1:
        raise ConfigError(f"table {shown(table.name)} has no single-column primary key, which threadfix needs to "
                          "read it in chunks and to write it safely")
    key = table.column(table.pk[0])
    return dict(table=table.name, qualified=table.qualified, columns=tuple(table.names),
                types=tuple(c.type for c in table.columns), key=key.name, key_default=key.default,
                generated=tuple(c.name for c in table.columns if c.generated),
                identity=any(c.identity for c in table.columns), referenced_by=table.referenced_by)


def _checked_json(table: TableInfo, name: str, option: str) -> str:
    kind = _json_type(table.column(name))
    if kind is None:
        raise ConfigError(f"column {shown(name)} of {shown(table.name)} is {table.column(name).type}, not json, jsonb "
                          f"or text; pass {option} with a JSON column")
    return kind


def thread_layout(table: TableInfo, json_column: str, id_column: str | None) -> Layout:
    return Layout("thread", **_base(table), json_column=json_column,
                  json_type=_checked_json(table, json_column, "--json-column"), id_column=id_column,
                  time_columns=_times(table, THREAD_TIME_KEYS))


def item_layout(table: TableInfo, item_column: str, thread_column: str, order_columns: tuple[str, ...],
                dialect: str | None = None, preset: str | None = None) -> Layout:
    base = _base(table)
    order_columns = tuple(c for c in order_columns if c != base["key"])
    times = _times(table, ITEM_TIME_KEYS)
    if not order_columns:
        kind = "key"
        if not base["key_default"]:
            kind = "other"  # no sequence to give new rows their place
    elif len(order_columns) == 1 and table.column(order_columns[0]).typname in ("int2", "int4", "int8", "numeric"):
        kind = "integer"
    else:
        kind = "key" if base["key_default"] else "other"
    inherited = tuple(c for c in table.columns if c.name not in (base["key"], item_column, thread_column)
                      and not c.generated and (c.name in order_columns and kind == "key"
                                               or (c.name in times and c.notnull and not c.default)))
    return Layout("item", **base, json_column=item_column, json_type=_checked_json(table, item_column, "--item-column"),
                  thread_column=thread_column, order_columns=order_columns, order_kind=kind,
                  order_unique=kind == "integer" and table.unique_alone(order_columns[0]),
                  thread_indexed=table.leads_index(thread_column), time_columns=times,
                  inherited=tuple(c.name for c in inherited), dialect=dialect, preset=preset)


def _agents_preset(schema: Schema) -> list[Layout]:
    """The OpenAI Agents SDK's ``SQLAlchemySession``: ``agent_messages`` (id, session_id, message_data text,
    created_at) read in (created_at, id) order, beside ``agent_sessions``; matched by shape, not by name (the
    app may rename both tables)."""
    sessions = [n for n in schema.names if set(schema.table(n).names) == {"session_id", "created_at", "updated_at"}]
    found = []
    for name in schema.names if sessions else ():
        table = schema.table(name)
        if set(table.names) == {"id", "session_id", "message_data", "created_at"} and table.pk == ("id",):
            found.append(item_layout(table, "message_data", "session_id", ("created_at",), dialect="openai-responses",
                                     preset="openai-agents SQLAlchemySession"))
    return found


def _check_table(schema: Schema, name: str) -> TableInfo:
    found = schema.find(name)
    if found is None:
        raise ConfigError(f"no table named {shown(name)} (pass --table with one of: "
                          f"{', '.join(shown(n) for n in schema.names[:30]) or 'none'})")
    return schema.table(found)


def _check_column(table: TableInfo, name: str | None, option: str) -> str | None:
    if name is not None and name not in table.names:
        raise ConfigError(f"table {shown(table.name)} has no column {shown(name)}; pass {option} with one of: "
                          f"{', '.join(shown(n) for n in table.names)}")
    return name


def _json_columns(schema: Schema, table: TableInfo) -> dict[str, str]:
    """The columns of ``table`` whose sampled values agree on holding threads or items."""
    textual = [c.name for c in table.columns if _json_type(c) is not None]
    if not textual:
        return {}
    select = ", ".join(f"convert_to({q(c)}::text, 'UTF8')" for c in textual)
    rows = schema.conn.execute(f"SELECT {select} FROM {table.qualified} LIMIT {SAMPLE_ROWS}").fetchall()
    found: dict[str, str] = {}
    for i, name in enumerate(textual):
        kinds = [kind for row in rows if row[i] is not None and (kind := _kind_of(bytes(row[i]))) is not None]
        threads, items = kinds.count("thread"), kinds.count("item")
        if threads and not items and threads >= len(kinds) / 2:
            found[name] = "thread"
        elif items and not threads and items >= len(kinds) / 2:
            found[name] = "item"
    return found


def find_layout(conn: Any, options: Any) -> tuple[Layout, bool]:
    """The layout the options name, completed from the schema; True when something was detected (the same
    options and the same rules as SQLite's :func:`threadfix.stores.sqlite_layout.find_layout`)."""
    schema = Schema(conn)
    order = options.order_column
    item_options = options.thread_column or options.item_column or order
    if options.json_column and item_options:
        raise ConfigError("--json-column (one row per thread) cannot be combined with --thread-column, "
                          "--item-column or --order-column (one row per item)")
    if options.id_column and item_options:
        raise ConfigError("--id-column applies to one row per thread; for one row per item pass --thread-column")
    explicit = [options.json_column, options.id_column, options.thread_column, order, options.item_column]
    if options.table is None and not any(explicit):
        presets = _agents_preset(schema)
        if len(presets) == 1:
            return presets[0], True
        if presets:
            raise ConfigError(f"holds several openai-agents session tables: {', '.join(shown(p.table) for p in presets)}; "
                              "pass --table")
    if options.table is not None:
        tables = [_check_table(schema, options.table).name]
    else:
        wanted = [c for c in explicit if c]
        tables = [n for n in schema.names if all(c in schema.table(n).names for c in wanted)]
        if wanted and len(tables) != 1:
            where = ", ".join(shown(t) for t in tables) if tables else "no table"
            raise ConfigError(f"{where} has the columns given; pass --table")
    if len(tables) == 1:
        table = schema.table(tables[0])
        for value, option in ((options.json_column, "--json-column"), (options.id_column, "--id-column"),
                              (options.thread_column, "--thread-column"), (options.item_column, "--item-column"),
                              (order, "--order-column")):
            _check_column(table, value, option)
        if not any(explicit):
            presets = [p for p in _agents_preset(schema) if p.table == table.name]
            if presets:
                return presets[0], True
        if options.json_column:
            return thread_layout(table, options.json_column, options.id_column), options.id_column is None
        if options.item_column and options.thread_column:
            if order is None:
                orders = _pick_named(table.names, ORDER_COLUMNS)
                return item_layout(table, options.item_column, options.thread_column,
                                   tuple(orders[:1]) if len(orders) == 1 else ()), True
            return item_layout(table, options.item_column, options.thread_column, (order,)), False
    layouts, partial = [], []
    for name in tables:
        table = schema.table(name)
        if len(table.pk) != 1:
            continue
        for column, kind in _json_columns(schema, table).items():
            if kind == "thread":
                if not (options.item_column or options.thread_column or order) and options.json_column in (None, column):
                    layouts.append(thread_layout(table, column, options.id_column))
                continue
            threads = [options.thread_column] if options.thread_column else [
                c for c in _pick_named(table.names, THREAD_COLUMNS) if c != column]
            orders = [order] if order else _pick_named(table.names, ORDER_COLUMNS)
            if len(threads) != 1:
                partial.append(f"{shown(name)} holds one item per row in {shown(column)} but no single thread column "
                               "(pass --thread-column)")
            elif not options.json_column and options.item_column in (None, column):
                layouts.append(item_layout(table, column, threads[0], tuple(orders[:1]) if len(orders) == 1 else ()))
    if len(layouts) == 1:
        return layouts[0], True
    if layouts:
        listed = "; ".join(f"table {shown(l.table)} column {shown(l.json_column)} ("
                           f"{'one row per thread' if l.kind == 'thread' else 'one row per item'})" for l in layouts)
        raise ConfigError(f"holds threads in more than one place: {listed}; choose with {THREAD_OPTIONS}, or "
                          f"{ITEM_OPTIONS}")
    hints = f" ({'; '.join(partial)})" if partial else ""
    listed = "; ".join(f"{shown(n)} ({', '.join(schema.table(n).names[:12])})" for n in schema.names[:20]) or "none"
    raise ConfigError(f"no table recognisably holds chat threads{hints}; tables: {listed}; pass {THREAD_OPTIONS}, "
                      f"or {ITEM_OPTIONS}")
