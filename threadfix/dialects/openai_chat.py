"""OpenAI Chat Completions ``messages`` (and the many servers that copy it).

An assistant message with ``tool_calls`` must be followed *immediately* by one ``tool`` message per
call id, in any order, with nothing in between; a ``tool`` message must answer a call of the assistant
message its block follows. A synthetic answer goes at the end of that block.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from threadfix.dialects.base import Dialect, Violation, apply_flat, orphan_text
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


def block_owner(items: Sequence[Any], i: int) -> int | None:
    """The assistant message whose tool block holds message ``i``, if ``i`` sits in one."""
    j = i - 1
    while j >= 0 and _is_tool(items[j]):
        j -= 1
    return j if j >= 0 and _calls_of(items[j]) and _is_tool(items[i]) else None


def block_end(items: Sequence[Any], owner: int) -> int:
    """The last index of the tool block after assistant message ``owner`` (``owner`` when empty)."""
    end = owner
    while end + 1 < len(items) and _is_tool(items[end + 1]):
        end += 1
    return end


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
            elif isinstance(item.get("content"), (str, type(None))):
                score = max(score, 30)
            elif isinstance(item.get("content"), list):
                types = {p.get("type") for p in item["content"] if isinstance(p, dict)}
                if types <= {"text", "image_url", "input_audio", "file", "refusal"}:
                    score = max(score, 25)
                else:
                    return 0
        return score

    def index(self, items: Sequence[Any]) -> ThreadIndex:
        calls: list[Call] = []
        outputs: list[Output] = []
        users: list[int] = []
        models: list[int] = []
        for i, message in enumerate(items):
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "assistant":
                models.append(i)
                truncated = message.get("finish_reason") == "length"
                for call in _calls_of(message):
                    spec = call.get("function") if isinstance(call.get("function"), dict) else call.get("custom")
                    spec = spec if isinstance(spec, dict) else {}
                    calls.append(Call(
                        call_id=call.get("id") if isinstance(call.get("id"), str) else None,
                        name=spec.get("name") if isinstance(spec.get("name"), str) else "unknown",
                        wire_type=call.get("type", "function") if isinstance(call.get("type"), str) else "function",
                        at=(i, -1),
                        arguments=spec.get("arguments"),  # a custom tool's ``input`` is free text
                        truncated=truncated,
                    ))
            elif role == "tool":
                content = message.get("content")
                outputs.append(Output(
                    call_id=message.get("tool_call_id") if isinstance(message.get("tool_call_id"), str) else None,
                    wire_type="tool",
                    at=(i, -1),
                    content=content,
                    by_threadfix=is_threadfix_output(content),
                ))
            elif role == "user":
                users.append(i)
        return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items))

    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        return block_owner(items, output.at[0]) == call.at[0]

    def check(self, items: Sequence[Any]) -> list[Violation]:
        violations: list[Violation] = []
        i = 0
        while i < len(items):
            message = items[i]
            if _is_tool(message):
                violations.append(Violation(
                    "tool-without-call", i,
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                    "with 'tool_calls'.", message.get("tool_call_id")))
                i += 1
                continue
            wanted = [c.get("id") for c in _calls_of(message)]
            if not wanted:
                i += 1
                continue
            seen: dict[Any, int] = {}
            j = i + 1
            while j < len(items) and _is_tool(items[j]):
                call_id = items[j].get("tool_call_id")
                if call_id not in wanted:
                    violations.append(Violation(
                        "unknown-tool-call-id", j,
                        f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of previous "
                        "message.", call_id))
                elif call_id in seen:
                    violations.append(Violation(
                        "duplicate-tool-call-id", j,
                        f"Invalid parameter: Duplicate value for 'tool_call_id' of '{call_id}', in "
                        f"messages[{seen[call_id]}] and messages[{j}].", call_id))
                else:
                    seen[call_id] = j
                j += 1
            missing = [str(c) for c in wanted if c not in seen]
            if missing:
                violations.append(Violation(
                    "missing-tool-messages", i,
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                    f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(missing)}",
                    missing[0]))
            i = j
        return violations

    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        def anchor(call: Call) -> int:
            return block_end(items, call.at[0])

        def defer(i: int) -> int | None:
            owner = block_owner(items, i)
            return None if owner is None else block_end(items, owner)

        return apply_flat(items, plan, anchor=anchor, build=_build_output, convert=_convert, defer=defer)


def _build_output(edit: Edit) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": edit.call.call_id, "content": orjson.dumps(edit.payload).decode()}


def _convert(edit: Edit, item: Any) -> dict[str, Any]:
    return {"role": "user", "content": orphan_text(edit.output, edit.action.value.endswith("duplicate"))}
