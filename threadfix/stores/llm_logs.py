"""llm's ``logs.db`` (llm 0.32 and later): a thread is the message chain from ``threads.tip_message_hash`` back
through ``messages.parent_hash``.

Messages are content-addressed: a message's hash covers its content *and its parent's hash*
(``llm.logs.message_hash``), so an output put in the middle of a chain changes every later message. A repair
therefore writes what ``LogStore.ensure_chain`` would for the repaired list: new ``messages`` and ``parts``
rows for the changed message and each one after it (rows already stored, a prefix shared with another
thread, are left as they are), then moves the thread's tip. Nothing is deleted or edited: ``turns`` and
other threads point at the old rows. A tool result is a ``tool_result`` part of a ``role = "tool"`` message
right after the assistant message with the calls (llm writes one such message per batch; threadfix's
results join it, or make one). threadfix's result carries llm's own failure field, ``exception``.

The items a dialect reads are OpenAI Chat messages (an assistant message with ``tool_calls``, one ``tool``
message per result). A thread whose stored hashes threadfix cannot recompute from its rows (fragments or
attachments stored by reference) is read, but left alone by repair.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import orjson
from msgspec import Struct

from threadfix.errors import InputError
from threadfix.failures import is_threadfix_output
from threadfix.journal import Entry, UndoOutcome
from threadfix.model import Address, Thread
from threadfix.stores.base import ReadProblem, parse_time
from threadfix.stores.frameworks import FrameworkStore, moved, undo_entries as undo_framework_entries
from threadfix.stores.sqlite_layout import sqlite_error

PRESET = "llm logs.db threads"
#: the store kind of this module's journal entries (undo finds :func:`undo_entries` by it)
JOURNAL_KIND = "llm"
#: ``llm.logs.HASH_PREFIX`` and the digest size of ``content_hash``
_PREFIX, _DIGEST_SIZE = "b2:", 16

_THREADS = "SELECT id, tip_message_hash, datetime_utc FROM threads ORDER BY id"
_LAST_TURN = "SELECT max(datetime_utc) FROM turns WHERE thread_id = ?"
_CHAIN = """WITH RECURSIVE chain(hash, parent_hash, role, provider_metadata, depth) AS (
    SELECT hash, parent_hash, role, provider_metadata, 0 FROM messages WHERE hash = ?
    UNION ALL
    SELECT m.hash, m.parent_hash, m.role, m.provider_metadata, c.depth + 1
    FROM chain c JOIN messages m ON m.hash = c.parent_hash WHERE c.depth < 1000000)
SELECT hash, parent_hash, role, provider_metadata FROM chain ORDER BY depth DESC"""
_PARTS = "SELECT position, type, text, payload FROM parts WHERE message_hash = ? ORDER BY position"


def canonical_json(value: Any) -> str:
    """llm's hashing form (``llm.logs.canonical_json``): sorted keys, no spaces, non-ASCII as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def message_hash(message: dict[str, Any], parent: str | None) -> str:
    """``llm.logs.message_hash`` of a message dict (``Message.to_dict()``) reached from ``parent``."""
    text = canonical_json({"parent": parent, "message": message})
    return _PREFIX + hashlib.blake2b(text.encode("utf-8"), digest_size=_DIGEST_SIZE).hexdigest()


def part_dict(kind: str, text: str | None, payload: str | None) -> dict[str, Any]:
    """A part as ``Part.to_dict()`` gave it, from its row (as ``LogStore._load_parts`` rebuilds it)."""
    part = json.loads(payload) if payload else {}
    part["type"] = kind
    if text is not None:
        part["text"] = text
    return part


class Chain(Struct):
    """A thread as stored: its id, tip, and its messages (``Message.to_dict()`` form) with their hashes."""

    thread_id: str
    tip: str
    hashes: list[str]
    messages: list[dict[str, Any]]
    #: where each item came from, by the item's identity: (message index, part index or -1 for the message)
    sources: dict[int, tuple[int, int]]
    #: None when every stored hash is what threadfix computes from the rows; else why not
    unhashable: str | None = None


class NewChain(Struct):
    tip: str
    #: (hash, parent, message) of each message of the new chain after the kept prefix, in chain order
    rows: list[tuple[str, str | None, dict[str, Any]]]
    #: the hashes of those not stored when the plan was made (what undo may take back)
    new: list[str]


def items_of(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[int, tuple[int, int]]]:
    """The OpenAI Chat messages a chain reads as, and where each came from."""
    items: list[dict[str, Any]] = []
    sources: dict[int, tuple[int, int]] = {}
    for i, message in enumerate(messages):
        parts = message.get("parts") or []
        role = message.get("role")
        if role == "tool":
            for j, part in enumerate(parts):
                if part.get("type") == "tool_result" and not part.get("server_executed"):
                    item = {"role": "tool", "tool_call_id": part.get("tool_call_id"), "content": part.get("output")}
                    items.append(item)
                    sources[id(item)] = (i, j)
            continue
        text = "".join(p.get("text", "") for p in parts if p.get("type") == "text") or None
        item = {"role": role if role in ("user", "system", "assistant") else "user", "content": text}
        calls = [{"id": p.get("tool_call_id"), "type": "function",
                  "function": {"name": p.get("name"), "arguments": orjson.dumps(p.get("arguments")).decode()}}
                 for p in parts if p.get("type") == "tool_call" and not p.get("server_executed")]
        if role == "assistant" and calls:
            item["tool_calls"] = calls
        items.append(item)
        sources[id(item)] = (i, -1)
    return items, sources


