"""``--jobs``: shards are newline-aligned, and lint, report and repair give the same results in 1 or N processes."""

from __future__ import annotations

import os
import random
from itertools import pairwise
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from threadfix import parallel
from threadfix.cli import _register, app
from threadfix.stores import StoreOptions
from threadfix.stores.files import FileStore

_register()


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
    """Cut files of a few KB as if they were large, and let auto pick several processes."""
    monkeypatch.setattr(parallel, "MIN_SHARD_BYTES", 2048)
    monkeypatch.setattr(parallel, "AUTO_MIN_BYTES", 4096)


def _run(*args: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout_bytes, result.stderr


# ---------------------------------------------------------------------------- shards


@given(lengths=st.lists(st.integers(0, 300), min_size=1, max_size=60), jobs=st.integers(2, 5),
       last_newline=st.booleans())
def test_shards_cover_the_file_on_line_boundaries_with_their_line_numbers(tmp_path_factory, lengths, jobs, last_newline):
    path = tmp_path_factory.mktemp("cut") / "x.jsonl"
    data = b"\n".join(b"x" * n for n in lengths) + (b"\n" if last_newline else b"")
    path.write_bytes(data)
    old = parallel.MIN_SHARD_BYTES
    parallel.MIN_SHARD_BYTES = 1
    try:
        shards = parallel._cut(path, str(path), jobs)
    finally:
        parallel.MIN_SHARD_BYTES = old
    assert shards[0].start == 0 and shards[-1].end == len(data)
    for before, after in pairwise(shards):
        assert before.end == after.start and data[after.start - 1:after.start] == b"\n"
    for shard in shards:
        assert shard.first_line == data[:shard.start].count(b"\n") + 1


def test_a_byte_range_reads_the_threads_a_whole_read_gives_there(tmp_path, small_shards):
    path = _store(tmp_path / "s.jsonl")
    whole = list(FileStore(path, str(path), jsonl=True).threads())
    shards = parallel.plan_shards([str(path)], 3)
    assert len(shards) > 1
    parts = [t for shard in shards for store in parallel.shard_stores(shard, StoreOptions()) for t in store.threads()]
    assert [repr(t) for t in parts] == [repr(t) for t in whole]  # addresses, line numbers, spans, raw bytes


def test_auto_stays_in_one_process_for_small_inputs(tmp_path):
    path = _store(tmp_path / "s.jsonl")
    assert parallel.resolve_jobs(None, [str(path)]) == 1
    assert parallel.sharded([str(path)], None) is None
    assert parallel.sharded([str(path)], 2) is None  # too small to cut: one process, no pool
    assert parallel.sharded(["-"], 4) is None


def test_item_per_line_files_are_not_cut(tmp_path, small_shards):
    path = tmp_path / "one.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(item) for item in _thread(random.Random(1), 1)["items"] * 40) + b"\n")
    assert parallel.plan_shards([str(path)], 4) == [parallel.Shard(str(path))]


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
