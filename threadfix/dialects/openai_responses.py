"""OpenAI Responses API ``input`` items.

Pairing is by ``call_id`` anywhere in the list (not adjacency): every client-executed call needs an
output item with its ``call_id``, and every output needs its call. A synthetic output goes right after
its call, and carries no ``id`` (a sent ``id`` must start with ``fc``; see wire-rules).

Layout: the API pairs by ``call_id`` and takes a message item after a call of the same response, so no
``move_text`` is needed. Waiting calls: openai-agents keeps a run's pending approvals in its ``RunState``
(``_current_step.interruptions``, read by ``_pending_approval_call_ids`` in
``agents/run_internal/session_persistence.py``), not in the session's items, so a stored session that
stopped for an approval reads as one that ends on its calls (``--leave-tool`` names the tool). A hosted
MCP ``mcp_approval_request`` is the server's, answered by ``mcp_approval_response``, not a client call.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import compress, repeat
from operator import itemgetter
from typing import Any, Union

import orjson

from threadfix.dialects.base import (Dialect, Screen, Violation, apply_flat, blank_id, orphan_text, screen_struct,
                                     usable_ids)
from threadfix.failures import MARKER, is_threadfix_output
from threadfix.model import Call, Edit, Output, RepairPlan, ThreadIndex

#: client-executed call type -> the output types that answer it (the first is the one we write)
CALL_OUTPUTS: dict[str, tuple[str, ...]] = {
    "function_call": ("function_call_output",),
    "custom_tool_call": ("custom_tool_call_output",),
    # openai/codex answers local shell calls with function_call_output; the API also has its own type
    "local_shell_call": ("function_call_output", "local_shell_call_output"),
    "shell_call": ("shell_call_output",),
    "apply_patch_call": ("apply_patch_call_output",),
    "computer_call": ("computer_call_output",),
    "tool_search_call": ("tool_search_output",),
}
#: what every text threadfix wrote holds (the first test of is_threadfix_output)
_MARKER_END = f'"{MARKER}"'
OUTPUT_TYPES = frozenset(t for types in CALL_OUTPUTS.values() for t in types)
#: what the provider says when a call of this type has no output
_CALL_WORDS = {
    "function_call": "function call",
    "custom_tool_call": "custom tool call",
    "local_shell_call": "local shell call",
    "shell_call": "shell call",
    "apply_patch_call": "apply patch call",
    "computer_call": "computer call",
    "tool_search_call": "tool search call",
}
_OUTPUT_WORDS = {
    "function_call_output": "function call output",
    "custom_tool_call_output": "custom tool call output",
    "local_shell_call_output": "local shell call output",
    "shell_call_output": "shell call output",
    "apply_patch_call_output": "apply patch call output",
    "computer_call_output": "computer call output",
    "tool_search_output": "tool search output",
}
_RESPONSES_ONLY = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output",
     "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call",
     "apply_patch_call_output", "computer_call", "computer_call_output", "tool_search_call",
     "tool_search_output", "web_search_call", "file_search_call", "code_interpreter_call",
     "image_generation_call", "mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
     "item_reference"}
)
_PAIRING = frozenset(CALL_OUTPUTS) | OUTPUT_TYPES
#: item types that neither call a tool nor answer one: nothing about them can need repair
PLAIN_TYPES = _RESPONSES_ONLY - _PAIRING
_PART_TYPES = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})


def _is_client_call(item: dict[str, Any]) -> bool:
    kind = item.get("type")
    if kind not in CALL_OUTPUTS:
        return False
    # a server-executed tool search carries its own results
    return not (kind == "tool_search_call" and item.get("execution") == "server")


def _call_name(item: dict[str, Any]) -> str:
    name = item.get("name")
    if isinstance(name, str):
        return name
    return item.get("type", "call").removesuffix("_call") or "call"


class OpenAIResponses(Dialect):
    name = "openai-responses"
    title = "OpenAI Responses API input items"

    def sniff(self, items: Sequence[Any]) -> int:
        score = 0
        for item in items[:200]:
            if not isinstance(item, dict):
                return 0
            kind = item.get("type")
            if kind in _RESPONSES_ONLY:
                return 100
            content = item.get("content")
            if isinstance(content, list):
                # (a loop, not any() over a generator: this runs on every part of every thread of every format, as
                # the first dialect sniffed)
                for part in content:
                    if isinstance(part, dict) and part.get("type") in _PART_TYPES:
                        score = 80
                        break
        return score

    def index(self, items: Sequence[Any]) -> ThreadIndex:
        # the hot loop of every scan: one type dispatch per item, most frequent kinds first (issue 7)
        calls: list[Call] = []
        outputs: list[Output] = []
        users: list[int] = []
        models: list[int] = []
        call_types, output_types = CALL_OUTPUTS, OUTPUT_TYPES
        previous: Any = None  # the kind of the item before, None when it was not an object
        # quick_accepted on the way, on what the loop reads anyway: each call's id opened once, each output's
        # closing an open call it answers; anything rarer (a server-side tool, an id that is not a string, a
        # computer call, an item that is not an object) is left to that check (accepted False)
        opened: dict[str, str] = {}
        answered: set[str] = set()
        usual = True
        marker = _MARKER_END
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                previous = None
                usual = False
                continue
            get = item.get
            kind = get("type")
            before, previous = previous, kind
            if kind == "message" or kind is None:
                role = get("role")
                if role == "user":
                    users.append(i)
                elif role == "assistant":
                    models.append(i)
            elif kind == "reasoning":
                models.append(i)
            elif kind in call_types:
                # a server-executed tool search carries its own results
                if kind != "tool_search_call" or get("execution") != "server":
                    call_id = get("call_id")
                    name = get("name")
                    # (a blank id is one the planner refuses: not the common shape quick_accepted vouches for)
                    if (call_id.__class__ is str and call_id not in opened and kind != "computer_call"
                            and call_id.strip()):
                        opened[call_id] = kind
                    else:
                        usual = False
                    # positional: the fields' order in model.Call (faster to build than by keyword)
                    calls.append(Call(
                        call_id if isinstance(call_id, str) else None,
                        name if isinstance(name, str) else kind.removesuffix("_call") or "call",
                        kind,
                        (i, -1),
                        # custom tools take free text, not JSON: only JSON arguments can be malformed
                        get("arguments") if kind == "function_call" or kind == "tool_search_call" else None,
                        get("status") == "incomplete",
                        False,
                        kind == "computer_call",
                    ))
                else:
                    usual = False
                if before not in call_types:
                    models.append(i)  # a new batch of calls is a new model turn; parallel siblings are not
            elif kind in output_types:
                if kind == "tool_search_output" and get("execution") == "server":
                    usual = False
                    continue
                content = get("output", get("tools"))
                status = get("status")
                call_id = get("call_id")  # _output_call_id, inline: the loop's most frequent kind
                if call_id.__class__ is not str:
                    call_id = _output_call_id(item)
                if call_id not in answered and kind in CALL_OUTPUTS.get(opened.get(call_id), ()):  # type: ignore[arg-type]
                    answered.add(call_id)  # type: ignore[arg-type]
                else:
                    usual = False
                outputs.append(Output(
                    call_id, kind, (i, -1), content, None, status if isinstance(status, str) else None,
                    # most outputs are text without threadfix's marker: is_threadfix_output's first test, inline
                    marker in content and is_threadfix_output(content) if content.__class__ is str
                    else is_threadfix_output(content),
                ))
        accepted = usual and len(answered) == len(opened) and _unique_ids(items)
        return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items), bool(accepted))

    def quick_healthy(self, items: Sequence[Any]) -> bool:
        return _quick(items, unique_ids=False)

    def quick_accepted(self, items: Sequence[Any]) -> bool:
        return _quick(items, unique_ids=True)  # the provider also refuses duplicate item ids

    def screen(self) -> Screen:
        return _screen()


    def answers(self, call: Call, output: Output) -> bool:
        return output.wire_type in CALL_OUTPUTS[call.wire_type]

    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        # Pairing is by call_id anywhere; we still require the output to come after its call, since
        # the provider's behaviour for an output placed before its call is not established.
        return output.at[0] > call.at[0]

    def check(self, items: Sequence[Any]) -> list[Violation]:
        violations: list[Violation] = []
        calls: dict[str, str] = {}
        answered: set[str] = set()
        ids: set[str] = set()
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            item_id = item.get("id")
            if isinstance(item_id, str):
                if item_id in ids:
                    violations.append(Violation("duplicate-item", i, f"Duplicate item found with id {item_id}. "
                                                "Remove duplicate items from your input and try again."))
                ids.add(item_id)
            kind = item.get("type")
            if kind in CALL_OUTPUTS and _is_client_call(item) and isinstance(item.get("call_id"), str):
                calls[item["call_id"]] = kind
            elif kind in OUTPUT_TYPES and not (kind == "tool_search_output" and item.get("execution") == "server"):
                call_id = _output_call_id(item)
                if call_id not in calls or kind not in CALL_OUTPUTS[calls[call_id]]:
                    violations.append(Violation("orphan-output", i, f"No tool call found for {_OUTPUT_WORDS[kind]} "
                                                f"with call_id {call_id}.", call_id))
                else:
                    answered.add(call_id)
        for call_id, kind in calls.items():
            if call_id not in answered:
                where = next(i for i, it in enumerate(items) if isinstance(it, dict) and it.get("call_id") == call_id)
                violations.append(Violation("missing-output", where,
                                            f"No tool output found for {_CALL_WORDS[kind]} {call_id}.", call_id))
        return sorted(violations, key=lambda v: v.at)

    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        return apply_flat(items, plan, anchor=lambda call: call.at[0], build=_build_output, convert=_convert)


def _quick(items: Sequence[Any], unique_ids: bool) -> bool:
    """Every client call answered once, after it, by an output of its type; optionally no repeated item id."""
    open_calls: dict[Any, str] = {}
    answered: set[Any] = set()
    ids: set[Any] = set()
    pairing = _PAIRING
    try:
        for item in items:
            if unique_ids and (item_id := item.get("id")) is not None:
                if item_id in ids:
                    return False
                ids.add(item_id)
            kind = item.get("type")
            if kind not in pairing:
                continue
            if kind in CALL_OUTPUTS:
                call_id = item.get("call_id")
                if kind == "computer_call" or call_id is None or call_id in open_calls or blank_id(call_id):
                    return False
                if kind != "tool_search_call" or item.get("execution") != "server":
                    open_calls[call_id] = kind
            elif kind != "tool_search_output" or item.get("execution") != "server":
                call_id = item.get("call_id") if kind != "local_shell_call_output" else _output_call_id(item)
                if call_id in answered or kind not in CALL_OUTPUTS.get(open_calls.get(call_id), ()):
                    return False
                answered.add(call_id)
    except (AttributeError, TypeError):  # not an object, or an unhashable id: let the index say what it is
        return False
    return len(answered) == len(open_calls)


def _unique_ids(items: Sequence[dict[str, Any]]) -> bool:
    """No item ``id`` twice (the provider refuses a repeated one), in C-level passes over objects' ids."""
    ids = list(map(dict.get, items, repeat("id")))
    present = len(ids) - ids.count(None)
    try:
        unique = set(ids)
    except TypeError:  # an id that is not a JSON scalar: quick_accepted decides
        return False
    unique.discard(None)
    return len(unique) == present


