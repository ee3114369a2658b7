"""OpenAI Chat Completions ``messages`` (and the many servers that copy it).

An assistant message with ``tool_calls`` must be followed *immediately* by one ``tool`` message per
call id, in any order, with nothing in between; a ``tool`` message must answer a call of the assistant
message its block follows. A synthetic answer goes at the end of that block.

Layout: an assistant message's text is one ``content`` field beside its ``tool_calls``, so there is no
order for ``move_text`` to mend. Waiting calls: nothing in Chat messages marks one; ``--leave-tool`` names
tools whose output comes from a person.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

import orjson

from threadfix.dialects.base import (
    Dialect, Screen, ToolBlocks, Violation, absent, answered_in_blocks, blank_id, orphan_text,
    screen_struct,
)
from threadfix.failures import is_threadfix_output
from threadfix.model import Call, Edit, Output, RepairPlan, ThreadIndex

_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


def _calls_of(message: Any) -> list[dict[str, Any]]:
    if isinstance(message, dict) and message.get("role") == "assistant":
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            return [c for c in calls if isinstance(c, dict)]
    return []


def _is_tool(message: Any) -> bool:
    return isinstance(message, dict) and message.get("role") == "tool"


def _output_id(message: Any) -> Any:
    return message.get("tool_call_id")


#: an assistant message's tool calls are answered by the run of tool messages right after it
BLOCKS = ToolBlocks(is_output=_is_tool, call_ids=lambda m: [c.get("id") for c in _calls_of(m)], output_id=_output_id)


class OpenAIChat(Dialect):
    name = "openai-chat"
    title = "OpenAI Chat Completions messages"

    def sniff(self, items: Sequence[Any]) -> int:
        score = 0
        for item in items[:200]:
            if not isinstance(item, dict) or "type" in item and "role" not in item:
                return 0
            role = item.get("role")
            if role not in _CHAT_ROLES:
                return 0
            if role == "tool" or "tool_calls" in item:
                score = max(score, 95)
            elif "content" in item and isinstance(item["content"], (str, type(None))):
                score = max(score, 30)
            elif isinstance(item.get("content"), list):
                types = {p.get("type") for p in item["content"] if isinstance(p, dict)}
                if types <= {"text", "image_url", "input_audio", "file", "refusal"}:
                    score = max(score, 25)
                else:
                    return 0
        return score

    def index(self, items: Sequence[Any]) -> ThreadIndex:
        # one pass that also sees, on what it reads anyway, the common shape quick_accepted says True to: each
        # assistant message's calls (objects with distinct, non-blank string ids) answered once each by the run of
        # tool messages right after it, and no other tool message; anything rarer is left to that check (accepted
        # False), so lint and report walk the items once (issue 28)
        calls: list[Call] = []
        outputs: list[Output] = []
        users: list[int] = []
        models: list[int] = []
        usual = True
        #: the ids the run of tool messages being read still owes (None: no assistant's calls are open)
        owed: set[str] | None = None
        for i, message in enumerate(items):
            if not isinstance(message, dict):
                usual = False
                continue
            get = message.get
            role = get("role")
            if role == "tool":
                content = get("content")
                call_id = get("tool_call_id")
                if usual:
                    if owed and call_id.__class__ is str and call_id in owed:
                        owed.discard(call_id)
                    else:
                        usual = False
                # positional: the fields' order in model.Output
                outputs.append(Output(call_id if isinstance(call_id, str) else None, "tool", (i, -1), content, None,
                                      None, is_threadfix_output(content)))
                continue
            if owed:
                usual = False  # a call of the block before is never answered
            owed = None
            if role == "assistant":
                models.append(i)
                truncated = get("finish_reason") == "length"
                tool_calls = get("tool_calls")
                if not isinstance(tool_calls, list):
                    if tool_calls:
                        usual = False
                    continue
                if tool_calls and usual:
                    owed = set()
                for call in tool_calls:
                    if not isinstance(call, dict):
                        usual = False
                        continue
                    call_get = call.get
                    function = call_get("function")
                    spec = function if isinstance(function, dict) else call_get("custom")
                    spec = spec if isinstance(spec, dict) else {}
                    call_id = call_get("id")
                    name = spec.get("name")
                    kind = call_get("type")
                    if owed is not None:
                        if call_id.__class__ is str and call_id not in owed and call_id.strip():
                            owed.add(call_id)
                        else:
                            usual = False
                    # positional: the fields' order in model.Call (faster to build than by keyword)
                    calls.append(Call(
                        call_id if isinstance(call_id, str) else None,
                        name if isinstance(name, str) else "unknown",
                        kind if isinstance(kind, str) else "function",
                        (i, -1),
                        spec.get("arguments"),  # a custom tool's ``input`` is free text
                        truncated,
                    ))
            elif role == "user":
                users.append(i)
        accepted = usual and not owed
        return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items), accepted)

    def quick_healthy(self, items: Sequence[Any]) -> bool:
        """Each tool_calls message followed by exactly one tool message per id, and no other tool message."""
        try:
            i, n = 0, len(items)
            while i < n:
                message = items[i]
                role = message.get("role")
                if role == "tool":
                    return False
                i += 1
                calls = message.get("tool_calls") if role == "assistant" else None
                if not calls:
                    continue
                wanted = {call.get("id") for call in calls}
                if None in wanted or len(wanted) != len(calls) or any(map(blank_id, wanted)):
                    return False
                while i < n and items[i].get("role") == "tool":
                    call_id = items[i].get("tool_call_id")
                    if call_id not in wanted:
                        return False
                    wanted.discard(call_id)
                    i += 1
                if wanted:
                    return False
        except (AttributeError, TypeError):
            return False
        return True

    def quick_accepted(self, items: Sequence[Any]) -> bool:
        return self.quick_healthy(items)  # the block rule is all the provider checks

    def screen(self) -> Screen:
        return _screen()

    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        return BLOCKS.in_place(call, output, items)

    def check(self, items: Sequence[Any]) -> list[Violation]:
        return BLOCKS.violations(items)

    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        return BLOCKS.apply(items, plan, build=_build_output, convert=_convert)


def _build_output(edit: Edit) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": edit.call.call_id, "content": orjson.dumps(edit.payload).decode()}


def _convert(edit: Edit, item: Any) -> dict[str, Any]:
    return {"role": "user", "content": orphan_text(edit.output, edit.action.value.endswith("duplicate"))}


@cache
def _screen() -> Screen:
    """Messages with a Chat role, text (or null) content and no key another dialect sniffs by (``type``, ``parts``,
    ``kind``, ``toolInvocations``), whose calls satisfy the block rule (:func:`answered_in_blocks`).

    Then no dialect is sure (100) of the thread, and none scores as high as Chat: Anthropic gives string contents
    20 at most, the others nothing. So the thread must show Chat's evidence: a tool message or ``tool_calls``
    (95), or a content (30), among the first 200 messages, as :meth:`OpenAIChat.sniff` reads them."""
    from msgspec import UNSET, UnsetType, field

    call = screen_struct("ScreenChatCall", [("id", str)])
    message = screen_struct("ScreenChatMessage", [
        ("sender", Literal[tuple(_CHAT_ROLES)], field(name="role")),  # (the block rule reads a ``sender``)
        ("content", str | None | UnsetType, UNSET),
        ("tool_calls", list[call] | None | UnsetType, UNSET),
        ("tool_call_id", str | None | UnsetType, UNSET),
        *absent("type", "parts", "kind", "toolInvocations"),
    ])

    def settles(items: list[Any]) -> bool | None:
        if not any(m.content is not UNSET or m.tool_calls is not UNSET or m.sender == "tool" for m in items[:200]):
            return None
        return answered_in_blocks(items, _TOOL, _ASSISTANT)

    return Screen(message, settles)


#: the block rule's kinds: a tool message answers; an assistant message's ``tool_calls`` are its calls
_TOOL = frozenset({"tool"})
_ASSISTANT = frozenset({"assistant"})
