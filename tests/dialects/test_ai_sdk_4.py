"""The ai-sdk-4 dialect: a tool invocation carries call and result; repair gives a dangling one a result.

The oracle (``check``) is compared with AI SDK 4's own ``convertToCoreMessages`` on the same threads when node
and the package are available (``NODE_PATH`` holding AI SDK 4 as ``ai4``: ``npm install ai4@npm:ai@4``).
"""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.dialects.wire_checks import (
    ROOT,
    answered_in_place,
    assert_never_crashes,
    assert_quick_healthy_is_sound,
    assert_written_outputs_read_back,
    hostile_threads,
    repair_sample_with_cli,
)
from threadfix import dialects
from threadfix.failures import MARKER, MARKER_KEY
from threadfix.repair import repair_items

AI_SDK_4 = dialects.get("ai-sdk-4")
SAMPLES = sorted((ROOT / "sample_threads" / "ai-sdk-4").iterdir())
CHECKER = Path(__file__).parent / "ai_sdk_4_check.cjs"
STATES = ("partial-call", "call", "result")


def invocation(call_id: str, state: str, step: int = 0, **extra: Any) -> dict[str, Any]:
    found = {"state": state, "step": step, "toolCallId": call_id, "toolName": "search", "args": {"q": "x"}, **extra}
    if state == "result" and "result" not in found:
        found["result"] = {"hits": 1}
    return found


def user(message_id: str, text: str, parts: bool = True) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": text, **({"parts": [{"type": "text", "text": text}]} if parts else {})}


def assistant(message_id: str, *invocations: dict[str, Any], shape: str = "both") -> dict[str, Any]:
    """An assistant message as 4.2+ stores it (``both``: parts and the deprecated copy), as 4.0 did (``listed``),
    or with parts only (``parts``)."""
    message: dict[str, Any] = {"id": message_id, "role": "assistant", "content": ""}
    if shape in ("both", "listed"):
        message["toolInvocations"] = [copy.deepcopy(i) for i in invocations]
    if shape in ("both", "parts"):
        message["parts"] = [{"type": "step-start"}, *({"type": "tool-invocation", "toolInvocation": copy.deepcopy(i)}
                                                      for i in invocations)]
    return message


@pytest.mark.parametrize(("items", "score"), [
    ([user("u", "hi"), assistant("a", invocation("c1", "call"))], 100),
    ([user("u", "hi", parts=False), assistant("a", invocation("c1", "result"), shape="listed")], 100),
    ([user("u", "hi"), {"id": "a", "role": "assistant", "content": "hello", "parts": [{"type": "text", "text": "hello"}]}], 0),
    # AI SDK 5+ tool parts carry their fields at the top: not this format
    ([{"id": "a", "role": "assistant", "parts": [{"type": "tool-search", "toolCallId": "c", "state": "input-available"}]}], 0),
    ([{"role": "user", "content": "chat"}, {"role": "assistant", "tool_calls": []}], 0),
    ([{"role": "tool", "content": "x", "toolInvocations": []}], 0),
])
def test_sniff(items: list[Any], score: int) -> None:
    assert AI_SDK_4.sniff(items) == score


def test_an_answered_invocation_without_an_id_is_neither_a_call_nor_an_output() -> None:
    """Nothing to pair and nothing to do; an open one without an id is still a call (repair refuses it)."""
    def without_id(state: str) -> dict[str, Any]:
        return {k: v for k, v in invocation("x", state).items() if k != "toolCallId"}

    items = [user("u", "go"), assistant("a", without_id("result"), invocation("c2", "call"), without_id("call"))]
    index = AI_SDK_4.index(items)
    assert [(c.call_id, c.at) for c in index.calls] == [("c2", (1, 2)), (None, (1, 3))]
    assert index.outputs == ()
    plan, _ = repair_items(items, AI_SDK_4)
    assert [e.call_id for e in plan.edits] == ["c2"] and [s.call_id for s in plan.skips] == [None]


def test_check_speaks_the_sdk_words() -> None:
    stuck = invocation("c2", "call", step=1)
    items = [user("u", "go"), assistant("a", invocation("c1", "result"), stuck)]
    assert [(v.at, v.call_id, v.message) for v in AI_SDK_4.check(items)] == [
        (1, "c2", "ToolInvocation must have a result: " + json.dumps(stuck, separators=(",", ":")))]


def test_the_parts_are_what_the_sdk_reads_when_a_message_has_them() -> None:
    message = assistant("a", invocation("c1", "call"))
    message["toolInvocations"][0]["result"] = "only in the deprecated copy"
    assert [v.call_id for v in AI_SDK_4.check([user("u", "go"), message])] == ["c1"]
    del message["parts"]  # the deprecated copy is read when there are no parts
    assert AI_SDK_4.check([user("u", "go"), message]) == []
    del message["toolInvocations"][0]["result"]
    assert [v.call_id for v in AI_SDK_4.check([user("u", "go"), message])] == ["c1"]
    message["parts"] = []  # parts, even none, are read instead of toolInvocations
    assert AI_SDK_4.check([user("u", "go"), message]) == []


