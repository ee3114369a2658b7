"""A block's kind field that is not a string (a list, an object) is read as no kind, in every dialect.

Hypothesis found the first of these in LangChain content blocks (``{"type": []}``): the kind went into a set and a
dict lookup and raised ``TypeError: unhashable``, a traceback where one message belongs. The same reader existed
in the Anthropic and pydantic-ai dialects.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from threadfix import dialects
from threadfix.repair import repair_items

UNHASHABLE = st.one_of(st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _langchain(kind: Any) -> list[Any]:
    return [{"type": "human", "data": {"content": "ls"}},
            {"type": "ai", "data": {"content": [{"type": kind}, {"type": "tool_use", "id": "t1", "name": "shell", "input": {}},
                                                {"type": "text", "text": "after"}],
                                    "tool_calls": [{"name": "shell", "args": {}, "id": "t1"}]}}]


def _anthropic(kind: Any) -> list[Any]:
    return [{"role": "user", "content": "ls"},
            {"role": "assistant", "content": [{"type": kind}, {"type": "tool_use", "id": "t1", "name": "shell", "input": {}},
                                              {"type": "text", "text": "after"}]}]


def _pydantic_ai(kind: Any) -> list[Any]:
    return [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "ls"}]},
            {"kind": "response", "parts": [{"part_kind": kind},
                                           {"part_kind": "tool-call", "tool_name": "shell", "args": {}, "tool_call_id": "t1"},
                                           {"part_kind": "text", "content": "after"}]}]


THREADS = {"langchain": _langchain, "anthropic": _anthropic, "pydantic-ai": _pydantic_ai}


@pytest.mark.parametrize("name", sorted(THREADS))
@given(kind=UNHASHABLE)
def test_an_unhashable_kind_is_no_kind(name: str, kind: Any) -> None:
    dialect = dialects.get(name)
    items = THREADS[name](kind)
    dialect.sniff(items)
    dialect.check(items)
    plan, repaired = repair_items(items, dialect)
    # the call still has no output, whatever the block beside it holds: repair answers it
    assert any(edit.call_id == "t1" for edit in plan.edits)
    assert repaired is not None and repair_items(repaired, dialect)[1] is None
