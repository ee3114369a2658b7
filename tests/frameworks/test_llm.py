"""llm ``logs.db`` stores written by llm itself, repaired, then loaded and continued by llm.

The stores come from ``tests/frameworks/llm_app.py`` (a scripted ``llm.Model``, responses logged with
``Response.log_to_db``). The proof is llm's own: ``load_conversation`` (what ``llm -c`` runs) reads the
thread, ``LogStore.verify`` re-hashes every message, ``pending_tool_calls`` finds nothing waiting, SQLite's
foreign key check passes, and the conversation takes the next prompt.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("llm", reason="llm is not installed")

import llm  # noqa: E402
import sqlite_utils  # noqa: E402
from llm.cli import load_conversation  # noqa: E402
from llm.logs import LogStore  # noqa: E402
from llm.parts import Message, TextPart, ToolCallPart, ToolResultPart  # noqa: E402

from tests.frameworks.llm_app import Scripted, say, write_stuck  # noqa: E402
from tests.frameworks.common import copy_database  # noqa: E402
from tests.sqlite.dbs import run_cli  # noqa: E402
from threadfix.batch import RepairRun, RunOptions  # noqa: E402


class _Plugin:
    """Registers the scripted model, so that ``load_conversation`` finds it by its id as llm finds any model."""

    __name__ = "threadfix-scripted"

    @llm.hookimpl
    def register_models(self, register):
        register(Scripted(["here is what I found"]))


@pytest.fixture(scope="module", autouse=True)
def scripted_model():
    llm.plugins.pm.register(_Plugin(), name="threadfix-scripted")
    yield
    llm.plugins.pm.unregister(name="threadfix-scripted")


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("llm") / "logs.db"
    return path, write_stuck(path)


@pytest.fixture
def store(written, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    source, ids = written
    return copy_database(source, tmp_path / "logs.db"), ids


def dump(db: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(db)
    try:
        return {table: conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()  # noqa: S608
                for table in ("messages", "parts", "threads", "turns")}
    finally:
        conn.close()


def chain(db: Path, thread_id: str) -> list:
    return load_conversation(thread_id, database=db).loaded_messages


def answered_next(messages: list) -> bool:
    """Every tool call's result is in the tool message right after its assistant message."""
    for i, message in enumerate(messages):
        calls = {p.tool_call_id for p in message.parts if type(p).__name__ == "ToolCallPart"}
        if calls:
            after = messages[i + 1] if i + 1 < len(messages) else None
            results = {p.tool_call_id for p in after.parts} if after is not None and after.role == "tool" else set()
            if calls - results:
                return False
    return True


def test_lint_reads_each_thread_as_its_chain(store, capsys) -> None:
    db, ids = store
    code, out, err = run_cli(["lint", str(db)], capsys)
    assert code == 1
    by_id = {v: k for k, v in ids.items()}
    found = {(by_id[line.split(":")[1].split("#")[0]], line.split()[1]) for line in out.splitlines()}
    assert found == {("end", "TF001"), ("parallel", "TF001"), ("moved-on", "TF001"), ("moved-on", "TF007"),
                     ("orphan", "TF002")}


