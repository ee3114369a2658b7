"""A report's numbers are the same with every shortcut off (see tests/shortcuts.py): on the benchmark's threads in
every dialect it writes, the report generator's stores and sample_threads/."""

from __future__ import annotations

from pathlib import Path

from tests import shortcuts
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
