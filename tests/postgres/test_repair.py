"""Repair of a live PostgreSQL database through its URL: both layouts and the openai-agents preset, undo,
a second run, every untouched column kept, read-only sessions, --jobs."""

from __future__ import annotations

import json
from msgspec.structs import replace
from pathlib import Path

import pytest

pytest.importorskip("psycopg", reason="the postgres extra is not installed: pip install 'threadfix[postgres]'")

from tests.postgres.tables import agents_items, agents_session, create, healthy, rows, stuck, threads
from tests.sqlite.dbs import outputs_per_call, run_cli
from threadfix import dialects

RESPONSES = dialects.get("openai-responses")


def journal_of(folder: Path) -> Path:
    (found,) = sorted(folder.iterdir())
    return found


@pytest.mark.parametrize(("layout", "json_type"), [("thread", "jsonb"), ("thread", "json"), ("thread", "text"),
                                                   ("item", "jsonb"), ("item", "text"), ("nokey", "json")])
def test_repair_answers_every_stuck_call_keeps_the_rest_and_undo_restores(db, tmp_path, capsys, layout, json_type):
    create(db, layout, {"a": stuck(1), "b": healthy(2), "c": stuck(3), "d'; DROP TABLE x; --": stuck(4)},
           json_type=json_type)
    shape = "thread" if layout == "thread" else "item"
    before, table = threads(db, shape), rows(db, "SELECT * FROM conversations ORDER BY id")
    code, out, err = run_cli(["lint", db], capsys)
    assert code == 1 and out.count("TF001") == 3

    code, out, err = run_cli(["repair", db, "--journal-dir", str(tmp_path / "j")], capsys)
    assert code == 0, err
    assert "repaired 3 of 4 threads" in err
    after = threads(db, shape)
    assert after["b"] == before["b"]
    for key in ("a", "c", "d'; DROP TABLE x; --"):
        assert RESPONSES.check(after[key]) == [], key
        assert [i for i in after[key] if i.get("type") != "function_call_output"] == before[key]
        assert set(outputs_per_call(after[key]).values()) == {1}
    now = {row[0]: row for row in rows(db, "SELECT * FROM conversations ORDER BY id")}
    if shape == "thread":  # every other column of every row, and every column of the healthy row, as they were
        for row in table:
            assert now[row[0]][:2] == row[:2] and now[row[0]][3:] == row[3:]
        assert now["b"] == next(r for r in table if r[0] == "b")
    else:  # rows before the new output keep every column; the healthy thread's rows are untouched
        kept = [r for r in table if r[1] == "b" or r[2] < 2]
        assert all(now[r[0]] == r for r in kept)
        new = [r for r in now.values() if r[0] not in {t[0] for t in table}]
        assert new and all(r[0] > max(t[0] for t in table) for r in new)  # ids from the sequence

    assert run_cli(["lint", db], capsys)[0] == 0
    code, out, err = run_cli(["repair", db, "--journal-dir", str(tmp_path / "j2")], capsys)
    assert code == 0 and "repaired 0 of 4 threads" in err and not (tmp_path / "j2").exists()

    code, out, err = run_cli(["undo", str(journal_of(tmp_path / "j"))], capsys)
    assert code == 0, err
    assert threads(db, shape) == before
    if shape == "thread":
        assert rows(db, "SELECT * FROM conversations ORDER BY id") == table
    else:
        assert rows(db, "SELECT * FROM conversations ORDER BY id") == table


def test_jsonb_is_compared_by_value_and_a_second_run_changes_nothing(db, tmp_path, capsys):
    create(db, "thread", {"a": stuck(1)}, json_type="jsonb")
    assert run_cli(["repair", db, "--journal-dir", str(tmp_path)], capsys)[0] == 0
    (stored,) = rows(db, "SELECT messages::text FROM conversations")
    journal = [json.loads(line) for line in journal_of(tmp_path).read_text().splitlines()[1:]]
    import hashlib
    assert journal[0]["after_sha256"] == hashlib.sha256(stored[0].encode()).hexdigest()
    code, out, err = run_cli(["repair", db, "--check"], capsys)
    assert code == 0, err


def test_the_sdk_session_preset_is_repaired_and_read_back_by_the_sdk(db, tmp_path, capsys):
    agents_session(db, {"s1": stuck(1), "s2": healthy(2), "s3": stuck(3)})
    created = rows(db, "SELECT id, created_at FROM agent_messages ORDER BY id")
    code, out, err = run_cli(["repair", db, "--min-age", "0", "--journal-dir", str(tmp_path / "j")], capsys)
    assert code == 0, err
    assert "openai-agents SQLAlchemySession" in err and "repaired 2 of 3 threads" in err
    for key in ("s1", "s3"):
        items = agents_items(db, key)
        assert RESPONSES.check(items) == [], items
        assert [i["type"] for i in items] == ["message", "function_call", "function_call_output", "message"]
    assert agents_items(db, "s2") == healthy(2)
    now = dict(rows(db, "SELECT id, created_at FROM agent_messages"))
    assert sum(1 for key, when in created if now.get(key) == when) >= len(created) - 2  # only the moved rows went
    code, out, err = run_cli(["repair", db, "--min-age", "0", "--journal-dir", str(tmp_path / "j2")], capsys)
    assert code == 0 and "repaired 0 of 3" in err
    assert run_cli(["undo", str(journal_of(tmp_path / "j"))], capsys)[0] == 0
    assert agents_items(db, "s1") == stuck(1)
    assert rows(db, "SELECT id, created_at FROM agent_messages ORDER BY id") == created


