"""Repair's settled read of whole thread documents (JSONL lines, one-thread rows) against a full read.

A document :func:`settles_document` settles must be one a full read finds healthy in the Responses dialect;
every other thread must come out of ``threads_to_repair`` exactly as ``threads`` gives it, in order.
"""

from __future__ import annotations

import json
import random
import sqlite3
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.screening import repair_with_and_without_screens, same_as_a_full_read
from threadfix import dialects, parallel
from threadfix.batch import RepairRun, RunOptions
from threadfix.stores import StoreOptions, open_stores, settle
from threadfix.stores.base import Settled
from threadfix.stores.files import split_container
from threadfix.stores.settle import CALL, OUTPUT

RESPONSES = dialects.get("openai-responses")


def settles_document(raw: bytes) -> bool:
    """Whether the Responses screen settles the thread in ``raw`` (an array of items, or an object with one of the
    thread keys), as a store whose dialect is Responses screens it."""
    return settle.Screener(RESPONSES.name)(raw) is not None
PLAIN = settle.plain_types()


def healthy_on_a_full_read(raw: bytes) -> bool:
    """What repair decides for the document on a full read: parsed by orjson, sniffed, quick_healthy."""
    try:
        parts = split_container(orjson.loads(raw))
    except orjson.JSONDecodeError:
        return False
    if parts is None:
        return False
    items = parts[0]
    return dialects.sniff(items) is RESPONSES and RESPONSES.quick_healthy(items)


# --------------------------------------------------------------------------- one document

