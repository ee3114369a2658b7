"""Data-driven repair cases: add a file under cases/<dialect>/ and it becomes a test.

Each file holds an ``input`` thread, the ``expected`` repaired thread (exact, including the synthetic
output's bytes), the ``edits`` the planner must report and the calls it must leave alone (``skips``).
``waiting`` names the call a thread waits on (the format marks it so): such a thread is left whole, so its
``expected`` is its ``input``; ``options`` sets RepairOptions fields (``answer_waiting``...); ``residual``
lists what the provider still refuses in ``expected`` (a layout repair must leave for a person).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from threadfix import dialects
from threadfix.repair import RepairOptions, repair_items, waiting_on

CASES = sorted(Path(__file__).parent.joinpath("cases").glob("*/*.json"))


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_case(path: Path) -> None:
    case = json.loads(path.read_text())
    dialect = dialects.get(path.parent.name)
    assert dialects.sniff(case["input"]) is dialect
    plan, repaired = repair_items(case["input"], dialect, RepairOptions(**case.get("options", {})))
    waiting = waiting_on(plan)
    assert (waiting.call_id if waiting is not None else None) == case.get("waiting")
    if waiting is not None:
        repaired = None  # left whole, as repair and lint leave a waiting thread
    edits = [f"{e.action.value}:{e.call_id}" + (f":{e.kind.value}:{e.cause}" if e.kind else "") for e in plan.edits]
    assert edits == case["edits"]
    assert [s.call_id for s in plan.skips] == case.get("skips", [])
    assert (repaired if repaired is not None else case["input"]) == case["expected"]
    if not case.get("skips") and waiting is None:  # what the provider still refuses: nothing, or ``residual``
        assert [v.message for v in dialect.check(case["expected"])] == case.get("residual", [])


def test_there_are_cases_for_every_core_dialect() -> None:
    assert {p.parent.name for p in CASES} >= {"openai-responses", "openai-chat", "anthropic"}
