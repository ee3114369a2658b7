"""SQLite's own part of a table store: opening a database, its errors, and reading its schema.

Connections open an existing database by URI and never create one; a failure becomes one actionable
error with the exit code its kind calls for (:func:`sqlite_error`); the schema is read through SQLite's
pragma functions (:class:`Schema`), for the engine-neutral layout detection of
:mod:`threadfix.stores.table_layout`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from threadfix.errors import BusyError, InputError, StoreError, ThreadfixError
from threadfix.stores.table_layout import ROWID_NAMES, Column, Layout, TableInfo, find_layout, shown

__all__ = ["Layout", "Schema", "connect", "find_layout", "q", "shown", "sqlite_error"]


def q(name: str) -> str:
    """A schema name quoted for SQL, as sqlite-utils' ``quote_identifier`` does (only ever called on names
    checked against the schema)."""
    return '"' + name.replace('"', '""') + '"'


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


#: primary result codes (https://sqlite.org/rescode.html)
SQLITE_PERM, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR = 3, 5, 6, 8, 10
SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_TOOBIG, SQLITE_NOTADB = 11, 13, 14, 18, 26
#: extended codes: a WAL database whose -shm cannot be created (a reader needs it too)
SQLITE_READONLY_CANTINIT, SQLITE_READONLY_DIRECTORY = SQLITE_READONLY | 5 << 8, SQLITE_READONLY | 6 << 8


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

    def sample(self, table: str, columns: Sequence[str], limit: int) -> list[tuple[bytes | None, ...]]:
        select = ", ".join(f"CAST({q(c)} AS BLOB)" for c in columns)
        return self.conn.execute(f"SELECT {select} FROM {q(table)} LIMIT {int(limit)}").fetchall()
