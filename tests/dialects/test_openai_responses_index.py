"""The Responses index sees a thread accepted on its way only where ``quick_accepted`` says so, and on the common
shapes wherever it does (lint and report take its word for it instead of a second pass over the items)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.core import threadgen
from tests.lint.test_hostile import items as hostile_items
from threadfix import dialects
from threadfix.dialects.openai_responses import CALL_OUTPUTS, OUTPUT_TYPES

RESPONSES = dialects.get("openai-responses")
IDS = st.one_of(st.sampled_from(["a", "b", "c", "", " "]), st.none(), st.integers(0, 2), st.lists(st.just(1), max_size=1))
item = st.fixed_dictionaries(
    {"type": st.sampled_from(sorted({*CALL_OUTPUTS, *OUTPUT_TYPES, "message", "reasoning"}))},
    optional={"call_id": IDS, "id": IDS, "execution": st.sampled_from(["server", "client"]),
              "status": st.sampled_from(["completed", "incomplete"]), "output": st.just("ok"), "name": st.just("f")},
)
responses_items = st.lists(st.one_of(item, st.just("not an item")), max_size=8)


def _index_accepts(items) -> bool | None:
    try:
        return RESPONSES.index(items).accepted
    except (TypeError, AttributeError, ValueError):
        return None  # the dialect's own failure: nothing for lint or report to take its word for


@given(items=st.one_of(responses_items, hostile_items))
def test_the_index_accepts_only_what_quick_accepted_accepts(items) -> None:
    if _index_accepts(items):
        assert RESPONSES.quick_accepted(items)


@given(conversation=threadgen.conversations())
def test_the_index_accepts_every_generated_thread_quick_accepted_accepts(conversation) -> None:
    items = threadgen.responses(conversation)
    assert bool(_index_accepts(items)) is RESPONSES.quick_accepted(items)


@given(items=st.lists(st.fixed_dictionaries({"type": st.sampled_from(["message", "function_call", "function_call_output"]),
                                             # a blank id: the planner refuses it, so the index must not accept it
                                             "call_id": st.sampled_from(["a", "b", "c", "", " ", "\u3000"])},
                                            optional={"id": st.sampled_from(["m1", "m2", "fc_1"])}), max_size=8))
def test_the_index_agrees_with_quick_accepted_on_string_ids(items) -> None:
    assert bool(_index_accepts(items)) is RESPONSES.quick_accepted(items)
