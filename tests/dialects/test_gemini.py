"""The gemini dialect: sniffing, pairing without ids, the three turn rules, and google-genai's own models."""

from __future__ import annotations

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
from threadfix.dialects.gemini import SAY_CALL_TURN, SAY_COUNT, SAY_INVALID, SAY_RESPONSE_TURN, response_of
from threadfix.failures import MARKER, MARKER_KEY
from threadfix.repair import repair_items

GEMINI = dialects.get("gemini")
SAMPLES = sorted((ROOT / "sample_threads" / "gemini").iterdir())


@pytest.mark.parametrize("path", cases("gemini"), ids=lambda p: p.stem)
def test_case(path: Path) -> None:
    run_case(path)


# --------------------------------------------------------------------------- sniffing and indexing


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def call(name: str, **extra: Any) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": {}, **extra}}


def response(name: str, body: Any = None, **extra: Any) -> dict[str, Any]:
    return {"functionResponse": {"name": name, **extra, "response": {"output": "ok"} if body is None else body}}


@pytest.mark.parametrize(("items", "score"), [
    ([user("hi"), {"role": "model", "parts": [call("a")]}], 100),
    ([user("hi"), {"role": "model", "parts": [{"text": "hello", "thoughtSignature": "xx"}]}], 70),
    ([{"parts": [{"text": "no role: a single-turn request"}]}], 50),
    ([{"role": "user", "parts": [{"inline_data": {"mime_type": "image/png", "data": "AA=="}}]}], 50),
    # AI SDK UIMessages carry a type on every part; Pydantic AI parts a part_kind
    ([{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}], 0),
    ([{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]}], 0),
    ([{"role": "assistant", "parts": [{"text": "assistant is not a Gemini role"}]}], 0),
    ([{"role": "user", "content": [{"text": "Bedrock"}]}], 0),
    ([{"role": "user", "parts": [{}]}], 0),
    ([], 0),
])
def test_sniff(items: list[Any], score: int) -> None:
    assert GEMINI.sniff(items) == score


def test_index_reads_ids_errors_markers_and_truncation() -> None:
    items = [
        user("go"),
        {"role": "model", "finish_reason": "MAX_TOKENS", "parts": [call("a", id="c1"), call("b")]},
        {"role": "user", "parts": [response("a", {"error": {"code": 500}}, id="c1"),
                                   response("b", {"error": {"error": {}, MARKER_KEY: MARKER}})]},
    ]
    index = GEMINI.index(items)
    assert [(c.call_id, c.name, c.truncated) for c in index.calls] == [("c1", "a", False), ("#1.1", "b", True)]
    assert [(o.call_id, o.is_error, o.by_threadfix) for o in index.outputs] == [("c1", True, False), ("#1.1", True, True)]
    assert index.user_turns == (0,) and index.model_turns == (1,)


def test_a_response_pairs_only_within_the_turns_up_to_the_next_model_turn() -> None:
    items = [user("go"), {"role": "model", "parts": [call("a")]}, {"role": "model", "parts": [{"text": "hm"}]},
             {"role": "user", "parts": [response("a")]}]
    (output,) = GEMINI.index(items).outputs
    assert output.call_id is None  # past a model turn, a response without id answers nothing


@pytest.mark.parametrize(("items", "expected"), [
    ([{"role": "model", "parts": [call("a")]}, {"role": "user", "parts": [response("a")]}], [SAY_CALL_TURN]),
    ([user("x"), {"role": "model", "parts": [call("a", id="1"), call("b", id="1")]},
      {"role": "user", "parts": [response("a", id="1"), response("b", id="1")]}], [SAY_INVALID]),
    ([user("x"), {"role": "user", "parts": [response("a")]}], [SAY_RESPONSE_TURN]),
    ([user("x"), {"role": "model", "parts": [call("a"), call("b")]}, {"role": "user", "parts": [response("a")]}], [SAY_COUNT]),
])
def test_check_speaks_the_api_words(items: list[Any], expected: list[str]) -> None:
    assert [v.message for v in GEMINI.check(items)] == expected


@given(items=hostile_threads(("role", "parts", "user", "model", "function", "functionCall", "function_call", "functionResponse", "function_response", "name", "id", "args", "response", "text", "output", "error", "finishReason", "MAX_TOKENS", "willContinue")))
def test_hostile_items_never_crash(items: list[Any]) -> None:
    assert_never_crashes(GEMINI, items)


# --------------------------------------------------------------------------- generated threads


