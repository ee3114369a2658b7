"""``--jobs`` cuts of a SQLite database: the database opened and its schema read once for the cut, and the parts
of a table of one thread per row read, in keyset chunks, every row once and in row id order."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sqlite.dbs import create, healthy, stuck
from threadfix.stores import StoreOptions, framework_presets, sqlite, sqlite_layout, table


@pytest.mark.parametrize("layout", ["thread", "item"])
def test_a_cut_opens_the_database_and_reads_its_schema_once(tmp_path: Path, monkeypatch, layout: str) -> None:
    db = create(tmp_path / "c.db", layout, {f"t{i:02}": stuck(i) if i % 2 else healthy(i) for i in range(12)})
    asked: list[str] = []
    real_tables, real_schema = framework_presets._tables, sqlite_layout.Schema.__init__
    monkeypatch.setattr(framework_presets, "_tables", lambda conn: asked.append("tables") or real_tables(conn))
    monkeypatch.setattr(sqlite_layout.Schema, "__init__", lambda self, conn: asked.append("schema") or real_schema(self, conn))
    parts = sqlite.MEDIUM.cut(str(db), 3, StoreOptions(), by_key=True)
    assert parts is not None and len(parts) == 3
    assert asked == ["tables", "schema"]  # (is it a framework's, then the table's layout: once each)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gaps=st.lists(st.integers(1, 5), min_size=1, max_size=40), parts=st.integers(2, 6), chunk=st.integers(1, 4))
def test_row_id_parts_read_every_row_once_in_order(tmp_path_factory, monkeypatch, gaps, parts, chunk) -> None:
    monkeypatch.setattr(table, "THREAD_CHUNK", chunk)
    db = tmp_path_factory.mktemp("cut") / "t.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE conversations (id TEXT PRIMARY KEY, messages TEXT)")
    rowid = 0
    for n, gap in enumerate(gaps):
        rowid += gap
        conn.execute("INSERT INTO conversations (rowid, id, messages) VALUES (?, ?, ?)", (rowid, f"t{n}", json.dumps(healthy(n))))
    conn.commit()
    conn.close()
    whole = [t.address.key for t in sqlite.open_sqlite_store(db, StoreOptions()).threads()]
    assert whole == [f"conversations:id=t{n}" for n in range(len(gaps))]
    cut = sqlite.MEDIUM.cut(str(db), parts, StoreOptions(), by_key=False) or [None]
    read = []
    for part in cut:
        store = sqlite.open_sqlite_store(db, StoreOptions())
        if part is not None:
            store.restrict(part)
        read.extend(t.address.key for t in store.threads())
    assert read == whole
