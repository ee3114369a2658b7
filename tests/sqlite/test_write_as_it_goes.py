"""Repair writes a database's changed threads a batch at a time as it reads, so it never holds them all; and once
some batches are in, a lock that outlasts the busy timeout stops it with what was written said, not read again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.sqlite.dbs import create, dump, healthy, read, repair, stuck
from threadfix.batch import Problem
from threadfix.errors import ExitCode
from threadfix.stores import sqlite as sqlite_store
from threadfix.stores import table as table_store
from threadfix.undo import undo

THREADS = 13
BATCH = 3


def _threads() -> dict[str, list]:
    """Stuck threads with healthy ones between them, in key order."""
    threads = {}
    for n in range(THREADS):
        threads[f"s{n:02}"] = stuck(n)
        threads[f"s{n:02}h"] = healthy(n)
    return threads


def _repaired(db: Path, layout: str) -> list[str]:
    """The stuck threads that now hold an output for their call."""
    return sorted(key for key, items in read(db, layout).items()
                  if not key.endswith("h") and any(item.get("type") == "function_call_output" for item in items))


@pytest.fixture
def writes(monkeypatch) -> list[tuple[str, int]]:
    """What the writer did, in order: ("queued", threads it held then), ("read", 1) as each thread comes from the
    store, ("flush", threads written)."""
    events: list[tuple[str, int]] = []
    writer_class = sqlite_store.SQLiteWriter
    replace, flush = writer_class.replace, writer_class.flush

    def spy_replace(self, thread, data):
        replace(self, thread, data)
        events.append(("queued", len(self.queue)))

    def spy_flush(self):
        queued = len(self.queue)
        flush(self)
        events.append(("flush", queued))

    monkeypatch.setattr(writer_class, "replace", spy_replace)
    monkeypatch.setattr(writer_class, "flush", spy_flush)
    return events


@pytest.mark.parametrize("layout", ["thread", "item", "agents"])
def test_the_writer_holds_one_batch_and_writes_it_before_reading_on(tmp_path: Path, layout: str, writes) -> None:
    db = create(tmp_path / "c.db", layout, _threads())
    run, outcomes = repair(db, tmp_path / "journal", batch_size=BATCH)
    assert max(held for event, held in writes if event == "queued") == BATCH
    flushes = [n for event, n in writes if event == "flush"]
    assert flushes == [BATCH] * (THREADS // BATCH), "every full batch is written as soon as it is full"
    assert run.result.changed == THREADS and run.result.exit_code() == ExitCode.OK
    assert [o.status for o in outcomes if not isinstance(o, Problem)].count("repaired") == THREADS
    assert _repaired(db, layout) == [f"s{n:02}" for n in range(THREADS)]
    assert [o.status for o in undo(run.result.journal)].count("restored") == THREADS
    assert _repaired(db, layout) == []


def test_a_batch_of_few_large_threads_is_written_early(tmp_path: Path, monkeypatch, writes) -> None:
    monkeypatch.setattr(table_store, "FLUSH_BYTES", 1)
    db = create(tmp_path / "c.db", "item", _threads())
    run, _ = repair(db, tmp_path / "journal", batch_size=50)
    assert max(held for event, held in writes if event == "queued") == 1
    assert run.result.changed == THREADS


class _LockedAfter:
    """A connection that acts as if the app took the write lock for good after ``free`` of threadfix's writes."""

    def __init__(self, conn: sqlite3.Connection, budget: list[int]) -> None:
        self._conn, self._budget = conn, budget

    def execute(self, sql: str, *args):
        if sql == "BEGIN IMMEDIATE":
            if self._budget[0] <= 0:
                raise sqlite3.OperationalError("database is locked")
            self._budget[0] -= 1
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self._conn, name)


