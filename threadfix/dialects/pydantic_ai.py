"""Pydantic AI message histories: the JSON of ``ModelMessagesTypeAdapter``.

A history is a list of ``{"kind": "request" | "response", "parts": [...]}``; parts name themselves with
``part_kind``. A ``tool-call`` part of a response is answered by a ``tool-return`` part (or a legacy
``retry-prompt`` part bound to a tool) in the request right after it. Pydantic AI merges consecutive
requests into one before sending, so the answer may sit in any request of the run that follows the
response; a result further away reaches the provider after other turns and is refused there.

A synthetic answer is what Pydantic AI itself synthesises for an interrupted call (its
``_repair_dangling_tool_calls``): a ``tool-return`` with ``outcome: "interrupted"``, the timestamp of
the response being repaired (never the clock), and ``pydantic_ai_synthesized_tool_return`` in its
``metadata`` (next to threadfix's marker), so the library and its UIs treat it as a placeholder. Its
``content`` is threadfix's payload object. It goes into the next request after the results already
there and before user-facing parts, or into a new request when another response or nothing follows.
Native (``builtin-tool-*``) parts are answered inside their own response by the provider and are left
alone, as Pydantic AI leaves them. An orphan becomes a ``user-prompt`` part that keeps its text.

The open calls of the last response wait on a person or another process when nothing after it says the run
was cut off: that is how a run that ended in ``DeferredToolRequests`` (calls that need approval, or run
elsewhere) is stored — its response's calls, then at most a request with the results of the calls that did
run, all ``state: "complete"``. Pydantic AI leaves such a tail alone for the same reason
(``_repair_interrupted_tail`` in ``pydantic_ai/_agent_graph.py``: "its response's open calls may still receive
``deferred_tool_results``") and answers it only when the response or a request after it is
``state: "interrupted"``, or a new user prompt follows; so does threadfix.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from msgspec.structs import replace

from threadfix.dialects.base import (
    Dialect,
    Screen,
    Slot,
    Violation,
    apply_blocks,
    lay_out,
    orphan_text,
    absent,
    screen_struct,
    str_or_none,
    text_after_calls,
    usable_ids,
)
from threadfix.failures import MARKER, MARKER_KEY, ArgumentsState, is_threadfix_output, read_arguments
from threadfix.model import Call, Edit, Output, RepairPlan, ThreadIndex

#: Pydantic AI's own mark on the tool returns it synthesises (``SYNTHESIZED_TOOL_RETURN_METADATA_KEY``)
SYNTHESIZED_KEY = "pydantic_ai_synthesized_tool_return"
#: the ``outcome`` Pydantic AI gives a call that never produced a result
INTERRUPTED = "interrupted"
#: outcomes that reach the model as an error (Pydantic AI's ``ERROR_OUTCOMES``)
_ERROR_OUTCOMES = frozenset({"failed", "retried"})


def parts(message: Any) -> list[Any]:
    if isinstance(message, dict) and isinstance(message.get("parts"), list):
        return message["parts"]
    return []


def _kind(message: Any) -> Any:
    return message.get("kind") if isinstance(message, dict) else None


def _part_kind(part: Any) -> str | None:
    """A part's kind; None when it is not a string (a hostile one may be a dict, which no set or dict can hold)."""
    return str_or_none(part.get("part_kind")) if isinstance(part, dict) else None


def is_result(part: Any) -> bool:
    """A part that answers a tool call: a ``tool-return``, or a ``retry-prompt`` bound to a tool."""
    kind = _part_kind(part)
    return kind == "tool-return" or (kind == "retry-prompt" and isinstance(part.get("tool_name"), str))


def _is_user_facing(part: Any) -> bool:
    """Parts the model reads as the next turn's input; tool results must come before them."""
    kind = _part_kind(part)
    return kind in ("user-prompt", "retry-feedback") or (kind == "retry-prompt" and not is_result(part))


def _arguments(args: Any) -> Any:
    """``args`` as stored: a dict, a JSON string, or the early ``{"args_json": ...}`` / ``{"args_dict": ...}``."""
    if isinstance(args, dict) and len(args) == 1:
        for key in ("args_json", "args_dict"):
            if key in args:
                return args[key]
    return args


def next_requests(items: Sequence[Any], response: int) -> range:
    """The run of requests right after message ``response`` (Pydantic AI sends them as one)."""
    end = response + 1
    while end < len(items) and _kind(items[end]) == "request":
        end += 1
    return range(response + 1, end)


