"""Which table and columns hold the threads: detected from the schema when clear, else a useful error."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.sqlite.dbs import create, dump, read, stuck
from threadfix.batch import RepairRun, RunOptions
from threadfix.errors import ConfigError
from threadfix.stores import StoreOptions
from threadfix.stores.sqlite import open_sqlite_store

HOSTILE = ['x"; DROP TABLE t;--', "a]b", '"', "select", "naïve name", "' OR 1=1 --", "tab\tle"]


def store_for(db: Path, **options):
    return open_sqlite_store(db, StoreOptions(**options))


def layout_of(db: Path, **options):
    store = store_for(db, **options)
    return store.layout, store.description


# ---------------------------------------------------------------- detection


def test_openai_agents_preset_is_recognised_from_the_schema(tmp_path: Path) -> None:
    db = create(tmp_path / "a.db", "agents", {"s1": stuck(1)})
    layout, description = layout_of(db)
    assert (layout.kind, layout.table, layout.thread_column, layout.item_column) == ("item", "agent_messages", "session_id", "message_data")
    assert layout.order_kind == "rowid" and layout.order_column is None
    assert layout.dialect == "openai-responses" and layout.thread_indexed
    assert "openai-agents SQLiteSession" in description and "ordered by row id" in description


def test_preset_forces_the_responses_dialect_even_for_items_that_sniff_as_something_else(tmp_path: Path) -> None:
    db = create(tmp_path / "a.db", "agents", {"s1": [{"role": "user", "content": "hi"}]})
    [thread] = store_for(db).threads()
    assert thread.dialect == "openai-responses"
    assert next(iter(store_for(db, dialect="openai-chat").threads())).dialect == "openai-chat"


def test_one_row_per_thread_is_detected(tmp_path: Path) -> None:
    db = create(tmp_path / "t.db", "thread", {"a": stuck(1)})
    layout, description = layout_of(db)
    assert (layout.kind, layout.table, layout.json_column, layout.id_column) == ("thread", "conversations", "messages", "id")
    assert layout.time_columns == ("updated_at",)
    assert description == f'{db}: reading table "conversations", one thread per row in "messages" (keyed by id)'


def test_one_row_per_item_is_detected(tmp_path: Path) -> None:
    db = create(tmp_path / "i.db", "item", {"a": stuck(1)})
    layout, _ = layout_of(db)
    assert (layout.kind, layout.table, layout.item_column, layout.thread_column, layout.order_column) == (
        "item", "items", "data", "thread_id", "position")
    assert layout.order_kind == "integer" and not layout.order_unique and layout.thread_indexed


def test_given_options_are_not_described_as_detected(tmp_path: Path) -> None:
    db = create(tmp_path / "t.db", "thread", {"a": stuck(1)})
    assert layout_of(db, table="conversations", json_column="messages", id_column="id")[1] is None


def test_two_places_holding_threads_is_an_error_naming_both_and_the_options(tmp_path: Path) -> None:
    db = create(tmp_path / "t.db", "thread", {"a": stuck(1)})
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE archive (id INTEGER PRIMARY KEY, history TEXT)")
    conn.execute("INSERT INTO archive (history) VALUES (?)", (json.dumps({"messages": stuck(2)}),))
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError) as caught:
        store_for(db)
    message = caught.value.message
    assert 'table "conversations" column "messages"' in message and 'table "archive" column "history"' in message
    assert "--table and --json-column" in message
    assert layout_of(db, table="archive")[0].json_column == "history"


def test_no_thread_table_lists_the_tables_and_options(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE settings (key TEXT, value TEXT)")
    conn.execute("INSERT INTO settings VALUES ('theme', '\"dark\"')")
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError) as caught:
        store_for(db)
    assert 'tables: "settings" (key, value)' in caught.value.message
    assert "--thread-column and --item-column" in caught.value.message


def test_items_without_a_thread_column_ask_for_one(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, owner TEXT, payload TEXT)")
    conn.execute("INSERT INTO events (owner, payload) VALUES ('a', ?)", (json.dumps({"role": "user", "content": "x"}),))
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError, match='"payload" but no single thread column \\(pass --thread-column\\)'):
        store_for(db)
    layout, description = layout_of(db, thread_column="owner")
    assert (layout.table, layout.item_column, layout.order_kind) == ("events", "payload", "rowid")
    assert description is not None  # the item column was detected


@pytest.mark.parametrize("options, message", [
    ({"table": "nope"}, 'no table named "nope" (pass --table with one of: "conversations")'),
    ({"table": "conversations", "json_column": "nope"}, 'table "conversations" has no column "nope"; pass --json-column with one of: "id", "title", "messages", "updated_at"'),
    ({"json_column": "messages", "item_column": "messages"}, "cannot be combined"),
    ({"id_column": "id", "thread_column": "id"}, "--id-column applies to one row per thread"),
    ({"json_column": "nope"}, "no table has the columns given; pass --table"),
])
def test_wrong_options_are_refused_with_the_next_step(tmp_path: Path, options: dict, message: str) -> None:
    db = create(tmp_path / "t.db", "thread", {"a": stuck(1)})
    with pytest.raises(ConfigError) as caught:
        store_for(db, **options)
    assert message in caught.value.message


def test_without_rowid_tables_are_refused(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE chats (id TEXT PRIMARY KEY, messages TEXT) WITHOUT ROWID")
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError, match="WITHOUT ROWID"):
        store_for(db, table="chats", json_column="messages")


# ---------------------------------------------------------------- identifiers from the command line


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_given_as_options_change_nothing(tmp_path: Path, name: str) -> None:
    db = create(tmp_path / "t.db", "thread", {"a": stuck(1)})
    before = dump(db)
    for options in ({"table": name}, {"table": "conversations", "json_column": name}, {"json_column": name},
                    {"table": "conversations", "thread_column": name, "item_column": "messages"}):
        with pytest.raises(ConfigError):
            store_for(db, **options)
    assert dump(db) == before


@pytest.mark.parametrize("name", HOSTILE)
def test_tables_and_columns_with_hostile_names_are_read_and_repaired(tmp_path: Path, name: str) -> None:
    db = tmp_path / "h.db"
    q = '"' + name.replace('"', '""') + '"'
    column = name + "_json"
    qc = '"' + column.replace('"', '""') + '"'
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x)")
    conn.execute(f"CREATE TABLE {q} (id TEXT PRIMARY KEY, {qc} TEXT)")
    conn.execute(f"INSERT INTO {q} VALUES ('k', ?)", (json.dumps(stuck(1)),))
    conn.commit()
    conn.close()
    run = RepairRun([str(db)], RunOptions(store=StoreOptions(table=name, json_column=column, writable=True), min_age=0,
                                          journal_dir=tmp_path / "j"))
    outcomes = list(run.outcomes())
    assert [o.status for o in outcomes] == ["repaired"], outcomes
    conn = sqlite3.connect(db)
    assert sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")) == sorted(["t", name])
    [(raw,)] = conn.execute(f"SELECT {qc} FROM {q}").fetchall()
    conn.close()
    assert [item["type"] for item in json.loads(raw)] == ["message", "function_call", "function_call_output", "message"]


names = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), min_size=1, max_size=24)


@given(table=names, column=names, key=names)
def test_any_names_and_keys_round_trip(table: str, column: str, key: str) -> None:
    assume(not table.lower().startswith("sqlite_") and column.lower() != "id")
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "p.db"
        q = '"' + table.replace('"', '""') + '"'
        qc = '"' + column.replace('"', '""') + '"'
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA synchronous = OFF")  # a fixture: its durability is not under test
        conn.execute(f"CREATE TABLE {q} (id TEXT PRIMARY KEY, {qc} TEXT)")
        conn.execute(f"INSERT INTO {q} VALUES (?, ?)", (key, json.dumps(stuck(1))))
        conn.commit()
        conn.close()
        store = store_for(db, table=table, json_column=column)
        [thread] = store.threads()
        assert str(thread.address) == f"{db}:{table}:id={key}"
        assert read_keys(db, q) == [key]


def read_keys(db: Path, quoted_table: str) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute(f"SELECT id FROM {quoted_table}")]
    finally:
        conn.close()


def test_agents_read_helper_matches_the_store(tmp_path: Path) -> None:
    """The test helper's reading order is the one the preset uses (guards the other tests)."""
    db = create(tmp_path / "a.db", "agents", {"s1": stuck(1), "s2": stuck(2)})
    by_store = {thread.address.key.split("=", 1)[1]: thread.items for thread in store_for(db).threads()}
    assert by_store == read(db, "agents")
