"""Google ADK ``DatabaseSessionService`` databases on SQLite (schema v1): a thread is one session's events.

One ``events`` row per ADK ``Event``: ``event_data`` is ``Event.model_dump(exclude_none=True, mode="json")``
as JSON text, and the ``timestamp`` column the same instant as a naive UTC datetime; ADK orders a
session's events by that column, then ``id``. The items a dialect reads are the events' ``content``
(``{role, parts}``, google-genai's snake_case ``function_call`` / ``function_response``), so the ``gemini``
dialect reads them.

A repair writes what ADK writes: the results of a tool batch are one event (a fresh uuid ``id``, the call
event's ``invocation_id``, ``author`` and ``node_info``, ``content.role = "user"``, one ``function_response``
part per call), timed between the call's event and the next one, in the column and in ``event_data`` alike.
A batch partly answered has the missing responses added to its response event, and an orphan response is
kept as text in its event. The session's ``update_time`` moves to now, which ADK's optimistic-concurrency
check reads: an app holding the session reloads it. A call an event names in its ``long_running_tool_ids``
(``google/adk/events/event.py``; set for a ``LongRunningFunctionTool`` or a confirmation request, whose
response the app sends later as a new message) is waiting (:attr:`Thread.waiting_calls`): left whole at the
end of its session, answered once a later user turn moved past it or with ``--answer-waiting``.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson
from msgspec import Struct

from threadfix.errors import InputError
from threadfix.journal import Entry, UndoOutcome, digest
from threadfix.model import Address, Thread
from threadfix.stores.base import ReadProblem
from threadfix.stores.frameworks import FrameworkStore, moved, place, undo_entries as undo_framework_entries

PRESET = "Google ADK DatabaseSessionService sessions"
#: the store kind of this module's journal entries (undo finds :func:`undo_entries` by it)
JOURNAL_KIND = "adk"
_SESSIONS = "SELECT app_name, user_id, id, update_time FROM sessions ORDER BY app_name, user_id, id"
_EVENTS = ("SELECT id, invocation_id, timestamp, event_data FROM events "
           "WHERE app_name = ? AND user_id = ? AND session_id = ? ORDER BY timestamp, id")
#: how ADK's SQLAlchemy ``DateTime`` stores a naive UTC datetime in SQLite
_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
_EPOCH = datetime(1970, 1, 1)


def micros(column: str) -> int:
    """Microseconds since the epoch of a ``timestamp`` column value."""
    moment = datetime.fromisoformat(column)
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return (moment - _EPOCH) // timedelta(microseconds=1)


def column(us: int) -> str:
    return (_EPOCH + timedelta(microseconds=us)).strftime(_FORMAT)


def _is_response(part: Any) -> bool:
    return isinstance(part, dict) and ("function_response" in part or "functionResponse" in part)


class Event(Struct):
    id: str
    invocation_id: str
    at: int
    data: dict[str, Any]


class Session(Struct):
    """A session as read: its key, its events, the events whose content the thread's items are, and a digest
    of every event row (compared before writing)."""

    key: tuple[str, str, str]
    events: list[Event]
    #: for each item, the index of its event in ``events``
    owners: list[int]
    rows_digest: str


class NewEvents(Struct):
    #: (id, invocation id, microseconds, event_data text) of each event to add
    creates: list[tuple[str, str, int, str]]
    #: (id, event_data text now, event_data text after) of each event whose content changes
    edits: list[tuple[str, str, str]]


def _rows_digest(rows: list[tuple[Any, ...]]) -> str:
    return digest(orjson.dumps([list(row) for row in rows]))


def _dumps(data: dict[str, Any]) -> str:
    """``event_data`` as ADK's ``DynamicJSON`` stores it on SQLite (``json.dumps``)."""
    return json.dumps(data)


