"""Every sample thread, healthy or stuck, in every dialect, comes out of repair accepted by its checker."""

from __future__ import annotations

import shutil
from pathlib import Path

from threadfix.batch import Problem, RepairRun, RunOptions, scan

SAMPLES = Path(__file__).resolve().parents[2] / "sample_threads"


def test_every_repaired_sample_is_accepted(tmp_path: Path) -> None:
    copy = tmp_path / "samples"
    shutil.copytree(SAMPLES, copy)
    run = RepairRun([str(copy)], RunOptions(min_age=0, journal_dir=tmp_path / "journal"))
    outcomes = list(run.outcomes())
    assert not [o for o in outcomes if isinstance(o, Problem)]
    assert run.result.changed > 0
    dialects_seen = set()
    for scanned in scan([str(copy)]):
        assert not isinstance(scanned, Problem), scanned
        assert scanned.dialect is not None, f"{scanned.thread.address}: no dialect recognised"
        dialects_seen.add(scanned.dialect.name)
        assert scanned.dialect.check(scanned.thread.items) == [], scanned.thread.address
    assert {"openai-responses", "openai-chat", "anthropic"} <= dialects_seen


def test_samples_hold_stuck_threads_in_every_core_dialect() -> None:
    stuck = {s.dialect.name for s in scan([str(SAMPLES)]) if not isinstance(s, Problem) and s.dialect.check(s.thread.items)}
    assert {"openai-responses", "openai-chat", "anthropic"} <= stuck
