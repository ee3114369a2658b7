"""The Chat index, one pass over the messages, gives the calls and outputs a plain reading of them gives, and sees a
thread accepted on its way only where ``quick_accepted`` says so, and on generated threads wherever it does (lint
and report take its word for it instead of a second pass over the items)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.core import threadgen
from tests.dialects.plain_reading import READ_FAILURES, assert_reads_as_plain
from tests.lint.test_hostile import items as hostile_items
from threadfix import dialects
from threadfix.failures import is_threadfix_output
from threadfix.model import Call, Output, ThreadIndex

CHAT = dialects.get("openai-chat")
IDS = st.one_of(st.sampled_from(["a", "b", "c", "", " ", "\u3000"]), st.none(), st.integers(0, 2),
                st.lists(st.just(1), max_size=1))
spec = st.fixed_dictionaries({}, optional={"name": st.sampled_from(["f", "g", None]),
                                           "arguments": st.sampled_from(['{"x": 1}', "{", None])})
call = st.one_of(
    st.fixed_dictionaries({}, optional={"id": IDS, "type": st.sampled_from(["function", "custom", 7]),
                                        "function": st.one_of(spec, st.just("f")), "custom": spec}),
    st.sampled_from(["not a call", 3, None]),
)
message = st.fixed_dictionaries(
    {"role": st.sampled_from(["assistant", "assistant", "tool", "tool", "user", "system", None, 3])},
    optional={"tool_calls": st.one_of(st.lists(call, max_size=3), st.sampled_from(["x", {}, {"a": 1}, 0, None])),
              "tool_call_id": IDS, "content": st.sampled_from(["ok", "", None, ['{"written_by":"threadfix"}']]),
              "finish_reason": st.sampled_from(["length", "stop"])},
)
chat_items = st.lists(st.one_of(message, message, st.just("not a message")), max_size=8)


def _plain_index(items: list[Any]) -> ThreadIndex:
    """The messages read one field at a time, as the Chat format describes them (calls and outputs only)."""
    calls, outputs, users, models = [], [], [], []
    for i, message in enumerate(items):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "assistant":
            models.append(i)
            tool_calls = message.get("tool_calls")
            for one in tool_calls if isinstance(tool_calls, list) else []:
                if not isinstance(one, dict):
                    continue
                found = one.get("function") if isinstance(one.get("function"), dict) else one.get("custom")
                found = found if isinstance(found, dict) else {}
                calls.append(Call(
                    call_id=one.get("id") if isinstance(one.get("id"), str) else None,
                    name=found.get("name") if isinstance(found.get("name"), str) else "unknown",
                    wire_type=one.get("type", "function") if isinstance(one.get("type"), str) else "function",
                    at=(i, -1), arguments=found.get("arguments"), truncated=message.get("finish_reason") == "length",
                ))
        elif role == "tool":
            content = message.get("content")
            call_id = message.get("tool_call_id")
            outputs.append(Output(call_id=call_id if isinstance(call_id, str) else None, wire_type="tool", at=(i, -1),
                                  content=content, by_threadfix=is_threadfix_output(content)))
        elif role == "user":
            users.append(i)
    return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items))


def _without_verdict(index: ThreadIndex) -> ThreadIndex:
    return ThreadIndex(index.calls, index.outputs, index.user_turns, index.model_turns, index.length)


@given(items=st.one_of(chat_items, hostile_items))
def test_the_index_reads_what_a_plain_reading_reads(items) -> None:
    assert_reads_as_plain(lambda items: _without_verdict(CHAT.index(items)), _plain_index, items)


@given(items=st.one_of(chat_items, hostile_items))
def test_the_index_accepts_only_what_quick_accepted_accepts(items) -> None:
    try:
        accepted = CHAT.index(items).accepted
    except READ_FAILURES:
        return
    if accepted:
        assert CHAT.quick_accepted(items)


@given(conversation=threadgen.conversations())
def test_the_index_accepts_every_generated_thread_quick_accepted_accepts(conversation) -> None:
    items = threadgen.chat(conversation)
    assert CHAT.index(items).accepted is CHAT.quick_accepted(items)


@given(items=st.lists(st.one_of(
    st.fixed_dictionaries({"role": st.just("assistant"),
                           "tool_calls": st.lists(st.fixed_dictionaries({"id": st.sampled_from(["a", "b", "c"])}),
                                                  max_size=3)}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": st.sampled_from(["a", "b", "c"])}),
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"])}),
), max_size=8))
def test_the_index_agrees_with_quick_accepted_on_string_ids(items) -> None:
    assert CHAT.index(items).accepted is CHAT.quick_accepted(items)
