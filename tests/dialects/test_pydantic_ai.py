"""The pydantic-ai dialect: request/response parts, the next-request rule, and the real pydantic-ai-slim.

The real-library tests run agents on a ``FunctionModel`` (offline, no API) until a tool call is left
without a result, dump the history with ``ModelMessagesTypeAdapter``, repair it, and load it back with
the same adapter into a new run.
"""

from __future__ import annotations

import asyncio
import copy
import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.core import threadgen
from tests.core.test_cases import test_case as run_case
from tests.dialects.chat_parity import assert_reads_like_chat
from tests.dialects.wire_checks import assert_sound_repair, threadfix_cli
from threadfix import dialects
from threadfix.dialects.pydantic_ai import is_result
from threadfix.failures import MARKER, MARKER_KEY, Kind
from threadfix.model import Action
from threadfix.repair import RepairOptions, plan_repair, repair_items, waiting_on

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_threads" / "pydantic-ai"
CASES = sorted((Path(__file__).parent / "cases" / "pydantic-ai").glob("*.json"))
PA = dialects.get("pydantic-ai")
STAMP = "2026-03-01T10:00:00Z"


def request(*parts: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"parts": list(parts), "timestamp": STAMP, "kind": "request", **fields}


def response(*parts: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"parts": list(parts), "model_name": "function:model:", "timestamp": STAMP, "kind": "response", **fields}


def user(text: str) -> dict[str, Any]:
    return {"content": text, "timestamp": STAMP, "part_kind": "user-prompt"}


def text(words: str) -> dict[str, Any]:
    return {"content": words, "part_kind": "text"}


def call(call_id: str, name: str = "search", args: Any = None) -> dict[str, Any]:
    return {"tool_name": name, "args": {} if args is None else args, "tool_call_id": call_id, "part_kind": "tool-call"}


def ret(call_id: str, content: Any = "ok", name: str = "search", **fields: Any) -> dict[str, Any]:
    return {"tool_name": name, "content": content, "tool_call_id": call_id, "timestamp": STAMP,
            "part_kind": "tool-return", **fields}


# --------------------------------------------------------------------------- sniffing and indexing


def test_a_history_is_recognised_and_nothing_else_is() -> None:
    assert dialects.sniff([request(user("hi")), response(call("c1"))]) is PA
    assert PA.sniff([]) == 0
    assert PA.sniff([{"kind": "request", "parts": "not a list"}]) == 0
    assert PA.sniff([{"kind": "request", "parts": [{"content": "no part_kind"}]}]) == 0
    assert PA.sniff([{"role": "user", "content": "hi"}]) == 0


def test_samples_of_other_dialects_are_not_taken_for_pydantic_ai() -> None:
    from threadfix.batch import Problem, scan

    others = [p for p in (ROOT / "sample_threads").rglob("*.json*") if p.parent.name != "pydantic-ai"]
    for scanned in scan([str(p) for p in others]):
        assert not isinstance(scanned, Problem)
        assert scanned.dialect is None or scanned.dialect.name != "pydantic-ai", scanned.thread.address


def test_calls_and_every_kind_of_result_are_indexed() -> None:
    items = [
        request(user("go")),
        response(text("calling"), call("a"), call("b", args='{"q": 1}'), call("c", args={"args_json": "{\"x\""}),
                 call("d"), call("e"), call("f"), {"tool_name": "web_search", "tool_call_id": "n1", "part_kind": "builtin-tool-call"}),
        request(ret("a", outcome="success"), ret("b", outcome="failed"), ret("c", outcome="retried"),
                {"content": "fix it", "tool_name": "search", "tool_call_id": "d", "part_kind": "retry-prompt"},
                {"content": "not a tool result", "tool_call_id": "e", "part_kind": "retry-prompt"},
                ret("f", "The user said no.", outcome="denied")),
    ]
    index = PA.index(items)
    assert [(c.call_id, c.at, c.arguments) for c in index.calls] == [
        ("a", (1, 1), {}), ("b", (1, 2), '{"q": 1}'), ("c", (1, 3), '{"x"'), ("d", (1, 4), {}), ("e", (1, 5), {}),
        ("f", (1, 6), {})]
    assert [(o.call_id, o.wire_type, o.is_error, o.status) for o in index.outputs] == [
        ("a", "tool-return", None, None), ("b", "tool-return", True, "failed"), ("c", "tool-return", True, "retried"),
        ("d", "retry-prompt", True, "retried"), ("f", "tool-return", None, "denied")]
    assert (index.user_turns, index.model_turns) == ((0,), (1,))
    assert [v.call_id for v in PA.check(items)] == ["e"]


