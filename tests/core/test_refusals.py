"""Every way repair refuses a call, end to end: the line that names the thread, the ids and why, the outcome in
``--format json``, and an exit code that is not success (1: something is left for a person). A thread refused
whole is never reported as healthy, and one with other repairs still gets them.

Also the waiting path (a call its format marks as waiting at the end of its thread): left whole, exit 0, and
``--answer-waiting`` answers it; lint agrees.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.reliability.harness import cli as threadfix

USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}


def fc(call_id: Any, name: str = "shell") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}


def cli(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    """``threadfix ARGS`` in this process: exit code, stdout and stderr apart."""
    ran = threadfix(*args, stdin=stdin)
    return ran.code, ran.stdout.decode(), ran.stderr


#: (name, the thread's items, the ids named, the reason repair gives)
REFUSALS = [
    ("no id", [USER, {"type": "function_call", "name": "shell", "arguments": "{}"}, USER], "(no id)",
     "the call has no id, so no output can be paired with it"),
    ("blank id", [USER, fc(""), USER], '""',
     "the call's id is blank, which providers refuse, so no output can be paired with it; give the call its id or "
     "remove it by hand"),
    ("blank name", [USER, fc("call_n", name=""), USER], "call_n",
     "the call names no tool, which providers refuse whether it is answered or not; name the tool or remove the "
     "call by hand"),
    ("ids shared in one turn", [USER, fc("call_d"), fc("call_d"), USER], "call_d",
     "2 calls share the id call_d, two of them in one turn, so order cannot tell their outputs apart; refused whole"),
    ("unanswerable", [USER, {"type": "computer_call", "call_id": "call_c", "id": "cu_1", "action": {"type": "click"},
                             "pending_safety_checks": [], "status": "completed"}, USER], "call_c",
     "a computer_call cannot be answered with an invented output; answer or remove it by hand"),
]


@pytest.mark.parametrize(("name", "items", "ids", "reason"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_every_refusal_is_said_with_its_ids_and_reason_and_fails_the_run(tmp_path: Path, name: str, items: list,
                                                                        ids: str, reason: str) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(orjson.dumps(items))
    before = path.read_bytes()
    code, out, err = cli("repair", "--min-age", "0", str(path))
    assert code == 1, (out, err)
    lines = out.splitlines()
    assert lines and all(line.startswith(f"{path}#1") or line.startswith(f"{path}#2") for line in lines), out
    assert all(line.endswith(reason) for line in lines), out
    assert "not repaired" in lines[0]
    assert err.splitlines()[-1].startswith("threadfix: repaired 0 of 1 thread; ")
    assert "left alone" in err
    assert path.read_bytes() == before

    code, out, _ = cli("repair", "--dry-run", "--min-age", "0", "--format", "json", str(path))
    assert code == 1
    thread = orjson.loads(out)["threads"][0]
    assert thread["status"] == "refused"
    assert thread["message"] == f"not repaired: call {ids}: {reason}"
    assert {skip["reason"] for skip in thread["skips"]} == {reason}
    assert orjson.loads(out)["summary"]["skipped_calls"] == len(thread["skips"])


def test_a_refusal_in_a_document_read_from_stdin_is_said_on_stderr() -> None:
    items = [USER, fc("call_d"), fc("call_d"), USER]
    code, out, err = cli("repair", "--min-age", "0", "-", stdin=orjson.dumps(items))
    assert code == 1
    assert orjson.loads(out) == items  # the document, unchanged
    assert err.splitlines()[0] == (
        "threadfix: error: <stdin>: not repaired: call call_d: 2 calls share the id call_d, two of them in one turn, so "
        "order cannot tell their outputs apart; refused whole")


def test_a_refused_call_does_not_stop_the_other_repairs_but_still_fails_the_run(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(orjson.dumps([USER, fc(""), USER, fc("call_ok"), USER]))
    code, out, err = cli("repair", "--min-age", "0", str(path))
    assert code == 1
    assert f"{path}#3: add error output for call_ok (shell)" in out
    assert f'{path}#1: not repaired "": the call\'s id is blank' in out
    assert "repaired 1 of 1 thread (1 insert output); 1 call left alone" in err
    assert [item.get("call_id") for item in orjson.loads(path.read_bytes())][3:5] == ["call_ok", "call_ok"]


def test_reused_ids_that_order_tells_apart_are_repaired_and_succeed(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(orjson.dumps([USER, fc("call_1"), USER, fc("call_1"),
                                   {"type": "function_call_output", "call_id": "call_1", "output": "done"}]))
    code, out, err = cli("repair", "--min-age", "0", str(path))
    assert code == 0, (out, err)
    assert out == f"{path}#1: add error output for call_1 (shell): aborted, item 2 is a later user message\n"
    repaired = orjson.loads(path.read_bytes())
    assert [item.get("type") for item in repaired] == [
        "message", "function_call", "function_call_output", "message", "function_call", "function_call_output"]
    assert repaired[-1]["output"] == "done"  # the real output stays with the later call
    code, out, _ = cli("lint", str(path))
    assert code == 0
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()] == ["TF902"]  # only "repaired by threadfix"


# --------------------------------------------------------------------------- waiting calls

STAMP = "2026-03-01T10:00:00Z"
DEFERRED = [
    {"parts": [{"content": "delete a", "timestamp": STAMP, "part_kind": "user-prompt"}], "kind": "request"},
    {"parts": [{"tool_name": "delete_file", "args": {"path": "a"}, "tool_call_id": "c1", "part_kind": "tool-call"}],
     "timestamp": STAMP, "kind": "response", "state": "complete"},
]


def test_a_call_its_format_marks_waiting_is_left_whole_and_answered_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(orjson.dumps(DEFERRED))
    before = path.read_bytes()
    code, out, err = cli("repair", "--min-age", "0", str(path))
    assert code == 0, err
    assert out == (f"{path}: skipped: its call c1 to delete_file waits on a person or another process (its format "
                   "marks it so) and ends the thread; --answer-waiting answers it\n")
    assert "1 waiting on a person or another process" in err
    assert path.read_bytes() == before
    code, out, _ = cli("lint", "--select", "TF001", str(path))
    assert (code, out) == (0, "")  # lint agrees: pending, not dangling

    code, out, _ = cli("lint", "--select", "TF001", "--answer-waiting", str(path))
    assert code == 1 and "TF001" in out
    code, out, _ = cli("repair", "--min-age", "0", "--answer-waiting", str(path))
    assert code == 0
    assert "add error output for c1 (delete_file)" in out
    assert orjson.loads(path.read_bytes())[-1]["parts"][0]["outcome"] == "interrupted"


def test_refusals_found_by_jobs_workers_are_said_and_fail_the_run(tmp_path: Path, monkeypatch) -> None:
    from threadfix import parallel

    monkeypatch.setattr(parallel, "MIN_SHARD_BYTES", 256)
    monkeypatch.setattr(parallel, "MAX_SHARD_BYTES", 512)
    path = tmp_path / "t.jsonl"
    refused = {"items": [USER, fc("call_d"), fc("call_d"), USER]}
    fine = {"items": [USER, fc("call_ok"), USER]}
    path.write_bytes(b"".join(orjson.dumps(t) + b"\n" for t in [refused, fine] * 6))
    code, out, err = cli("--jobs", "2", "repair", "--dry-run", "--min-age", "0", str(path))
    assert code == 1, err
    lines = out.splitlines()
    assert len([line for line in lines if "not repaired call_d" in line]) == 12
    assert len([line for line in lines if "add error output for call_ok" in line]) == 6
    assert "would repair 6 of 12 threads (6 insert output); 12 calls left alone" in err


def test_a_refusal_in_a_waiting_thread_is_said_too(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(orjson.dumps([USER, fc(""), USER, fc("call_w", name="approve_refund")]))
    code, out, _ = cli("repair", "--min-age", "0", "--leave-tool", "approve_*", str(path))
    assert code == 1
    assert out.splitlines() == [
        f"{path}: skipped: its call call_w waits on approve_refund, a tool left to others (--leave-tool)",
        f'{path}#1: not repaired "": {BLANK}']


BLANK = REFUSALS[1][3]
