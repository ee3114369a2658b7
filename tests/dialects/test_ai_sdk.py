"""The ai-sdk dialect: tool parts carry call and output in one part; repair moves a part to a failure state.

The oracle (``check``) is compared with the real ``ai`` npm package on the same threads when node and
the package are available (``NODE_PATH`` pointing at a ``node_modules`` holding ``ai``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace as replace_struct

from tests.core import threadgen
from tests.dialects.wire_checks import (
    ROOT,
    answered_in_place,
    assert_never_crashes,
    assert_quick_healthy_is_sound,
    assert_written_outputs_read_back,
    cases,
    hostile_threads,
    repair_sample_with_cli,
    run_case,
    same_reading_as_chat,
)
from threadfix import dialects
from threadfix.dialects.ai_sdk import OUTPUT_STATES, STATES
from threadfix.failures import MARKER, MARKER_KEY
from threadfix.repair import repair_items

AI_SDK = dialects.get("ai-sdk")
SAMPLES = sorted((ROOT / "sample_threads" / "ai-sdk").iterdir())
CHECKER = Path(__file__).parent / "ai_sdk_check.cjs"
#: the keys repair may change on the part it answers
ANSWER_KEYS = frozenset({"state", "errorText", "approval", "output", "preliminary"})


@pytest.mark.parametrize("path", cases("ai-sdk"), ids=lambda p: p.stem)
def test_case(path: Path) -> None:
    run_case(path)


# --------------------------------------------------------------------------- sniffing and indexing


def user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def assistant(message_id: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"id": message_id, "role": "assistant", "parts": [{"type": "step-start"}, *parts]}


def tool(call_id: str, state: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool-search", "toolCallId": call_id, "state": state, "input": {"q": "x"}, **extra}


@pytest.mark.parametrize(("items", "score"), [
    ([user("u", "hi"), assistant("a", tool("c1", "input-available"))], 100),
    ([user("u", "hi"), assistant("a", {"type": "text", "text": "hello"}, {"type": "data-weather", "data": {}})], 60),
    # AI SDK 4 parts nest their call under toolInvocation: not this format
    ([{"id": "a", "role": "assistant", "parts": [{"type": "tool-invocation", "toolInvocation": {"state": "call"}}]}], 0),
    ([{"role": "model", "parts": [{"text": "Gemini"}]}], 0),
    ([{"role": "user", "parts": [{"text": "Gemini parts have no type"}]}], 0),
    ([{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "pydantic-ai"}]}], 0),
    ([{"role": "user", "content": "chat"}], 0),
])
def test_sniff(items: list[Any], score: int) -> None:
    assert AI_SDK.sniff(items) == score


def test_index_reads_states() -> None:
    items = [user("u", "go"), assistant(
        "a",
        tool("c1", "input-streaming"),
        tool("c2", "output-error", errorText=json.dumps({"error": {}, MARKER_KEY: MARKER})),
        tool("c3", "output-available", output={"ok": 1}),
        tool("c4", "input-available", providerExecuted=True),
        tool("c5", "approval-responded", approval={"id": "p", "approved": True}),
    )]
    index = AI_SDK.index(items)
    assert [(c.call_id, c.truncated, AI_SDK.is_pending(index, c, items)) for c in index.calls] == [
        ("c1", True, False), ("c2", False, False), ("c3", False, False), ("c5", False, True)]
    assert [(o.call_id, o.at, o.is_error, o.by_threadfix) for o in index.outputs] == [
        ("c2", (1, 2), True, True), ("c3", (1, 3), False, False)]


def test_an_answered_part_without_an_id_is_neither_a_call_nor_an_output() -> None:
    """Nothing to pair and nothing to do; an open part without an id is still a call (repair refuses it)."""
    answered = {"type": "tool-search", "toolCallId": None, "state": "output-available", "input": {}, "output": 1}
    items = [user("u", "go"), assistant("a", answered, tool("c2", "input-available"), {**answered, "state": "input-available"})]
    index = AI_SDK.index(items)
    assert [(c.call_id, c.at) for c in index.calls] == [("c2", (1, 2)), (None, (1, 3))]
    assert index.outputs == ()
    plan, _ = repair_items(items, AI_SDK)
    assert [e.call_id for e in plan.edits] == ["c2"] and [s.call_id for s in plan.skips] == [None]


def test_an_output_without_its_call_input_is_not_an_orphan() -> None:
    items = [user("u", "go"), assistant("a", {"type": "tool-search", "toolCallId": "c1", "state": "output-available", "output": 1})]
    index = AI_SDK.index(items)
    assert [c.at for c in index.calls] == [o.at for o in index.outputs] == [(1, 1)]
    assert repair_items(items, AI_SDK) == (repair_items(items, AI_SDK)[0], None)


@pytest.mark.parametrize(("parts", "expected"), [
    ([tool("c1", "input-available"), tool("c2", "input-available")],
     ["Tool results are missing for tool calls c1, c2."]),
    ([tool("c1", "output-error")], ["Type validation failed: messages[1].parts[1]: a tool part in state output-error needs errorText"]),
    ([tool("c1", "output-denied", approval={"id": "p", "approved": True})],
     ["Type validation failed: messages[1].parts[1]: a tool part in state output-denied cannot carry this approval"]),
    # validateUIMessages (zod 4) wants the key even when its value may be anything; repair has nothing to add
    ([{"type": "tool-search", "toolCallId": "c1", "state": "output-available", "output": 1}],
     ["Type validation failed: messages[1].parts[1]: a tool part in state output-available needs input"]),
    ([tool("c1", "input-streaming")], []),  # convertToModelMessages drops it without a word
])
def test_check_speaks_the_sdk_words(parts: list[Any], expected: list[str]) -> None:
    assert [v.message for v in AI_SDK.check([user("u", "go"), assistant("a", *parts)])] == expected


@given(items=hostile_threads(("id", "role", "parts", "user", "assistant", "system", "type", "text", "step-start", "tool-x", "dynamic-tool", "toolName", "toolCallId", "state", "input-streaming", "input-available", "approval-requested", "approval-responded", "output-available", "output-error", "output-denied", "input", "output", "errorText", "approval", "approved", "reason", "providerExecuted")))
def test_hostile_items_never_crash(items: list[Any]) -> None:
    assert_never_crashes(AI_SDK, items)


# --------------------------------------------------------------------------- generated threads

NAMES = ("getWeather", "searchDocs", "sendEmail")


def tool_part(choose: Callable[[Sequence[Any]], Any], n: int) -> dict[str, Any]:
    """One tool part in a state the SDK's validator accepts, with the fields that state carries."""
    state = choose(sorted(STATES))
    name = choose(NAMES)
    part: dict[str, Any] = {"type": "dynamic-tool", "toolName": name} if choose((False, False, True)) else {"type": f"tool-{name}"}
    part |= {"toolCallId": f"call_{n:03d}", "state": state}
    if state != "input-streaming" or choose((True, False)):
        part["input"] = {"q": f"query {n}"}
    if state == "input-streaming" and choose((True, False)):
        part["rawInput"] = '{"q": "que'
    if state == "approval-requested":
        part["approval"] = {"id": f"appr_{n}"}
    if state in ("approval-responded", "output-denied"):
        approved = state == "approval-responded" and choose((True, False))
        part["approval"] = {"id": f"appr_{n}", "approved": approved, **({"reason": "no"} if choose((True, False)) else {})}
    if state == "output-available":
        part["output"] = {"answer": n}
    if state == "output-error":
        part["errorText"] = "ECONNRESET"
    if choose((False, False, False, False, True)):
        part["providerExecuted"] = True
    return part


