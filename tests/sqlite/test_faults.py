"""A full disk, a database locked by the app, a read-only file: one clear line, the right exit, nothing broken."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.sqlite.dbs import create, dump, healthy, integrity, read, repair, run_cli, stuck
from threadfix.batch import Problem
from threadfix.errors import ExitCode
from threadfix.stores import sqlite as sqlite_store
from threadfix.undo import undo

HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
for statement in sys.argv[2].split(";"):
    conn.execute(statement).fetchall()
print("holding", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "threadfix", *args], capture_output=True, text=True, timeout=60, **kwargs)


@pytest.fixture
def full_disk(monkeypatch):
    """``full_disk(pages)``: writing connections may grow the database by at most ``pages`` pages, then get
    SQLITE_FULL as on a full disk (``max_page_count`` is per connection, so it is set on threadfix's own)."""
    connect = sqlite_store.connect

    def limit(extra: int = 0) -> None:
        def limited(path, *, write, timeout):
            conn = connect(path, write=write, timeout=timeout)
            if write:
                pages = conn.execute("PRAGMA page_count").fetchone()[0]
                conn.execute(f"PRAGMA max_page_count = {pages + extra}")
            return conn

        monkeypatch.setattr(sqlite_store, "connect", limited)

    return limit


def big_threads(n: int) -> dict[str, list]:
    return {f"t{i:02}": stuck(i) for i in range(n)}


@pytest.mark.parametrize("mode", ["delete", "wal"])
def test_disk_full_rolls_back_and_says_so(tmp_path: Path, full_disk, mode: str) -> None:
    db = create(tmp_path / "c.db", "item", big_threads(40), journal_mode=mode)
    full_disk(0)
    before = dump(db)
    run, outcomes = repair(db, tmp_path / "j", batch_size=1000)
    problems = [o for o in outcomes if isinstance(o, Problem)]
    assert [(p.where, p.exit_code) for p in problems] == [(str(db), ExitCode.ERROR)]
    assert problems[0].message.startswith("no space left for the database")
    assert {o.status for o in outcomes if not isinstance(o, Problem)} == {"left_alone"}
    assert run.result.changed == 0
    assert dump(db) == before
    assert integrity(db) == "ok"


def test_disk_full_midway_keeps_the_batches_already_committed(tmp_path: Path, full_disk) -> None:
    db = create(tmp_path / "c.db", "item", big_threads(40))
    full_disk(2)
    run, outcomes = repair(db, tmp_path / "j", batch_size=2)
    repaired = [o.address for o in outcomes if not isinstance(o, Problem) and o.status == "repaired"]
    left = [o.address for o in outcomes if not isinstance(o, Problem) and o.status == "left_alone"]
    assert repaired and left, "the limit should fall between batches"
    threads = read(db, "item")
    for address in repaired:
        assert len(threads[address.rsplit("=", 1)[1]]) == 4
    for address in left:
        assert len(threads[address.rsplit("=", 1)[1]]) == 3
    assert integrity(db) == "ok"
    statuses = [o.status for o in undo(run.result.journal)]
    assert statuses.count("restored") == len(repaired) and statuses.count("already_original") == len(left)


@pytest.mark.parametrize("mode", ["delete", "wal"])
def test_a_lock_held_past_the_busy_timeout_exits_75_and_changes_nothing(tmp_path: Path, mode: str, capsys) -> None:
    db = create(tmp_path / "c.db", "agents", {"a": stuck(1), "b": healthy(2)}, journal_mode=mode)
    before = dump(db)
    args = ["repair", "--min-age", "0", "--busy-timeout", "0.2", "--journal-dir", str(tmp_path / "j"), str(db)]
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), "BEGIN IMMEDIATE"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        if mode == "wal":  # once as a user's shell sees it
            done = cli(*args)
            code, out, err = done.returncode, done.stdout, done.stderr
        else:
            code, out, err = run_cli(args, capsys)
    finally:
        holder.communicate("release\n", timeout=30)
    assert code == ExitCode.BUSY, err
    assert f"threadfix: error: {db}: the database stayed locked by another process for longer than --busy-timeout " \
           "(0.2s); nothing more was written, safe to retry" in err
    assert out == ""
    assert dump(db) == before
    assert run_cli(args, capsys)[0] == 0


def test_a_reader_holding_its_lock_past_the_timeout_makes_the_commit_wait_then_give_up(tmp_path: Path) -> None:
    """Rollback-journal mode: COMMIT needs every reader gone; SQLite keeps our transaction open, we roll it back."""
    db = create(tmp_path / "c.db", "thread", {"a": stuck(1)}, journal_mode="delete")
    before = dump(db)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), "BEGIN; SELECT count(*) FROM conversations"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        run, outcomes = repair(db, tmp_path / "j", busy_timeout=0.1)
    finally:
        holder.communicate("release\n", timeout=30)
    assert run.result.exit_code() == ExitCode.BUSY, outcomes
    assert dump(db) == before
    assert integrity(db) == "ok"


def _as_nobody(folder: Path) -> list[str] | None:
    """A command prefix that drops root's privileges (root ignores file modes), when this machine allows it."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import threadfix.cli, sys; open(sys.argv[1]).close()",
                            str(folder / "c.db")], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.mark.parametrize("mode", ["delete", "wal"])
def test_a_read_only_database_can_be_read_but_repair_says_why_it_cannot_write(mode: str) -> None:
    folder = Path(tempfile.mkdtemp(prefix="threadfix-ro-"))
    try:
        folder.chmod(0o755)
        db = create(folder / "c.db", "item", {"a": stuck(1)}, journal_mode=mode)
        db.chmod(0o644)
        journal = folder / "journal"
        journal.mkdir(mode=0o777)
        journal.chmod(0o777)
        prefix = _as_nobody(folder)
        if prefix is None:
            pytest.skip("cannot drop privileges here, and root ignores file modes")
        if not prefix:
            db.chmod(0o444)
        before = db.read_bytes()  # not dump(): opening a WAL database as root would create its -shm for nobody
        env = {**os.environ, "HOME": str(journal), "XDG_STATE_HOME": str(journal)}
        lint = subprocess.run([*prefix, sys.executable, "-m", "threadfix", "lint", str(db)], capture_output=True,
                              text=True, env=env, timeout=60)
        fix = subprocess.run([*prefix, sys.executable, "-m", "threadfix", "repair", "--min-age", "0", "--journal-dir",
                              str(journal), str(db)], capture_output=True, text=True, env=env, timeout=60)
        if mode == "wal" and prefix:
            # SQLite needs the -shm file beside a WAL database even to read it: one line naming the fix
            for done in (lint, fix):
                assert done.returncode == ExitCode.ERROR, done.stderr
                assert done.stderr.startswith(f"threadfix: error: {db}: cannot read this WAL-mode database: SQLite "
                                              "must create its -shm file beside it and the folder is not writable; run "
                                              "threadfix as the app's user\n")
        else:
            assert lint.returncode == 1 and "TF001" in lint.stdout, lint.stderr
            assert fix.returncode == ExitCode.ERROR
            assert f"threadfix: error: {db}: the database cannot be written here (attempt to write a readonly " \
                   "database); run threadfix as the app's user, or use --dry-run" in fix.stderr
            assert "Traceback" not in fix.stderr
        assert db.read_bytes() == before
        assert stat.S_IMODE(db.stat().st_mode) in (0o644, 0o444)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
