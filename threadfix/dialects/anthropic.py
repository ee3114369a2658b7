"""Anthropic Messages API ``messages``.

Consecutive same-role messages are merged into one turn by the API. Every client ``tool_use`` of an
assistant turn must be answered by a ``tool_result`` in the *next* turn, and the results must form the
leading run of that (user) turn; text may only follow them. Server tools (``server_tool_use``) are
answered by a ``*_tool_result`` block inside the same assistant turn. A synthetic result carries
``is_error: true``, the wire's own error channel. ``tool_use`` blocks must end their turn: text after
them is moved ahead of them (:meth:`Anthropic.layout_edits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal, Union

import orjson

from threadfix.dialects.base import (
    Dialect,
    blank_id,
    Screen,
    Slot,
    Violation,
    apply_blocks,
    call_text,
    calls_in_user_turns,
    lay_out,
    orphan_text,
    absent,
    screen_struct,
    str_or_none,
    text_after_calls,
    usable_ids,
)
from threadfix.failures import is_threadfix_output
from threadfix.model import Call, Edit, Output, RepairPlan, ThreadIndex

_CLIENT_CALLS = frozenset({"tool_use"})
_SERVER_CALLS = frozenset({"server_tool_use"})
_CALL_KINDS = _CLIENT_CALLS | _SERVER_CALLS
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "server_tool_use", "thinking", "redacted_thinking",
                               "web_search_tool_result", "document", "search_result"})
_TRUNCATING_STOPS = frozenset({"max_tokens", "model_context_window_exceeded"})
#: a turn of only these blocks can have its text moved ahead of its tool calls
_REORDERABLE = frozenset({"text", "tool_use"})


def blocks(message: Any) -> list[Any]:
    """A message's content as blocks (a string content is one text block)."""
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    if isinstance(content, list):
        return content
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return []


def _type(block: Any) -> str | None:
    """A block's type; None when it is not a string (a hostile one may be a list, which no set or dict can hold)."""
    return str_or_none(block.get("type")) if isinstance(block, dict) else None


def is_result(block: Any) -> bool:
    return _type(block) == "tool_result"


def _is_server_result(block: Any) -> bool:
    return _is_server_result_kind(_type(block))


def _is_server_result_kind(kind: str | None) -> bool:
    """Whether a block of type ``kind`` is a server tool's result (``web_search_tool_result``...), not a client's."""
    return kind is not None and kind.endswith("_tool_result") and kind != "tool_result"


def turns(items: Sequence[Any]) -> list[tuple[str | None, int, int]]:
    """Consecutive same-role messages as (role, first index, last index): the API merges them."""
    groups: list[tuple[str | None, int, int]] = []
    for i, message in enumerate(items):
        role = message.get("role") if isinstance(message, dict) else None
        if groups and groups[-1][0] == role:
            groups[-1] = (role, groups[-1][1], i)
        else:
            groups.append((role, i, i))
    return groups


#: the last thread's turns: the planner asks :meth:`Anthropic.in_place` once per output of the same items
_last_turns: tuple[Any, int, list[tuple[str | None, int, int]]] = (None, -1, [])


def _cached_turns(items: Sequence[Any]) -> list[tuple[str | None, int, int]]:
    """:func:`turns` of ``items``, computed once per thread, not once per call (O(calls x items), issue 7).

    The cache holds the list itself, so its identity cannot be reused by another list while cached.
    """
    global _last_turns
    cached, length, groups = _last_turns
    if cached is not items or length != len(items):
        groups = turns(items)
        _last_turns = (items, len(items), groups)
    return groups


def turn_of(groups: list[tuple[str | None, int, int]], message: int) -> int:
    return next(g for g, (_, first, last) in enumerate(groups) if first <= message <= last)


