"""Google Gemini ``generateContent`` ``contents`` (``{role, parts}``), as the API or google-genai stores them.

A model content with ``functionCall`` parts is a *call turn*. The content right after it must carry as
many ``functionResponse`` parts as the call turn has calls (all responses of parallel calls in that one
content); a response turn must come right after a call turn, and a call turn right after a user or
response turn. ``id`` is optional on both sides, so a response pairs with its call by ``id`` when it has
one, else by order and name among the calls of the call turn before it. An error response is
``{"functionResponse": {"name", "id"?, "response": {"error": {...}}}}`` — the API's own convention
("Use "output" key to specify function output and "error" key to specify error details").

Both spellings are read: the API's camelCase (``functionCall``) and the snake_case google-genai's
``model_dump()`` writes (``function_call``); a synthetic response is written in the spelling of its call,
in the thread's response role (``user``, or ``function`` where the thread uses it). A call without ``id``
is named by its place (``#M.P``). When a move empties a content, the model turns it separated are joined,
since a call turn may not follow a model turn.

Layout: Gemini takes text parts after ``functionCall`` parts in a model turn, and call parts are never
edited (Gemini 3 replays their ``thoughtSignature``), so there is no ``move_text``. A ``functionCall`` part in
a user (or ``function``) content is no call: Gemini takes calls in model turns only, so it is kept as text
where it stood (``convert_call``), as the anthropic and bedrock dialects keep theirs. Waiting calls: Google
ADK marks a long-running call in its own events (``Event.long_running_tool_ids``), which are not part of
``contents``; a ``contents`` list carries no such mark (``--leave-tool`` names the tool).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import chain
from typing import Any, Literal

from msgspec.structs import replace

from threadfix.dialects.base import (
    Dialect,
    blank_id,
    Screen,
    Slot,
    Violation,
    apply_blocks,
    call_text,
    calls_in_user_turns,
    join_clashing,
    lay_out,
    list_under,
    absent,
    orphan_text,
    screen_struct,
    usable_ids,
)
from threadfix.failures import is_threadfix_output
from threadfix.model import Call, Edit, Loc, Output, RepairPlan, ThreadIndex

CALL_KEYS = ("functionCall", "function_call")
RESPONSE_KEYS = ("functionResponse", "function_response")
#: every key a Gemini part may carry, in both spellings (google-genai ``types.Part``)
_PART_KEYS = frozenset({
    "text", "thought", "thoughtSignature", "thought_signature", "inlineData", "inline_data", "fileData", "file_data",
    "functionCall", "function_call", "functionResponse", "function_response", "executableCode", "executable_code",
    "codeExecutionResult", "code_execution_result", "videoMetadata", "video_metadata", "partMetadata",
    "part_metadata", "mediaResolution", "media_resolution", "toolCall", "tool_call", "toolResponse", "tool_response",
})
#: ``function`` is the response role of older Vertex AI and Firebase samples
ROLES = frozenset({"user", "model", "function"})
#: the Part keys most parts hold, most first (the screen's part type lists them first)
_COMMON_PART_KEYS = ("text", "functionCall", "functionResponse", "thoughtSignature", "thought")
_TRUNCATING = frozenset({"MAX_TOKENS"})

SAY_COUNT = ("Please ensure that the number of function response parts is equal to the number of function call "
             "parts of the function call turn.")
SAY_RESPONSE_TURN = "Please ensure that function response turn comes immediately after a function call turn."
SAY_CALL_TURN = ("Please ensure that function call turn comes immediately after a user turn or after a function "
                 "response turn.")
SAY_INVALID = "Request contains an invalid argument."


def parts(content: Any) -> list[Any]:
    return list_under(content, "parts")


def role(content: Any) -> str | None:
    # a content without a role is the user's (single-turn requests omit it)
    value = content.get("role", "user") if isinstance(content, dict) else None
    return value if isinstance(value, str) else None


def _field(part: Any, keys: tuple[str, str]) -> tuple[str, dict[str, Any]] | None:
    if isinstance(part, dict):
        for key in keys:
            if isinstance(part.get(key), dict):
                return key, part[key]
    return None


def call_of(part: Any) -> dict[str, Any] | None:
    found = _field(part, CALL_KEYS)
    return found[1] if found else None


def response_of(part: Any) -> dict[str, Any] | None:
    found = _field(part, RESPONSE_KEYS)
    return found[1] if found else None


def _id(value: dict[str, Any]) -> str | None:
    return value.get("id") if isinstance(value.get("id"), str) and value.get("id") else None


def _name(value: dict[str, Any]) -> str:
    return value["name"] if isinstance(value.get("name"), str) else "unknown"


def is_call_turn(content: Any) -> bool:
    return role(content) == "model" and any(call_of(p) is not None for p in parts(content))


def is_response_turn(content: Any) -> bool:
    return role(content) != "model" and any(response_of(p) is not None for p in parts(content))


def pair(items: Sequence[Any]) -> tuple[dict[Loc, str], dict[Loc, str | None]]:
    """The key of every call part and the key of the call each response part answers (None: none).

    A call's key is its ``id``, or ``#M.P`` (its place) when it has none. A response with an ``id`` answers
    the call with that id wherever it stands (so a misplaced one can be moved); one without pairs, by
    order and name, with the calls of the last call turn before it, from the contents up to the next
    model turn.
    """
    call_keys: dict[Loc, str] = {}
    response_keys: dict[Loc, str | None] = {}
    for m, content in enumerate(items):
        for p, part in enumerate(parts(content)):
            if (call := call_of(part)) is not None and role(content) == "model":
                call_keys[(m, p)] = _id(call) or f"#{m}.{p}"
            elif (response := response_of(part)) is not None:
                response_keys[(m, p)] = _id(response)
    m = 0
    while m < len(items):
        if not is_call_turn(items[m]):
            m += 1
            continue
        turn = [((m, p), call_of(part)) for p, part in enumerate(parts(items[m])) if (m, p) in call_keys]
        end = m + 1
        while end < len(items) and role(items[end]) != "model":
            end += 1
        window = [(m2, p) for m2 in range(m + 1, end) for p, part in enumerate(parts(items[m2]))
                  if response_of(part) is not None]
        named = {response_keys[loc] for loc in window}
        claimed = {_id(call) for _, call in turn if _id(call) in named}
        for loc in window:
            response = response_of(parts(items[loc[0]])[loc[1]])
            if _id(response) is not None:
                continue
            same_name = [(c, call) for c, call in turn if _name(call) == _name(response)]
            free = next((c for c, call in same_name if call_keys[c] not in claimed), None)
            # a second response for a call: keep it paired, so the planner sees a duplicate, not an orphan
            chosen = free if free is not None else (same_name[0][0] if same_name else None)
            if chosen is not None:
                response_keys[loc] = call_keys[chosen]
                claimed.add(call_keys[chosen])
        m = end
    return call_keys, response_keys


def _response_content(response: dict[str, Any]) -> Any:
    """What a response says: the value under the API's ``output`` or ``error`` key, else the whole object."""
    body = response.get("response")
    if isinstance(body, dict) and len(body) == 1 and ("output" in body or "error" in body):
        return next(iter(body.values()))
    return body


