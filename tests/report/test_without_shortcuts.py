"""A report's numbers are the same with every shortcut off (see tests/shortcuts.py): on the benchmark's threads in
every dialect it writes, the report generator's stores, sample_threads/ and generated threads whose outputs are
failures in the forms stores write them, with times, repeated or missing call ids and odd tool names in random
places."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import shortcuts
from tests.failures.test_classify import CASES
from threadfix import report as report_module
from threadfix.report import BREAKDOWNS, NO_CALL, OTHER_TOOLS, Report, breakdown, report_paths


def _report(paths: list[Path]) -> tuple[Report, list]:
    """The report, and every table its renderers print."""
    report = report_paths([str(path) for path in paths], jobs=1)
    return report, [breakdown(report, by, 50) for by in BREAKDOWNS]


def test_report_is_the_same_without_shortcuts_on_benchmark_threads_in_every_dialect(tmp_path: Path) -> None:
    stores = shortcuts.benchmark_stores(tmp_path)
    fast, slow = shortcuts.both_ways(lambda: _report(stores))
    assert fast == slow
    assert fast[0].totals.error_outputs > 0 and fast[0].totals.stuck_threads > 0


def test_report_is_the_same_without_shortcuts_on_report_stores(tmp_path: Path) -> None:
    stores = shortcuts.report_stores(tmp_path)
    fast, slow = shortcuts.both_ways(lambda: _report(stores))
    assert fast == slow
    assert fast[0].totals.threadfix_outputs > 0 and fast[0].clusters


def test_report_is_the_same_without_shortcuts_on_the_sample_threads() -> None:
    fast, slow = shortcuts.both_ways(lambda: _report([shortcuts.SAMPLES]))
    assert fast == slow


# --------------------------------------------------------------------------- generated threads

#: the classifier's corpus (failures of every kind, and results that look like them), and plain results
CONTENTS = [case["content"] for case in CASES] + ["ok", "Plan updated", "total 3\nREADME.md", "  indented result"]


def _escaped(text: str, how: str) -> Any:
    """``text`` as an output's content in one of the forms stores hold it: as it is, as a text part, inside a JSON
    envelope (itself a string, so its quotes and escapes are doubled on the wire), with its non-ASCII letters or
    its leading letter escaped as ``\\uXXXX`` once decoded, with a trailing newline, or with a flag."""
    if how == "part":
        return [{"type": "input_text", "text": text}]
    if how == "envelope":
        return orjson.dumps({"error": text}).decode()
    if how == "ascii-json":
        return json.dumps({"output": text, "exit_code": 1})  # \uXXXX for every non-ASCII character
    if how == "newline":
        return text + "\n"
    return text


FORMS = ("raw", "part", "envelope", "ascii-json", "newline")


@st.composite
def responses_threads(draw: st.DrawFn) -> list[dict[str, Any]]:
    threads = []
    for number in range(draw(st.integers(1, 4))):
        items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]
        for i in range(draw(st.integers(0, 5))):
            call_id = f"c{number}_{i}"
            items.append({"type": "function_call", "call_id": call_id, "name": draw(st.sampled_from(["shell", "read", "x"])),
                          "arguments": "{}"})
            if draw(st.integers(0, 9)) == 0:
                continue  # dangling
            content = draw(st.sampled_from(CONTENTS))
            if isinstance(content, str):
                content = _escaped(content, draw(st.sampled_from(FORMS)))
            output: dict[str, Any] = {"type": "function_call_output", "call_id": call_id, "output": content}
            if draw(st.booleans()):
                output["status"] = draw(st.sampled_from(["completed", "incomplete", "failed"]))
            if draw(st.integers(0, 4)) == 0:
                output["created_at"] = draw(st.sampled_from([1_740_000_000, 1_750_000_000, "2025-04-01T10:00:00Z"]))
            items.append(output)
        threads.append({"id": f"t{number}", "created_at": 1_745_000_000 + number * 90_000, "items": items})
    return threads


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(threads=responses_threads())
def test_report_is_the_same_without_shortcuts_on_generated_threads_with_escaped_failures(tmp_path: Path, threads) -> None:
    """Failures and results as stores write them (escaped to ASCII on the wire, in parts, in envelopes, flagged or
    with a status), repeated across threads so the cache answers some: every number and table the same."""
    path = tmp_path / "generated.jsonl"
    path.write_text("".join(json.dumps(thread) + "\n" for thread in threads * 2), "ascii")
    fast, slow = shortcuts.both_ways(lambda: _report([path]))
    assert fast == slow
    assert fast[0].totals.outputs == sum(item["type"] == "function_call_output" for t in threads * 2 for item in t["items"])


#: tool names a report treats specially or cuts (its own row names, one past the 128 characters kept, two that cut
#: to the same name), and plain ones
TOOL_NAMES = ["shell", "read", NO_CALL, OTHER_TOOLS, "t" * 200, "t" * 127 + "x", "t" * 127 + "y", ""]
#: what an item's time key may hold: seconds, milliseconds, ISO text, and values no time is read from
TIMES = [1_740_000_000, 1_750_000_000_000, "2025-04-01T10:00:00Z", "2025-06-30T23:59:59+02:00", "soon", None, True, 0]
TIME_KEYS = ["created_at", "timestamp", "updated_at", "createdAt", "time"]


def _timed(draw: st.DrawFn, item: dict[str, Any]) -> dict[str, Any]:
    """``item``, one time in three with a time key (any item: a call, an output, a message, the last one)."""
    if draw(st.integers(0, 2)) == 0:
        item[draw(st.sampled_from(TIME_KEYS))] = draw(st.sampled_from(TIMES))
    return item


def _content(draw: st.DrawFn) -> Any:
    content = draw(st.sampled_from(CONTENTS))
    return _escaped(content, draw(st.sampled_from(FORMS))) if isinstance(content, str) else content


@st.composite
def mixed_threads(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    """Responses or Anthropic threads: call ids that repeat or are missing, odd tool names, times anywhere, the
    corpus's texts as outputs (Anthropic's with an ``is_error`` flag or none), some calls left dangling."""
    dialect = draw(st.sampled_from(["responses", "anthropic"]))
    threads = []
    for number in range(draw(st.integers(1, 4))):
        user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
        items: list[dict[str, Any]] = [_timed(draw, user if dialect == "responses" else {"role": "user", "content": "go"})]
        for turn in range(draw(st.integers(0, 3))):
            calls = [(draw(st.sampled_from([f"c{number}_{turn}_{i}", f"c{number}_0_0", "dup"])), draw(st.sampled_from(TOOL_NAMES)))
                     for i in range(draw(st.integers(1, 3)))]
            answered = [call for call in calls if draw(st.integers(0, 7))]
            if dialect == "responses":
                for call_id, name in calls:
                    items.append(_timed(draw, {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}))
                for call_id, _ in answered:
                    output: dict[str, Any] = {"type": "function_call_output", "call_id": call_id, "output": _content(draw)}
                    if draw(st.booleans()):
                        output["status"] = draw(st.sampled_from(["completed", "incomplete", "failed"]))
                    items.append(_timed(draw, output))
            else:
                items.append(_timed(draw, {"role": "assistant", "content": [
                    {"type": "tool_use", "id": call_id, "name": name, "input": {}} for call_id, name in calls]}))
                results = []
                for call_id, _ in answered:
                    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": _content(draw)}
                    if draw(st.booleans()):
                        result["is_error"] = draw(st.booleans())
                    results.append(result)
                items.append(_timed(draw, {"role": "user", "content": results or "next"}))
        thread: dict[str, Any] = {"id": f"t{number}", "items" if dialect == "responses" else "messages": items}
        if draw(st.booleans()):
            thread["created_at"] = 1_745_000_000 + number * 90_000
        threads.append(thread)
    return dialect, threads


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(generated=mixed_threads(), few_tools=st.booleans())
def test_report_is_the_same_without_shortcuts_on_generated_threads_with_times_and_odd_ids(
        tmp_path: Path, generated: tuple[str, list[dict[str, Any]]], few_tools: bool) -> None:
    """Days read from items that carry a time (a call's, an output's, the last item's), the tool of an id called
    twice, outputs of no call, names cut to one row or folded into the others' row: every number the same."""
    _, threads = generated
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(thread) + "\n" for thread in threads * 2), "utf-8")
    with pytest.MonkeyPatch.context() as patch:
        if few_tools:
            patch.setattr(report_module, "MAX_TOOLS", 2)
        fast, slow = shortcuts.both_ways(lambda: _report([path]))
    assert fast == slow
    assert fast[0].totals.threads == 2 * len(threads)