def render(conv: threadgen.Conversation, with_ids: bool, snake: bool) -> list[dict[str, Any]]:
    """A threadgen conversation as Gemini contents (ids optional, either spelling)."""
    call_key, response_key = ("function_call", "function_response") if snake else ("functionCall", "functionResponse")

    def fc(spec: threadgen.CallSpec) -> dict[str, Any]:
        body = {"name": spec.name, "args": {"raw": spec.arguments}}
        return {call_key: {**body, "id": spec.call_id} if with_ids else body}

    def fr(spec_id: str, name: str, text: str) -> dict[str, Any]:
        body = {"name": name, "response": {"output": text}}
        return {response_key: {**body, "id": spec_id} if with_ids else body}

    items: list[dict[str, Any]] = [user("start")]
    late: list[dict[str, Any]] = []
    for r, rnd in enumerate(conv.rounds):
        if items[-1]["role"] == "model":
            items.append(user(f"go on {r}"))
        items.append({"role": "model", "parts": [{"text": "calling"}, *map(fc, rnd.calls)]})
        answers: list[dict[str, Any]] = []
        misplaced: list[dict[str, Any]] = []
        for c in rnd.calls:
            if c.answered:
                (misplaced if c.misplaced else answers).append(fr(c.call_id, c.name, f"result of {c.call_id}"))
            if c.answered and c.duplicated:
                answers.append(fr(c.call_id, c.name, f"again {c.call_id}"))
        answers += [fr(f"orphan_{r}_{i}", "lost_tool", "lost") for i, at in enumerate(conv.orphans) if at == r]
        if answers:
            items.append({"role": "user", "parts": answers})
        if misplaced and not with_ids:
            items += [user(f"waiting {r}"), {"role": "user", "parts": misplaced}]  # same window, after a text turn
        if rnd.text_after:
            items.append({"role": "model", "parts": [{"text": "ok"}]})
        if misplaced and with_ids and rnd.text_after:
            items.append({"role": "user", "parts": misplaced})  # past a model turn: moving it joins two model turns
        elif misplaced and with_ids:
            late += misplaced  # answered at the very end
        if rnd.user_after:
            items.append(user(f"next {r}"))
    if late:
        items.append({"role": "user", "parts": late})
    return items


def _is_response(part: Any) -> bool:
    return response_of(part) is not None


@given(conversation=threadgen.conversations(), with_ids=st.booleans(), snake=st.booleans())
def test_repair_invariants(conversation: threadgen.Conversation, with_ids: bool, snake: bool) -> None:
    items = render(conversation, with_ids, snake)
    assert dialects.sniff(items) is GEMINI
    assert_sound_repair(GEMINI, items, content_key="parts", is_output=_is_response)


@given(conversation=threadgen.conversations(), snake=st.booleans())
def test_reads_like_the_openai_chat_twin(conversation: threadgen.Conversation, snake: bool) -> None:
    same_reading_as_chat(GEMINI, render(conversation, True, snake), threadgen.chat(conversation))


# --------------------------------------------------------------------------- end to end, and google-genai


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_cli_repairs_the_samples_into_threads_gemini_accepts(sample: Path, tmp_path: Path) -> None:
    repair_sample_with_cli(sample, tmp_path, GEMINI)


#: app metadata some stores keep on a content; not part of the wire shape google-genai validates
_APP_KEYS = ("finishReason", "finish_reason")


@given(conversation=threadgen.conversations(), with_ids=st.booleans(), snake=st.booleans())
def test_google_genai_accepts_repaired_contents(conversation: threadgen.Conversation, with_ids: bool, snake: bool) -> None:
    types = pytest.importorskip("google.genai.types")
    _, repaired = repair_items(render(conversation, with_ids, snake), GEMINI)
    for content in repaired or []:
        _accepted_by_google_genai(types, content)


def test_google_genai_accepts_the_repaired_samples(tmp_path: Path) -> None:
    types = pytest.importorskip("google.genai.types")
    for sample in SAMPLES:
        for items in repair_sample_with_cli(sample, tmp_path / sample.stem, GEMINI):
            for content in items:
                _accepted_by_google_genai(types, content)


def _accepted_by_google_genai(types: Any, content: dict[str, Any]) -> None:
    wire = {k: v for k, v in content.items() if k not in _APP_KEYS}
    parsed = types.Content.model_validate(wire)  # extra="forbid": an unknown or misspelt key fails here
    for part in parsed.parts:
        if part.function_response is not None:
            assert isinstance(part.function_response.response, dict) and part.function_response.name


def test_lint_reports_a_call_in_a_user_content_that_repair_keeps_as_text() -> None:
    """A functionCall in a user content (issue #23): lint says Gemini refuses it, fixable, and that repair's
    convert_call leaves nothing to report."""
    from threadfix.lint import LintOptions, lint_items

    items = [{"role": "user", "parts": [{"text": "look this order up:"}, call("order_status", id="call_u")]},
             {"role": "model", "parts": [{"text": "Order 1 has shipped."}]}]
    findings = lint_items(items, GEMINI, LintOptions())
    assert [(f.code, f.item, f.fixable) for f in findings] == [("TF008", (0, -1), True)], findings
    assert SAY_INVALID in findings[0].message
    plan, repaired = repair_items(items, GEMINI)
    assert [(e.action.value, e.call_id, e.at) for e in plan.edits] == [("convert_call", "call_u", (0, 1))]
    assert lint_items(repaired, GEMINI, LintOptions()) == []
