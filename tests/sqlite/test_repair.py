"""Repair writes only what it planned, keeps every other row's data, and undo puts it all back."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.sqlite.dbs import OLD, create, dump, healthy, integrity, outputs_per_call, query, read, repair, run_cli, stuck
from threadfix import dialects
from threadfix.batch import Problem
from threadfix.errors import ExitCode
from threadfix.stores import StoreOptions
from threadfix.stores.sqlite import SQLiteWriter, open_sqlite_store
from threadfix.undo import undo

RESPONSES = dialects.get("openai-responses")


def without_sequence(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith('INSERT INTO "sqlite_sequence"')]


@pytest.mark.parametrize("layout", ["thread", "item", "agents"])
def test_repair_answers_the_call_and_undo_restores_every_byte(tmp_path: Path, layout: str) -> None:
    db = create(tmp_path / "c.db", layout, {"a": stuck(1), "b": healthy(2), "c": stuck(3)})
    before_dump, before = dump(db), read(db, layout)
    run, outcomes = repair(db, tmp_path / "j")
    assert [o.status for o in outcomes] == ["repaired", "repaired"]  # healthy threads are counted, not yielded
    after = read(db, layout)
    assert after["b"] == before["b"]
    for key in ("a", "c"):
        assert RESPONSES.check(after[key]) == []
        assert [i for i in after[key] if i.get("type") != "function_call_output"] == before[key]
        assert after[key][2]["type"] == "function_call_output"
    assert integrity(db) == "ok"
    assert [o.status for o in undo(run.result.journal)] == ["restored", "restored"]
    # every row as it was, with its row id; AUTOINCREMENT's counter stays ahead (ids are never reused)
    assert without_sequence(dump(db)) == without_sequence(before_dump)
    assert [o.status for o in undo(run.result.journal)] == ["already_original", "already_original"]


def test_one_row_per_thread_changes_only_the_json_column_and_keeps_its_type(tmp_path: Path) -> None:
    db = create(tmp_path / "c.db", "thread", {"a": stuck(1)})
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, history BLOB, note TEXT)")
    conn.execute("INSERT INTO blobs (history, note) VALUES (?, 'keep')", (json.dumps(stuck(2), indent=2).encode(),))
    conn.commit()
    conn.close()
    repair(db, tmp_path / "j", table="conversations")
    assert query(db, "SELECT id, title, updated_at, typeof(messages) FROM conversations") == [("a", "title a", OLD, "text")]
    repair(db, tmp_path / "j", table="blobs")
    [(kind, note, raw)] = query(db, "SELECT typeof(history), note, history FROM blobs")
    assert (kind, note) == ("blob", "keep")
    assert raw.startswith(b'[\n  {\n    "type": "message"'), "the original indentation was not kept"
    assert len(json.loads(raw)) == 4


def test_items_after_the_call_make_room_by_as_little_as_possible(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, thread_id TEXT, position INTEGER, data TEXT, note TEXT, "
                  "UNIQUE (thread_id, position))")
    a, b = [*stuck(1), {"type": "message", "role": "user", "content": "hello??"}], stuck(2)
    for thread, positions, items in (("a", (0, 1, 2, 3), a), ("b", (0, 10, 20), b)):
        for position, item in zip(positions, items):
            conn.execute("INSERT INTO items (thread_id, position, data, note) VALUES (?, ?, ?, ?)",
                         (thread, position, json.dumps(item), f"{thread}{position}"))
    conn.commit()
    conn.close()
    repair(db, tmp_path / "j")
    got = query(db, "SELECT id, thread_id, position, note, json_extract(data, '$.type') FROM items ORDER BY thread_id, position")
    assert got == [
        (1, "a", 0, "a0", "message"), (2, "a", 1, "a1", "function_call"), (8, "a", 2, None, "function_call_output"),
        (3, "a", 3, "a2", "message"), (4, "a", 4, "a3", "message"),  # moved up one each, past UNIQUE (thread, position)
        (5, "b", 0, "b0", "message"), (6, "b", 10, "b10", "function_call"), (9, "b", 11, None, "function_call_output"),
        (7, "b", 20, "b20", "message"),  # a gap was free: nothing moved
    ]


def test_a_global_sequence_column_places_the_tail_past_its_end(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE log (thread TEXT, seq INTEGER UNIQUE, item TEXT)")
    for seq, (thread, item) in enumerate([("a", stuck(1)[0]), ("b", healthy(1)[0]), ("a", stuck(1)[1]), ("a", stuck(1)[2]),
                                          ("b", healthy(1)[1]), ("b", healthy(1)[2])]):
        conn.execute("INSERT INTO log VALUES (?, ?, ?)", (thread, seq, json.dumps(item)))
    conn.commit()
    conn.close()
    run, outcomes = repair(db, tmp_path / "j", table="log", thread_column="thread", item_column="item", order_column="seq")
    assert [o.status for o in outcomes] == ["repaired"]
    assert query(db, "SELECT seq, json_extract(item, '$.type') FROM log WHERE thread = 'a' ORDER BY seq") == [
        (0, "message"), (2, "function_call"), (6, "function_call_output"), (7, "message")]
    assert query(db, "SELECT seq FROM log WHERE thread = 'b' ORDER BY seq") == [(1,), (4,), (5,)]


def test_rows_ordered_by_text_are_left_alone_when_a_row_must_be_placed(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE msgs (chat_id TEXT, ts TEXT, body TEXT)")
    for n, item in enumerate(stuck(1)):
        conn.execute("INSERT INTO msgs VALUES ('a', ?, ?)", (f"2020-01-01T00:00:0{n}", json.dumps(item)))
    conn.commit()
    conn.close()
    before = dump(db)
    run, outcomes = repair(db, tmp_path / "j", table="msgs", thread_column="chat_id", item_column="body", order_column="ts")
    assert [(o.status, o.message) for o in outcomes] == [
        ("left_alone", 'left alone: items are ordered by "ts", which does not hold integers, so a new item cannot be placed')]
    assert run.result.exit_code() == ExitCode.ERROR  # a thread that needs repair and could not get it
    assert dump(db) == before


def test_new_rows_take_their_neighbours_time_where_the_table_requires_one(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE msgs (chat_id TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL, note TEXT)")
    for n, item in enumerate(stuck(1)):
        conn.execute("INSERT INTO msgs VALUES ('a', ?, ?, 'n')", (json.dumps(item), f"2020-01-01 00:00:0{n}"))
    conn.commit()
    conn.close()
    run, outcomes = repair(db, tmp_path / "j")
    assert [o.status for o in outcomes] == ["repaired"]
    assert query(db, "SELECT json_extract(body, '$.type'), created_at, note FROM msgs ORDER BY rowid") == [
        ("message", "2020-01-01 00:00:00", "n"), ("function_call", "2020-01-01 00:00:01", "n"),
        ("function_call_output", "2020-01-01 00:00:01", None), ("message", "2020-01-01 00:00:02", "n")]


def test_rows_other_tables_point_at_are_not_moved(tmp_path: Path) -> None:
    db = create(tmp_path / "c.db", "agents", {"a": stuck(1), "b": stuck(2)[:2]})
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE feedback (message_id INTEGER REFERENCES agent_messages (id), stars INTEGER)")
    conn.commit()
    conn.close()
    run, outcomes = repair(db, tmp_path / "j")
    by_key = {o.address.rsplit("=", 1)[1]: o for o in outcomes}
    assert by_key["a"].status == "left_alone" and "referenced from \"feedback\"" in by_key["a"].message
    assert by_key["b"].status == "repaired"  # the call is last: the output is appended, nothing moves


def test_moved_and_orphan_outputs_per_item(tmp_path: Path) -> None:
    items = [
        {"type": "function_call_output", "call_id": "c1", "output": "early"},
        {"type": "message", "role": "user", "content": "go"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "zz", "output": "orphan"},
        {"type": "message", "role": "assistant", "content": "done"},
    ]
    db = create(tmp_path / "c.db", "item", {"a": items})
    before = dump(db)
    run, outcomes = repair(db, tmp_path / "j")
    assert [o.status for o in outcomes] == ["repaired"]
    after = read(db, "item")["a"]
    assert RESPONSES.check(after) == []
    assert [i.get("content", i.get("output")) for i in after][:4] == ["go", None, "early", after[3].get("content")]
    assert "orphan" in after[3]["content"][0]["text"]
    assert after[4] == items[4]
    assert integrity(db) == "ok"
    assert [o.status for o in undo(run.result.journal)] == ["restored"]
    assert dump(db) == before


def test_undo_refuses_a_thread_the_app_changed_since(tmp_path: Path, capsys) -> None:
    db = create(tmp_path / "c.db", "item", {"a": stuck(1), "b": stuck(2)})
    run, _ = repair(db, tmp_path / "j")
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO items (thread_id, position, data) VALUES ('a', 99, '{\"role\": \"user\", \"content\": \"new\"}')")
    conn.commit()
    conn.close()
    code, out, _ = run_cli(["undo", str(run.result.journal)], capsys)
    assert code == 1
    assert out.splitlines() == [
        f"{db}:items:thread_id=a: refused: it changed after the repair; restoring it would lose those changes",
        f"{db}:items:thread_id=b: restored"]
    assert read(db, "item")["a"][-1]["content"] == "new"


@pytest.mark.parametrize("layout", ["thread", "item", "agents"])
def test_a_thread_the_app_changes_before_the_write_is_left_alone(tmp_path: Path, layout: str, monkeypatch) -> None:
    db = create(tmp_path / "c.db", layout, {"a": stuck(1), "b": stuck(2)})
    commit = SQLiteWriter.commit

    def app_writes_first(self):
        conn = sqlite3.connect(db)
        if layout == "thread":
            conn.execute("UPDATE conversations SET messages = ? WHERE id = 'a'",
                         (json.dumps([*stuck(1), {"type": "message", "role": "user", "content": "app"}]),))
        elif layout == "item":
            conn.execute("INSERT INTO items (thread_id, position, data) VALUES ('a', 3, '{\"role\": \"user\", \"content\": \"app\"}')")
        else:
            conn.execute("INSERT INTO agent_messages (session_id, message_data) VALUES ('a', '{\"role\": \"user\", \"content\": \"app\"}')")
        conn.commit()
        conn.close()
        return commit(self)

    monkeypatch.setattr(SQLiteWriter, "commit", app_writes_first)
    run, outcomes = repair(db, tmp_path / "j")
    statuses = {o.address.rsplit("=", 1)[1]: (o.status, o.message) for o in outcomes if not isinstance(o, Problem)}
    assert statuses["a"] == ("left_alone", "changed while threadfix worked on it (the app wrote to it); left alone, run again")
    assert statuses["b"] == ("repaired", None)
    assert [(p.message, p.exit_code) for p in outcomes if isinstance(p, Problem)] == [
        ("1 thread changed while threadfix worked on them and were left alone; run again", ExitCode.BUSY)]
    assert run.result.exit_code() == ExitCode.BUSY and run.result.changed == 1
    after = read(db, layout)
    assert after["a"][-1]["content"] == "app" and outputs_per_call(after["a"]) == {"stuck_1": 0}
    assert outputs_per_call(after["b"]) == {"stuck_2": 1}


def test_output_elsewhere_copies_and_leaves_the_original_alone(tmp_path: Path, capsys) -> None:
    db = create(tmp_path / "c.db", "agents", {"a": stuck(1)}, journal_mode="wal")
    before = dump(db)
    copy = tmp_path / "fixed.db"
    code, out, err = run_cli(["repair", "--min-age", "0", "-o", str(copy), str(db)], capsys)
    assert code == 0, err
    assert dump(db) == before
    assert RESPONSES.check(read(copy, "agents")["a"]) == []
    assert "undo journal" not in err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".threadfix-")] == []


def test_cli_repair_prints_and_journals(tmp_path: Path, capsys) -> None:
    db = create(tmp_path / "c.db", "item", {"a": stuck(1)})
    code, out, err = run_cli(["repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 0
    assert out == f"{db}:items:thread_id=a#1: add error output for stuck_1 (search): aborted, item 2 is a later user message\n"
    assert "repaired 1 of 1 thread" in err and "undo journal:" in err
    code, out, err = run_cli(["repair", "--check", "--min-age", "0", str(db)], capsys)
    assert code == 0 and out == ""


# ---------------------------------------------------------------- the row writer, over generated plans

ORDERINGS = {
    "rowid": "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, tid TEXT, item TEXT, stamp TEXT)",
    "position": "CREATE TABLE t (tid TEXT, pos INTEGER, item TEXT, stamp TEXT, UNIQUE (tid, pos))",
    "sequence": "CREATE TABLE t (tid TEXT, pos INTEGER UNIQUE, item TEXT, stamp TEXT)",
}


def _item(n: int) -> dict:
    return {"type": "message", "role": "user", "content": f"m{n}"}


@settings(max_examples=max(30, settings().max_examples // 4))  # each example commits (fsyncs) twice
@given(ordering=st.sampled_from(sorted(ORDERINGS)), sizes=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       gaps=st.lists(st.sampled_from([1, 1, 1, 2, 3]), min_size=18, max_size=18), data=st.data())
def test_any_plan_is_written_exactly_and_keeps_other_rows(ordering: str, sizes: list[int], gaps: list[int], data) -> None:
    """Keep, drop, move and insert items anywhere: the rows read back as planned, kept rows keep their data."""
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "p.db"
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA synchronous = OFF")  # the fixture's durability is not under test
        conn.execute(ORDERINGS[ordering])
        position, n = 0, 0
        for k in range(max(sizes)):  # interleaved threads
            for t, size in enumerate(sizes):
                if k < size:
                    position += gaps[n % len(gaps)]
                    n += 1
                    if ordering == "rowid":
                        conn.execute("INSERT INTO t (tid, item, stamp) VALUES (?, ?, ?)", (f"t{t}", json.dumps(_item(n)), f"s{n}"))
                    else:
                        conn.execute("INSERT INTO t VALUES (?, ?, ?, ?)", (f"t{t}", position, json.dumps(_item(n)), f"s{n}"))
        conn.commit()
        conn.close()
        options = StoreOptions(table="t", thread_column="tid", item_column="item",
                               order_column=None if ordering == "rowid" else "pos", writable=True)
        store = open_sqlite_store(db, options)
        writer = store.writer()
        planned: dict[str, list[dict]] = {}
        stamps: dict[str, str] = {}
        for thread in store.threads():
            items = list(thread.items)
            order = data.draw(st.permutations(range(len(items))))
            keep = data.draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
            new_items: list = [items[i] for i in order if keep[i]]
            for _ in range(data.draw(st.integers(0, 2))):
                new_items.insert(data.draw(st.integers(0, len(new_items))), {"type": "message", "role": "assistant", "content": "new"})
            if not new_items:
                new_items = [{"type": "message", "role": "assistant", "content": "new"}]
            key = thread.address.key.rsplit("=", 1)[1]
            planned[key] = [dict(i) for i in new_items]
            for item, (stamp,) in zip(thread.items, query(db, f"SELECT stamp FROM t WHERE tid = '{key}' ORDER BY "
                                                          f"{'id' if ordering == 'rowid' else 'pos'}")):
                stamps[item["content"]] = stamp
            writer.replace(thread, store.encode(thread, new_items))
        writer.commit()
        assert writer.unwritten() == []
        conn = sqlite3.connect(db)
        got: dict[str, list[dict]] = {}
        sort = "id" if ordering == "rowid" else "pos"
        for tid, item, stamp in conn.execute(f"SELECT tid, item, stamp FROM t ORDER BY tid, {sort}"):
            value = json.loads(item)
            got.setdefault(tid, []).append(value)
            if value["content"] != "new":
                assert stamp == stamps[value["content"]], "a kept row lost its other columns"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
        assert got == planned
