"""Hostile session files: records of the apps' shapes with any values: one line or problem per file, never a
traceback, and nothing written that does not read back."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.agents.sessions import repair

VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                      max_leaves=6)
IDS = st.sampled_from(["a", "b", "c", None, 1])


def claude_record() -> st.SearchStrategy:
    block = st.fixed_dictionaries({"type": st.sampled_from(["tool_use", "tool_result", "text", 3]), "id": IDS,
                                   "tool_use_id": IDS, "text": VALUES, "content": VALUES})
    message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "id": IDS,
                                     "content": st.lists(block, max_size=3) | VALUES})
    return st.fixed_dictionaries({"type": st.sampled_from(["user", "assistant", "progress", "system"]),
                                  "uuid": IDS, "parentUuid": IDS, "message": message | VALUES,
                                  "timestamp": st.sampled_from(["2030-01-01T00:00:00Z", 5, None, "x"]),
                                  "isSidechain": st.booleans() | VALUES})


def codex_record() -> st.SearchStrategy:
    item = st.fixed_dictionaries({"type": st.sampled_from(["function_call", "function_call_output", "message",
                                                           "custom_tool_call"]), "call_id": IDS, "content": VALUES})
    return st.fixed_dictionaries({"timestamp": st.just("2030-01-01T00:00:00Z"),
                                  "type": st.sampled_from(["response_item", "compacted", "event_msg"]),
                                  "payload": item | st.fixed_dictionaries({"replacement_history": VALUES | st.lists(item)})})


def gemini_record() -> st.SearchStrategy:
    call = st.fixed_dictionaries({"id": IDS, "name": VALUES, "result": VALUES | st.none()})
    return st.fixed_dictionaries({"id": st.sampled_from(["m1", "m2"]), "type": st.sampled_from(["user", "gemini", "info"]),
                                  "content": VALUES, "toolCalls": st.lists(call, max_size=2) | VALUES,
                                  "thoughts": VALUES})


@given(st.sampled_from(["claude", "codex", "gemini"]), st.data())
@settings(max_examples=120)
def test_hostile_records_never_raise(app: str, data: st.DataObject) -> None:
    if app == "claude":
        records = [{"type": "user", "uuid": "r", "parentUuid": None, "message": {"role": "user", "content": "hi"}},
                   *data.draw(st.lists(claude_record(), max_size=6))]
    elif app == "codex":
        records = [{"timestamp": "2030-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
                   *data.draw(st.lists(codex_record(), max_size=6))]
    else:
        records = [{"sessionId": "s", "projectHash": "p"}, *data.draw(st.lists(gemini_record(), max_size=6))]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        run = repair(path)  # (a traceback fails the test)
        assert run.result.threads + len(run.result.problems) >= 1
        second = repair(path)
        assert second.result.changed == 0