CALL_ID = st.one_of(st.sampled_from(["a", "b", "call_1", "", "é", "{x"]), st.integers(0, 2), st.none())
ITEM = st.one_of(
    st.builds(lambda kind: {"type": kind, "content": "x"}, st.sampled_from(PLAIN)),
    st.builds(lambda kind, call_id: {"type": kind, "call_id": call_id, "name": "f", "arguments": "{}"},
              st.sampled_from([CALL, OUTPUT]), CALL_ID),
    st.builds(lambda kind: {"type": kind}, st.sampled_from([CALL, OUTPUT])),  # no call_id
    st.sampled_from([
        {"type": "custom_tool_call", "call_id": "a", "input": ""}, {"type": "computer_call", "call_id": "a"},
        {"type": "tool_search_call", "call_id": "a", "execution": "server"}, {"type": 7}, {"role": "user"},
        {"type": None}, {"type": "local_shell_call_output", "id": "a"}, [], "text", 5, None,
        {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f"}}]},
    ]),
)


def _container(items: list[Any], shape: int) -> Any:
    return [items, {"items": items, "id": "t"}, {"input": None, "messages": items},
            {"input": "text", "items": items}, {"input": [], "items": items}, {"history": items, "items": 5}][shape]


@settings(max_examples=400)
@given(st.lists(ITEM, max_size=10), st.integers(0, 5), st.booleans(), st.booleans())
def test_settled_only_when_a_full_read_finds_it_healthy(items: list[Any], shape: int, ascii_only: bool,
                                                       spaced: bool) -> None:
    raw = json.dumps(_container(items, shape), ensure_ascii=ascii_only,
                     separators=(", ", ": ") if spaced else (",", ":")).encode()
    if settles_document(raw):
        assert healthy_on_a_full_read(raw)


@given(st.lists(st.one_of(st.builds(lambda kind: {"type": kind}, st.sampled_from(PLAIN)),
                          st.sampled_from(["a", "b", "c", "d"])), max_size=12), st.integers(0, 2))
def test_every_healthy_thread_of_function_calls_with_string_ids_settles(steps: list[Any], shape: int) -> None:
    """The screen gives up only on what it cannot vouch for, so it really is the fast path."""
    items, seen = [], set()
    for step in steps:
        if isinstance(step, dict):
            items.append(step)
        elif step not in seen:
            seen.add(step)
            items += [{"type": CALL, "call_id": step, "arguments": "{}"}, {"type": OUTPUT, "call_id": step, "output": "x"}]
    raw = orjson.dumps(_container(items, shape))
    assert settles_document(raw) == (bool(items) and healthy_on_a_full_read(raw))


@pytest.mark.parametrize("raw", [
    b'[{"type":"message","type":"function_call","call_id":"x"}]',  # a repeated type: orjson reads the last
    b'[{"type":"function_call","call_id":"x","type":"message"}]',
    b'[{"type":"function_call","call_id":"x"},{"type":"function_call_output","call_id":"y","call_id":"x"}]',
    b'[{"type":"function_call","call_id":"x"},{"type":"function_call_output","call_id":"x","call_id":"y"}]',
    b'{"items":[{"type":"function_call","call_id":"x"}],"items":[{"type":"message"}]}',
    b'{"items":[{"type":"message"}],"items":[{"type":"function_call","call_id":"x"}]}',
    b'[{"type":"function\\u005fcall","call_id":"x"},{"type":"function_call_output","call_id":"\\u0078"}]',
    b'[{"type":"message","content":"\\ud800"}]',  # a lone surrogate: orjson refuses it
    b'[{"type":"message","content":' + b"[" * 2000 + b"]" * 2000 + b"}]",
    b'\xef\xbb\xbf[{"type":"message"}]',
    b'[{"type":"message"}] x', b'[{"type":"message",}]', b"[]", b"{}", b'{"items":null}', b"null",
    b'[{"type":"message"},{"type":"function_call","call_id":"a"},{"type":"function_call","call_id":"a"},'
    b'{"type":"function_call_output","call_id":"a"},{"type":"function_call_output","call_id":"a"}]',
    b'[{"type":"function_call_output","call_id":"a"},{"type":"function_call","call_id":"a"}]',
])
def test_hostile_documents_settle_only_when_healthy(raw: bytes) -> None:
    if settles_document(raw):
        assert healthy_on_a_full_read(raw)


@pytest.mark.parametrize("raw", [b'[{"type":"message","content":"x","n":1e400}]',
                                 b'[{"type":"message","content":"\xff"}]', b'[{"type":"message","c\xed\xa0\x80":1}]'])
def test_what_a_settled_document_may_hide_is_only_inside_skipped_values(raw: bytes) -> None:
    """Documented in threadfix.stores.settle: such a thread is left as it is, as a healthy one is."""
    assert settles_document(raw) and not healthy_on_a_full_read(raw)
    assert not settles_document(raw.replace(b'"message"', b'"function_call"'))  # a call's id is read, not skipped
    assert not settles_document(b'[{"type":"message\xff"}]')  # nor a type
    assert not settles_document(b'[{"type":"function_call","call_id":"\xff"},'
                                b'{"type":"function_call_output","call_id":"\xff"}]')


def test_a_document_msgspec_cannot_decode_for_any_reason_is_left_to_the_full_read(monkeypatch: pytest.MonkeyPatch) -> None:
    _, unreadable, paired = settle._document_decoder(settle.DIALECT)
    healthy = b'[{"type":"function_call","call_id":"x"},{"type":"function_call_output","call_id":"x"}]'
    assert settles_document(healthy)
    for failure in (MemoryError, RecursionError):
        def decode(raw: bytes, failure: type[BaseException] = failure) -> None:
            raise failure()

        monkeypatch.setattr(settle, "_document_decoder", lambda name, decode=decode: (decode, unreadable, paired))
        assert not settles_document(healthy)


def test_repeated_keys_are_read_as_orjson_reads_them() -> None:
    healthy = b'[{"type":"function_call","call_id":"x"},{"type":"function_call_output","call_id":"y","call_id":"x"}]'
    assert settles_document(healthy) and healthy_on_a_full_read(healthy)
    stuck = b'{"items":[{"type":"message"}],"items":[{"type":"function_call","call_id":"x"}]}'
    assert not settles_document(stuck) and not healthy_on_a_full_read(stuck)


# --------------------------------------------------------------------------- stores


def _thread(rng: random.Random, n: int) -> Any:
    items: list[Any] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"hi {n} ü"}]}]
    for step in range(rng.randint(0, 4)):
        ids = [f"call_{n}_{step}_{k}" for k in range(rng.choice([1, 1, 2, 3]))]
        items += [{"type": CALL, "call_id": i, "name": "f", "arguments": "{}"} for i in ids]
        rng.shuffle(ids)
        items += [{"type": OUTPUT, "call_id": i, "output": "ok"} for i in ids if rng.random() > 0.1]
        items.append({"type": "reasoning", "summary": []})
    if rng.random() < 0.2:
        items.insert(rng.randint(0, len(items)), rng.choice(ITEM_ODDITIES))
    return _container(items, rng.choice([0, 1, 1, 2]))


ITEM_ODDITIES = [{"type": 7}, {"type": "computer_call", "call_id": "c"}, {"role": "user", "content": "x"}, "text",
                 {"type": CALL, "call_id": ""}, {"type": OUTPUT, "call_id": "nobody"}]
LINE_ODDITIES = [b"{broken", b"", b"   ", b"5", b'{"id": "no thread"}', b'\xef\xbb\xbf[{"type":"message"}]',
                 b'{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": '
                 b'[{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]}']


