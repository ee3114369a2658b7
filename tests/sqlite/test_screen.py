"""Repair's screened read of one-row-per-item tables (``threads_to_repair``) against a full read.

Every thread the screen settles must be one repair finds healthy on a full read, and everything else (the
suspects, read problems, in order) must come out exactly as a full read gives it.
"""

from __future__ import annotations

import json
import random
import sqlite3
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from tests.screening import same_as_a_full_read
from threadfix import dialects
from threadfix.model import Thread
from threadfix.stores import StoreOptions, open_stores, sqlite, table
from threadfix.stores import sqlite_screen as screen
from threadfix.stores.base import ReadProblem, Settled
from threadfix.stores.settle import (
    CALL,
    IS_CALL,
    IS_OUTPUT,
    OUTPUT,
    answered_in_turn,
    pairs_settle,
    plain_types,
)

RESPONSES = dialects.get("openai-responses")

# --------------------------------------------------------------------------- the C-level check vs the dialect's

ID = st.one_of(st.sampled_from(["a", "b", "c", "call_1", "", "{x", "[y", "é"]), st.integers(0, 2), st.none())


@given(st.lists(st.tuples(st.sampled_from([CALL, OUTPUT]), ID), max_size=12))
def test_pairs_settle_only_what_quick_healthy_accepts(pairs: list[tuple[str, Any]]) -> None:
    items = [{"type": kind, "call_id": call_id} for kind, call_id in pairs]
    codes = tuple(IS_CALL if kind == CALL else IS_OUTPUT for kind, _ in pairs)
    ids = tuple(c.encode() if isinstance(c, str) else c for _, c in pairs)
    settles = pairs_settle(codes, ids)
    quick = RESPONSES.quick_healthy(items)
    if settles:
        assert quick
    if quick and all(isinstance(c, str) and c[:1] not in ("", "{", "[") for _, c in pairs):
        assert settles  # the screen gives up only on ids it cannot tell from SQLite's JSON text
    if answered_in_turn(codes, ids):
        assert settles


def test_a_row_of_another_type_or_unsound_never_settles() -> None:
    assert pairs_settle((IS_CALL, IS_OUTPUT), (b"a", b"a"))
    assert not pairs_settle((IS_CALL, None), (b"a", b"a"))
    assert not answered_in_turn((None, IS_OUTPUT), (b"a", b"a"))


def test_plain_types_are_the_dialects_types_that_neither_call_nor_answer() -> None:
    from threadfix.dialects import openai_responses

    plain = set(plain_types())
    assert "message" in plain and "reasoning" in plain
    assert not plain & openai_responses._PAIRING
    assert plain <= openai_responses._RESPONSES_ONLY


# --------------------------------------------------------------------------- stores


SCHEMAS = {
    # the benchmark's shape: order by a column, an index on (thread, order)
    "position": ("CREATE TABLE items (id INTEGER PRIMARY KEY, thread_id TEXT, position INTEGER, data TEXT)",
                 "CREATE INDEX by_thread ON items (thread_id, position)",
                 StoreOptions(table="items", thread_column="thread_id", item_column="data", order_column="position")),
    # openai-agents: ordered by the row id, an index on (session, id)
    "rowid": ("CREATE TABLE msgs (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, message_data TEXT)",
              "CREATE INDEX by_session ON msgs (session_id, id)",
              StoreOptions(table="msgs", thread_column="session_id", item_column="message_data")),
    # an index that only finds a thread
    "keyed": ("CREATE TABLE items (id INTEGER PRIMARY KEY, thread_id TEXT, position INTEGER, data TEXT)",
              "CREATE INDEX by_thread ON items (thread_id)",
              StoreOptions(table="items", thread_column="thread_id", item_column="data", order_column="position")),
}


def _call(call_id: Any, kind: str = CALL) -> dict[str, Any]:
    return {"type": kind, "call_id": call_id, "name": "shell", "arguments": "{\"cmd\": \"ls\"}"}


def _output(call_id: Any, kind: str = OUTPUT) -> dict[str, Any]:
    return {"type": kind, "call_id": call_id, "output": "ok\n\"quoted\" ü"}


MESSAGE = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
REASONING = {"type": "reasoning", "summary": []}


