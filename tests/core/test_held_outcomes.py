"""Repair holds a store's outcomes back until the store is committed; past a budget they wait on disk. What it
reports must not depend on where they waited."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.perf.test_jobs import _database, _items_database, _store
from threadfix import spill
from threadfix.batch import Problem, RepairRun, RunOptions, ThreadOutcome
from threadfix.errors import StoreError
from threadfix.stores import StoreOptions
from threadfix.stores import files as file_stores

DEFAULT_BUDGET = spill.SPILL_BYTES
BUILDERS = {"jsonl": lambda folder: _store(folder / "t.jsonl"), "thread": lambda folder: _database(folder / "t.db"),
            "item": lambda folder: _items_database(folder / "t.db", odd=True)}


def _run(path: Path, tmp: Path, **options) -> tuple[RepairRun, list[ThreadOutcome | Problem]]:
    run = RepairRun([str(path)], RunOptions(store=StoreOptions(writable=True), min_age=0, journal_dir=tmp / "journal",
                                            **options))
    return run, list(run.outcomes())


@pytest.fixture
def spills(monkeypatch) -> list[int]:
    """Count the spills to disk."""
    counted: list[int] = []
    original = spill.SpillList._spill

    def counting(self):
        counted.append(len(self._memory))
        original(self)

    monkeypatch.setattr(spill.SpillList, "_spill", counting)
    return counted


@pytest.mark.parametrize("kind", sorted(BUILDERS))
@pytest.mark.parametrize("mode", ["dry_run", "write", "diff"])
def test_outcomes_held_on_disk_are_reported_as_those_held_in_memory(tmp_path: Path, monkeypatch, spills, kind: str,
                                                                    mode: str) -> None:
    options = {"dry_run": mode != "write", "keep_bytes": mode == "diff"}
    runs = []
    for budget in (DEFAULT_BUDGET, 1):
        folder = tmp_path / str(budget)
        folder.mkdir()
        monkeypatch.setattr(spill, "SPILL_BYTES", budget)
        path = BUILDERS[kind](folder)
        runs.append((*_run(path, folder, **options), path.read_bytes()))
    (in_memory, kept, stored), (on_disk, spilled, stored_too) = runs
    assert spills, "the outcomes should have gone to disk"
    changed = [o for o in kept if isinstance(o, ThreadOutcome) and o.status in ("repaired", "would_repair")]
    assert len(changed) > 5 and any(isinstance(o, Problem) for o in kept)
    if mode == "diff":
        assert all(o.before and o.after for o in changed)
    assert spilled == [_moved(o, tmp_path) for o in kept]
    assert _counts(on_disk) == _counts(in_memory)
    assert on_disk.result.problems == [_moved(p, tmp_path) for p in in_memory.result.problems]
    assert stored_too == stored


def _counts(run: RepairRun) -> tuple:
    result = run.result
    return (result.threads, result.changed, result.edits, result.recent, result.left_alone, result.skipped_calls,
            result.exit_code())


def _moved(outcome, tmp_path: Path):
    """The same outcome, from the store of the second run (its folder is named for its budget)."""
    if isinstance(outcome, ThreadOutcome):
        return outcome.__class__(**{f: getattr(outcome, f) for f in outcome.__struct_fields__}
                                 | {"address": outcome.address.replace(str(tmp_path / str(DEFAULT_BUDGET)), str(tmp_path / "1"))})
    return Problem(outcome.where.replace(str(tmp_path / str(DEFAULT_BUDGET)), str(tmp_path / "1")), outcome.message,
                   outcome.exit_code)


def test_a_store_not_written_reports_nothing_repaired_even_from_disk(tmp_path: Path, monkeypatch, spills) -> None:
    monkeypatch.setattr(spill, "SPILL_BYTES", 1)

    def no_room(self):
        raise StoreError("no space left on device; nothing was written", str(self.store.path))

    monkeypatch.setattr(file_stores._FileWriter, "commit", no_room)
    path = _store(tmp_path / "t.jsonl")
    before = path.read_bytes()
    run, outcomes = _run(path, tmp_path)
    statuses = [o.status for o in outcomes if isinstance(o, ThreadOutcome)]
    assert spills and "not_written" in statuses and "repaired" not in statuses
    assert run.result.changed == 0
    assert path.read_bytes() == before
    assert outcomes[-1] == Problem(str(path), "no space left on device; nothing was written")
