"""Repair's fast path over one-row-per-item tables: SQLite tells which threads could need repair.

Most stored threads need no repair, and for a thread of OpenAI Responses items that takes only each
item's ``type`` and, for calls and outputs, its ``call_id``. Decoding every item in Python costs more
than the whole scan should, so SQLite extracts those two fields (``->>``, in C) in table order, which on
an interleaved table is far cheaper than walking the thread index; only call and output rows, and rows
SQLite cannot vouch for, reach Python, and no item is decoded there.

A thread is **settled** when every row is JSON text of at most ``--max-doc-mb``, an object of a Responses
type, and its calls and outputs are function calls each answered once, after it (what the dialect's
``quick_healthy`` checks; :func:`pairs_settle` is held to the same answers by the tests): a full read
finds it healthy, since its first item names the dialect. Every other thread is a **suspect**, read in
full by key exactly as a full read gives it. Threads come in key order, settled ones as counts, so repair
reports what a full read does.

Memory: the pass first walks the thread index for each thread's last row id (about 150 bytes a thread,
at most :data:`MAX_THREADS`), then holds a thread's call and output rows only while it is inside it.
A table that is not Responses items, has more threads, or a row SQLite cannot parse, is read in full.

SQLite and orjson disagree on a few malformed rows: invalid UTF-8, an unpaired surrogate escape, nesting
past orjson's limit, a repeated key (SQLite reads the first, orjson the last). In a settled thread such a
row goes unnoticed here (a full read reports it as unreadable, or reads the other ``type``); lint and
report always read in full.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterator
from operator import itemgetter
from typing import Any

from msgspec import Struct

from threadfix.stores.base import Settled
from threadfix.stores.settle import (
    CALL, DIALECT, IS_CALL, IS_OUTPUT, OUTPUT, answered_in_turn, pairs_settle, plain_types,
)
from threadfix.stores.sqlite_layout import SQLITE_TOOBIG, Layout, q

#: row ids per read transaction of the screening pass (each its own short read, as every store read)
SPAN = 8192
#: threads walked per read transaction, and at most in all (their last row ids are held)
WALK_CHUNK = 5000
MAX_THREADS = 250_000
#: suspects remembered at most, and call and output rows held at most; beyond, the table is read in full
MAX_SUSPECTS = 20_000
MAX_HELD = 100_000
#: once this many threads are decided, more than half of them suspect means the table is not Responses items
SAMPLE = 512
#: a screened row: (thread, type code, call_id as bytes[, order])
_ORDER = itemgetter(3)
#: the last row id of a thread already decided (below every row id)
_DECIDED = -(2**63) - 1
_NUMBERS = (int, float)


# --------------------------------------------------------------------------- what SQLite can vouch for


class JsonSql(Struct, frozen=True):
    """How this SQLite reads JSON, probed once: what a row must pass before its fields can be trusted."""

    #: ``{0}``, ``{1}`` -> the field extraction (``->>`` from 3.38, json_extract before)
    extract: str
    #: rows must be validated first: SQLite reads JSON5 (3.42+), which orjson does not
    validate: bool
    #: rows must be TEXT: SQLite reads a BLOB as binary JSON (3.45+), not as the text orjson reads
    text_only: bool


def probe_json(conn: sqlite3.Connection) -> JsonSql | None:
    """What SQLite's JSON functions accept, or None when they cannot screen (missing, or no strict check)."""
    extract = next((form for form in ("({0} ->> {1})", "json_extract({0}, {1})")
                    if not _fails(conn, "SELECT " + form.format("'{}'", "'$.a'"))), None)
    if extract is None:
        return None

    def field_of(document: str) -> str:
        return "SELECT " + extract.format(document, "'$.a'")

    validate = not _fails(conn, field_of("'{a:1}'"))
    if validate and not _returns(conn, "SELECT json_valid('{a:1}'), json_valid('[1,]'), json_valid('{\"a\":1}')", (0, 0, 1)):
        return None
    text_only = not _returns(conn, field_of("CAST('{\"a\":7}' AS BLOB)"), (7,))
    return JsonSql(extract, validate, text_only)


def _fails(conn: sqlite3.Connection, sql: str) -> bool:
    try:
        conn.execute(sql).fetchone()
    except sqlite3.Error:
        return True
    return False


