"""Every shortcut lint and report take, switched on or off at once, and the stores the tests compare the two ways on.

The shortcuts: structural rules skipped on threads the dialect accepts (``lint``), and each rule on threads where
the view it reads is empty (``lint``), the rules' pre-checks and shared
output pass (``rules.context``), the index's own acceptance seen on its way (``rules.context``, ``report``), lint's and
report's typed read of accepted Responses threads (``lint``, ``report``), report's
C-level counting, calls' days read from their messages and the message masks' tests (``report``), classifications
cached by text (``verdicts``), the text rules' one pass over a thread's outputs (``rules.marks``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests import benchmark_store
from tests.report import storegen
from threadfix import lint, report, verdicts
from threadfix.rules import context, marks

SWITCHES = ((lint, "SKIP_STRUCTURAL_WHEN_ACCEPTED"), (lint, "RUN_ONLY_WHERE_RULES_READ"), (lint, "TYPED_READ"), (context, "FAST"), (marks, "FAST"), (report, "FAST"),
            (report, "TYPED_READ"), (verdicts, "FAST"))
SAMPLES = Path(__file__).resolve().parents[1] / "sample_threads"


@contextmanager
def shortcuts(on: bool) -> Iterator[None]:
    """Every shortcut on (as shipped) or off (the slow, obvious way), inside the block."""
    with pytest.MonkeyPatch.context() as patch:
        for module, name in SWITCHES:
            patch.setattr(module, name, on)
        if on:  # the text rules' pass from the first thread on, not only once a run has read a megabyte
            patch.setattr(marks, "_read", marks.COMPILE_AFTER)
        if not on:
            verdicts._cache.clear()
        yield


def both_ways(run: Callable[[], Any]) -> tuple[Any, Any]:
    """``run()`` with every shortcut on, then with every one off."""
    with shortcuts(True):
        fast = run()
    with shortcuts(False):
        slow = run()
    return fast, slow


def benchmark_stores(folder: Path, threads: int = 120) -> list[Path]:
    """The benchmark generator's threads (parallel calls, dangling calls, realistic failures, text parts) as one
    JSONL store per dialect it writes, each thread converted as ``generate.py --dialects`` converts it."""
    generate = benchmark_store.generator()
    batch = generate.make_batch(generate.DEFAULT_SEED, 0, threads)
    stores = []
    for name in generate.DIALECTS:
        lines = []
        for line in batch.jsonl.splitlines():
            thread = orjson.loads(line)
            lines.append(orjson.dumps({"id": thread["id"], "created_at": thread["created_at"],
                                       "messages": generate.to_dialect(name, thread["items"])}))
        path = folder / f"{name}.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        stores.append(path)
    return stores


def report_stores(folder: Path, threads: int = 90) -> list[Path]:
    """The report generator's stores (errors of known kinds, threadfix's own outputs, dangling calls, dates, hostile
    text), one per dialect it writes."""
    storegen.write_store(folder, threads, seed=11, hostile=True)
    return sorted(path for path in folder.iterdir() if path.is_file())