def _jsonl(rng: random.Random, threads: int, oddities: bool) -> bytes:
    lines = []
    for n in range(threads):
        if oddities and rng.random() < 0.15:
            lines.append(rng.choice(LINE_ODDITIES))
        else:
            lines.append(json.dumps(_thread(rng, n), ensure_ascii=rng.random() < 0.5).encode())
    ending = b"\r\n" if rng.random() < 0.2 else b"\n"
    return ending.join(lines) + (ending if rng.random() < 0.8 else b"")


@pytest.fixture
def always_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settle, "MIN_DOCUMENTS_BYTES", 0)


@pytest.mark.parametrize("seed", range(8))
def test_jsonl_lines_settled_as_a_full_read_finds_them(tmp_path: Path, always_screen: None, seed: int) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_jsonl(random.Random(seed), 40, oddities=seed % 2 == 1))
    assert same_as_a_full_read(lambda: next(open_stores(str(path), StoreOptions()))) > 0


def test_an_item_per_line_file_is_one_thread_and_never_settled(tmp_path: Path, always_screen: None) -> None:
    path = tmp_path / "items.jsonl"
    items = [{"type": "message", "role": "user", "content": "hi"}, {"type": CALL, "call_id": "a", "arguments": "{}"},
             {"type": OUTPUT, "call_id": "a", "output": "x"}, [{"type": "message"}]]
    path.write_bytes(b"".join(orjson.dumps(item) + b"\n" for item in items))
    screened = list(next(open_stores(str(path), StoreOptions())).threads_to_repair())
    assert not any(isinstance(x, Settled) for x in screened)


def test_small_stores_and_other_dialects_are_read_in_full(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_jsonl(random.Random(1), 30, oddities=False))
    for options in (StoreOptions(), StoreOptions(dialect="openai-chat")):
        screened = list(next(open_stores(str(path), options)).threads_to_repair())
        assert not any(isinstance(x, Settled) for x in screened)  # under MIN_DOCUMENTS_BYTES, or forced


def test_a_forced_responses_dialect_still_settles(tmp_path: Path, always_screen: None) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_jsonl(random.Random(2), 30, oddities=True))
    options = StoreOptions(dialect="openai-responses")
    assert same_as_a_full_read(lambda: next(open_stores(str(path), options))) > 0


@pytest.mark.parametrize("ranges", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_one_thread_rows_settled_as_a_full_read_finds_them(tmp_path: Path, always_screen: None, seed: int,
                                                           ranges: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Also each row id range that --jobs cuts the table into, as its worker reads it."""
    monkeypatch.setattr(parallel, "MIN_SHARD_BYTES", 1)  # ranges of a few rows
    rng = random.Random(seed)
    path = tmp_path / "t.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, items TEXT)")
    for n in range(40):
        value: Any = json.dumps(_thread(rng, n))
        if rng.random() < 0.15:
            value = rng.choice([*LINE_ODDITIES, None, 5, value.encode()])
        conn.execute("INSERT INTO threads VALUES (?, ?)", (f"t{n}", value))
    conn.close()
    options = StoreOptions(table="threads", json_column="items", id_column="id")
    windows = [shard.part.rows for shard in parallel.plan_shards([str(path)], 3)] if ranges else [None]
    assert len(windows) == (3 if ranges else 1)

    def store_of(window: tuple[int | None, int | None] | None) -> Any:
        store = next(open_stores(str(path), options))
        store.row_range = window
        return store

    assert sum(same_as_a_full_read(partial(store_of, window)) for window in windows) > 0


@pytest.mark.parametrize("jobs", [1, 2])
def test_repair_writes_the_same_bytes_and_says_the_same_with_the_screen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       jobs: int) -> None:
    monkeypatch.setattr(parallel, "MIN_SHARD_BYTES", 4096)  # several shards (workers are forked with it)
    data = _jsonl(random.Random(7), 200, oddities=True)
    results = repair_with_and_without_screens(tmp_path, monkeypatch, data, jobs)
    assert results[0] == results[1]
    assert results[0][3] > 0 and results[0][5]  # something repaired, something unreadable


def test_stdin_is_settled_and_written_back_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    data = _jsonl(random.Random(11), 120, oddities=True)
    written = []
    for screen in (False, True):
        monkeypatch.setattr(settle, "MIN_DOCUMENTS_BYTES", 0 if screen else 1 << 62)
        repair = RepairRun(["-"], RunOptions(min_age=0), stdin=io.BytesIO(data))
        statuses = sorted((o.address, o.status) if hasattr(o, "status") else (o.where, o.message)
                          for o in repair.outcomes())
        written.append((repair.result.stdout, statuses, repair.result.threads, repair.result.changed))
    assert written[0] == written[1]
    assert written[0][3] > 0 and written[0][0] != data
    from threadfix.stores.files import FileStore

    assert any(isinstance(x, Settled) for x in FileStore(None, "<stdin>", data).threads_to_repair())