def leading_results(items: Sequence[Any], first: int, last: int) -> set[tuple[int, int]]:
    """Positions of the tool_result blocks in the leading run of the merged turn first..last."""
    run: set[tuple[int, int]] = set()
    for m in range(first, last + 1):
        for b, block in enumerate(blocks(items[m])):
            if not is_result(block):
                return run
            run.add((m, b))
    return run


class Anthropic(Dialect):
    name = "anthropic"
    title = "Anthropic Messages API messages"

    def sniff(self, items: Sequence[Any]) -> int:
        score = 0
        for message in items[:200]:
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                return 0
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    kind = _type(block)
                    if kind in _ANTHROPIC_BLOCKS or (isinstance(kind, str) and kind.endswith("_tool_result")):
                        return 100
                    if kind not in ("text", "image"):
                        return 0
                score = max(score, 40)
            elif isinstance(content, str):
                score = max(score, 20)
        return score

    def index(self, items: Sequence[Any]) -> ThreadIndex:
        # the hot loop of every Anthropic scan: each block's type read once, Call and Output built positionally (the
        # fields' order in model.Call and model.Output)
        calls: list[Call] = []
        outputs: list[Output] = []
        users: list[int] = []
        models: list[int] = []
        call_kinds, server_kinds = _CALL_KINDS, _SERVER_CALLS
        for m, message in enumerate(items):
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            truncated = message.get("stop_reason") in _TRUNCATING_STOPS
            assistant = role == "assistant"
            if assistant:
                models.append(m)
            has_text = False
            content = blocks(message)
            last = len(content) - 1
            for b, block in enumerate(content):
                if isinstance(block, dict):
                    kind = block.get("type")
                    if not isinstance(kind, str):
                        kind = None
                else:
                    kind = None
                if assistant and kind in call_kinds:
                    call_id = block.get("id")
                    name = block.get("name")
                    calls.append(Call(
                        call_id if isinstance(call_id, str) else None,
                        name if isinstance(name, str) else "unknown",
                        kind,
                        (m, b),
                        block.get("input"),
                        truncated and b == last,
                        kind in server_kinds,
                    ))
                elif kind == "tool_result" or (assistant and _is_server_result_kind(kind)):
                    result = block.get("content")
                    call_id = block.get("tool_use_id")
                    outputs.append(Output(
                        call_id if isinstance(call_id, str) else None,
                        kind,
                        (m, b),
                        result,
                        bool(block.get("is_error")) if "is_error" in block else None,
                        None,
                        is_threadfix_output(result),
                    ))
                elif kind == "text" or kind == "image" or kind == "document":
                    has_text = True
            if role == "user" and has_text:
                users.append(m)
        return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items))

    def quick_healthy(self, items: Sequence[Any]) -> bool:
        """No tool blocks at all, or each assistant's tool_use ids answered by the next user message's
        leading tool_results and nothing else (no merging, server tools or stray results to reason about)."""
        try:
            pending: set[Any] = set()
            for message in items:
                content = message.get("content")
                role = message.get("role")
                if isinstance(content, str):
                    if pending:
                        return False
                    continue
                if role == "assistant":
                    if pending:
                        return False
                    for block in content:
                        kind = block.get("type")
                        if kind == "text" and pending:
                            return False  # text after the turn's tool calls: refused, see layout_edits
                        if kind == "tool_use":
                            if block.get("id") is None or block.get("id") in pending or blank_id(block.get("id")):
                                return False
                            pending.add(block.get("id"))
                        elif kind == "server_tool_use" or kind == "tool_result" or (isinstance(kind, str) and kind.endswith("_tool_result")):
                            return False
                    continue
                leading = True
                for block in content:
                    if block.get("type") == "tool_result":
                        if not leading or block.get("tool_use_id") not in pending:
                            return False
                        pending.discard(block.get("tool_use_id"))
                    elif block.get("type") in _CLIENT_CALLS or block.get("type") in _SERVER_CALLS:
                        return False  # a call in a user message: refused, see layout_edits
                    else:
                        leading = False
                if pending:
                    return False
        except (AttributeError, TypeError):
            return False
        return not pending

    def screen(self) -> Screen:
        return _screen()

    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        groups = _cached_turns(items)
        call_turn = turn_of(groups, call.at[0])
        if call.server:
            return output.wire_type != "tool_result" and turn_of(groups, output.at[0]) == call_turn and output.at > call.at
        if output.wire_type != "tool_result" or call_turn + 1 >= len(groups):
            return False
        role, first, last = groups[call_turn + 1]
        return role == "user" and output.at in leading_results(items, first, last)

    def is_pending(self, index: ThreadIndex, call: Call, items: Sequence[Any]) -> bool:
        # a final assistant turn ending on a server tool is the pause_turn continuation, not a fault
        return call.server and not any(m > call.at[0] for m in (*index.user_turns, *index.model_turns))

    def check(self, items: Sequence[Any]) -> list[Violation]:
        violations: list[Violation] = []
        groups = turns(items)
        for g, (role, first, last) in enumerate(groups):
            if role != "assistant":
                continue
            merged = [(m, b, block) for m in range(first, last + 1) for b, block in enumerate(blocks(items[m]))]
            uses = [(m, b, block.get("id")) for m, b, block in merged if _type(block) == "tool_use"]
            seen_ids: set[Any] = set()
            for m, b, call_id in uses:
                if call_id in seen_ids:
                    violations.append(Violation("duplicate-tool-use-id", m, f"messages.{m}.content.{b}: tool_use ids must be unique", call_id))
                seen_ids.add(call_id)
            for idx, (m, b, block) in enumerate(merged):
                if _type(block) == "server_tool_use":
                    answered = any(_is_server_result(x) and x.get("tool_use_id") == block.get("id") for _, _, x in merged[idx + 1:])
                    if not answered and g != len(groups) - 1:
                        violations.append(Violation(
                            "server-tool-without-result", first,
                            f"messages.{first}: `{block.get('name')}` tool use with id `{block.get('id')}` was found "
                            f"without a corresponding `{block.get('name')}_tool_result` block", block.get("id")))
            if uses:
                last_use = max(idx for idx, (_, _, x) in enumerate(merged) if _type(x) == "tool_use")
                if any(_type(x) == "text" for _, _, x in merged[last_use + 1:]):
                    violations.append(Violation("tool-use-not-last", first,
                                                f"messages.{first}: `tool_use` blocks must end the assistant turn"))
            if not uses:
                continue
            nxt = first if g + 1 >= len(groups) else groups[g + 1][1]
            answered: set[Any] = set()
            if g + 1 < len(groups) and groups[g + 1][0] == "user":
                _, nfirst, nlast = groups[g + 1]
                run = leading_results(items, nfirst, nlast)
                answered = {blocks(items[m])[b].get("tool_use_id") for m, b in run}
            missing = [str(call_id) for _, _, call_id in uses if call_id not in answered]
            if missing:
                at = nxt if g + 1 < len(groups) else last + 1
                violations.append(Violation(
                    "tool-use-without-result", at,
                    f"messages.{at}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in "
                    "the next message.", missing[0]))
        for g, (role, first, last) in enumerate(groups):
            if role != "user":
                continue
            previous_ids: set[Any] = set()
            if g > 0 and groups[g - 1][0] == "assistant":
                _, pfirst, plast = groups[g - 1]
                previous_ids = {x.get("id") for m in range(pfirst, plast + 1) for x in blocks(items[m]) if _type(x) == "tool_use"}
            seen: set[Any] = set()
            for m in range(first, last + 1):
                for b, block in enumerate(blocks(items[m])):
                    if _type(block) in _CLIENT_CALLS | _SERVER_CALLS:
                        violations.append(Violation(
                            "tool-use-in-user-message", m,
                            f"messages.{m}.content.{b}: `{_type(block)}` blocks may only appear in assistant messages",
                            str_or_none(block.get("id"))))
                    if not is_result(block):
                        continue
                    call_id = block.get("tool_use_id")
                    if call_id not in previous_ids:
                        violations.append(Violation(
                            "unexpected-tool-result", m,
                            f"messages.{m}.content.{b}: unexpected `tool_use_id` found in `tool_result` blocks: "
                            f"{call_id}. Each `tool_result` block must have a corresponding `tool_use` block in the "
                            "previous message.", call_id))
                    elif call_id in seen:
                        violations.append(Violation(
                            "multiple-tool-results", m,
                            f"messages.{m}.content.{b}: each tool_use must have a single result. Found multiple "
                            f"`tool_result` blocks with id: {call_id}", call_id))
                    seen.add(call_id)
            run = leading_results(items, first, last)
            late = [(m, b) for m in range(first, last + 1) for b, x in enumerate(blocks(items[m]))
                    if is_result(x) and (m, b) not in run and x.get("tool_use_id") in previous_ids]
            for m, b in late:
                violations.append(Violation(
                    "tool-result-not-leading", m,
                    f"messages.{m}.content.{b}: tool_result blocks must come first in the user message, before any "
                    "other content", blocks(items[m])[b].get("tool_use_id")))
        return sorted(violations, key=lambda v: v.at)

    def layout_edits(self, index: ThreadIndex, items: Sequence[Any]) -> list[Edit]:
        """Text after an assistant message's tool calls (which ``check`` reports for the turn) is moved ahead
        of them, as other clients patch it, in a message of text and ``tool_use`` blocks only. Message by
        message: the turns repair leaves may differ from the stored ones (a result it inserts splits a turn).
        Thinking blocks must stay as the model wrote them, and text in a later message of the turn, or among
        other blocks, is not moved: lint reports those for a person to mend."""
        label = lambda use: (str_or_none(use.get("id")), str_or_none(use.get("name")))  # noqa: E731
        return [*text_after_calls(items, blocks_of=_assistant_blocks, kind_of=_type, call_kind="tool_use",
                                  reorderable=_REORDERABLE, label=label),
                *calls_in_user_turns(items, user_blocks=_user_blocks,
                                     call_of=lambda block: label(block) if _type(block) in _CLIENT_CALLS | _SERVER_CALLS else None)]

    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        items, plan = lay_out(items, plan, content_key="content", kind_of=_type, call_kind="tool_use", as_text=_call_as_text)
        groups = turns(items)

        def slot(call: Call) -> Slot:
            if call.server:
                return Slot("after_block", call.at[0], call.at[1])
            g = turn_of(groups, call.at[0])
            if groups[g][2] != call.at[0]:  # more assistant messages follow: answer right after the call's
                return Slot("before", call.at[0] + 1)
            if g + 1 < len(groups) and groups[g + 1][0] == "user":
                first = groups[g + 1][1]
                if isinstance(items[first].get("content"), list):
                    return Slot("into", first)
                return Slot("before", first)
            return Slot("before", groups[g][2] + 1)

        return apply_blocks(
            items, plan, content_key="content", slot=slot, build=_build_result, convert=_convert,
            is_result=is_result, new_message=lambda content: {"role": "user", "content": content},
        )


