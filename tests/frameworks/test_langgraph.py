"""LangGraph ``SqliteSaver`` stores written by real graphs, repaired, then resumed by LangGraph itself.

The stores come from ``tests/frameworks/langgraph_app.py``: the tutorial chatbot paused before its tools and
a ReAct agent whose tool node crashed mid-batch, run with langchain-core's fake chat model. The proof a
repair is right is LangGraph's own: ``create_react_agent`` checks the history before each model call and
refuses a call without its ToolMessage (INVALID_CHAT_HISTORY); after the repair it takes the next message.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

pytest.importorskip("langgraph.checkpoint.sqlite", reason="langgraph-checkpoint-sqlite is not installed")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402

from tests.frameworks.langgraph_app import chatbot, config, react, saver, write_stuck  # noqa: E402
from tests.frameworks.common import copy_database  # noqa: E402
from tests.sqlite.dbs import run_cli  # noqa: E402
from threadfix.batch import RepairRun, RunOptions  # noqa: E402

THREADS = ("end", "healthy", "moved-on", "orphan", "parallel")


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("langgraph") / "checkpoints.db"
    write_stuck(path)
    return path


@pytest.fixture
def db(written: Path, tmp_path: Path) -> Path:
    return copy_database(written, tmp_path / "checkpoints.db")


def rows(db: Path, table: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3").fetchall()  # noqa: S608
    finally:
        conn.close()


def messages(db: Path, thread: str) -> list:
    with saver(db) as cp:
        return cp.get_tuple(config(thread)).checkpoint["channel_values"]["messages"]


def resume(db: Path, thread: str) -> list:
    """The next human message, through a ReAct agent on the same checkpointer: the new state's messages."""
    with saver(db) as cp:
        agent = react(cp, [AIMessage(content="here is what I found")])
        return agent.invoke({"messages": [HumanMessage("and now?")]}, config(thread))["messages"]


def answered_in_place(history: list) -> bool:
    """Every tool call has its ToolMessage among the messages right after its AIMessage."""
    for i, message in enumerate(history):
        if isinstance(message, AIMessage) and message.tool_calls:
            after = {m.tool_call_id for m in history[i + 1:i + 1 + len(message.tool_calls)] if isinstance(m, ToolMessage)}
            if {call["id"] for call in message.tool_calls} - after:
                return False
    return True


def test_lint_reads_the_checkpoints_as_threads(db: Path, capsys) -> None:
    code, out, err = run_cli(["lint", str(db)], capsys)
    assert code == 1
    found = {(line.split(":")[1].split("#")[0], line.split()[1]) for line in out.splitlines()}
    assert found == {("end", "TF001"), ("moved-on", "TF001"), ("moved-on", "TF007"), ("orphan", "TF002"),
                     ("parallel", "TF001")}
    assert out.count("parallel#1: TF001") == 3


SAVED_LINE = "{db}:parallel#1: add saved output for {call} (get_weather): " \
             "LangGraph saved it as a pending write of the latest checkpoint"
ERROR_LINE = "{db}:parallel#1: add error output for call_p2 (get_weather): aborted, the thread ends on this call"


@pytest.mark.parametrize("dry_run", [True, False])
def test_repair_says_which_outputs_are_the_tools_own(db: Path, tmp_path: Path, dry_run: bool, capsys) -> None:
    args = ["--dry-run"] if dry_run else ["--journal-dir", str(tmp_path / "j")]
    code, out, err = run_cli(["repair", "--min-age", "0", *args, str(db)], capsys)
    assert code == 0, err
    parallel = [line for line in out.splitlines() if ":parallel#" in line]
    assert parallel == [SAVED_LINE.format(db=db, call="call_p1"), ERROR_LINE.format(db=db),
                        SAVED_LINE.format(db=db, call="call_p3")]
    assert f"{db}:end#1: add error output for call_p1 (get_weather): aborted, the thread ends on this call" in out
    assert "(1 convert orphan, 3 insert output, 2 insert saved output)" in err
    if not dry_run:  # what the lines say is what went in
        outputs = {m.tool_call_id: m for m in messages(db, "parallel") if isinstance(m, ToolMessage)}
        assert outputs["call_p1"].content == "sunny in Rome" and outputs["call_p3"].content == "sunny in Paris"
        assert outputs["call_p2"].status == "error"


def test_repair_json_gives_the_saved_outputs_their_own_action(db: Path, capsys) -> None:
    code, out, err = run_cli(["repair", "--min-age", "0", "--dry-run", "--format", "json", str(db)], capsys)
    assert code == 0, err
    report = json.loads(out)
    parallel = next(t for t in report["threads"] if t["address"] == f"{db}:parallel")
    assert [(e["action"], e["call_id"], e["kind"], e["evidence"]) for e in parallel["edits"]] == [
        ("insert_saved_output", "call_p1", None, "LangGraph saved it as a pending write of the latest checkpoint"),
        ("insert_output", "call_p2", "aborted", "the thread ends on this call"),
        ("insert_saved_output", "call_p3", None, "LangGraph saved it as a pending write of the latest checkpoint")]
    assert report["summary"]["edits"] == {"insert_output": 3, "insert_saved_output": 2, "convert_orphan": 1}


