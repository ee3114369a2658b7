"""LangGraph ``SqliteSaver`` checkpoints (langgraph-checkpoint-sqlite): a thread is the message list of a
``thread_id``'s latest checkpoint.

Every checkpoint holds the whole list (the ``add_messages`` channel of ``MessagesState``); the latest is
the highest ``checkpoint_id`` (ids are uuid6, time-ordered), as ``SqliteSaver.get_tuple`` finds it. A
repair never edits a checkpoint: it puts a **new** one on top of the latest, as ``update_state`` does (its
parent the old latest, an id that sorts after it, the ``messages`` channel's version bumped by the saver,
metadata ``source: "update"``), whose messages have a ToolMessage after each unanswered AIMessage. Where
the tool did finish and its ToolMessage was saved only as a pending write of the latest checkpoint (a
parallel batch one of whose tools crashed), that real output is what goes in; threadfix's error output
only where none exists. The tasks the old latest checkpoint was waiting to run (a paused or crashed tool
node) are taken as done, so the app resumes with its next message. Older checkpoints and their writes are
never touched. Serialised by the saver itself (the ``threadfix[langgraph]`` extra), never by hand.

An ``interrupt()`` in a tool or node (``HumanInTheLoopMiddleware``) saves an ``__interrupt__`` pending write
of the latest checkpoint (``langgraph/_internal/_constants.py`` ``INTERRUPT``); the app resumes it with
``Command(resume=...)``. While one is pending, the checkpoint's unanswered calls are waiting
(:attr:`Thread.waiting_calls`): left whole, answered only with ``--answer-waiting``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import orjson
from msgspec import Struct

from threadfix.errors import ThreadfixError
from threadfix.journal import Entry, UndoOutcome, digest
from threadfix.model import Address, Thread
from threadfix.stores.base import ReadProblem, parse_time
from threadfix.stores.frameworks import FrameworkStore, moved, needs, undo_entries as undo_framework_entries

EXTRA = "langgraph"
PRESET = "LangGraph SqliteSaver checkpoints"
#: the store kind of this module's journal entries (undo finds :func:`undo_entries` by it)
JOURNAL_KIND = "langgraph"
#: the channel a node's trigger is written to (langgraph ``branch:to:<node>``) and the Send queue
_TRIGGER, _TASKS = "branch:to:", "__pregel_tasks"
#: the pending-write channel of an ``interrupt()`` waiting to be resumed
_INTERRUPT = "__interrupt__"

_LATEST = ("SELECT thread_id, checkpoint_ns, max(checkpoint_id) FROM checkpoints "
           "GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns")
_ROW = ("SELECT type, checkpoint, metadata FROM checkpoints "
        "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?")
_WRITES = ("SELECT task_id, idx, channel, type, value FROM writes "
           "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? ORDER BY task_id, idx")
_NEWEST = "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?"
#: where the output :meth:`LangGraphStore.records_for` puts in for a call was found (what repair and lint say)
SAVED = "LangGraph saved it as a pending write of the latest checkpoint"


class Latest(Struct):
    """Where a thread's latest checkpoint is, and what of it a repair builds on."""

    thread_id: str
    ns: str
    checkpoint_id: str
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    #: the saved messages, by the identity of the item each became
    messages: dict[int, Any]
    #: ToolMessages saved as pending writes of the latest checkpoint, by tool call id
    pending: dict[str, Any]
    #: a digest of the latest checkpoint's pending writes (compared before writing)
    writes_digest: str


class NewCheckpoint(Struct):
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    versions: dict[str, Any]
    blob_sha256: str


def _saver(conn: sqlite3.Connection) -> Any:
    """LangGraph's own saver on ``conn``; the store exists, so its setup (which would set WAL mode and
    migrate) is not run."""
    module = needs("langgraph.checkpoint.sqlite", EXTRA, "reading LangGraph checkpoints")
    saver = module.SqliteSaver(conn)
    saver.is_setup = True
    return saver


def _writes_digest(rows: list[tuple[Any, ...]]) -> str:
    return digest(b"".join(orjson.dumps([task, idx, channel, kind]) + bytes(value or b"")
                           for task, idx, channel, kind, value in rows))