def _user_blocks(message: Any) -> list[Any] | None:
    content = message.get("content") if isinstance(message, dict) and message.get("role") == "user" else None
    return content if isinstance(content, list) else None


def _call_as_text(block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "text", "text": call_text(str_or_none(block.get("id")), str_or_none(block.get("name")), block.get("input"))}


def _assistant_blocks(message: Any) -> list[Any] | None:
    content = message.get("content") if isinstance(message, dict) and message.get("role") == "assistant" else None
    return content if isinstance(content, list) else None


_SERVER_ERROR_TYPES = {
    "web_search": "web_search_tool_result",
    "web_fetch": "web_fetch_tool_result",
    "code_execution": "code_execution_tool_result",
    "bash_code_execution": "bash_code_execution_tool_result",
    "text_editor_code_execution": "text_editor_code_execution_tool_result",
}


def _build_result(edit: Edit) -> dict[str, Any]:
    call = edit.call
    if call.server:
        result_type = _SERVER_ERROR_TYPES.get(call.name, f"{call.name}_tool_result")
        return {"type": result_type, "tool_use_id": call.call_id,
                "content": {"type": f"{result_type}_error", "error_code": "unavailable"}}
    return {"type": "tool_result", "tool_use_id": call.call_id, "content": orjson.dumps(edit.payload).decode(),
            "is_error": True}