def test_repair_writes_new_chains_llm_loads_and_continues(store, tmp_path: Path, capsys) -> None:
    db, ids = store
    before = dump(db)
    before_chains = {name: chain(db, thread) for name, thread in ids.items()}
    assert not answered_next(before_chains["parallel"]) and not answered_next(before_chains["moved-on"])
    code, out, err = run_cli(["repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 0, err
    assert "reading llm logs.db threads" in err and "repaired 4 of 5 threads" in err
    after = dump(db)
    for table in ("messages", "parts", "turns"):  # nothing stored is changed or deleted
        assert set(before[table]) <= set(after[table]), table
    assert after["turns"] == before["turns"]
    tips = {row[0]: row[2] for row in after["threads"]}
    assert tips[ids["healthy"]] == {row[0]: row[2] for row in before["threads"]}[ids["healthy"]]
    log = LogStore(sqlite_utils.Database(db))
    assert log.verify() == []
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()
    for name, thread in ids.items():
        messages = chain(db, thread)
        assert answered_next(messages), name
        assert log.pending_tool_calls(tips[thread]) == []
        # every stored part is still there, in order (the orphan's result kept as text)
        parts = [p.to_dict() for m in messages for p in m.parts]
        kept = [p.to_dict() for m in before_chains[name] for p in m.parts]
        if name == "orphan":
            assert any("sunny in Rome" in p.get("text", "") for p in parts)
            kept = [p for p in kept if p["type"] != "tool_result"]
        assert [p for p in parts if p in kept] == kept, name
        assert len(messages) > len(before_chains[name]) or name in ("healthy", "parallel", "orphan")
    parallel = chain(db, ids["parallel"])
    results = {p.tool_call_id: p for p in parallel[2].parts}
    assert results["call_p1"].output == "sunny in Rome" and results["call_p3"].output == "sunny in Paris"
    assert results["call_p2"].exception.startswith("aborted:")
    assert parallel[3].parts[0].text == "two of three"
    # llm -c: the conversation takes the next prompt, on top of the repaired chain
    conversation = load_conversation(ids["moved-on"], database=db)
    response = say(sqlite_utils.Database(db), conversation, "and now?")
    assert response.text() == "here is what I found"
    messages = chain(db, ids["moved-on"])
    assert answered_next(messages) and messages[-1].parts[0].text == "here is what I found"
    assert LogStore(sqlite_utils.Database(db)).verify() == []


def test_undo_moves_the_tips_back_and_takes_the_new_rows_away(store, tmp_path: Path, capsys) -> None:
    db, ids = store
    before = dump(db)
    journal = tmp_path / "j"
    assert run_cli(["repair", "--min-age", "0", "--journal-dir", str(journal), str(db)], capsys)[0] == 0
    assert dump(db) != before
    code, out, err = run_cli(["undo", str(next(journal.iterdir()))], capsys)
    assert code == 0, err
    after = dump(db)
    assert after["threads"] == before["threads"] and after["messages"] == before["messages"]
    assert [row[1:] for row in after["parts"]] == [row[1:] for row in before["parts"]]


def test_a_thread_the_app_went_on_with_is_left_alone(store, tmp_path: Path, monkeypatch, capsys) -> None:
    from threadfix.stores.llm_logs import LlmLogsStore

    db, ids = store
    planned = LlmLogsStore.records_for

    def app_goes_on(self, thread, new_items):
        change = planned(self, thread, new_items)
        if thread.address.key == ids["moved-on"]:
            conversation = load_conversation(ids["moved-on"], database=db)
            say(sqlite_utils.Database(db), conversation, "hello?")
        return change

    monkeypatch.setattr(LlmLogsStore, "records_for", app_goes_on)
    code, out, err = run_cli(["repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 75, err
    assert chain(db, ids["moved-on"])[-2].parts[0].text == "hello?"  # the app's turn is the tip
    assert answered_next(chain(db, ids["end"]))


def test_check_and_min_age_write_nothing(store, tmp_path: Path, capsys) -> None:
    import os
    import time

    db, ids = store
    before = dump(db)
    code, out, err = run_cli(["repair", "--min-age", "0", "--check", str(db)], capsys)
    assert code == 1 and "would repair 4 of 5 threads" in err
    os.utime(db, (0, 0))  # the age is the thread's last turn, not the file's time
    code, out, err = run_cli(["repair", "--min-age", "1h", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 0 and "4 skipped as recent" in err
    assert dump(db) == before
    run = RepairRun([str(db)], RunOptions(min_age=3600, now=time.time() + 7200, journal_dir=tmp_path / "j"))
    assert sum(o.status == "repaired" for o in run.outcomes()) == 4


def test_a_chain_whose_hashes_cannot_be_recomputed_is_left_alone(store, tmp_path: Path, capsys) -> None:
    db, ids = store
    conn = sqlite3.connect(db)
    tip = conn.execute("SELECT tip_message_hash FROM threads WHERE id = ?", (ids["end"],)).fetchone()[0]
    conn.execute("UPDATE parts SET payload = json_set(payload, '$.arguments.city', 'Roma') WHERE message_hash = ?",
                 (tip,))
    conn.commit()
    conn.close()
    code, out, err = run_cli(["repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 2
    for name in ("end", "moved-on"):  # (the message is in both chains)
        assert f"{ids[name]}: message {tip} does not hash as stored" in err
    assert "repaired 2 of 5 threads" in err and "2 left alone" in err


def test_jobs_give_the_same_result(store, capsys) -> None:
    db, _ = store
    for command in (["lint"], ["repair", "--min-age", "0", "--dry-run"]):
        assert run_cli(["--jobs", "2", *command, str(db)], capsys) == run_cli([*command, str(db)], capsys)


_json = st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text(max_size=12),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=8)
_parts = st.lists(st.one_of(
    st.builds(lambda t: TextPart(text=t), st.text(max_size=20)),
    st.builds(lambda n, a, i: ToolCallPart(name=n, arguments=a, tool_call_id=i), st.text(min_size=1, max_size=8),
              st.dictionaries(st.text(max_size=6), _json, max_size=3), st.none() | st.text(min_size=1, max_size=8)),
    st.builds(lambda n, o, i, e: ToolResultPart(name=n, output=o, tool_call_id=i, exception=e),
              st.text(min_size=1, max_size=8), st.text(max_size=20), st.none() | st.text(max_size=8),
              st.none() | st.text(max_size=20)),
), min_size=1, max_size=4)


@given(role=st.sampled_from(["user", "assistant", "tool", "system"]), parts=_parts,
       parent=st.none() | st.text(min_size=1, max_size=20))
def test_message_hash_is_llms(role: str, parts: list, parent) -> None:
    """threadfix's hash of a message, from the dict llm stores, is the one llm computes itself."""
    from llm.logs import message_hash as llms

    from threadfix.stores.llm_logs import message_hash, part_dict

    message = Message(role=role, parts=parts)
    stored = []  # each part as LogStore._write_part stores it, read back as _load_parts does
    for part in parts:
        payload = part.to_dict()
        kind = payload.pop("type")
        text = payload.pop("text") if kind in ("text", "reasoning") and "text" in payload else None
        stored.append(part_dict(kind, text, json.dumps(payload) if payload else None))
    assert message_hash({"role": role, "parts": stored}, parent) == llms(message, parent)


def test_undo_refuses_a_thread_the_app_went_on_with(store, tmp_path: Path, capsys) -> None:
    db, ids = store
    journal = tmp_path / "j"
    assert run_cli(["repair", "--min-age", "0", "--journal-dir", str(journal), str(db)], capsys)[0] == 0
    say(sqlite_utils.Database(db), load_conversation(ids["moved-on"], database=db), "and now?")
    kept = chain(db, ids["moved-on"])
    code, out, err = run_cli(["undo", str(next(journal.iterdir()))], capsys)
    assert code == 1
    assert "went on after the repair" in out + err
    assert chain(db, ids["moved-on"]) == kept  # the app's turn is still there, on the repaired chain
    assert LogStore(sqlite_utils.Database(db)).verify() == []
