"""Reading never changes the database, never creates one, and never holds a read open between chunks."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sqlite.dbs import create, healthy, journal_mode, run_cli, stuck
from threadfix.batch import Problem, Scanned, scan
from threadfix.errors import ConfigError, StoreError
from threadfix.stores import StoreOptions
from threadfix.stores import sqlite as sqlite_store
from threadfix.stores import table as table_store
from threadfix.stores.base import ReadProblem
from threadfix.stores.sqlite_layout import connect

LAYOUTS = ["thread", "item", "agents"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cli(*args: str) -> subprocess.CompletedProcess:
    """A real process, for the few tests about what a user's shell sees."""
    return subprocess.run([sys.executable, "-m", "threadfix", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("mode", ["delete", "wal"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_lint_report_and_dry_runs_leave_the_file_and_journal_mode_alone(tmp_path: Path, layout: str, mode: str, capsys) -> None:
    db = create(tmp_path / "c.db", layout, {"a": stuck(1), "b": healthy(2)}, journal_mode=mode)
    before = sha(db)
    for args in (["lint", str(db)], ["report", str(db)], ["repair", "--dry-run", str(db)], ["repair", "--check", str(db)],
                 ["repair", "--diff", str(db)]):
        code, _, err = run_cli(args, capsys)
        assert code in (0, 1), (args, err)
        assert "threadfix: error" not in err
    assert sha(db) == before
    assert journal_mode(db) == mode
    assert not (tmp_path / "c.db-journal").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("c.db")) == []


def test_lint_finds_the_dangling_call_in_each_layout(tmp_path: Path, capsys) -> None:
    for layout in LAYOUTS:
        db = create(tmp_path / f"{layout}.db", layout, {"a": stuck(1), "b": healthy(2)})
        code, out, err = run_cli(["lint", str(db)], capsys)
        assert code == 1, err
        column = {"thread": "conversations:id", "item": "items:thread_id", "agents": "agent_messages:session_id"}[layout]
        assert f"{db}:{column}=a#1: TF001 call stuck_1 (search) has no output" in out
        assert "=b#" not in out


def test_a_mistyped_path_creates_nothing(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "chats.db"
    for args in (["lint", str(missing)], ["repair", "--min-age", "0", str(missing)], ["report", str(missing)]):
        code, _, err = run_cli(args, capsys)
        assert code == 2
        assert err.startswith(f"threadfix: error: {missing}: no such file")
    for write in (False, True):
        with pytest.raises(StoreError, match="cannot open the database"):
            connect(missing, write=write, timeout=0.1)
    assert list(tmp_path.iterdir()) == []


def test_scan_reads_every_layout_read_only(tmp_path: Path) -> None:
    for layout in LAYOUTS:
        db = create(tmp_path / f"{layout}.db", layout, {"a": stuck(1), "b": healthy(2)})
        results = list(scan([str(db)]))
        assert all(isinstance(r, Scanned) for r in results), results
        assert {r.thread.address.key.rsplit("=", 1)[1]: [i["app_id"] for i in r.thread.items] for r in results} == {
            "a": [i["app_id"] for i in stuck(1)], "b": [i["app_id"] for i in healthy(2)]}
        assert [len(r.index.calls) for r in results] == [1, 1]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_no_read_is_held_open_between_threads(tmp_path: Path, layout: str, monkeypatch) -> None:
    """In rollback-journal mode an open read blocks the app's commit: the app must commit at once."""
    monkeypatch.setattr(table_store, "THREAD_CHUNK", 2)
    monkeypatch.setattr(table_store, "ID_CHUNK", 3)
    monkeypatch.setattr(table_store, "STREAM_CHUNK", 4)
    db = create(tmp_path / "c.db", layout, {f"t{i}": stuck(i) for i in range(7)}, journal_mode="delete")
    app = sqlite3.connect(db, timeout=0, isolation_level=None)
    seen = []
    for result in scan([str(db)]):
        seen.append(result.thread.address.key)
        app.execute("BEGIN IMMEDIATE")
        app.execute("CREATE TABLE IF NOT EXISTS app_log (n)")
        app.execute("INSERT INTO app_log VALUES (1)")
        app.execute("COMMIT")  # fails with "database is locked" if threadfix still held a read
    app.close()
    assert len(seen) == len(set(seen)) == 7


def test_threads_span_chunk_boundaries_in_row_order(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(table_store, "THREAD_CHUNK", 3)
    db = create(tmp_path / "c.db", "thread", {f"t{i:02}": stuck(i) for i in range(10)})
    keys = [r.thread.address.key for r in scan([str(db)])]
    assert keys == [f"conversations:id=t{i:02}" for i in range(10)]


def test_items_of_interleaved_threads_come_out_in_order(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(table_store, "ID_CHUNK", 2)
    monkeypatch.setattr(table_store, "IN_CHUNK", 2)
    db = tmp_path / "i.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE msgs (thread_id TEXT, seq INTEGER, body TEXT)")  # no index, implicit row id
    rows = [("b", 30, 3), ("a", 2, 2), ("b", 10, 1), ("a", 1, 1), ("b", 20, 2), ("a", 3, 3)]
    for thread, seq, n in rows:
        conn.execute("INSERT INTO msgs VALUES (?, ?, ?)", (thread, seq, json.dumps({"role": "user", "content": f"{thread}{n}"})))
    conn.commit()
    conn.close()
    results = list(scan([str(db)], StoreOptions(table="msgs", thread_column="thread_id", item_column="body", order_column="seq")))
    assert [(r.thread.address.key, [i["content"] for i in r.thread.items]) for r in results] == [
        ("msgs:thread_id=b", ["b1", "b2", "b3"]), ("msgs:thread_id=a", ["a1", "a2", "a3"])]


@pytest.mark.parametrize("index, path", [
    ("CREATE INDEX by_thread_seq ON msgs (thread_id, seq)", "stream_indexed"),
    ("CREATE INDEX by_thread ON msgs (thread_id)", "thread_indexed"),
    ("", "neither"),
])
@pytest.mark.parametrize("chunk", [1, 2, 4, 1000])
def test_every_read_path_gives_whole_threads_in_order(tmp_path: Path, monkeypatch, index: str, path: str, chunk: int) -> None:
    monkeypatch.setattr(table_store, "STREAM_CHUNK", chunk)
    monkeypatch.setattr(table_store, "ID_CHUNK", chunk)
    monkeypatch.setattr(table_store, "IN_CHUNK", chunk)
    db = tmp_path / "i.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE msgs (thread_id TEXT, seq INTEGER, body TEXT)")
    if index:
        conn.execute(index)
    sizes = {"a": 3, "b": 1, "c": 5, "d": 2}
    rows = [(t, seq, json.dumps({"role": "user", "content": f"{t}{seq}"})) for t, n in sizes.items() for seq in range(n)]
    for row in sorted(rows, key=lambda r: (r[1], r[0]), reverse=True):  # interleaved, against the order
        conn.execute("INSERT INTO msgs VALUES (?, ?, ?)", row)
    conn.execute("INSERT INTO msgs VALUES (NULL, 0, '{}')")
    conn.commit()
    conn.close()
    store = sqlite_store.open_sqlite_store(db, StoreOptions(table="msgs", thread_column="thread_id", item_column="body",
                                                            order_column="seq"))
    assert [name for name in ("stream_indexed", "thread_indexed") if getattr(store.layout, name)][:1] == (
        [path] if path != "neither" else [])
    threads = {}
    problems = []
    for thread in store.threads():
        if isinstance(thread, ReadProblem):
            problems.append(thread.message)
        else:
            threads[thread.address.key] = [item["content"] for item in thread.items]
    assert threads == {f"msgs:thread_id={t}": [f"{t}{seq}" for seq in range(n)] for t, n in sizes.items()}
    assert problems == ['1 row has no "thread_id" and belongs to no thread']


def test_unreadable_rows_are_reported_and_the_rest_is_read(tmp_path: Path) -> None:
    db = create(tmp_path / "c.db", "thread", {"a": stuck(1), "b": stuck(2), "c": stuck(3), "d": stuck(4)})
    conn = sqlite3.connect(db)
    conn.execute("UPDATE conversations SET messages = '{not json' WHERE id = 'a'")
    conn.execute("UPDATE conversations SET messages = '{\"title\": \"x\"}' WHERE id = 'b'")
    conn.execute("UPDATE conversations SET messages = 42 WHERE id = 'c'")
    conn.commit()
    conn.close()
    results = list(scan([str(db)]))
    problems = [(p.where, p.message.split(" (")[0]) for p in results if isinstance(p, Problem)]
    assert problems == [(f"{db}:conversations:id=a", "not valid JSON"), (f"{db}:conversations:id=b", "holds no thread"),
                        (f"{db}:conversations:id=c", "holds no thread")]  # TEXT affinity stored '42'
    assert [r.thread.address.key for r in results if isinstance(r, Scanned)] == ["conversations:id=d"]


def test_a_thread_with_an_unreadable_item_row_is_left_alone(tmp_path: Path) -> None:
    db = create(tmp_path / "i.db", "item", {"a": stuck(1), "b": stuck(2)})
    conn = sqlite3.connect(db)
    conn.execute("UPDATE items SET data = '[' WHERE thread_id = 'a' AND position = 1")
    conn.commit()
    conn.close()
    results = list(scan([str(db)]))
    assert [p.where for p in results if isinstance(p, Problem)] == [f"{db}:items:rowid=2", f"{db}:items:thread_id=a"]
    assert [r.thread.address.key for r in results if isinstance(r, Scanned)] == ["items:thread_id=b"]


def test_time_columns_give_the_thread_age(tmp_path: Path, capsys) -> None:
    db = create(tmp_path / "c.db", "thread", {"old": stuck(1), "new": stuck(2)})
    conn = sqlite3.connect(db)
    conn.execute("UPDATE conversations SET updated_at = '2030-01-01T00:00:00Z' WHERE id = 'new'")
    conn.commit()
    conn.close()
    code, out, err = run_cli(["repair", "--dry-run", str(db)], capsys)
    assert code == 0, err
    assert f"{db}:conversations:id=new: skipped: changed" in out
    assert f"{db}:conversations:id=old#1: add error output for stuck_1" in out


def test_item_rows_time_columns_give_the_thread_age(tmp_path: Path, capsys) -> None:
    db = create(tmp_path / "a.db", "agents", {"old": stuck(1), "new": stuck(2)})
    conn = sqlite3.connect(db)
    conn.execute("UPDATE agent_messages SET created_at = datetime('now') WHERE id = (SELECT max(id) FROM agent_messages "
                 "WHERE session_id = 'new')")
    conn.commit()
    conn.close()
    code, out, err = run_cli(["repair", "--dry-run", str(db)], capsys)
    assert code == 0, err
    assert "agent_messages:session_id=new: skipped: changed" in out
    assert "agent_messages:session_id=old#1: add error output for stuck_1" in out


def test_min_age_zero_looks_up_no_thread_time(tmp_path: Path, capsys, monkeypatch) -> None:
    """At --min-age 0 every thread is old enough: an item table is not asked each stuck thread's time."""
    db = create(tmp_path / "a.db", "agents", {"a": stuck(1), "b": stuck(2)})
    asked: list[object] = []
    real = table_store.ItemRowStore._thread_time
    monkeypatch.setattr(table_store.ItemRowStore, "_thread_time", lambda self, thread: asked.append(1) or real(self, thread))
    code, out, err = run_cli(["repair", "--dry-run", "--min-age", "0", str(db)], capsys)
    assert code == 0, err
    assert "session_id=a#1: add error output for stuck_1" in out and "session_id=b#1: add error output for stuck_2" in out
    assert not asked
    run_cli(["repair", "--dry-run", "--min-age", "1s", str(db)], capsys)
    assert len(asked) == 2


def test_without_time_columns_the_database_file_time_counts(tmp_path: Path, capsys) -> None:
    db = tmp_path / "c.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE chats (id INTEGER PRIMARY KEY, messages TEXT)")
    conn.execute("INSERT INTO chats (messages) VALUES (?)", (json.dumps(stuck(1)),))
    conn.commit()
    conn.close()
    _, out, _ = run_cli(["repair", "--dry-run", str(db)], capsys)  # just written: under the default --min-age
    assert "chats:id=1: skipped: changed" in out, out


def test_description_goes_to_stderr_only(tmp_path: Path) -> None:
    db = create(tmp_path / "c.db", "agents", {"a": healthy(1)})
    done = cli("repair", "--dry-run", str(db))
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr.splitlines()[0] == (f'threadfix: {db}: reading openai-agents SQLiteSession: table "agent_messages", '
                                           'one item per row in "message_data", threads by "session_id", ordered by row '
                                           "id, dialect openai-responses")


@pytest.mark.parametrize("command", [["lint"], ["report"], ["repair", "--dry-run", "--min-age", "0"]])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_each_database_layout_is_said_once_whatever_jobs(tmp_path: Path, command: list[str], jobs: str) -> None:
    # two tables too small to be cut into parts: with --jobs each is one worker's, and workers never say it (#22)
    agents = create(tmp_path / "a.db", "agents", {"a": stuck(1)})
    thread = create(tmp_path / "b.db", "thread", {"a": stuck(1)})
    done = cli("--jobs", jobs, *command, str(agents), str(thread))
    said = [line for line in done.stderr.splitlines() if ": reading " in line]
    assert said == [f'threadfix: {agents}: reading openai-agents SQLiteSession: table "agent_messages", one item per '
                    'row in "message_data", threads by "session_id", ordered by row id, dialect openai-responses',
                    f'threadfix: {thread}: reading table "conversations", one thread per row in "messages" (keyed by id)'], \
        done.stderr


def test_layout_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    db = create(tmp_path / "c.db", "thread", {"a": stuck(1)})
    done = cli("lint", "--table", 'x"; DROP TABLE conversations;--', str(db))
    assert done.returncode == 2
    assert done.stderr.startswith(f'threadfix: error: {db}: no table named "x\\"; DROP') or \
        done.stderr.startswith(f'threadfix: error: {db}: no table named "x"; DROP')
    assert len(done.stderr.strip().splitlines()) <= 2  # the error, and at most the summary line
    assert "Traceback" not in done.stderr


def test_store_options_reach_lint_and_report(tmp_path: Path, capsys) -> None:
    db = create(tmp_path / "c.db", "item", {"a": stuck(1)})
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE other (id INTEGER PRIMARY KEY, thread_id TEXT, position INTEGER, data TEXT)")
    conn.execute("INSERT INTO other (thread_id, position, data) VALUES ('z', 0, ?)", (json.dumps({"role": "user", "content": "x"}),))
    conn.commit()
    conn.close()
    assert "more than one place" in run_cli(["lint", str(db)], capsys)[2]
    code, out, _ = run_cli(["lint", "--table", "items", str(db)], capsys)
    assert code == 1 and "items:thread_id=a#1: TF001" in out
    code, out, _ = run_cli(["report", "--table", "items", str(db)], capsys)
    assert code == 0 and "dangling_calls\t1" in out
    with pytest.raises(ConfigError):
        list(sqlite_store.open_sqlite_store(db, StoreOptions()).threads())


def test_the_shipped_sample_is_a_stuck_openai_agents_session(capsys) -> None:
    sample = Path(__file__).parents[2] / "sample_threads" / "sqlite" / "agents-session.db"
    before = sha(sample)
    code, out, err = run_cli(["repair", "--dry-run", str(sample)], capsys)
    assert code == 0, err
    assert out == (f"{sample}:agent_messages:session_id=support-4711#1: add error output for call_kT3p9 (lookup_order): "
                   "aborted, item 2 is a later user message\n")
    assert "would repair 1 of 2 threads" in err
    assert sha(sample) == before
    assert sorted(p.name for p in sample.parent.iterdir()) == ["agents-session.db"]  # rollback journal: no -wal/-shm