@pytest.mark.parametrize(("fields", "args", "kind"), [
    ({"finish_reason": "length"}, {"p": 1}, Kind.TRUNCATED),
    ({"state": "interrupted"}, '{"p": "/tm', Kind.TRUNCATED),
    ({"state": "interrupted"}, {"p": 1}, Kind.ABORTED),
    ({}, '{"p": "/tm', Kind.MALFORMED_ARGUMENTS),
])
def test_what_the_response_says_decides_the_kind(fields: dict, args: Any, kind: Kind) -> None:
    plan, _ = repair_items([request(user("go")), response(call("c1", args=args), **fields)], PA)
    assert [e.kind for e in plan.edits] == [kind]


# --------------------------------------------------------------------------- placement and output shape


def test_the_answer_goes_after_the_results_and_before_the_user_prompt() -> None:
    items = [request(user("go")), response(call("a"), call("b"), timestamp="2026-03-01T09:59:00Z"),
             request(ret("a"), user("hurry"))]
    _, repaired = repair_items(items, PA)
    parts = repaired[2]["parts"]
    assert [p["part_kind"] for p in parts] == ["tool-return", "tool-return", "user-prompt"]
    synthetic = parts[1]
    assert synthetic == {
        "tool_name": "search", "content": synthetic["content"], "tool_call_id": "b",
        "metadata": {"pydantic_ai_synthesized_tool_return": True, MARKER_KEY: MARKER},
        "timestamp": "2026-03-01T09:59:00Z", "outcome": "interrupted", "part_kind": "tool-return"}
    assert synthetic["content"]["error"]["cause"] == "user_moved_on"
    assert repaired[:2] == items[:2] and repaired[0] is items[0] and repaired[1] is items[1]
    assert parts[0] is items[2]["parts"][0] and parts[2] is items[2]["parts"][1]


def test_a_new_request_is_made_when_a_response_follows_or_nothing_does() -> None:
    items = [request(user("go")), response(call("a")), response(text("moving on")), response(call("b"))]
    _, repaired = repair_items(items, PA)
    assert [m["kind"] for m in repaired] == ["request", "response", "request", "response", "response", "request"]
    assert repaired[2] == {"parts": [repaired[2]["parts"][0]], "timestamp": STAMP, "kind": "request"}
    assert PA.check(repaired) == []


def test_a_result_two_turns_late_is_moved_next_to_its_call() -> None:
    items = [request(user("go")), response(call("a")), request(user("still there?")), response(text("yes")),
             request(ret("a"))]
    _, repaired = repair_items(items, PA)
    assert repaired == [items[0], items[1], {**items[2], "parts": [ret("a"), user("still there?")]}, items[3]]


def test_consecutive_requests_are_one_turn() -> None:
    """Pydantic AI merges them before sending, so a result in the second one is where it belongs."""
    items = [request(user("go")), response(call("a")), request(user("hurry")), request(ret("a"))]
    assert PA.check(items) == []
    assert repair_items(items, PA)[1] is None


def test_the_call_keeps_its_tool_kind_on_the_answer() -> None:
    items = [request(user("go")), response({**call("a"), "tool_kind": "tool-search"})]
    _, repaired = repair_items(items, PA)
    assert repaired[2]["parts"][0]["tool_kind"] == "tool-search"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path: Path) -> None:
    run_case(path)


def test_there_are_cases() -> None:
    assert len(CASES) >= 5