def test_a_read_only_role_lints_reports_and_dry_runs_but_cannot_repair(cluster, db, tmp_path, capsys):
    create(db, "item", {"a": stuck(1), "b": healthy(2)})
    with __import__("psycopg").connect(db, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS reader")
        conn.execute("CREATE ROLE reader LOGIN")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    url = db.replace("postgres@", "reader@", 1)
    before = rows(db, "SELECT * FROM conversations ORDER BY id")
    assert run_cli(["lint", url], capsys)[0] == 1
    code, out, err = run_cli(["report", url, "--format", "json"], capsys)
    assert code in (0, 1), err
    assert json.loads(out)
    code, out, err = run_cli(["repair", url, "--dry-run"], capsys)
    assert code == 0 and "1 of 2 threads" in err, err
    assert run_cli(["repair", url, "--diff"], capsys)[0] in (0, 1)
    code, out, err = run_cli(["repair", url, "--journal-dir", str(tmp_path)], capsys)
    assert code == 2 and "permission denied" in err, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert errors and all("permission denied" in line for line in errors) and "Traceback" not in err
    assert rows(db, "SELECT * FROM conversations ORDER BY id") == before


def test_jobs_cut_by_key_ranges_give_what_one_connection_gives(db, capsys):
    create(db, "thread", {f"t{i:03}": stuck(i) if i % 4 else healthy(i) for i in range(60)})
    one = run_cli(["--jobs", "1", "lint", db], capsys)
    four = run_cli(["--jobs", "4", "lint", db], capsys)
    assert one == four and one[1].count("TF001") == 45
    create(db, "item", {f"t{i:03}": stuck(i) if i % 4 else healthy(i) for i in range(60)}, table="items")
    one = run_cli(["--jobs", "1", "lint", db, "--table", "items"], capsys)
    three = run_cli(["--jobs", "3", "lint", db, "--table", "items"], capsys)
    assert one == three and one[1].count("TF001") == 45
    code, out, err = run_cli(["--jobs", "2", "repair", db, "--table", "items", "--dry-run"], capsys)
    assert code == 0 and "45 of 60 threads" in err, err


@pytest.mark.parametrize("layout", ["thread", "item", "keyed", "nokey"])
def test_keyset_chunks_and_key_ranges_read_every_thread_once_in_key_order(db, monkeypatch, layout):
    """Integer keys over many small chunks (the keyset must follow the key's own order, not its text's)."""
    from threadfix.stores import StoreOptions, postgres, table

    monkeypatch.setattr(table, "THREAD_CHUNK", 7)
    monkeypatch.setattr(table, "STREAM_CHUNK", 5)
    monkeypatch.setattr(table, "ID_CHUNK", 11)
    with __import__("psycopg").connect(db, autocommit=True) as conn:
        if layout == "thread":
            conn.execute("CREATE TABLE chats (id integer PRIMARY KEY, messages jsonb)")
            conn.cursor().executemany("INSERT INTO chats VALUES (%s, %s)", [(i, json.dumps(stuck(i))) for i in range(1, 58)])
        else:
            conn.execute("CREATE TABLE chats (id serial PRIMARY KEY, chat integer, data json, note text)")
            if layout == "item":  # lists a thread's rows in order: streamed (--jobs: key ranges)
                conn.execute("CREATE INDEX ON chats (chat)")
            if layout == "keyed":  # only finds a thread: read by key (--jobs: runs of keys)
                conn.execute("CREATE INDEX ON chats (chat, note)")
            conn.cursor().executemany("INSERT INTO chats (chat, data) VALUES (%s, %s)",
                             [(i, json.dumps(item)) for k in range(3) for i in range(1, 58) for item in [stuck(i)[k]]])
    options = StoreOptions(table="chats", **({"json_column": "messages"} if layout == "thread" else
                                            {"thread_column": "chat", "item_column": "data"}))
    seen = {}
    for jobs in (1, 3):
        store = postgres.open_postgres_store(db, replace(options, jobs=jobs))
        if jobs > 1 and layout != "nokey":
            assert len(store._parts(jobs)) == 3
        found = [t for t in store.threads()]
        seen[jobs] = [(t.address.key, len(t.items)) for t in found]
    wanted = [(f"chats:{'id' if layout == 'thread' else 'chat'}={i}", 3) for i in range(1, 58)]
    assert seen[1] == seen[3] == wanted


def test_reading_holds_no_transaction_or_lock_between_chunks_in_a_read_only_session(db, monkeypatch):
    """Paused between two chunks, a read leaves the table free for an ACCESS EXCLUSIVE lock (which waits on
    any open transaction that read it), and its session refuses writes and has a statement_timeout."""
    from threadfix.stores import StoreOptions, postgres, table

    monkeypatch.setattr(table, "THREAD_CHUNK", 2)
    create(db, "thread", {f"t{i}": stuck(i) for i in range(6)})
    store = postgres.open_postgres_store(db, StoreOptions())
    reading = store.threads()
    next(reading)
    conn = store._reader()
    assert conn.execute("SHOW transaction_read_only").fetchone() == ("on",)
    assert conn.execute("SHOW statement_timeout").fetchone() == ("1min",)
    with pytest.raises(__import__("psycopg").errors.ReadOnlySqlTransaction):
        conn.execute("DELETE FROM conversations")
    with __import__("psycopg").connect(db) as other:
        other.execute("SET lock_timeout = '200ms'")
        other.execute("LOCK TABLE conversations IN ACCESS EXCLUSIVE MODE")  # would time out behind a held read
        other.rollback()
    assert len([next(reading) for _ in range(5)]) == 5