def _convert(edit: Edit, block: Any) -> dict[str, Any]:
    return {"type": "text", "text": orphan_text(edit.output, edit.action.value.endswith("duplicate"))}


#: the block types a screened message may hold besides tool_use and tool_result (any other: read in full)
_SCREEN_PLAIN = ("text", "image", "thinking", "redacted_thinking", "document", "search_result")
_TOOL_USE, _TOOL_RESULT = 1, 2


@cache
def _screen() -> Screen:
    """Messages of role user or assistant, with no key another dialect sniffs by (``type``: OpenAI Responses is
    sure of a message item; ``tool_calls``: Chat gives it 95; ``parts``, ``kind``, ``toolInvocations``), whose content is text or blocks of the
    types above, tool_use (a string ``id``) and tool_result (a string ``tool_use_id``). :meth:`Anthropic.sniff`
    gives such a thread 100 once a block other than text or image stands among its first 200 messages, and 40
    once a content there is a list of blocks, which no other dialect reaches on it (OpenAI Chat: 30 at most;
    Bedrock refuses a block with a ``type``).

    Health is :meth:`Anthropic.quick_healthy`'s, over those fields, with no id used twice in the thread and none
    blank: each assistant's tool_use blocks, ending its text, answered by the leading tool_results of the very
    next message, a user one, and no other tool_result."""
    def block(tag: str, fields: list[Any], code: int) -> type:
        return screen_struct(f"ScreenAnthropic{tag.title()}", fields, tag_field="type", tag=tag,
                         namespace={"code": code})

    blocks = [block("tool_use", [("id", str)], _TOOL_USE), block("tool_result", [("tool_use_id", str)], _TOOL_RESULT),
              *(block(tag, [], 0) for tag in _SCREEN_PLAIN)]
    message = screen_struct("ScreenAnthropicMessage", [
        ("role", Literal["user", "assistant"]),
        ("content", str | list[Union[tuple(blocks)]]),  # noqa: UP007 - a union of classes made at run time
        *absent("type", "parts", "kind", "toolInvocations", "tool_calls"),
    ])
    text_class = blocks[2]

    def settles(items: list[Any]) -> bool | None:
        if all(m.content.__class__ is str or not m.content for m in items[:200]):
            return None  # (all empty lists: Bedrock's sniff gives them 50)
        pending: set[str] = set()
        seen: list[str] = []
        for m in items:
            content = m.content
            if content.__class__ is str:
                if pending:
                    return False
                continue
            if m.role == "assistant":
                if pending:
                    return False
                for b in content:
                    code = b.code
                    if code == _TOOL_USE:
                        if b.id in pending:
                            return False
                        pending.add(b.id)
                        seen.append(b.id)
                    elif code == _TOOL_RESULT or (pending and b.__class__ is text_class):
                        return False  # a result in the model's turn; text after the turn's calls
                continue
            leading = True
            for b in content:
                code = b.code
                if code == _TOOL_RESULT:
                    if not leading or b.tool_use_id not in pending:
                        return False
                    pending.discard(b.tool_use_id)
                elif code == _TOOL_USE:
                    return False  # a call in a user message
                else:
                    leading = False
            if pending:
                return False
        return not pending and len(set(seen)) == len(seen) and usable_ids(seen)

    return Screen(message, settles)