class PydanticAI(Dialect):
    name = "pydantic-ai"
    title = "Pydantic AI message history (ModelMessagesTypeAdapter JSON)"

    def sniff(self, items: Sequence[Any]) -> int:
        for message in items[:200]:
            if _kind(message) not in ("request", "response") or not isinstance(message.get("parts"), list):
                return 0
            if any(not isinstance(_part_kind(part), str) for part in message["parts"]):
                return 0
        return 100 if items else 0

    def index(self, items: Sequence[Any]) -> ThreadIndex:
        calls: list[Call] = []
        outputs: list[Output] = []
        users: list[int] = []
        models: list[int] = []
        for m, message in enumerate(items):
            kind = _kind(message)
            if kind == "response":
                models.append(m)
                cut_off = message.get("finish_reason") == "length"
                interrupted = message.get("state") == "interrupted"
                for b, part in enumerate(parts(message)):
                    if _part_kind(part) != "tool-call":
                        continue
                    arguments = _arguments(part.get("args"))
                    malformed = read_arguments(arguments).state is ArgumentsState.MALFORMED
                    calls.append(Call(
                        call_id=str_or_none(part.get("tool_call_id")),
                        name=str_or_none(part.get("tool_name")) or "unknown",
                        wire_type="tool-call",
                        at=(m, b),
                        arguments=arguments,
                        # a stream cut off mid-call leaves unparsable arguments on an interrupted response
                        truncated=cut_off or (interrupted and malformed),
                    ))
            elif kind == "request":
                if any(_part_kind(part) == "user-prompt" for part in parts(message)):
                    users.append(m)
                for b, part in enumerate(parts(message)):
                    if not is_result(part):
                        continue
                    # "success" is the default outcome, whatever the tool returned: no verdict, so the
                    # output reads as Chat's would; the others name what happened
                    outcome = "retried" if _part_kind(part) == "retry-prompt" else str_or_none(part.get("outcome"))
                    status = None if outcome == "success" else outcome
                    metadata = part.get("metadata")
                    marked = isinstance(metadata, dict) and metadata.get(MARKER_KEY) == MARKER
                    outputs.append(Output(
                        call_id=str_or_none(part.get("tool_call_id")),
                        wire_type=_part_kind(part),
                        at=(m, b),
                        content=part.get("content"),
                        is_error=True if status in _ERROR_OUTCOMES else None,
                        status=status,
                        by_threadfix=marked or is_threadfix_output(part.get("content")),
                    ))
        if models and _deferred_tail(items, models[-1]):
            calls = [replace(c, waiting=True) if c.at[0] == models[-1] else c for c in calls]
        return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items))

    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        return output.at[0] in next_requests(items, call.at[0])

    def screen(self) -> Screen:
        return _screen()

    def check(self, items: Sequence[Any]) -> list[Violation]:
        violations: list[Violation] = []
        checked: set[int] = set()
        for m, message in enumerate(items):
            if _kind(message) != "response":
                continue
            call_ids = [str_or_none(part.get("tool_call_id")) for part in parts(message) if _part_kind(part) == "tool-call"]
            repeated = sorted({str(c) for c in call_ids if call_ids.count(c) > 1})
            if repeated:
                violations.append(Violation("duplicate-tool-call-id", m,
                                            f"messages[{m}]: tool call ids must be unique: {', '.join(repeated)}",
                                            repeated[0]))
            kinds = [_part_kind(part) for part in parts(message)]
            if "tool-call" in kinds and "text" in kinds[max(b for b, k in enumerate(kinds) if k == "tool-call"):]:
                violations.append(Violation("tool-call-not-last", m,
                                            f"messages[{m}]: text after a tool call part, which Anthropic refuses: "
                                            "`tool_use` blocks must end the assistant turn"))
            seen: set[Any] = set()
            for r in next_requests(items, m):
                checked.add(r)
                for part in filter(is_result, parts(items[r])):
                    call_id = str_or_none(part.get("tool_call_id"))
                    if call_id not in call_ids:
                        violations.append(_unexpected(r, call_id))
                    elif call_id in seen:
                        violations.append(Violation(
                            "duplicate-tool-result", r,
                            f"messages[{r}]: tool call {call_id} has more than one result", call_id))
                    seen.add(call_id)
            missing = [str(c) for c in call_ids if c not in seen]
            if not missing:
                continue
            if m == len(items) - 1:
                text = ("Cannot provide a new user prompt when the message history contains unprocessed tool calls: "
                        f"{', '.join(missing)}")
            else:
                text = (f"messages[{m}]: tool calls without a tool-return or retry-prompt part in the next request: "
                        f"{', '.join(missing)}")
            violations.append(Violation("tool-call-without-result", m, text, missing[0]))
        for r, message in enumerate(items):
            if _kind(message) == "request" and r not in checked:
                violations.extend(_unexpected(r, str_or_none(part.get("tool_call_id"))) for part in filter(is_result, parts(message)))
        return sorted(violations, key=lambda v: v.at)

    def layout_edits(self, index: ThreadIndex, items: Sequence[Any]) -> list[Edit]:
        """Text after a response's tool calls (a stream cancelled after a call, then text) is moved ahead of them:
        Pydantic AI sends a response's parts in order, and Anthropic (directly or on Bedrock) refuses text after
        ``tool_use`` ("`tool_use` blocks must end the assistant turn"); every other provider takes text first.
        As in the anthropic dialect, only a response of text and tool-call parts: thinking stays as written."""
        return text_after_calls(items, blocks_of=_response_parts, kind_of=_part_kind, call_kind="tool-call",
                                reorderable=_REORDERABLE,
                                label=lambda part: (str_or_none(part.get("tool_call_id")), str_or_none(part.get("tool_name"))))

    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        items, plan = lay_out(items, plan, content_key="parts", kind_of=_part_kind, call_kind="tool-call")

        def slot(call: Call) -> Slot:
            following = call.at[0] + 1
            if following < len(items) and _kind(items[following]) == "request" and isinstance(items[following].get("parts"), list):
                return Slot("into", following)
            return Slot("before", following)

        def build(edit: Edit) -> dict[str, Any]:
            call = edit.call
            response = items[call.at[0]]
            part: dict[str, Any] = {"tool_name": call.name, "content": edit.payload, "tool_call_id": call.call_id}
            tool_kind = parts(response)[call.at[1]].get("tool_kind")
            if isinstance(tool_kind, str):
                part["tool_kind"] = tool_kind
            part["metadata"] = {SYNTHESIZED_KEY: True, MARKER_KEY: MARKER}
            if isinstance(response.get("timestamp"), str):
                part["timestamp"] = response["timestamp"]
            part["outcome"] = INTERRUPTED
            part["part_kind"] = "tool-return"
            return part

        def convert(edit: Edit, part: Any) -> dict[str, Any]:
            text = orphan_text(edit.output, edit.action.value.endswith("duplicate"))
            converted: dict[str, Any] = {"content": text}
            if isinstance(part.get("timestamp"), str):
                converted["timestamp"] = part["timestamp"]
            converted["part_kind"] = "user-prompt"
            return converted

        return apply_blocks(items, plan, content_key="parts", slot=slot, build=build, convert=convert,
                            is_result=lambda part: not _is_user_facing(part), new_message=_new_request)