class AdkSessionsStore(FrameworkStore):
    """An ADK ``DatabaseSessionService`` SQLite database: one thread per session."""

    kind = JOURNAL_KIND
    preset = PRESET
    listing, key_width = _SESSIONS, 3

    def read(self, conn: sqlite3.Connection) -> Iterator[Thread | ReadProblem]:
        for app, user, session, updated in self.listed(conn):
            yield self._thread(conn, (app, user, session), updated)

    def _thread(self, conn: sqlite3.Connection, key: tuple[str, str, str], updated: Any) -> Thread | ReadProblem:
        address = Address(self.display, key="/".join(key))
        rows = conn.execute(_EVENTS, key).fetchall()
        events, items, owners, waiting = [], [], [], set()
        for event_id, invocation, at, text in rows:
            try:
                data = orjson.loads(text) if text is not None else {}
                when = micros(at)
            except (orjson.JSONDecodeError, ValueError, TypeError):
                return ReadProblem(str(address), f"event {event_id} cannot be read (its event_data is not JSON, "
                                                 "or its timestamp not a time); left alone")
            content = data.get("content") if isinstance(data, dict) else None
            long_running = data.get("long_running_tool_ids") if isinstance(data, dict) else None
            if isinstance(long_running, list):  # (a set, dumped in mode="json")
                waiting.update(i for i in long_running if isinstance(i, str))
            if isinstance(content, dict) and isinstance(content.get("parts"), list):
                items.append(content)
                owners.append(len(events))
            events.append(Event(event_id, invocation, when, data))
        times = [e.at / 1e6 for e in events[-1:]]
        try:
            times.append(micros(updated) / 1e6)
        except (ValueError, TypeError):
            pass
        session = Session(key, events, owners, _rows_digest(rows))
        return Thread(address, items, raw=orjson.dumps([e.data for e in events], option=orjson.OPT_INDENT_2),
                      modified=max(times) if times else None, dialect=self.options.dialect or "gemini",
                      locator=session, waiting_calls=frozenset(waiting))

    def records_for(self, thread: Thread, new_items: list[Any]) -> tuple[NewEvents, bytes]:
        session: Session = thread.locator
        events = session.events
        placed = place(new_items, thread.items, "parts", _is_response, "an ADK event")
        creates, edits = [], []
        changed: dict[int, dict[str, Any]] = {}  # event index -> its data after the repair
        runs: dict[int, list[list[Any]]] = {}  # event index -> the parts of each new event right after it
        last: int | None = None
        for source, parts in placed:
            if source is None:
                if last is None:
                    raise InputError("a repair would put an event before the session's first; left alone")
                runs.setdefault(session.owners[last], []).append(parts)
                continue
            last = source
            if parts is not None:
                event = events[session.owners[source]]
                data = {**event.data, "content": {**event.data["content"], "parts": parts}}
                edits.append((event.id, _dumps(event.data), _dumps(data)))
                changed[session.owners[source]] = data
        added: dict[int, list[dict[str, Any]]] = {}
        for owner, batch in runs.items():
            call = events[owner]
            low = call.at
            high = events[owner + 1].at if owner + 1 < len(events) else low + 1000 * (len(batch) + 1)
            if high - low <= len(batch):
                raise InputError(f"no time is left between event {call.id} and the next for an event between "
                                 "them; left alone")
            for k, parts in enumerate(batch, 1):
                at = low + (high - low) * k // (len(batch) + 1)
                data: dict[str, Any] = {"content": {"parts": parts, "role": "user"},
                                        "invocation_id": call.invocation_id, "author": call.data.get("author")}
                actions = call.data.get("actions")
                if isinstance(actions, dict):  # the same fields, none of the call's deltas
                    data["actions"] = {name: {} for name, value in actions.items() if isinstance(value, dict)}
                if "node_info" in call.data:
                    data["node_info"] = call.data["node_info"]
                data["id"] = str(uuid.uuid4())
                data["timestamp"] = at / 1e6
                creates.append((data["id"], call.invocation_id, at, _dumps(data)))
                added.setdefault(owner, []).append(data)
        after = [d for i, e in enumerate(events) for d in [changed.get(i, e.data), *added.get(i, [])]]
        shown = orjson.dumps(after, option=orjson.OPT_INDENT_2)
        return NewEvents(creates, edits), shown

    def check(self, conn: sqlite3.Connection, thread: Thread, change: NewEvents) -> None:
        session: Session = thread.locator
        if _rows_digest(conn.execute(_EVENTS, session.key).fetchall()) != session.rows_digest:
            raise moved(thread)

    def write(self, conn: sqlite3.Connection, thread: Thread, change: NewEvents) -> None:
        app, user, session_id = thread.locator.key
        for event_id, invocation, at, text in change.creates:
            conn.execute("INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?)", (event_id, app, user, session_id, invocation, column(at), text))
        for event_id, _, text in change.edits:
            conn.execute("UPDATE events SET event_data = ? WHERE id = ? AND app_name = ? AND user_id = ? "
                         "AND session_id = ?", (text, event_id, app, user, session_id))
        _touch(conn, thread.locator.key)

    def undo_locator(self, thread: Thread, change: NewEvents) -> dict[str, Any]:
        session: Session = thread.locator
        return {"key": list(session.key), "events": sorted([e.id for e in session.events] +
                                                           [event_id for event_id, _, _, _ in change.creates]),
                "creates": [[event_id, digest(text.encode())] for event_id, _, _, text in change.creates],
                "edits": [[event_id, before, digest(after.encode())] for event_id, before, after in change.edits]}


