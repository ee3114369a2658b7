"""``--jobs``: shards are newline-aligned, and lint, report and repair give the same results in 1 or N processes."""

from __future__ import annotations

import os
import random
from functools import partial
from itertools import pairwise
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from threadfix import batch, parallel
from tests.reliability.harness import cli
from threadfix.stores import StoreOptions
from threadfix.stores.files import FileStore


def _thread(rng: random.Random, n: int) -> dict:
    items: list[dict] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"task {n}"}]}]
    for step in range(rng.randint(0, 6)):
        call_id = f"call_{n}_{step}"
        items.append({"type": "function_call", "call_id": call_id, "name": rng.choice(["shell", "read_file"]),
                      "arguments": orjson.dumps({"cmd": "ls\n\t\"x\""}).decode(), "status": "completed"})
        roll = rng.random()
        if roll < 0.1:
            continue  # dangling
        text = "Error: timed out after 30s" if roll < 0.25 else "ok\nline 2 ü"
        items.append({"type": "function_call_output", "call_id": call_id, "output": text})
        if rng.random() < 0.3:
            items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "more"}]})
    return {"id": f"t{n}", "created_at": 1_700_000_000 + n * 3600, "items": items}


def _store(path: Path, threads: int = 400, seed: int = 7) -> Path:
    """A JSONL store with dangling calls, error outputs, a bad line, a line that is not a thread, blank lines."""
    rng = random.Random(seed)
    lines = [orjson.dumps(_thread(rng, n)) for n in range(threads)]
    lines[17] = b'{"id": "broken", "items": ['
    lines[90] = b'{"nothing": "here"}'
    lines[150] = b""
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture
def small_shards(monkeypatch):
    """Cut files and tables of a few KB as if they were large (into more ranges than processes; a table's
    screen into parts of 100 rows, its suspects into parts of one key), let auto pick several processes, and
    have repair append to its journal every entry instead of every few MB."""
    from threadfix.stores import sqlite_screen, table

    monkeypatch.setattr(sqlite_screen, "PART_MIN_ROWS", 100)
    monkeypatch.setattr(table, "KEYS_PER_PART", 1)
    monkeypatch.setattr(parallel, "MIN_SHARD_BYTES", 2048)
    monkeypatch.setattr(parallel, "MAX_SHARD_BYTES", 16384)
    monkeypatch.setattr(parallel, "AUTO_MIN_BYTES", 4096)
    monkeypatch.setattr(parallel, "AUTO_MIN_REPAIR_BYTES", 4096)
    monkeypatch.setattr(batch, "JOURNAL_BATCH_BYTES", 1)


def _run(*args: str) -> tuple[int, bytes, str]:
    """``threadfix ARGS`` through its entry point, in this process: exit code, stdout and stderr apart."""
    ran = cli(*args)
    return ran.code, ran.stdout, ran.stderr


# ---------------------------------------------------------------------------- shards


@given(lengths=st.lists(st.integers(0, 300), min_size=1, max_size=60), jobs=st.integers(2, 5),
       last_newline=st.booleans(), most=st.integers(1, 4000), find_limit=st.sampled_from([2, 4096]),
       order=st.sampled_from(["file order", "reversed", "shuffled"]))
def test_a_file_read_in_parts_in_any_order_reads_what_a_whole_read_does(tmp_path_factory, lengths, jobs, last_newline,
                                                                         most, find_limit, order):
    """A JSONL file of threads cut for --jobs and read part by part, in the order workers may take the parts:
    the same threads, line numbers, spans and bytes as one whole read. Each part's reader posts its line count
    and adds up the earlier ones; read out of order (an earlier count not there in time), it counts the file
    itself: the same line numbers either way (blank lines included)."""
    from threadfix.stores import cut, open_part, ranges

    path = tmp_path_factory.mktemp("cut") / "x.jsonl"
    lines = [orjson.dumps({"items": [{"role": "user", "content": "x" * n}]}) if n else b"" for n in lengths]
    path.write_bytes(b"\n".join(lines) + (b"\n" if last_newline else b""))
    whole = [repr(t) for t in FileStore(path, str(path), jsonl=True).threads()]
    saved = (parallel.MIN_SHARD_BYTES, parallel.MAX_SHARD_BYTES, ranges._FIND_LIMIT, ranges._COUNT_CHUNK,
             parallel.LEDGER_WAIT)
    (parallel.MIN_SHARD_BYTES, parallel.MAX_SHARD_BYTES, ranges._FIND_LIMIT, ranges._COUNT_CHUNK,
     parallel.LEDGER_WAIT) = 1, most, find_limit, 97, 0.0
    try:
        parts = cut(str(path), parallel._parts(path.stat().st_size, jobs)) or []
        ledger = parallel.LineLedger(len(parts), shared=False)
        reading = list(enumerate(parts))
        if order == "reversed":
            reading.reverse()
        elif order == "shuffled":
            random.Random(len(lengths)).shuffle(reading)
        read = {slot: [repr(t) for store in open_part(str(path), part, StoreOptions(),
                                                      parallel.LedgerSlot(ledger, 0, slot))
                       for t in store.threads()] for slot, part in reading}
    finally:
        (parallel.MIN_SHARD_BYTES, parallel.MAX_SHARD_BYTES, ranges._FIND_LIMIT, ranges._COUNT_CHUNK,
         parallel.LEDGER_WAIT) = saved
    assert parts  # a JSONL file of threads is cut, however small (the floor patched away)
    assert [t for slot in sorted(read) for t in read[slot]] == whole


