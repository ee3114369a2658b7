"""Repair invariants over generated threads, for every core dialect.

After repair: the provider's rules (each dialect's ``check``) find nothing; every call has exactly one
output; every original non-output item is still there, equal and in order; every original output is
still there or kept (as a message naming its call); and a second run changes nothing.
"""

from __future__ import annotations

import copy

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core import threadgen
from threadfix import dialects
from threadfix.dialects.anthropic import turns
from threadfix.model import Action
from threadfix.repair import RepairOptions, repair_items

DIALECTS = list(threadgen.RENDERERS)


def _flat_items(name: str, items: list) -> list:
    """Every item (flat dialects) or every block with its message role (Anthropic), for comparisons."""
    if name == "anthropic":
        out = []
        for message in items:
            content = message["content"]
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            out.extend((message["role"], orjson.dumps(b, option=orjson.OPT_SORT_KEYS)) for b in blocks)
        return out
    return [orjson.dumps(item, option=orjson.OPT_SORT_KEYS) for item in items]


def _is_output(name: str, entry) -> bool:
    data = entry[1] if name == "anthropic" else entry
    value = orjson.loads(data)
    return value.get("type") in ("function_call_output", "tool_result") or value.get("role") == "tool"


@pytest.mark.parametrize("name", DIALECTS)
@given(conversation=threadgen.conversations())
def test_repair_makes_thread_acceptable_and_loses_nothing(name: str, conversation) -> None:
    items = threadgen.RENDERERS[name](conversation)
    pristine = copy.deepcopy(items)
    dialect = dialects.get(name)
    assert dialects.sniff(items).name == name

    plan, repaired = repair_items(items, dialect)
    assert items == pristine, "repair must never mutate its input"
    if dialect.quick_healthy(items):
        assert repaired is None, "quick_healthy must only say yes when nothing needs repair"
    if dialect.quick_accepted(items):
        assert dialect.quick_healthy(items) and dialect.check(items) == [], "quick_accepted must imply both"
    if repaired is None:
        assert dialect.check(items) == []
        return
    assert dialect.check(repaired) == [], plan

    # exactly one output per call
    index = dialect.index(repaired)
    answered = [o.call_id for o in index.outputs]
    assert sorted(answered) == sorted(c.call_id for c in index.calls)

    # every original non-output item is still there, equal, in the same order
    before = [e for e in _flat_items(name, items) if not _is_output(name, e)]
    after = [e for e in _flat_items(name, repaired) if not _is_output(name, e)]
    iterator = iter(after)
    assert all(any(e == a for a in iterator) for e in before), "an original item was lost or reordered"

    # every original output is still an output, or was kept as a message naming its call
    text = orjson.dumps(repaired).decode()
    for output in dialect.index(items).outputs:
        assert output.call_id in text

    # idempotent, and the fast path recognises a repaired thread whenever it can
    plan2, again = repair_items(repaired, dialect)
    assert again is None and not plan2.edits


@pytest.mark.parametrize("name", DIALECTS)
@given(conversation=threadgen.conversations())
def test_drop_orphans_removes_only_orphans(name: str, conversation) -> None:
    items = threadgen.RENDERERS[name](conversation)
    dialect = dialects.get(name)
    plan, repaired = repair_items(items, dialect, RepairOptions(drop_orphans=True))
    assert not any(e.action is Action.CONVERT_ORPHAN for e in plan.edits)
    if repaired is not None:
        assert dialect.check(repaired) == []
        assert "orphan_" not in orjson.dumps(repaired).decode()


@pytest.mark.parametrize("name", DIALECTS)
@given(conversation=threadgen.conversations())
def test_untouched_items_are_passed_through_by_identity(name: str, conversation) -> None:
    """Stores copy the bytes of untouched items; that relies on the applier keeping them by identity."""
    items = threadgen.RENDERERS[name](conversation)
    dialect = dialects.get(name)
    plan, repaired = repair_items(items, dialect)
    if repaired is None:
        return
    touched = {e.output.at[0] for e in plan.edits if e.output is not None}
    touched |= {e.call.at[0] for e in plan.edits if e.call is not None}
    kept = {id(item) for item in repaired}
    for i, item in enumerate(items):
        if i in touched or (name == "anthropic" and i - 1 in touched) or (name == "anthropic" and i + 1 in touched):
            continue
        if i not in touched and _is_plain(name, item):
            assert id(item) in kept, f"item {i} was copied although no edit touched it"


def _is_plain(name: str, item) -> bool:
    if name == "anthropic":
        return isinstance(item.get("content"), str) or not any(b.get("type") == "tool_result" for b in item["content"])
    return not (item.get("type") == "function_call_output" or item.get("role") == "tool")