def _thread_rows(rng: random.Random, n: int, odd: bool) -> list[Any]:
    """One thread's rows (JSON values, or raw text/bytes/None for rows that are not JSON items)."""
    rows: list[Any] = [MESSAGE]
    for step in range(rng.randint(0, 5)):
        rows.append(REASONING if rng.random() < 0.5 else MESSAGE)
        ids = [f"call_{n}_{step}_{k}" for k in range(rng.choice([1, 1, 1, 2, 3]))]
        rows.extend(_call(i) for i in ids)
        answered = list(ids)
        rng.shuffle(answered)
        for i in answered:
            roll = rng.random()
            if roll < 0.06:
                continue  # dangling
            rows.append(_output(i))
            if roll > 0.97:
                rows.append(_output(i))  # answered twice
    if odd:
        rows.insert(rng.randint(0, len(rows)), rng.choice([
            None, "[1, 2]", "5", "\"text\"", b'{"type": "message"}', {"type": 7},
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            _call(5), _call({"id": 1}), _output(f"call_{n}_0_0"), _call(f"call_{n}_0_0"), _call(""), _call("{x"),
            {"type": "custom_tool_call", "call_id": "z", "name": "x", "input": ""},
            {"type": "web_search_call", "id": "ws", "status": "completed"},
            {"type": "mcp_call", "id": "m"}, {"type": "message", "role": "user", "content": "x" * 50},
        ]))
    return rows


def _encode(row: Any, rng: random.Random) -> Any:
    if row is None or isinstance(row, (str, bytes)):
        return row
    return json.dumps(row, ensure_ascii=rng.random() < 0.5)


def build(path: Path, schema: str, seed: int, threads: int = 30, odd: float = 0.2, disorder: bool = False) -> Path:
    """A store of ``threads`` interleaved threads, some stuck, some with rows no screen can vouch for."""
    rng = random.Random(seed)
    create, index, _ = SCHEMAS[schema]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(create)
    conn.execute(index)
    queues = {f"t{n:03}": _thread_rows(rng, n, rng.random() < odd) for n in range(threads)}
    positions = {key: 0 for key in queues}
    conn.execute("BEGIN")
    while queues:
        key = rng.choice(sorted(queues))
        for _ in range(rng.randint(1, 3)):
            if not queues[key]:
                break
            row = queues[key].pop(0)
            position = positions[key]
            positions[key] += 1
            if disorder and rng.random() < 0.1:
                position = rng.choice([position - 3, position, None, "x"])
            if schema == "rowid":
                conn.execute("INSERT INTO msgs (session_id, message_data) VALUES (?, ?)", (key, _encode(row, rng)))
            else:
                conn.execute("INSERT INTO items (thread_id, data, position) VALUES (?, ?, ?)", (key, _encode(row, rng), position))
        if not queues[key]:
            del queues[key]
    if rng.random() < 0.3:
        table, thread, item = ("items", "thread_id", "data") if schema != "rowid" else ("msgs", "session_id", "message_data")
        orphan = rng.choice([MESSAGE, _call("call_0_0_0"), _output("call_1_0_0"), {"type": 7}])  # rows of no thread
        conn.execute(f"INSERT INTO {table} ({thread}, {item}) VALUES (NULL, ?)", (json.dumps(orphan),))
    conn.execute("COMMIT")
    conn.close()
    return path


def _store(path: Path, schema: str, **options: Any) -> Any:
    from threadfix.parallel import spread_for_store

    return next(open_stores(str(path), replace(SCHEMAS[schema][2], spread=spread_for_store, **options)))


def assert_same_as_a_full_read(path: Path, schema: str, **options: Any) -> int:
    return same_as_a_full_read(lambda: _store(path, schema, **options))