def _touch(conn: sqlite3.Connection, key: tuple[str, str, str] | list[str]) -> None:
    """Move the session's ``update_time`` to now, as ADK does on each append (its revision marker)."""
    now = datetime.now(timezone.utc).replace(tzinfo=None).strftime(_FORMAT)
    conn.execute("UPDATE sessions SET update_time = ? WHERE app_name = ? AND user_id = ? AND id = ?", (now, *key))


def undo_one(conn: sqlite3.Connection, entry: Entry) -> tuple[str, str]:
    """Delete the events a repair added and put back the ones it changed, while each holds what it wrote and
    the session has no event the app added since (taking the repair back would break the history under it)."""
    loc = entry.locator
    key = tuple(loc["key"])

    def current(event_id: str) -> str | None:
        row = conn.execute("SELECT event_data FROM events WHERE id = ? AND app_name = ? AND user_id = ? "
                           "AND session_id = ?", (event_id, *key)).fetchone()
        return None if row is None else digest(row[0].encode())

    found = [current(event_id) for event_id, _ in loc["creates"]] + [current(e) for e, _, _ in loc["edits"]]
    wrote = [sha for _, sha in loc["creates"]] + [sha for _, _, sha in loc["edits"]]
    if all(f is None for f in found[:len(loc["creates"])]) and \
            [current(e) for e, _, _ in loc["edits"]] == [digest(b.encode()) for _, b, _ in loc["edits"]]:
        return "already_original", "the session holds what it held before the repair"
    ids = sorted(row[0] for row in conn.execute("SELECT id FROM events WHERE app_name = ? AND user_id = ? "
                                                "AND session_id = ?", key))
    if found != wrote or ids != loc["events"]:
        return "refused", "the session's events changed after the repair; restoring them would lose those changes"
    for event_id, _ in loc["creates"]:
        conn.execute("DELETE FROM events WHERE id = ? AND app_name = ? AND user_id = ? AND session_id = ?",
                     (event_id, *key))
    for event_id, before, _ in loc["edits"]:
        conn.execute("UPDATE events SET event_data = ? WHERE id = ? AND app_name = ? AND user_id = ? "
                     "AND session_id = ?", (before, event_id, *key))
    _touch(conn, key)
    return "restored", ""


def undo_entries(path: str, entries: list[Entry], *, dry_run: bool = False) -> Iterator[UndoOutcome]:
    """Undo one database's entries, each by :func:`undo_one` (see :func:`.frameworks.undo_entries`)."""
    return undo_framework_entries(undo_one, path, entries, dry_run=dry_run)