def test_lint_says_a_dangling_calls_output_was_saved(db: Path, capsys) -> None:
    code, out, err = run_cli(["lint", str(db)], capsys)
    parallel = [line for line in out.splitlines() if ":parallel#" in line]
    saved = "{db}:parallel#1: TF001 call {call} (get_weather) has no output in the thread; fixable: its output was " \
            "saved (LangGraph saved it as a pending write of the latest checkpoint) (dangling-call)"
    assert parallel == [saved.format(db=db, call="call_p1"),
                        f"{db}:parallel#1: TF001 call call_p2 (get_weather) has no output: aborted, the thread ends on "
                        "this call (dangling-call)",
                        saved.format(db=db, call="call_p3")]


@pytest.mark.parametrize("thread", ["end", "moved-on", "parallel"])
def test_a_stuck_thread_is_refused_by_langgraph_before_the_repair(db: Path, thread: str) -> None:
    with pytest.raises(ValueError, match="INVALID_CHAT_HISTORY"):
        resume(db, thread)


def test_repair_adds_a_checkpoint_langgraph_resumes_from(db: Path, tmp_path: Path, capsys) -> None:
    checkpoints, writes = rows(db, "checkpoints"), rows(db, "writes")
    before = {thread: messages(db, thread) for thread in THREADS}
    with saver(db) as cp:
        latest = {thread: cp.get_tuple(config(thread)).config["configurable"]["checkpoint_id"] for thread in THREADS}
    code, out, err = run_cli(["repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 0, err
    assert "reading LangGraph SqliteSaver checkpoints" in err and "repaired 4 of 5 threads" in err
    # older checkpoints and every write untouched; one new checkpoint per repaired thread
    after_rows = rows(db, "checkpoints")
    assert [row for row in after_rows if row in checkpoints] == checkpoints
    assert rows(db, "writes") == writes
    added = [row for row in after_rows if row not in checkpoints]
    assert sorted(row[0] for row in added) == ["end", "moved-on", "orphan", "parallel"]
    with saver(db) as cp:
        for thread in ("end", "moved-on", "orphan", "parallel"):
            new = cp.get_tuple(config(thread))
            assert new.parent_config["configurable"]["checkpoint_id"] == latest[thread]
            assert new.config["configurable"]["checkpoint_id"] > latest[thread]
            assert new.metadata["source"] == "update"
        assert cp.get_tuple(config("healthy")).config["configurable"]["checkpoint_id"] == latest["healthy"]
    parallel = messages(db, "parallel")
    outputs = {m.tool_call_id: m for m in parallel if isinstance(m, ToolMessage)}
    # the two tools that finished: their own outputs, saved as pending writes; the crashed one: an error
    assert outputs["call_p1"].content == "sunny in Rome" and outputs["call_p3"].content == "sunny in Paris"
    assert outputs["call_p2"].status == "error" and "threadfix" in outputs["call_p2"].content
    for thread in THREADS:
        history = messages(db, thread)
        assert answered_in_place(history), thread
        kept = {m.id for m in history}
        assert {m.id for m in before[thread] if thread != "orphan" or not isinstance(m, ToolMessage)} <= kept
    orphan = messages(db, "orphan")
    assert any(isinstance(m, HumanMessage) and "sunny in Rome" in m.content for m in orphan)
    for thread in THREADS:  # LangGraph takes the next message on every thread
        resumed = resume(db, thread)
        assert resumed[-1].content == "here is what I found" and answered_in_place(resumed)
    with saver(db) as cp:  # and the chatbot, approval and all, has nothing left to run
        assert chatbot(cp, []).get_state(config("end")).next == ()


def test_undo_takes_the_new_checkpoints_back(db: Path, tmp_path: Path, capsys) -> None:
    checkpoints = rows(db, "checkpoints")
    journal = tmp_path / "j"
    assert run_cli(["repair", "--min-age", "0", "--journal-dir", str(journal), str(db)], capsys)[0] == 0
    assert rows(db, "checkpoints") != checkpoints
    code, out, err = run_cli(["undo", str(next(journal.iterdir()))], capsys)
    assert code == 0, err
    assert rows(db, "checkpoints") == checkpoints


def test_undo_refuses_a_checkpoint_the_app_went_on_from(db: Path, tmp_path: Path, capsys) -> None:
    journal = tmp_path / "j"
    assert run_cli(["repair", "--min-age", "0", "--journal-dir", str(journal), str(db)], capsys)[0] == 0
    resume(db, "end")
    code, out, err = run_cli(["undo", str(next(journal.iterdir()))], capsys)
    assert code == 1
    assert "went on from the checkpoint" in out + err
    assert answered_in_place(messages(db, "end"))


def test_check_dry_run_and_min_age_write_nothing(db: Path, tmp_path: Path, capsys) -> None:
    checkpoints = rows(db, "checkpoints")
    code, out, err = run_cli(["repair", "--min-age", "0", "--check", str(db)], capsys)
    assert code == 1 and "would repair 4 of 5 threads" in err
    code, out, err = run_cli(["repair", "--min-age", "0", "--dry-run", "--diff", str(db)], capsys)
    assert code == 0 and '"sunny in Paris"' in out  # the diff shows the saved output going in
    os.utime(db, (0, 0))  # the age is the latest checkpoint's own time, not the file's
    code, out, err = run_cli(["repair", "--min-age", "1h", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 0 and "repaired 0 of 5 threads; 4 skipped as recent" in err
    assert rows(db, "checkpoints") == checkpoints
    run = RepairRun([str(db)], RunOptions(min_age=3600, now=time.time() + 7200, journal_dir=tmp_path / "j"))
    assert sum(o.status == "repaired" for o in run.outcomes()) == 4


def test_a_checkpoint_the_app_added_meanwhile_is_not_written_over(db: Path, tmp_path: Path, monkeypatch,
                                                                  capsys) -> None:
    from threadfix.stores.langgraph_checkpoints import LangGraphStore

    planned = LangGraphStore.records_for

    def app_moves_on(self, thread, new_items):
        change = planned(self, thread, new_items)
        if thread.address.key == "moved-on":
            with saver(db) as cp:
                chatbot(cp, [AIMessage(content="still here")]).update_state(
                    config("moved-on"), {"messages": [HumanMessage("hello?")]})
        return change

    monkeypatch.setattr(LangGraphStore, "records_for", app_moves_on)
    code, out, err = run_cli(["repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(db)], capsys)
    assert code == 75, err
    assert messages(db, "moved-on")[-1].content == "hello?"  # the app's checkpoint is the latest, untouched
    assert answered_in_place(messages(db, "end"))  # the others were written


def test_the_table_options_still_override_the_preset(db: Path, capsys) -> None:
    code, out, err = run_cli(["lint", "--table", "checkpoints", "--json-column", "metadata", str(db)], capsys)
    assert "LangGraph" not in err


def test_without_the_extra_the_store_is_named_with_the_extra_to_install(db: Path, monkeypatch, capsys) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.sqlite", None)  # (as if not installed)
    code, out, err = run_cli(["lint", str(db)], capsys)
    assert code == 2
    assert f"threadfix: error: {db}: reading LangGraph checkpoints needs the langgraph extra: " \
           "pip install 'threadfix[langgraph]'\n" in err


def test_jobs_give_the_same_result(db: Path, capsys) -> None:
    for command in (["lint"], ["repair", "--min-age", "0", "--dry-run"]):
        assert run_cli(["--jobs", "2", *command, str(db)], capsys) == run_cli([*command, str(db)], capsys)


def test_a_call_paused_by_interrupt_waits_until_answer_waiting(tmp_path: Path, capsys) -> None:
    from tests.frameworks.langgraph_app import write_waiting

    db = tmp_path / "checkpoints.db"
    write_waiting(db)
    with saver(db) as cp:
        paused = cp.get_tuple(config("approval"))
    assert [w[1] for w in paused.pending_writes] == ["__interrupt__"]  # (LangGraph's own mark, as it saved it)
    code, out, err = run_cli(["lint", str(db)], capsys)
    assert code == 0 and "TF001" not in out and "1 thread waiting" in err, (out, err)
    before = rows(db, "checkpoints")
    code, out, err = run_cli(["repair", "--min-age", "0", "--format", "json", "--journal-dir", str(tmp_path / "j"),
                              str(db)], capsys)
    assert code == 0, err
    [thread] = json.loads(out)["threads"]
    assert thread["status"] == "waiting" and "call_r1 to refund waits on a person" in thread["message"]
    assert rows(db, "checkpoints") == before
    code, out, err = run_cli(["lint", "--answer-waiting", str(db)], capsys)
    assert code == 1 and "TF001" in out, out
    code, out, err = run_cli(["repair", "--min-age", "0", "--answer-waiting", "--journal-dir", str(tmp_path / "j"),
                              str(db)], capsys)
    assert code == 0 and "repaired 1 of 1 thread" in err, err
    answered = [m for m in messages(db, "approval") if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in answered] == ["call_r1"]
    assert resume(db, "approval")[-1].content == "here is what I found"
