"""Schema, table and column names a database may hold (``%``, quotes, spaces, unicode) are only ever quoted as
identifiers or bound as values: lint, ``--jobs`` cuts, repair (a new row placed between two times, its thread's
parent row locked, jsonb written in its own form) and undo all work on them, in one process and in several."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("psycopg", reason="the postgres extra is not installed: pip install 'threadfix[postgres]'")

import psycopg

from tests.postgres.tables import healthy, stuck
from tests.sqlite.dbs import outputs_per_call, run_cli
from threadfix import dialects

RESPONSES = dialects.get("openai-responses")
SCHEMAS = ['sch%s "q" é', "public"]
TABLE = 'chat%s "log" ü 50%'
PARENT = 'par%ent "p"'
#: one row per item: key, thread, item (jsonb), a time that orders a thread's rows
KEY, THREAD, ITEM, AT = "i d%", 'thread%id "t"', 'da"ta %s', "at %"
#: one row per thread: key, thread (jsonb)
ID, JSON = "k%ey 'x'", 'mess"ages %'
THREADS = {"a%s": stuck(1), "b": healthy(2), "c'\"%": stuck(3), "d ü": stuck(4)}


def ident(name: str) -> str:
    """The name quoted as an identifier, for statements run without parameters."""
    return '"' + name.replace('"', '""') + '"'


def table(schema: str) -> str:
    return f"{ident(schema)}.{ident(TABLE)}"


def run(conn: psycopg.Connection, statement: str, params: tuple | None = None) -> None:
    """``statement`` as it is, or with ``params`` bound at its ``?`` (its ``%`` doubled first, as psycopg reads them)."""
    if params is None:
        conn.execute(statement)
    else:
        conn.execute(statement.replace("%", "%%").replace("?", "%s"), params)


def create(url: str, layout: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        if schema != "public":
            run(conn, f"CREATE SCHEMA {ident(schema)}")
        if layout == "thread":
            run(conn, f"CREATE TABLE {table(schema)} ({ident(ID)} text PRIMARY KEY, {ident(JSON)} jsonb NOT NULL)")
            for key, items in THREADS.items():
                run(conn, f"INSERT INTO {table(schema)} VALUES (?, ?)", (key, json.dumps(items)))
            return
        parent = f"{ident(schema)}.{ident(PARENT)}"
        run(conn, f"CREATE TABLE {parent} ({ident('k%ey')} text PRIMARY KEY)")
        run(conn, f"CREATE TABLE {table(schema)} ({ident(KEY)} bigserial PRIMARY KEY, {ident(THREAD)} text NOT NULL "
                  f"REFERENCES {parent}, {ident(ITEM)} jsonb NOT NULL, {ident(AT)} timestamptz NOT NULL)")
        run(conn, f"CREATE INDEX ON {table(schema)} ({ident(THREAD)}, {ident(AT)})")
        for n, (key, items) in enumerate(THREADS.items()):
            run(conn, f"INSERT INTO {parent} VALUES (?)", (key,))
            for position, item in enumerate(items):
                run(conn, f"INSERT INTO {table(schema)} ({ident(THREAD)}, {ident(ITEM)}, {ident(AT)}) VALUES "
                          "(?, ?, timestamptz '2020-01-01' + ? * interval '1 minute')",
                    (key, json.dumps(item), 10 * n + position))


def stored(url: str, layout: str, schema: str) -> dict[str, list]:
    """Every thread as the app reads it back: key -> items, in order."""
    with psycopg.connect(url, autocommit=True) as conn:
        if layout == "thread":
            return dict(conn.execute(f"SELECT {ident(ID)}, {ident(JSON)} FROM {table(schema)}").fetchall())
        found: dict[str, list] = {}
        for key, item in conn.execute(f"SELECT {ident(THREAD)}, {ident(ITEM)} FROM {table(schema)} ORDER BY 1, {ident(AT)}"):
            found.setdefault(key, []).append(item)
        return found


def everything(url: str, schema: str) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(f"SELECT * FROM {table(schema)} ORDER BY 1").fetchall()


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("layout", ["thread", "item"])
def test_hostile_names_are_linted_cut_repaired_and_undone(db, tmp_path, capsys, monkeypatch, layout, schema):
    import threadfix.parallel

    monkeypatch.setattr(threadfix.parallel, "MIN_SHARD_BYTES", 1)  # (so that --jobs cuts this small table)
    create(db, layout, schema)
    columns = (["--json-column", JSON, "--id-column", ID] if layout == "thread" else
               ["--thread-column", THREAD, "--item-column", ITEM, "--order-column", AT])
    named = ["--table", TABLE if schema == "public" else f"{schema}.{TABLE}", *columns, "--min-age", "0"]
    before, table_rows = stored(db, layout, schema), everything(db, schema)

    one = run_cli(["--jobs", "1", "lint", db, *named], capsys)
    assert one[0] == 1 and one[1].count("TF001") == 3, one
    assert run_cli(["--jobs", "3", "lint", db, *named], capsys) == one  # (cut in key ranges: key_cuts)
    dry = run_cli(["--jobs", "2", "repair", "--dry-run", db, *named], capsys)
    assert dry[0] == 0 and "3 of 4 threads" in dry[2], dry

    code, out, err = run_cli(["repair", db, *named, "--journal-dir", str(tmp_path / "j")], capsys)
    assert code == 0 and "repaired 3 of 4 threads" in err, err
    after = stored(db, layout, schema)
    assert after["b"] == before["b"]
    for key in ("a%s", "c'\"%", "d ü"):
        assert RESPONSES.check(after[key]) == [] and set(outputs_per_call(after[key]).values()) == {1}, key
        assert [i for i in after[key] if i.get("type") != "function_call_output"] == before[key]
        if layout == "item":  # the output was placed between the call and the next message, by time
            assert [i["type"] for i in after[key]][1:3] == ["function_call", "function_call_output"]
    assert run_cli(["lint", db, *named], capsys)[0] == 0

    (journal,) = (tmp_path / "j").iterdir()
    code, out, err = run_cli(["undo", str(journal)], capsys)
    assert code == 0 and "refused" not in err, err
    assert everything(db, schema) == table_rows


def test_the_store_reads_its_table_from_the_catalog_once_when_it_opens(db, tmp_path, capsys, monkeypatch):
    """Placing a new row between two times, writing jsonb in its own form and locking a thread's parent row use
    the column types and parent the store read when it opened: nothing reads the catalog again while the repair
    plans and writes (inside its write transactions)."""
    from threadfix.stores import postgres, postgres_layout

    schema = SCHEMAS[0]
    create(db, "item", schema)
    opened = []
    real_open, real_table, real_parent = (postgres.open_postgres_store, postgres_layout.Schema.table,
                                          postgres_layout.Schema.parent_of)

    def open_then_watch(*args, **kwargs):
        store = real_open(*args, **kwargs)
        opened.append(store)
        return store

    def read(real):
        def reading(self, *args):
            assert not opened, f"the catalog was read again after the store opened ({real.__name__}{args})"
            return real(self, *args)
        return reading

    monkeypatch.setattr(postgres, "open_postgres_store", open_then_watch)
    monkeypatch.setattr(postgres_layout.Schema, "table", read(real_table))
    monkeypatch.setattr(postgres_layout.Schema, "parent_of", read(real_parent))
    code, out, err = run_cli(["repair", db, "--table", f"{schema}.{TABLE}", "--thread-column", THREAD, "--item-column",
                              ITEM, "--order-column", AT, "--min-age", "0", "--journal-dir", str(tmp_path)], capsys)
    assert code == 0 and "repaired 3 of 4 threads" in err, err
    assert len(opened) == 1