#: a response of only these parts can have its text moved ahead of its tool calls
_REORDERABLE = frozenset({"text", "tool-call"})


def _response_parts(message: Any) -> list[Any] | None:
    return parts(message) if _kind(message) == "response" else None


def _deferred_tail(items: Sequence[Any], response: int) -> bool:
    """Whether the last response's open calls may still be answered by deferred results: neither it nor a request
    after it is ``state: "interrupted"``, it was not cut off at the token limit (its calls are cut short), and no
    request after it carries a new user prompt."""
    if items[response].get("finish_reason") == "length":
        return False
    for message in items[response:]:
        if message.get("state") == "interrupted":
            return False
        if message is not items[response] and any(_part_kind(part) == "user-prompt" for part in parts(message)):
            return False
    return True


def _new_request(new_parts: list[Any]) -> dict[str, Any]:
    """A request holding only answers; it takes the time of the first (the repaired response's time)."""
    request: dict[str, Any] = {"parts": new_parts}
    stamp = new_parts[0].get("timestamp") if new_parts and isinstance(new_parts[0], dict) else None
    if isinstance(stamp, str):
        request["timestamp"] = stamp
    request["kind"] = "request"
    return request


def _unexpected(at: int, call_id: Any) -> Violation:
    return Violation("tool-result-without-call", at,
                     f"messages[{at}]: tool result {call_id} answers no tool call of the response right before it",
                     call_id)


@cache
def _screen() -> Screen:
    """Messages of kind request or response whose parts all carry a string ``part_kind``, with no ``type`` or
    ``role`` (which OpenAI Responses, Anthropic and Chat sniff by, and LangChain reads): :meth:`PydanticAI.sniff`
    is sure of them and no dialect before it can be.

    A tool-call part has a string ``tool_call_id``, used by no other call and not blank; each is answered once,
    by a result (a tool-return, or a retry-prompt naming a tool) in the run of requests right after its
    response, and no result answers anything else. No text part follows a response's tool calls (the layout
    repair mends). A call that is answered never waits, so a deferred tail cannot be in question."""
    from msgspec import UNSET, UnsetType

    part = screen_struct("ScreenPydanticPart", [
        ("part_kind", str),
        ("tool_call_id", str | None | UnsetType, UNSET),
        ("tool_name", str | None | UnsetType, UNSET),
    ])
    message = screen_struct("ScreenPydanticMessage", [
        ("kind", Literal["request", "response"]),
        ("parts", list[part]),
        *absent("type", "role"),
    ])

    def settles(items: list[Any]) -> bool | None:
        if not items:
            return None
        open_calls: set[Any] = set()  # the calls of the response before this run of requests, not yet answered
        called: list[str] = []
        for m in items:
            if m.kind == "response":
                if open_calls:
                    return False
                after_call = False
                for p in m.parts:
                    kind = p.part_kind
                    if kind == "tool-call":
                        if p.tool_call_id.__class__ is not str:
                            return False
                        open_calls.add(p.tool_call_id)
                        called.append(p.tool_call_id)
                        after_call = True
                    elif kind == "text" and after_call:
                        return False  # text after the response's calls
                continue
            for p in m.parts:
                kind = p.part_kind
                if kind == "tool-return" or (kind == "retry-prompt" and p.tool_name.__class__ is str):
                    if p.tool_call_id not in open_calls:
                        return False  # an orphan, a second result, or one out of its place
                    open_calls.discard(p.tool_call_id)
        return not open_calls and len(set(called)) == len(called) and usable_ids(called)

    return Screen(message, settles)
