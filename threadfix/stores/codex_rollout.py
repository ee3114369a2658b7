"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``): records with envelopes,
read as the history ``codex resume`` replays.

* Records are ``{"timestamp", "type", "payload"}``: ``response_item`` payloads are the Responses API input items
  the model is sent, in file order; a ``compacted`` record replaces the history so far with its
  ``replacement_history`` (older versions: with what came before the first user message, the user messages so
  far and the summary as a user message); an ``event_msg`` ``thread_rolled_back`` drops the last ``num_turns``
  user turns (Codex's ``replay_rollout_response_items``);
  ``session_meta``, ``turn_context`` and ``event_msg`` records (UI events) are kept and not sent, nor are
  ``ghost_snapshot`` items (Codex's undo snapshots).
* The oldest rollouts (2025, before ``session_meta``) start with a bare ``{"id", "timestamp", "instructions"}``
  object and hold bare items between ``{"record_type": "state"}`` lines; their new lines are bare items too.
* An inserted output is a new record right after the line of the item the dialect placed it after (after the
  ``compacted`` line for a call inside its replacement history), of the type the call needs
  (``custom_tool_call_output`` for a ``custom_tool_call``), timestamped as its call; a converted orphan changes
  only its own record's payload. Every other line keeps its bytes and line ending.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from threadfix.dialects.openai_responses import OUTPUT_TYPES
from threadfix.errors import UnrewritableError
from threadfix.stores.base import ReadProblem
from threadfix.stores.records import Line, Rewrite, dump, file_style, parsed_lines, rewrite_record, session_thread
from threadfix.times import parse_time

name = "codex"
DIALECT = "openai-responses"
RECORD_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
#: items a rollout keeps that are not sent to the model
UNSENT_ITEMS = frozenset({"ghost_snapshot"})
_BARE_ITEMS = frozenset({"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
                         "custom_tool_call_output", "local_shell_call", "web_search_call"})


def recognise(values: Sequence[Any], suffix: str) -> bool:
    """A ``session_meta`` first record, envelopes of Codex's record types, or the pre-envelope header."""
    first = values[0]
    if not isinstance(first, dict) or suffix != ".jsonl":
        return False
    if first.get("type") in RECORD_TYPES and isinstance(first.get("payload"), dict) and "timestamp" in first:
        return True
    if "type" not in first and "id" in first and "timestamp" in first and ("instructions" in first or "git" in first):
        return any(isinstance(v, dict) and (v.get("record_type") == "state" or v.get("type") in _BARE_ITEMS)
                   for v in values[1:])
    return False


class CodexSession:
    """One rollout: the history replayed from it, and how edits map back onto records."""

    def __init__(self, data: bytes, lines: list[Line], display: str, mtime: float | None) -> None:
        self.data = data
        self.lines = lines
        self.display = display
        first = next((line.value for line in lines if line.value is not None), None)
        self.bare = isinstance(first, dict) and "type" not in first
        #: id(item) -> (line index, place in a compacted record's replacement history or None)
        self.origin: dict[int, tuple[int, int | None]] = {}
        self.synthetic: set[int] = set()
        items: list[Any] = []
        newest: float | None = None
        for i, line in enumerate(lines):
            value = line.value
            if not isinstance(value, dict):
                continue
            moment = parse_time(value.get("timestamp"))
            if moment is not None and (newest is None or moment > newest):
                newest = moment
            if self.bare:
                if i == 0 or "record_type" in value or not isinstance(value.get("type"), str):
                    continue
                item = value
            else:
                kind = value.get("type")
                payload = value.get("payload")
                if kind == "compacted" and isinstance(payload, dict):
                    items = self._compacted(i, payload, items)
                    continue
                if kind == "event_msg" and isinstance(payload, dict) and payload.get("type") == "thread_rolled_back":
                    items = _rolled_back(items, payload.get("num_turns"))
                    continue
                if kind != "response_item" or not isinstance(payload, dict):
                    continue
                item = payload
            if item.get("type") in UNSENT_ITEMS:
                continue
            self.origin[id(item)] = (i, None)
            items.append(item)
        self.items = items
        lines_of = tuple((lines[self.origin[id(item)][0]].number,) for item in items)
        self.thread = session_thread(display, items, data, lines_of, DIALECT, newest, mtime)

    def _compacted(self, i: int, payload: dict[str, Any], before: list[Any]) -> list[Any]:
        """The history a ``compacted`` record leaves: its replacement history, else what came before the first user
        message, the user messages so far and the summary as a user message (the versions before
        replacement_history; Codex's ``replay_rollout_response_items``)."""
        history = payload.get("replacement_history")
        if isinstance(history, list):
            kept = [item for item in history if isinstance(item, dict) and item.get("type") not in UNSENT_ITEMS]
            for j, item in enumerate(history):
                self.origin[id(item)] = (i, j)
            return kept
        users = [n for n, item in enumerate(before) if _is_user(item)]
        initial = before[:users[0]] if users else before
        kept = [*initial, *(before[n] for n in users)]
        summary = {"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": str(payload.get("message", ""))}]}
        self.origin[id(summary)] = (i, None)
        self.synthetic.add(id(summary))
        return [*kept, summary]

    def encode(self, new_items: list[Any]) -> bytes:
        """The rollout's bytes once its history is ``new_items`` (the dialect's repair of it)."""
        rewrite = Rewrite(self.data, self.lines)
        style = file_style(self.lines, lambda v: v.get("type") == "response_item" or self.bare)
        present = {id(item) for item in new_items}
        pending = self.items  # the originals, passed in order
        at = 0
        anchor: int | None = None  # the line new records go after
        for item in new_items:
            origin = self.origin.get(id(item))
            if origin is not None:  # an original (or the summary of an old compaction, on its record's line)
                while at < len(pending) and pending[at] is not item:
                    at += 1
                at += 1
                anchor = origin[0] if anchor is None else max(anchor, origin[0])
                continue
            replaced = pending[at] if at < len(pending) else None
            if replaced is not None and id(replaced) not in present and not _is_output(item):
                at += 1
                present.add(id(replaced))  # (converted, not dropped)
                self._replace(replaced, item, rewrite)
                anchor = self.origin[id(replaced)][0] if anchor is None else max(anchor, self.origin[id(replaced)][0])
                continue
            if not _is_output(item) or anchor is None:
                raise UnrewritableError("left alone: the repair adds an item no record of the rollout can hold",
                                        self.display)
            rewrite.insert_after(anchor, dump(self._record(item, anchor), style, self.display))
        for item in self.items:  # dropped outputs (--drop-orphans) lose their line
            if id(item) not in present and self.origin[id(item)][1] is None and id(item) not in self.synthetic:
                rewrite.removed.add(self.origin[id(item)][0])
        return rewrite.bytes()

    def _replace(self, original: Any, new: Any, rewrite: Rewrite) -> None:
        """A converted orphan in the place of the output it was: only that record's payload changes."""
        i, j = self.origin[id(original)]
        line = self.lines[i]
        if self.bare:
            value = new
        elif j is not None:
            history = list(line.value["payload"]["replacement_history"])
            history[j] = new
            value = {**line.value, "payload": {**line.value["payload"], "replacement_history": history}}
        else:
            value = {**line.value, "payload": new}
        rewrite.replace(i, rewrite_record(line, value, self.display))
        self.origin[id(new)] = (i, j)

    def _record(self, item: dict[str, Any], anchor: int) -> dict[str, Any]:
        if self.bare:
            return item
        calls = (o for o in self.items if o.get("call_id") == item.get("call_id") and not _is_output(o))
        call = next(calls, None)
        line = self.lines[self.origin[id(call)][0]] if call is not None else self.lines[anchor]
        stamp = line.value.get("timestamp")
        return {"timestamp": stamp, "type": "response_item", "payload": item}


def _is_user(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user"


def _rolled_back(items: list[Any], turns: Any) -> list[Any]:
    """The history after ``thread_rolled_back``: the last ``turns`` user turns dropped (never what comes before
    the first user message)."""
    if not isinstance(turns, int) or isinstance(turns, bool) or turns <= 0:
        return items
    users = [n for n, item in enumerate(items) if _is_user(item)]
    if not users:
        return items
    return items[:users[0] if turns >= len(users) else users[-turns]]


def _is_output(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") in OUTPUT_TYPES


def read(data: bytes, display: str, mtime: float | None) -> CodexSession | ReadProblem:
    lines = parsed_lines(data, display)
    if isinstance(lines, ReadProblem):
        return lines
    return CodexSession(data, lines, display, mtime)
