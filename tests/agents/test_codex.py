"""Codex CLI rollouts, stuck in each shape users meet, repaired so that ``codex resume`` replays a history the
Responses API accepts, with every original line kept."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agents.sessions import records, repair, rollout, session_of, violations


def user(text: str) -> dict:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def call(call_id: str, name: str = "exec_command") -> dict:
    return {"type": "function_call", "name": name, "arguments": '{"cmd":"ls"}', "call_id": call_id}


def output(call_id: str, text: str = "ok") -> dict:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def _repaired(path: Path) -> tuple[bytes, bytes]:
    before = path.read_bytes()
    assert violations(path), "the fixture must be stuck"
    assert repair(path).result.changed == 1
    after = path.read_bytes()
    assert violations(path) == []
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert [line for line in new if line in old] == old  # every original line, in order, byte for byte
    assert repair(path).result.changed == 0 and path.read_bytes() == after
    return before, after


def test_a_call_at_the_end_gets_an_output_line_right_after_it(tmp_path: Path) -> None:
    path = rollout(tmp_path / "rollout-a.jsonl", [user("list"), call("call_1"),
                                                  {"record": "event_msg", "payload": {"type": "token_count"}}])
    before, after = _repaired(path)
    lines = after.splitlines()
    new = json.loads(lines[lines.index(before.splitlines()[3]) + 1])
    assert new["type"] == "response_item" and list(new) == ["timestamp", "type", "payload"]
    assert new["payload"]["type"] == "function_call_output" and new["payload"]["call_id"] == "call_1"
    assert new["timestamp"] == json.loads(before.splitlines()[3])["timestamp"]  # its call's: a rerun writes the same


def test_an_interrupted_custom_tool_call_gets_a_custom_tool_call_output(tmp_path: Path) -> None:
    patch = {"type": "custom_tool_call", "status": "completed", "call_id": "call_p", "name": "apply_patch",
             "input": "*** Begin Patch\n*** End Patch"}
    path = rollout(tmp_path / "rollout-b.jsonl", [user("fix it"), patch, user("are you done?")])
    before, after = _repaired(path)
    (new,) = [r for r in records(after) if r not in records(before)]
    assert new["payload"]["type"] == "custom_tool_call_output" and new["payload"]["call_id"] == "call_p"


def test_a_stuck_call_in_a_compacted_replacement_history(tmp_path: Path) -> None:
    compacted = {"record": "compacted", "payload": {"message": "summary", "replacement_history": [
        user("earlier"), call("call_c"), {"type": "message", "role": "user",
                                          "content": [{"type": "input_text", "text": "summary"}]}]}}
    path = rollout(tmp_path / "rollout-c.jsonl", [user("old"), call("call_gone"), output("call_gone"), compacted,
                                                  user("next"), call("call_after")])
    items = session_of(path).thread.items
    assert [i.get("call_id") for i in items if i["type"] == "function_call"] == ["call_c", "call_after"]
    before, after = _repaired(path)
    added = [r["payload"]["call_id"] for r in records(after) if r not in records(before)]
    assert sorted(added) == ["call_after", "call_c"]


def test_an_orphan_output_after_a_compaction_becomes_a_message(tmp_path: Path) -> None:
    compacted = {"record": "compacted", "payload": {"message": "summary", "replacement_history": [user("earlier")]}}
    path = rollout(tmp_path / "rollout-d.jsonl", [user("old"), call("call_o"), compacted, output("call_o", "done")])
    before = path.read_bytes()
    assert violations(path)
    repair(path)
    after = path.read_bytes()
    assert violations(path) == []
    changed = [r for r in records(after) if r not in records(before)]
    assert len(changed) == 1 and changed[0]["payload"]["type"] == "message" and "done" in json.dumps(changed[0])
    assert len(after.splitlines()) == len(before.splitlines())


def test_the_pre_envelope_shape_with_crlf_keeps_its_endings_and_gets_a_bare_item(tmp_path: Path) -> None:
    path = tmp_path / "rollout-old.jsonl"
    lines = [{"id": "s1", "timestamp": "2025-09-10T10:00:00.000Z", "instructions": None, "git": {}},
             {"record_type": "state"}, user("run"), {"record_type": "state"}, call("call_x"),
             {"record_type": "state"}]
    path.write_bytes(b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\r\n" for line in lines))
    before, after = _repaired(path)
    assert after.count(b"\r\n") == len(after.splitlines()) and b"\n" not in after.replace(b"\r\n", b"")
    (new,) = [r for r in records(after) if r not in records(before)]
    assert new == {"type": "function_call_output", "call_id": "call_x", "output": new["output"]}


def test_a_healthy_rollout_is_left_byte_identical(tmp_path: Path) -> None:
    path = rollout(tmp_path / "rollout-e.jsonl", [user("hi"), call("call_h"), output("call_h"),
                                                  {"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}])
    before = path.read_bytes()
    assert violations(path) == []
    assert repair(path).result.changed == 0 and path.read_bytes() == before


def test_an_old_compaction_keeps_the_user_messages_and_the_summary(tmp_path: Path) -> None:
    """Before replacement_history, a compacted record left the user messages so far and the summary."""
    compacted = {"record": "compacted", "payload": {"message": "we listed the files"}}
    path = rollout(tmp_path / "rollout-f.jsonl", [user("list"), call("call_1"), output("call_1"), compacted,
                                                  output("call_1", "late")])
    items = session_of(path).thread.items
    assert [i["type"] for i in items] == ["message", "message", "function_call_output"]
    assert items[1]["content"][0]["text"] == "we listed the files"
    assert violations(path)
    repair(path)
    assert violations(path) == []


def test_a_repair_the_records_cannot_hold_is_left_alone_and_said(tmp_path: Path) -> None:
    """An output written before its call would have to move; a rollout's lines stay where they are, so the file is
    left as it is, reported, rather than written unrepaired and counted repaired."""
    path = rollout(tmp_path / "rollout-g.jsonl", [user("go"), output("call_1"), call("call_1")])
    before = path.read_bytes()
    run = repair(path)
    assert run.result.changed == 0 and run.result.left_alone == 1
    assert path.read_bytes() == before


def test_a_rolled_back_turn_is_not_replayed(tmp_path: Path) -> None:
    """``thread_rolled_back`` drops the last user turns from the history Codex replays: a call left open in a turn
    rolled back is not sent, so it is not stuck."""
    developer = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]}
    path = rollout(tmp_path / "rollout-h.jsonl", [developer, user("one"), call("call_1"), output("call_1"),
                                                  user("two"), call("call_2"),
                                                  {"record": "event_msg", "payload": {"type": "thread_rolled_back",
                                                                                      "num_turns": 1}}])
    items = session_of(path).thread.items
    assert [i.get("call_id") for i in items] == [None, None, "call_1", "call_1"]
    assert violations(path) == [] and repair(path).result.changed == 0


def test_an_old_compaction_keeps_what_came_before_the_first_user_message(tmp_path: Path) -> None:
    developer = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]}
    path = rollout(tmp_path / "rollout-i.jsonl", [developer, user("list"), call("call_1"), output("call_1"),
                                                  {"record": "compacted", "payload": {"message": "s"}}])
    assert [i.get("role") for i in session_of(path).thread.items] == ["developer", "user", "user"]
