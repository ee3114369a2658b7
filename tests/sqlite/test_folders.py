"""A folder holds databases too: a walk reads each as if it were named, and one it cannot open does not stop it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sqlite.dbs import create, dump, healthy, read, run_cli, stuck
from tests.sqlite.test_faults import HOLDER
from threadfix import batch, dialects, parallel
from threadfix.batch import Problem, RepairRun, RunOptions, scan
from threadfix.errors import ExitCode
from threadfix.stores import StoreOptions, walk_folder
from threadfix.undo import undo

RESPONSES = dialects.get("openai-responses")


def folder_of_stores(root: Path, outside: Path) -> Path:
    """Two databases of threads (one in a subfolder), a JSONL file, a database of something else, a ``.db`` that
    is no database, SQLite's side files, a hidden folder, and a symlink to a database outside."""
    (root / "sub").mkdir(parents=True)
    create(root / "items.db", "item", {"a": stuck(1), "b": healthy(2)})
    create(root / "sub" / "agents.sqlite", "agents", {"c": stuck(3)})
    (root / "chats.jsonl").write_text(json.dumps({"id": "d", "input": stuck(4)}) + "\n")
    app = sqlite3.connect(root / "app.db")
    app.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    app.commit()
    app.close()
    (root / "notes.db").write_text("not a database\n")
    (root / "items.db-wal").write_bytes(b"")
    (root / ".cache").mkdir()
    create(root / ".cache" / "hidden.db", "item", {"h": stuck(5)})
    outside.mkdir()
    create(outside / "elsewhere.db", "item", {"e": stuck(6)})
    (root / "link.db").symlink_to(outside / "elsewhere.db")
    return root


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return folder_of_stores(tmp_path / "stores", tmp_path / "outside")


def test_the_walk_takes_thread_files_and_sqlite_databases_in_order(folder: Path) -> None:
    entries = [(e.path.relative_to(folder).as_posix(), e.database, e.refused is not None) for e in walk_folder(str(folder))]
    assert entries == [("app.db", True, False), ("chats.jsonl", False, False), ("items.db", True, False),
                       ("link.db", True, True), ("notes.db", False, True), ("sub/agents.sqlite", True, False)]
    # (issue #22: a .db that is not SQLite is refused by name, no longer passed over in silence)


def test_lint_reads_every_database_of_threads_and_reports_the_others(folder: Path) -> None:
    results = list(scan([str(folder)]))
    threads = sorted((r.thread.address.source.removeprefix(f"{folder}/"), len(r.thread.items))
                     for r in results if not isinstance(r, Problem))
    assert threads == [("chats.jsonl", 3), ("items.db", 3), ("items.db", 3), ("sub/agents.sqlite", 3)]
    problems = {Path(p.where).name: p for p in results if isinstance(p, Problem)}
    assert set(problems) == {"app.db", "link.db", "notes.db"}
    assert "is not one" in problems["notes.db"].message  # named like a database: said, not passed over
    assert "users" in problems["app.db"].message  # names what the database holds instead
    assert problems["app.db"].exit_code == ExitCode.ERROR
    assert "symlink to a file outside" in problems["link.db"].message


def test_repair_writes_the_databases_in_a_folder_and_undo_restores_them(folder: Path, tmp_path: Path) -> None:
    before = {name: dump(folder / name) for name in ("items.db", "sub/agents.sqlite", "app.db")}
    outside = dump(tmp_path / "outside" / "elsewhere.db")
    run = RepairRun([str(folder)], RunOptions(store=StoreOptions(writable=True), min_age=0, journal_dir=tmp_path / "j"))
    outcomes = list(run.outcomes())
    repaired = sorted(Path(o.address.split("#")[0].split(":")[0]).name for o in outcomes if getattr(o, "status", "") == "repaired")
    assert repaired == ["agents.sqlite", "chats.jsonl", "items.db"]
    assert sorted(Path(o.where).name for o in outcomes if isinstance(o, Problem)) == ["app.db", "link.db", "notes.db"]
    for name, layout, key in (("items.db", "item", "a"), ("sub/agents.sqlite", "agents", "c")):
        items = read(folder / name, layout)[key]
        assert RESPONSES.check(items) == [] and len(items) == 4, name
    assert read(folder / "items.db", "item")["b"] == healthy(2)
    assert dump(folder / "app.db") == before["app.db"]
    assert dump(tmp_path / "outside" / "elsewhere.db") == outside  # the symlink was not followed
    assert sorted(o.status for o in undo(run.result.journal)) == ["restored"] * 3
    for name in ("items.db", "sub/agents.sqlite"):
        assert [line for line in dump(folder / name) if "sqlite_sequence" not in line] == \
               [line for line in before[name] if "sqlite_sequence" not in line]


