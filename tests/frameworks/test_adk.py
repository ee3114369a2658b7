"""Google ADK ``DatabaseSessionService`` databases written by ADK's own runner, repaired, then read and resumed
by ADK.

The databases come from ``tests/frameworks/adk_app.py``: an ``LlmAgent`` on a scripted ``BaseLlm`` run by
the in-process ``Runner``, its process killed while a tool runs (forked), and events saved through the session
service. Before the repair ADK leaves each unanswered call out of what it sends (the model never sees it was
cut off); after it, ``get_session`` reads every event, and the contents ADK builds for the next turn hold
every call with its response right after it.
"""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("google.adk", reason="google-adk is not installed")

from tests.frameworks.adk_app import APP, USER, Scripted, run, service, write_stuck  # noqa: E402
from tests.frameworks.common import copy_database  # noqa: E402
from tests.sqlite.dbs import run_cli  # noqa: E402

SESSIONS = ("end", "healthy", "moved-on", "orphan", "parallel")


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("adk") / "sessions.db"
    write_stuck(path)
    return path


@pytest.fixture
def db(written: Path, tmp_path: Path) -> Path:
    return copy_database(written, tmp_path / "sessions.db")


def events(db: Path, session: str) -> list:
    async def read():
        sessions = service(db)
        try:
            return (await sessions.get_session(app_name=APP, user_id=USER, session_id=session)).events
        finally:
            await sessions.close()
    return asyncio.run(read())