def test_repair_answers_both_copies_of_the_call_the_same_way() -> None:
    items = [user("u", "go"), assistant("a", invocation("c1", "result"), invocation("c2", "call", step=1)), user("v", "?")]
    _, repaired = repair_items(items, AI_SDK_4)
    assert repaired is not None and AI_SDK_4.check(repaired) == []
    message = repaired[1]
    in_parts = message["parts"][2]["toolInvocation"]
    assert in_parts == message["toolInvocations"][1]
    assert in_parts["state"] == "result" and in_parts["result"][MARKER_KEY] == MARKER
    assert in_parts["result"]["error"]["cause"] == "user_moved_on"
    assert message["toolInvocations"][0] == items[1]["toolInvocations"][0]
    assert repaired[0] is items[0] and repaired[2] is items[2]


# --------------------------------------------------------------------------- generated threads


def v4_thread(choose: Callable[[Sequence[Any]], Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [user("m0", "start", parts=choose((True, False)))]
    count = 0
    rounds = choose((1, 2, 3))
    for r in range(rounds):
        invocations = []
        for step in range(choose((1, 2))):
            for _ in range(choose((1, 2))):
                invocations.append(invocation(f"call_{count:03d}", choose(STATES), step))
                count += 1
        items.append(assistant(f"a{r}", *invocations, shape=choose(("both", "both", "listed", "parts"))))
        if r + 1 < rounds or choose((True, False)):
            items.append(user(f"u{r}", f"next {r}", parts=choose((True, False))))
    return items


@st.composite
def v4_threads(draw: st.DrawFn) -> list[dict[str, Any]]:
    return v4_thread(lambda options: draw(st.sampled_from(options)))


@given(items=v4_threads())
def test_repair_invariants(items: list[dict[str, Any]]) -> None:
    plan, repaired, result = answered_in_place(AI_SDK_4, items)
    assert len(plan.edits) == len(AI_SDK_4.check(items))
    edited = {e.call.at[0] for e in plan.edits}
    for m, (before, after) in enumerate(zip(items, result, strict=True)):
        if m not in edited:
            assert after is before, "a message no edit touched was copied"
            continue
        assert {k: v for k, v in after.items() if k not in ("parts", "toolInvocations")} == \
               {k: v for k, v in before.items() if k not in ("parts", "toolInvocations")}
        if "parts" in after and "toolInvocations" in after:  # both copies say the same
            assert [p["toolInvocation"] for p in after["parts"] if p["type"] == "tool-invocation"] == after["toolInvocations"]
        for key in ("parts", "toolInvocations"):
            if key in before:
                assert len(after[key]) == len(before[key])
    if repaired is not None:
        assert_written_outputs_read_back(AI_SDK_4, plan, repaired)
    assert_quick_healthy_is_sound(AI_SDK_4, items)
    assert repair_items(result, AI_SDK_4)[1] is None


@given(items=hostile_threads(("id", "role", "content", "parts", "toolInvocations", "user", "assistant", "system", "data",
                              "type", "text", "step-start", "tool-invocation", "toolInvocation", "state", "partial-call",
                              "call", "result", "step", "toolCallId", "toolName", "args")))
def test_hostile_items_never_crash(items: list[Any]) -> None:
    assert_never_crashes(AI_SDK_4, items)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_cli_repairs_the_samples(sample: Path, tmp_path: Path) -> None:
    threads = repair_sample_with_cli(sample, tmp_path, AI_SDK_4)
    copies = [(i, "listed") for items in threads for message in items for i in message.get("toolInvocations", ())]
    copies += [(part["toolInvocation"], "parts") for items in threads for message in items
               for part in message.get("parts", ()) if part["type"] == "tool-invocation"]
    written = {(i["toolCallId"], where) for i, where in copies if i["result"].get(MARKER_KEY) == MARKER}
    # the 4.2 thread's call in both copies, the 4.0 thread's in its only one
    assert written == {("call_b7", "listed"), ("call_b7", "parts"), ("call_s3", "listed")}


# --------------------------------------------------------------------------- the real `ai` package, version 4


def _sdk_judgements(threads: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    probe = subprocess.run([node, "-e", "require('ai4')"], capture_output=True, timeout=60, check=False)
    if probe.returncode != 0:
        pytest.skip("AI SDK 4 is not on NODE_PATH as `ai4`")
    result = subprocess.run([node, str(CHECKER)], input=json.dumps(threads).encode(), capture_output=True,
                            timeout=120, env=os.environ, check=False)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def test_the_oracle_agrees_with_the_real_sdk_and_repaired_threads_pass_it(tmp_path: Path) -> None:
    rng = random.Random(4)
    originals = [v4_thread(rng.choice) for _ in range(300)]
    originals += [items for sample in SAMPLES for items in repair_sample_with_cli(sample, tmp_path / sample.stem, AI_SDK_4)]
    repaired = [repair_items(items, AI_SDK_4)[1] for items in originals]
    judged = _sdk_judgements(originals + [r for r in repaired if r is not None])
    verdicts = ["ok" if j["ok"] else j["name"] for j in judged]
    assert verdicts[:len(originals)] == ["AI_MessageConversionError" if AI_SDK_4.check(items) else "ok"
                                         for items in originals]
    assert set(verdicts[len(originals):]) == {"ok"}, [j for j in judged[len(originals):] if not j["ok"]][:3]
    assert verdicts.count("AI_MessageConversionError") > 50  # the generator does make stuck threads