def messages_of(chain: Chain, new_items: list[Any]) -> list[dict[str, Any]]:
    """The llm messages a repaired item list is: stored messages as they were, each run of tool results one
    ``tool`` message (a stored message's results in it, threadfix's joining the run they follow)."""
    names = {p.get("tool_call_id"): p.get("name") for m in chain.messages for p in m.get("parts") or []
             if p.get("type") == "tool_call"}
    out: list[dict[str, Any]] = []
    run_of: int | None = None  # the stored tool message the last run of results came from (-1: a new one)
    for item in new_items:
        source = chain.sources.get(id(item))
        if source is not None and source[1] == -1:
            out.append(chain.messages[source[0]])
            run_of = None
            continue
        if source is not None:
            part = chain.messages[source[0]]["parts"][source[1]]
            if run_of != source[0]:
                out.append({"role": "tool", "parts": []})
                run_of = source[0]
            out[-1]["parts"].append(part)
            continue
        if item.get("role") == "tool":
            if run_of is None:
                out.append({"role": "tool", "parts": []})
                run_of = -1
            out[-1]["parts"].append(_result_part(item, names.get(item.get("tool_call_id")) or "unknown"))
            continue
        if item.get("tool_calls"):
            raise InputError("a repair changed an assistant message with tool calls, which llm's parts cannot "
                             "be rebuilt from; left alone")
        out.append({"role": item.get("role", "user"), "parts": [{"type": "text", "text": item.get("content") or ""}]})
        run_of = None
    for message in out:  # a stored tool message whose parts are all still there, in order, is itself
        if message.get("role") == "tool" and "provider_metadata" not in message:
            for stored in chain.messages:
                if stored.get("role") == "tool" and stored.get("parts") == message["parts"]:
                    message.update(stored)
                    break
    return out


def _result_part(item: dict[str, Any], name: str) -> dict[str, Any]:
    """A ``ToolResultPart.to_dict()`` for threadfix's output: llm's ``exception`` field says it failed."""
    output = item.get("content")
    part: dict[str, Any] = {"type": "tool_result", "name": name, "output": output if isinstance(output, str) else
                            orjson.dumps(output).decode()}
    if item.get("tool_call_id") is not None:
        part["tool_call_id"] = item["tool_call_id"]
    if is_threadfix_output(output):
        try:
            error = orjson.loads(output)["error"]
            part["exception"] = f"{error['kind']}: {error['message']}"
        except (orjson.JSONDecodeError, KeyError, TypeError):
            part["exception"] = "the call did not return a result"
    return part