def rows(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT * FROM events ORDER BY session_id, timestamp, id").fetchall()
    finally:
        conn.close()


def sent(db: Path, session: str) -> list[dict]:
    """The contents ADK sends the model on the session's next turn."""
    Scripted.seen.clear()
    run(db, session, ["here is what I found"], "and now?", create=False)
    return Scripted.seen[-1]


def calls(contents: list[dict]) -> list[str]:
    return [p["function_call"]["id"] for c in contents for p in c["parts"] if "function_call" in p]


def answered_next(contents: list[dict]) -> bool:
    for i, content in enumerate(contents):
        ids = {p["function_call"]["id"] for p in content["parts"] if "function_call" in p}
        following = contents[i + 1]["parts"] if i + 1 < len(contents) else []
        if ids - {p["function_response"]["id"] for p in following if "function_response" in p}:
            return False
    return True


def test_lint_reads_each_session_as_a_thread(db: Path, capsys) -> None:
    code, out, err = run_cli(["lint", str(db)], capsys)
    assert code == 1
    found = {(line.split("/u1/")[1].split("#")[0], line.split()[1]) for line in out.splitlines()}
    assert found == {("end", "TF001"), ("moved-on", "TF001"), ("moved-on", "TF007"), ("orphan", "TF002"),
                     ("parallel", "TF001")}


@pytest.mark.parametrize("session", ["end", "moved-on", "parallel"])
def test_adk_leaves_an_unanswered_call_out_of_what_it_sends_before_the_repair(db: Path, session: str) -> None:
    stored = [p.function_call.id for e in events(db, session) if e.content for p in e.content.parts or []
              if p.function_call]
    assert set(calls(sent(db, session))) < set(stored)


def test_repair_adds_events_adk_reads_and_sends(db: Path, tmp_path: Path, capsys) -> None:
    before_rows = rows(db)
    before = {s: events(db, s) for s in SESSIONS}
    code, out, err = run_cli(["repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 0, err
    assert "reading Google ADK DatabaseSessionService sessions" in err and "repaired 4 of 5 threads" in err
    after_rows = rows(db)
    unchanged = {row[0] for row in before_rows} - {e.id for e in before["parallel"] + before["orphan"]
                                                    if e.content and any(p.function_response for p in e.content.parts)}
    assert [r for r in after_rows if r[0] in unchanged] == [r for r in before_rows if r[0] in unchanged]
    for session in SESSIONS:
        now = events(db, session)
        old_ids = [e.id for e in before[session]]
        assert [e.id for e in now if e.id in old_ids] == old_ids, session  # nothing lost, nothing reordered
        contents = [e.content.model_dump(exclude_none=True, mode="json") for e in now if e.content]
        assert answered_next(contents), session
        added = [e for e in now if e.id not in old_ids]
        for event in added:
            i = [e.id for e in now].index(event.id)
            call = now[i - 1]
            assert event.invocation_id == call.invocation_id and event.author == call.author
            assert event.content.role == "user"
            assert call.timestamp < event.timestamp < (now[i + 1].timestamp if i + 1 < len(now) else 1e12)
    parallel = [p.function_response for e in events(db, "parallel") if e.content for p in e.content.parts
                if p.function_response]
    assert {r.id: r.response for r in parallel}["call_p1"] == {"forecast": "sunny in Rome"}
    assert "error" in {r.id: r.response for r in parallel}["call_p2"]
    for session in ("end", "moved-on", "parallel"):  # ADK sends every call now, each with its response
        contents = sent(db, session)
        stored = [p.function_call.id for e in events(db, session) if e.content for p in e.content.parts or []
                  if p.function_call]
        assert calls(contents) == stored and answered_next(contents), session
        assert events(db, session)[-1].content.parts[0].text == "here is what I found"


def test_undo_takes_the_events_back(db: Path, tmp_path: Path, capsys) -> None:
    before = rows(db)
    journal = tmp_path / "j"
    assert run_cli(["repair", "--min-age", "0", "--journal-dir", str(journal), str(db)], capsys)[0] == 0
    assert rows(db) != before
    code, out, err = run_cli(["undo", str(next(journal.iterdir()))], capsys)
    assert code == 0, err
    assert rows(db) == before


def test_check_and_min_age_write_nothing(db: Path, tmp_path: Path, capsys) -> None:
    import os

    before = rows(db)
    code, out, err = run_cli(["repair", "--min-age", "0", "--check", str(db)], capsys)
    assert code == 1 and "would repair 4 of 5 threads" in err
    os.utime(db, (0, 0))  # the age is the session's own update time, not the file's
    code, out, err = run_cli(["repair", "--min-age", "1h", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 0 and "4 skipped as recent" in err
    assert rows(db) == before


def test_a_session_the_app_went_on_with_is_left_alone(db: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    from threadfix.stores.adk_sessions import AdkSessionsStore

    planned = AdkSessionsStore.records_for

    def app_goes_on(self, thread, new_items):
        change = planned(self, thread, new_items)
        if thread.address.key.endswith("/moved-on"):
            run(db, "moved-on", ["still here"], "hello?", create=False)
        return change

    monkeypatch.setattr(AdkSessionsStore, "records_for", app_goes_on)
    code, out, err = run_cli(["repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 75, err
    assert events(db, "moved-on")[-1].content.parts[0].text == "still here"
    ended = [e.content.model_dump(exclude_none=True, mode="json") for e in events(db, "end") if e.content]
    assert answered_next(ended)


def test_leave_tool_leaves_a_call_the_app_waits_on(db: Path, tmp_path: Path, capsys) -> None:
    before = rows(db)
    code, out, err = run_cli(["repair", "--min-age", "0", "--leave-tool", "get_weather", "--journal-dir",
                              str(tmp_path / "j"), str(db)], capsys)
    assert code == 0
    assert [r for r in rows(db) if r[3] in ("end", "moved-on", "parallel")] == \
           [r for r in before if r[3] in ("end", "moved-on", "parallel")]


def test_jobs_give_the_same_result(db: Path, capsys) -> None:
    for command in (["lint"], ["repair", "--min-age", "0", "--dry-run"]):
        assert run_cli(["--jobs", "2", *command, str(db)], capsys) == run_cli([*command, str(db)], capsys)


@given(st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1)))
def test_a_timestamp_column_reads_and_writes_as_adk_stores_it(moment: datetime) -> None:
    """The column as SQLAlchemy's SQLite DateTime stores ADK's naive UTC datetime, read to microseconds and back,
    and the same instant as ADK's epoch float (``timestamp_to_utc_datetime``)."""
    from google.adk.sessions.schemas.shared import timestamp_to_utc_datetime

    from threadfix.stores.adk_sessions import column, micros

    text = moment.strftime("%Y-%m-%d %H:%M:%S.%f")
    assert column(micros(text)) == text
    assert timestamp_to_utc_datetime(micros(text) / 1e6) == moment


def test_undo_refuses_a_session_the_app_went_on_with(db: Path, tmp_path: Path, capsys) -> None:
    journal = tmp_path / "j"
    assert run_cli(["repair", "--min-age", "0", "--journal-dir", str(journal), str(db)], capsys)[0] == 0
    run(db, "end", ["here is what I found"], "and now?", create=False)
    kept = [r for r in rows(db) if r[3] == "end"]
    code, out, err = run_cli(["undo", str(next(journal.iterdir()))], capsys)
    assert code == 1
    assert "changed after the repair" in out + err
    assert [r for r in rows(db) if r[3] == "end"] == kept


@pytest.mark.parametrize("moved_on", [False, True])
def test_a_long_running_call_waits_until_the_user_moves_on(tmp_path: Path, capsys, moved_on: bool) -> None:
    from tests.frameworks.adk_app import write_waiting

    db = tmp_path / "sessions.db"
    write_waiting(db, moved_on=moved_on)
    stored = [e for e in events(db, "approval") if e.long_running_tool_ids]
    assert [e.long_running_tool_ids for e in stored] == [{"call_a1"}]  # (ADK's own mark, as it saved it)
    code, out, err = run_cli(["lint", str(db)], capsys)
    assert (code, "TF001" in out) == ((1, True) if moved_on else (0, False)), out
    assert ("1 thread waiting" in err) is not moved_on, err
    before = rows(db)
    code, out, err = run_cli(["repair", "--min-age", "0", "--format", "json", "--journal-dir", str(tmp_path / "j"),
                              str(db)], capsys)
    assert code == 0, err
    [thread] = orjson.loads(out)["threads"]
    if not moved_on:
        assert thread["status"] == "waiting" and "call_a1 to request_approval waits on a person" in thread["message"]
        assert rows(db) == before
        code, out, err = run_cli(["lint", "--answer-waiting", str(db)], capsys)
        assert code == 1 and "TF001" in out, out
        code, out, err = run_cli(["repair", "--min-age", "0", "--answer-waiting", "--journal-dir",
                                  str(tmp_path / "j"), str(db)], capsys)
        assert code == 0 and "repaired 1 of 1 thread" in err, err
    else:
        assert thread["status"] == "repaired", thread
    answered = [p.function_response for e in events(db, "approval") if e.content for p in e.content.parts
                if p.function_response]
    assert [r.id for r in answered] == ["call_a1"]