def _returns(conn: sqlite3.Connection, sql: str, expected: tuple[Any, ...]) -> bool:
    try:
        return conn.execute(sql).fetchone() == expected
    except sqlite3.Error:
        return False


def screen_sql(layout: Layout, json: JsonSql) -> str:
    """The screening statement over row ids ``(?, ?]``, in row id order: every row that is not a sound
    Responses item of a plain type, as (thread, type code, call_id[, order]); the code is NULL when the
    row is anything but a sound function call or output.

    Each row's type is extracted where it filters and where it is coded: SQLite parses the row once and
    finds it in its parse cache the second time. A row that is not JSON stops the statement (``malformed
    JSON``), as does a row over ``--max-doc-mb`` on a connection :func:`limit_rows` set up (``too big``),
    and the table is then read in full.
    """
    t, r, th, it = q(layout.table), layout.rowid, q(layout.thread_column), q(layout.item_column)
    guards = []  # what must hold before SQLite's reading of a row is orjson's
    if json.text_only:
        guards.append(f"typeof({it}) = 'text'")
    if json.validate:
        guards.append(f"json_valid({it})")
    kind = json.extract.format(it, "'$.type'")
    call_id = json.extract.format(it, "'$.call_id'")
    if guards:
        kind = f"CASE WHEN {' AND '.join(guards)} THEN {kind} END"
        call_id = f"CASE WHEN {' AND '.join(guards)} THEN {call_id} END"
    # most rows are plain: their types are tested first, in one IN list (a lookup, not a comparison per type);
    # a row with no type, or one SQLite could not vouch for (NULL), is not plain
    plain = f"coalesce({kind}, '') NOT IN ({', '.join(_literal(name) for name in plain_types())})"
    code = f"CASE {kind} WHEN '{CALL}' THEN {IS_CALL} WHEN '{OUTPUT}' THEN {IS_OUTPUT} END"
    order = f", {q(layout.order_column)}" if layout.order_column else ""
    return (f"SELECT {th}, {code}, {call_id}{order} FROM {t} WHERE {r} > ? AND {r} <= ? AND {th} IS NOT NULL "
            f"AND {plain} ORDER BY {r}")


def limit_rows(conn: sqlite3.Connection, max_bytes: int) -> None:
    """Have SQLite refuse to load a value over ``max_bytes`` (SQLITE_TOOBIG) on the screening connection.

    A row over ``--max-doc-mb`` must never be settled (a full read refuses it). Checking each row's size in
    the statement costs a second load of every row, a tenth of the pass; SQLite checks its length limit as
    it loads a value from its overflow pages, where any value of a MiB or more lies, for nothing.
    """
    if max_bytes < conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH):  # (no value is longer than SQLite's own limit)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max_bytes)


def _refused(exc: sqlite3.Error) -> bool:
    """SQLite stopped the statement at a row it cannot vouch for: not JSON, or over the length limit."""
    return getattr(exc, "sqlite_errorcode", None) == SQLITE_TOOBIG or "malformed JSON" in str(exc)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# --------------------------------------------------------------------------- deciding a thread


