"""The bedrock dialect: sniffing, strict alternation, the thread's own result conventions, and botocore's model."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core import threadgen
from tests.dialects.wire_checks import (
    ROOT,
    assert_never_crashes,
    assert_sound_repair,
    cases,
    hostile_threads,
    repair_sample_with_cli,
    run_case,
    same_reading_as_chat,
)
from threadfix import dialects
from threadfix.dialects.bedrock import SAY_ALTERNATE, SAY_START, tool_result
from threadfix.failures import MARKER, MARKER_KEY
from threadfix.repair import repair_items

BEDROCK = dialects.get("bedrock")
SAMPLES = sorted((ROOT / "sample_threads" / "bedrock").iterdir())


@pytest.mark.parametrize("path", cases("bedrock"), ids=lambda p: p.stem)
def test_case(path: Path) -> None:
    run_case(path)


# --------------------------------------------------------------------------- sniffing and indexing


def text(role: str, words: str) -> dict[str, Any]:
    return {"role": role, "content": [{"text": words}]}


def use(call_id: str, name: str = "search") -> dict[str, Any]:
    return {"toolUse": {"toolUseId": call_id, "name": name, "input": {}}}


def result(call_id: str, content: Any = None, **extra: Any) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": call_id, "content": [{"text": "ok"}] if content is None else content, **extra}}


@pytest.mark.parametrize(("items", "score"), [
    ([text("user", "hi"), {"role": "assistant", "content": [use("t1")]}], 100),
    ([text("user", "hi"), text("assistant", "hello"), {"role": "user", "content": [{"cachePoint": {"type": "default"}}]}], 50),
    # Anthropic blocks carry a type; a string content is Anthropic or Chat; parts are Gemini or the AI SDK
    ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], 0),
    ([{"role": "user", "content": "hi"}], 0),
    ([{"role": "user", "parts": [{"text": "hi"}]}], 0),
    ([{"role": "user", "content": [{"text": "a", "image": {}}]}], 0),
    ([{"role": "tool", "content": [{"text": "Chat's tool role"}]}], 0),
])
def test_sniff(items: list[Any], score: int) -> None:
    assert BEDROCK.sniff(items) == score


def test_index_reads_status_markers_and_stop_reason() -> None:
    items = [
        text("user", "go"),
        {"role": "assistant", "stopReason": "max_tokens", "content": [use("t1"), use("t2")]},
        {"role": "user", "content": [result("t1", status="error"), result("t2", [{"json": {"error": {}, MARKER_KEY: MARKER}}])]},
    ]
    index = BEDROCK.index(items)
    assert [(c.call_id, c.truncated) for c in index.calls] == [("t1", False), ("t2", True)]
    assert [(o.call_id, o.is_error, o.status, o.by_threadfix) for o in index.outputs] == [
        ("t1", True, "error", False), ("t2", None, None, True)]
    assert index.user_turns == (0,) and index.model_turns == (1,)


@pytest.mark.parametrize(("items", "expected"), [
    ([text("assistant", "hi"), text("user", "x")], [SAY_START]),
    ([text("user", "a"), text("user", "b")], [SAY_ALTERNATE]),
    ([text("user", "a"), {"role": "assistant", "content": [use("t1"), use("t1")]}, {"role": "user", "content": [result("t1")]}],
     ["The toolUse blocks at messages.1.content contain duplicate Ids: t1"]),
    ([text("user", "a"), {"role": "assistant", "content": [use("t1")]},
      {"role": "user", "content": [result("t1", [{"text": "  "}], status="error")]}],
     ["The content field at messages.2.content.0.toolResult cannot be empty when status value is error."]),
    ([text("user", "a"), {"role": "assistant", "content": [use("t1"), use("t2")]}],
     ["Expected toolResult blocks at messages.2.content for the following Ids: t1, t2"]),
])
def test_check_speaks_bedrock_words(items: list[Any], expected: list[str]) -> None:
    assert [v.message for v in BEDROCK.check(items)] == expected


def test_synthetic_result_is_an_error_with_content() -> None:
    items = [text("user", "a"), {"role": "assistant", "content": [use("t1")]}]
    _, repaired = repair_items(items, BEDROCK)
    block = repaired[-1]["content"][0]["toolResult"]
    assert block["status"] == "error" and block["toolUseId"] == "t1"
    assert json.loads(block["content"][0]["text"])[MARKER_KEY] == MARKER


@given(items=hostile_threads(("role", "content", "user", "assistant", "system", "toolUse", "toolResult", "toolUseId", "name", "input", "status", "error", "text", "json", "type", "server_tool_use", "stopReason", "max_tokens")))
def test_hostile_items_never_crash(items: list[Any]) -> None:
    assert_never_crashes(BEDROCK, items)


# --------------------------------------------------------------------------- generated threads


def render(conv: threadgen.Conversation, late_mode: bool) -> list[dict[str, Any]]:
    """A threadgen conversation as Converse messages; user blocks always join a trailing user message."""
    items: list[dict[str, Any]] = [text("user", "start")]

    def to_user(*blocks: dict[str, Any]) -> None:
        if items[-1]["role"] == "user":
            items[-1]["content"].extend(blocks)
        elif blocks:
            items.append({"role": "user", "content": list(blocks)})

    for r, rnd in enumerate(conv.rounds):
        if items[-1]["role"] == "assistant":
            to_user({"text": f"go on {r}"})
        items.append({"role": "assistant", "content": [{"text": "calling"}, *(
            {"toolUse": {"toolUseId": c.call_id, "name": c.name, "input": {"raw": c.arguments}}} for c in rnd.calls)]})
        answers, misplaced = [], []
        for c in rnd.calls:
            if c.answered:
                (misplaced if c.misplaced else answers).append(result(c.call_id, [{"text": f"result of {c.call_id}"}], status="success"))
            if c.answered and c.duplicated:
                answers.append(result(c.call_id, [{"text": f"again {c.call_id}"}]))
        answers += [result(f"orphan_{r}_{i}", [{"text": "lost"}]) for i, at in enumerate(conv.orphans) if at == r]
        late = late_mode and rnd.text_after
        if answers or (misplaced and not late) or rnd.user_after:
            to_user(*answers, {"text": f"next {r}"}, *([] if late else misplaced))
        if rnd.text_after:
            items.append(text("assistant", "ok"))
        if late and misplaced:
            to_user(*misplaced)  # past an assistant turn: moving them joins two assistant messages
    return items


@given(conversation=threadgen.conversations(), late_mode=st.booleans())
def test_repair_invariants(conversation: threadgen.Conversation, late_mode: bool) -> None:
    items = render(conversation, late_mode)
    assert dialects.sniff(items) is BEDROCK
    _, repaired = assert_sound_repair(BEDROCK, items, content_key="content", is_output=lambda b: tool_result(b) is not None)
    if repaired is not None:
        assert _botocore_errors({"modelId": "m", "messages": repaired}) in (None, "")


@given(conversation=threadgen.conversations(), late_mode=st.booleans())
def test_reads_like_the_openai_chat_twin(conversation: threadgen.Conversation, late_mode: bool) -> None:
    same_reading_as_chat(BEDROCK, render(conversation, late_mode), threadgen.chat(conversation))


# --------------------------------------------------------------------------- end to end, and botocore


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_cli_repairs_the_samples_into_threads_bedrock_accepts(sample: Path, tmp_path: Path) -> None:
    for items in repair_sample_with_cli(sample, tmp_path, BEDROCK):
        request = {"modelId": "m", "messages": [{k: v for k, v in m.items() if k != "stopReason"} for m in items]}
        assert _botocore_errors(request) in (None, "")


def test_the_repaired_converse_request_is_a_valid_converse_call(tmp_path: Path) -> None:
    sample = ROOT / "sample_threads" / "bedrock" / "converse-request.json"
    repair_sample_with_cli(sample, tmp_path, BEDROCK)
    document = json.loads((tmp_path / sample.name).read_text())
    errors = _botocore_errors(document)
    if errors is None:
        pytest.skip("botocore is not installed")
    assert errors == ""


def _botocore_errors(request: dict[str, Any]) -> str | None:
    """botocore's own validation of a Converse request against the bedrock-runtime service model."""
    checker = _converse_validator()
    return None if checker is None else checker(request)


@functools.cache
def _converse_validator() -> Callable[[dict[str, Any]], str] | None:
    try:
        import botocore.session
        from botocore.validate import ParamValidator
    except ImportError:
        return None
    shape = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("Converse").input_shape
    return lambda request: ParamValidator().validate(request, shape).generate_report()
