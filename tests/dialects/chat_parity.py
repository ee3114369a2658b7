"""Parity with OpenAI Chat for the framework dialects (langchain, pydantic-ai).

Lint and report read only a dialect's index and the repair plan, so a framework thread that reads the
same (calls, outputs, turns, plan) as its OpenAI Chat rendering gives the same counts there.
"""

from __future__ import annotations

from typing import Any

from tests.core import threadgen
from threadfix import dialects
from threadfix.dialects import Dialect
from threadfix.repair import repair_items


def plan_summary(items: list[Any], dialect: Dialect) -> list[tuple[str, str, str, str]]:
    plan, _ = repair_items(items, dialect)
    return sorted((e.action.value, e.call_id or "", str(e.kind), str(e.cause)) for e in plan.edits)


def assert_reads_like_chat(dialect: Dialect, items: list[Any], conversation: threadgen.Conversation) -> None:
    """``items`` (the conversation in ``dialect``) gives the index and plan its Chat rendering gives."""
    chat = dialects.get("openai-chat")
    chat_items = threadgen.chat(conversation)
    mine, theirs = dialect.index(items), chat.index(chat_items)
    assert sorted((c.call_id, c.name, c.truncated) for c in mine.calls) == sorted(
        (c.call_id, c.name, c.truncated) for c in theirs.calls)
    assert [o.call_id for o in mine.outputs] == [o.call_id for o in theirs.outputs]
    assert (len(mine.user_turns), len(mine.model_turns)) == (len(theirs.user_turns), len(theirs.model_turns))
    assert plan_summary(items, dialect) == plan_summary(chat_items, chat)
