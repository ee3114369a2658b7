"""Kill repair (SIGKILL, no clean-up) at every write step: the store is the old or the new version, never a
mix (a database passes its integrity check), and running repair again converges on exactly what an
uninterrupted run writes.

Two ways to pick the moment: the in-code crash points (``THREADFIX_CRASHPOINT=step[:n]``, one per phase:
temp written, temp synced, just before the swap, just after it, committed; ``committed:1`` with two
files is "between stores"), and strace killing the process on entry to its N-th write-side system call,
for every N (the default run for one store shape, ``--run-slow`` for every shape).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.reliability.harness import (
    ROOT, SHAPES, STRACE, Store, inject_at_every_syscall, make_store, repair, sqlite_snapshot, sqlite_store, tally, temps,
    thread_lines, threadfix, write_syscalls,
)
from threadfix.stores.atomic import STALE_TEMP_SECONDS
from threadfix.undo import undo

STEPS = ("temp-written", "temp-synced", "before-rename", "renamed", "committed")


def assert_recovers(store: Store, tmp: Path) -> None:
    """Old or new bytes, never a mix; a rerun writes exactly the new bytes; a second rerun changes nothing.

    A temp file the killed run left is never read as a store and is left alone (it could belong to a repair
    running now; ``test_only_stale_temps_are_removed`` covers its removal).
    """
    now = store.path.read_bytes()
    assert now in (store.before, store.after), "the store holds neither the old nor the new version"
    assert store.path.stat().st_mode & 0o777 == 0o640
    strays = temps(store.folder)
    assert all(p.name.endswith(".tmp") for p in strays)
    rerun = repair([store.folder], tmp)
    assert rerun.result.exit_code() == 0 and not rerun.result.problems
    assert store.path.read_bytes() == store.after
    assert repair([store.folder], tmp, dry_run=True).result.changed == 0
    assert temps(store.folder) == strays


@pytest.mark.parametrize("name", ["thread.json", "threads.jsonl", "items.jsonl"])
def test_killed_at_each_step(tmp_path: Path, name: str) -> None:
    def kill(step: str) -> tuple[str, Store, subprocess.CompletedProcess]:
        store = make_store(tmp_path / step, name)
        return step, store, threadfix("repair", "--min-age", "0", str(store.path), cwd=tmp_path / step,
                                      env={"THREADFIX_CRASHPOINT": step})

    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for step, store, killed in pool.map(kill, STEPS):
            assert killed.returncode == -9, (step, killed.stderr)
            tally("repairs killed (SIGKILL) at a write step")
            now = store.path.read_bytes()
            assert now == (store.after if step in ("renamed", "committed") else store.before), step
            assert_recovers(store, tmp_path / step)


@pytest.mark.parametrize("name", ["thread.json", "threads.jsonl"])
def test_sigterm_at_each_step_reports_what_is_in_place(tmp_path: Path, name: str) -> None:
    """``kill PID`` at each write step: before the swap the store is untouched and nothing is said repaired; from
    the swap on the store is the new version and is reported repaired, with its journal, which undoes it. Either
    way exit 130 and no temp file left behind."""
    def stop(step: str) -> tuple[str, Store, subprocess.CompletedProcess]:
        store = make_store(tmp_path / step, name)
        return step, store, threadfix("repair", "--min-age", "0", str(store.path), cwd=tmp_path / step,
                                      env={"THREADFIX_CRASHPOINT": step, "THREADFIX_CRASHPOINT_SIGNAL": "TERM"})

    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for step, store, stopped in pool.map(stop, STEPS):
            said = stopped.stderr.decode()
            assert stopped.returncode == 130, (step, said)
            assert temps(store.folder) == [], step
            if step in ("renamed", "committed"):
                assert store.path.read_bytes() == store.after, step
                assert "threadfix: interrupted; repaired " in said and "undo journal: " in said, (step, said)
                assert str(store.path) in stopped.stdout.decode(), (step, stopped.stdout)  # its change lines
                journal = said.split("undo journal: ")[1].split(" ")[0]
                assert threadfix("undo", journal, cwd=tmp_path / step).returncode == 0, step
                assert store.path.read_bytes() == store.before, step
            else:
                assert store.path.read_bytes() == store.before, step
                assert "interrupted; nothing half-written was left behind" in said and "repaired" not in said, (step, said)


def test_killed_between_two_stores(tmp_path: Path) -> None:
    """The first file is committed, the second untouched; the journal undoes exactly what was done."""
    store = make_store(tmp_path, "threads.jsonl")
    second = store.folder / "z-more.jsonl"
    second.write_bytes(store.before)
    killed = threadfix("repair", "--min-age", "0", str(store.folder), cwd=tmp_path,
                       env={"THREADFIX_CRASHPOINT": "committed:1"})
    assert killed.returncode == -9
    tally("repairs killed (SIGKILL) at a write step")
    assert (store.path.read_bytes(), second.read_bytes()) == (store.after, store.before)
    (journal,) = (tmp_path / ".state" / "threadfix" / "journal").iterdir()
    assert [o.status for o in undo(journal)] == ["restored"] * 3
    assert (store.path.read_bytes(), second.read_bytes()) == (store.before, store.before)
    assert repair([store.folder], tmp_path).result.changed == 6
    assert store.path.read_bytes() == second.read_bytes() == store.after


def test_only_stale_temps_are_removed(tmp_path: Path) -> None:
    """A killed repair's temp is removed by a later writing run once nothing could still own it."""
    store = make_store(tmp_path, "threads.jsonl")
    stale, fresh = store.folder / ".threadfix-killed.tmp", store.folder / ".threadfix-running.tmp"
    stale.write_bytes(b"partial")
    fresh.write_bytes(b"partial")
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(stale, (old, old))
    assert repair([store.folder], tmp_path, dry_run=True).result.changed == 3
    assert temps(store.folder) == [stale, fresh]  # a dry run writes nothing, temps included
    repair([store.folder], tmp_path)
    assert temps(store.folder) == [fresh]
    assert store.path.read_bytes() == store.after