def _output_call_id(item: dict[str, Any]) -> str | None:
    """The call an output answers; ``local_shell_call_output`` names it in ``id``."""
    call_id = item.get("call_id")
    if call_id is None and item.get("type") == "local_shell_call_output":
        call_id = item.get("id")
    return _str_or_none(call_id)


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _build_output(edit: Edit) -> dict[str, Any]:
    """An output in the exact shape of the call's own output type."""
    call = edit.call
    text = orjson.dumps(edit.payload).decode()
    kind = call.wire_type
    if kind == "shell_call":
        return {"type": "shell_call_output", "call_id": call.call_id,
                "output": [{"stdout": "", "stderr": text, "outcome": {"type": "exit", "exit_code": 1}}]}
    if kind == "apply_patch_call":
        return {"type": "apply_patch_call_output", "call_id": call.call_id, "status": "failed", "output": text}
    if kind == "tool_search_call":
        # the wire has no place for words here; an empty result is what the provider accepts
        return {"type": "tool_search_output", "call_id": call.call_id, "execution": "client",
                "status": "completed", "tools": []}
    return {"type": CALL_OUTPUTS[kind][0], "call_id": call.call_id, "output": text}


def _convert(edit: Edit, item: Any) -> dict[str, Any]:
    """An orphan or duplicate output becomes a user message that keeps its text and names its call."""
    duplicate = edit.action.value.endswith("duplicate")
    parts: list[Any] = [{"type": "input_text", "text": orphan_text(edit.output, duplicate)}]
    return {"type": "message", "role": "user", "content": parts}


