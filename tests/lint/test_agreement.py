"""Lint and repair agree, on generated threads of every core dialect.

Both run as a batch job runs them (``LintRun`` and a ``RepairRun`` dry run over the same bytes on stdin):
every call lint reports as dangling and fixable is a call repair answers, with the same kind and cause,
and nothing else; lint reports something whenever the provider would refuse the thread; and once
repaired, the thread has nothing fixable left for lint to report.
"""

from __future__ import annotations

import io

import orjson
import pytest
from hypothesis import given

from tests.core import threadgen
from threadfix import dialects
from threadfix.batch import RepairRun, RunOptions
from threadfix.lint import LintOptions, LintRun, lint_items
from threadfix.model import Action, RepairPlan

STRUCTURE = ("TF0",)


def lint(data: bytes) -> list:
    results = list(LintRun(["-"], LintOptions(select=STRUCTURE), stdin=io.BytesIO(data)).results())
    assert len(results) == 1 and hasattr(results[0], "findings"), results
    return results[0].findings


def dry_run(data: bytes) -> RepairPlan:
    """The plan of ``threadfix repair --dry-run --min-age 0 -`` (a healthy thread yields no outcome)."""
    run = RepairRun(["-"], RunOptions(dry_run=True, min_age=0), stdin=io.BytesIO(data))
    outcomes = list(run.outcomes())
    assert run.result.threads == 1 and not run.result.problems and len(outcomes) <= 1, outcomes
    return outcomes[0].plan if outcomes else RepairPlan()


@pytest.mark.parametrize("name", list(threadgen.RENDERERS))
@given(conversation=threadgen.conversations())
def test_lint_reports_exactly_the_calls_repair_answers(name: str, conversation) -> None:
    items = threadgen.RENDERERS[name](conversation)
    data = orjson.dumps({"id": "t", "messages": items})
    findings = lint(data)
    plan = dry_run(data)

    dangling = sorted((f.call_id, f.item, f.kind, f.extra["cause"]) for f in findings if f.code == "TF001" and f.fixable)
    answered = sorted((e.call_id, e.at, e.kind, e.cause) for e in plan.edits if e.action is Action.INSERT_OUTPUT)
    assert dangling == answered

    moved = sorted((e.call_id, e.at) for e in plan.edits if e.action is Action.MOVE_OUTPUT)
    assert sorted((f.call_id, f.item) for f in findings if f.code == "TF003") == moved
    extra = sorted((e.call_id, e.at) for e in plan.edits if e.action in (Action.CONVERT_DUPLICATE, Action.DROP_DUPLICATE))
    assert sorted((f.call_id, f.item) for f in findings if f.code == "TF004") == extra
    orphans = sorted((e.call_id, e.at) for e in plan.edits if e.action in (Action.CONVERT_ORPHAN, Action.DROP_ORPHAN))
    assert sorted((f.call_id, f.item) for f in findings if f.code == "TF002") == orphans

    # whatever the provider refuses, lint reports
    dialect = dialects.get(name)
    if dialect.check(items):
        assert any(f.severity.value == "error" for f in findings)
    else:  # what a provider tolerates (OpenAI Responses takes a second output) is still reported
        assert {f.code for f in findings} <= {"TF004", "TF005"}


@pytest.mark.parametrize("name", list(threadgen.RENDERERS))
@given(conversation=threadgen.conversations())
def test_after_repair_nothing_fixable_is_left(name: str, conversation) -> None:
    from threadfix.repair import repair_items

    items = threadgen.RENDERERS[name](conversation)
    dialect = dialects.get(name)
    _, repaired = repair_items(items, dialect)
    after = lint_items(repaired if repaired is not None else items, dialect, LintOptions(select=STRUCTURE))
    assert [f for f in after if f.fixable] == []
    assert [f.code for f in after] == [], [f.message for f in after]
