"""lint's typed read of Responses thread lines (threadfix.stores.typed_read) gives exactly what the full read gives:
a thread it indexes is one orjson reads, that sniffs as Responses, whose full index is the same and is accepted;
anything else it leaves to the full read. Held on the benchmark's threads, generated threads and hostile bytes."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import benchmark_store
from tests.core import threadgen
from threadfix import dialects, jsonio, lint
from threadfix.dialects.openai_responses import OpenAIResponses
from threadfix.lint import LintOptions, LintRun
from threadfix.stores.document import split_container, thread_id
from threadfix.stores.jsonl import IndexedThread
from threadfix.stores.typed_read import typed_read

RESPONSES = OpenAIResponses()


def _agrees(body: bytes) -> bool:
    """Whether the typed read indexed ``body``; when it did, the full read agrees on everything it gives."""
    read = typed_read(body)
    if read is None:
        return False
    value = jsonio.loads(body)  # a document the typed read takes is one the full read takes
    parts = split_container(value)
    assert parts is not None
    items, container, key = parts
    assert dialects.sniff(items).name == RESPONSES.name
    full = RESPONSES.index(items)
    assert full.accepted is True and RESPONSES.quick_accepted(items)
    assert read.index == full
    assert (read.items_key, read.thread_id) == (key, thread_id(container))
    return True


@pytest.fixture(scope="module")
def benchmark_lines() -> list[bytes]:
    generate = benchmark_store.generator()
    return generate.make_batch(generate.DEFAULT_SEED, 0, 300).jsonl.splitlines()


def test_the_typed_read_agrees_with_the_full_read_on_the_benchmarks_threads(benchmark_lines: list[bytes]) -> None:
    typed = [_agrees(line) for line in benchmark_lines]
    # it stands in for the full read on most threads (the rest: stuck ones, and shapes it does not know)
    assert sum(typed) > 0.85 * len(typed), sum(typed)
    stuck = [line for line in benchmark_lines if not RESPONSES.index(orjson.loads(line)["items"]).accepted]
    assert stuck and not any(typed_read(line) for line in stuck)


#: bytes a thread line may hold that the full read refuses, or reads otherwise than a typed decode might
HOSTILE = (
    b"\xff", b"\xed\xa0\x80", b"\xc0\x80", b"\\ud800", b"\\udc00", b"\x01", b"\\x", b"1e400", b"1" + b"0" * 400,
    b'"extra":1,', b'"type":"message",', b'"call_id":"other",', b'"id":"dup",', b'"annotations":[1' + b"0" * 400 + b"],",
    b'"output":[{"type":"input_text","text":"t","x":"y"}],', b'"status":7,', b"null", b'" "', b"\\u0000", b"{", b"]",
    b'"arguments":{},', b'"name":null,', b"\xef\xbb\xbf",
)


#: values that hold them, put in as an extra key of an object
HOSTILE_VALUES = (b'"\xff"', b'"\xed\xa0\x80"', b'"\\ud800"', b"1e400", b"1" + b"0" * 400, b'"ok"', b"[1]", b"{}",
                  b"null", b"-0")
_SPOTS = (b"{", b'"text":"', b'"output":"', b'"arguments":"', b'"call_id":"')


@st.composite
def hostile_lines(draw: st.DrawFn) -> bytes:
    """An accepted benchmark-like thread line with a few hostile pieces put in: anywhere, inside a string the rules
    read or not, or as an extra key of an object (a key a decoder that skips unknown fields would not check)."""
    generate = benchmark_store.generator()
    line = bytearray(generate.make_batch(generate.DEFAULT_SEED, draw(st.integers(0, 40)), 1).jsonl.splitlines()[0])
    for _ in range(draw(st.integers(1, 3))):
        spot = draw(st.sampled_from((None, *_SPOTS)))
        if spot is None:
            at, piece = draw(st.integers(0, len(line))), draw(st.sampled_from(HOSTILE))
        else:
            starts = [i + len(spot) for i in range(len(line)) if line.startswith(spot, i)]
            if not starts:
                continue
            at = draw(st.sampled_from(starts))
            piece = (b'"extra":' + draw(st.sampled_from(HOSTILE_VALUES)) + b"," if spot == b"{"
                     else draw(st.sampled_from(HOSTILE)))
        line[at:at] = piece
    return bytes(line)


@settings(max_examples=300, deadline=None)
@given(hostile_lines())
def test_the_typed_read_indexes_no_line_the_full_read_reads_otherwise(line: bytes) -> None:
    _agrees(line)


def _generated(draw: st.DrawFn) -> list[dict]:
    items = threadgen.responses(draw(threadgen.conversations()))
    for item in items:  # item ids, some repeated
        if draw(st.integers(0, 3)) == 0:
            item["id"] = draw(st.sampled_from(["a", "b", "msg_1"]))
    return items


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_typed_read_agrees_on_generated_threads_in_every_container(data: st.DataObject) -> None:
    items = _generated(data.draw)
    key = data.draw(st.sampled_from([None, "items", "messages", "input", "history"]))
    document = items if key is None else {"id": data.draw(st.sampled_from(["t1", "", None])), key: items,
                                          "created_at": data.draw(st.sampled_from([1735689630, 1.5, "2025-01-01"]))}
    _agrees(orjson.dumps(document))


def test_an_indexed_thread_reads_its_items_and_document_in_full_when_asked(tmp_path: Path) -> None:
    generate = benchmark_store.generator()
    store = tmp_path / "threads.jsonl"
    store.write_bytes(generate.make_batch(generate.DEFAULT_SEED, 0, 30).jsonl)
    from threadfix.batch import scan

    scanned = [s for s in scan([str(store)], indexed=True) if isinstance(s.thread, IndexedThread)]
    assert scanned
    for entry in scanned:
        value = orjson.loads(entry.thread.raw)
        assert entry.thread.items == value["items"] and entry.thread.document == value
        assert entry.index == RESPONSES.index(value["items"])


def test_lint_finds_the_same_with_and_without_the_typed_read_on_hostile_lines(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    generate = benchmark_store.generator()
    lines = generate.make_batch(generate.DEFAULT_SEED, 0, 40).jsonl.splitlines()
    spoiled = []
    for i, line in enumerate(lines):  # each hostile piece inside a message's text, where no rule reads it
        at = line.index(b'"text":"') + len(b'"text":"')
        spoiled.append(line[:at] + HOSTILE[i % len(HOSTILE)] + line[at:])
    store = tmp_path / "threads.jsonl"
    store.write_bytes(b"\n".join(lines + spoiled) + b"\n")

    def run() -> list:
        results = LintRun([str(store)], LintOptions(now=2e9), jobs=1).results()
        return [(str(r.address), r.findings) if hasattr(r, "findings") else (r.where, r.message) for r in results]

    fast = run()
    monkeypatch.setattr(lint, "TYPED_READ", False)
    assert run() == fast
    problems = [entry for entry in fast if isinstance(entry[1], str)]
    assert problems, "the spoiled lines the full read refuses are reported"


def _indexed_threads(scanned) -> int:
    """A --jobs worker's count of the threads of its part that came indexed from the typed read."""
    return sum(isinstance(entry.thread, IndexedThread) for entry in scanned if hasattr(entry, "thread"))


