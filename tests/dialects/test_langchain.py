"""The langchain dialect: its three shapes, its calls, the block rule, and the real langchain-core/langgraph.

Threads here are written the way langchain-core writes them (``messages_to_dict``, ``model_dump``,
``dumpd``); the real-library tests build them with langchain-core itself, repair them, and load them
back with its own loaders and LangGraph's chat-history check.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core import threadgen
from tests.core.test_cases import test_case as run_case
from tests.dialects.chat_parity import assert_reads_like_chat
from tests.dialects.wire_checks import threadfix_cli
from threadfix import dialects
from threadfix.dialects.langchain import read
from threadfix.failures import Cause, Kind
from threadfix.model import Action
from threadfix.repair import repair_items

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_threads" / "langchain"
CASES = sorted((Path(__file__).parent / "cases" / "langchain").glob("*.json"))
LC = dialects.get("langchain")
CLASSES = {"human": "HumanMessage", "ai": "AIMessage", "tool": "ToolMessage", "system": "SystemMessage"}
SHAPES = ("wrapped", "plain", "constructor")


def message(shape: str, kind: str, **fields: Any) -> dict[str, Any]:
    """A message in one of the three shapes langchain-core writes."""
    fields = {"content": fields.pop("content", ""), **fields, "type": kind}
    if shape == "wrapped":
        return {"type": kind, "data": fields}
    if shape == "constructor":
        return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", CLASSES[kind]], "kwargs": fields}
    return fields


def tool_call(call_id: str, name: str = "search", args: Any = None) -> dict[str, Any]:
    return {"name": name, "args": {} if args is None else args, "id": call_id, "type": "tool_call"}


def plan_of(items: list[Any]) -> list[str]:
    plan, _ = repair_items(items, LC)
    return [f"{e.action.value}:{e.call_id}" + (f":{e.kind.value}:{e.cause}" if e.kind else "") for e in plan.edits]


# --------------------------------------------------------------------------- sniffing


@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_is_recognised(shape: str) -> None:
    items = [message(shape, "human", content="hi"), message(shape, "ai", tool_calls=[tool_call("c1")])]
    assert dialects.sniff(items) is LC


def test_role_keyed_dicts_are_openai_chat_even_with_langchain_shaped_calls() -> None:
    items = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": "", "tool_calls": [tool_call("c1")]}]
    assert dialects.sniff(items).name == "openai-chat"


@pytest.mark.parametrize("items", [
    [{"type": "human", "text": "no content key"}],
    [{"type": "message", "role": "user", "content": "x"}],
    [{"type": "function", "function": {"name": "a tool definition"}}],
    [{"lc": 1, "type": "constructor", "id": ["langchain", "prompts", "PromptTemplate"], "kwargs": {}}],
    [{"type": "human", "content": "hi"}, {"role": "user", "content": "mixed"}],
    [],
])
def test_what_is_not_langchain(items: list[Any]) -> None:
    assert LC.sniff(items) == 0


def test_a_system_only_thread_is_weaker_evidence_than_speakers() -> None:
    assert 0 < LC.sniff([message("plain", "system", content="be brief")]) < 100
    assert LC.sniff([message("plain", "system", content="x"), message("plain", "human", content="y")]) == 100


def test_samples_of_other_dialects_are_not_taken_for_langchain() -> None:
    others = [p for p in (ROOT / "sample_threads").rglob("*.json*") if p.parent.name not in ("langchain",)]
    assert others
    from threadfix.batch import Problem, scan

    for scanned in scan([str(p) for p in others]):
        assert not isinstance(scanned, Problem)
        assert scanned.dialect is None or scanned.dialect.name != "langchain", scanned.thread.address


# --------------------------------------------------------------------------- indexing


def test_every_kind_of_call_is_indexed_once() -> None:
    items = [
        message("wrapped", "human", content="go"),
        message("wrapped", "ai",
                content=[{"type": "text", "text": "calling"},
                         {"type": "function_call", "call_id": "c1", "id": "fc_1", "name": "search", "arguments": "{}"},
                         {"type": "function_call", "call_id": "c4", "id": "fc_4", "name": "fetch", "arguments": '{"u'},
                         {"type": "tool_use", "id": "c5", "name": "read", "input": {"p": 1}}],
                tool_calls=[tool_call("c1"), {"id": "c2", "type": "function", "function": {"name": "calc", "arguments": "{"}}],
                invalid_tool_calls=[{"name": "write", "args": '{"a":', "id": "c3", "error": None, "type": "invalid_tool_call"}]),
    ]
    calls = LC.index(items).calls
    assert [(c.call_id, c.name, c.wire_type) for c in calls] == [
        ("c1", "search", "tool_call"), ("c2", "calc", "invalid_tool_call"), ("c3", "write", "invalid_tool_call"),
        ("c4", "fetch", "function_call"), ("c5", "read", "tool_use")]
    assert [c.arguments for c in calls] == [{}, "{", '{"a":', '{"u', {"p": 1}]


def test_legacy_additional_kwargs_calls_count_only_when_nothing_else_is_set() -> None:
    legacy = {"tool_calls": [{"id": "old", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    alone = message("plain", "ai", additional_kwargs=legacy)
    both = message("plain", "ai", additional_kwargs=legacy, tool_calls=[tool_call("new")])
    assert [c.call_id for c in LC.index([alone]).calls] == ["old"]
    assert [c.call_id for c in LC.index([both]).calls] == ["new"]


@pytest.mark.parametrize(("metadata", "truncated"), [
    ({"finish_reason": "length"}, True),
    ({"stop_reason": "max_tokens"}, True),
    ({"finish_reason": "MAX_TOKENS"}, True),
    ({"stopReason": "max_tokens"}, True),
    ({"finish_reason": "tool_calls"}, False),
    ({}, False),
])
def test_a_turn_stopped_at_its_limit_truncates_its_calls(metadata: dict, truncated: bool) -> None:
    items = [message("plain", "ai", response_metadata=metadata,
                     invalid_tool_calls=[{"name": "w", "args": '{"p', "id": "c1", "error": None}])]
    (call,) = LC.index(items).calls
    assert call.truncated is truncated
    expected = "truncated:turn_cut_off" if truncated else "malformed_arguments:arguments_unparseable"
    assert plan_of(items) == [f"insert_output:c1:{expected}"]


def test_only_an_error_status_is_a_verdict() -> None:
    """langchain-core writes status "success" by default, so it says nothing about the content."""
    items = [message("plain", "ai", tool_calls=[tool_call("a"), tool_call("b"), tool_call("c")]),
             message("plain", "tool", tool_call_id="a", status="error", content="boom"),
             message("plain", "tool", tool_call_id="b", status="success", content="ok"),
             message("plain", "tool", tool_call_id="c", content="old, no status")]
    assert [(o.call_id, o.is_error, o.status) for o in LC.index(items).outputs] == [
        ("a", True, "error"), ("b", None, None), ("c", None, None)]


# --------------------------------------------------------------------------- placement and output shape


@pytest.mark.parametrize("shape", SHAPES)
def test_the_synthetic_answer_takes_the_shape_of_the_message_it_answers(shape: str) -> None:
    items = [message(shape, "human", content="go"), message(shape, "ai", tool_calls=[tool_call("c1", "deploy")])]
    _, repaired = repair_items(items, LC)
    answer = read(repaired[2])
    assert answer.shape == shape and answer.kind == "tool"
    assert answer.fields["tool_call_id"] == "c1" and answer.fields["name"] == "deploy"
    assert answer.fields["status"] == "error"
    assert json.loads(answer.fields["content"])["error"]["cause"] == "thread_ended"
    assert repaired[:2] == items and repaired[0] is items[0] and repaired[1] is items[1]


def test_a_call_answered_outside_its_block_is_moved_into_it() -> None:
    items = [message("plain", "ai", tool_calls=[tool_call("a")]),
             message("plain", "human", content="hurry"),
             message("plain", "tool", tool_call_id="a", content="done")]
    assert LC.check(items)  # the block rule; LangGraph alone would accept this
    _, repaired = repair_items(items, LC)
    assert repaired == [items[0], items[2], items[1]]
    assert LC.check(repaired) == []


def test_langgraph_rule_is_reported_with_langgraphs_words() -> None:
    items = [message("wrapped", "human", content="x"), message("wrapped", "ai", tool_calls=[tool_call("a")])]
    rules = [v.rule for v in LC.check(items)]
    assert rules == ["invalid-chat-history", "missing-tool-messages"]
    assert LC.check(items)[0].message.startswith("Found AIMessages with tool_calls that do not have a corresponding ToolMessage.")


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path: Path) -> None:
    run_case(path)


def test_there_are_cases() -> None:
    assert len(CASES) >= 5


# --------------------------------------------------------------------------- generated threads


def render(conv: threadgen.Conversation, shape: str, blocks: bool) -> list[dict[str, Any]]:
    """The conversation as LangChain writes it; mirrors ``threadgen.chat`` message for message.

    Calls go in ``tool_calls`` (JSON-object arguments) or ``invalid_tool_calls`` (anything else), or,
    when ``blocks``, as OpenAI Responses ``function_call`` content blocks.
    """
    def ai_calls(calls: tuple[threadgen.CallSpec, ...]) -> dict[str, Any]:
        if blocks:
            return message(shape, "ai", content=[{"type": "function_call", "call_id": c.call_id, "id": f"fc_{c.call_id}",
                                                  "name": c.name, "arguments": c.arguments} for c in calls])
        valid, invalid = [], []
        for c in calls:
            try:
                args = json.loads(c.arguments) if c.arguments.strip() else {}
            except ValueError:
                args = None
            if isinstance(args, dict):
                valid.append(tool_call(c.call_id, c.name, args))
            else:
                invalid.append({"name": c.name, "args": c.arguments, "id": c.call_id, "error": None,
                                "type": "invalid_tool_call"})
        return message(shape, "ai", tool_calls=valid, invalid_tool_calls=invalid)

    def tool(call_id: str, text: str) -> dict[str, Any]:
        return message(shape, "tool", content=text, tool_call_id=call_id, name="t", status="success")

    items: list[dict[str, Any]] = [message(shape, "human", content="start")]
    late: list[dict[str, Any]] = []
    for r, rnd in enumerate(conv.rounds):
        items.append(ai_calls(rnd.calls))
        items.extend(late)
        late = []
        for c in rnd.calls:
            if c.answered and c.misplaced:
                late.append(tool(c.call_id, f"result of {c.call_id}"))
            elif c.answered:
                items.append(tool(c.call_id, f"result of {c.call_id}"))
            if c.answered and c.duplicated:
                items.append(tool(c.call_id, f"again {c.call_id}"))
        items.extend(tool(f"orphan_{r}_{i}", "lost") for i, at in enumerate(conv.orphans) if at == r)
        if rnd.text_after:
            items.append(message(shape, "ai", content="ok"))
            items.extend(late)
            late = []
        if rnd.user_after:
            items.append(message(shape, "human", content=f"next {r}"))
    items.extend(late)
    return items


def _non_outputs(items: list[Any]) -> list[bytes]:
    return [orjson.dumps(i, option=orjson.OPT_SORT_KEYS) for i in items if read(i).kind != "tool"]


@given(conversation=threadgen.conversations(), shape=st.sampled_from(SHAPES), blocks=st.booleans())
def test_repair_makes_generated_threads_acceptable_and_loses_nothing(conversation, shape: str, blocks: bool) -> None:
    items = render(conversation, shape, blocks)
    pristine = copy.deepcopy(items)
    assert dialects.sniff(items) is LC
    plan, repaired = repair_items(items, LC)
    assert items == pristine, "repair must never mutate its input"
    if repaired is None:
        assert LC.check(items) == []
        return
    assert LC.check(repaired) == [], plan
    index = LC.index(repaired)
    assert sorted(o.call_id for o in index.outputs) == sorted(c.call_id for c in index.calls)
    remaining = iter(_non_outputs(repaired))
    assert all(any(e == a for a in remaining) for e in _non_outputs(items)), "an original message was lost or reordered"
    text = orjson.dumps(repaired).decode()
    assert all(o.call_id in text for o in LC.index(items).outputs)
    kept = {id(item) for item in repaired}
    moved = {e.output.at[0] for e in plan.edits if e.output is not None}
    assert all(id(item) in kept for i, item in enumerate(items) if i not in moved)
    plan2, again = repair_items(repaired, LC)
    assert again is None and not plan2.edits
    assert orjson.dumps(repair_items(copy.deepcopy(items), LC)[1]) == orjson.dumps(repaired)


@given(conversation=threadgen.conversations(), shape=st.sampled_from(SHAPES), blocks=st.booleans())
def test_the_index_and_plan_match_the_equivalent_openai_chat_thread(conversation, shape: str, blocks: bool) -> None:
    assert_reads_like_chat(LC, render(conversation, shape, blocks), conversation)
    # the flat shape matches turn for turn
    mine, theirs = LC.index(render(conversation, shape, blocks)), dialects.get("openai-chat").index(threadgen.chat(conversation))
    assert (mine.user_turns, mine.model_turns, mine.length) == (theirs.user_turns, theirs.model_turns, theirs.length)


# --------------------------------------------------------------------------- the real libraries


@pytest.fixture()
def lc_messages():
    return pytest.importorskip("langchain_core.messages")


def _stuck_thread(m) -> list[Any]:
    """A research agent the user interrupted, with every kind of trouble LangChain threads show."""
    return [
        m.SystemMessage("You are a research assistant."),
        m.HumanMessage("Compare the two APIs.", id="h1"),
        m.AIMessage("", id="a1", tool_calls=[{"name": "web_search", "args": {"q": "one"}, "id": "call_1"},
                                            {"name": "web_search", "args": {"q": "two"}, "id": "call_2"}],
                    invalid_tool_calls=[{"name": "fetch", "args": '{"url": "https://exa', "id": "call_3", "error": "bad"}],
                    response_metadata={"finish_reason": "tool_calls"}),
        m.ToolMessage("API one: 60 rpm", tool_call_id="call_1", name="web_search", id="t1"),
        m.ToolMessage("lost", tool_call_id="call_gone", name="web_search", id="t2"),
        m.HumanMessage("Never mind.", id="h2"),
        m.AIMessage(content=[{"type": "function_call", "name": "get_weather", "arguments": '{"city": "Paris"}',
                              "call_id": "call_4", "id": "fc_4"}], id="a2", response_metadata={"model_provider": "openai"}),
    ]


def _assert_originals_intact(before: list[Any], after: list[Any]) -> None:
    """Every original message is in the repaired list, equal, in order (orphans aside)."""
    remaining = iter(after)
    for original in before:
        if getattr(original, "tool_call_id", None) == "call_gone":
            continue  # the orphan becomes a HumanMessage naming its call
        assert any(original == candidate for candidate in remaining), original


def test_messages_to_dict_threads_come_back_loadable_and_valid(lc_messages) -> None:
    m = lc_messages
    validate = pytest.importorskip("langgraph.prebuilt.chat_agent_executor")._validate_chat_history
    originals = _stuck_thread(m)
    items = m.messages_to_dict(originals)
    with pytest.raises(ValueError, match="INVALID_CHAT_HISTORY"):
        validate(m.messages_from_dict(items))

    plan, repaired = repair_items(items, LC)
    assert sorted(e.call_id for e in plan.edits if e.action is Action.INSERT_OUTPUT) == ["call_2", "call_3", "call_4"]
    loaded = m.messages_from_dict(repaired)
    validate(loaded)
    _assert_originals_intact(originals, loaded)
    synthetic = [x for x in loaded if isinstance(x, m.ToolMessage) and x.status == "error"]
    assert [x.tool_call_id for x in synthetic] == ["call_2", "call_3", "call_4"]
    # exactly the keys langchain-core writes: its own round trip changes nothing
    assert m.messages_to_dict(loaded) == repaired
    orphan = next(x for x in loaded if isinstance(x, m.HumanMessage) and "call_gone" in x.content)
    assert "lost" in orphan.content
    assert LC.check(repaired) == []


def test_what_chatopenai_sends_of_the_repaired_thread_passes_openais_rules(lc_messages) -> None:
    """langchain-openai's own conversion: Chat Completions sends invalid_tool_calls as calls (so they need
    an answer; langchain-core's ``convert_to_openai_messages`` drops them), and the Responses API sends
    ``function_call`` content blocks as calls."""
    m = lc_messages
    base = pytest.importorskip("langchain_openai.chat_models.base")
    originals = _stuck_thread(m)
    _, repaired = repair_items(m.messages_to_dict(originals), LC)
    responses = dialects.get("openai-responses")
    assert responses.check(base._construct_responses_api_input(originals))
    assert responses.check(base._construct_responses_api_input(m.messages_from_dict(repaired))) == []

    chat_only = [x for x in originals if x.id != "a2"]  # a Responses block is sent only to the Responses API
    _, repaired = repair_items(m.messages_to_dict(chat_only), LC)
    chat = dialects.get("openai-chat")
    assert chat.check([base._convert_message_to_dict(x) for x in chat_only])
    assert chat.check([base._convert_message_to_dict(x) for x in m.messages_from_dict(repaired)]) == []


def _from_plain(m, items: list[dict[str, Any]]) -> list[Any]:
    """``model_dump`` dicts back into messages, losslessly (``convert_to_messages`` moves a plain dict's
    ``invalid_tool_calls`` into ``additional_kwargs``, whatever threadfix does)."""
    return m.messages_from_dict([{"type": item["type"], "data": item} for item in items])


def test_plain_dict_threads_load_back_into_their_classes(lc_messages) -> None:
    m = lc_messages
    originals = _stuck_thread(m)
    items = [x.model_dump() for x in originals]
    _, repaired = repair_items(items, LC)
    loaded = _from_plain(m, repaired)
    pytest.importorskip("langgraph.prebuilt.chat_agent_executor")._validate_chat_history(loaded)
    _assert_originals_intact(originals, loaded)
    assert [x.model_dump() for x in loaded] == repaired


@pytest.mark.filterwarnings("ignore:The function `load` is in beta")
def test_dumpd_threads_load_with_langchain_load(lc_messages) -> None:
    m = lc_messages
    load = pytest.importorskip("langchain_core.load")
    originals = _stuck_thread(m)
    items = [load.dumpd(x) for x in originals]
    _, repaired = repair_items(items, LC)
    loaded = [load.load(x, allowed_objects="messages") for x in repaired]
    _assert_originals_intact(originals, loaded)
    assert [load.dumpd(x) for x in loaded] == repaired
    assert LC.check(repaired) == []


def test_a_chunk_left_by_a_cut_stream_is_answered(lc_messages) -> None:
    m = lc_messages
    chunk = m.AIMessageChunk(content="", tool_call_chunks=[{"name": "write", "args": '{"p": "/tm', "id": "c9", "index": 0}],
                             response_metadata={"finish_reason": "length"})
    items = m.messages_to_dict([m.HumanMessage("go"), chunk])
    plan, repaired = repair_items(items, LC)
    assert [(e.call_id, e.kind) for e in plan.edits] == [("c9", Kind.TRUNCATED)]
    assert [type(x).__name__ for x in m.messages_from_dict(repaired)] == ["HumanMessage", "AIMessageChunk", "ToolMessage"]


# --------------------------------------------------------------------------- samples and the CLI


@pytest.mark.filterwarnings("ignore:The function `load` is in beta")
def test_the_samples_are_stuck_and_come_out_of_the_cli_accepted(tmp_path: Path) -> None:
    copy_dir = tmp_path / "langchain"
    shutil.copytree(SAMPLES, copy_dir)
    result = threadfix_cli("repair", "--min-age", "0", "langchain", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert "langchain/research-agent-interrupted.json#2: add error output for call_ws2 (web_search): aborted, item 4 " \
           "is a later user message" in lines
    assert any("thr_responses_block#1: add error output for call_wx1 (get_weather)" in line for line in lines)
    assert any("toolu_w1 (write_file): truncated" in line for line in lines)
    assert result.stderr.decode().startswith("threadfix: repaired 3 of 4 threads")

    from threadfix.batch import Problem, scan

    for scanned in scan([str(copy_dir)]):
        assert not isinstance(scanned, Problem) and scanned.dialect is LC
        assert LC.check(scanned.thread.items) == [], scanned.thread.address
    again = threadfix_cli("repair", "--check", "--min-age", "0", "langchain", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, b"")

    m = pytest.importorskip("langchain_core.messages")
    validate = pytest.importorskip("langgraph.prebuilt.chat_agent_executor")._validate_chat_history
    validate(m.messages_from_dict(json.loads((copy_dir / "research-agent-interrupted.json").read_text())))
    for line in (copy_dir / "langgraph-threads.jsonl").read_text().splitlines():
        messages = json.loads(line)["messages"]
        if messages[0].get("lc") == 1:
            load = pytest.importorskip("langchain_core.load")
            validate([load.load(x, allowed_objects="messages") for x in messages])
        else:
            validate(_from_plain(m, messages))


def test_causes_read_from_the_sample_match_what_happened() -> None:
    items = json.loads((SAMPLES / "research-agent-interrupted.json").read_text())
    plan, _ = repair_items(items, LC)
    assert {e.call_id: e.cause for e in plan.edits} == {
        "call_ws2": Cause.USER_MOVED_ON.value, "call_fp3": Cause.ARGUMENTS_UNPARSEABLE.value}


# --------------------------------------------------------------------------- hostile input

#: any JSON value a field may hold, unhashable ones included (flat: nesting adds cost, not coverage)
JSON = (st.none() | st.booleans() | st.integers() | st.text(max_size=6)
        | st.lists(st.integers() | st.text(max_size=3), max_size=2) | st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))
FIELD_VALUES = {
    "tool_calls": st.lists(st.fixed_dictionaries({}, optional={"id": JSON, "name": JSON, "args": JSON, "function": JSON})
                           | JSON, max_size=3) | JSON,
    "invalid_tool_calls": st.lists(st.fixed_dictionaries({}, optional={"id": JSON, "name": JSON, "args": JSON}) | JSON,
                                   max_size=2) | JSON,
    "content": st.lists(st.fixed_dictionaries({"type": st.sampled_from(["function_call", "tool_use", "tool_call", "text"])
                                               | JSON}, optional={"call_id": JSON, "id": JSON, "name": JSON}) | JSON,
                        max_size=3) | JSON,
    "additional_kwargs": st.fixed_dictionaries({}, optional={"tool_calls": JSON}) | JSON,
    "response_metadata": st.fixed_dictionaries({}, optional={"finish_reason": JSON, "stop_reason": JSON}) | JSON,
    "tool_call_id": JSON,
    "status": st.sampled_from(["error", "success"]) | JSON,
}
HOSTILE = st.lists(
    st.builds(message, st.sampled_from(SHAPES), st.sampled_from(["human", "ai", "tool", "system"]),
              **{k: v for k, v in FIELD_VALUES.items()}) | JSON, max_size=6)


@given(items=HOSTILE)
def test_hostile_items_never_crash_reading_or_repair(items: list[Any]) -> None:
    LC.sniff(items)
    LC.check(items)
    plan, repaired = repair_items(items, LC)
    if repaired is not None and not plan.skips:
        assert repair_items(repaired, LC)[1] is None


@pytest.mark.parametrize("shape", ["wrapped", "constructor"])
def test_text_after_tool_use_blocks_is_moved_ahead_and_loads_back(shape: str) -> None:
    """An AIMessage as langchain-anthropic stores a streamed turn: content blocks with text after tool_use (which
    Anthropic refuses), the same call in tool_calls. The real langchain-core dumps it, repair moves the text ahead
    of the call in the message's own shape, and langchain-core loads the result back unchanged otherwise."""
    lc = pytest.importorskip("langchain_core.messages")
    from langchain_core.load import dumpd, load

    ai = lc.AIMessage(content=[{"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"cmd": "ls"}},
                               {"type": "text", "text": "Listing now."}],
                      tool_calls=[{"name": "shell", "args": {"cmd": "ls"}, "id": "toolu_1"}])
    history = [lc.HumanMessage("ls"), ai, lc.ToolMessage("a b", tool_call_id="toolu_1"), lc.AIMessage("two files")]
    items = lc.messages_to_dict(history) if shape == "wrapped" else [dumpd(m) for m in history]
    dialect = dialects.get("langchain")
    assert [v.rule for v in dialect.check(items)] == ["tool-use-not-last"]
    plan, repaired = repair_items(items, dialect)
    assert [(e.action, e.call_id) for e in plan.edits] == [(Action.MOVE_TEXT, "toolu_1")]
    assert dialect.check(repaired) == []
    loaded = lc.messages_from_dict(repaired) if shape == "wrapped" else [load(m, allowed_objects="messages") for m in repaired]
    assert [b["type"] for b in loaded[1].content] == ["text", "tool_use"]
    assert loaded[1].tool_calls == ai.tool_calls and loaded[0] == history[0] and loaded[2:] == history[2:]
    assert repair_items(repaired, dialect)[1] is None  # a second run changes nothing


def test_a_tool_use_block_in_a_human_message_is_kept_as_text_and_loads_back() -> None:
    """A HumanMessage whose content holds a tool_use block (an app that copied a turn into the user's message):
    providers take calls from the model only, so the block becomes text saying what it was, where it stood; the
    ToolMessage that answered it has no call then and is kept as a HumanMessage. langchain-core loads the result."""
    lc = pytest.importorskip("langchain_core.messages")
    human = lc.HumanMessage(content=[{"type": "text", "text": "run this:"},
                                     {"type": "tool_use", "id": "toolu_u", "name": "shell", "input": {"cmd": "ls"}}])
    history = [human, lc.ToolMessage("a b", tool_call_id="toolu_u"), lc.AIMessage("done")]
    items = lc.messages_to_dict(history)
    dialect = dialects.get("langchain")
    assert "tool-call-in-human-message" in {v.rule for v in dialect.check(items)}
    plan, repaired = repair_items(items, dialect)
    assert [(e.action, e.call_id) for e in plan.edits] == [(Action.CONVERT_CALL, "toolu_u"), (Action.CONVERT_ORPHAN, "toolu_u")]
    assert dialect.check(repaired) == []
    loaded = lc.messages_from_dict(repaired)
    assert [type(m).__name__ for m in loaded] == ["HumanMessage", "HumanMessage", "AIMessage"]
    assert loaded[0].content[0] == human.content[0] and "shell (id toolu_u)" in loaded[0].content[1]["text"]
    assert "a b" in loaded[1].content
    assert repair_items(repaired, dialect)[1] is None
