"""Amazon Bedrock Converse ``messages`` (``{role, content: [ContentBlock]}``).

Roles alternate strictly (no merging, unlike Anthropic) and the first message is the user's. Every
``toolUse`` of an assistant message needs a ``toolResult`` with its ``toolUseId`` in the *next* message,
and that message may hold no more results than the turn had calls. So a synthetic result is merged into
the next user message, never sent as a second user message; when an assistant message follows the call
directly, a new user message between them restores alternation. Results go in the leading run of that
message: Claude models on Bedrock add Anthropic's "tool results first" rule, and every model accepts it
(``check`` reports that rule in the words of the Anthropic dialect, behind Bedrock's prefix for model
errors; the other messages are Bedrock's own, verbatim).

When a move empties a user message, the assistant messages it separated are joined (alternation again).
A ``toolUse`` of ``type: "server_tool_use"`` is Bedrock's own: answered in the same turn, never invented.

Text after an assistant message's ``toolUse`` blocks is moved ahead of them (``move_text``), as in the
anthropic dialect: Claude models on Bedrock refuse it ("The model returned the following errors: ...
`tool_use` blocks must end the assistant turn"), and every other model takes text first; a message with
``reasoningContent`` is left (reasoning must be replayed as written). A ``toolUse`` in a user message is
kept as text where it stood (``convert_call``): Bedrock takes ``toolUse`` from the assistant only.

A synthetic result uses the wire's error channel, ``status: "error"``, which requires non-empty
``content``. ``status`` is only supported by Amazon Nova and Anthropic Claude models, so a thread whose
results never carry one gets none; the content is a ``json`` block when the thread's results use them,
else a ``text`` block (every model reads text).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import pairwise
from typing import Any, Literal

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
    join_clashing,
    lay_out,
    list_under,
    orphan_text,
    absent,
    screen_struct,
    str_under,
    text_after_calls,
    usable_ids,
)
from threadfix.failures import is_threadfix_output
from threadfix.model import Call, Edit, Output, RepairPlan, ThreadIndex

#: ContentBlock members (botocore ``bedrock-runtime`` service model)
_BLOCK_KEYS = frozenset({
    "text", "image", "document", "video", "audio", "toolUse", "toolResult", "guardContent", "cachePoint",
    "reasoningContent", "citationsContent", "searchResult", "toolAddition", "toolRemoval",
})
_USER_INPUT = frozenset({"text", "image", "document", "video", "audio"})
_TRUNCATING = frozenset({"max_tokens", "model_context_window_exceeded"})
ROLES = frozenset({"user", "assistant", "system"})

SAY_START = "A conversation must start with a user message. Try again with a conversation that starts with a user message."
SAY_ALTERNATE = ("A conversation must alternate between user and assistant roles. Make sure the conversation "
                 "alternates between user and assistant roles and try again.")


def blocks(message: Any) -> list[Any]:
    return list_under(message, "content")


def role(message: Any) -> str | None:
    return str_under(message, "role")


def tool_use(block: Any) -> dict[str, Any] | None:
    value = block.get("toolUse") if isinstance(block, dict) else None
    return value if isinstance(value, dict) else None


def tool_result(block: Any) -> dict[str, Any] | None:
    value = block.get("toolResult") if isinstance(block, dict) else None
    return value if isinstance(value, dict) else None


def _id(value: dict[str, Any]) -> str | None:
    return str_under(value, "toolUseId")


def _is_server(use: dict[str, Any]) -> bool:
    return use.get("type") == "server_tool_use"


def leading_results(message: Any) -> int:
    """How many blocks at the start of ``message`` are toolResults."""
    run = 0
    for block in blocks(message):
        if tool_result(block) is None:
            break
        run += 1
    return run


def _result_is_threadfix(result: dict[str, Any]) -> bool:
    content = result.get("content")
    if not isinstance(content, list):
        return is_threadfix_output(content)
    return any(is_threadfix_output(b.get("json", b.get("text"))) for b in content[:4] if isinstance(b, dict))


def _is_empty(content: Any) -> bool:
    """No content, or only blank text: what Bedrock refuses next to ``status: "error"``."""
    if not isinstance(content, list) or not content:
        return True
    return all(isinstance(b, dict) and set(b) == {"text"} and not str(b["text"]).strip() for b in content)


class Bedrock(Dialect):
    name = "bedrock"
    title = "Amazon Bedrock Converse messages"

    def sniff(self, items: Sequence[Any]) -> int:
        score = 0
        for message in items[:200]:
            if not isinstance(message, dict) or role(message) not in ROLES or not isinstance(message.get("content"), list):
                return 0
            for block in message["content"]:
                # a ContentBlock is a union: exactly one member, and never a "type" key (Anthropic has one)
                if not isinstance(block, dict) or len(block) != 1 or not set(block) <= _BLOCK_KEYS:
                    return 0
                if tool_use(block) is not None or tool_result(block) is not None:
                    score = 100
            score = max(score, 50)
        return score

    def quick_healthy(self, items: Sequence[Any]) -> bool:
        """Each assistant's toolUse ids answered exactly by the leading toolResults of the next (user)
        message, no other toolResult anywhere, no server tool, no id used twice."""
        expected: list[Any] = []
        seen: set[Any] = set()
        for message in items:
            content = blocks(message)
            uses = [tool_use(b) for b in content if tool_use(b) is not None]
            lead = leading_results(message)
            answers = [_id(tool_result(b)) for b in content[:lead]]
            if lead != sum(tool_result(b) is not None for b in content):
                return False  # a result after other blocks
            if uses and _laid_out_badly(message):
                return False  # see layout_edits
            if role(message) == "assistant":
                ids = [_id(u) for u in uses]
                if expected or answers or None in ids or seen.intersection(ids) or len(set(ids)) != len(ids) \
                        or any(map(blank_id, ids)) \
                        or any(_is_server(u) for u in uses):
                    return False
                seen.update(ids)
                expected = ids
            elif uses or sorted(answers, key=str) != sorted(expected, key=str) or (answers and role(message) != "user"):
                return False
            else:
                expected = []
        return not expected

    def index(self, items: Sequence[Any]) -> ThreadIndex:
        calls: list[Call] = []
        outputs: list[Output] = []
        users: list[int] = []
        models: list[int] = []
        for m, message in enumerate(items):
            who = role(message)
            content = blocks(message)
            if who == "assistant":
                models.append(m)
            elif who == "user" and any(set(b) & _USER_INPUT for b in content if isinstance(b, dict)):
                users.append(m)
            reason = message.get("stopReason") if isinstance(message, dict) else None
            truncated = isinstance(reason, str) and reason in _TRUNCATING
            for b, block in enumerate(content):
                if who == "assistant" and (use := tool_use(block)) is not None:
                    server = _is_server(use)
                    calls.append(Call(
                        call_id=_id(use), name=use["name"] if isinstance(use.get("name"), str) else "unknown",
                        wire_type="toolUse", at=(m, b), arguments=use.get("input"),
                        truncated=truncated and b == len(content) - 1,
                        # a server tool's result comes from Bedrock in the same turn; none can be invented
                        server=server, unanswerable=server,
                    ))
                elif (result := tool_result(block)) is not None:
                    status = result.get("status") if isinstance(result.get("status"), str) else None
                    outputs.append(Output(
                        call_id=_id(result), wire_type="toolResult", at=(m, b), content=result.get("content"),
                        is_error=None if status is None else status == "error", status=status,
                        by_threadfix=_result_is_threadfix(result),
                    ))
        return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items))

    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        m, b = output.at
        if call.server:
            return m == call.at[0] and b > call.at[1]
        return m == call.at[0] + 1 and role(items[m]) == "user" and b < leading_results(items[m])

    def screen(self) -> Screen:
        return _screen()

    def is_pending(self, index: ThreadIndex, call: Call, items: Sequence[Any]) -> bool:
        return call.server and not any(m > call.at[0] for m in (*index.user_turns, *index.model_turns))

    def layout_edits(self, index: ThreadIndex, items: Sequence[Any]) -> list[Edit]:
        label = lambda block: (_id(tool_use(block) or {}), str_under(tool_use(block), "name"))  # noqa: E731
        return [*text_after_calls(items, blocks_of=lambda m: blocks(m) if role(m) == "assistant" else None,
                                  kind_of=_block_kind, call_kind="toolUse", reorderable=_REORDERABLE, label=label),
                *calls_in_user_turns(items, user_blocks=lambda m: blocks(m) if role(m) == "user" else None,
                                     call_of=lambda block: label(block) if tool_use(block) is not None else None)]

    def check(self, items: Sequence[Any]) -> list[Violation]:
        violations: list[Violation] = []
        turns = [(m, role(message)) for m, message in enumerate(items) if role(message) != "system"]
        if turns and turns[0][1] != "user":
            violations.append(Violation("first-not-user", turns[0][0], SAY_START))
        for (_, before), (m, now) in pairwise(turns):
            if before == now:
                violations.append(Violation("roles-not-alternating", m, SAY_ALTERNATE))
        for m, message in enumerate(items):
            kinds = [_block_kind(b) for b in blocks(message)]
            if role(message) == "assistant" and _text_after_calls(kinds):
                violations.append(Violation("claude-tool-use-not-last", m, "The model returned the following errors: "
                                            f"messages.{m}: `tool_use` blocks must end the assistant turn"))
            if role(message) == "user" and "toolUse" in kinds:
                violations.append(Violation("tool-use-in-user-message", m, f"messages.{m}.content.{kinds.index('toolUse')}: "
                                            "toolUse blocks may only appear in assistant messages"))
            if role(message) == "assistant":
                ids = [_id(u) for b in blocks(message) if (u := tool_use(b)) is not None and not _is_server(u)]
                duplicates = sorted({str(i) for i in ids if ids.count(i) > 1})
                if duplicates:
                    violations.append(Violation("duplicate-tool-use-ids", m, f"The toolUse blocks at messages.{m}.content "
                                                f"contain duplicate Ids: {', '.join(duplicates)}", duplicates[0]))
                following = items[m + 1] if m + 1 < len(items) else None
                answered = {_id(r) for b in blocks(following) if (r := tool_result(b)) is not None} if role(following) == "user" else set()
                missing = [str(i) for i in dict.fromkeys(ids) if i not in answered]
                if missing:
                    violations.append(Violation("missing-tool-results", m + 1, f"Expected toolResult blocks at "
                                                f"messages.{m + 1}.content for the following Ids: {', '.join(missing)}",
                                                missing[0]))
            elif role(message) == "user":
                results = [(b, r) for b, block in enumerate(blocks(message)) if (r := tool_result(block)) is not None]
                previous = items[m - 1] if m > 0 and role(items[m - 1]) == "assistant" else None
                uses = sum(1 for b in blocks(previous) if (u := tool_use(b)) is not None and not _is_server(u))
                if len(results) > uses:
                    violations.append(Violation("too-many-tool-results", m, f"The number of toolResult blocks at "
                                                f"messages.{m}.content exceeds the number of toolUse blocks of previous "
                                                "turn.", _id(results[0][1])))
                lead = leading_results(message)
                for b, result in results:
                    if b >= lead and previous is not None:
                        violations.append(Violation("claude-tool-result-not-first", m, f"The model returned the following "
                                                    f"errors: messages.{m}.content.{b}: tool_result blocks must come first "
                                                    "in the user message, before any other content", _id(result)))
                    if result.get("status") == "error" and _is_empty(result.get("content")):
                        violations.append(Violation("empty-error-result", m, f"The content field at messages.{m}."
                                                    f"content.{b}.toolResult cannot be empty when status value is "
                                                    "error.", _id(result)))
        return sorted(violations, key=lambda v: v.at)

    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        results = [r for message in items for b in blocks(message) if (r := tool_result(b)) is not None]
        use_json = any(isinstance(r.get("content"), list) and any(isinstance(c, dict) and "json" in c for c in r["content"])
                       for r in results)
        use_status = not results or any("status" in r for r in results)

        def slot(call: Call) -> Slot:
            following = call.at[0] + 1
            if following < len(items) and role(items[following]) == "user" and isinstance(items[following].get("content"), list):
                return Slot("into", following)
            return Slot("before", following)

        def build(edit: Edit) -> dict[str, Any]:
            content = {"json": edit.payload} if use_json else {"text": orjson.dumps(edit.payload).decode()}
            result: dict[str, Any] = {"toolUseId": edit.call.call_id, "content": [content]}
            if use_status:
                result["status"] = "error"
            return {"toolResult": result}

        items, plan = lay_out(items, plan, content_key="content", kind_of=_block_kind, call_kind="toolUse",
                              as_text=lambda block: {"text": call_text(_id(block["toolUse"]), str_under(block["toolUse"], "name"),
                                                                       block["toolUse"].get("input"))})
        repaired = apply_blocks(
            items, plan, content_key="content", slot=slot, build=build, convert=_convert,
            is_result=lambda block: tool_result(block) is not None,
            new_message=lambda content: {"role": "user", "content": content}, blocks_of=blocks,
        )
        return join_clashing(items, repaired, role_of=role, roles=frozenset({"user", "assistant"}), content_key="content")


#: an assistant message of only these blocks can have its text moved ahead of its calls
_REORDERABLE = frozenset({"text", "toolUse"})


def _text_after_calls(kinds: list[str | None]) -> bool:
    return "toolUse" in kinds and "text" in kinds[len(kinds) - kinds[::-1].index("toolUse"):]


def _laid_out_badly(message: Any) -> bool:
    """Text after an assistant message's calls, or a call in a user message (see ``layout_edits``)."""
    kinds = [_block_kind(b) for b in blocks(message)]
    return _text_after_calls(kinds) if role(message) == "assistant" else "toolUse" in kinds


