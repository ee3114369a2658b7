"""A report's numbers are the same with every shortcut off (see tests/shortcuts.py): on the benchmark's threads in
every dialect it writes, the report generator's stores, sample_threads/ and generated threads whose outputs are
failures in the forms stores write them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import shortcuts
from tests.failures.test_classify import CASES
from threadfix.report import BREAKDOWNS, Report, breakdown, report_paths


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
