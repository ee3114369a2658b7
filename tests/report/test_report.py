"""The report's numbers against the truth of generated stores, its merge, its bounds and its clustering."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.report import storegen
from threadfix import report as report_module
from threadfix.batch import Scanned, resolve_dialect, scan
from threadfix.model import Address, Thread
from threadfix.render.report import JsonRenderer, View
from threadfix.report import MAX_PATTERNS, OTHER_TOOLS, Report, build_report, day_of, pattern_of

TOP = 1000  # enough rows for every tool, kind, message, stuck thread and day of the test stores


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, storegen.Truth]:
    folder = tmp_path_factory.mktemp("store")
    return folder, storegen.write_store(folder, 240, seed=11, hostile=True)


def json_report(folder: Path, top: int = TOP, by: str = "tool") -> dict:
    problems: list = []
    report = build_report(scan([str(folder)]), keep=top, on_problem=problems.append)
    document = orjson.loads(JsonRenderer(View(by=by, top=top)).render(report))
    document["problems"] = problems
    return document


def test_totals_equal_the_truth(store) -> None:
    folder, truth = store
    document = json_report(folder)
    assert {key: document["totals"][key] for key in truth.totals()} == truth.totals()
    assert document["totals"]["calls_left_alone"] == 0
    assert len(document["problems"]) == truth.unreadable
    # the store exercises every count
    assert all(value > 0 for value in truth.totals().values())


def test_per_tool_counts_and_failures_by_kind_and_tool_equal_the_truth(store) -> None:
    folder, truth = store
    document = json_report(folder)
    tools = {row["tool"]: row for row in document["tools"]}
    assert set(tools) == {storegen_tool(name) for name in truth.tools}
    for name, expected in truth.tools.items():
        row = tools[storegen_tool(name)]
        assert (row["calls"], row["outputs"], row["error_outputs"], row["dangling_calls"]) == (
            expected.calls, expected.outputs, expected.error_outputs, expected.dangling_calls), name
        assert row["failures"] == expected.error_outputs + expected.dangling_calls
        if expected.calls:
            assert row["error_rate"] == pytest.approx(row["failures"] / expected.calls, abs=1e-4)
        else:
            assert row["error_rate"] is None
        assert row["kinds"] == dict(sorted(expected.kinds.items(), key=lambda e: (-e[1], e[0]))[:3])
    cells = {(cell["kind"], cell["tool"]): cell["failures"] for cell in document["kind_tool"]}
    assert cells == {(kind, storegen_tool(name)): n for name, t in truth.tools.items() for kind, n in t.kinds.items()}
    kinds = {row["kind"]: (row["error_outputs"], row["dangling_calls"]) for row in document["kinds"]}
    assert kinds == {kind: tuple(pair) for kind, pair in truth.kinds.items()}


def storegen_tool(name: str) -> str:
    """A planted tool name as the report prints it (the hostile one is escaped)."""
    from threadfix.render.safe import safe_excerpt

    return safe_excerpt(name, 60)


def test_messages_group_each_planted_error_template_once(store) -> None:
    folder, truth = store
    messages = json_report(folder)["messages"]
    # threadfix's own outputs are error outputs too: they share one pattern
    planted = Counter({key: n for key, n in truth.messages.items()})
    ours = [row for row in messages if row["pattern"].startswith("This call did not return a result")]
    assert [row["count"] for row in ours] == [truth.threadfix_outputs]
    others = sorted((row["kind"], row["count"]) for row in messages if row not in ours)
    assert others == sorted((kind, n) for (kind, _), n in planted.items())
    for row in messages:
        assert "#" in row["example"] and row["example"].startswith(str(folder))


def test_stuck_threads_worst_first_with_their_addresses(store) -> None:
    folder, truth = store
    document = json_report(folder, top=15)
    rows = document["stuck_threads"]
    assert len(rows) == 15
    for row in rows:
        thread_id = row["address"].rsplit("id=", 1)[1]
        assert truth.stuck[thread_id] == (row["later_user_turns"], row["dangling_calls"])
    severities = [(row["later_user_turns"], row["dangling_calls"]) for row in rows]
    assert severities == sorted(truth.stuck.values(), reverse=True)[:15]
    turns = {row["later_user_turns"]: row["stuck_threads"] for row in document["stuck_by_turns"]}
    assert turns == {str(k): n for k, n in truth.stuck_by_turns.items()}


def test_counts_by_day_equal_the_truth(store) -> None:
    folder, truth = store
    days = {row.pop("day"): row for row in json_report(folder)["days"]}
    fields = ("threads", "stuck_threads", "calls", "error_outputs", "dangling_calls")
    assert days == {day: {**{f: counts[f] for f in fields}, "failures": counts["error_outputs"] + counts["dangling_calls"]}
                    for day, counts in truth.days.items()}
    # --top keeps the latest days, oldest first
    assert [row["day"] for row in json_report(folder, top=3)["days"]] == sorted(truth.days)[-3:]


def test_the_breakdown_is_the_table_by_chooses(store) -> None:
    folder, _ = store
    document = json_report(folder, top=5, by="kind")
    assert document["breakdown"] == document["kinds"] and len(document["kinds"]) == 5
    assert json_report(folder, top=5, by="day")["breakdown"] == json_report(folder, top=5)["days"]


# --------------------------------------------------------------------------- merging and bounds


def _report_of(folder: Path, keep: int = 5) -> Report:
    return build_report(scan([str(folder)]), keep=keep)


def _document(report: Report) -> dict:
    return orjson.loads(JsonRenderer(View(top=TOP)).render(report))


def _threads(count: int, seed: int) -> list[Scanned]:
    """Generated threads, read as scan reads them, without a file."""
    rng = random.Random(seed)
    found = []
    for number in range(count):
        plan = storegen.plan_thread(rng, number, storegen.DIALECTS[number % 3], hostile=number == 1)
        container = storegen.render(plan, rng)
        key = "items" if "items" in container else "messages"
        thread = Thread(Address("s.jsonl", number + 1, f"id={plan.thread_id}"), container[key], container, key)
        dialect = resolve_dialect(thread, None)
        found.append(Scanned(thread, dialect, dialect.index(thread.items)))
    return found


@settings(max_examples=40)
@given(seed=st.integers(0, 10_000), split=st.integers(0, 30), keep=st.integers(0, 6))
def test_merged_reports_equal_the_report_of_both(seed: int, split: int, keep: int) -> None:
    threads = _threads(30, seed)
    merged = build_report(threads[:split], keep=keep).merge(build_report(threads[split:], keep=keep))
    whole = build_report(threads, keep=keep)
    assert _document(merged) == _document(whole)
    assert [s.address for s in merged.stuck()] == [s.address for s in whole.stuck()]


def test_tools_beyond_the_limit_share_one_row(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(report_module, "MAX_TOOLS", 3)
    truth = storegen.write_store(tmp_path, 60, broken=False)
    report = _report_of(tmp_path)
    assert len(report.tools) == 3 + 1 and OTHER_TOOLS in report.tools and report.approximate
    assert sum(stats.calls for stats in report.tools.values()) == truth.calls
    assert sum(stats.failures for stats in report.tools.values()) == truth.error_outputs + truth.dangling_calls


def test_rare_patterns_are_pruned_and_counted_as_unclustered() -> None:
    report = Report()
    for i in range(2 * MAX_PATTERNS + 5):
        word = "".join("abcdefghijklmnopqrstuvwxyz"[int(digit, 26)] for digit in _base26(i))
        report._cluster("execution", f"Error: case {word} failed", "a#1", "t")
    for _ in range(3):
        report._cluster("timeout", "TimeoutError: timed out", "a#2", "t")
    assert len(report.clusters) < 2 * MAX_PATTERNS
    assert sum(c.count for c in report.clusters.values()) + report.unclustered == 2 * MAX_PATTERNS + 8
    assert report.clusters[("timeout", "TimeoutError: timed out")].count == 3
    assert report.approximate


def _base26(n: int) -> str:
    digits = "0123456789abcdefghijklmnop"
    text = ""
    while True:
        n, rest = divmod(n, 26)
        text = digits[rest] + text
        if not n:
            return text


def test_only_the_worst_stuck_threads_are_kept(tmp_path: Path) -> None:
    truth = storegen.write_store(tmp_path, 90, broken=False)
    report = _report_of(tmp_path, keep=4)
    assert len(report.stuck()) == 4
    assert [s.severity for s in report.stuck()] == sorted(truth.stuck.values(), reverse=True)[:4]
    assert report.totals.stuck_threads == len(truth.stuck)


# --------------------------------------------------------------------------- clustering and days


@pytest.mark.parametrize(("first", "second"), [
    ("TimeoutError: request to api3.example.com timed out after 30 seconds",
     "TimeoutError: request to api47.example.com timed out after 5 seconds"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/srv/a/x1.txt'",
     "FileNotFoundError: [Errno 2] No such file or directory: '/home/b/data.csv'"),
    ("job 3f2a9c1e-0b4d-4c1a-9e7f-1a2b3c4d5e6f failed at 2025-03-01T10:22:33Z",
     "job 00000000-1111-2222-3333-444444444444 failed at 2024-12-31 23:59:59"),
    ("tool call_8Zk2Q9 failed: exit status 1 in /tmp/build/run.sh", "tool call_Aa91x0 failed: exit status 2 in ./run.sh"),
    ('Error: unknown column "user_id" near `SELECT 1`', "Error: unknown column \"org\" near `SELECT *`"),
    ("hash 0xdeadbeef mismatch (expected 9f86d081884c7d65)", "hash 0x1 mismatch (expected 2c26b46b68ffc68f)"),
    ("connect to 10.0.0.12:5432 refused", "connect to 192.168.1.1:80 refused"),
    ("see https://status.example.com/i/123 or mail ops@example.com", "see http://x.io/?q=1 or mail a.b@c.org"),
])
def test_the_same_error_with_other_ids_gets_the_same_pattern(first: str, second: str) -> None:
    assert pattern_of(first) == pattern_of(second)


@pytest.mark.parametrize(("first", "second"), [
    ("Permission denied", "No such file or directory"),
    ("rate limit exceeded for key", "quota exceeded for project"),
])
def test_different_errors_keep_different_patterns(first: str, second: str) -> None:
    assert pattern_of(first) != pattern_of(second)


def test_words_and_apostrophes_survive_masking() -> None:
    assert pattern_of("can't connect: the server isn't up") == "can't connect: the server isn't up"
    assert pattern_of("a\n\n  b\tc") == "a b c"


@given(st.text(max_size=300))
def test_patterns_are_short_and_stable(text: str) -> None:
    pattern = pattern_of(text)
    assert len(pattern) <= report_module.PATTERN_CHARS
    assert pattern_of(pattern) == pattern or pattern.endswith("…")


@pytest.mark.parametrize(("moment", "day"), [
    (0, "1970-01-01"), (1740787200.5, "2025-03-01"), (None, None), (float("nan"), None), (1e300, None),
    (-1e300, None),
])
def test_day_of(moment, day) -> None:
    assert day_of(moment) == day


def test_item_times_win_over_the_thread_time(tmp_path: Path) -> None:
    thread = {"id": "x", "created_at": "2025-01-01T00:00:00Z", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "created_at": 1738368000000,  # 2025-02-01, in milliseconds
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    ]}
    (tmp_path / "t.json").write_bytes(orjson.dumps(thread))
    report = _report_of(tmp_path)
    assert {day: (s.threads, s.calls, s.dangling_calls) for day, s in report.days.items()} == {
        "2025-02-01": (1, 1, 1)}  # its last item dates the thread too


def test_a_thread_with_no_known_format_is_counted_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_bytes(b'{"items": [{"note": 1}, 2, "three"]}')
    report = _report_of(tmp_path)
    assert (report.totals.threads, report.totals.unrecognised_threads, report.totals.calls) == (1, 1, 0)


def test_random_stores_never_break_the_report(tmp_path: Path) -> None:
    rng = random.Random(5)
    values = [None, 1, "x", [], {}, {"role": "tool"}, {"type": "function_call"}, {"role": "assistant", "tool_calls": 5},
              {"role": "user", "content": [{"type": "tool_result", "content": {"error": {"code": 429}}}]},
              {"type": "function_call_output", "call_id": 3, "output": [1, {"text": None}]}]
    lines = [orjson.dumps({"items": [rng.choice(values) for _ in range(rng.randint(0, 6))]}) for _ in range(300)]
    (tmp_path / "r.jsonl").write_bytes(b"\n".join(lines))
    report = _report_of(tmp_path)
    assert report.totals.threads == 300
