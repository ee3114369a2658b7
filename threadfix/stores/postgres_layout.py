"""A PostgreSQL database named by a libpq URL: connecting, redacting, errors, and its schema.

The URL is handed to libpq as it is, so the ``PG*`` environment variables, ``~/.pgpass`` and service
files work as they do for psql. What threadfix shows of it (messages, journal, ``--format json``) is
:func:`redact`: the URL without its password, wherever the password was written.

The schema is read from ``pg_catalog`` for the table engine's layout detection
(:mod:`threadfix.stores.table_layout`), with every name bound as a value.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from collections.abc import Sequence

from threadfix.errors import BusyError, ConfigError, InputError, StoreError, ThreadfixError
from threadfix.stores.table_layout import Column, TableInfo

SCHEMES = ("postgresql://", "postgres://")
#: query parameters whose values are secrets
SECRET_PARAMS = ("password", "sslpassword")
#: seconds a read statement may run (unless the session already has a statement_timeout of its own)
STATEMENT_TIMEOUT = 60.0
#: SQLSTATEs retried a bounded number of times by the writer
RETRIED = ("40001", "40P01")  # serialization_failure, deadlock_detected
LOCK_NOT_AVAILABLE, QUERY_CANCELED = "55P03", "57014"
#: types psycopg loads as Python values that round-trip exactly; every other is read as its text, which
#: PostgreSQL casts back on write (a journal's before-image, a copied row) without loss
NATIVE = ("int2", "int4", "int8", "oid", "bool", "float4", "float8", "text", "varchar", "bpchar", "name", "bytea")


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


def connect(url: str, *, write: bool, timeout: float, search_path: str | None = None) -> Any:
    """An autocommit connection by the URL, libpq resolving the rest (environment, pgpass, service files).

    Reading: the session read-only (so lint, report and ``--dry-run`` cannot write even by mistake), each
    statement its own short transaction, and a ``statement_timeout`` unless the session has one. Both:
    ``lock_timeout`` = ``timeout`` (``--busy-timeout``); ``search_path``: the schema ``--table`` named.
    """
    psycopg = driver()
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise InputError(f"is not a valid PostgreSQL URL ({scrub(str(exc), url)})", redact(url)) from None
    try:
        conn = psycopg.connect(url, autocommit=True, application_name="threadfix",
                               connect_timeout=int(os.environ.get("PGCONNECT_TIMEOUT") or 10))
    except psycopg.Error as exc:
        raise pg_error(exc, url) from None
    try:
        _load_as_text(conn)
        if not write:
            conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        if conn.execute("SHOW statement_timeout").fetchone()[0] in ("0", "0s"):
            conn.execute("SELECT set_config('statement_timeout', %s, false)", (f"{int(STATEMENT_TIMEOUT * 1000)}ms",))
        conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{max(1, int(timeout * 1000))}ms",))
        if search_path is not None:
            conn.execute("SELECT set_config('search_path', %s, false)", (quoted(search_path),))
    except psycopg.Error as exc:
        conn.close()
        raise pg_error(exc, url) from None
    return conn


def _load_as_text(conn: Any) -> None:
    from psycopg.adapt import Loader

    class AsText(Loader):
        def load(self, data: Any) -> str:
            return bytes(data).decode("utf-8", "surrogateescape")

    for info in list(conn.adapters.types):
        if info.name not in NATIVE:
            conn.adapters.register_loader(info.oid, AsText)
        if getattr(info, "array_oid", 0):
            conn.adapters.register_loader(info.array_oid, AsText)


def quoted(name: str) -> str:
    """An identifier quoted as PostgreSQL reads it, for text bound as a value (``search_path``, ``to_regclass``)."""
    return '"' + name.replace('"', '""') + '"'


def q(name: str) -> str:
    """An identifier quoted for a statement's text (only ever called on names read from the catalog), ``%`` doubled
    as the driver's placeholders are ``%s``: every statement holding one is run with its parameters, even none
    (``()``), for psycopg reads ``%%`` as ``%`` only then."""
    return quoted(name).replace("%", "%%")


def split_table(conn: Any, name: str) -> tuple[str | None, str]:
    """``--table`` as (schema, table): ``schema.table`` names another schema unless a table of the current
    one is named so, dot and all."""
    if "." not in name or conn.execute(
            "SELECT 1 FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relname = %s",
            (name,)).fetchone():
        return None, name
    space, _, table = name.partition(".")
    return space, table


# --------------------------------------------------------------------------- schema


class Schema:
    """The tables of the session's current schema, read from ``pg_catalog`` (every name bound as a value),
    as the table engine's layout detection reads them (:class:`threadfix.stores.table_layout.Schema`).

    A table's row id is its single-column primary key (any type for one row per thread; one row per item
    needs an integer one, so new rows get their ids from its sequence); without one it has none, and is not
    read. Generated columns are left out: nothing writes them.
    """

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._oids = dict(conn.execute(
            "SELECT c.relname, c.oid FROM pg_class c WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition "
            "AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) ORDER BY c.relname").fetchall())
        self.names = list(self._oids)
        self._tables: dict[str, TableInfo] = {}

    def table(self, name: str) -> TableInfo:
        if name not in self._tables:
            oid, conn = self._oids[name], self.conn
            rows = conn.execute(
                "SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, "
                "CASE WHEN a.attidentity <> '' THEN 'identity' ELSE pg_get_expr(d.adbin, d.adrelid) END "
                "FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
                "WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' "
                "ORDER BY a.attnum", (oid,)).fetchall()
            found: dict[int, tuple[list[str], bool, bool]] = {}
            for index, attname, unique, primary in conn.execute(
                    "SELECT i.indexrelid, a.attname, i.indisunique, i.indisprimary FROM pg_index i "
                    "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) "
                    "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
                    "WHERE i.indrelid = %s AND i.indpred IS NULL AND i.indexprs IS NULL ORDER BY i.indexrelid, k.ord",
                    (oid,)):
                found.setdefault(index, ([], unique, primary))[0].append(attname)
            indexes = [(tuple(cols), unique) for cols, unique, _ in found.values()]
            pk = next((tuple(cols) for cols, _, primary in found.values() if primary), ())
            columns = [Column(attname, typ, notnull, default, pk.index(attname) + 1 if attname in pk else 0)
                       for _, attname, typ, notnull, default in rows]
            key = pk[0] if len(pk) == 1 else None
            referenced_by = tuple(r for (r,) in conn.execute(
                "SELECT DISTINCT conrelid::regclass::text FROM pg_constraint WHERE contype = 'f' AND confrelid = %s",
                (oid,)))
            # (text keys compare by the database's collation: never byte for byte, as far as the engine knows)
            self._tables[name] = TableInfo(name, columns, key, key, indexes, referenced_by, collated=True)
        return self._tables[name]

    def sample(self, table: str, columns: Sequence[str], limit: int) -> list[tuple[bytes | None, ...]]:
        select = ", ".join(f"convert_to({q(c)}::text, 'UTF8')" for c in columns)
        return self.conn.execute(f"SELECT {select} FROM {q(table)} LIMIT {int(limit)}", ()).fetchall()

    def parent_of(self, table: str, column: str) -> tuple[str, str, str] | None:
        """The schema, table and column a single-column foreign key of ``table.column`` references, if any."""
        return self.conn.execute(
            "SELECT n.nspname, r.relname, pa.attname FROM pg_constraint c "
            "JOIN pg_class r ON r.oid = c.confrelid JOIN pg_namespace n ON n.oid = r.relnamespace "
            "JOIN pg_attribute ca ON ca.attrelid = c.conrelid AND ca.attnum = c.conkey[1] "
            "JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = c.confkey[1] "
            "WHERE c.contype = 'f' AND c.conrelid = %s AND array_length(c.conkey, 1) = 1 AND ca.attname = %s",
            (self._oids[table], column)).fetchone()