class LangGraphStore(FrameworkStore):
    """A LangGraph ``SqliteSaver`` database: one thread per (``thread_id``, ``checkpoint_ns``)."""

    kind = JOURNAL_KIND
    preset = PRESET
    listing, key_width = _LATEST, 2

    def read(self, conn: sqlite3.Connection) -> Iterator[Thread | ReadProblem]:
        saver = _saver(conn)
        for thread_id, ns, checkpoint_id in self.listed(conn):
            yield self._thread(conn, saver, str(thread_id), ns, checkpoint_id)

    def _thread(self, conn: sqlite3.Connection, saver: Any, thread_id: str, ns: str,
                checkpoint_id: str) -> Thread | ReadProblem:
        address = Address(self.display, key=thread_id if not ns else f"{thread_id}:{ns}")
        kind, blob, metadata = conn.execute(_ROW, (thread_id, ns, checkpoint_id)).fetchone()
        rows = conn.execute(_WRITES, (thread_id, ns, checkpoint_id)).fetchall()
        try:
            checkpoint = saver.serde.loads_typed((kind, blob))
            metadata = orjson.loads(metadata) if metadata is not None else {}
            writes = [(channel, saver.serde.loads_typed((wkind, value))) for _, _, channel, wkind, value in rows]
        except Exception as exc:  # noqa: BLE001 (the serializer raises whatever its input makes it)
            return ReadProblem(str(address), f"checkpoint {checkpoint_id} cannot be read by LangGraph's "
                                             f"serializer ({type(exc).__name__}); left alone")
        messages = checkpoint.get("channel_values", {}).get("messages")
        if not isinstance(messages, list):
            return ReadProblem(str(address), f"checkpoint {checkpoint_id} holds no message list (a "
                                             "'messages' channel); left alone")
        items, by_item = [], {}
        for message in messages:
            item = message.model_dump() if hasattr(message, "model_dump") else message
            items.append(item)
            by_item[id(item)] = message
        pending = {}
        for channel, value in writes:
            if channel != "messages":
                continue
            for message in value if isinstance(value, list) else [value]:
                call_id = getattr(message, "tool_call_id", None)
                if getattr(message, "type", None) == "tool" and call_id:
                    pending.setdefault(call_id, message)
        waiting: frozenset[str] = frozenset()
        if any(channel == _INTERRUPT for channel, _ in writes):
            answered = {item.get("tool_call_id") for item in items if item.get("type") == "tool"}
            waiting = frozenset(call["id"] for item in items if item.get("type") == "ai"
                                for call in item.get("tool_calls") or () if isinstance(call.get("id"), str)
                                and call["id"] not in answered and call["id"] not in pending)
        latest = Latest(thread_id, ns, checkpoint_id, checkpoint, metadata, by_item, pending, _writes_digest(rows))
        return Thread(address, items, raw=orjson.dumps(items, default=str, option=orjson.OPT_INDENT_2),
                      modified=parse_time(checkpoint.get("ts")), dialect=self.options.dialect or "langchain",
                      locator=latest, saved_outputs=dict.fromkeys(pending, SAVED) or None, waiting_calls=waiting)

    def records_for(self, thread: Thread, new_items: list[Any]) -> tuple[NewCheckpoint, bytes]:
        latest: Latest = thread.locator
        needs("langgraph.checkpoint.sqlite", EXTRA, "writing LangGraph checkpoints")
        from langchain_core.messages import messages_from_dict
        from langgraph.checkpoint.base import copy_checkpoint
        from langgraph.checkpoint.base.id import uuid6

        messages = []
        for item in new_items:
            saved = latest.messages.get(id(item))
            if saved is None:  # written by the repair: the tool's own saved output where there is one
                call_id = item.get("tool_call_id") if item.get("type") == "tool" else None
                saved = latest.pending.get(call_id) if call_id else None
                if saved is None:
                    saved = messages_from_dict([{"type": item["type"], "data": item}])[0]
            messages.append(saved)
        saver = _saver(sqlite3.connect(":memory:"))
        checkpoint = copy_checkpoint(latest.checkpoint)
        step = latest.metadata.get("step", -1)
        step = step + 1 if isinstance(step, int) else 0
        checkpoint["id"] = str(uuid6(clock_seq=step))
        if checkpoint["id"] <= latest.checkpoint_id:
            raise ThreadfixError(f"its latest checkpoint {latest.checkpoint_id} sorts after a new one made now "
                                 "(a clock behind the app's); left alone")
        checkpoint["ts"] = datetime.now(timezone.utc).isoformat()
        versions = checkpoint["channel_versions"]
        values = checkpoint["channel_values"]
        values["messages"] = messages
        versions["messages"] = saver.get_next_version(versions.get("messages"), None)
        # the tasks the old latest waited on are done: a Send queue consumed, each node's trigger seen
        values.pop(_TASKS, None)
        seen = checkpoint.setdefault("versions_seen", {})
        for channel, version in versions.items():
            if channel.startswith(_TRIGGER):
                node = seen.setdefault(channel[len(_TRIGGER):], {})
                if node.get(channel) is None or node[channel] < version:
                    node[channel] = version
        checkpoint["updated_channels"] = ["messages"]
        metadata = {"source": "update", "step": step, "parents": latest.metadata.get("parents", {})}
        _, blob = saver.serde.dumps_typed(checkpoint)
        new = NewCheckpoint(checkpoint, metadata, {"messages": versions["messages"]}, digest(blob))
        shown = orjson.dumps([m.model_dump() for m in messages], default=str, option=orjson.OPT_INDENT_2)
        return new, shown

    def check(self, conn: sqlite3.Connection, thread: Thread, change: NewCheckpoint) -> None:
        latest: Latest = thread.locator
        newest = conn.execute(_NEWEST, (latest.thread_id, latest.ns)).fetchone()[0]
        rows = conn.execute(_WRITES, (latest.thread_id, latest.ns, latest.checkpoint_id)).fetchall()
        if newest != latest.checkpoint_id or _writes_digest(rows) != latest.writes_digest:
            raise moved(thread)

    def write(self, conn: sqlite3.Connection, thread: Thread, change: NewCheckpoint) -> None:
        latest: Latest = thread.locator
        config = {"configurable": {"thread_id": latest.thread_id, "checkpoint_ns": latest.ns,
                                   "checkpoint_id": latest.checkpoint_id}}
        _saver(conn).put(config, change.checkpoint, change.metadata, change.versions)  # (commits)

    def undo_locator(self, thread: Thread, change: NewCheckpoint) -> dict[str, Any]:
        latest: Latest = thread.locator
        return {"thread_id": latest.thread_id, "checkpoint_ns": latest.ns, "parent": latest.checkpoint_id,
                "checkpoint_id": change.checkpoint["id"], "blob_sha256": change.blob_sha256}


def undo_one(conn: sqlite3.Connection, entry: Entry) -> tuple[str, str]:
    """Delete the checkpoint a repair added, while it is still the latest and nothing ran from it."""
    loc = entry.locator
    key = (loc["thread_id"], loc["checkpoint_ns"])
    row = conn.execute("SELECT checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                       "AND checkpoint_id = ?", (*key, loc["checkpoint_id"])).fetchone()
    if row is None:
        return "already_original", "the checkpoint the repair added is gone"
    newest = conn.execute(_NEWEST, key).fetchone()[0]
    ran = conn.execute("SELECT count(*) FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                       (*key, loc["checkpoint_id"])).fetchone()[0]
    if newest != loc["checkpoint_id"] or ran or digest(bytes(row[0])) != loc["blob_sha256"]:
        return "refused", "the app went on from the checkpoint the repair added; taking it back would lose that"
    conn.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                 (*key, loc["checkpoint_id"]))
    return "restored", ""


def undo_entries(path: str, entries: list[Entry], *, dry_run: bool = False) -> Iterator[UndoOutcome]:
    """Undo one database's entries, each by :func:`undo_one` (see :func:`.frameworks.undo_entries`)."""
    return undo_framework_entries(undo_one, path, entries, dry_run=dry_run)