# --------------------------------------------------------------------------- the screen

#: the only call and output types a settled thread may hold
CALL, OUTPUT = "function_call", "function_call_output"
#: how a screened item codes its type: a function call, its output
IS_CALL, IS_OUTPUT = 0, 1
#: the first byte of an id that SQLite's ``->>`` gave as JSON text (an object or an array, not a string)
_FIRST_BYTE = itemgetter(0)
_NOT_STRING_IDS = frozenset(b"{[")
#: what most ids start with (a byte of bytes, a character of str): an id led by one is not blank
_PLAIN_LEADS = frozenset(b"_-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") | frozenset(
    "_-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def plain_types() -> tuple[str, ...]:
    """The item types that are neither calls nor outputs, in a fixed order."""
    return tuple(sorted(PLAIN_TYPES))


def answered_in_turn(codes: Sequence[Any], call_ids: Sequence[Any]) -> bool:
    """The most common healthy thread, cheaply: each call answered right after it (call, output, call, output),
    no id twice, every id a string. False says nothing: :func:`pairs_settle` decides."""
    calls = call_ids[0::2]
    return (calls == call_ids[1::2] and codes.count(IS_CALL) == len(calls) and all(codes[1::2])
            and len(set(calls)) == len(calls) and _ids_are_strings(calls))


def pairs_settle(codes: Sequence[Any], call_ids: Sequence[Any]) -> bool:
    """Whether a thread whose calls and outputs are ``codes`` and ``call_ids`` (in thread order) is healthy:
    only function calls and their outputs, string ids, each call answered once, after it, and no id used twice.
    Ids are str (a typed decode) or bytes (SQLite's JSON text of the value).

    What ``quick_healthy`` decides over those items, in C-level operations: its per-item loop would cost
    more than the rest of the screen.
    """
    pairs = len(call_ids) // 2
    if None in codes or 2 * pairs != len(call_ids) or sum(codes) != pairs:
        return False  # an item that could not be vouched for, or another type; or not as many outputs as calls
    first = dict(zip(call_ids[::-1], codes[::-1]))  # each id's first code (read backwards, it is written last)
    # as many ids as calls, each first called, no output id twice: each id called once, then answered once
    return (len(first) == pairs and IS_OUTPUT not in first.values() and len(set(compress(call_ids, codes))) == pairs
            and _ids_are_strings(first))


def _ids_are_strings(call_ids: Any) -> bool:
    """Every id came from a JSON string, none blank (the planner refuses a blank id): str, or bytes (SQLite's
    value of the string) that are not an object's or an array's JSON text."""
    try:
        leads = set(map(_FIRST_BYTE, call_ids))
    except (TypeError, IndexError):
        return False  # an id that is not a string (or an empty one: left to a full read)
    if _NOT_STRING_IDS & leads:
        return False
    return leads <= _PLAIN_LEADS or not any(map(_blank_value, call_ids))


def _blank_value(call_id: str | bytes) -> bool:
    """A blank id as str.strip (Unicode whitespace) sees it; bytes that are not UTF-8 count as blank (read in full)."""
    try:
        return not (call_id.decode() if isinstance(call_id, bytes) else call_id).strip()
    except UnicodeDecodeError:
        return True


@cache
def _screen() -> Screen:
    """Items are a union tagged by ``type``: one class per plain type, with no fields (msgspec skips everything in
    them), and one each for function calls and outputs, with a required string ``call_id``. An item of any other
    type, without a type, or with a repeated ``type`` key fails to decode: a full read decides it. A settled
    thread's first item is of a Responses type, so :meth:`OpenAIResponses.sniff` is sure of it, first of all."""
    def tagged(name: str, tag: str, fields: list[Any], code: int | None) -> type:
        return screen_struct(name, fields, tag_field="type", tag=tag, namespace={"code": code})

    call = tagged("SettleCall", CALL, [("call_id", str)], IS_CALL)
    output = tagged("SettleOutput", OUTPUT, [("call_id", str)], IS_OUTPUT)
    plain = [tagged(f"SettlePlain{i}", kind, [], None) for i, kind in enumerate(plain_types())]
    item = Union[tuple([call, output, *plain])]  # noqa: UP007 - a union of classes made at run time
    paired = frozenset((call, output))

    def settles(items: list[Any]) -> bool | None:
        if not items:
            return None  # no item names the dialect
        calls_and_outputs = [item for item in items if item.__class__ in paired]
        codes = tuple([item.code for item in calls_and_outputs])
        call_ids = tuple([item.call_id for item in calls_and_outputs])
        # (a blank id is refused by the planner, though quick_healthy lets it by)
        return (answered_in_turn(codes, call_ids) or pairs_settle(codes, call_ids)) and usable_ids(call_ids)

    return Screen(item, settles)