@pytest.mark.parametrize("name", DIALECTS)
@given(conversation=threadgen.conversations())
def test_synthetic_outputs_are_deterministic(name: str, conversation) -> None:
    items = threadgen.RENDERERS[name](conversation)
    dialect = dialects.get(name)
    first = repair_items(copy.deepcopy(items), dialect)[1]
    second = repair_items(copy.deepcopy(items), dialect)[1]
    assert orjson.dumps(first) == orjson.dumps(second)


@given(conversation=threadgen.conversations(), data=st.data())
def test_anthropic_text_after_a_turns_tool_calls_is_moved_ahead_of_them(conversation, data) -> None:
    """Text after the tool calls of an assistant message is moved ahead of them, order kept, nothing lost;
    a message with thinking blocks is left as the model wrote it (and stays a violation for lint)."""
    anthropic = dialects.get("anthropic")
    items = threadgen.anthropic(conversation)
    with_text, with_thinking = set(), set()
    for m, message in enumerate(items):
        content = message["content"]
        if message["role"] != "assistant" or not any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
            continue
        extra = data.draw(st.sampled_from(("none", "text", "two", "thinking")))
        if extra == "none":
            continue
        after = [{"type": "text", "text": f"after {m}.{k}"} for k in range(2 if extra == "two" else 1)]
        before = [{"type": "thinking", "thinking": "plan", "signature": "c2ln"}] if extra == "thinking" else []
        items[m] = {**message, "content": [*before, *content, *after]}
        with_text.add(m)
        if extra == "thinking":
            with_thinking.add(m)
    pristine = copy.deepcopy(items)
    plan, repaired = repair_items(items, anthropic)
    assert items == pristine
    if anthropic.quick_healthy(items):
        assert repaired is None
    mended = with_text - with_thinking
    assert {e.at[0] for e in plan.edits if e.action is Action.MOVE_TEXT} == mended
    result = repaired if repaired is not None else items
    for role, first, last in turns(result):
        if any(v.rule == "tool-use-not-last" for v in anthropic.check(result) if v.at == first):
            assert first != last or any(b["type"] == "thinking" for b in result[first]["content"])
    assistants = [m for m, message in enumerate(items) if message["role"] == "assistant"]
    after = [message for message in result if message["role"] == "assistant"]
    for m, new in zip(assistants, after, strict=True):
        old = items[m]["content"]
        if m not in mended:
            assert new is items[m]
            continue
        kinds = [b["type"] for b in new["content"]]
        assert kinds == sorted(kinds, key=lambda kind: kind == "tool_use"), "text first, then the tool calls"
        for kind in ("text", "tool_use"):
            assert [b for b in new["content"] if b["type"] == kind] == [b for b in old if b["type"] == kind]
    assert not any(e.action is Action.MOVE_TEXT for e in repair_items(result, anthropic)[0].edits)


def _ids_per_round(conversation: threadgen.Conversation) -> threadgen.Conversation:
    """The same conversation with ids numbered per round (``call_0``, ``call_1``... every turn), as
    OpenAI-compatible servers and some providers number them: ids repeat across turns, never inside one."""
    from dataclasses import replace

    rounds = tuple(replace(rnd, calls=tuple(replace(c, call_id=f"call_{j}") for j, c in enumerate(rnd.calls)))
                   for rnd in conversation.rounds)
    return replace(conversation, rounds=rounds)


@pytest.mark.parametrize("name", DIALECTS)
@given(conversation=threadgen.conversations())
def test_reused_ids_are_paired_by_order(name: str, conversation) -> None:
    """Ids reused across turns: order pairs them, so repair is accepted by the provider, answers every call once,
    loses nothing and is idempotent; it refuses only calls of one turn that order cannot tell apart."""
    items = threadgen.RENDERERS[name](_ids_per_round(conversation))
    dialect = dialects.get(name)
    plan, repaired = repair_items(items, dialect)
    assert all("in one turn" in skip.reason for skip in plan.skips), plan.skips
    result = items if repaired is None else repaired
    if not plan.skips:
        assert dialect.check(result) == [], plan
        index = dialect.index(result)
        assert sorted(o.call_id for o in index.outputs) == sorted(c.call_id for c in index.calls)
    before = [e for e in _flat_items(name, items) if not _is_output(name, e)]
    after = iter([e for e in _flat_items(name, result) if not _is_output(name, e)])
    assert all(any(e == a for a in after) for e in before), "an original item was lost or reordered"
    outputs_before = len(dialect.index(items).outputs)
    index = dialect.index(result)
    kept_as_text = orjson.dumps(result).decode().count("[threadfix] This was")
    assert len([o for o in index.outputs if not o.by_threadfix]) + kept_as_text >= outputs_before - sum(
        e.action is Action.DROP_DUPLICATE for e in plan.edits)
    if repaired is not None:
        plan2, again = repair_items(repaired, dialect)
        assert again is None and not plan2.edits
