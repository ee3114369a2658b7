"""What a screened read must be: the full read, less some healthy threads counted in their place."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from threadfix.batch import RepairRun, RunOptions
from threadfix.model import Thread
from threadfix.stores.base import ReadProblem, Settled


def same_as_a_full_read(open_store: Callable[[], Any]) -> int:
    """``threads_to_repair`` is ``threads`` less some healthy threads, counted in their place; how many."""
    full = list(open_store().threads())
    screened = list(open_store().threads_to_repair())
    settled = sum(x.count for x in screened if isinstance(x, Settled))
    kept = [x for x in screened if not isinstance(x, Settled)]
    rest = iter(full)
    dropped = []
    for x in kept:
        for y in rest:
            if repr(y) == repr(x):
                break
            dropped.append(y)
        else:
            raise AssertionError(f"the screen gave {x!r}, which a full read does not give there")
    dropped.extend(rest)
    assert all(isinstance(y, Thread) for y in dropped), [y for y in dropped if isinstance(y, ReadProblem)]
    assert len(dropped) == settled
    store = open_store()
    run = RepairRun([], RunOptions(dry_run=True, min_age=0))
    for thread in dropped:
        outcome, _ = run._thread(store, thread, time.time())
        assert outcome.status == "healthy", (thread.address, outcome)
    return settled


def repair_with_and_without_screens(tmp_path: Any, monkeypatch: Any, data: bytes, jobs: int,
                                    store: Any = None) -> list[tuple[Any, ...]]:
    """Repair the JSONL ``data`` to a new file with the screens off, then on: for each, the bytes written, the
    outcomes and the run's counts (a test asserts the two are the same)."""
    from threadfix.stores import StoreOptions, settle

    results = []
    for screen in (False, True):
        monkeypatch.setattr(settle, "MIN_DOCUMENTS_BYTES", 0 if screen else 1 << 62)
        folder = tmp_path / str(screen)
        folder.mkdir()
        monkeypatch.chdir(folder)
        src, out = folder / "in.jsonl", tmp_path / f"out{screen}.jsonl"
        src.write_bytes(data)
        repair = RepairRun(["in.jsonl"], RunOptions(min_age=0, output=out, jobs=jobs, journal_dir=tmp_path / "j",
                                                   store=store or StoreOptions()))
        outcomes = [(o.address, o.status, o.message) if hasattr(o, "status") else (o.where, o.message)
                    for o in repair.outcomes()]
        result = repair.result
        results.append((out.read_bytes(), sorted(outcomes), result.threads, result.changed, result.edits,
                        [(p.where, p.message) for p in result.problems]))
    return results