# --------------------------------------------------------------------------- every system call (strace)

def kill_at_every_syscall(tmp: Path, name: str) -> int:
    store = make_store(tmp, name)
    calls = write_syscalls(store, tmp)
    assert any(call.name in ("rename", "renameat2") for call in calls)
    for call, copy, killed in inject_at_every_syscall(store, tmp, calls, "signal=SIGKILL"):
        assert killed.returncode in (-9, 137), (str(call), killed.returncode, killed.stderr[-500:])
        tally("repairs killed (SIGKILL) at a write step")
        assert_recovers(copy, copy.folder.parent)
    return len(calls)


@pytest.mark.skipif(STRACE is None, reason="strace is not installed")
@pytest.mark.parametrize("name", ["two.jsonl", *(pytest.param(name, marks=pytest.mark.slow)
                                                  for name in sorted(SHAPES) if name != "two.jsonl")])
def test_killed_at_every_write_side_system_call(tmp_path: Path, name: str) -> None:
    assert kill_at_every_syscall(tmp_path, name) >= 10


# --------------------------------------------------------------------------- SQLite stores


def kill_sqlite_at_every_syscall(tmp: Path, layout: str, mode: str) -> int:
    store, before, after = sqlite_store(tmp, layout, mode)
    calls = write_syscalls(store, tmp)
    for call, copy, killed in inject_at_every_syscall(store, tmp, calls, "signal=SIGKILL"):
        assert killed.returncode in (-9, 137), (str(call), killed.returncode, killed.stderr[-500:])
        tally("repairs killed (SIGKILL) at a write step")
        assert sqlite_snapshot(copy.path) in (before, after), str(call)
        rerun = repair([copy.path], copy.folder.parent)
        assert rerun.result.exit_code() == 0 and sqlite_snapshot(copy.path) == after, str(call)
        assert repair([copy.path], copy.folder.parent, dry_run=True).result.changed == 0
    return len(calls)


@pytest.mark.skipif(STRACE is None, reason="strace is not installed")
@pytest.mark.parametrize(("layout", "mode"), [
    ("thread", "delete"),
    *(pytest.param(layout, mode, marks=pytest.mark.slow)
      for layout, mode in [("thread", "wal"), ("item", "delete"), ("item", "wal")]),
])
def test_sqlite_killed_at_every_write_side_system_call(tmp_path: Path, layout: str, mode: str) -> None:
    assert kill_sqlite_at_every_syscall(tmp_path, layout, mode) >= 10


def test_sigterm_mid_write_cleans_up_and_exits_130(tmp_path: Path) -> None:
    """``kill PID`` (a scheduler's timeout) while the temp file is being written: the temp file is removed,
    the store is untouched, one line says so, exit 130."""
    store = tmp_path / "threads.jsonl"
    lines = thread_lines(40_000)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / ".state"), "PYTHONPATH": str(ROOT)}
    late = 0  # signals that came after the repair had finished
    for _ in range(5):  # on a busy machine the repair may finish between the temp file being seen and the signal
        store.write_bytes(lines)
        process = subprocess.Popen([sys.executable, "-m", "threadfix", "repair", "--min-age", "0", str(store)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path, env=env)
        while not temps(tmp_path) and process.poll() is None:
            time.sleep(0.001)
        if process.poll() is not None:
            process.stderr.close()
            continue  # finished before its temp file could be seen
        process.send_signal(signal.SIGTERM)
        stderr = process.stderr.read().decode()
        process.stderr.close()
        code = process.wait(60)
        if store.read_bytes() != lines and temps(tmp_path) == [] and (
                code == 0 or (code == 130 and "threadfix: interrupted; repaired " in stderr)):
            late += 1  # renamed into place before the signal came (and said so, when it came after)
            continue
        break
    else:
        assert late < 5, "SIGTERM sent while the temp file existed never stopped the repair"
        pytest.skip("the repair finished before its temp file could be seen")
    assert process.returncode == 130
    assert stderr == "threadfix: interrupted; nothing half-written was left behind\n"
    assert store.read_bytes() == lines and temps(tmp_path) == []