class InParts:
    """A store whose repair read is the parts it cuts itself into for --jobs workers, each part read as its
    worker reads it, put back in the order repair replays them: the settled count, the parts, the problems."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def threads_to_repair(self) -> list[Any]:
        from threadfix import parallel

        parts = self.store.parts_to_repair()
        assert parts is not None
        assert [key for shard in parts.shards for key in shard.part.keys] == sorted(
            key for shard in parts.shards for key in shard.part.keys)  # in key order, each once
        read = [parts.settled] if parts.settled.count else []
        for shard in parts.shards:
            for store in parallel.shard_stores(shard, replace(self.store.options, jobs=1)):
                read.extend(store.threads_to_repair())
        return read + parts.problems

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


@pytest.mark.parametrize("schema", sorted(SCHEMAS))
@pytest.mark.parametrize("seed", range(6))
def test_the_screen_settles_only_healthy_threads_and_reads_the_rest_as_a_full_read_does(tmp_path: Path, schema: str,
                                                                                       seed: int) -> None:
    path = build(tmp_path / "s.db", schema, seed)
    assert assert_same_as_a_full_read(path, schema) > 0


@pytest.mark.parametrize("schema", ["position", "keyed"])
def test_rows_out_of_order_or_with_odd_orders(tmp_path: Path, schema: str) -> None:
    for seed in range(4):
        path = build(tmp_path / f"d{seed}.db", schema, seed, disorder=True)
        assert_same_as_a_full_read(path, schema)


ANY_STORE = {"seed": st.integers(0, 10**6), "odd": st.sampled_from([0.0, 0.3, 1.0]),
             "span": st.sampled_from([1, 3, 17, 8192]), "schema": st.sampled_from(sorted(SCHEMAS)),
             "jobs": st.sampled_from([1, 1, 2, 3])}


# each example with jobs > 1 starts worker processes: a quarter of the profile's examples by default, all of them
# in the campaign below
@settings(max_examples=max(30, settings().max_examples // 4))
@given(**ANY_STORE)
def test_any_store_any_span_and_any_number_of_processes(tmp_path_factory, seed: int, odd: float, span: int,
                                                        schema: str, jobs: int) -> None:
    _any_store(tmp_path_factory, seed, odd, span, schema, jobs)


@pytest.mark.slow
@given(**ANY_STORE)
def test_any_store_any_span_and_any_number_of_processes_campaign(tmp_path_factory, seed: int, odd: float, span: int,
                                                                 schema: str, jobs: int) -> None:
    _any_store(tmp_path_factory, seed, odd, span, schema, jobs)


def _any_store(tmp_path_factory, seed: int, odd: float, span: int, schema: str, jobs: int) -> None:
    path = build(tmp_path_factory.mktemp("h") / "s.db", schema, seed, threads=12, odd=odd, disorder=seed % 3 == 0)
    original = screen.SPAN, screen.PART_MIN_ROWS, table.KEYS_PER_PART
    screen.SPAN, screen.PART_MIN_ROWS, table.KEYS_PER_PART = span, 1, 1  # parts of a few rows (keys), in workers
    try:
        assert_same_as_a_full_read(path, schema, jobs=jobs)
        if jobs > 1 and _store(path, schema, jobs=jobs).parts_to_repair() is not None:
            same_as_a_full_read(lambda: InParts(_store(path, schema, jobs=jobs)))
    finally:
        screen.SPAN, screen.PART_MIN_ROWS, table.KEYS_PER_PART = original


@pytest.mark.parametrize("schema", sorted(SCHEMAS))
@pytest.mark.parametrize("seed", range(3))
def test_the_parts_for_workers_read_what_a_full_read_does(tmp_path: Path, monkeypatch, schema: str, seed: int) -> None:
    """With --jobs, the suspects' keys are cut into parts that workers read and plan: together, in order, they
    are what a full read gives (the others settled)."""
    monkeypatch.setattr(table, "KEYS_PER_PART", 2)
    path = build(tmp_path / "s.db", schema, seed, odd=0.5)
    assert _store(path, schema, jobs=1).parts_to_repair() is None  # one process: nothing to cut
    parts = _store(path, schema, jobs=2).parts_to_repair()
    assert parts is not None and parts.shards and all(1 <= len(shard.part.keys) <= 2 for shard in parts.shards)
    assert same_as_a_full_read(lambda: InParts(_store(path, schema, jobs=2))) > 0


def test_a_table_the_screen_sends_to_a_full_read_is_not_screened_twice(tmp_path: Path, monkeypatch) -> None:
    """When the screen finds a table better read in full, --jobs reads it in full here without walking it again."""
    path = build(tmp_path / "s.db", "position", 3, threads=40, odd=0.6)
    monkeypatch.setattr(screen, "SAMPLE", 2)  # more than half suspect: not Responses items, read in full
    walks = []
    walk = screen.walk_ends
    monkeypatch.setattr(screen, "walk_ends", lambda *a: walks.append(1) or walk(*a))
    store = _store(path, "position", jobs=2)
    assert store.parts_to_repair() is None and len(walks) == 1
    assert [repr(x) for x in store.threads_to_repair()] == [repr(x) for x in _store(path, "position").threads()]
    assert len(walks) == 1


def _write_rows(path: Path, rows: list[tuple[str, int, Any]]) -> Path:
    create, index, _ = SCHEMAS["position"]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(create)
    conn.execute(index)
    conn.executemany("INSERT INTO items (thread_id, position, data) VALUES (?, ?, ?)",
                     [(key, position, json.dumps(item)) for key, position, item in rows])
    conn.close()
    return path


#: row ids 1-4 and 5-8 in two parts: "a" calls in one and is answered in the other, "b" leaves a call unanswered
#: in the first and answers its next in the second, "c" has only a message in the first
ACROSS_PARTS = [("a", 0, MESSAGE), ("a", 1, _call("a1")), ("b", 0, _call("b1")), ("c", 0, MESSAGE),
                ("a", 2, _output("a1")), ("b", 1, _call("b2")), ("b", 2, _output("b2")), ("c", 1, _call("c1")),
                ("c", 2, _output("c1"))]


@pytest.mark.parametrize("span", [1, 8192])
def test_threads_across_parts_in_several_processes(tmp_path: Path, monkeypatch, span: int) -> None:
    """A thread with call or output rows in two parts is read in full (so "b"'s unanswered call is found); one
    with all of them in the later part is decided there ("c" settles). The parts ran in workers."""
    from threadfix import parallel

    path = _write_rows(tmp_path / "s.db", ACROSS_PARTS)
    monkeypatch.setattr(screen, "SPAN", span)
    monkeypatch.setattr(screen, "PART_MIN_ROWS", 4)
    spread = parallel.spread
    workers = []
    monkeypatch.setattr(parallel, "spread", lambda *a, **k: workers.append(a[1]) or spread(*a, **k))
    screened = list(_store(path, "position", jobs=2).threads_to_repair())
    assert workers == [[(1, 4), (5, 9)]]
    assert [x.address.key.rsplit("=", 1)[1] if isinstance(x, Thread) else x.count for x in screened] == ["a", "b", 1]
    assert assert_same_as_a_full_read(path, "position", jobs=2) == 1


def test_a_worker_that_fails_leaves_the_pass_to_this_process(tmp_path: Path, monkeypatch) -> None:
    """A part that fails in a worker (here a lock) does not fail the read: the pass is run here, and an error
    it meets is reported as the read's own."""
    import os

    path = build(tmp_path / "s.db", "position", 1)
    parent = os.getpid()
    run = screen.Screen.run

    def locked_in_workers(self, low):
        if os.getpid() != parent:
            raise sqlite3.OperationalError("database is locked")
        return run(self, low)

    monkeypatch.setattr(screen.Screen, "run", locked_in_workers)
    monkeypatch.setattr(screen, "PART_MIN_ROWS", 1)
    assert assert_same_as_a_full_read(path, "position", jobs=2) > 0


def test_parts_cover_every_row_once() -> None:
    for low, high, jobs in [(1, 1, 2), (1, 100, 1), (1, 100, 3), (-5, 7, 4), (10, 10**6, 8)]:
        for least in (0, 1, 10, 1000):
            parts = screen.row_parts(low, high, jobs, least)
            assert parts[0][0] == low and parts[-1][1] == high
            assert all(b[0] == a[1] + 1 for a, b in pairwise(parts))
            assert 1 <= len(parts) <= jobs
            assert len(parts) == 1 or min(last - first + 1 for first, last in parts) >= least


def test_stricter_sql_for_newer_sqlite_gives_the_same(tmp_path: Path, monkeypatch) -> None:
    """The guards a SQLite that reads JSON5 or binary JSON needs (json_valid, typeof) keep the same answers."""
    probe = screen.probe_json

    def strict(conn: sqlite3.Connection) -> screen.JsonSql:
        found = probe(conn)
        return screen.JsonSql(found.extract, validate=True, text_only=True)

    monkeypatch.setattr(screen, "probe_json", strict)
    for seed in range(3):
        path = build(tmp_path / f"v{seed}.db", "position", seed, odd=0.5)
        assert assert_same_as_a_full_read(path, "position") > 0


def test_an_item_over_the_size_limit_is_never_settled(tmp_path: Path) -> None:
    path = build(tmp_path / "s.db", "position", 1, odd=0.0)
    conn = sqlite3.connect(path, isolation_level=None)
    key = conn.execute("SELECT thread_id FROM items ORDER BY id LIMIT 1").fetchone()[0]
    conn.execute("INSERT INTO items (thread_id, position, data) VALUES (?, 999, ?)",
                 (key, json.dumps({"type": "message", "role": "user", "content": "x" * 3 * 2**20})))
    conn.close()
    store = _store(path, "position", max_doc_bytes=2**20)
    screened = [x for x in store.threads_to_repair() if not isinstance(x, Settled)]
    assert any(isinstance(x, ReadProblem) and "limit" in x.message for x in screened)
    assert_same_as_a_full_read(path, "position", max_doc_bytes=2**20)


@pytest.mark.parametrize("over", [-1, 0, 1])
def test_the_size_limit_holds_to_the_byte_and_counts_bytes_not_characters(tmp_path: Path, over: int) -> None:
    """SQLite refuses a value over its length limit as it loads it: a row one byte over the limit sends the
    table to a full read (which names it), a row at the limit is settled as a full read finds it healthy."""
    path = build(tmp_path / "s.db", "position", 3, odd=0.0)
    limit = 2**20
    conn = sqlite3.connect(path, isolation_level=None)
    key = conn.execute("SELECT thread_id FROM items ORDER BY id LIMIT 1").fetchone()[0]
    head, tail = '{"type": "message", "role": "user", "content": "', '"}'
    room = limit + over - len(head) - len(tail)
    row = head + "é" * (room // 2) + "x" * (room % 2) + tail  # é: two bytes in UTF-8
    assert len(row.encode()) == limit + over and len(row) < limit
    conn.execute("INSERT INTO items (thread_id, position, data) VALUES (?, 999, ?)", (key, row))
    conn.close()
    screened = list(_store(path, "position", max_doc_bytes=limit).threads_to_repair())
    assert any(isinstance(x, Settled) for x in screened) == (over <= 0)
    assert any(isinstance(x, ReadProblem) and "limit" in x.message for x in screened) == (over > 0)
    assert_same_as_a_full_read(path, "position", max_doc_bytes=limit)


def test_a_row_sqlite_cannot_parse_sends_the_table_to_a_full_read(tmp_path: Path) -> None:
    path = build(tmp_path / "s.db", "position", 2, odd=0.0)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("INSERT INTO items (thread_id, position, data) VALUES ('t000', 99, '{broken')")
    conn.close()
    screened = list(_store(path, "position").threads_to_repair())
    assert not any(isinstance(x, Settled) for x in screened)
    assert [repr(x) for x in screened] == [repr(x) for x in _store(path, "position").threads()]


@pytest.mark.parametrize("cap", ["MAX_HELD", "MAX_SUSPECTS", "SAMPLE"])
def test_past_a_cap_the_table_is_read_in_full(tmp_path: Path, monkeypatch, cap: str) -> None:
    path = build(tmp_path / "s.db", "position", 3, threads=40, odd=0.6)
    monkeypatch.setattr(screen, "SPAN", 5)  # threads left open between spans
    monkeypatch.setattr(screen, cap, 2)
    screened = list(_store(path, "position").threads_to_repair())
    assert not any(isinstance(x, Settled) for x in screened)
    assert [repr(x) for x in screened] == [repr(x) for x in _store(path, "position").threads()]


def test_a_thread_written_while_the_screen_starts_is_read_in_full(tmp_path: Path, monkeypatch) -> None:
    """Rows are screened up to the last row id when the pass began; a thread the app wrote to since (the walk
    finds a later last row) is read in full, so repair sees what the app wrote."""
    path = build(tmp_path / "s.db", "rowid", 4, odd=0.0)
    walk = screen.walk_ends

    def write_then_walk(conn: sqlite3.Connection, layout: Any) -> Any:
        app = sqlite3.connect(path, isolation_level=None)
        app.execute("INSERT INTO msgs (session_id, message_data) VALUES ('t000', ?)", (json.dumps(_call("late")),))
        app.execute("INSERT INTO msgs (session_id, message_data) VALUES ('new', ?)", (json.dumps(_call("new")),))
        app.close()
        return walk(conn, layout)

    monkeypatch.setattr(screen, "walk_ends", write_then_walk)
    threads = {x.address.key: x for x in _store(path, "rowid").threads_to_repair() if isinstance(x, Thread)}
    assert threads["msgs:session_id=t000"].items[-1]["call_id"] == "late"
    assert threads["msgs:session_id=new"].items[-1]["call_id"] == "new"


@pytest.mark.parametrize("span", [1, 2, 8192])
def test_a_row_written_later_with_an_earlier_order_is_found(tmp_path: Path, monkeypatch, span: int) -> None:
    """The walk takes a thread's last row in its order; a row written after it with an earlier order (here an
    unanswered call) is met after that, and the thread is read in full rather than settled."""
    path = tmp_path / "s.db"
    create, index, _ = SCHEMAS["position"]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(create)
    conn.execute(index)
    rows = [("a", 0, MESSAGE), ("b", 0, MESSAGE), ("a", 1, _call("a1")), ("a", 2, _output("a1")),
            ("b", 1, _call("b1")), ("b", 2, _output("b1")), ("a", -1, _call("late"))]
    conn.executemany("INSERT INTO items (thread_id, position, data) VALUES (?, ?, ?)",
                     [(key, position, json.dumps(item)) for key, position, item in rows])
    conn.close()
    monkeypatch.setattr(screen, "SPAN", span)
    screened = list(_store(path, "position").threads_to_repair())
    stuck = [x for x in screened if isinstance(x, Thread)]
    assert [x.items[0]["call_id"] for x in stuck] == ["late"]
    assert_same_as_a_full_read(path, "position")


@pytest.mark.parametrize("enabled", [True, False])
def test_the_pass_leaves_the_cycle_collector_as_it_found_it(tmp_path: Path, monkeypatch, enabled: bool) -> None:
    """The pass pauses the collector; a batch job's own choice stands afterwards, also when the pass fails."""
    import gc

    path = build(tmp_path / "s.db", "position", 2)
    seen = []
    decide = screen.Screen._decide
    monkeypatch.setattr(screen.Screen, "_decide", lambda self, span: (seen.append(gc.isenabled()), decide(self, span)))
    (gc.enable if enabled else gc.disable)()
    try:
        assert any(isinstance(x, Settled) for x in _store(path, "position").threads_to_repair())
        assert gc.isenabled() is enabled
        monkeypatch.setattr(screen.Screen, "_decide", lambda self, span: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            list(_store(path, "position").threads_to_repair())
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
    assert seen and not any(seen)


@pytest.mark.parametrize("span", [1, 7, 8192])
def test_every_held_row_is_let_go_by_the_end_of_the_pass(tmp_path: Path, monkeypatch, span: int) -> None:
    """What the pass holds is counted exactly (its cap reads that count): nothing is left at the end."""
    path = build(tmp_path / "s.db", "position", 8, threads=40, odd=0.3, disorder=True)
    monkeypatch.setattr(screen, "SPAN", span)
    passes = []
    run = screen.Screen.run
    monkeypatch.setattr(screen.Screen, "run", lambda self, low: (passes.append(self), run(self, low))[1])
    assert any(isinstance(x, Settled) for x in _store(path, "position").threads_to_repair())
    assert [(p.held, p.open, p.ending) for p in passes] == [(0, {}, {})]


def test_settled_counts_and_suspects_keep_the_key_order(tmp_path: Path) -> None:
    path = build(tmp_path / "s.db", "position", 5, threads=50)
    screened = list(_store(path, "position").threads_to_repair())
    keys = [x.address.key for x in screened if isinstance(x, Thread)]
    assert keys == sorted(keys)
    assert not any(isinstance(a, Settled) and isinstance(b, Settled) for a, b in pairwise(screened))


def _read_in_full(path: Path, schema: str, **options: Any) -> bool:
    screened = [repr(x) for x in _store(path, schema, **options).threads_to_repair()]
    return screened == [repr(x) for x in _store(path, schema, **options).threads()]


def test_another_dialect_no_thread_index_or_a_collation_is_read_in_full(tmp_path: Path) -> None:
    path = build(tmp_path / "s.db", "position", 6)
    assert _read_in_full(path, "position", dialect="openai-chat")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP INDEX by_thread")  # no index finds a thread by key
    conn.close()
    assert _read_in_full(path, "position")
    collated = tmp_path / "c.db"
    conn = sqlite3.connect(collated, isolation_level=None)
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, thread_id TEXT COLLATE NOCASE, position INTEGER, data TEXT)")
    conn.execute("CREATE INDEX by_thread ON items (thread_id, position)")
    for key in ("a", "A"):  # one thread to SQLite, two to Python
        conn.execute("INSERT INTO items (thread_id, position, data) VALUES (?, 0, ?)", (key, json.dumps(_call(key))))
        conn.execute("INSERT INTO items (thread_id, position, data) VALUES (?, 1, ?)", (key, json.dumps(_output("a"))))
    conn.close()
    assert _read_in_full(collated, "position")
