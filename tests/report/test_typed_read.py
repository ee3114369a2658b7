"""report reads accepted Responses threads typed (:mod:`threadfix.stores.typed_read`): the day of each thread, and of
every call and failure in it, from the document's own times, and every number as the full read gives it."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import benchmark_store, shortcuts
from tests.lint.test_typed_read import hostile_lines
from tests.report.test_without_shortcuts import CONTENTS, _report
from threadfix import batch
from threadfix.report import report_paths
from threadfix.stores.jsonl import IndexedThread
from threadfix.stores.typed_read import typed_read, typed_read_timed

#: what a document's update and start times may hold: seconds, milliseconds, fractions, ISO text, an integer past
#: every double's precision, and values no day is read from
DOCUMENT_TIMES = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["2025-04-01T10:00:00Z", "2025-06-30T23:59:59+02:00", "2025-06-30", "soon", "", "9999-12-31T23:59:59Z"]),
)


@st.composite
def timed_documents(draw: st.DrawFn) -> list[Any]:
    """Accepted Responses threads as documents with any mix of ``updated_at`` and ``created_at`` (or as bare arrays of
    items), outputs from the classifier's corpus, some with a status."""
    documents: list[Any] = []
    for number in range(draw(st.integers(1, 4))):
        items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]
        for i in range(draw(st.integers(0, 4))):
            call_id = f"c{number}_{i}"
            items.append({"type": "function_call", "call_id": call_id, "name": draw(st.sampled_from(["shell", "read"])),
                          "arguments": "{}"})
            output: dict[str, Any] = {"type": "function_call_output", "call_id": call_id,
                                      "output": draw(st.sampled_from(CONTENTS))}
            if draw(st.booleans()):
                output["status"] = draw(st.sampled_from(["completed", "incomplete"]))
            items.append(output)
        if draw(st.integers(0, 5)) == 0:
            documents.append(items)
            continue
        document: dict[str, Any] = {"id": f"t{number}", "items": items}
        for key in draw(st.lists(st.sampled_from(["updated_at", "created_at"]), unique=True)):
            document[key] = draw(DOCUMENT_TIMES)
        documents.append(document)
    return documents


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents=timed_documents())
def test_report_over_typed_reads_is_the_full_reads(tmp_path: Path, documents: list[Any]) -> None:
    path = tmp_path / "timed.jsonl"
    path.write_text("".join(json.dumps(document) + "\n" for document in documents), "utf-8")
    fast, slow = shortcuts.both_ways(lambda: _report([path]))
    assert fast == slow


def test_the_benchmark_threads_are_read_typed(tmp_path: Path) -> None:
    """The shortcut is taken where it is meant to be: most of the benchmark's Responses threads (all but those with
    something to repair or refuse) come from the typed read, and their items are never built."""
    store = next(path for path in shortcuts.benchmark_stores(tmp_path) if path.name == "openai-responses.jsonl")
    with shortcuts.shortcuts(True):
        scanned = [entry for entry in batch.scan([str(store)], indexed=True) if isinstance(entry, batch.Scanned)]
        fast = _report([store])
    typed = [entry.thread for entry in scanned if isinstance(entry.thread, IndexedThread)]
    assert len(typed) > len(scanned) // 2
    with shortcuts.shortcuts(False):
        slow = _report([store])
    assert fast == slow and fast[0].days


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(hostile_lines(), min_size=1, max_size=3))
def test_report_over_hostile_lines_is_the_full_reads(tmp_path: Path, lines: list[bytes]) -> None:
    """Lines the typed read must refuse where the full read refuses them (invalid UTF-8, lone surrogates, numbers
    orjson refuses, extra or repeated keys, values of another type): the same numbers, the same lines unreadable."""
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    fast, slow = shortcuts.both_ways(lambda: _report([path]))
    assert fast == slow


@settings(max_examples=200, deadline=None)
@given(line=hostile_lines())
def test_the_timed_read_is_the_typed_read_with_the_documents_times(line: bytes) -> None:
    read, timed = typed_read(line), typed_read_timed(line)
    assert (read is None) == (timed is None)
    if timed is not None:
        document = orjson.loads(line)
        assert timed[0] == read
        assert timed[1] == (document.get("updated_at"), document.get("created_at"))


def test_report_in_several_processes_through_the_typed_read_is_the_full_read_in_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from threadfix import parallel

    monkeypatch.setattr(parallel, "MIN_SHARD_BYTES", 256 * 1024)  # several parts (the workers are forked with it)
    generate = benchmark_store.generator()
    store = tmp_path / "threads.jsonl"
    store.write_bytes(generate.make_batch(generate.DEFAULT_SEED, 0, 200).jsonl)
    with shortcuts.shortcuts(True):
        spread = report_paths([str(store)], jobs=2)
    with shortcuts.shortcuts(False):
        whole = report_paths([str(store)], jobs=1)
    assert spread == whole and spread.totals.threads == 200 and spread.totals.error_outputs


def test_no_item_of_a_typed_read_holds_a_time_and_its_document_only_the_two_report_reads() -> None:
    """What report's day of a typed thread rests on: were a struct to learn an item's time key, or the document
    another time key, the thread's day would need more than its document's two times."""
    from threadfix.report import THREAD_START_KEYS
    from threadfix.stores import typed_read as typed
    from threadfix.times import ITEM_TIME_KEYS, THREAD_TIME_KEYS

    structs = typing.get_args(typed.Item)
    assert typed.FunctionCallOutput in structs
    for struct in structs:
        assert not set(struct.__struct_fields__) & set(ITEM_TIME_KEYS), struct
    document_times = set(typed.Document.__struct_fields__) & {*THREAD_TIME_KEYS, *THREAD_START_KEYS}
    assert document_times == {"updated_at", "created_at"}