def test_jobs_read_a_folder_of_databases_as_one_process_does(folder: Path, capsys) -> None:
    args = ["repair", "--dry-run", "--min-age", "0", "--format", "json", str(folder)]
    one = run_cli(["--jobs", "1", *args], capsys)
    two = run_cli(["--jobs", "2", *args], capsys)
    assert one[0] == two[0] == ExitCode.ERROR  # app.db and link.db are problems; the rest was read
    assert json.loads(one[1]) == json.loads(two[1])
    assert "items.db" in one[1] and "agents.sqlite" in one[1]
    assert one[2].count("app.db") == two[2].count("app.db") == 1


def test_automatic_jobs_count_the_databases_a_folder_holds(folder: Path) -> None:
    taken = ("app.db", "chats.jsonl", "items.db", "sub/agents.sqlite")
    assert sum(found.size for found in parallel.sized([str(folder)])) == sum((folder / name).stat().st_size for name in taken)


def test_a_locked_database_in_a_folder_is_said_and_the_rest_is_repaired(folder: Path, tmp_path: Path) -> None:
    db = folder / "items.db"
    before = dump(db)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), "BEGIN EXCLUSIVE"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        done = subprocess.run([sys.executable, "-m", "threadfix", "repair", "--min-age", "0", "--busy-timeout", "0.2",
                               "--journal-dir", str(tmp_path / "j"), str(folder)],
                              capture_output=True, text=True, timeout=60, check=False)
    finally:
        holder.communicate("release\n", timeout=30)
    # app.db (no table of threads) and notes.db (not SQLite) are input errors, which beat the lock's 75 (issue #22)
    assert done.returncode == ExitCode.ERROR, done.stderr
    assert f"threadfix: error: {db}: the database stayed locked by another process" in done.stderr
    assert dump(db) == before
    assert len(read(folder / "sub" / "agents.sqlite", "agents")["c"]) == 4
    assert len(json.loads((folder / "chats.jsonl").read_text())["input"]) == 4


def test_a_database_locked_when_the_walk_opens_it_is_opened_again_on_retry(folder: Path, tmp_path: Path,
                                                                           monkeypatch) -> None:
    """A lock at open is retried as a lock mid-read is: the retry opens the database again, not the old error."""
    db = folder / "items.db"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), "BEGIN EXCLUSIVE"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "holding"
    waits = []

    class AppLetsGo:
        """threadfix's clock, but the app commits while threadfix waits to retry."""

        def __getattr__(self, name: str):
            return getattr(time, name)

        def sleep(self, seconds: float) -> None:
            waits.append(seconds)
            if len(waits) == 1:
                holder.communicate("release\n", timeout=30)
            time.sleep(seconds)

    monkeypatch.setattr(batch, "time", AppLetsGo())
    try:
        run = RepairRun([str(folder)], RunOptions(store=StoreOptions(writable=True, busy_timeout=0.2), min_age=0,
                                                  journal_dir=tmp_path / "j"))
        outcomes = list(run.outcomes())
    finally:
        if holder.returncode is None:
            holder.communicate("release\n", timeout=30)
    assert len(waits) == 1
    assert [o.address for o in outcomes if getattr(o, "status", "") == "repaired" and "items.db" in o.address]
    assert not [o for o in outcomes if isinstance(o, Problem) and o.where == str(db)]
    assert len(read(db, "item")["a"]) == 4
