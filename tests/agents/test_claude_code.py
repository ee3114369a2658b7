"""Claude Code transcripts, stuck in each shape users meet, repaired so that ``claude --resume`` sends a
conversation the Anthropic API accepts, with every original line kept and the chain linear."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agents.sessions import (
    SESSION,
    Transcript,
    assert_nothing_lost,
    chain_uuids,
    records,
    repair,
    session_of,
    violations,
)
from threadfix.stores.records import record_id


def _repaired(path: Path, walk: Path | None = None, **kw) -> tuple[bytes, bytes]:
    before = path.read_bytes()
    assert violations(path), "the fixture must be stuck"
    run = repair(walk or path, **kw)
    after = path.read_bytes()
    assert run.result.changed == 1, run.result
    assert violations(path) == []
    assert_nothing_lost(before, after)
    again = repair(path)
    assert again.result.changed == 0 and path.read_bytes() == after  # idempotent
    return before, after


def _new_records(before: bytes, after: bytes) -> list[dict]:
    old = {r.get("uuid") for r in records(before)}
    return [r for r in records(after) if r.get("uuid") not in old]


def test_interrupted_at_the_end_gets_a_new_result_record_carrying_the_files_fields(tmp_path: Path) -> None:
    t = Transcript()
    t.user("list the files")
    t.text("Let me look.", "msg_1")
    call = t.assistant({"type": "tool_use", "id": "toolu_end", "name": "Bash", "input": {"command": "ls"}}, "msg_1")
    t.system("stop_hook_summary")  # kept, not sent: it follows the call on the chain
    path = t.write(tmp_path / f"{SESSION}.jsonl")
    old_chain = chain_uuids(path)
    before, after = _repaired(path)
    (new,) = _new_records(before, after)
    assert list(new) == ["parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "slug",
                         "type", "message", "uuid", "timestamp", "toolUseResult", "sourceToolAssistantUUID"]
    assert new["parentUuid"] == call and new["sourceToolAssistantUUID"] == call
    assert new["uuid"] == record_id(SESSION, "toolu_end")
    assert new["sessionId"] == SESSION and new["isSidechain"] is False and new["cwd"] == "/home/dev/project"
    block = new["message"]["content"][0]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_end" and block["is_error"] is True
    # the stop-hook record that followed the call now follows the result: one chain, the same end
    system = next(r for r in records(after) if r.get("type") == "system")
    assert system["parentUuid"] == new["uuid"]
    assert chain_uuids(path) == [*old_chain[:-1], new["uuid"], old_chain[-1]]
    # the new line is written right after the call's, compact like the file's own
    lines = after.splitlines()
    assert json.loads(lines[lines.index(next(l for l in lines if call.encode() in l and b'"tool_use"' in l)) + 1])["uuid"] == new["uuid"]
    assert b'", "' not in lines[-2]


def test_interrupted_in_a_subagents_sidechain_file(tmp_path: Path) -> None:
    t = Transcript(sidechain=True, agent="a1b2c3d")
    t.user("Search the codebase for the parser", parent=None)
    t.call("toolu_sub", "msg_s1", name="Grep")
    path = t.write(tmp_path / SESSION / "subagents" / "agent-a1b2c3d.jsonl")
    before, after = _repaired(path, walk=tmp_path)  # found by the folder walk
    (new,) = _new_records(before, after)
    assert new["isSidechain"] is True and new["agentId"] == "a1b2c3d"
    assert list(new).index("agentId") < list(new).index("type")


def test_parallel_batch_with_a_result_off_the_chain_is_relinked_not_invented(tmp_path: Path) -> None:
    t = Transcript()
    t.user("check both")
    a1 = t.call("toolu_p1", "msg_p")
    a2 = t.call("toolu_p2", "msg_p")
    r1 = t.result("toolu_p1", "first output", parent=a1)  # parented on its own piece: off the chain
    t.progress(parent=r1)
    r2 = t.result("toolu_p2", "second output", parent=a2)
    after_prompt = t.text("Both done.", "msg_q")
    path = t.write(tmp_path / f"{SESSION}.jsonl")
    before, after = _repaired(path)
    assert _new_records(before, after) == []  # nothing invented
    by_uuid = {r["uuid"]: r for r in records(after) if "uuid" in r}
    assert by_uuid[r1]["parentUuid"] == r2 and by_uuid[after_prompt]["parentUuid"] == r1
    assert b"first output" in after and after.count(b"toolu_p1") == before.count(b"toolu_p1")
    assert chain_uuids(path)[-1] == after_prompt  # the end has not moved


def test_a_result_dropped_from_a_linear_batch_of_version_1(tmp_path: Path) -> None:
    t = Transcript(version="1.0.98")
    t.records.append({"type": "summary", "summary": "Parser work", "leafUuid": "00000000-0000-4000-8000-000000000000"})
    t.user("read both", parent=None)
    t.call("toolu_a", "msg_1", name="Read")
    t.call("toolu_b", "msg_1", name="Read")
    t.result("toolu_b", "b text")  # toolu_a's result was never written
    end = t.text("Read it.", "msg_2")
    # a subagent's turns inline, on their own root
    t.user("subagent task", parent=None, isSidechain=True)
    t.records[-1]["isSidechain"] = True
    t.text("subagent answer", "msg_side")
    t.records[-1]["isSidechain"] = True
    path = t.write(tmp_path / f"{SESSION}.jsonl")
    before, after = _repaired(path)
    (new,) = _new_records(before, after)
    assert "sourceToolAssistantUUID" not in new and "slug" not in new  # the file's own records carry neither
    assert new["version"] == "1.0.98"
    assert chain_uuids(path)[-1] == end


def test_an_orphan_after_compaction_becomes_text_keeping_what_it_said(tmp_path: Path) -> None:
    t = Transcript(version="2.0.76")
    t.user("start")
    t.call("toolu_old", "msg_1")
    t.system("compact_boundary", parent=None, logicalParentUuid=t.last, compactMetadata={"trigger": "auto", "preTokens": 150000})
    t.user("This session is being continued from a previous conversation...", isCompactSummary=True,
           isVisibleInTranscriptOnly=True)
    orphan = t.result("toolu_old", "the build passed")
    t.text("Continuing.", "msg_2")
    t.snapshot()
    path = t.write(tmp_path / f"{SESSION}.jsonl", final_newline=False)
    before, after = _repaired_with(path, frozenset({"message"}))
    changed = next(r for r in records(after) if r.get("uuid") == orphan)
    (block,) = changed["message"]["content"]
    assert block["type"] == "text" and "the build passed" in block["text"] and "toolu_old" in block["text"]
    assert not after.endswith(b"\n")


def _repaired_with(path: Path, may_change: frozenset[str]) -> tuple[bytes, bytes]:
    before = path.read_bytes()
    assert violations(path)
    repair(path)
    after = path.read_bytes()
    assert violations(path) == []
    assert_nothing_lost(before, after, may_change | {"parentUuid"})
    repair(path)
    assert path.read_bytes() == after
    return before, after


def test_a_prompt_sent_after_an_unanswered_call(tmp_path: Path) -> None:
    t = Transcript(separators=(", ", ": "))
    t.user("deploy")
    call = t.call("toolu_dep", "msg_1", name="Deploy")
    prompt = t.user("[Request interrupted by user for tool use]")
    t.text("Stopped.", "msg_2")
    path = t.write(tmp_path / f"{SESSION}.jsonl")
    before, after = _repaired(path)
    (new,) = _new_records(before, after)
    by_uuid = {r["uuid"]: r for r in records(after) if "uuid" in r}
    assert new["parentUuid"] == call and by_uuid[prompt]["parentUuid"] == new["uuid"]
    new_line = next(l for l in after.splitlines() if new["uuid"].encode() in l and b'"tool_result"' in l)
    assert b'", "' in new_line  # the file's own separators


def test_a_healthy_transcript_is_left_byte_identical(tmp_path: Path) -> None:
    t = Transcript(version="2.0.64")
    t.snapshot()
    t.user("hi")
    t.call("toolu_ok", "msg_1")
    t.result("toolu_ok")
    t.text("done", "msg_2")
    path = t.write(tmp_path / f"{SESSION}.jsonl", final_newline=False)
    before = path.read_bytes()
    assert violations(path) == []
    assert repair(path).result.changed == 0
    assert path.read_bytes() == before


def test_assistant_pieces_of_one_response_are_one_message_even_with_results_between(tmp_path: Path) -> None:
    t = Transcript()
    t.user("two reads")
    t.call("toolu_1", "msg_x", name="Read")
    t.result("toolu_1")
    t.call("toolu_2", "msg_x", name="Read")
    t.result("toolu_2")
    path = t.write(tmp_path / "s.jsonl")
    items = session_of(path).thread.items
    assert [m["role"] for m in items] == ["user", "assistant", "user"]
    assert [b["id"] for b in items[1]["content"]] == ["toolu_1", "toolu_2"]
    assert violations(path) == []


def test_a_torn_last_line_leaves_the_session_alone_and_says_so(tmp_path: Path) -> None:
    t = Transcript()
    t.user("go")
    t.call("toolu_t", "msg_1")
    path = tmp_path / "s.jsonl"
    path.write_bytes(t.bytes() + b'{"parentUuid":"x","isSidechain":fal')
    before = path.read_bytes()
    run = repair(path)
    assert path.read_bytes() == before
    assert any("incomplete" in p.message for p in run.result.problems)


def test_lint_names_the_file_and_line_of_the_call(tmp_path: Path) -> None:
    from threadfix.lint import LintOptions, LintRun

    t = Transcript()
    t.user("go")
    t.call("toolu_l", "msg_1")
    path = t.write(tmp_path / "s.jsonl")
    findings = [f for r in LintRun([str(path)], LintOptions(min_age=0)).results() for f in r.findings]
    dangling = [f for f in findings if f.code == "TF001"]
    assert dangling and dangling[0].address.source == str(path) and dangling[0].address.line == 2


@pytest.mark.parametrize("min_age, changed", [(0, 1), (10**6, 0)])
def test_min_age_reads_the_records_own_times(tmp_path: Path, min_age: float, changed: int) -> None:
    t = Transcript()
    t.user("go")
    t.call("toolu_m", "msg_1")
    path = t.write(tmp_path / "s.jsonl")
    import os

    os.utime(path, (0, 0))  # the file's mtime says "long ago"; the records say 2030, after the run's clock
    assert repair(path, min_age=min_age).result.changed == changed


def test_the_chain_ends_on_a_record_no_other_follows_even_when_an_earlier_one_is_newer(tmp_path: Path) -> None:
    """1.0.95 writes the ``/exit`` command records after a caveat record stamped later: the end is still the last."""
    t = Transcript(version="1.0.95")
    t.user("go")
    t.text("done", "msg_1")
    t.user("Caveat: The messages below were generated by the user while running local commands.", isMeta=True)
    t.records[-1]["timestamp"] = "2030-03-17T11:00:00.000Z"
    t.user("<command-name>/exit</command-name>")
    end = t.user("<local-command-stdout>(no content)</local-command-stdout>")
    path = t.write(tmp_path / "s.jsonl")
    assert chain_uuids(path)[-1] == end


def test_a_file_of_only_a_summary_is_a_transcript_with_no_messages(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"summary","summary":"Parser work","leafUuid":"00000000-0000-4000-8000-000000000001"}\n')
    assert session_of(path).thread.items == []
    run = repair(path)
    assert run.result.threads == 1 and run.result.changed == 0 and run.result.problems == []


def test_a_call_to_a_tool_left_to_others_waits(tmp_path: Path) -> None:
    t = Transcript()
    t.user("ship it")
    t.call("toolu_ask", "msg_1", name="AskUserQuestion")
    path = t.write(tmp_path / "s.jsonl")
    before = path.read_bytes()
    run = repair(path, leave_tools=("AskUser*",))
    assert run.result.waiting == 1 and run.result.changed == 0 and path.read_bytes() == before


def test_a_checkpoint_slice_whose_first_parent_is_outside_the_file(tmp_path: Path) -> None:
    """Entire-CLI copies of 2.0.x sessions start mid-session and end without a final newline."""
    t = Transcript(version="2.0.76")
    t.snapshot()
    t.system("stop_hook_summary", parent="ffffffff-0000-4000-8000-00000000ffff")
    t.user("and now the tests")
    t.call("toolu_slice", "msg_1")
    path = t.write(tmp_path / f"{SESSION}.jsonl", final_newline=False)
    before, after = _repaired(path)
    (new,) = _new_records(before, after)
    assert new["version"] == "2.0.76" and "sourceToolAssistantUUID" not in new
    assert not after.endswith(b"\n")
