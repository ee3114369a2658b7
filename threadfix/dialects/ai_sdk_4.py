"""Vercel AI SDK 4 ``Message[]`` (``{id, role, content, parts?, toolInvocations?}``), as AI SDK 4 apps store them.

A tool call and its result share one ``ToolInvocation`` (``{state, toolCallId, toolName, args, result?}``,
``state`` ``partial-call`` → ``call`` → ``result``). From 4.2 an assistant message carries them as
``{"type": "tool-invocation", "toolInvocation": ...}`` parts and, deprecated, in ``toolInvocations`` too;
before, only in ``toolInvocations``. ``convertToCoreMessages`` reads the parts when a message has them, and
refuses the whole history when an invocation there has no ``result`` key ("ToolInvocation must have a
result"), whatever its state. So a result is always in place, orphans cannot exist, and a dangling call is an
invocation without a result.

Repair gives such an invocation the state ``result`` and threadfix's error object as its ``result`` (AI SDK 4
has no error state: a failed tool's result is what the model reads), in the parts and in
``toolInvocations`` alike, so that both copies stay the same.

AI SDK 4 has no approval states (they came with 5), so no call is marked waiting here; ``--leave-tool``
names a tool whose result comes from a person (a ``call`` state left for ``addToolResult``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

import orjson

from threadfix.dialects.base import (
    Dialect,
    Screen,
    Violation,
    absent,
    each_answered_once,
    index_in_place,
    screen_struct,
    str_under,
)
from threadfix.failures import is_threadfix_output
from threadfix.model import Action, Call, Loc, Output, RepairPlan, ThreadIndex

ROLES = frozenset({"system", "user", "assistant", "data"})
PART = "tool-invocation"


def _invocation_of(part: Any) -> dict[str, Any] | None:
    if isinstance(part, dict) and part.get("type") == PART and isinstance(part.get("toolInvocation"), dict):
        return part["toolInvocation"]
    return None


def _uses_parts(message: dict[str, Any]) -> bool:
    """``convertToCoreMessages`` (4.2 on) reads a message's parts whenever it has them (even none), and then
    never its ``toolInvocations``."""
    return message.get("parts") is not None


def invocations(message: Any) -> list[tuple[int, dict[str, Any]]]:
    """The tool invocations the SDK reads from a message, each with its index in the list it comes from (the
    parts, else ``toolInvocations``)."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    if _uses_parts(message):
        parts = message["parts"] if isinstance(message["parts"], list) else []
        found = [(p, _invocation_of(part)) for p, part in enumerate(parts)]
        return [(p, invocation) for p, invocation in found if invocation is not None]
    listed = message.get("toolInvocations")
    if not isinstance(listed, list):
        return []
    return [(i, invocation) for i, invocation in enumerate(listed) if isinstance(invocation, dict)]


def _has_tools(message: dict[str, Any]) -> bool:
    parts = message.get("parts")
    return isinstance(message.get("toolInvocations"), list) or (
        isinstance(parts, list) and any(_invocation_of(part) is not None for part in parts))


def _role(message: Any) -> str | None:
    return str_under(message, "role")


def _read_invocation(invocation: dict[str, Any], at: Loc) -> tuple[Call, Output | None]:
    """An invocation's call, and its output once it has a ``result`` (the only thing that answers it)."""
    call_id = str_under(invocation, "toolCallId")
    call = Call(call_id=call_id, name=str_under(invocation, "toolName") or "unknown", wire_type=PART, at=at,
                arguments=invocation.get("args"),
                # the SDK was still streaming the call's arguments when the turn ended
                truncated=invocation.get("state") == "partial-call")
    if "result" not in invocation:
        return call, None
    result = invocation["result"]
    return call, Output(call_id=call_id, wire_type=PART, at=at, content=result, status=str_under(invocation, "state"),
                        by_threadfix=is_threadfix_output(result))


