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
With ``--jobs``, the row ids are cut into parts, each screened in a process of its own (:func:`screen_table`).

SQLite and orjson disagree on a few malformed rows: invalid UTF-8, an unpaired surrogate escape, nesting
past orjson's limit, a repeated key (SQLite reads the first, orjson the last). In a settled thread such a
row goes unnoticed here (a full read reports it as unreadable, or reads the other ``type``); lint and
report always read in full.
"""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Callable
from functools import partial
from itertools import pairwise
from operator import itemgetter
from pathlib import Path
from typing import Any

from msgspec import Struct

from threadfix.stores.table import in_key_order, stored_key  # noqa: F401 - the engine's, used here too
from threadfix.stores.settle import (
    CALL, IS_CALL, IS_OUTPUT, OUTPUT, answered_in_turn, pairs_settle, plain_types,
)
from threadfix.stores.sqlite_layout import SQLITE_TOOBIG, Layout, connect, q

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
#: row ids a process screens at least: fewer are screened in one process (starting workers costs more)
PART_MIN_ROWS = 16 * SPAN
#: a screened row: (thread, type code, call_id as bytes[, order])
_ORDER = itemgetter(3)
#: the plain types most items are of, tested first
COMMON_PLAIN = ("message", "reasoning")
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
    # the filter is a CASE: calls and outputs are kept, then the plain types let go, the most common first, so
    # most rows cost one or two comparisons (a NOT IN list costs a lookup in a temporary index, a twentieth of
    # the statement); a row of any other type, with no type, or one SQLite could not vouch for (NULL) is kept
    plain = " ".join(f"WHEN {_literal(name)} THEN 0" for name in sorted(plain_types(), key=_rarer))
    keep = f"CASE {kind} WHEN '{CALL}' THEN 1 WHEN '{OUTPUT}' THEN 1 {plain} ELSE 1 END"
    code = f"CASE {kind} WHEN '{CALL}' THEN {IS_CALL} WHEN '{OUTPUT}' THEN {IS_OUTPUT} END"
    order = f", {q(layout.order_column)}" if layout.order_column else ""
    # rows with no thread are kept too (not tested here, for the cost of the test on every row): their NULL key
    # is no walked thread's, so it only joins the suspects, which no thread of the walk is
    return f"SELECT {th}, {code}, {call_id}{order} FROM {t} WHERE {r} > ? AND {r} <= ? AND {keep} ORDER BY {r}"


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


def _rarer(plain_type: str) -> tuple[bool, str]:
    """Messages and reasoning first: most plain items are one or the other."""
    return plain_type not in COMMON_PLAIN, plain_type


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# --------------------------------------------------------------------------- a pass, in one process or several

#: how a store's own work is spread over processes, handed down by the caller that owns the processes
#: (:attr:`threadfix.stores.StoreOptions.spread`): ``spread(work, tasks, jobs, shared)`` gives
#: ``work(task, shared)`` for every task, in order, or None when a worker failed (the caller then does it all)
Spread = Callable[[Callable[[Any, Any], Any], list[Any], int, Any], "list[Any] | None"]


class Pass(Struct, frozen=True):
    """What a screening pass needs to open its own connection, in this process or in a worker."""

    path: Path
    layout: Layout
    statement: str
    busy_timeout: float
    max_doc_bytes: int


def screen_table(task: Pass, low: int, high: int, ends: dict[Any, int], jobs: int = 1,
                 spread: Spread | None = None) -> set[Any] | None:
    """The suspects among rows ``low .. high`` (see :meth:`Screen.run`), or None when the table is better read
    in full. With ``jobs`` > 1 the row ids are cut into as many parts, each screened in a process of its own:
    the statement is most of the pass, and SQLite parses each part's JSON on its own core.

    A part decides the threads whose last row it holds. A thread it meets whose last row lies beyond it is a
    suspect (as a thread written past a single pass is), so a thread with call or output rows in two parts
    is read in full; one with all of them in a later part is decided there, from all of them.
    """
    parts = row_parts(low, high, jobs, PART_MIN_ROWS) if spread is not None else [(low, high)]
    if len(parts) > 1:
        found = spread(partial(_screen_part, task), parts, jobs, ends)
        if found is not None:  # (else a worker failed: screened here)
            suspects = None if None in found else set().union(*found)
            return None if suspects is None or len(suspects) > MAX_SUSPECTS else suspects
    return _screen_part(task, (low, high), ends)


def row_parts(low: int, high: int, jobs: int, least: int) -> list[tuple[int, int]]:
    """Row ids ``low .. high`` as ``(first, last)`` parts of about equal size, at most ``jobs`` and each at least
    ``least`` row ids long (one part when the rows are few)."""
    count = max(1, min(jobs, (high - low + 1) // max(1, least)))
    edges = [low - 1 + (high - low + 1) * k // count for k in range(count + 1)]
    return [(after + 1, through) for after, through in pairwise(edges)]


def _screen_part(task: Pass, part: tuple[int, int], ends: dict[Any, int]) -> set[Any] | None:
    """Screen one part on a connection of its own (in a worker, ``ends`` is what the workers share)."""
    conn = connect(task.path, write=False, timeout=task.busy_timeout)
    try:
        conn.text_factory = bytes  # ids are only compared: no UTF-8 decoding
        limit_rows(conn, task.max_doc_bytes)
        first, last = part
        return Screen(conn, task.layout, task.statement, last, ends).run(first)
    finally:
        conn.close()


# --------------------------------------------------------------------------- deciding a thread


class Screen:
    """One screening pass over the rows up to ``max_rowid``: :meth:`run` gives the suspects' keys (as the
    screening connection reads them: text as bytes), or None when the table is better read in full.

    Span ``i`` holds row ids ``(first + i * SPAN, first + (i + 1) * SPAN]``. A thread is decided when the
    pass leaves the span of its last row: its keys wait in that span's list, so the pass does no search.
    """

    def __init__(self, conn: sqlite3.Connection, layout: Layout, statement: str, max_rowid: int,
                 ends: dict[Any, int]) -> None:
        self.conn = conn
        self.statement = statement
        self.max_rowid = max_rowid
        #: fields of a screened row: thread, code, call_id[, order]
        self.width = 4 if layout.order_column is not None else 3
        #: each thread's last row id
        self.ends = ends
        #: the held rows of the threads the pass is inside, by key: their fields one after another
        self.open: dict[Any, list[Any]] = {}
        #: the open threads' keys by the span of their last row
        self.ending: dict[int, list[Any]] = {}
        self.suspects: set[Any] = set()
        self.decided = 0
        self.held = 0

    def run(self, min_rowid: int) -> set[Any] | None:
        """Screen rows ``min_rowid .. max_rowid``, one span of row ids per read transaction.

        The cycle collector is paused meanwhile: the pass makes no cycles, but its millions of row tuples
        would set it off a thousand times on a GB, for a twentieth of the pass.
        """
        paused = gc.isenabled()
        gc.disable()
        try:
            return self._run(min_rowid)
        finally:
            if paused:
                gc.enable()

    def _run(self, min_rowid: int) -> set[Any] | None:
        first = low = min_rowid - 1
        span = 0
        try:
            while low < self.max_rowid:
                high = min(self.max_rowid, low + SPAN)
                rows = self.conn.execute(self.statement, (low, high)).fetchall()
                if rows:
                    self._take(rows, low, first)
                self._decide(span)
                if self._overflowing():
                    return None
                low = high
                span += 1
        except (sqlite3.OperationalError, sqlite3.DataError) as exc:
            if _refused(exc):
                return None  # a row SQLite cannot parse, or too big: a full read says which
            raise
        return None if len(self.suspects) > MAX_SUSPECTS else self.suspects

    def _take(self, rows: list[tuple[Any, ...]], low: int, first: int) -> None:
        """Hold each row with its thread (rows come in row id order, so each thread's stay in it)."""
        opened, ends, ending, max_rowid = self.open, self.ends, self.ending, self.max_rowid
        held_by = opened.get
        unheld = 0
        for row in rows:
            held = held_by(row[0])
            if held is not None:
                held += row
                continue
            key = row[0]
            last = ends.get(key)
            if last is None or last <= low or last > max_rowid:
                # a thread the walk did not see, seen again after its end, or longer than the pass: written
                # meanwhile, so read in full
                self.suspects.add(key)
                unheld += 1
                continue
            opened[key] = list(row)
            span = (last - first - 1) // SPAN
            keys = ending.get(span)
            if keys is None:
                ending[span] = [key]
            else:
                keys.append(key)
        self.held += len(rows) - unheld

    def _decide(self, span: int) -> None:
        """Decide the threads whose last row is in ``span``."""
        keys = self.ending.pop(span, ())
        threads = [(key, self.open.pop(key)) for key in keys]
        width = self.width
        self.suspects.update([key for key, fields in threads if not _settles(fields, width)])
        self.decided += len(threads)
        self.held -= sum([len(fields) for _, fields in threads]) // width

    def _overflowing(self) -> bool:
        suspects = len(self.suspects)
        return (suspects > MAX_SUSPECTS or self.held > MAX_HELD
                or (self.decided >= SAMPLE and 2 * suspects > self.decided))


def _settles(fields: list[Any], width: int) -> bool:
    """A thread's calls and outputs, put in thread order, settle it. ``fields``: its rows' fields one after
    another, ``width`` to a row, so that a column is a slice: taking each thread's rows apart instead (``zip``)
    made the pass's Python 7 % slower."""
    codes, call_ids = fields[1::width], fields[2::width]
    if width == 4:
        orders = fields[3::4]
        if type(orders[0]) not in _NUMBERS:
            return False  # text, blob or NULL orders: Python might not sort them as SQLite does
        try:
            in_order = orders == sorted(orders)
        except TypeError:  # numbers mixed with other types
            return False
        if not in_order:
            # stable: rows of equal order stay in row id order, as a full read has them
            rows = sorted(zip(*[iter(fields)] * 4), key=_ORDER)
            codes, call_ids = [row[1] for row in rows], [row[2] for row in rows]
    return answered_in_turn(codes, call_ids) or pairs_settle(codes, call_ids)


def walk_ends(conn: sqlite3.Connection, layout: Layout) -> dict[Any, int] | None:
    """Each thread's last row id, by key in key order (text keys as bytes, as the screen reads them), in
    chunks of keys; None when there are too many threads, or BLOB keys.

    One seek per thread: the next key after the last, then its last row. Where an index lists a thread's
    rows in their order, the last row is the last in that order, found by a second seek without reading the
    thread's other entries (half the walk's time); it is the last by row id too unless rows were written out
    of order, and then the screen meets the thread's later rows after deciding it, and has it read in full.
    """
    t, r, th = q(layout.table), layout.rowid, q(layout.thread_column)
    if layout.stream_indexed:
        order = f"{q(layout.order_column)} DESC, " if layout.order_column else ""
        last = f"SELECT {r} FROM {t} WHERE {th} = keys.key ORDER BY {order}{r} DESC LIMIT 1"
    else:
        last = f"SELECT max({r}) FROM {t} WHERE {th} = keys.key"
    walk = (f"WITH RECURSIVE keys(key) AS (SELECT min({th}) FROM {t} WHERE {th} {{}} UNION ALL "
            f"SELECT (SELECT min({th}) FROM {t} WHERE {th} > keys.key) FROM keys WHERE keys.key IS NOT NULL LIMIT ?) "
            f"SELECT key, ({last}) FROM keys WHERE key IS NOT NULL")
    ends: dict[Any, int] = {}
    rows = conn.execute(walk.format("IS NOT NULL"), (WALK_CHUNK,)).fetchall()
    after = walk.format("> ?")
    while rows:
        for key, last_rowid in rows:
            if type(key) is bytes:
                return None  # a BLOB key would read as the same bytes as a text one
            ends[key.encode() if type(key) is str else key] = last_rowid
        if len(ends) > MAX_THREADS:
            return None
        rows = conn.execute(after, (rows[-1][0], WALK_CHUNK)).fetchall()
    return ends
