"""The Anthropic index, each block's type read once, gives the calls, outputs and turns a plain reading of the
messages gives, over hostile and generated threads."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core import threadgen
from tests.dialects.plain_reading import assert_reads_as_plain
from tests.lint.test_hostile import items as hostile_items
from threadfix import dialects
from threadfix.dialects.anthropic import _TRUNCATING_STOPS, blocks
from threadfix.failures import is_threadfix_output
from threadfix.model import Call, Output, ThreadIndex

ANTHROPIC = dialects.get("anthropic")
IDS = st.one_of(st.sampled_from(["a", "b", ""]), st.none(), st.integers(0, 2))
block = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "tool_use", "tool_use", "server_tool_use", "tool_result", "image", "document",
                                  "web_search_tool_result", "thinking", None, 3, ["x"]])},
        optional={"id": IDS, "tool_use_id": IDS, "name": st.sampled_from(["f", None]), "input": st.just({"q": 1}),
                  "content": st.sampled_from(["ok", None, '{"written_by":"threadfix"}']),
                  "is_error": st.sampled_from([True, False, None, 0])}),
    st.sampled_from(["not a block", 1, None]),
)
message = st.fixed_dictionaries(
    {"role": st.sampled_from(["assistant", "user", "system", None])},
    optional={"content": st.one_of(st.lists(block, max_size=4), st.sampled_from(["hi", None, 3])),
              "stop_reason": st.sampled_from(["max_tokens", "end_turn", "model_context_window_exceeded", None])},
)
anthropic_items = st.lists(st.one_of(message, message, st.just("not a message")), max_size=6)


def _plain_index(items: list[Any]) -> ThreadIndex:
    """The messages read one block at a time, as the Messages API describes them."""
    calls, outputs, users, models = [], [], [], []
    for m, one in enumerate(items):
        if not isinstance(one, dict):
            continue
        role = one.get("role")
        truncated = one.get("stop_reason") in _TRUNCATING_STOPS  # (a set: a stop reason no set can hold fails)
        if role == "assistant":
            models.append(m)
        has_text = False
        for b, part in enumerate(blocks(one)):
            kind = part.get("type") if isinstance(part, dict) else None
            kind = kind if isinstance(kind, str) else None
            if role == "assistant" and kind in ("tool_use", "server_tool_use"):
                calls.append(Call(
                    call_id=part.get("id") if isinstance(part.get("id"), str) else None,
                    name=part.get("name") if isinstance(part.get("name"), str) else "unknown",
                    wire_type=kind, at=(m, b), arguments=part.get("input"),
                    truncated=truncated and b == len(blocks(one)) - 1, server=kind == "server_tool_use",
                ))
            elif kind == "tool_result" or (role == "assistant" and kind is not None and kind.endswith("_tool_result")):
                content = part.get("content")
                outputs.append(Output(
                    call_id=part.get("tool_use_id") if isinstance(part.get("tool_use_id"), str) else None,
                    wire_type=kind, at=(m, b), content=content,
                    is_error=bool(part.get("is_error")) if "is_error" in part else None,
                    by_threadfix=is_threadfix_output(content),
                ))
            elif kind in ("text", "image", "document"):
                has_text = True
        if role == "user" and has_text:
            users.append(m)
    return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items))


def _same_reading(items: list[Any]) -> None:
    assert_reads_as_plain(ANTHROPIC.index, _plain_index, items)


@settings(max_examples=400)
@given(items=st.one_of(anthropic_items, anthropic_items, hostile_items))
def test_the_index_reads_what_a_plain_reading_reads(items) -> None:
    _same_reading(items)


@given(conversation=threadgen.conversations())
def test_the_index_reads_generated_threads_as_a_plain_reading_does(conversation) -> None:
    _same_reading(threadgen.anthropic(conversation))