class AISDK4(Dialect):
    name = "ai-sdk-4"
    title = "Vercel AI SDK 4 Message[] (tool invocations)"

    def sniff(self, items: Sequence[Any]) -> int:
        """Certain once a message carries tool invocations; messages without any are left to other dialects."""
        tools = False
        for message in items[:200]:
            if _role(message) not in ROLES:
                return 0
            parts = message.get("parts")
            if parts is not None and not (isinstance(parts, list) and all(isinstance(p, dict) for p in parts)):
                return 0
            tools = tools or _has_tools(message)
        return 100 if tools else 0

    def quick_healthy(self, items: Sequence[Any]) -> bool:
        """Every invocation the SDK reads has a result and an id no other invocation uses."""
        return each_answered_once((invocation.get("toolCallId"), "result" in invocation)
                                  for message in items for _, invocation in invocations(message))

    def index(self, items: Sequence[Any]) -> ThreadIndex:
        return index_in_place(items, _role, invocations, _read_invocation)

    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        return output.at == call.at

    def screen(self) -> Screen:
        return _screen()

    def check(self, items: Sequence[Any]) -> list[Violation]:
        """``convertToCoreMessages``: every invocation it reads needs a ``result`` (the first one missing ends
        the conversion; each is reported here)."""
        return [Violation("missing-tool-result", m, "ToolInvocation must have a result: "
                          + orjson.dumps(invocation).decode(), str_under(invocation, "toolCallId"))
                for m, message in enumerate(items) for _, invocation in invocations(message)
                if "result" not in invocation]

    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        """Each answered invocation replaced by a copy with its result, in the parts and in ``toolInvocations``;
        every other message kept as is."""
        answers: dict[int, dict[int, dict[str, Any]]] = {}
        for edit in plan.edits:
            if edit.action is not Action.INSERT_OUTPUT or edit.call is None:
                # index() never reports a result away from its own invocation: nothing can be moved or dropped
                raise ValueError(f"ai-sdk-4 threads cannot take a {edit.action.value} edit")
            m, p = edit.call.at
            answers.setdefault(m, {})[p] = {"state": "result", "result": edit.payload}
        result: list[Any] = []
        for m, message in enumerate(items):
            if m in answers:
                message = _answered(message, answers[m])
            result.append(message)
        return result


def _answered(message: dict[str, Any], answers: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """A copy of ``message`` whose invocations at these indexes (and the same calls' other copy) carry results."""
    copy = dict(message)
    listed = message.get("toolInvocations")
    if _uses_parts(message):
        copy["parts"] = [{**part, "toolInvocation": {**part["toolInvocation"], **answers[p]}} if p in answers else part
                         for p, part in enumerate(message["parts"])]
        by_id = {invocation.get("toolCallId"): answers[p] for p, invocation in invocations(message) if p in answers}

        def update(i: int, invocation: dict[str, Any]) -> dict[str, Any]:
            """The deprecated copy of a call the parts answer (matched by its string id; one already holding a
            result is left as it is)."""
            call_id = invocation.get("toolCallId")
            return by_id.get(call_id, {}) if isinstance(call_id, str) and "result" not in invocation else {}
    else:
        def update(i: int, invocation: dict[str, Any]) -> dict[str, Any]:
            return answers.get(i, {})  # (the only copy before 4.2: the indexes are its own)
    if isinstance(listed, list):
        copy["toolInvocations"] = [{**invocation, **update(i, invocation)} if isinstance(invocation, dict) else invocation
                                   for i, invocation in enumerate(listed)]
    return copy


@cache
def _screen() -> Screen:
    """Messages of an AI SDK 4 role, with text ``content`` if any, parts that all carry a string ``type`` and no
    ``toolCallId`` of their own (so no AI SDK 5 tool part), and no key another dialect sniffs by (``type``,
    ``kind``, ``tool_calls``). :meth:`AISDK4.sniff` is sure of such a thread once a message among its first 200
    lists ``toolInvocations`` or holds a ``tool-invocation`` part, and no dialect before it can be.

    A thread needs nothing when every invocation the SDK reads (an assistant's parts when it has them, else its
    ``toolInvocations``) has a ``result`` and a string id, not blank, that no other invocation uses."""
    from msgspec import UNSET, Raw, UnsetType

    invocation = screen_struct("ScreenAISDK4Invocation", [("toolCallId", Any, UNSET), ("result", Raw | UnsetType, UNSET)])
    part = screen_struct("ScreenAISDK4Part", [
        ("type", str),
        ("toolInvocation", invocation | UnsetType, UNSET),
        *absent("toolCallId"),
    ])
    message = screen_struct("ScreenAISDK4Message", [
        ("role", Literal[tuple(ROLES)]),
        ("content", str | UnsetType, UNSET),
        ("parts", list[part] | None | UnsetType, UNSET),
        ("toolInvocations", list[invocation] | None | UnsetType, UNSET),
        *absent("type", "kind", "tool_calls"),
    ])

    def tools(m: Any) -> bool:
        return m.toolInvocations.__class__ is list or (
            bool(m.parts) and any(p.type == PART and p.toolInvocation is not UNSET for p in m.parts))

    def read(m: Any) -> Any:
        if m.role != "assistant":
            return ()
        if m.parts is not None and m.parts is not UNSET:
            return [p.toolInvocation for p in m.parts if p.type == PART and p.toolInvocation is not UNSET]
        return m.toolInvocations or ()

    def settles(items: list[Any]) -> bool | None:
        if not any(map(tools, items[:200])):
            return None
        found = [(i.toolCallId, i.result is not UNSET) for m in items for i in read(m)]
        return each_answered_once(found)  # (which refuses a blank id, as the planner does)

    return Screen(message, settles)