# --------------------------------------------------------------------------- generated threads


def render(conv: threadgen.Conversation) -> list[dict[str, Any]]:
    """The conversation as Pydantic AI stores it; mirrors ``threadgen.chat`` output for output."""
    items: list[dict[str, Any]] = [request(user("start"))]
    late: list[dict[str, Any]] = []
    for r, rnd in enumerate(conv.rounds):
        items.append(response(text("calling"), *(call(c.call_id, c.name, c.arguments) for c in rnd.calls)))
        parts, late = late, []
        for c in rnd.calls:
            if c.answered and c.misplaced:
                late.append(ret(c.call_id, f"result of {c.call_id}", c.name))
            elif c.answered:
                parts.append(ret(c.call_id, f"result of {c.call_id}", c.name))
            if c.answered and c.duplicated:
                parts.append(ret(c.call_id, f"again {c.call_id}", c.name))
        parts.extend(ret(f"orphan_{r}_{i}", "lost") for i, at in enumerate(conv.orphans) if at == r)
        if rnd.text_after:
            if parts:
                items.append(request(*parts))
            items.append(response(text("ok")))
            parts, late = late, []
        if rnd.user_after:
            parts.append(user(f"next {r}"))
        if parts:
            items.append(request(*parts))
    if late:
        items.append(request(*late))
    return items


@given(conversation=threadgen.conversations())
def test_repair_makes_generated_threads_acceptable_and_loses_nothing(conversation) -> None:
    items = render(conversation)
    assert dialects.sniff(items) is PA
    plan, repaired = assert_sound_repair(PA, items, content_key="parts", is_output=is_result)
    if repaired is not None:
        touched = {e.output.at[0] for e in plan.edits if e.output is not None} | {
            e.call.at[0] + 1 for e in plan.edits if e.call is not None}
        assert all(any(m is r for r in repaired) for i, m in enumerate(items) if i not in touched)
        assert orjson.dumps(repair_items(copy.deepcopy(items), PA)[1]) == orjson.dumps(repaired)


@given(conversation=threadgen.conversations())
def test_the_index_and_plan_match_the_equivalent_openai_chat_thread(conversation) -> None:
    """One shape differs by the providers' own rules, not by reading: a result that follows the next user
    prompt with no response in between is in place for Pydantic AI (it merges consecutive requests) and
    misplaced for OpenAI Chat; ``test_consecutive_requests_are_one_turn`` covers it.
    """
    last = conversation.rounds[-1]
    assume(not (last.user_after and not last.text_after and any(c.answered and c.misplaced for c in last.calls)))
    assert_reads_like_chat(PA, render(conversation), conversation)


# --------------------------------------------------------------------------- the real library