@pytest.mark.parametrize("layout", ["thread", "item"])
def test_a_lock_after_some_batches_stops_the_store_and_says_what_was_written(tmp_path: Path, monkeypatch,
                                                                             layout: str, capsys) -> None:
    db = create(tmp_path / "c.db", layout, _threads())
    connect = sqlite_store.connect
    free = [2]  # two batches get in, then the lock stays

    def locking(path, *, write, timeout):
        conn = connect(path, write=write, timeout=timeout)
        return _LockedAfter(conn, free) if write else conn

    monkeypatch.setattr(sqlite_store, "connect", locking)
    run, outcomes = repair(db, tmp_path / "journal", batch_size=BATCH)
    statuses = [o.status for o in outcomes if not isinstance(o, Problem)]
    problems = [o for o in outcomes if isinstance(o, Problem)]
    # read no further than the batch that met the lock, and not read again: what was written is said as written
    assert statuses.count("repaired") == 2 * BATCH
    assert statuses.count("left_alone") == BATCH
    assert "healthy" not in statuses
    assert [(p.where, p.exit_code) for p in problems] == [(str(db), ExitCode.BUSY)]
    assert "stayed locked" in problems[0].message
    # and says how far it read: the three batches' stuck threads and the healthy ones between them
    assert problems[0].message.endswith(f"(stopped after {2 * 3 * BATCH - 1} threads; the rest were not read)")
    assert run.result.changed == 2 * BATCH and run.result.exit_code() == ExitCode.BUSY
    assert _repaired(db, layout) == [f"s{n:02}" for n in range(2 * BATCH)]
    left = [o for o in outcomes if not isinstance(o, Problem) and o.status == "left_alone"]
    assert all("stayed locked" in o.message for o in left)
    # the lock is gone: the next run repairs the rest
    monkeypatch.setattr(sqlite_store, "connect", connect)
    again, _ = repair(db, tmp_path / "journal", batch_size=BATCH)
    assert again.result.changed == THREADS - 2 * BATCH
    assert _repaired(db, layout) == [f"s{n:02}" for n in range(THREADS)]


def test_a_lock_before_anything_is_written_reads_the_store_again(tmp_path: Path, monkeypatch) -> None:
    """Nothing written yet: the store is retried from the start, as before, and reported once."""
    db = create(tmp_path / "c.db", "item", _threads())
    connect = sqlite_store.connect
    free = [0]
    opened = []

    def locking(path, *, write, timeout):
        conn = connect(path, write=write, timeout=timeout)
        if write:
            opened.append(1)
            if len(opened) == 2:  # the retry's writer: the lock is gone
                free[0] = 100
            return _LockedAfter(conn, free)
        return conn

    monkeypatch.setattr(sqlite_store, "connect", locking)
    run, outcomes = repair(db, tmp_path / "journal", batch_size=BATCH)
    assert len(opened) == 2
    assert run.result.changed == THREADS and run.result.exit_code() == ExitCode.OK, run.result.problems
    assert [o.status for o in outcomes].count("repaired") == THREADS
    assert not any(isinstance(o, Problem) for o in outcomes)


def test_output_to_a_copy_is_written_in_batches_and_renamed_at_the_end(tmp_path: Path, writes) -> None:
    from threadfix.batch import RepairRun, RunOptions
    from threadfix.stores import StoreOptions

    db = create(tmp_path / "c.db", "item", _threads())
    before = dump(db)
    copy = tmp_path / "out.db"
    run = RepairRun([str(db)], RunOptions(store=StoreOptions(batch_size=BATCH), min_age=0, output=copy,
                                          journal_dir=tmp_path / "journal"))
    outcomes = list(run.outcomes())
    assert run.result.changed == THREADS and run.result.exit_code() == ExitCode.OK, outcomes
    assert [event for event, _ in writes].count("flush") == THREADS // BATCH
    assert dump(db) == before
    assert _repaired(copy, "item") == [f"s{n:02}" for n in range(THREADS)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.db", "out.db"]


def test_suspects_to_be_written_go_in_small_parts(tmp_path: Path, monkeypatch) -> None:
    """A --jobs part's plans carry its changed threads' rows, and the parent holds a few parts: parts to be written
    are capped; read-only ones (a dry run) are not."""
    from threadfix.stores import StoreOptions
    from threadfix.stores.sqlite import open_sqlite_store

    monkeypatch.setattr(table_store, "WRITTEN_KEYS_PER_PART", 4)
    db = create(tmp_path / "c.db", "item", {f"s{n:02}": stuck(n) for n in range(40)})
    sizes = {}
    for writable in (True, False):
        parts = open_sqlite_store(db, StoreOptions(writable=writable, jobs=2)).parts_to_repair()
        sizes[writable] = [len(shard.part.keys) for shard in parts.shards]
        assert sum(sizes[writable]) == 40
    assert max(sizes[True]) == 4 and max(sizes[False]) == table_store.KEYS_PER_PART
