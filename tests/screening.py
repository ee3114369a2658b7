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
