"""Vercel AI SDK ``UIMessage[]`` (``{id, role, parts}``, AI SDK 5 and later), as ``useChat`` apps store them.

A tool part (``type: "tool-<name>"``, or ``"dynamic-tool"`` with ``toolName``) carries the call *and* its
output in one part, with a ``state``: ``input-streaming`` → ``input-available`` → (``approval-requested`` →
``approval-responded``) → ``output-available`` / ``output-error`` / ``output-denied``. So an output is always
in place and orphans cannot exist; a dangling call is a part that never reached an output state.

``convertToModelMessages`` and ``streamText`` refuse a history where a user or system message (or the
end) follows a client tool call without a result (``AI_MissingToolResultsError``); an
``input-streaming`` part is silently dropped instead, so the model never learns it was called. Repair
moves the part to the state the SDK's own validator (``validateUIMessages``) accepts for a failure:
``output-error`` with ``errorText``, or ``output-denied`` for a call still awaiting approval (its
``approval`` kept, with ``approved: false``). Provider-executed parts are answered by the provider.
An ``approval-responded`` part whose approval ends the model messages is pending: ``streamText`` runs (or
denies) it on the next request.

An ``approval-requested`` part in the last step of a thread that ends on its assistant message waits on a
person (the app shows the approve/deny buttons and resumes with ``addToolApprovalResponse``): the SDK reads
that step the same way (``packages/ai/src/ui/last-assistant-message-is-complete-with-approval-responses.ts``:
the last message, its parts after the last ``step-start``). Such a call is marked waiting; once a user
message follows, the approval will not come and it is denied as above.

Layout: parts are not reordered (no ``move_text``): they are the UI's record of a turn, which
``convertToModelMessages`` turns into model messages step by step; what order a provider package then sends
is the SDK's, not the stored thread's.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

import orjson
from msgspec import Struct
from msgspec.structs import replace

from threadfix.dialects.base import (
    Dialect,
    Screen,
    Violation,
    absent,
    each_answered_once,
    index_in_place,
    list_under,
    screen_struct,
    str_under,
)
from threadfix.failures import is_threadfix_output
from threadfix.model import Action, Call, Edit, Loc, Output, RepairPlan, ThreadIndex

ROLES = frozenset({"system", "user", "assistant"})
OUTPUT_STATES = frozenset({"output-available", "output-error", "output-denied"})
_DANGLING = frozenset({"input-streaming", "input-available", "approval-requested"})
STATES = frozenset({*_DANGLING, "approval-responded", *OUTPUT_STATES})
#: the non-tool parts of a UIMessage (``data-*`` parts aside)
_UI_PARTS = frozenset({"text", "reasoning", "file", "source-url", "source-document", "step-start"})


def is_tool_part(part: Any) -> bool:
    """A v5+ tool part (AI SDK 4's ``tool-invocation`` parts nest their fields and are not read)."""
    if not isinstance(part, dict) or not isinstance(part.get("type"), str):
        return False
    kind = part["type"]
    return (kind == "dynamic-tool" or kind.startswith("tool-")) and "toolCallId" in part and isinstance(part.get("state"), str)


def tool_name(part: dict[str, Any]) -> str:
    if part["type"] == "dynamic-tool":
        return part["toolName"] if isinstance(part.get("toolName"), str) else "unknown"
    return part["type"].removeprefix("tool-")


def _parts(message: Any) -> list[Any]:
    return list_under(message, "parts")


def _role(message: Any) -> str | None:
    return str_under(message, "role")


def _call_id(part: dict[str, Any]) -> str | None:
    return str_under(part, "toolCallId")


def _client_tool_parts(message: Any) -> list[tuple[int, dict[str, Any]]]:
    return [(p, part) for p, part in enumerate(_parts(message)) if is_tool_part(part) and part.get("providerExecuted") is not True]


class ModelMessage(Struct, frozen=True):
    """What ``convertToModelMessages`` makes of a UI message's step, as far as tool calls go."""

    role: str
    #: the UI message it came from
    source: int
    #: client tool calls the model message carries (assistant) or answers (tool)
    call_ids: tuple[Any, ...] = ()
    #: tool parts whose approval response it carries (tool)
    approvals: tuple[tuple[int, int], ...] = ()


def _steps(message: Any) -> list[list[tuple[int, Any]]]:
    steps: list[list[tuple[int, Any]]] = [[]]
    for p, part in enumerate(_parts(message)):
        if isinstance(part, dict) and part.get("type") == "step-start":
            steps.append([])
        else:
            steps[-1].append((p, part))
    return steps


def _approved(part: dict[str, Any]) -> bool:
    approval = part.get("approval")
    return isinstance(approval, dict) and approval.get("approved") is not None


def model_messages(items: Sequence[Any], *, settled: bool = False) -> list[ModelMessage]:
    """The model messages of a UI thread (``convertToModelMessages``): per step an assistant message if
    the step has content, then a tool message if it answers or approves tool calls.

    ``settled``: as repair leaves the thread, every client part short of an approval answered.
    """
    def state(part: dict[str, Any]) -> Any:
        unsettled = settled and part.get("providerExecuted") is not True and part["state"] in _DANGLING
        return "output-error" if unsettled else part["state"]

    result: list[ModelMessage] = []
    for m, message in enumerate(items):
        role = _role(message)
        if role in ("user", "system"):
            result.append(ModelMessage(role, m))
        if role != "assistant":
            continue
        for step in _steps(message):
            tools = [(p, part) for p, part in step if is_tool_part(part)]
            content = [part for _, part in step if isinstance(part, dict) and (
                part.get("type") in ("text", "reasoning", "file") or (is_tool_part(part) and state(part) != "input-streaming"))]
            if content:
                result.append(ModelMessage("assistant", m, tuple(
                    _call_id(part) for part in content if is_tool_part(part) and part.get("providerExecuted") is not True)))
            client = [(p, part) for p, part in tools if part.get("providerExecuted") is not True]
            answered = tuple(_call_id(part) for _, part in client if state(part) in OUTPUT_STATES)
            approvals = tuple((m, p) for p, part in tools if _approved(part))
            if answered or approvals:
                result.append(ModelMessage("tool", m, answered, approvals))
    return result


def final_approvals(items: Sequence[Any], *, settled: bool = False) -> set[tuple[int, int]]:
    """Approved or denied parts ``streamText`` runs or denies itself: those of a final tool message."""
    messages = model_messages(items, settled=settled)
    return set(messages[-1].approvals) if messages and messages[-1].role == "tool" else set()


def _read_part(part: dict[str, Any], at: Loc) -> tuple[Call, Output | None]:
    """A client tool part's call, and its output once its state is an output state."""
    state = part.get("state")
    call_id = _call_id(part)
    call = Call(call_id=call_id, name=tool_name(part), wire_type=part["type"], at=at,
                arguments=part.get("input", part.get("rawInput")),
                # the SDK was still streaming the call's input when the turn ended
                truncated=state == "input-streaming")
    if state not in OUTPUT_STATES:
        return call, None
    content = _output_content(part)
    return call, Output(call_id=call_id, wire_type=part["type"], at=at, content=content,
                        is_error=state != "output-available", status=state, by_threadfix=is_threadfix_output(content))


def _output_content(part: dict[str, Any]) -> Any:
    state = part.get("state")
    if state == "output-available":
        return part.get("output")
    if state == "output-error":
        return part.get("errorText")
    approval = part.get("approval")
    return approval.get("reason") if isinstance(approval, dict) else None


class AISDK(Dialect):
    name = "ai-sdk"
    title = "Vercel AI SDK UIMessage[]"

    def sniff(self, items: Sequence[Any]) -> int:
        score = 0
        for message in items[:200]:
            if _role(message) not in ROLES or not isinstance(message.get("parts"), list):
                return 0
            for part in message["parts"]:
                kind = part.get("type") if isinstance(part, dict) else None
                if not isinstance(kind, str):
                    return 0
                if is_tool_part(part):
                    score = 100
                elif kind not in _UI_PARTS and not kind.startswith("data-"):
                    return 0
            score = max(score, 60)
        return score

    def quick_healthy(self, items: Sequence[Any]) -> bool:
        """Every client tool part has an output state and an id no other part uses."""
        return each_answered_once((_call_id(part), part["state"] in OUTPUT_STATES)
                                  for message in items for _, part in _client_tool_parts(message))

    def index(self, items: Sequence[Any]) -> ThreadIndex:
        index = index_in_place(items, _role, _client_tool_parts, _read_part)
        last = len(items) - 1
        if last < 0 or _role(items[last]) != "assistant":
            return index
        parts = _parts(items[last])
        step = max((p for p, part in enumerate(parts) if isinstance(part, dict) and part.get("type") == "step-start"),
                   default=-1)
        waiting = {(last, p) for p, part in enumerate(parts)
                   if p > step and isinstance(part, dict) and part.get("state") == "approval-requested"}
        if not waiting:
            return index
        return replace(index, calls=tuple(replace(c, waiting=True) if c.at in waiting else c for c in index.calls))

    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        return output.at == call.at

    def screen(self) -> Screen:
        return _screen()

    def is_pending(self, index: ThreadIndex, call: Call, items: Sequence[Any]) -> bool:
        m, p = call.at
        if _parts(items[m])[p].get("state") != "approval-responded":
            return False
        # judged on the thread as repair leaves it: answering a later part can make an approval non-final
        return call.at in final_approvals(items, settled=True)

    def check(self, items: Sequence[Any]) -> list[Violation]:
        violations = [v for m, message in enumerate(items) for v in _validate(m, message)]
        # convertToLanguageModelPrompt: calls still open when a user or system message (or the end) comes
        waiting: dict[Any, None] = {}
        messages = model_messages(items)
        for message in messages:
            if message.role == "assistant":
                waiting.update(dict.fromkeys(message.call_ids))
            elif message.role == "tool":
                for call_id in message.call_ids:
                    waiting.pop(call_id, None)
            elif waiting:
                violations.append(_missing(message.source, waiting))
                waiting = {}
        final = final_approvals(items)
        for m, p in final:  # streamText runs or denies these before it builds the prompt
            waiting.pop(_call_id(_parts(items[m])[p]), None)
        if waiting:
            violations.append(_missing(len(items), waiting))
        return sorted(violations, key=lambda v: v.at)

    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        """Each answered call's part replaced by an updated copy; every other part and message kept as is."""
        updates: dict[int, dict[int, Any]] = {}
        for edit in plan.edits:
            if edit.action is not Action.INSERT_OUTPUT:
                # index() never reports an output away from its own part, so nothing can be moved or dropped
                raise ValueError(f"ai-sdk threads cannot take a {edit.action.value} edit")
            m, p = edit.call.at
            updates.setdefault(m, {})[p] = _answered(_parts(items[m])[p], edit)
        result: list[Any] = []
        for m, message in enumerate(items):
            if m not in updates:
                result.append(message)
                continue
            copy = dict(message)
            copy["parts"] = [updates[m].get(p, part) for p, part in enumerate(message["parts"])]
            result.append(copy)
        return result


def _answered(part: dict[str, Any], edit: Edit) -> dict[str, Any]:
    """The part in the failure state the SDK's validator accepts for its current state."""
    text = orjson.dumps(edit.payload).decode()
    updated = {k: v for k, v in part.items() if k not in ("output", "errorText", "preliminary")}
    approval = part.get("approval") if isinstance(part.get("approval"), dict) else None
    if approval is not None and (part.get("state") == "approval-requested" or approval.get("approved") is False):
        # a call never approved cannot have run: it is denied, and the reason is what the model reads (a
        # user's own reason for a denial is kept: it is what the SDK itself would have sent)
        updated["state"] = "output-denied"
        updated["approval"] = {**approval, "approved": False, "reason": approval.get("reason") or text}
    else:
        updated["state"] = "output-error"
        updated["errorText"] = text
    return updated


def _missing(at: int, waiting: dict[Any, None]) -> Violation:
    ids = [str(i) for i in waiting]
    several = len(ids) > 1
    return Violation("missing-tool-results", at, f"Tool result{'s are' if several else ' is'} missing for tool "
                     f"call{'s' if several else ''} {', '.join(ids)}.", ids[0])


def _validate(m: int, message: Any) -> list[Violation]:
    """What ``validateUIMessages`` refuses in a message's tool parts (AI SDK 6 schema, paraphrased)."""
    def bad(p: int, what: str) -> Violation:
        return Violation("invalid-ui-message", m, f"Type validation failed: messages[{m}].parts[{p}]: {what}")

    if _role(message) not in ROLES or not isinstance(message.get("parts"), list):
        return [Violation("invalid-ui-message", m, f"Type validation failed: messages[{m}]: expected a UIMessage")]
    found: list[Violation] = []
    if message["role"] != "assistant" and not message["parts"]:
        found.append(Violation("invalid-ui-message", m, f"Type validation failed: messages[{m}].parts: Message must "
                               "contain at least one part"))
    for p, part in enumerate(message["parts"]):
        if not is_tool_part(part):
            continue
        state = part["state"]
        if not isinstance(part["toolCallId"], str) or state not in STATES:
            found.append(bad(p, "toolCallId must be a string and state one of the tool part states"))
            continue
        needs = {"output-available": ("input", "output"), "output-error": ("errorText",), "input-streaming": ()}
        for key in needs.get(state, ("input",)):
            if key not in part or (key == "errorText" and not isinstance(part[key], str)):
                found.append(bad(p, f"a tool part in state {state} needs {key}"))
        for key in ("output", "errorText"):
            if key in part and key not in needs.get(state, ()):
                found.append(bad(p, f"a tool part in state {state} cannot have {key}"))
        wants = {"approval-requested": "requested", "approval-responded": "responded", "output-denied": "denied",
                 "output-available": "granted", "output-error": "granted"}.get(state)
        if "approval" in part and (wants is None or not _approval_ok(part["approval"], wants)):
            found.append(bad(p, f"a tool part in state {state} cannot carry this approval"))
        elif "approval" not in part and wants in ("requested", "responded", "denied"):
            found.append(bad(p, f"a tool part in state {state} needs an approval"))
    return found


def _approval_ok(approval: Any, wants: str) -> bool:
    if not isinstance(approval, dict) or not isinstance(approval.get("id"), str):
        return False
    approved = approval.get("approved")
    if wants == "requested":
        return "approved" not in approval and "reason" not in approval
    if "reason" in approval and not isinstance(approval["reason"], str):
        return False
    return {"responded": isinstance(approved, bool), "denied": approved is False}.get(wants, approved is True)


@cache
def _screen() -> Screen:
    """UI messages of a v5 role whose parts all carry a string ``type``, with no key another dialect sniffs by
    (``type``, ``content``: OpenAI Responses gives content parts 80; ``kind``, ``tool_calls``,
    ``toolInvocations``). :meth:`AISDK.sniff` gives such a thread 100 once a tool part stands among its first
    200 messages, every other part there being a UI or ``data-`` part (60 without one), which no other dialect
    reaches on it.

    A thread needs nothing when every client tool part is in an output state with a string id, not blank, that
    no other part uses (:meth:`AISDK.quick_healthy`): the output is the part itself, so it is always in place,
    and a call that is answered neither waits nor is pending."""
    from msgspec import UNSET, UnsetType

    part = screen_struct("ScreenAISDKPart", [
        ("type", str),
        ("toolCallId", Any, UNSET),
        ("state", Any, UNSET),
        ("providerExecuted", Any, UNSET),
    ])
    message = screen_struct("ScreenAISDKMessage", [
        ("role", Literal[tuple(ROLES)]),
        ("parts", list[part]),
        *absent("type", "content", "kind", "tool_calls", "toolInvocations"),
    ])

    def settles(items: list[Any]) -> bool | None:
        # one pass, each part's kind told once (issue #28): a tool part (a client one's id and whether it is in an
        # output state kept), else, among the first 200 messages, a UI or data- part, or not this dialect's thread
        if not items:
            return None
        ids: list[tuple[Any, bool]] = []
        for n, m in enumerate(items):
            for p in m.parts:
                kind = p.type
                if kind in _UI_PARTS:
                    continue  # (most parts: text, reasoning, step-start; no tool part's type is one of them)
                if (kind == "dynamic-tool" or kind.startswith("tool-")) and p.toolCallId is not UNSET and \
                        p.state.__class__ is str:
                    if p.providerExecuted is not True:
                        ids.append((p.toolCallId, p.state in OUTPUT_STATES))
                elif n < 200 and not kind.startswith("data-"):
                    return None
        return each_answered_once(ids)  # (which refuses a blank id, as the planner does)

    return Screen(message, settles)