def ui_thread(choose: Callable[[Sequence[Any]], Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [user("m0", "start")]
    count = 0
    rounds = choose((1, 2, 3))
    for r in range(rounds):
        parts: list[dict[str, Any]] = [{"type": "step-start"}]
        for _ in range(choose((1, 2, 3))):
            parts.append(tool_part(choose, count))
            count += 1
            if choose((False, False, True)):
                parts.append({"type": "step-start"})
        if choose((True, False)):
            parts.append({"type": "text", "text": "done", "state": "done"})
        items.append({"id": f"a{r}", "role": "assistant", "parts": parts})
        if r + 1 < rounds or choose((True, False)):
            items.append(user(f"u{r}", f"next {r}"))
    return items


@st.composite
def ui_threads(draw: st.DrawFn) -> list[dict[str, Any]]:
    return ui_thread(lambda options: draw(st.sampled_from(options)))


@given(items=ui_threads())
def test_repair_invariants(items: list[dict[str, Any]]) -> None:
    plan, repaired, result = answered_in_place(AI_SDK, items)

    index = AI_SDK.index(result)
    answered = {o.at for o in index.outputs}
    assert all(c.at in answered or AI_SDK.is_pending(index, c, result) for c in index.calls)

    edited = {e.call.at for e in plan.edits}
    assert len(result) == len(items)
    for m, (before, after) in enumerate(zip(items, result, strict=True)):
        if not any(at[0] == m for at in edited):
            assert after is before, "a message no edit touched was copied"
            continue
        assert {k: v for k, v in after.items() if k != "parts"} == {k: v for k, v in before.items() if k != "parts"}
        for p, (old, new) in enumerate(zip(before["parts"], after["parts"], strict=True)):
            if (m, p) not in edited:
                assert new is old
                continue
            assert new["state"] in ("output-error", "output-denied")
            assert {k: v for k, v in new.items() if k not in ANSWER_KEYS} == {k: v for k, v in old.items() if k not in ANSWER_KEYS}
            if new["state"] == "output-denied":
                assert new["approval"]["id"] == old["approval"]["id"] and new["approval"]["approved"] is False

    if repaired is not None:
        # a denial that already has the user's reason keeps it (the words the SDK itself would send)
        ours = [e for e in plan.edits if not _parts_reason(items, e.call.at)]
        assert_written_outputs_read_back(AI_SDK, replace_struct(plan, edits=tuple(ours)), repaired)
    assert_quick_healthy_is_sound(AI_SDK, items)
    assert repair_items(result, AI_SDK)[1] is None


def render(conv: threadgen.Conversation) -> list[dict[str, Any]]:
    """A threadgen conversation as UIMessages: an answered call is an output-available part, the rest input-available."""
    items = [user("m0", "start")]
    for r, rnd in enumerate(conv.rounds):
        parts = [tool(c.call_id, "output-available", output=f"result of {c.call_id}") if c.answered
                 else tool(c.call_id, "input-available") for c in rnd.calls]
        items.append(assistant(f"a{r}", *parts, *([{"type": "text", "text": "ok"}] if rnd.text_after else [])))
        if rnd.user_after:
            items.append(user(f"u{r}", f"next {r}"))
    return items


@given(conversation=threadgen.conversations())
def test_reads_like_the_openai_chat_twin(conversation: threadgen.Conversation) -> None:
    # one part holds call and output: duplicates, misplaced and orphan outputs have no UIMessage form
    plain = replace(conversation, orphans=(), rounds=tuple(
        replace(rnd, calls=tuple(replace(c, duplicated=False, misplaced=False) for c in rnd.calls)) for rnd in conversation.rounds))
    same_reading_as_chat(AI_SDK, render(plain), threadgen.chat(plain))


def _parts_reason(items: list[dict[str, Any]], at: tuple[int, int]) -> Any:
    approval = items[at[0]]["parts"][at[1]].get("approval")
    return approval.get("reason") if isinstance(approval, dict) and approval.get("approved") is False else None


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_cli_repairs_the_samples_into_threads_the_sdk_accepts(sample: Path, tmp_path: Path) -> None:
    for items in repair_sample_with_cli(sample, tmp_path, AI_SDK):
        for message in items:
            for part in message["parts"]:
                if part.get("state") in OUTPUT_STATES - {"output-available"} and "errorText" in part:
                    assert json.loads(part["errorText"])[MARKER_KEY] == MARKER


# --------------------------------------------------------------------------- the real `ai` package


def _sdk_judgements(threads: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    probe = subprocess.run([node, "-e", "require('ai'); require('ai/test')"], capture_output=True, timeout=60,
                           check=False)
    if probe.returncode != 0:
        pytest.skip("the `ai` npm package is not on NODE_PATH")
    result = subprocess.run([node, str(CHECKER)], input=json.dumps(threads).encode(), capture_output=True,
                            timeout=120, env=os.environ, check=False)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def _what_check_says(items: list[dict[str, Any]]) -> str:
    rules = {v.rule for v in AI_SDK.check(items)}
    if "invalid-ui-message" in rules:
        return "AI_TypeValidationError"
    return "AI_MissingToolResultsError" if "missing-tool-results" in rules else "ok"


def test_the_oracle_agrees_with_the_real_sdk_and_repaired_threads_pass_it(tmp_path: Path) -> None:
    rng = random.Random(6)
    originals = [ui_thread(rng.choice) for _ in range(300)]
    originals += [items for sample in SAMPLES for items in repair_sample_with_cli(sample, tmp_path / sample.stem, AI_SDK)]
    repaired = [repair_items(items, AI_SDK)[1] for items in originals]
    judged = _sdk_judgements(originals + [r for r in repaired if r is not None])
    verdicts = [j["name"] if not j["ok"] else "ok" for j in judged]
    assert verdicts[:len(originals)] == [_what_check_says(items) for items in originals]
    assert set(verdicts[len(originals):]) == {"ok"}, [j for j in judged[len(originals):] if not j["ok"]][:3]
    assert verdicts.count("AI_MissingToolResultsError") > 50  # the generator does make stuck threads


def test_an_approval_answered_with_answer_waiting_passes_the_real_sdk() -> None:
    """A thread that ends on an approval request waits; --answer-waiting denies it, and the SDK takes that."""
    from threadfix.repair import RepairOptions, waiting_on

    case = json.loads((Path(__file__).parent / "cases" / "ai-sdk" / "approval-requested-last-part-waits.json").read_text())
    plan, _ = repair_items(case["input"], AI_SDK)
    assert waiting_on(plan) is not None
    plan, repaired = repair_items(case["input"], AI_SDK, RepairOptions(answer_waiting=True))
    assert waiting_on(plan) is None and repaired[-1]["parts"][-1]["state"] == "output-denied"
    assert _sdk_judgements([repaired]) == [{"ok": True}]