class Screen:
    """One screening pass over the rows up to ``max_rowid``: :meth:`run` gives the suspects' keys (as the
    screening connection reads them: text as bytes), or None when the table is better read in full."""

    def __init__(self, conn: sqlite3.Connection, layout: Layout, statement: str, max_rowid: int,
                 ends: dict[Any, int]) -> None:
        self.conn = conn
        self.statement = statement
        self.max_rowid = max_rowid
        self.ordered = layout.order_column is not None
        #: each thread's last row id
        self.ends = ends
        #: the held rows of the threads the pass is inside, by key
        self.open: dict[Any, list[tuple[Any, ...]]] = {}
        #: (last row id, tie, key) of the open threads: the next to end first
        self.closing: list[tuple[int, int, Any]] = []
        self.suspects: set[Any] = set()
        self.decided = 0
        self.held = 0

    def run(self, min_rowid: int) -> set[Any] | None:
        """Screen rows ``min_rowid .. max_rowid``, one span of row ids per read transaction."""
        low = min_rowid - 1
        try:
            while low < self.max_rowid:
                high = min(self.max_rowid, low + SPAN)
                rows = self.conn.execute(self.statement, (low, high)).fetchall()
                if rows:
                    self._take(rows)
                self._decide_through(high)
                if self._overflowing():
                    return None
                low = high
        except (sqlite3.OperationalError, sqlite3.DataError) as exc:
            if _refused(exc):
                return None  # a row SQLite cannot parse, or too big: a full read says which
            raise
        for key in list(self.open):  # rows written meanwhile: decided on what was read
            self._decide(key)
        return None if len(self.suspects) > MAX_SUSPECTS else self.suspects

    def _take(self, rows: list[tuple[Any, ...]]) -> None:
        """Hold each row with its thread (rows come in row id order, so each thread's stay in it)."""
        opened, ends, closing = self.open, self.ends, self.closing
        held_by = opened.get
        for row in rows:
            held = held_by(row[0])
            if held is not None:
                held.append(row)
                continue
            key = row[0]
            opened[key] = [row]
            last = ends.get(key, _DECIDED)
            if last == _DECIDED or last > self.max_rowid:
                # a thread the walk did not see, seen again after its end, or longer than the pass: written
                # meanwhile, so read in full
                self.suspects.add(key)
            heapq.heappush(closing, (last, len(closing), key))
        self.held += len(rows)

    def _decide_through(self, high: int) -> None:
        closing, opened = self.closing, self.open
        while closing and closing[0][0] <= high:
            key = heapq.heappop(closing)[2]
            if key in opened:
                self._decide(key)

    def _decide(self, key: Any) -> None:
        rows = self.open.pop(key)
        self.decided += 1
        self.held -= len(rows)
        if key in self.ends:
            self.ends[key] = _DECIDED  # a row of it seen from now on was written meanwhile
        if not self._settles(rows):
            self.suspects.add(key)

    def _settles(self, rows: list[tuple[Any, ...]]) -> bool:
        """The thread's calls and outputs, put in thread order, settle it."""
        columns = tuple(zip(*rows))
        if self.ordered:
            if type(columns[3][0]) not in _NUMBERS:
                return False  # text, blob or NULL orders: Python might not sort them as SQLite does
            try:
                in_order = list(columns[3]) == sorted(columns[3])
            except TypeError:  # numbers mixed with other types
                return False
            if not in_order:
                rows.sort(key=_ORDER)  # stable: rows of equal order stay in row id order, as a full read has them
                columns = tuple(zip(*rows))
        codes, call_ids = columns[1], columns[2]
        return answered_in_turn(codes, call_ids) or pairs_settle(codes, call_ids)

    def _overflowing(self) -> bool:
        suspects = len(self.suspects)
        return (suspects > MAX_SUSPECTS or self.held > MAX_HELD
                or (self.decided >= SAMPLE and 2 * suspects > self.decided))


def walk_ends(conn: sqlite3.Connection, layout: Layout) -> dict[Any, int] | None:
    """Each thread's last row id, by key in key order (text keys as bytes, as the screen reads them), walking
    the thread index in chunks; None when there are too many threads, or BLOB keys."""
    t, r, th = q(layout.table), layout.rowid, q(layout.thread_column)
    first = f"SELECT {th}, max({r}) FROM {t} WHERE {th} IS NOT NULL GROUP BY {th} ORDER BY {th} LIMIT ?"
    after = f"SELECT {th}, max({r}) FROM {t} WHERE {th} > ? GROUP BY {th} ORDER BY {th} LIMIT ?"
    ends: dict[Any, int] = {}
    rows = conn.execute(first, (WALK_CHUNK,)).fetchall()
    while rows:
        for key, last in rows:
            if type(key) is bytes:
                return None  # a BLOB key would read as the same bytes as a text one
            ends[key.encode() if type(key) is str else key] = last
        if len(ends) > MAX_THREADS:
            return None
        rows = conn.execute(after, (rows[-1][0], WALK_CHUNK)).fetchall()
    return ends


def in_key_order(ends: dict[Any, int], suspects: set[Any], max_rowid: int) -> Iterator[Any]:
    """The walked keys in key order: suspects, and threads written to past ``max_rowid`` since the pass began,
    as keys (to be read in full); the others as Settled counts."""
    settled = 0
    for key, last in ends.items():
        if key in suspects or last > max_rowid:
            if settled:
                yield Settled(settled, DIALECT)
                settled = 0
            yield key
        else:
            settled += 1
    if settled:
        yield Settled(settled, DIALECT)