def test_jobs_workers_read_their_parts_through_the_typed_read_too(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from threadfix import parallel
    from threadfix.batch import scan_parts
    from threadfix.stores import StoreOptions

    monkeypatch.setattr(parallel, "MIN_SHARD_BYTES", 256 * 1024)  # several parts (the workers are forked with it)
    generate = benchmark_store.generator()
    store = tmp_path / "threads.jsonl"
    store.write_bytes(generate.make_batch(generate.DEFAULT_SEED, 0, 200).jsonl)
    parts = scan_parts([str(store)], 2, StoreOptions(), _indexed_threads, indexed=True)
    assert parts is not None
    counts = [count for _, count in parts]
    assert len(counts) > 1 and all(counts), counts  # every part, in its worker, read lines the typed way


_OURS = ('{"error": {"kind": "aborted"}, "written_by": "threadfix"}', '{"written_by":"threadfix"}', "threadfix",
         '"threadfix"', "not ours", "")


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.tuples(st.sampled_from(_OURS), st.booleans()), min_size=1, max_size=4),
       escape=st.sampled_from(["", "t", "h", "x", "\u00e9"]))
def test_threadfix_outputs_are_found_however_the_line_spells_them(texts: list[tuple[str, bool]], escape: str) -> None:
    """The line is searched once for the marker's word: spelt plainly, behind a \\u escape of one of its letters,
    as text parts, or absent, every output threadfix wrote is found as the full read finds it."""
    items: list[dict] = [{"type": "message", "role": "user", "content": "go"}]
    for i, (text, parts) in enumerate(texts):
        items.append({"type": "function_call", "call_id": f"c{i}", "name": "shell", "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"c{i}",
                      "output": [{"type": "input_text", "text": text}] if parts else text})
    line = orjson.dumps({"id": "t", "items": items})
    if escape:
        line = line.replace(escape.encode(), f"\\u{ord(escape):04x}".encode())
    assert _agrees(line)


@pytest.mark.parametrize(("named", "other"), [
    (b'"status":"completed"', b'"status":"failed"'), (b'"role":"user"', b'"role":"critic"'),
    (b'"type":"input_text"', b'"type":"text"'), (b'"type":"summary_text"', b'"type":"summary"'),
])
def test_a_status_role_or_part_type_the_api_does_not_name_is_read_in_full(benchmark_lines: list[bytes], named: bytes,
                                                                          other: bytes) -> None:
    """The typed read decodes these as the API's own values; a thread holding another one is read in full (its
    full index may well accept it: the typed read only refuses more)."""
    holding = [line for line in benchmark_lines if named in line and typed_read(line) is not None][:5]
    assert holding
    for line in holding:
        changed = line.replace(named, other, 1)
        assert typed_read(changed) is None
        assert split_container(jsonio.loads(changed)) is not None
