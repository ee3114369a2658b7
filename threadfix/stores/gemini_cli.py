"""Gemini CLI chats (``~/.gemini/tmp/<project>/chats/session-<time>-<id>.json`` or ``.jsonl``): message records kept
by id, read as the contents ``gemini --resume`` sends.

What the app does, read from its source (google-gemini/gemini-cli, ``packages/core/src/services/
chatRecordingService.ts`` ``loadConversationRecord`` and ``packages/core/src/utils/sessionUtils.ts``
``convertSessionToClientHistory``):

* JSONL: a header record (``sessionId``, ``projectHash``), message records (a string ``id``) kept in a map by id, so
  a message re-appended under its id (how the app records a message's tool calls as they complete) replaces the
  earlier copy but keeps its place; ``{"$set": {...}}`` updates metadata, and ``$set.messages`` replaces every
  message (a checkpoint); ``{"$rewindTo": id}`` drops that message and those after it. The older single JSON
  object holds ``messages`` itself.
* Contents: ``info``/``error``/``warning`` messages are skipped, and user messages whose text starts with ``/``,
  ``?``, ``<session_context>`` or ``<hook_context>``; a ``gemini`` message is a model turn (its thoughts as thought
  parts, its content, a ``functionCall`` per ``toolCalls`` entry, or its content alone when that holds the calls),
  then ONE user turn with every call's ``result`` (a list of parts spliced in, a string as
  ``response.output``). A call whose ``result`` is null (``status: "cancelled"``, the app writes
  ``call.response?.responseParts || null``) adds no response: the model turn's calls outnumber the responses.
* An output therefore goes into that ``toolCalls`` entry's ``result``, as a list holding the ``functionResponse``
  part: in JSONL by re-appending the message (as the app does), in the single object by rewriting the document in
  its own layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from threadfix import jsonio
from threadfix.errors import UnrewritableError
from threadfix.stores.base import ReadProblem
from threadfix.stores.records import Line, Rewrite, dump, file_style, parsed_lines, rewrite_record, session_thread
from threadfix.times import parse_time

name = "gemini-cli"
DIALECT = "gemini"
SKIPPED_TYPES = frozenset({"info", "error", "warning"})
IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")


def _header(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str)


def recognise(values: Sequence[Any], suffix: str) -> bool:
    """A header record (``sessionId`` and ``projectHash``); in a ``.json`` file, with its ``messages``."""
    first = values[0]
    if not _header(first):
        return False
    return isinstance(first.get("messages"), list) if suffix == ".json" else suffix == ".jsonl"


def _part_list(content: Any) -> list[Any]:
    if isinstance(content, list):
        return [{"text": part} if isinstance(part, str) else part for part in content]
    if isinstance(content, str):
        return [{"text": content}]
    return [content] if content is not None else []


def _text(content: Any) -> str:
    return "".join(part.get("text", "") if isinstance(part, dict) and isinstance(part.get("text"), str) else
                   part if isinstance(part, str) else "" for part in (content if isinstance(content, list) else [content]))


class GeminiSession:
    """One chat: its messages by id, the contents rebuilt from them, and where each tool call's record lives."""

    def __init__(self, data: bytes, display: str, mtime: float | None, lines: list[Line] | None,
                 document: dict[str, Any] | None) -> None:
        self.data = data
        self.display = display
        self.lines = lines
        self.document = document
        #: message id -> (the message record, the line it was last written on or None in a document)
        self.messages: dict[str, tuple[dict[str, Any], int | None]] = {}
        if document is not None:
            self._add_all(document.get("messages"), None)
        else:
            assert lines is not None
            for i, line in enumerate(lines):
                self._record(line.value, i)
        self.origin: dict[int, int] = {}  # id(part) -> the line of the record holding it (for findings)
        self.calls: dict[int, tuple[str, int]] = {}  # id(functionCall part) -> (message id, toolCalls index)
        self.items = self._contents()
        newest = max((t for message, _ in self.messages.values() if (t := parse_time(message.get("timestamp")))
                      is not None), default=None)
        lines_of = tuple(tuple(self.origin.get(id(p), 1) for p in content["parts"]) for content in self.items)
        self.thread = session_thread(display, self.items, data, lines_of, DIALECT, newest, mtime)

    def _add_all(self, messages: Any, i: int | None) -> None:
        for message in messages if isinstance(messages, list) else ():
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                self.messages[message["id"]] = (message, i)

    def _record(self, value: Any, i: int) -> None:
        if not isinstance(value, dict):
            return
        if isinstance(value.get("$rewindTo"), str):
            ids = list(self.messages)
            if value["$rewindTo"] in self.messages:
                for key in ids[ids.index(value["$rewindTo"]):]:
                    del self.messages[key]
            else:
                self.messages.clear()
        elif isinstance(value.get("id"), str):
            self.messages[value["id"]] = (value, i)  # (a re-appended copy replaces it, in the first copy's place)
        elif isinstance(value.get("$set"), dict):
            if isinstance(value["$set"].get("messages"), list):
                self.messages.clear()
                self._add_all(value["$set"]["messages"], i)
        elif _header(value):
            self._add_all(value.get("messages"), i)

    def _number(self, i: int | None) -> int:
        return 1 if i is None or self.lines is None else self.lines[i].number

    def _contents(self) -> list[dict[str, Any]]:
        """``convertSessionToClientHistory``: the contents the app sends on resume."""
        contents: list[dict[str, Any]] = []
        for message_id, (message, i) in self.messages.items():
            kind = message.get("type")
            if kind in SKIPPED_TYPES:
                continue
            line = self._number(i)
            if kind == "user":
                if not _text(message.get("content")).strip() or _text(message.get("content")).strip().startswith(IGNORED_PREFIXES):
                    continue
                contents.append(self._content("user", _part_list(message.get("content")), line))
            elif kind == "gemini":
                contents.extend(self._model_turn(message_id, message, line))
        return contents

    def _content(self, role: str, parts: list[Any], line: int) -> dict[str, Any]:
        for part in parts:
            self.origin[id(part)] = line
        return {"role": role, "parts": parts}

    def _model_turn(self, message_id: str, message: dict[str, Any], line: int) -> list[dict[str, Any]]:
        content = _part_list(message.get("content")) if message.get("content") else []
        calls = message.get("toolCalls") if isinstance(message.get("toolCalls"), list) else []
        parts: list[Any] = []
        if any(isinstance(p, dict) and (p.get("functionCall") or p.get("thought")) for p in content):
            parts.extend(content)  # a modern message: its content is the truth for every part
            for part in content:
                call = part.get("functionCall") if isinstance(part, dict) else None
                k = next((k for k, c in enumerate(calls) if isinstance(call, dict) and isinstance(c, dict)
                          and c.get("id") == call.get("id")), None)
                if k is not None:
                    self.calls[id(part)] = (message_id, k)
        else:
            for thought in message.get("thoughts") or ():
                if isinstance(thought, dict):
                    text = f"**{thought.get('subject')}** {thought.get('description')}" if thought.get("subject") \
                        else thought.get("description")
                    parts.append({"text": text, "thought": True})
            parts.extend(content)
            for k, call in enumerate(calls):
                if isinstance(call, dict):
                    part = {"functionCall": {"id": call.get("id"), "name": call.get("name"), "args": call.get("args")}}
                    self.calls[id(part)] = (message_id, k)
                    parts.append(part)
        if not parts:
            return []
        turns = [self._content("model", parts, line)]
        responses: list[Any] = []
        for call in calls:
            result = call.get("result") if isinstance(call, dict) else None
            if not result:
                continue
            if isinstance(result, str):
                responses.append({"functionResponse": {"id": call.get("id"), "name": call.get("name"),
                                                       "response": {"output": result}}})
            elif isinstance(result, list):
                responses.extend(_part_list(result))
            else:
                responses.append(result)
        if responses:
            turns.append(self._content("user", responses, line))
        return turns

    def encode(self, new_items: list[Any]) -> bytes:
        """The chat's bytes once its contents are ``new_items``: each new response in its call's ``result``."""
        known = {id(part) for content in self.items for part in content["parts"]}
        results: dict[str, dict[int, Any]] = {}
        previous_model: dict[str, Any] | None = None
        for content in new_items:
            for part in content.get("parts", ()) if isinstance(content, dict) else ():
                if id(part) in known:
                    continue
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if not isinstance(response, dict) or previous_model is None:
                    raise UnrewritableError("left alone: the repair changes the chat in a way no message record can "
                                            "hold", self.display)
                message_id, k = self._call_for(previous_model, response)
                results.setdefault(message_id, {})[k] = [part]
            if isinstance(content, dict) and content.get("role") == "model":
                previous_model = content
        if not results:
            return self.data
        if self.document is not None:
            return self._rewrite_document(results)
        assert self.lines is not None
        rewrite = Rewrite(self.data, self.lines)
        style = file_style(self.lines, lambda v: isinstance(v.get("id"), str))
        for message_id, answers in results.items():
            message, _ = self.messages[message_id]
            rewrite.insert_after(len(self.lines) - 1, dump(_answered(message, answers), style, self.display))
        return rewrite.bytes()

    def _call_for(self, model: dict[str, Any], response: dict[str, Any]) -> tuple[str, int]:
        for part in model.get("parts", ()):
            call = part.get("functionCall") if isinstance(part, dict) else None
            if id(part) in self.calls and isinstance(call, dict) and call.get("id") == response.get("id") \
                    and call.get("name") == response.get("name"):
                return self.calls[id(part)]
        raise UnrewritableError("left alone: a response's call is not a recorded tool call", self.display)

    def _rewrite_document(self, results: dict[str, dict[int, Any]]) -> bytes:
        assert self.document is not None
        messages = [_answered(m, results[m["id"]]) if isinstance(m, dict) and m.get("id") in results else m
                    for m in self.document["messages"]]
        line = Line(1, 0, self.data, b"", self.document)
        return rewrite_record(line, {**self.document, "messages": messages}, self.display)


def _answered(message: dict[str, Any], answers: dict[int, Any]) -> dict[str, Any]:
    calls = [({**call, "result": answers[k]} if k in answers else call) for k, call in enumerate(message["toolCalls"])]
    return {**message, "toolCalls": calls}


def read(data: bytes, display: str, mtime: float | None) -> GeminiSession | ReadProblem:
    stripped = data[3:] if data[:3] == jsonio.BOM else data
    try:
        document = jsonio.loads(stripped)
    except jsonio.JsonReadError:
        document = None
    if isinstance(document, dict) and _header(document):
        return GeminiSession(data, display, mtime, None, document)
    lines = parsed_lines(data, display)
    if isinstance(lines, ReadProblem):
        return lines
    return GeminiSession(data, display, mtime, lines, None)