def _is_error(response: dict[str, Any]) -> bool | None:
    body = response.get("response")
    if not isinstance(body, dict):
        return None
    if "error" in body:
        return True
    return False if "output" in body else None


class Gemini(Dialect):
    name = "gemini"
    title = "Google Gemini generateContent contents"

    def sniff(self, items: Sequence[Any]) -> int:
        score = 0
        for content in items[:200]:
            if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
                return 0
            if role(content) not in ROLES:
                return 0
            for part in content["parts"]:
                if not isinstance(part, dict) or not part or not set(part) <= _PART_KEYS:
                    return 0
                if call_of(part) is not None or response_of(part) is not None:
                    score = 100
            score = max(score, 70 if content.get("role") == "model" else 50)
        return score

    def quick_healthy(self, items: Sequence[Any]) -> bool:
        """Each call turn followed by a content answering exactly its calls (same ids and names), no other
        response anywhere, and no call id used twice."""
        expected: list[tuple[Any, str]] | None = None
        seen_ids: set[str] = set()
        for content in items:
            found = [(_id(c), _name(c)) for p in parts(content) if (c := call_of(p)) is not None]
            answers = [(_id(r), _name(r)) for p in parts(content) if (r := response_of(p)) is not None]
            ids = [i for i, _ in found if i is not None]
            if seen_ids.intersection(ids) or len(set(ids)) != len(ids) or (found and role(content) != "model") \
                    or any(map(blank_id, ids)):
                return False
            seen_ids.update(ids)
            if role(content) == "model":
                if expected or answers:
                    return False
                expected = found or None
            elif sorted(answers, key=repr) != sorted(expected or [], key=repr):
                return False
            else:
                expected = None
        return expected is None

    def index(self, items: Sequence[Any]) -> ThreadIndex:
        call_keys, response_keys = pair(items)
        calls: list[Call] = []
        outputs: list[Output] = []
        users: list[int] = []
        models: list[int] = []
        for m, content in enumerate(items):
            if not isinstance(content, dict):
                continue
            who = role(content)
            if who == "model":
                models.append(m)
            reason = content.get("finishReason", content.get("finish_reason"))
            truncated = isinstance(reason, str) and reason in _TRUNCATING
            content_parts = parts(content)
            last_call = max((p for p in range(len(content_parts)) if (m, p) in call_keys), default=-1)
            for p, part in enumerate(content_parts):
                if (m, p) in call_keys:
                    call = call_of(part)
                    streaming = call.get("willContinue", call.get("will_continue")) is True
                    calls.append(Call(
                        call_id=call_keys[(m, p)], name=_name(call), wire_type=_field(part, CALL_KEYS)[0], at=(m, p),
                        arguments=call.get("args"), truncated=streaming or (truncated and p == last_call),
                    ))
                elif (m, p) in response_keys:
                    response = response_of(part)
                    body = _response_content(response)
                    outputs.append(Output(
                        call_id=response_keys[(m, p)], wire_type=_field(part, RESPONSE_KEYS)[0], at=(m, p),
                        content=body, is_error=_is_error(response), by_threadfix=is_threadfix_output(body),
                    ))
            if who != "model" and any(call_of(p) is None and response_of(p) is None for p in content_parts):
                users.append(m)
        return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items))

    def screen(self) -> Screen:
        return _screen()

    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        return output.at[0] == call.at[0] + 1 and role(items[output.at[0]]) != "model"

    def layout_edits(self, index: ThreadIndex, items: Sequence[Any]) -> list[Edit]:
        return calls_in_user_turns(items, user_blocks=_user_parts,
                                   call_of=lambda part: (_id(c), _name(c)) if (c := call_of(part)) is not None else None)

    def check(self, items: Sequence[Any]) -> list[Violation]:
        violations: list[Violation] = []
        for m, content in enumerate(items):
            if role(content) != "model" and any(call_of(p) is not None for p in parts(content)):
                # (Gemini's words for it are not on record: its bare 400, as for the other invalid parts)
                violations.append(Violation("call-not-in-model-turn", m, SAY_INVALID))
            if is_call_turn(content):
                calls = [call_of(p) for p in parts(content) if call_of(p) is not None]
                ids = [_id(c) for c in calls if _id(c) is not None]
                if len(ids) != len(set(ids)):
                    violations.append(Violation("duplicate-call-id", m, SAY_INVALID))
                if m == 0 or role(items[m - 1]) == "model":
                    violations.append(Violation("call-turn-misplaced", m, SAY_CALL_TURN))
                following = items[m + 1] if m + 1 < len(items) else None
                answered = 0 if following is None or role(following) == "model" else sum(
                    response_of(p) is not None for p in parts(following))
                if answered != len(calls):
                    violations.append(Violation("response-count", m + 1, SAY_COUNT, _id(calls[0]) or f"#{m}.0"))
            if is_response_turn(content) and (m == 0 or not is_call_turn(items[m - 1])):
                first = next(response_of(p) for p in parts(content) if response_of(p) is not None)
                violations.append(Violation("response-turn-misplaced", m, SAY_RESPONSE_TURN, _id(first)))
        return sorted(violations, key=lambda v: v.at)

    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        response_role = "function" if any(is_response_turn(c) and role(c) == "function" for c in items) else "user"

        def slot(call: Call) -> Slot:
            following = call.at[0] + 1
            if following < len(items) and is_response_turn(items[following]):
                return Slot("into", following)
            return Slot("before", following)

        def build(edit: Edit) -> dict[str, Any]:
            key, call = _field(parts(items[edit.call.at[0]])[edit.call.at[1]], CALL_KEYS)
            response: dict[str, Any] = {"name": _name(call)}
            if _id(call) is not None:
                response["id"] = _id(call)
            # the payload object itself under "error", so it stays structured for the model
            response["response"] = {"error": edit.payload}
            return {RESPONSE_KEYS[CALL_KEYS.index(key)]: response}

        items, plan = lay_out(items, plan, content_key="parts", kind_of=lambda part: None, call_kind="functionCall",
                              as_text=_call_as_text)
        repaired = apply_blocks(
            items, plan, content_key="parts", slot=slot, build=build, convert=_convert,
            is_result=lambda part: response_of(part) is not None,
            new_message=lambda new_parts: {"role": response_role, "parts": new_parts},
            blocks_of=lambda content: parts(content),
        )
        return join_clashing(items, repaired, role_of=role, roles=frozenset({"model"}), content_key="parts")


