"""The openai-agents preset, against databases written and read back by the real ``openai-agents`` package.

``SQLiteSession.add_items`` and ``get_items`` work offline; no model is called. A session is "stuck"
when a ``function_call`` was stored without its ``function_call_output`` (the process died while the
tool ran): the next ``Runner.run`` sends the history and the API refuses it. After repair, the history
the library reads back answers every call, and nothing the app wrote is lost.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

agents_memory = pytest.importorskip("agents.memory")

from tests.sqlite.dbs import App, integrity, outputs_per_call, repair, run_cli  # noqa: E402
from threadfix import dialects  # noqa: E402

RESPONSES = dialects.get("openai-responses")


def stuck_history(n: int) -> list[dict]:
    return [
        {"role": "user", "content": f"What is the weather in Paris? ({n})"},
        {"type": "function_call", "call_id": f"call_{n}", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}",
         "id": f"fc_{n}", "status": "completed"},
        {"role": "user", "content": "Hello? Are you still there?"},
        {"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
         "content": [{"type": "output_text", "text": "Sorry, here I am.", "annotations": []}]},
    ]


def session_items(db: Path, session_id: str) -> list[dict]:
    session = agents_memory.SQLiteSession(session_id, db)
    try:
        return asyncio.run(session.get_items())
    finally:
        session.close()


def add(db: Path, session_id: str, items: list[dict]) -> None:
    session = agents_memory.SQLiteSession(session_id, db)
    try:
        asyncio.run(session.add_items(items))
    finally:
        session.close()


def test_stuck_session_is_repaired_in_place_and_reads_back_through_the_library(tmp_path: Path, capsys) -> None:
    db = tmp_path / "agent.db"
    add(db, "stuck", stuck_history(1))
    add(db, "fine", [{"role": "user", "content": "hi"}])
    add(db, "stuck", [{"role": "user", "content": "one more thing"}])
    conn = sqlite3.connect(db)
    sessions_before = conn.execute("SELECT * FROM agent_sessions ORDER BY session_id").fetchall()
    conn.execute("UPDATE agent_messages SET created_at = '2020-01-01 00:00:00'")
    conn.commit()
    conn.close()
    original = session_items(db, "stuck")
    assert RESPONSES.check(original), "the fixture is not stuck"

    code, out, err = run_cli(["repair", str(db), "--journal-dir", str(tmp_path / "journal")], capsys)
    assert code == 0, err
    assert "openai-agents SQLiteSession" in err
    assert out.splitlines() == [f"{db}:agent_messages:session_id=stuck#1: add error output for call_1 (get_weather): "
                                "aborted, item 2 is a later user message"]

    items = session_items(db, "stuck")
    assert RESPONSES.check(items) == []
    assert items[:2] == original[:2] and items[3:] == original[2:], "an original item moved or changed"
    assert items[2]["type"] == "function_call_output" and items[2]["call_id"] == "call_1"
    assert session_items(db, "fine") == [{"role": "user", "content": "hi"}]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT * FROM agent_sessions ORDER BY session_id").fetchall() == sessions_before
    # the rows after the call kept their timestamps when they moved to new ids
    assert [r[0] for r in conn.execute("SELECT created_at FROM agent_messages WHERE session_id = 'stuck' ORDER BY id")
            ][3:] == ["2020-01-01 00:00:00"] * 3
    conn.close()
    assert integrity(db) == "ok"

    # the app carries on with the repaired session as usual
    add(db, "stuck", [{"role": "user", "content": "thanks"}])
    assert session_items(db, "stuck")[-1] == {"role": "user", "content": "thanks"}


def test_undo_puts_the_library_history_back(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    add(db, "s", stuck_history(2))
    before = session_items(db, "s")
    run, _ = repair(db, tmp_path / "journal", batch_size=1)
    assert run.result.changed == 1
    assert RESPONSES.check(session_items(db, "s")) == []
    from threadfix.undo import undo

    assert [o.status for o in undo(run.result.journal)] == ["restored"]
    assert session_items(db, "s") == before


def test_repair_while_the_library_writes_to_the_same_sessions(tmp_path: Path) -> None:
    """Done-when of issue 5: repaired in place while another process writes through the SDK."""
    db = tmp_path / "live.db"
    sessions = 4
    for i in range(sessions):
        add(db, f"t{i}", stuck_history(i))
    conn = sqlite3.connect(db)
    conn.execute("UPDATE agent_messages SET created_at = '2020-01-01 00:00:00'")
    conn.commit()
    conn.close()
    seeded = {i: session_items(db, f"t{i}") for i in range(sessions)}
    with App(db, "agents-sdk", 1.0, 7, sessions) as app:
        passes = 0
        while app.running():
            repair(db, tmp_path / "journal", batch_size=1)
            passes += 1
        written = app.finish()
    assert written and passes >= 1
    final, _ = repair(db, tmp_path / "journal")
    assert final.result.exit_code() == 0, final.result.problems

    seen: list[str] = []
    for i in range(sessions):
        items = session_items(db, f"t{i}")
        assert RESPONSES.check(items) == [], f"t{i} is still refused"
        assert set(outputs_per_call(items).values()) == {1}
        seen.extend(item["app_id"] for item in items if "app_id" in item)
        originals = [item for item in items if "app_id" not in item and item.get("type") != "function_call_output"]
        assert originals == [item for item in seeded[i] if item.get("type") != "function_call_output"]
    assert sorted(seen) == sorted(written), "something the app wrote was lost or duplicated"
    assert integrity(db) == "ok"