def _lint_json(path: Path, jobs: str) -> tuple[int, bytes, str]:
    return _run("--jobs", jobs, "lint", "--format", "json", str(path))


def test_workers_number_lines_from_the_counts_other_workers_post(tmp_path, small_shards, monkeypatch):
    """No process reads the file twice: with the file-counting fallback taken away (a worker calling it would
    fail its part), --jobs 2 names every finding's line as one process does, from the counts the workers post."""
    from threadfix.stores import ranges

    path = _store(tmp_path / "s.jsonl", threads=300)
    assert len(parallel.plan_shards([str(path)], 2)) > 4
    one = _lint_json(path, "1")
    mine = parallel._ledger

    def counted(*args):
        raise AssertionError("a worker counted the lines before its range itself")

    monkeypatch.setattr(ranges, "count_lines_before", counted)  # (forked workers inherit it)
    assert _lint_json(path, "2") == one and one[0] == 2 and f"{path}:18" in one[2]
    assert parallel._ledger is mine  # the workers' ledger went to the pool: this process's is not replaced


def test_a_range_that_starts_on_a_line_holding_no_thread_still_reads_threads(tmp_path, small_shards):
    """Whether a file's lines are threads or items is told from its first line, not from each range's."""
    path = tmp_path / "s.jsonl"
    rng = random.Random(3)
    lines = [orjson.dumps(_thread(rng, n)) if n % 3 != 1 else b'{"nothing": "here"}' for n in range(200)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    data = path.read_bytes()
    shards = parallel.plan_shards([str(path)], 3)
    assert any(data[shard.part.start:].startswith(b'{"nothing"') for shard in shards[1:])
    one = _run("--jobs", "1", "lint", "--format", "json", str(path))
    several = _run("--jobs", "3", "lint", "--format", "json", str(path))
    assert one == several and one[0] == 2
    assert orjson.loads(one[1])["summary"]["threads"] == 133  # every line that holds a thread, one thread each
    written = {}
    for jobs in ("1", "3"):
        copy = tmp_path / f"j{jobs}.jsonl"
        copy.write_bytes(data)
        code, _, _ = _run("--jobs", jobs, "repair", "--min-age", "0", "--journal-dir", str(tmp_path / "journal"),
                          str(copy))
        written[jobs] = (code, copy.read_bytes())
    assert written["1"] == written["3"] and written["1"][1] != data


@given(size=st.integers(0, 2**34), jobs=st.integers(1, 8))
def test_a_file_is_cut_into_a_multiple_of_the_processes_where_the_range_sizes_allow(size: int, jobs: int) -> None:
    parts = parallel._parts(size, jobs)
    most = max(1, size // parallel.MIN_SHARD_BYTES)  # no range under the minimum
    assert 1 <= parts <= most
    if parts % jobs:  # only when no multiple of jobs fits between what is wanted and the minimum size
        wanted = max(jobs, -(-size // parallel.MAX_SHARD_BYTES))
        assert -(-wanted // jobs) * jobs > most and parts == min(most, wanted)
    else:
        assert size // parts <= parallel.MAX_SHARD_BYTES or parts == most  # no range over the maximum if avoidable
    assert parallel._parts(100 * 10**6, 2) == 6  # 7 ranges of 14 MB would leave a core idle for the last one


def test_a_byte_range_reads_the_threads_a_whole_read_gives_there(tmp_path, small_shards):
    path = _store(tmp_path / "s.jsonl")
    whole = list(FileStore(path, str(path), jsonl=True).threads())
    shards = parallel.plan_shards([str(path)], 3)
    assert len(shards) > 1
    parts = [t for shard in parallel.in_order(shards) for store in parallel.shard_stores(shard, StoreOptions())
             for t in store.threads()]
    assert [repr(t) for t in parts] == [repr(t) for t in whole]  # addresses, line numbers, spans, raw bytes


def test_auto_stays_in_one_process_for_small_inputs(tmp_path):
    path = _store(tmp_path / "s.jsonl")
    assert parallel.resolve_jobs(None, [str(path)]) == 1
    assert parallel.sharded([str(path)], None) is None
    assert parallel.sharded([str(path)], 2) is None  # too small to cut: one process, no pool
    assert parallel.sharded(["-"], 4) is None


def test_item_per_line_files_are_not_cut(tmp_path, small_shards):
    """A file whose lines are one thread's items is one thread: read whole, with --jobs as without."""
    path = tmp_path / "one.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(item) for item in _thread(random.Random(1), 1)["items"] * 40) + b"\n")
    assert parallel.plan_shards([str(path)], 4) == [parallel.Shard(str(path))]
    assert _run("--jobs", "4", "lint", "--format", "json", str(path)) == _run("lint", "--format", "json", str(path))
    path.write_bytes(b'{"broken\n' + path.read_bytes())  # threads or items? a whole read tells
    assert parallel.plan_shards([str(path)], 4) == [parallel.Shard(str(path))]
    assert _run("--jobs", "4", "lint", "--format", "json", str(path)) == _run("lint", "--format", "json", str(path))


# ---------------------------------------------------------------------------- same results


def test_lint_is_the_same_in_one_and_several_processes(tmp_path, small_shards):
    path = _store(tmp_path / "s.jsonl")
    one = _run("--jobs", "1", "lint", "--format", "json", str(path))
    two = _run("--jobs", "3", "lint", "--format", "json", str(path))
    assert one[0] == two[0] == 2  # findings, and a line that could not be read: errors beat findings
    assert one[1] == two[1] and b'"TF' in one[1]
    assert one[2] == two[2] and f"{path}:18" in one[2] and f"{path}:91" in one[2]


def test_report_is_the_same_in_one_and_several_processes(tmp_path, small_shards):
    path = _store(tmp_path / "s.jsonl")
    one = _run("--jobs", "1", "report", "--format", "json", "--top", "50", str(path))
    auto = _run("report", "--format", "json", "--top", "50", str(path))  # auto: several, with the patched floor
    assert one == auto
    assert one[0] == 2 and orjson.loads(one[1])["totals"]["dangling_calls"] > 0


def test_repair_writes_the_same_bytes_and_journal_in_one_and_several_processes(tmp_path, small_shards):
    out = {}
    for jobs in ("1", "3"):
        folder = tmp_path / f"j{jobs}"
        (folder / "sub").mkdir(parents=True)
        _store(folder / "sub" / "a.jsonl")
        _store(folder / "b.jsonl", threads=200, seed=3)
        code, stdout, _ = _run("--jobs", jobs, "repair", "--min-age", "0", "--format", "json",
                                    "--journal-dir", str(tmp_path / f"journal{jobs}"), str(folder))
        journal_path = next((tmp_path / f"journal{jobs}").iterdir())
        journal = journal_path.read_bytes()
        # the journal's name holds the time and a random token: only where it is may differ
        stdout = stdout.replace(str(journal_path).encode(), b"JOURNAL").replace(str(folder).encode(), b"F")
        out[jobs] = (code, stdout, (folder / "sub" / "a.jsonl").read_bytes(),
                     (folder / "b.jsonl").read_bytes(), journal.count(b"\n"))
    assert out["1"] == out["3"]
    assert out["1"][0] == 2  # the broken line is reported; the rest is repaired
    assert out["1"][2] != _store(tmp_path / "fresh.jsonl").read_bytes()
    code, _, _ = _run("undo", str(next((tmp_path / "journal3").iterdir())))
    assert code == 0
    assert (tmp_path / "j3" / "sub" / "a.jsonl").read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()


def test_a_dry_run_in_several_processes_writes_nothing(tmp_path, small_shards):
    path = _store(tmp_path / "s.jsonl")
    before = path.read_bytes()
    code, stdout, stderr = _run("--jobs", "2", "repair", "--dry-run", "--min-age", "0", str(path))
    assert code == 2 and b"would" in stdout.lower() + stderr.encode().lower()
    assert path.read_bytes() == before


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_a_folder_walk_in_several_processes_still_refuses_symlinks_out_of_it(tmp_path, small_shards):
    outside = _store(tmp_path / "outside.jsonl")
    folder = tmp_path / "store"
    folder.mkdir()
    _store(folder / "a.jsonl")
    (folder / "link.jsonl").symlink_to(outside)
    before = outside.read_bytes()
    code, _, stderr = _run("--jobs", "2", "repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"),
                                str(folder))
    assert code == 2 and "symlink to a file outside" in stderr
    assert outside.read_bytes() == before


def test_jobs_must_be_positive():
    code, stdout, _ = _run("--jobs", "0", "lint", "x.jsonl")
    assert code == 2 and stdout == b""


# ---------------------------------------------------------------------------- SQLite, one thread per row


def _database(path: Path, threads: int = 300, seed: int = 11, first_rowid: int = 1) -> Path:
    """A table of one thread per row: dangling calls, error outputs, a broken row, a row that is not a thread,
    a row with no thread yet, and row ids with gaps."""
    import sqlite3

    rng = random.Random(seed)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE conversations (id TEXT PRIMARY KEY, items TEXT, updated_at TEXT)")
    conn.execute("BEGIN")
    rowid = first_rowid
    for n in range(threads):
        thread = _thread(rng, n)
        value = {17: '{"items": [', 90: '{"nothing": "here"}', 150: None}.get(n, orjson.dumps(thread["items"]).decode())
        conn.execute("INSERT INTO conversations (rowid, id, items, updated_at) VALUES (?, ?, ?, ?)",
                     (rowid, thread["id"], value, "2020-01-01T00:00:00Z"))
        rowid += rng.choice([1, 1, 3])
    conn.execute("COMMIT")
    conn.close()
    return path


@given(jobs=st.integers(2, 5), first=st.sampled_from([1, -(2**63), 2**62]), most=st.sampled_from([2048, 16384, 10**9]))
def test_row_ranges_cover_the_table_and_read_what_a_whole_read_does(tmp_path_factory, jobs, first, most):
    path = _database(tmp_path_factory.mktemp("rows") / "c.db", threads=60, first_rowid=first)
    saved = parallel.MIN_SHARD_BYTES, parallel.MAX_SHARD_BYTES
    parallel.MIN_SHARD_BYTES, parallel.MAX_SHARD_BYTES = 1024, most
    try:
        shards = parallel.plan_shards([str(path)], jobs)
    finally:
        parallel.MIN_SHARD_BYTES, parallel.MAX_SHARD_BYTES = saved
    assert len(shards) >= min(jobs, 2) and shards[0].part.rows[0] is None and shards[-1].part.rows[1] is None
    for before, after in pairwise(shards):
        assert before.part.rows[1] == after.part.rows[0]
    whole = [t for shard in [parallel.Shard(str(path))] for store in parallel.shard_stores(shard, StoreOptions())
             for t in store.threads()]
    parts = [t for shard in parallel.in_order(shards) for store in parallel.shard_stores(shard, StoreOptions())
             for t in store.threads()]
    assert [repr(t) for t in parts] == [repr(t) for t in whole]


def test_a_table_of_one_thread_per_row_is_cut_into_row_id_ranges(tmp_path, small_shards):
    path = _database(tmp_path / "c.db")
    processes, shards = parallel.sharded([str(path)], 3)
    assert processes == 3 and len(shards) >= 3 and all(shard.part.rows is not None for shard in shards)
    assert [shard.continues for shard in shards] == [False] + [True] * (len(shards) - 1)


def _items_database(path: Path, threads: int = 200, odd: bool = False) -> Path:
    """A table of one item per row, threads written a few rows at a time in turn (as an app's turns are);
    ``odd``: also a row that is not JSON, and rows of no thread."""
    import sqlite3

    rng = random.Random(3)
    pending = {f"t{n}": list(enumerate(_thread(rng, n)["items"])) for n in range(threads)}
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, thread_id TEXT, position INTEGER, data TEXT)")
    conn.execute("CREATE INDEX by_thread ON items (thread_id, position)")
    while pending:
        key = rng.choice(sorted(pending))
        for position, item in pending[key][:3]:
            conn.execute("INSERT INTO items (thread_id, position, data) VALUES (?, ?, ?)",
                         (key, position, orjson.dumps(item).decode()))
        del pending[key][:3]
        if not pending[key]:
            del pending[key]
    if odd:
        conn.execute("INSERT INTO items (thread_id, position, data) VALUES ('t7', 99, '{broken')")
        conn.executemany("INSERT INTO items (thread_id, position, data) VALUES (NULL, 0, ?)", [("{}",), ("[]",)])
    conn.commit()
    conn.close()
    return path


#: each table layout: how to build one, its table, and repair's exit code on it (rows that cannot be read: 2)
LAYOUTS = {"thread per row": (_database, "conversations", 2), "item per row": (_items_database, "items", 0)}


def _rows(path: Path, table: str) -> list[tuple]:
    """Every row of a table, row id first, in row id order."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT rowid, * FROM {table} ORDER BY rowid").fetchall()
    finally:
        conn.close()


def test_a_table_of_one_item_per_row_is_not_cut(tmp_path, small_shards):
    path = _items_database(tmp_path / "items.db")
    assert parallel.plan_shards([str(path)], 3) == [parallel.Shard(str(path))]


@pytest.mark.parametrize("layout", ["thread per row", "item per row"])
def test_repair_of_a_database_is_the_same_in_one_and_several_processes(tmp_path, small_shards, monkeypatch, layout):
    """Repair plans a table of one thread per row in row id ranges, a worker each, and writes here what they
    planned; it screens one of one item per row in row id parts, a worker each, then reads the others here:
    the same repairs, problems (rows that are not JSON, hold no thread, or no thread yet), rows and journal
    as one process."""
    from threadfix.stores import settle

    monkeypatch.setattr(settle, "MIN_DOCUMENTS_BYTES", 0)
    passes = []  # (what, processes, parts) of each pass spread over processes
    spread, run_sharded = parallel.spread, batch.run_sharded
    monkeypatch.setattr(parallel, "spread", lambda work, tasks, jobs, **k: passes.append(("screen", jobs, len(tasks)))
                        or spread(work, tasks, jobs, **k))
    monkeypatch.setattr(batch, "run_sharded", lambda shards, work, jobs: passes.append(("plan", jobs, len(shards)))
                        or run_sharded(shards, work, jobs))
    build, table, problems = LAYOUTS[layout]
    out = {}
    for jobs in ("1", "3"):
        path = build(tmp_path / f"{jobs}.db")
        code, stdout, _ = _run("--jobs", jobs, "repair", "--min-age", "0", "--format", "json",
                               "--journal-dir", str(tmp_path / f"journal{jobs}"), str(path))
        journal = next((tmp_path / f"journal{jobs}").iterdir())
        out[jobs] = (code, stdout.replace(str(journal).encode(), b"J").replace(str(path).encode(), b"P"),
                     _rows(path, table))
    # --jobs 1 spreads nothing; --jobs 3 plans row id ranges in three workers, or screens row id parts in
    # three, then reads and plans the suspects in parts of their keys in three
    if layout == "thread per row":
        assert [(what, jobs) for what, jobs, _ in passes] == [("plan", 3)] and passes[0][2] >= 3
    else:
        assert passes[0] == ("screen", 3, 3) and len(passes) == 2
        assert passes[1][:2] == ("plan", 3) and passes[1][2] >= 2
    assert out["1"] == out["3"]
    assert out["1"][0] == problems and orjson.loads(out["1"][1])["summary"]["changed"] > 0


@pytest.mark.parametrize("layout", ["thread per row", "item per row"])
def test_lint_and_report_of_a_database_are_the_same_in_one_and_several_processes(tmp_path, small_shards, layout):
    """Lint and report cut a table of one thread per row into row id ranges, and one of one item per row into
    runs of thread keys: the same findings, problems (rows that cannot be read, rows of no thread, said
    last) and report, in the same order, as one process."""
    build, unreadable = {"thread per row": (_database, "conversations:id=t17"),
                         "item per row": (partial(_items_database, odd=True), "items:rowid=")}[layout]
    path = build(tmp_path / "c.db")
    shards = parallel.sharded([str(path)], 3, by_key=True)[1]
    assert len(shards) > 2 and all(shard.part for shard in shards)
    if layout == "item per row":
        assert parallel.sharded([str(path)], 3) is None  # repair screens it, then cuts it itself
        assert [shard.part.last for shard in shards] == [False] * (len(shards) - 1) + [True]
    one = _run("--jobs", "1", "lint", "--format", "json", str(path))
    three = _run("--jobs", "3", "lint", "--format", "json", str(path))
    assert one[0] == three[0] == 2  # findings, and rows that could not be read
    assert one[1] == three[1] and b'"TF' in one[1]
    assert one[2] == three[2] and unreadable in one[2]
    if layout == "item per row":
        assert [line for line in one[2].splitlines() if "error:" in line][-1].endswith("belong to no thread")
    one = _run("--jobs", "1", "report", "--format", "json", "--top", "50", str(path))
    three = _run("--jobs", "3", "report", "--format", "json", "--top", "50", str(path))
    assert one[:2] == three[:2] and orjson.loads(one[1])["totals"]["dangling_calls"] > 0


@pytest.mark.parametrize("layout", ["thread per row", "item per row"])
def test_a_worker_that_fails_leaves_the_database_as_it_was(tmp_path, small_shards, monkeypatch, capsys, layout):
    """The table is written only once every worker has planned: a worker that fails (out of memory, say) ends
    the run with one line and exit 2, and the table, written by no one, is byte for byte as it was."""
    from threadfix.cli import main

    path = LAYOUTS[layout][0](tmp_path / "c.db")
    before = path.read_bytes()
    parent, plan = os.getpid(), batch.RepairRun._plan

    def fails_in_workers(self, store, now):
        if os.getpid() != parent:
            raise MemoryError
        return plan(self, store, now)

    monkeypatch.setattr(batch.RepairRun, "_plan", fails_in_workers)
    with pytest.raises(SystemExit) as exit_:
        main(["--jobs", "3", "repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(path)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "internal error (MemoryError)" in err and "Traceback" not in err
    assert path.read_bytes() == before and not (tmp_path / "j").exists()


@pytest.mark.parametrize("layout", ["thread per row", "item per row"])
def test_repair_of_a_database_to_a_new_file_in_several_processes(tmp_path, small_shards, monkeypatch, layout):
    """-o: the workers' plans are written to the copy, which holds what one process writes; the input is only
    read."""
    build, table, code = LAYOUTS[layout]
    path = build(tmp_path / "in.db")
    before = path.read_bytes()
    rows = {}
    for jobs in ("1", "3"):
        out = tmp_path / f"out{jobs}.db"
        assert _run("--jobs", jobs, "repair", "--min-age", "0", "-o", str(out), str(path))[0] == code
        rows[jobs] = _rows(out, table)
    assert rows["1"] == rows["3"] and path.read_bytes() == before
    assert rows["1"] != _rows(path, table)  # repaired


def test_a_table_of_one_item_per_row_with_no_index_by_thread_is_read_in_one_process(tmp_path, small_shards):
    """Runs of keys are read by key: with no index to find a thread by, the table is one part (a worker would
    scan the whole table for each thread)."""
    import sqlite3

    path = _items_database(tmp_path / "items.db")
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX by_thread")
    conn.commit()
    conn.close()
    assert parallel.sharded([str(path)], 3, by_key=True) is None
    assert _run("--jobs", "3", "lint", "--format", "json", "--exit-zero", str(path))[0] == 0


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", ["lint", "repair"])
def test_a_worker_killed_outright_stops_the_run_with_one_line(tmp_path, small_shards, monkeypatch, capsys, command):
    """A worker killed by the system (SIGKILL, the out-of-memory killer) fails the run at once with one line
    and exit 2, instead of leaving the parent waiting for its part for ever; repair writes nothing, and does
    not go on to the next input (whose plans would come from the same, broken, workers)."""
    import signal

    from threadfix.cli import main

    path, other = _store(tmp_path / "t.jsonl"), _store(tmp_path / "u.jsonl", seed=8)
    before = path.read_bytes(), other.read_bytes()
    parent = os.getpid()
    module = batch  # (every command's workers open their parts there)

    def killed_in_workers(shard, *args, **kwargs):
        if os.getpid() != parent and shard.continues and shard.spec == str(path):  # past the first file's first range
            os.kill(os.getpid(), signal.SIGKILL)
        return parallel.shard_stores(shard, *args, **kwargs)

    monkeypatch.setattr(module, "shard_stores", killed_in_workers)  # (what a worker calls, not what it is sent)
    args = ["lint", "--format", "json"] if command == "lint" else ["repair", "--min-age", "0", "--journal-dir",
                                                                    str(tmp_path / "j")]
    with pytest.raises(SystemExit) as exit_:
        main(["--jobs", "2", *args, str(path), str(other)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "worker process died" in err and "Traceback" not in err and "internal error" not in err
    assert (path.read_bytes(), other.read_bytes()) == before  # (a journal may hold before-images never written)


@pytest.mark.parametrize("source", ["jsonl", "items table"])
def test_a_repair_in_several_processes_shows_progress_as_one_does(tmp_path, small_shards, monkeypatch, source):
    """The progress line counts the threads planned, whether here or by --jobs workers (whose parts arrive
    as they finish), so a long --jobs repair on a terminal does not sit silent."""
    monkeypatch.setattr(batch, "PROGRESS_EVERY", 10)
    path = _store(tmp_path / "t.jsonl") if source == "jsonl" else _items_database(tmp_path / "items.db")
    seen = {}
    for jobs in (1, 3):
        calls = []
        run = batch.RepairRun([str(path)], batch.RunOptions(dry_run=True, min_age=0, jobs=jobs),
                              progress=lambda store, threads, calls=calls: calls.append(threads))
        outcomes = list(run.outcomes())
        assert outcomes and run.result.threads > 30
        seen[jobs] = calls
    assert seen[1] == seen[3] == list(range(10, len(seen[1]) * 10 + 1, 10)) and len(seen[1]) >= 3


def test_a_table_named_on_the_command_line_is_the_one_cut(tmp_path, small_shards):
    """Where a database holds two tables of threads, finding one takes the command's --table: the table named
    is cut for the workers (with the defaults neither is found, and the database stays in one process)."""
    import sqlite3

    path = _database(tmp_path / "two.db")
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE other (id TEXT PRIMARY KEY, items TEXT, updated_at TEXT)")
    conn.execute("INSERT INTO other SELECT * FROM conversations")
    conn.commit()
    conn.close()
    assert parallel.sharded([str(path)], 3) is None
    processes, shards = parallel.sharded([str(path)], 3, StoreOptions(table="conversations"))
    assert processes == 3 and len(shards) >= 3 and all(shard.part.rows is not None for shard in shards)
    one = _run("--jobs", "1", "lint", "--format", "json", "--table", "conversations", str(path))
    three = _run("--jobs", "3", "lint", "--format", "json", "--table", "conversations", str(path))
    assert one == three and one[0] == 2 and b'"TF' in one[1]


def test_a_dry_runs_workers_send_back_outcomes_only(tmp_path, small_shards):
    """What a dry run's parent never writes (new bytes, the thread they replace) does not cross the pipe."""
    path = _store(tmp_path / "t.jsonl")
    shards = parallel.in_order(parallel.plan_shards([str(path)], 2))
    assert len(shards) > 2
    sent = {}
    for dry_run in (False, True):
        options = batch.RunOptions(dry_run=dry_run, min_age=0, output=tmp_path / "out.jsonl")
        sent[dry_run] = [kept for shard in shards for kept in batch._plan_shard(shard, options=options, now=0)[1]]
    # (each planned thread comes as its outcome and the change its store built: the thread's write locator and the
    # bytes it was planned on, never its items, and the new bytes)
    changed = [(outcome.address, outcome.plan) for outcome, change in sent[False] if change is not None]
    assert changed and all(change.thread is not None and change.thread.items == [] and change.data
                           for _, change in sent[False] if change is not None)
    assert [(outcome.address, outcome.plan) for outcome, _ in sent[True]
            if getattr(outcome, "status", None) == "would_repair"] == changed
    assert all(change is None for _, change in sent[True])


@pytest.mark.parametrize("source", ["jsonl", "thread per row", "item per row"])
@pytest.mark.parametrize("command", ["lint", "report"])
def test_an_input_gone_after_it_was_cut_is_one_problem(tmp_path, small_shards, monkeypatch, capsys, source, command):
    """Every worker reading a part of an input that vanished after the cut meets the same error: it is said, and
    counted, once, as one process says it."""
    import json

    from threadfix.cli import main

    path = {"jsonl": lambda: _store(tmp_path / "t.jsonl"), "thread per row": lambda: _database(tmp_path / "t.db"),
            "item per row": lambda: _items_database(tmp_path / "i.db")}[source]()
    real_plan = parallel.plan_shards

    def cut_then_gone(*args, **kwargs):
        shards = real_plan(*args, **kwargs)
        assert len([shard for shard in shards if shard.spec == str(path)]) > 2
        path.unlink()
        return shards

    monkeypatch.setattr(parallel, "plan_shards", cut_then_gone)
    with pytest.raises(SystemExit) as exit_:
        main(["--jobs", "2", command, "--format", "json", str(path)])
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    said = [line for line in err.splitlines() if line.startswith("threadfix: error:")]
    assert len(said) == 1 and said[0].startswith(f"threadfix: error: {path}: no such file"), err
    if command == "report":
        assert json.loads(out)["totals"]["unreadable"] == 1
    else:
        assert err.rstrip().endswith("; 1 input error") and json.loads(out)["summary"]["problems"] == [
            {"where": str(path), "message": said[0].rpartition(": ")[2], "exit_code": 2}]


@pytest.mark.parametrize("replaced", ["jsonl by a database", "database by a document", "table by a framework's"])
@pytest.mark.parametrize("command", ["lint", "repair"])
def test_an_input_of_another_kind_after_it_was_cut_is_refused_once(tmp_path, small_shards, monkeypatch, capsys,
                                                                    replaced, command):
    """An input replaced after the cut by another kind of store (at the same path) is not read whole by every
    worker, once per part of the old kind: each refuses its part, and the run says so once, exit 2."""
    import json
    import shutil
    import sqlite3

    from threadfix.cli import main

    if replaced == "jsonl by a database":
        path, other = _store(tmp_path / "t.jsonl"), _items_database(tmp_path / "other.db")
    elif replaced == "database by a document":
        path, other = _database(tmp_path / "t.db"), tmp_path / "other.json"
        other.write_bytes(orjson.dumps({"id": "doc", "items": _thread(random.Random(1), 1)["items"]}))
    else:  # (a LangGraph checkpoints database, whose store is cut by runs of thread keys, not row ids)
        path, other = _database(tmp_path / "t.db"), tmp_path / "checkpoints.db"
        conn = sqlite3.connect(other)
        conn.executescript("CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, "
                           "parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB);"
                           "CREATE TABLE writes (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, task_id TEXT, "
                           "idx INTEGER, channel TEXT, type TEXT, value BLOB);")
        conn.close()
    real_plan = parallel.plan_shards

    def cut_then_replaced(*args, **kwargs):
        shards = real_plan(*args, **kwargs)
        assert len([shard for shard in shards if shard.spec == str(path)]) > 2
        shutil.copyfile(other, path)
        return shards

    monkeypatch.setattr(parallel, "plan_shards", cut_then_replaced)
    extra = ["--dry-run", "--min-age", "0"] if command == "repair" else []
    with pytest.raises(SystemExit) as exit_:
        main(["--jobs", "2", command, "--format", "json", *extra, str(path)])
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    said = [line for line in err.splitlines() if line.startswith("threadfix: error:")]
    assert said == [f"threadfix: error: {path}: changed since --jobs cut it into parts: it is no longer the kind of "
                    "store it was cut as, so none of it was read; run again"], err
    if command == "lint":
        assert json.loads(out)["findings"] == []


@pytest.mark.parametrize("command", ["lint", "report", "repair"])
def test_a_database_unreadable_only_for_later_parts_is_still_said(tmp_path, small_shards, monkeypatch, capsys, command):
    """The first part read, the later ones could not open the database: the rows they hold were not read, and
    the run must say so (once), not end as if the whole table had been read."""
    import json

    from threadfix import stores
    from threadfix.cli import main

    path = _database(tmp_path / "t.db")
    module = batch  # (every command's workers open their parts there)
    real_open_part = stores.open_part

    def later_parts_cannot_open(shard, *args, **kwargs):
        if not shard.continues:
            return parallel.shard_stores(shard, *args, **kwargs)
        stores.open_part = lambda spec, *a, **k: iter([batch.Problem(spec, "unable to open database file")])
        try:
            return list(parallel.shard_stores(shard, *args, **kwargs))
        finally:
            stores.open_part = real_open_part

    monkeypatch.setattr(module, "shard_stores", later_parts_cannot_open)
    args = ["repair", "--dry-run", "--min-age", "0"] if command == "repair" else [command, "--format", "json"]
    with pytest.raises(SystemExit) as exit_:
        main(["--jobs", "2", *args, str(path)])
    out, err = capsys.readouterr()
    assert exit_.value.code == 2, err
    assert [line for line in err.splitlines() if line.startswith("threadfix: error:")] == [
        f"threadfix: error: {path}: unable to open database file"]
    if command == "report":
        assert json.loads(out)["totals"]["unreadable"] == 1


def test_shards_are_handed_out_a_few_ahead_of_the_parent_in_order() -> None:
    """The parent takes results in order and no more than ``ahead`` shards are out at once, however slow it is:
    when it writes what the workers planned, their results must not pile up in it."""
    from concurrent.futures import Future

    class Pool:
        def __init__(self) -> None:
            self.submitted = 0

        def submit(self, work, shard):
            self.submitted += 1
            done: Future = Future()
            done.set_result(work(shard))
            return done

    for ahead in (1, 2, 4):
        for count in (0, 1, 3, 10):
            pool = Pool()
            taken, out = [], []
            for result in parallel._ahead(pool, lambda shard: shard * 10, list(range(count)), ahead):
                taken.append(result)
                out.append(pool.submitted - len(taken))  # handed out, not yet taken, while the parent works
            assert taken == [n * 10 for n in range(count)]
            assert max(out, default=0) == min(ahead, count - 1 if count else 0)


# --------------------------------------------------------------------------- the forked workers

def _sized(shard: parallel.Shard) -> tuple[str, bytes, int]:
    """A part's result bigger than a pipe holds (the parent must read it while the worker writes)."""
    return shard.spec, shard.spec.encode() * (300_000 + len(shard.spec)), os.getpid()


class _Refused(Exception):
    def __init__(self, message: str, handle: object) -> None:
        super().__init__(message)
        self.handle = handle


def _failing(shard: parallel.Shard) -> str:
    if shard.spec == "bad":
        raise batch.ThreadfixError("bad: this part cannot be read")
    if shard.spec == "unpicklable":
        raise _Refused("a reason", lambda: None)  # (a lambda does not pickle)
    return shard.spec


def _shards(names: list[str]) -> list[parallel.Shard]:
    return [parallel.Shard(name) for name in names]


@pytest.mark.parametrize("fork", [True, False])
def test_parts_come_back_in_order_from_other_processes_however_big(monkeypatch, fork: bool) -> None:
    """Forked workers (and the executor where there is no fork) give each part's result whole, in input order."""
    monkeypatch.setattr(parallel, "FORK", fork)
    names = [f"part{n}" for n in range(7)]
    results = list(parallel.run_sharded(_shards(names), _sized, 3))
    assert [spec for spec, _, _ in results] == names
    assert all(data == spec.encode() * (300_000 + len(spec)) for spec, data, _ in results)
    assert os.getpid() not in {pid for _, _, pid in results} and len({pid for _, _, pid in results}) > 1


@pytest.mark.parametrize("fork", [True, False])
def test_a_workers_error_is_raised_in_the_parent(monkeypatch, fork: bool) -> None:
    monkeypatch.setattr(parallel, "FORK", fork)
    with pytest.raises(batch.ThreadfixError, match="bad: this part cannot be read"):
        list(parallel.run_sharded(_shards(["a", "b", "bad", "c"]), _failing, 2))


def test_an_error_that_does_not_pickle_still_reaches_the_parent_by_name() -> None:
    with pytest.raises(batch.ThreadfixError, match="_Refused: a reason"):
        list(parallel.run_sharded(_shards(["a", "unpicklable", "c"]), _failing, 2))


def test_a_parent_that_stops_early_leaves_no_worker_behind(monkeypatch) -> None:
    """A reader that stops (an error, Ctrl-C) ends the forked workers at once and reaps them."""
    started: list[int] = []
    start = parallel._ForkedPool._start

    def recorded(pool, ledger):
        start(pool, ledger)
        started.append(pool.workers[-1][0])

    monkeypatch.setattr(parallel._ForkedPool, "_start", recorded)
    results = parallel.run_sharded(_shards([f"part{n}" for n in range(8)]), _sized, 2)
    assert next(results)[0] == "part0"
    results.close()
    assert len(started) == 2
    for pid in started:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # ended and reaped


def test_a_worker_that_cannot_be_forked_stops_the_run_and_leaves_none_behind(monkeypatch) -> None:
    forked: list[int] = []
    real_fork = os.fork

    def fork_once() -> int:
        if forked:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork_once)
    shards = _shards(["a", "b", "c"])
    descriptors = set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    with pytest.raises(parallel.WorkerLost, match="could not start a --jobs worker process"):
        list(parallel.run_sharded(shards, _sized, 2))
    assert len(forked) == 1
    if descriptors is not None:  # the pipes of the worker that was never forked are closed too
        assert set(os.listdir("/proc/self/fd")) <= descriptors
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0], os.WNOHANG)


