"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``, subagents' under
``<session>/subagents/``): records linked by ``parentUuid``, read as the conversation ``claude --resume`` sends.

* The thread is the chain from the newest end of a conversation (a record no other names as its parent) back
  through ``parentUuid`` until ``null`` (a ``system/compact_boundary`` has ``null``: the conversation starts
  afresh there). Sidechain records (a subagent's turns, inline in 1.0.x files) are not on the main chain; a
  file of sidechain records only (a subagent's file) is that agent's own thread.
* Of the chain, ``user`` and ``assistant`` records are sent; ``progress``, ``system``, ``summary``,
  ``file-history-snapshot`` and ``queue-operation`` records are kept and not sent. Assistant pieces that share
  ``message.id`` (one API response written one block a record) are one assistant message, even with tool
  results between them; their results follow it in one user message; consecutive same-role messages merge.
* A tool result that exists off the chain (parallel results parented on their own assistant piece, the shape
  of anthropics/claude-code #31330) is shown to the dialect ahead of the conversation, so that the planner
  moves it, and the move is laid in by re-linking its record into the chain; it is never replaced.
* An inserted output is a new user record (every field the file's own records carry, a ``uuid`` derived from
  the session and the call, the time of the record it follows, the file's JSON layout) right after the record
  the dialect placed it after; the record that followed on the chain is re-parented onto it, so the chain stays
  linear and its end does not move. A result re-linked at the chain's end goes before the result that ends it,
  for the same reason.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from threadfix.dialects.base import text_of
from threadfix.errors import UnrewritableError
from threadfix.stores.base import ReadProblem
from threadfix.stores.records import (
    Line,
    Rewrite,
    dump,
    file_style,
    latest_time,
    parsed_lines,
    record_id,
    rewrite_record,
    session_thread,
    set_string_field,
)
from threadfix.times import parse_time

name = "claude-code"
DIALECT = "anthropic"
MESSAGE_TYPES = frozenset({"user", "assistant"})
#: record types Claude Code writes that carry no message
OTHER_TYPES = frozenset({"progress", "system", "summary", "file-history-snapshot", "queue-operation"})
#: fields of a user record that say where and by whom it was written: a new record carries the file's own
CONTEXT_FIELDS = ("parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "agentId",
                  "slug", "type", "message", "uuid", "timestamp", "toolUseResult", "sourceToolAssistantUUID")


def recognise(values: Sequence[Any], suffix: str) -> bool:
    """Records with ``type`` and ``uuid``/``parentUuid`` envelopes, after any of Claude Code's other records (a
    file of only a ``summary`` or snapshots is a transcript too: one with no messages)."""
    if suffix != ".jsonl":
        return False
    for value in values:
        if not isinstance(value, dict):
            return False
        kind = value.get("type")
        if kind in MESSAGE_TYPES and "parentUuid" in value and "uuid" in value and isinstance(value.get("message"), dict):
            return True
        if kind not in OTHER_TYPES:
            return False
    return any(v.get("type") == "summary" and "leafUuid" in v or v.get("type") == "file-history-snapshot"
               and "messageId" in v for v in values)


class _Tag(str):
    """A message's role, a distinct object per rebuilt message: the dialect's shallow copy of a message it changes
    keeps it, so the copy is traced to the records it came from."""

    __slots__ = ()


def _content(record: dict[str, Any]) -> list[Any] | str | None:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, (list, str)) else None


def _message_id(record: dict[str, Any]) -> Any:
    message = record.get("message")
    return message.get("id") if isinstance(message, dict) else None


def _result_ids(record: dict[str, Any]) -> list[str]:
    content = _content(record)
    if record.get("type") != "user" or not isinstance(content, list):
        return []
    return [b["tool_use_id"] for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
            and isinstance(b.get("tool_use_id"), str)]


class ClaudeSession:
    """One transcript: its chain, the conversation rebuilt from it, and how edits map back onto records."""

    def __init__(self, data: bytes, lines: list[Line], display: str, mtime: float | None) -> None:
        self.data = data
        self.lines = lines
        self.display = display
        self.by_uuid: dict[str, int] = {}
        children: dict[Any, list[int]] = defaultdict(list)
        records = [i for i, line in enumerate(lines) if isinstance(line.value, dict)]
        for i in records:
            value = lines[i].value
            if isinstance(value.get("uuid"), str):
                self.by_uuid.setdefault(value["uuid"], i)  # (1.0.95 writes a record twice: the first is the one)
                children[value.get("parentUuid")].append(i)
        messages = [i for i in records if lines[i].value.get("type") in MESSAGE_TYPES]
        self.sidechain = bool(messages) and all(lines[i].value.get("isSidechain") is True for i in messages)
        self.children = children
        self.chain = self._chain(self._leaves(records))
        on_chain = set(self.chain)
        self.messages: list[dict[str, Any]] = []
        #: id(block) -> (message, line index, block index or None for a string content)
        self.origin: dict[int, tuple[int, int, int | None]] = {}
        self.tags: dict[int, int] = {}
        self._rebuild(on_chain)
        items = self.messages
        lines_of = tuple(tuple(self.lines[self.origin[id(b)][1]].number for b in m["content"]) for m in items)
        self.thread = session_thread(display, items, data, lines_of, DIALECT,
                                     latest_time(lines[i].value for i in self.chain[-3:]), mtime)

    def _ours(self, i: int) -> bool:
        return (self.lines[i].value.get("isSidechain") is True) == self.sidechain

    def _leaves(self, records: list[int]) -> list[int]:
        """The ends of the conversations in the file: records of ours that no record names as its parent (a
        record followed only by progress records is an end too: progress is not conversation)."""
        ends: list[int] = []
        for i in records:
            value = self.lines[i].value
            if not isinstance(value.get("uuid"), str) or not self._ours(i) or self.children.get(value["uuid"]):
                continue
            while value.get("type") == "progress":
                i = self.by_uuid.get(value.get("parentUuid"), -1)
                if i < 0:
                    break
                value = self.lines[i].value
            if i >= 0 and value.get("type") != "progress":
                ends.append(i)
        return ends

    def _chain(self, candidates: list[int]) -> list[int]:
        """The records ``--resume`` walks: from the newest end (by its timestamp, the later line on a tie) back to
        a record whose parent is null or absent."""
        if not candidates:
            return []
        chain: list[int] = []
        seen: set[int] = set()
        at: int | None = max(candidates, key=lambda i: (_moment(self.lines[i].value), i))
        while at is not None and at not in seen:
            seen.add(at)
            chain.append(at)
            parent = self.lines[at].value.get("parentUuid")
            at = self.by_uuid.get(parent) if isinstance(parent, str) else None
        chain.reverse()
        return chain

    # ------------------------------------------------------------------ records -> items

    def _rebuild(self, on_chain: set[int]) -> None:
        answered: set[str] = set()
        calls: list[str] = []
        for i in self.chain:
            value = self.lines[i].value
            if value.get("type") not in MESSAGE_TYPES:
                continue
            answered.update(_result_ids(value))
            content = _content(value)
            if value.get("type") == "assistant" and isinstance(content, list):
                calls.extend(b["id"] for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
                             and isinstance(b.get("id"), str))
        # results off the chain, for calls the chain leaves open: shown first, so the planner moves them
        open_calls = set(calls) - answered
        off: list[tuple[int, int]] = []
        if open_calls:
            for i, line in enumerate(self.lines):
                value = line.value
                if i in on_chain or not isinstance(value, dict) or not self._ours(i) or value.get("type") != "user":
                    continue
                if any(self.lines[c].value.get("type") in MESSAGE_TYPES for c in self.children.get(value.get("uuid"), ())):
                    continue  # the start of another branch (a rewind), not a stray result
                content = _content(value)
                for b, block in enumerate(content if isinstance(content, list) else ()):
                    if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") in open_calls:
                        open_calls.discard(block["tool_use_id"])
                        off.append((i, b))
        if off:
            self._open("user")
            for i, b in off:
                self._add(i, b, self.lines[i].value["message"]["content"][b])
        self.off_chain = {i for i, _ in off}
        last_assistant: tuple[int, Any] | None = None  # (message, message.id) of the assistant message still open
        for i in self.chain:
            value = self.lines[i].value
            role = value.get("type")
            content = _content(value)
            if role not in MESSAGE_TYPES or content is None or (isinstance(content, list) and not content):
                continue
            if role == "assistant":
                message_id = _message_id(value)
                if last_assistant is not None and message_id is not None and last_assistant[1] == message_id \
                        and all(self._only_results(m) for m in self.messages[last_assistant[0] + 1:]):
                    m = last_assistant[0]  # a piece of the same response, after its results so far
                elif self.messages and self.messages[-1]["role"] == "assistant" and not self._is_off(len(self.messages) - 1):
                    m = len(self.messages) - 1
                else:
                    m = self._open("assistant")
                last_assistant = (m, message_id)
            elif self.messages and self.messages[-1]["role"] == "user" and not self._is_off(len(self.messages) - 1):
                m = len(self.messages) - 1
            else:
                m = self._open("user")
            if isinstance(content, str):
                self._add(i, None, {"type": "text", "text": content}, m)
            else:
                for b, block in enumerate(content):
                    self._add(i, b, block, m)

    def _open(self, role: str) -> int:
        tag = _Tag(role)
        self.messages.append({"role": tag, "content": []})
        self.tags[id(tag)] = len(self.messages) - 1
        return len(self.messages) - 1

    def _add(self, i: int, b: int | None, block: Any, m: int | None = None) -> None:
        m = len(self.messages) - 1 if m is None else m
        self.messages[m]["content"].append(block)
        self.origin[id(block)] = (m, i, b)

    def _is_off(self, m: int) -> bool:
        return m == 0 and bool(self.messages[0]["content"]) and self.origin[id(self.messages[0]["content"][0])][1] in self.off_chain

    def _only_results(self, message: dict[str, Any]) -> bool:
        return message["role"] == "user" and all(isinstance(b, dict) and b.get("type") == "tool_result"
                                                 for b in message["content"])

    # ------------------------------------------------------------------ items -> records

    def encode(self, new_items: list[Any]) -> bytes:
        """The transcript's bytes once the conversation is ``new_items`` (the dialect's repair of it)."""
        plan = _RecordPlan(self)
        present = {id(block) for message in new_items for block in _blocks(message)}
        anchor: int | str | None = None  # the record the next new or re-linked record follows
        for message in new_items:
            tag = message.get("role") if isinstance(message, dict) else None
            source = self.tags.get(id(tag)) if isinstance(tag, _Tag) else None
            if source == 0 and self.off_chain:
                continue  # the results off the chain that stayed off it (their calls refused)
            blocks = _blocks(message)
            converted = [b for b in blocks if id(b) not in self.origin and not _is_result(b)]
            if source is not None:
                self._convert(source, present, converted, plan)
            elif converted:
                raise UnrewritableError("left alone: the repair adds text no record of the transcript can hold",
                                        self.display)
            for block in blocks:
                origin = self.origin.get(id(block))
                if origin is not None:
                    anchor = plan.link(origin[1], anchor) if origin[1] in self.off_chain else origin[1]
                elif _is_result(block):
                    anchor = plan.insert(block, anchor)
        return plan.bytes()

    def _convert(self, m: int, present: set[int], converted: list[Any], plan: _RecordPlan) -> None:
        """Orphans and duplicates the dialect turned into text (or dropped): each record holding one gets the text
        in the result's place, only ``message.content`` changing."""
        lost = [self.origin[id(block)][1:] for block in self.messages[m]["content"] if id(block) not in present]
        texts = iter(converted)
        by_line: dict[int, dict[Any, Any]] = defaultdict(dict)
        for i, b in lost:
            by_line[i][b] = next(texts, None)
        for i, changes in by_line.items():
            line = self.lines[i]
            content = [changes.get(b, block) for b, block in enumerate(line.value["message"]["content"])
                       if not (b in changes and changes[b] is None)]
            if not content:
                raise UnrewritableError(f"left alone: the record at line {line.number} would be left empty; repair "
                                        "without --drop-orphans", self.display)
            plan.change(i, message={**line.value["message"], "content": content})

    def call_line(self, call_id: str) -> int | None:
        for i in self.chain:
            content = _content(self.lines[i].value)
            if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use"
                                                 and b.get("id") == call_id for b in content):
                return i
        return None

    def template(self) -> dict[str, Any]:
        """A user record of the file's own whose context fields a new record carries: the last result record on
        the chain, else any in the file, else the last user record (then the fields results carry in its
        version: ``sourceToolAssistantUUID`` from 2.1)."""
        users = [i for i in self.chain if self.lines[i].value.get("type") == "user"]
        results = [i for i in users if _result_ids(self.lines[i].value)] or [
            i for i, line in enumerate(self.lines) if isinstance(line.value, dict) and self._ours(i)
            and _result_ids(line.value)]
        if results:
            return self.lines[results[-1]].value
        pick = users or [i for i in self.chain if self.lines[i].value.get("type") in MESSAGE_TYPES]
        value = dict(self.lines[pick[-1]].value) if pick else {}
        value["toolUseResult"] = None
        if _version(value.get("version")) >= (2, 1):
            value["sourceToolAssistantUUID"] = None
        return value


def _moment(value: dict[str, Any]) -> float:
    moment = parse_time(value.get("timestamp"))
    return float("-inf") if moment is None else moment


def _version(text: Any) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in str(text).split(".")[:2])
    except ValueError:
        return ()


class _RecordPlan:
    """The record edits of one repair: fields changed per line, new records after a line, and the chain as the
    edits leave it (``successor``: the record after each, lines by index and new records by uuid)."""

    def __init__(self, session: ClaudeSession) -> None:
        self.session = session
        self.lines = session.lines
        self.successor: dict[int | str, int | str] = dict(zip(session.chain, session.chain[1:]))
        self.changed: dict[int, dict[str, Any]] = {}
        #: new records by uuid, with the line each is written after (in this order)
        self.new: dict[str, tuple[int, dict[str, Any]]] = {}
        self.rewrite = Rewrite(session.data, session.lines)
        self.style = file_style(self.lines, lambda v: v.get("type") in MESSAGE_TYPES)
        self.template = session.template()

    def change(self, i: int | str, **fields: Any) -> None:
        if isinstance(i, str):
            self.new[i][1].update(fields)
        else:
            self.changed.setdefault(i, {}).update(fields)

    def uuid(self, at: int | str) -> str:
        return at if isinstance(at, str) else self.lines[at].value["uuid"]

    def _follow(self, at: int | str, record: int | str) -> None:
        """Put ``record`` right after ``at`` on the chain; what followed ``at`` now follows ``record``."""
        after = self.successor.get(at)
        if after is not None:
            if isinstance(after, str):
                raise UnrewritableError("left alone: two new records would share a place", self.session.display)
            self.change(after, parentUuid=self.uuid(record))
            self.successor[record] = after
        self.successor[at] = record

    def link(self, i: int, anchor: int | str | None) -> int | str:
        """Re-link the off-chain record ``i`` after ``anchor``; when ``anchor`` is a result that ends the chain,
        just before it instead, so that the newest record stays the end of the chain."""
        if anchor is None:
            raise UnrewritableError("left alone: a result off the chain has no place on it", self.session.display)
        before = self.predecessor(anchor)
        if self.successor.get(anchor) is None and before is not None and (
                isinstance(anchor, str) or _result_ids(self.lines[anchor].value)):
            self.change(i, parentUuid=self.uuid(before))
            self.change(anchor, parentUuid=self.uuid(i))
            self.successor[before], self.successor[i] = i, anchor
            return anchor
        self.change(i, parentUuid=self.uuid(anchor))
        self._follow(anchor, i)
        return i

    def predecessor(self, at: int | str) -> int | str | None:
        return next((a for a, b in self.successor.items() if b == at), None)

    def insert(self, block: dict[str, Any], anchor: int | str | None) -> str:
        """A new user record holding the result ``block``, after ``anchor``."""
        where = self.session.display
        if anchor is None:
            raise UnrewritableError("left alone: an output would open the transcript", where)
        template = self.template
        call_id = str(block.get("tool_use_id"))
        call_line = self.session.call_line(call_id)
        call = self.lines[call_line].value if call_line is not None else {}
        new_uuid = record_id(str(template.get("sessionId")), call_id)
        fields: dict[str, Any] = {
            "parentUuid": self.uuid(anchor), "type": "user", "message": {"role": "user", "content": [block]},
            # the time of the record it follows: the chain's times stay in order and its newest record its end
            "uuid": new_uuid, "timestamp": self.timestamp(anchor),
            "toolUseResult": f"Error: {text_of(block.get('content'))}",
            "sourceToolAssistantUUID": call.get("uuid"),
        }
        optional = {"toolUseResult", "sourceToolAssistantUUID"}  # carried as the file's results carry them
        record = {key: fields.get(key, template.get(key)) for key in CONTEXT_FIELDS
                  if key in template or (key in fields and key not in optional)}
        self.new[new_uuid] = (anchor if isinstance(anchor, int) else self.new[anchor][0], record)
        self._follow(anchor, new_uuid)
        return new_uuid

    def timestamp(self, at: int | str) -> Any:
        return self.new[at][1].get("timestamp") if isinstance(at, str) else self.lines[at].value.get("timestamp")

    def bytes(self) -> bytes:
        where = self.session.display
        for i, fields in self.changed.items():
            line = self.lines[i]
            if set(fields) == {"parentUuid"}:
                self.rewrite.replace(i, set_string_field(line, "parentUuid", fields["parentUuid"], where))
            else:
                self.rewrite.replace(i, rewrite_record(line, {**line.value, **fields}, where))
        for line, record in self.new.values():
            self.rewrite.insert_after(line, dump(record, self.style, where))
        return self.rewrite.bytes()


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def read(data: bytes, display: str, mtime: float | None) -> ClaudeSession | ReadProblem:
    lines = parsed_lines(data, display)
    if isinstance(lines, ReadProblem):
        return lines
    return ClaudeSession(data, lines, display, mtime)  # (one of only summaries or snapshots: no messages, healthy)