@pytest.fixture()
def pai():
    """The pieces of pydantic-ai the tests use."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent, ModelMessagesTypeAdapter, capture_run_messages, messages
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models.function import FunctionModel

    class Lib:
        pass

    lib = Lib()
    lib.Agent, lib.Adapter, lib.capture, lib.m, lib.FunctionModel, lib.UserError = (
        Agent, ModelMessagesTypeAdapter, capture_run_messages, messages, FunctionModel, UserError)
    return lib


def _parts_of(history: list[Any]) -> list[tuple[str, Any]]:
    return [(type(message).__name__, part) for message in history for part in message.parts]


def _continue(pai, history: list[Any], prompt: str | None) -> list[Any]:
    """Run a new agent on ``history`` and return what the model was sent."""
    seen: list[Any] = []

    def model(messages: list[Any], info: Any) -> Any:
        seen.extend(messages)
        return pai.m.ModelResponse(parts=[pai.m.TextPart("done")])

    agent = pai.Agent(pai.FunctionModel(model))

    @agent.tool_plain
    def deploy(env: str) -> str:
        return "deployed"

    assert agent.run_sync(prompt, message_history=history).output == "done"
    return seen


def _repaired_history(pai, history: list[Any]) -> tuple[Any, list[Any], list[Any]]:
    items = json.loads(pai.Adapter.dump_json(history))
    plan, repaired = repair_items(items, PA)
    assert repaired is not None and PA.check(repaired) == []
    loaded = pai.Adapter.validate_json(json.dumps(repaired))
    # every original part is still there, equal, in order
    remaining = iter(_parts_of(loaded))
    assert all(any(p == q for q in remaining) for p in _parts_of(history))
    # pydantic-ai's own repair finds nothing left to close out
    rerepaired = pai.m.repair_messages(loaded)
    assert not any(getattr(p, "content", None) == pai.m.INTERRUPTED_TOOL_RETURN_CONTENT for _, p in _parts_of(rerepaired))
    return plan, repaired, loaded


def test_a_run_ended_by_a_raising_tool_is_accepted_and_continues(pai) -> None:
    def model(messages: list[Any], info: Any) -> Any:
        return pai.m.ModelResponse(parts=[pai.m.ToolCallPart("deploy", {"env": "staging"}, tool_call_id="call_s"),
                                          pai.m.ToolCallPart("deploy", {"env": "prod"}, tool_call_id="call_p")])

    agent = pai.Agent(pai.FunctionModel(model))

    @agent.tool_plain(sequential=True)  # staging answers before prod raises; run together, the raise could cancel it
    def deploy(env: str) -> str:
        if env == "prod":
            raise RuntimeError("worker killed")
        return "staging deployed"

    with pai.capture() as history, pytest.raises(RuntimeError):
        agent.run_sync("Deploy everywhere.")
    plan, _, loaded = _repaired_history(pai, history)
    assert [(e.call_id, e.kind) for e in plan.edits] == [("call_p", Kind.ABORTED)]
    answer = loaded[-1].parts[-1]
    assert isinstance(answer, pai.m.ToolReturnPart)
    assert (answer.tool_call_id, answer.outcome) == ("call_p", "interrupted")
    assert answer.metadata[MARKER_KEY] == MARKER and answer.timestamp == history[1].timestamp
    sent = _continue(pai, loaded, "What happened?")
    assert any(getattr(p, "tool_call_id", None) == "call_p" and getattr(p, "outcome", None) == "interrupted"
               for _, p in _parts_of(sent))


def _stopped_before_the_tool_ran(pai, parts: list[Any], **fields: Any) -> list[Any]:
    agent = pai.Agent(pai.FunctionModel(lambda messages, info: pai.m.ModelResponse(parts=parts, **fields)))

    @agent.tool_plain
    def deploy(env: str) -> str:
        return "deployed"

    async def run() -> list[Any]:
        async with agent.iter("Deploy prod.") as agent_run:
            async for node in agent_run:
                if pai.Agent.is_call_tools_node(node):
                    break  # the process stopped here
            return agent_run.all_messages()

    return asyncio.run(run())


def test_a_cancelled_run_no_longer_refuses_a_new_prompt(pai) -> None:
    history = _stopped_before_the_tool_ran(pai, [pai.m.ToolCallPart("deploy", {"env": "prod"}, tool_call_id="call_1")])
    stored = pai.Adapter.validate_json(pai.Adapter.dump_json(history))
    with pytest.raises(pai.UserError, match="unprocessed tool calls"):
        _continue(pai, stored, "Status?")
    plan, repaired, loaded = _repaired_history(pai, history)
    assert [(e.call_id, e.cause) for e in plan.edits] == [("call_1", "thread_ended")]
    # (stored as a run that ended in DeferredToolRequests is: it waits, and only --answer-waiting writes this)
    assert waiting_on(plan) is not None
    assert repaired[-1]["kind"] == "request" and repaired[-1]["timestamp"] == repaired[-2]["timestamp"]
    _continue(pai, loaded, "Status?")


def _deferred_run(pai) -> tuple[Any, list[Any]]:
    """A run that ends in DeferredToolRequests: ``delete`` needs approval, ``look`` runs; the real library's history."""
    from pydantic_ai import DeferredToolRequests

    def model(messages: list[Any], info: Any) -> Any:
        if any(isinstance(p, pai.m.ToolReturnPart) and p.tool_name == "delete" for m in messages for p in m.parts):
            return pai.m.ModelResponse(parts=[pai.m.TextPart("deleted")])
        return pai.m.ModelResponse(parts=[pai.m.ToolCallPart("delete", {"path": "a"}, tool_call_id="call_d"),
                                          pai.m.ToolCallPart("look", {}, tool_call_id="call_l")])

    agent = pai.Agent(pai.FunctionModel(model), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete(path: str) -> str:
        return "deleted"

    @agent.tool_plain
    def look() -> str:
        return "seen"

    result = agent.run_sync("Delete a.")
    assert isinstance(result.output, DeferredToolRequests)
    return agent, result.all_messages()


def test_a_run_waiting_for_approval_is_left_whole_and_resumes(pai) -> None:
    from pydantic_ai import DeferredToolResults

    agent, history = _deferred_run(pai)
    items = json.loads(pai.Adapter.dump_json(history))
    plan, _ = repair_items(items, PA)
    assert waiting_on(plan) is not None and waiting_on(plan).call_id == "call_d"
    # left whole, the stored history resumes with the approval, as the app does
    stored = pai.Adapter.validate_json(json.dumps(items))
    resumed = agent.run_sync(message_history=stored, deferred_tool_results=DeferredToolResults(approvals={"call_d": True}))
    assert resumed.output == "deleted"
    # the user moved on instead: stuck, answered, and a new prompt is accepted
    moved_on = [*items, {"parts": [{"content": "never mind", "part_kind": "user-prompt"}], "kind": "request"}]
    plan, repaired = repair_items(moved_on, PA)
    assert waiting_on(plan) is None and [(e.call_id, e.cause) for e in plan.edits] == [("call_d", "user_moved_on")]
    _continue(pai, pai.Adapter.validate_json(json.dumps(repaired)), "Status?")
    # --answer-waiting: the approval will never come; answered where it waits
    plan, repaired = repair_items(items, PA, RepairOptions(answer_waiting=True))
    assert waiting_on(plan) is None and [e.call_id for e in plan.edits] == ["call_d"]
    _continue(pai, pai.Adapter.validate_json(json.dumps(repaired)), "Status?")


def test_a_response_cut_off_at_its_limit_is_truncated(pai) -> None:
    history = _stopped_before_the_tool_ran(
        pai, [pai.m.ToolCallPart("deploy", '{"env": "pr', tool_call_id="call_1")], finish_reason="length")
    plan, _, loaded = _repaired_history(pai, history)
    assert [e.kind for e in plan.edits] == [Kind.TRUNCATED]
    _continue(pai, loaded, "Try again.")


def test_an_orphan_result_is_kept_as_a_user_prompt_that_loads(pai) -> None:
    items = [request(user("go")), response(text("hi")), request(ret("gone", "late result"), user("and?"))]
    _, repaired = repair_items(items, PA)
    loaded = pai.Adapter.validate_json(json.dumps(repaired))
    prompt = loaded[2].parts[0]
    assert isinstance(prompt, pai.m.UserPromptPart) and "gone" in prompt.content and "late result" in prompt.content


def test_a_legacy_retry_prompt_answers_its_call(pai) -> None:
    items = [request(user("go")), response(call("a")),
             request({"content": "bad args", "tool_name": "search", "tool_call_id": "a", "timestamp": STAMP,
                      "part_kind": "retry-prompt"})]
    plan, repaired = repair_items(items, PA)
    assert repaired is None and not plan.edits
    assert PA.check(items) == []
    pai.Adapter.validate_json(json.dumps(items))


# --------------------------------------------------------------------------- samples and the CLI


def test_the_samples_are_stuck_and_come_out_of_the_cli_accepted(tmp_path: Path, pai) -> None:
    copy_dir = tmp_path / "pydantic-ai"
    shutil.copytree(SAMPLES, copy_dir)
    result = threadfix_cli("repair", "--min-age", "0", "pydantic-ai", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines() == [
        ("pydantic-ai/sessions.jsonl:2:id=sess_cancelled#1.0: add error output for call_rf2 (read_file): aborted, the "
         "thread ends on this call"),
        ("pydantic-ai/sessions.jsonl:3:id=sess_cut_off#1.0: add error output for call_rf3 (read_file): truncated, the "
         "turn stopped at its output limit during this call"),
        "pydantic-ai/tool-raised.json#1.2: add error output for call_dep2 (deploy): aborted, the thread ends on this call",
    ]
    assert result.stderr.decode().startswith("threadfix: repaired 3 of 4 threads (3 insert output)")
    histories = [json.loads(line)["messages"] for line in (copy_dir / "sessions.jsonl").read_text().splitlines()]
    histories.append(json.loads((copy_dir / "tool-raised.json").read_text()))
    for items in histories:
        assert PA.check(items) == []
        _continue(pai, pai.Adapter.validate_json(json.dumps(items)), "Go on.")


# --------------------------------------------------------------------------- hostile input

#: any JSON value a field may hold, unhashable ones included (flat: nesting adds cost, not coverage)
JSON = (st.none() | st.booleans() | st.integers() | st.text(max_size=6)
        | st.lists(st.integers() | st.text(max_size=3), max_size=2) | st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))
PART = st.fixed_dictionaries(
    {"part_kind": st.sampled_from(["tool-call", "tool-return", "retry-prompt", "user-prompt", "text"])},
    optional={"tool_call_id": st.sampled_from(["a", "b"]) | JSON, "tool_name": JSON, "args": JSON, "content": JSON,
              "outcome": JSON, "metadata": JSON, "timestamp": JSON, "tool_kind": JSON})
HOSTILE = st.lists(st.fixed_dictionaries({"kind": st.sampled_from(["request", "response"]), "parts": st.lists(PART, max_size=3)},
                                         optional={"timestamp": JSON, "finish_reason": JSON, "state": JSON}), max_size=5)


@given(items=HOSTILE)
def test_hostile_items_never_crash_reading_or_repair(items: list[Any]) -> None:
    assert PA.sniff(items) == (100 if items else 0)
    PA.check(items)
    plan, repaired = repair_items(items, PA)
    if repaired is not None and not plan.skips:
        assert repair_items(repaired, PA)[1] is None


@given(conversation=threadgen.conversations(), interrupted=st.booleans())
def test_a_history_ending_on_open_calls_waits_unless_it_says_it_was_cut_off(conversation, interrupted: bool) -> None:
    """Generated histories: the thread waits exactly when the last response has an open call and nothing after
    it is a new prompt or says the run was interrupted (Pydantic AI's own rule for its tail); lint agrees, and
    --answer-waiting plans the same edits as the thread would get once stuck."""
    from threadfix.lint import LintOptions, lint_items

    items = render(conversation)
    if interrupted:
        items = [*items[:-1], {**items[-1], "state": "interrupted"}]
    plan = plan_repair(PA.index(items), PA, items)
    last = max(m for m, message in enumerate(items) if message["kind"] == "response")
    open_calls = {e.call_id for e in plan.edits if e.action is Action.INSERT_OUTPUT and e.call.at[0] == last}
    after = items[last + 1:]
    cut_off = interrupted or any(p["part_kind"] == "user-prompt" for message in after for p in message["parts"])
    expected_wait = bool(open_calls) and not cut_off and items[last].get("finish_reason") != "length"
    assert (waiting_on(plan) is not None) is expected_wait
    findings = lint_items(items, "pydantic-ai", LintOptions(select=("TF001",)))
    assert (findings == []) is (expected_wait or not any(e.action is Action.INSERT_OUTPUT for e in plan.edits))
    answered = plan_repair(PA.index(items), PA, items, RepairOptions(answer_waiting=True))
    assert waiting_on(answered) is None
    assert [(e.action, e.call_id) for e in answered.edits] == [(e.action, e.call_id) for e in plan.edits]