def test_auto_repairs_in_one_process_where_lint_takes_every_core(tmp_path, monkeypatch):
    """A screened repair of a few hundred MB is faster in one process (benchmarks/README.md): by default repair
    spreads only from AUTO_MIN_REPAIR_BYTES, lint and report from AUTO_MIN_BYTES."""
    from threadfix import stores

    path = _store(tmp_path / "s.jsonl")

    def holding(size):  # (what the path holds as the stores size it, as a large input would)
        return lambda spec: [stores.Input(parallel.Shard(spec), size)]

    monkeypatch.setattr(stores, "inputs", holding(200 * 1024 * 1024))
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 2)
    assert parallel.resolve_jobs(None, [str(path)]) == 2
    assert parallel.resolve_jobs(None, [str(path)], repair=True) == 1
    monkeypatch.setattr(stores, "inputs", holding(parallel.AUTO_MIN_REPAIR_BYTES))
    assert parallel.resolve_jobs(None, [str(path)], repair=True) == 2
    planned: list[tuple[int | None, int, bool]] = []
    real = batch.plan_run
    monkeypatch.setattr(batch, "plan_run", lambda specs, jobs, *rest, **kw: (lambda got: planned.append(
        (jobs, got[0], got[1] is None)) or got)(real(specs, jobs, *rest, **kw)))
    monkeypatch.setattr(stores, "inputs", holding(200 * 1024 * 1024))
    _run("repair", "--dry-run", "--min-age", "0", str(path))  # (the store holds a bad line on purpose: exit 2)
    assert planned == [(None, 1, True)]  # (automatic: one process, no shards)


def test_a_run_sizes_its_inputs_once(tmp_path, small_shards, monkeypatch):
    """How many processes and which parts are both decided by what the inputs hold: a folder is walked (a
    database asked its size) once for both, in lint, report and repair alike."""
    from threadfix import stores

    folder = tmp_path / "f"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        _store(folder / name)
    walked: list[str] = []
    real = stores.inputs
    monkeypatch.setattr(stores, "inputs", lambda spec: walked.append(spec) or real(spec))
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 2)
    spread = []
    real_run = batch.run_sharded
    monkeypatch.setattr(batch, "run_sharded", lambda shards, work, jobs: spread.append(jobs) or real_run(shards, work, jobs))
    for command in (["lint"], ["report"], ["repair", "--dry-run", "--min-age", "0"]):
        walked.clear()
        _run(*command, str(folder))
        assert walked == [str(folder)], command
    assert spread == [2, 2, 2]  # (each spread over processes, on one walk)
