"""Lint finds the same in every thread with every shortcut off: the rules' pre-checks, their shared pass over the
outputs, the index's own acceptance, structural rules skipped on accepted threads, cached classifications and the text
rules' one pass (see tests/shortcuts.py). Compared on the benchmark's threads in every dialect it writes, the report
generator's stores, sample_threads/, generated conversations, and generated threads holding secrets and leaks."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests import shortcuts
from tests.core import threadgen
from tests.lint.test_fast_paths import OPTIONS
from tests.lint.test_marks import _texts
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


SECRET = "sk-proj-" + "a1B2" * 6
TRACE = 'Traceback (most recent call last):\n  File "/srv/app/tools/run.py", line 3, in run\nKeyError: \'q\''
FRAMES = "TypeError: x is undefined\n    at run (/app/node_modules/tool/index.js:4:2)\n    at main (/app/main.js:1:1)"
_FORMS = {
    "text": lambda text: text,
    "json": lambda text: json.dumps({"error": text}),  # a tool's JSON error, its text escaped inside
    "ascii": lambda text: json.dumps({"output": text}, ensure_ascii=True),
    "parts": lambda text: [{"type": "text", "text": text}],
}


def _output_text() -> st.SearchStrategy[str]:
    """Text with a secret, a trace or a leaked path at a random place, or pieces of them, or neither."""
    whole = st.sampled_from((SECRET, TRACE, FRAMES, "Bearer " + "t" * 20, "ok", ""))
    return st.lists(st.one_of(whole, _texts()), max_size=3).map(" ".join)


@settings(max_examples=40, deadline=None)
@given(outputs=st.lists(st.tuples(_output_text(), st.sampled_from(sorted(_FORMS)), st.booleans()), min_size=1,
                        max_size=4))
def test_lint_finds_the_same_without_shortcuts_on_threads_holding_secrets_and_leaks(outputs) -> None:
    items = [{"role": "user", "content": "go"}]
    for i, (text, form, failed) in enumerate(outputs):
        items.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "shell",
                                                          "input": {}}]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": _FORMS[form](text)}
        if failed:
            result["is_error"] = True
        items.append({"role": "user", "content": [result]})
    for options in (LintOptions(now=NOW), OPTIONS):
        fast, slow = shortcuts.both_ways(lambda: lint_items(items, dialects.get("anthropic"), options))
        assert fast == slow


def test_the_generated_threads_hold_what_the_text_rules_find() -> None:
    """The strategy above reaches both text rules (else its comparison would prove nothing)."""
    items = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shell", "input": {}},
                                               {"type": "tool_use", "id": "t2", "name": "shell", "input": {}}]},
             {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "t1", "content": _FORMS["json"](SECRET), "is_error": True},
                 {"type": "tool_result", "tool_use_id": "t2", "content": _FORMS["parts"](TRACE), "is_error": True}]}]
    codes = {f.code for f in lint_items(items, dialects.get("anthropic"), LintOptions(now=NOW))}
    assert {"TF204", "TF205"} <= codes, codes
