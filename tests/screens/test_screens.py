"""Every dialect's screen against the full read: a thread it settles is one the full read sniffs as that dialect
and finds nothing in, and repair writes the same bytes and says the same with the screens on or off.

Threads are generated in each dialect's real shape (healthy, stuck, and adversarial: odd and non-string ids,
ids used twice, outputs reordered or missing, unknown fields, keys other dialects sniff by, nested JSON in
strings, non-ASCII, huge numbers), then written as the JSON a store holds.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.screening import repair_with_and_without_screens
from threadfix import dialects
from threadfix.dialects.base import Dialect
from threadfix.repair import plan_repair
from threadfix.stores import StoreOptions, open_stores, settle
from threadfix.stores.document import split_container
from threadfix.stores.base import Settled

SCREENED = ["openai-responses", "openai-chat", "anthropic", "langchain", "pydantic-ai", "gemini", "bedrock", "ai-sdk",
            "ai-sdk-4"]

# --------------------------------------------------------------------------- a conversation, in every dialect

IDS = st.sampled_from(["a", "b", "c", "call_1", "é", "", " ", "{x", '"q"'])
TEXT = st.one_of(st.sampled_from(["hi", "", "ü ß 名前", '{"type": "tool_use", "id": "a"}', '[{"role": "tool"}]']),
                 st.text(max_size=8))


@st.composite
def turns(draw: Any) -> list[tuple[Any, ...]]:
    """("user" | "assistant", text) and ("tools", call ids, answered ids, text after): a conversation, with the
    answers now and then missing, doubled, foreign or reordered."""
    steps: list[tuple[Any, ...]] = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "tools"]))
        if kind != "tools":
            steps.append((kind, draw(TEXT)))
            continue
        calls = draw(st.lists(IDS, min_size=1, max_size=3))
        answers = list(calls)
        how = draw(st.sampled_from(["all", "all", "all", "shuffled", "missing", "doubled", "foreign"]))
        if how == "shuffled":
            answers = draw(st.permutations(answers))
        elif how == "missing":
            answers = answers[1:]
        elif how == "doubled":
            answers = [*answers, answers[0]]
        elif how == "foreign":
            answers = [*answers[:-1], draw(IDS)]
        steps.append(("tools", calls, answers, draw(st.one_of(st.none(), TEXT))))
    return steps


def _chat(steps: list[tuple[Any, ...]]) -> list[Any]:
    out: list[Any] = []
    for step in steps:
        if step[0] != "tools":
            out.append({"role": step[0], "content": step[1]})
            continue
        out.append({"role": "assistant", "content": step[3], "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in step[1]]})
        out += [{"role": "tool", "tool_call_id": i, "content": "ok"} for i in step[2]]
    return out


def _anthropic(steps: list[tuple[Any, ...]]) -> list[Any]:
    out: list[Any] = []
    for step in steps:
        if step[0] != "tools":
            out.append({"role": step[0], "content": [{"type": "text", "text": step[1]}] if len(out) % 2 else step[1]})
            continue
        blocks = [{"type": "tool_use", "id": i, "name": "f", "input": {}} for i in step[1]]
        if step[3] is not None:
            blocks.insert(0 if len(out) % 2 else len(blocks), {"type": "text", "text": step[3]})
        out.append({"role": "assistant", "content": blocks})
        out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "ok"}
                                                 for i in step[2]]})
    return out


def _langchain(steps: list[tuple[Any, ...]]) -> list[Any]:
    out: list[Any] = []
    for step in steps:
        if step[0] != "tools":
            out.append({"type": "human" if step[0] == "user" else "ai", "content": step[1]})
            continue
        calls = [{"name": "f", "args": {}, "id": i, "type": "tool_call"} for i in step[1]]
        key = "tool_calls" if len(out) % 3 else "invalid_tool_calls"
        out.append({"type": "ai", "content": step[3] or "", key: calls, "additional_kwargs": {}})
        out += [{"type": "tool", "content": "ok", "tool_call_id": i, "status": "success"} for i in step[2]]
    return out


def _pydantic(steps: list[tuple[Any, ...]]) -> list[Any]:
    out: list[Any] = []
    for step in steps:
        if step[0] == "user":
            out.append({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": step[1]}]})
        elif step[0] == "assistant":
            out.append({"kind": "response", "parts": [{"part_kind": "text", "content": step[1]}]})
        else:
            parts = [{"part_kind": "tool-call", "tool_name": "f", "args": "{}", "tool_call_id": i} for i in step[1]]
            if step[3] is not None:
                parts.insert(0 if len(out) % 2 else len(parts), {"part_kind": "text", "content": step[3]})
            out.append({"kind": "response", "parts": parts})
            out.append({"kind": "request", "parts": [
                {"part_kind": "tool-return" if n % 2 == 0 else "retry-prompt", "tool_name": "f", "content": "ok",
                 "tool_call_id": i} for n, i in enumerate(step[2])]})
    return out


def _responses(steps: list[tuple[Any, ...]]) -> list[Any]:
    out: list[Any] = []
    for step in steps:
        if step[0] != "tools":
            out.append({"type": "message", "role": step[0], "content": [{"type": "input_text", "text": step[1]}]})
            continue
        out += [{"type": "function_call", "call_id": i, "name": "f", "arguments": "{}"} for i in step[1]]
        out += [{"type": "function_call_output", "call_id": i, "output": "ok"} for i in step[2]]
    return out


def _gemini(steps: list[tuple[Any, ...]]) -> list[Any]:
    out: list[Any] = []
    for n, step in enumerate(steps):
        if step[0] != "tools":
            out.append({"role": "model" if step[0] == "assistant" else "user", "parts": [{"text": step[1]}]})
            continue
        key, answer = ("functionCall", "functionResponse") if n % 2 else ("function_call", "function_response")
        # ("c" stands for a call without an id: Gemini's ids are optional, paired by name and order)
        parts: list[Any] = [{key: {**({"id": i} if i != "c" else {}), "name": "f", "args": {"q": 1}}} for i in step[1]]
        if step[3] is not None:
            parts.append({"text": step[3], "thoughtSignature": "c2ln"})
        out.append({"role": "model", "parts": parts})
        out.append({"role": "function" if n % 3 == 0 else "user",
                    "parts": [{answer: {**({"id": i} if i != "c" else {}), "name": "f", "response": {"output": "ok"}}}
                              for i in step[2]]})
    return out


def _bedrock(steps: list[tuple[Any, ...]]) -> list[Any]:
    out: list[Any] = []
    for step in steps:
        if step[0] != "tools":
            out.append({"role": step[0], "content": [{"text": step[1]}]})
            continue
        blocks = [{"toolUse": {"toolUseId": i, "name": "f", "input": {"q": [1]}}} for i in step[1]]
        if step[3] is not None:
            blocks.insert(0 if len(out) % 2 else len(blocks), {"text": step[3]})
        out.append({"role": "assistant", "content": blocks})
        out.append({"role": "user", "content": [{"toolResult": {"toolUseId": i, "content": [{"text": "ok"}],
                                                                "status": "success"}} for i in step[2]]})
    return out


def _ai_sdk(steps: list[tuple[Any, ...]]) -> list[Any]:
    out: list[Any] = []
    for n, step in enumerate(steps):
        if step[0] != "tools":
            out.append({"id": f"m{n}", "role": step[0], "parts": [{"type": "text", "text": step[1]}]})
            continue
        parts: list[Any] = [{"type": "step-start"}]
        for i in step[1]:
            answered = i in step[2]
            parts.append({"type": "tool-f", "toolCallId": i, "state": "output-available" if answered else "input-available",
                          "input": {"q": "ü"}, **({"output": {"ok": [1, "x"]}} if answered else {})})
        if step[3] is not None:
            parts.append({"type": "text", "text": step[3]})
        out.append({"id": f"m{n}", "role": "assistant", "parts": parts})
    return out


def _ai_sdk_4(steps: list[tuple[Any, ...]]) -> list[Any]:
    out: list[Any] = []
    for n, step in enumerate(steps):
        if step[0] != "tools":
            out.append({"id": f"m{n}", "role": step[0], "content": step[1]})
            continue
        invocations = [{"state": "result" if i in step[2] else "call", "toolCallId": i, "toolName": "f", "args": {},
                        **({"result": {"ok": 1}} if i in step[2] else {})} for i in step[1]]
        message: dict[str, Any] = {"id": f"m{n}", "role": "assistant", "content": step[3] or ""}
        if n % 2:
            message["parts"] = [{"type": "tool-invocation", "toolInvocation": i} for i in invocations]
        message["toolInvocations"] = invocations
        out.append(message)
    return out


RENDER = {"gemini": _gemini, "bedrock": _bedrock, "ai-sdk": _ai_sdk, "ai-sdk-4": _ai_sdk_4, "openai-chat": _chat, "anthropic": _anthropic, "langchain": _langchain, "pydantic-ai": _pydantic,
          "openai-responses": _responses}

#: what an adversary adds to an item: unknown fields (nested JSON, huge numbers, non-ASCII), and the keys other
#: dialects sniff by
ODD_FIELDS = [{"zz": {"nested": [1, {"a": None}]}}, {"zz": 1e300}, {"zz": 18446744073709551615}, {"名": "ü"},
              {"zz": '{"tool_calls": [{"id": "a"}]}'}, {"type": "message"}, {"type": "human"}, {"role": "user"},
              {"role": "tool"}, {"parts": []}, {"kind": "request"}, {"data": {}}, {"toolInvocations": []},
              {"content": [{"type": "tool_use", "id": "a"}]}, {"content": None}, {"tool_call_id": 5},
              {"tool_calls": [{"id": 0}]}, {"lc": 1}, {"toolCallId": "a"},
              {"parts": [{"type": "tool-x", "toolCallId": "z", "state": "input-available"}]},
              {"parts": [{"type": "tool-invocation", "toolInvocation": {"toolCallId": "z"}}]}, {"parts": None},
              {"role": "assistant"}, {"role": "data"}, {"content": [{"text": "x", "image": {}}]},
              {"content": [{"toolUse": {"toolUseId": "s", "type": "server_tool_use"}}]}, {"content": [{}]}, {"parts": [{}]},
              {"parts": [{"functionCall": {"name": "f"}}]}, {"parts": [{"text": "x", "type": "text"}]}, {"role": None}, {"toolInvocations": [{"toolCallId": "z", "result": None}]}]


@st.composite
def threads(draw: Any, name: str) -> list[Any]:
    items = RENDER[name](draw(turns()))
    for _ in range(draw(st.integers(0, 2))):
        if not items:
            break
        at = draw(st.integers(0, len(items) - 1))
        how = draw(st.sampled_from(["field", "swap", "drop", "not an object", "id"]))
        if how == "field" and isinstance(items[at], dict):
            items[at] = {**items[at], **draw(st.sampled_from(ODD_FIELDS))}
        elif how == "swap":
            other = draw(st.integers(0, len(items) - 1))
            items[at], items[other] = items[other], items[at]
        elif how == "drop":
            del items[at]
        elif how == "not an object":
            items[at] = draw(st.sampled_from([None, "text", 5, []]))
        else:
            items[at] = _id_replaced(items[at], draw(st.sampled_from([0, None, ["a"], {"a": 1}, 1.5])))
    return items


ID_KEYS = ("id", "call_id", "tool_call_id", "tool_use_id")


def _id_replaced(value: Any, new: Any) -> Any:
    """``value`` with the first id it holds, at any depth, replaced by ``new`` (a non-string id)."""
    done = False

    def walk(v: Any) -> Any:
        nonlocal done
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            out = {}
            for key, x in v.items():
                if key in ID_KEYS and not done:
                    out[key], done = new, True
                else:
                    out[key] = walk(x)
            return out
        return v

    return walk(value)


def _document(items: list[Any], shape: int, ascii_only: bool) -> bytes:
    value = [items, {"messages": items, "id": "t"}, {"input": None, "items": items}][shape]
    return json.dumps(value, ensure_ascii=ascii_only).encode()


# --------------------------------------------------------------------------- the full read's answer


def found_nothing(raw: bytes, name: str) -> bool:
    """Whether a full read sniffs the document as dialect ``name`` and its planner finds nothing in it."""
    parts = split_container(orjson.loads(raw))
    assert parts is not None
    items = parts[0]
    dialect = dialects.get(name)
    if dialects.sniff(items) is not dialect:
        return False
    if type(dialect).quick_healthy is not Dialect.quick_healthy and not dialect.quick_healthy(items):
        return False  # (the path a full read takes: a dialect with the quick check says healthy by it)
    plan = plan_repair(dialect.index(items), dialect, items)
    return not plan.edits and not plan.skips


def _check(raw: bytes) -> Settled | None:
    settled = settle.Screener()(raw)
    if settled is not None:
        assert found_nothing(raw, settled.dialect), settled.dialect
    for name in SCREENED:  # forced: only that dialect's screen, which must agree
        forced = settle.Screener(name)(raw)
        if forced is not None:
            assert settled is not None and forced.dialect == settled.dialect == name
    return settled


@pytest.mark.parametrize("name", SCREENED)
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), shape=st.integers(0, 2), ascii_only=st.booleans())
def test_a_settled_thread_is_one_the_full_read_finds_nothing_in(name: str, data: Any, shape: int,
                                                                ascii_only: bool) -> None:
    _check(_document(data.draw(threads(name)), shape, ascii_only))


@pytest.mark.parametrize("name", SCREENED)
@settings(max_examples=60)
@given(steps=turns())
def test_a_plain_healthy_thread_settles(name: str, steps: list[tuple[Any, ...]]) -> None:
    """The screens give up only on what they cannot vouch for, so they really are the fast path."""
    steps = [("user", "hi"), *(step if step[0] != "tools" else ("tools", step[1], step[1], None) for step in steps),
             ("tools", ["t1", "t2"], ["t2", "t1"], None)]
    # (in Gemini an empty id is none, and "c" is rendered without one: those pair by name and order)
    ids = [i for step in steps if step[0] == "tools" for i in step[1] if name != "gemini" or i not in ("", "c")]
    raw = _document(RENDER[name](steps), 1, False)
    settled = _check(raw)
    if len(set(ids)) == len(ids) and all(i.strip() for i in ids):
        assert settled is not None and settled.dialect == name
    else:
        assert settled is None


@pytest.mark.parametrize("raw", [
    b'[{"role":"user","content":"x"}]',  # no dialect is sure: Chat 30, and it says so by its content
    b'[{"role":"user"}]',  # nothing sniffs it: unrecognised, not settled as Chat
    b'[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]',
    b'[{"role":"user","content":[{"type":"text","text":"x"}]}]',  # Anthropic, 40
    b'[{"role":"user","content":"x","role":"tool"}]',  # a repeated key: both read the last
    b'[{"role":"assistant","content":"","tool_calls":[{"id":"a"}]},{"role":"tool","tool_call_id":"a","content":"",'
    b'"tool_call_id":"b"}]',
    b'[{"type":"human","content":"x"}]', b'[{"type":"system","content":"x"}]',  # LangChain 100; 60 (no other)
    b'[{"kind":"request","parts":[]}]', b'[{"kind":"response","parts":[{"part_kind":5}]}]',
    b'[{"type":"message","role":"user","content":[{"type":"text","text":"x"}]}]',  # Responses is sure of it
])
def test_hostile_documents_settle_only_as_the_full_read_finds_them(raw: bytes) -> None:
    settled = _check(raw)
    parts = split_container(orjson.loads(raw))
    sniffed = dialects.sniff(parts[0]) if parts else None
    assert settled is None or settled.dialect == sniffed.name


def _gemini_turn(calls: list[tuple[str | None, str]], answers: list[tuple[str | None, str]]) -> bytes:
    def named(pair: tuple[str | None, str]) -> dict[str, Any]:
        return {**({"id": pair[0]} if pair[0] is not None else {}), "name": pair[1]}

    return json.dumps([{"role": "user", "parts": [{"text": "hi"}]},
                       {"role": "model", "parts": [{"functionCall": {**named(c), "args": {}}} for c in calls]},
                       {"role": "user", "parts": [{"functionResponse": {**named(a), "response": {}}} for a in answers]},
                       {"role": "model", "parts": [{"text": "done"}]}]).encode()


@pytest.mark.parametrize(("calls", "answers"), [
    ([("a", "f"), ("b", "g")], [("b", "g"), ("a", "f")]),  # reordered: healthy
    ([(None, "f"), (None, "f")], [(None, "f"), (None, "f")]),  # the same id-less pair twice, answered twice
    ([(None, "f"), (None, "g")], [(None, "g"), (None, "f")]),  # id-less, paired by name
    ([(None, "f"), (None, "f")], [(None, "f"), (None, "g")]),  # a pair twice, answered once and by another name
    ([(None, "f"), (None, "g")], [(None, "f"), (None, "f")]),
    ([(None, "f"), (None, "f"), (None, "g")], [(None, "f"), (None, "g"), (None, "g")]),  # the same set, as many
    # pairs, not as many times each
    ([("a", "f"), ("b", "f")], [("a", "f"), ("a", "f")]),  # one call answered twice, the other never
    ([("a", "f"), (None, "f")], [(None, "f"), ("a", "f")]),
    ([("a", "f")], [("a", "g")]),  # the right id under another name
])
def test_a_gemini_call_turn_settles_when_its_answers_are_its_calls_each_as_many_times(
        calls: list[tuple[str | None, str]], answers: list[tuple[str | None, str]]) -> None:
    """The screen compares a call turn's (id, name) pairs with its answers' as multisets, in the few operations the
    common shapes need (same order; distinct pairs as sets), and sorted only when a pair repeats."""
    raw = _gemini_turn(calls, answers)
    settled = _check(raw)
    assert (settled is not None) == found_nothing(raw, "gemini")


# --------------------------------------------------------------------------- stores: sniffed once, same result


def _mixed_jsonl(seed: int, threads_per_dialect: int) -> bytes:
    """A JSONL file whose lines change dialect now and then, with stuck and hostile threads among them."""
    rng = random.Random(seed)
    lines: list[bytes] = []
    for n in range(threads_per_dialect * len(SCREENED)):
        name = SCREENED[(n // 7) % len(SCREENED)] if rng.random() < 0.8 else rng.choice(SCREENED)
        steps: list[tuple[Any, ...]] = [("user", f"hi {n} ü")]
        for k in range(rng.randint(0, 3)):
            ids = [f"c{n}_{k}_{j}" for j in range(rng.randint(1, 2))]
            answered = ids if rng.random() < 0.9 else ids[1:]
            steps.append(("tools", ids, answered, None))
            steps.append(("assistant", "done"))
        items = RENDER[name](steps)
        if rng.random() < 0.1 and items:
            items[rng.randrange(len(items))] |= rng.choice(ODD_FIELDS)
        lines.append(orjson.dumps({"id": f"t{n}", "messages": items}))
        if rng.random() < 0.03:
            lines.append(rng.choice([b"{broken", b"", b"5", b'{"id": "no thread"}']))
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize("seed", range(3))
def test_a_store_that_changes_dialect_line_by_line_settles_each_line_as_itself(tmp_path: Path, seed: int,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The screener tries the last line's dialect first; every settled line is settled as a full read sniffs it."""
    data = _mixed_jsonl(seed, 12)
    screener = settle.Screener()
    seen = set()
    for line in data.splitlines():
        settled = screener(line)
        if settled is not None:
            assert found_nothing(line, settled.dialect)
            seen.add(settled.dialect)
        elif line.startswith(b'{"id"'):
            parts = split_container(orjson.loads(line))
            dialect = dialects.sniff(parts[0]) if parts else None
            if dialect is not None and dialect.name in SCREENED and found_nothing(line, dialect.name):
                # healthy, yet not settled: only what the screen cannot vouch for (an odd field)
                assert any(orjson.dumps(odd)[1:-1] in line for odd in ODD_FIELDS), line
    assert seen == set(SCREENED)


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("forced", [None, "langchain"])
def test_repair_writes_the_same_bytes_and_says_the_same_with_every_screen(tmp_path: Path, jobs: int, forced: str | None,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from threadfix import parallel

    monkeypatch.setattr(parallel, "MIN_SHARD_BYTES", 8192)  # several shards (workers are forked with it)
    data = _mixed_jsonl(11, 20)
    store = StoreOptions(dialect=forced)
    results = repair_with_and_without_screens(tmp_path, monkeypatch, data, jobs, store)
    settled = sum(isinstance(x, Settled) for x in next(open_stores(str(tmp_path / "True" / "in.jsonl"), store)).threads_to_repair())
    assert settled > 0
    assert results[0] == results[1]


def test_a_forced_dialect_settles_only_its_own_threads() -> None:
    chat = orjson.dumps({"messages": _chat([("user", "hi"), ("tools", ["a"], ["a"], None)])})
    assert settle.Screener("openai-chat")(chat) == Settled(1, "openai-chat")
    assert settle.Screener("langchain")(chat) is None
    assert settle.Screener()(chat) == Settled(1, "openai-chat")


def test_the_screened_dialects_are_those_whose_screen_is_built() -> None:
    """``screened`` tells them by their class, without building a screen: it must name exactly the dialects whose
    ``screen()`` is one."""
    assert settle.screened() == tuple(name for name in dialects.names() if dialects.get(name).screen() is not None)


@pytest.mark.parametrize("name", ["openai-chat", "gemini", "bedrock", "ai-sdk"])
def test_a_store_s_first_document_builds_only_the_screen_of_its_sniffed_dialect(name: str) -> None:
    """The first document is sniffed once, so a folder of one dialect's files tries (and builds) that dialect's
    screen first, not every screen before it in the registry."""
    raw = _document(RENDER[name]([("user", "hi"), ("tools", ["a"], ["a"], None)]), 0, True)
    settle._document_decoder.cache_clear()
    settled = settle.Screener()(raw)
    assert settled is not None and settled.dialect == name
    assert settle._document_decoder.cache_info().currsize == 1


def test_a_large_first_document_is_not_parsed_twice_to_pick_a_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past HINT_BYTES the screens are tried in the registry's order: no full parse beside the full read's."""
    raw = _document(RENDER["bedrock"]([("user", "hi"), ("tools", ["a"], ["a"], None)]), 0, True)
    monkeypatch.setattr(settle, "HINT_BYTES", len(raw) - 1)
    parsed: list[bytes] = []
    monkeypatch.setattr(settle.Screener, "_hint", lambda self, data: parsed.append(data))
    settled = settle.Screener()(raw)
    assert settled is not None and settled.dialect == "bedrock" and not parsed
    monkeypatch.setattr(settle, "HINT_BYTES", len(raw))
    settle.Screener()(raw)
    assert parsed == [raw]


def _structs(value: Any) -> list[Any]:
    """Every msgspec struct in a decoded value, nested ones too."""
    import msgspec

    if isinstance(value, list):
        return [found for element in value for found in _structs(element)]
    if isinstance(value, msgspec.Struct):
        fields = [getattr(value, name) for name in value.__struct_fields__]
        return [value, *(found for field in fields for found in _structs(field))]
    return []


@pytest.mark.parametrize("name", SCREENED)
def test_what_a_screen_decodes_is_not_tracked_by_the_garbage_collector(name: str) -> None:
    """A screen decodes every item of every thread it is shown, and decoded JSON holds no reference cycle: tracked,
    each collection would walk them all again."""
    import gc

    decode, _, _ = settle._document_decoder(name)
    decoded = _structs(decode(_document(RENDER[name]([("user", "hi"), ("tools", ["a"], ["a"], "ok")]), 1, True)))
    assert len(decoded) > 2  # the document, its items and their blocks or parts
    assert not [struct for struct in decoded if gc.is_tracked(struct)]