def _user_parts(content: Any) -> list[Any] | None:
    return parts(content) if role(content) != "model" else None


def _call_as_text(part: Any) -> dict[str, Any]:
    call = call_of(part) or {}
    return {"text": call_text(_id(call), _name(call), call.get("args"))}


def _convert(edit: Edit, part: Any) -> dict[str, Any]:
    output = edit.output
    if output.call_id is None or output.call_id.startswith("#"):
        # without an id, the function's name is what tells the model which call this answered
        output = replace(output, call_id=f"{_name(response_of(part) or {})} (no id)")
    return {"text": orphan_text(output, edit.action.value.endswith("duplicate"))}


@cache
def _screen() -> Screen:
    """Contents of a Gemini role (or none: the user's) whose parts are objects of Part fields only (an unknown
    key fails to decode), none empty, and no key another dialect sniffs by (``type``, ``content``, ``kind``,
    ``tool_calls``, ``toolInvocations``). :meth:`Gemini.sniff` gives such a thread 50 to 100, which no other
    dialect reaches on it once a content among the first 200 has a part or a role other than user.

    Health is :meth:`Gemini.quick_healthy`'s, with every id a string (an empty one is none), not blank, used by
    one call: each call turn (a model content) answered by exactly its calls' ids and names in the very next
    content (a call without an id by a response of its name without one, which the full read pairs by name
    and order), no call outside a model content, no other response anywhere."""
    from msgspec import UNSET, Raw, UnsetType

    named = [("id", str | None | UnsetType, UNSET), ("name", str | UnsetType, UNSET)]
    call = screen_struct("ScreenGeminiCall", named)
    response = screen_struct("ScreenGeminiResponse", named)
    # the keys parts hold most first: comparing a part with the empty one stops at its first key set
    keys = [*_COMMON_PART_KEYS, *sorted(_PART_KEYS - set(_COMMON_PART_KEYS))]
    part = screen_struct("ScreenGeminiPart", [
        (key, (call if key in CALL_KEYS else response if key in RESPONSE_KEYS else Raw) | UnsetType, UNSET)
        for key in keys], forbid_unknown_fields=True)
    content = screen_struct("ScreenGeminiContent", [
        ("parts", list[part]),
        ("role", Literal[tuple(ROLES)] | UnsetType, UNSET),
        *absent("type", "content", "kind", "tool_calls", "toolInvocations"),
    ])
    # a part of no key: a struct equal to this one (a C-level compare that stops at the first key set, where a
    # tuple of every key made for each part cost a third more of the screen: issue #28)
    empty = part()

    def settles(items: list[Any]) -> bool | None:
        # C-level passes over every part, then a step per part that calls or answers, not per content (issue #28)
        contents = [c.parts for c in items]
        if empty in chain.from_iterable(contents) or not any(
                c.parts or c.role != "user" for c in items[:200]):
            return None  # an empty part (the sniff refuses it); or only user contents without parts, which the AI
            # SDK's sniff gives 60
        # one pass over the parts for those that call or answer (a part may do both)
        found = [(m, p) for m, ps in enumerate(contents) for p in ps
                 if p.functionCall is not UNSET or p.functionResponse is not UNSET or p.function_call is not UNSET
                 or p.function_response is not UNSET]
        if not found:
            return True
        turns: dict[int, list[tuple[Any, Any]]] = {}
        answered: dict[int, list[tuple[Any, Any]]] = {}
        seen: list[str] = []
        for m, p in found:
            # (CALL_KEYS and RESPONSE_KEYS, the API's spelling first, as a full read takes them)
            if (v := p.functionCall) is not UNSET or (v := p.function_call) is not UNSET:
                if (called := turns.get(m)) is None:
                    called = turns[m] = []
                called.append((v.id or None, v.name or "unknown"))
                if v.id:
                    seen.append(v.id)
            if (v := p.functionResponse) is not UNSET or (v := p.function_response) is not UNSET:
                if (answers := answered.get(m)) is None:
                    answers = answered[m] = []
                answers.append((v.id or None, v.name or "unknown"))
        # every content with responses is the one after a call turn (no other response anywhere)
        if len(answered) != len(turns) or len(set(seen)) != len(seen) or not usable_ids(seen):
            return False
        last = len(items) - 1
        for m, called in turns.items():
            # a call turn is a model content, answered by exactly its calls in the very next one, not a model's
            if m == last or items[m].role != "model" or items[m + 1].role == "model" or \
                    not _same_pairs(answered.get(m + 1, []), called):
                return False
        return True

    return Screen(content, settles)


def _same_pairs(answers: list[tuple[Any, Any]], calls: list[tuple[Any, Any]]) -> bool:
    """Whether a call turn's (id, name) pairs and its answers' are the same, each as many times: in the same order,
    or as sets of as many distinct pairs, or, when a pair repeats (calls without ids), sorted."""
    if answers == calls:
        return True
    if len(answers) != len(calls):
        return False
    distinct = set(calls)
    if len(distinct) == len(calls):
        return distinct == set(answers)
    return sorted(answers, key=repr) == sorted(calls, key=repr)