class LlmLogsStore(FrameworkStore):
    """llm's ``logs.db``: one thread per ``threads`` row."""

    kind = JOURNAL_KIND
    preset = PRESET
    listing, key_width = _THREADS, 1

    def read(self, conn: sqlite3.Connection) -> Iterator[Thread | ReadProblem]:
        for thread_id, tip, created in self.listed(conn):
            if tip is not None:  # (a thread with no messages yet has no tip)
                yield self._thread(conn, str(thread_id), tip, created)

    def _thread(self, conn: sqlite3.Connection, thread_id: str, tip: str, created: Any) -> Thread | ReadProblem:
        address = Address(self.display, key=thread_id)
        rows = conn.execute(_CHAIN, (tip,)).fetchall()
        if not rows or rows[-1][0] != tip:
            return ReadProblem(str(address), f"its tip message {tip} is not in the messages table; left alone")
        if rows[0][1] is not None:
            return ReadProblem(str(address), f"its chain breaks at message {rows[0][0]}, whose parent "
                                             f"{rows[0][1]} is not stored; left alone")
        hashes, messages, unhashable = [], [], None
        for stored, parent, role, metadata in rows:
            try:
                message: dict[str, Any] = {"role": role, "parts": [part_dict(*row[1:]) for row in
                                                                   conn.execute(_PARTS, (stored,))]}
                if metadata and (provider := json.loads(metadata)):
                    message["provider_metadata"] = provider
            except (ValueError, TypeError):
                return ReadProblem(str(address), f"message {stored} has a part whose payload is not JSON; left alone")
            if unhashable is None and message_hash(message, parent) != stored:
                unhashable = (f"message {stored} does not hash as stored from its rows (changed since it was "
                              "logged, or holding fragments or attachments stored by reference); left alone")
            hashes.append(stored)
            messages.append(message)
        items, sources = items_of(messages)
        last = conn.execute(_LAST_TURN, (thread_id,)).fetchone()[0]
        times = [t for t in (parse_time(created), parse_time(last)) if t is not None]
        chain = Chain(thread_id, tip, hashes, messages, sources, unhashable)
        return Thread(address, items, raw=orjson.dumps(messages, option=orjson.OPT_INDENT_2),
                      modified=max(times) if times else None, dialect=self.options.dialect or "openai-chat",
                      locator=chain)

    def records_for(self, thread: Thread, new_items: list[Any]) -> tuple[NewChain, bytes]:
        chain: Chain = thread.locator
        if chain.unhashable is not None:
            raise InputError(chain.unhashable, str(thread.address))
        messages = messages_of(chain, new_items)
        keep = 0
        while keep < min(len(messages), len(chain.messages)) and messages[keep] == chain.messages[keep]:
            keep += 1
        parent = chain.hashes[keep - 1] if keep else None
        rows = []
        for message in messages[keep:]:
            stored = message_hash(message, parent)
            rows.append((stored, parent, message))
            parent = stored
        conn = self._reader()
        try:
            new = [stored for stored, _, _ in rows
                   if conn.execute("SELECT 1 FROM messages WHERE hash = ?", (stored,)).fetchone() is None]
        except sqlite3.Error as exc:
            raise sqlite_error(exc, self.display, self.options.busy_timeout) from None
        finally:
            conn.close()
        return NewChain(parent or chain.tip, rows, new), orjson.dumps(messages, option=orjson.OPT_INDENT_2)

    def check(self, conn: sqlite3.Connection, thread: Thread, change: NewChain) -> None:
        chain: Chain = thread.locator
        row = conn.execute("SELECT tip_message_hash FROM threads WHERE id = ?", (chain.thread_id,)).fetchone()
        if row is None or row[0] != chain.tip:
            raise moved(thread)

    def write(self, conn: sqlite3.Connection, thread: Thread, change: NewChain) -> None:
        """What ``LogStore.ensure_chain`` then ``append`` write: each message not yet stored and its parts,
        then the tip."""
        chain: Chain = thread.locator
        for stored, parent, message in change.rows:
            cursor = conn.execute("INSERT OR IGNORE INTO messages (hash, parent_hash, role, provider_metadata) "
                                  "VALUES (?, ?, ?, ?)", (stored, parent, message["role"],
                                                          _dump(message.get("provider_metadata"))))
            if not cursor.rowcount:
                continue  # stored already (a prefix another thread shares): so are its parts
            for position, part in enumerate(message["parts"]):
                payload = dict(part)
                kind = payload.pop("type")
                text = payload.pop("text") if kind in ("text", "reasoning") and "text" in payload else None
                conn.execute("INSERT INTO parts (message_hash, position, type, tool_name, text, payload) "
                             "VALUES (?, ?, ?, ?, ?, ?)", (stored, position, kind, payload.get("name"), text,
                                                           json.dumps(payload) if payload else None))
        conn.execute("UPDATE threads SET tip_message_hash = ? WHERE id = ?", (change.tip, chain.thread_id))

    def undo_locator(self, thread: Thread, change: NewChain) -> dict[str, Any]:
        chain: Chain = thread.locator
        return {"thread_id": chain.thread_id, "tip": chain.tip, "new_tip": change.tip,
                "rows": change.new}


def _dump(value: Any) -> str | None:
    """``llm.logs._dump``: JSON, or NULL for nothing."""
    return json.dumps(value) if value else None


def undo_one(conn: sqlite3.Connection, entry: Entry) -> tuple[str, str]:
    """Move the tip back, then delete the rows the repair added that nothing else points at."""
    loc = entry.locator
    row = conn.execute("SELECT tip_message_hash FROM threads WHERE id = ?", (loc["thread_id"],)).fetchone()
    if row is None:
        return "missing", "the thread is no longer in the database"
    if row[0] == loc["tip"]:
        return "already_original", "the thread's tip is where it was before the repair"
    if row[0] != loc["new_tip"]:
        return "refused", "the thread went on after the repair; moving its tip back would lose that"
    conn.execute("UPDATE threads SET tip_message_hash = ? WHERE id = ?", (loc["tip"], loc["thread_id"]))
    for stored in reversed(loc["rows"]):
        used = conn.execute(
            "SELECT (SELECT count(*) FROM threads WHERE tip_message_hash = ?1)"
            " + (SELECT count(*) FROM messages WHERE parent_hash = ?1)"
            " + (SELECT count(*) FROM turns WHERE tip_message_hash = ?1 OR parent_message_hash = ?1)",
            (stored,)).fetchone()[0]
        if not used:
            conn.execute("DELETE FROM parts WHERE message_hash = ?", (stored,))
            conn.execute("DELETE FROM messages WHERE hash = ?", (stored,))
    return "restored", ""


def undo_entries(path: str, entries: list[Entry], *, dry_run: bool = False) -> Iterator[UndoOutcome]:
    """Undo one database's entries, each by :func:`undo_one` (see :func:`.frameworks.undo_entries`)."""
    return undo_framework_entries(undo_one, path, entries, dry_run=dry_run)