def _block_kind(block: Any) -> str | None:
    """A ContentBlock's member (its one key)."""
    return next(iter(block), None) if isinstance(block, dict) and len(block) == 1 else None


def _convert(edit: Edit, block: Any) -> dict[str, Any]:
    return {"text": orphan_text(edit.output, edit.action.value.endswith("duplicate"))}


@cache
def _screen() -> Screen:
    """Messages of a Converse role whose content is a list of ContentBlocks, each exactly one member (a toolUse
    with a string ``toolUseId``, a toolResult with one, any other member skipped), and no key another dialect
    sniffs by (``type``, ``parts``, ``kind``, ``tool_calls``, ``toolInvocations``). :meth:`Bedrock.sniff` gives
    such a thread 50 or 100, which no other dialect reaches on it (Anthropic and Chat refuse a block without a
    ``type``).

    Health is :meth:`Bedrock.quick_healthy`'s, with no id blank: each assistant's toolUse ids, ending its text,
    answered exactly by the leading toolResults of the next message, a user one, and no other toolResult."""
    from msgspec import UNSET, Raw, UnsetType
    from msgspec.structs import astuple

    use = screen_struct("ScreenBedrockToolUse", [("toolUseId", str), ("type", Any, UNSET)])
    result = screen_struct("ScreenBedrockToolResult", [("toolUseId", str)])
    members = sorted(_BLOCK_KEYS)
    block = screen_struct("ScreenBedrockBlock", [
        (key, (use if key == "toolUse" else result if key == "toolResult" else Raw) | UnsetType, UNSET)
        for key in members], forbid_unknown_fields=True)
    message = screen_struct("ScreenBedrockMessage", [
        ("role", Literal[tuple(ROLES)]),
        ("content", list[block]),
        *absent("type", "parts", "kind", "tool_calls", "toolInvocations"),
    ])
    others = len(members) - 1

    def settles(items: list[Any]) -> bool | None:
        if not items or any(astuple(b).count(UNSET) != others for m in items for b in m.content):
            return None  # no message, or a block of no member or of two
        expected: list[str] = []
        seen: list[str] = []
        for m in items:
            content = m.content
            if len(content) == 1 and content[0].text is not UNSET:  # (most messages: one text block)
                if expected:
                    return False  # a turn's calls not answered by the message after it
                continue
            answers: list[str] = []
            uses: list[Any] = []
            text_after = past_results = False  # text after the message's last toolUse; a block not a toolResult
            for b in content:
                if b.toolResult is not UNSET:
                    if past_results:
                        return False  # a result after other blocks
                    answers.append(b.toolResult.toolUseId)
                    continue
                past_results = True
                if b.toolUse is not UNSET:
                    uses.append(b.toolUse)
                    text_after = False
                elif uses and b.text is not UNSET:
                    text_after = True
            if m.role == "assistant":
                if expected or answers or text_after or (uses and any(u.type == "server_tool_use" for u in uses)):
                    return False
                expected = [u.toolUseId for u in uses]
                seen += expected
            elif uses or (answers != expected and sorted(answers) != sorted(expected)) or (answers and m.role != "user"):
                return False  # a call in a user message; results that are not the turn's calls, each once
            else:
                expected = []
        return not expected and len(set(seen)) == len(seen) and usable_ids(seen)

    return Screen(message, settles)
