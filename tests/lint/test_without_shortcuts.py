"""Lint finds the same in every thread with every shortcut off: the rules' pre-checks, their shared pass over the
outputs, the index's own acceptance, structural rules skipped on accepted threads, and cached classifications
(see tests/shortcuts.py). Compared on the benchmark's threads in every dialect it writes, the report generator's
stores, sample_threads/, and generated conversations."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings

from tests import shortcuts
from tests.core import threadgen
from tests.lint.test_fast_paths import OPTIONS
from threadfix import dialects
from threadfix.lint import LintOptions, LintRun, lint_items

NOW = 2_000_000_000.0


def _lint(paths: list[Path], options: LintOptions = LintOptions(now=NOW)) -> list:
    results = LintRun([str(path) for path in paths], options, jobs=1).results()
    return [(str(r.address), r.findings) if hasattr(r, "findings") else (r.where, r.message) for r in results]


def test_lint_finds_the_same_without_shortcuts_on_benchmark_threads_in_every_dialect(tmp_path: Path) -> None:
    stores = shortcuts.benchmark_stores(tmp_path)
    for options in (LintOptions(now=NOW), LintOptions(now=NOW, oversized_bytes=2_000, scan_chars=300, retry_storm=2)):
        fast, slow = shortcuts.both_ways(lambda: _lint(stores, options))
        assert fast == slow
    found = {f.code for _, findings in fast for f in findings}
    assert {"TF001", "TF203", "TF206"} <= found, found  # the shortcuts stood in front of rules that fire


def test_lint_finds_the_same_without_shortcuts_on_report_stores(tmp_path: Path) -> None:
    stores = shortcuts.report_stores(tmp_path)
    fast, slow = shortcuts.both_ways(lambda: _lint(stores))
    assert fast == slow
    assert {"TF001", "TF205", "TF902"} <= {f.code for _, findings in fast if isinstance(findings, list) for f in findings}


def test_lint_finds_the_same_without_shortcuts_on_the_sample_threads() -> None:
    fast, slow = shortcuts.both_ways(lambda: _lint([shortcuts.SAMPLES]))
    assert fast == slow
    assert sum(len(findings) for _, findings in fast if isinstance(findings, list)) > 10


@settings(max_examples=60)
@given(conversation=threadgen.conversations())
def test_lint_finds_the_same_without_shortcuts_on_conversations(conversation) -> None:
    for name, render in threadgen.RENDERERS.items():
        items = render(conversation)
        fast, slow = shortcuts.both_ways(lambda: lint_items(items, dialects.get(name), OPTIONS))
        assert fast == slow


def test_lint_finds_the_same_without_shortcuts_in_every_rule_case() -> None:
    """The rules' tables of cases hold a firing case for every rule: each shortcut stands in front of one."""
    from tests.lint.test_rules import _cases, run
    from threadfix.rules import all_rules

    cases = [param.values[1] for param in _cases()]
    fast, slow = shortcuts.both_ways(lambda: [run(case, all_rules()) for case in cases])
    assert fast == slow
    assert {f.code for findings in fast for f in findings} == {rule.code for rule in all_rules()}
