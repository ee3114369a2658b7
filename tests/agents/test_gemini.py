"""Gemini CLI chats with a cancelled call (``result: null``, as the app records one), repaired so that the contents
``gemini --resume`` rebuilds hold a response for every call, in both of the app's file forms."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agents.sessions import repair, session_of, violations

HEADER = {"sessionId": "7d1c2b9e-4f3a-4e8b-9c1d-2a6b5e4f3c21", "projectHash": "ab" * 32,
          "startTime": "2030-03-17T10:00:00.000Z", "lastUpdated": "2030-03-17T10:00:00.000Z", "kind": "main"}


def user(n: int, text: str) -> dict:
    return {"id": f"u{n}", "timestamp": f"2030-03-17T10:00:{n:02d}.000Z", "type": "user", "content": [{"text": text}]}


def gemini(n: int, calls: list[dict], content: str = "") -> dict:
    return {"id": f"g{n}", "timestamp": f"2030-03-17T10:00:{n:02d}.000Z", "type": "gemini", "content": content,
            "thoughts": [{"subject": "Reading", "description": "the file", "timestamp": "2030-03-17T10:00:00.000Z"}],
            "tokens": {"input": 10, "output": 5}, "model": "gemini-3-flash-preview", "toolCalls": calls}


def tool_call(call_id: str, answered: bool) -> dict:
    result = [{"functionResponse": {"id": call_id, "name": "read_file", "response": {"output": "text"}}}]
    return {"id": call_id, "name": "read_file", "args": {"file_path": "README.md"},
            "result": result if answered else None, "status": "success" if answered else "cancelled",
            "timestamp": "2030-03-17T10:00:00.000Z", "displayName": "ReadFile", "renderOutputAsMarkdown": True}


def jsonl(path: Path, records: list[dict]) -> Path:
    path.write_bytes(b"".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
                              for r in records))
    return path


def test_a_cancelled_call_in_jsonl_is_answered_by_re_appending_its_message(tmp_path: Path) -> None:
    first = gemini(2, [tool_call("c1", True), tool_call("c2", False)])
    path = jsonl(tmp_path / "session-2030-03-17T10-00-7d1c2b9e.jsonl", [
        HEADER, user(1, "read it"), {"$set": {"lastUpdated": "2030-03-17T10:00:01.000Z"}}, first,
        {"id": "i3", "timestamp": "2030-03-17T10:00:03.000Z", "type": "info", "content": "Request cancelled."},
        user(4, "try again")])
    before = path.read_bytes()
    assert violations(path)
    assert repair(path).result.changed == 1
    after = path.read_bytes()
    assert after.startswith(before)  # every line kept; the answered message re-appended, as the app does
    appended = json.loads(after[len(before):])
    assert appended["id"] == "g2" and appended["toolCalls"][0] == first["toolCalls"][0]
    (response,) = appended["toolCalls"][1]["result"]
    assert response["functionResponse"]["id"] == "c2" and "error" in response["functionResponse"]["response"]
    assert appended["toolCalls"][1]["status"] == "cancelled"
    assert violations(path) == []
    items = session_of(path).thread.items
    assert [c["role"] for c in items] == ["user", "model", "user", "user"]  # the re-appended copy keeps its place
    assert repair(path).result.changed == 0 and path.read_bytes() == after


def test_a_rewound_message_is_not_read_and_a_checkpoint_replaces_the_messages(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "session-b.jsonl", [
        HEADER, user(1, "one"), gemini(2, [tool_call("c9", False)]), {"$rewindTo": "g2"},
        {"$set": {"messages": [user(5, "restored"), gemini(6, [tool_call("c6", True)])]}}, user(7, "/help")])
    items = session_of(path).thread.items
    assert [c["role"] for c in items] == ["user", "model", "user"]
    assert violations(path) == [] and repair(path).result.changed == 0


def test_the_legacy_single_object_is_rewritten_in_its_own_layout(tmp_path: Path) -> None:
    document = {**HEADER, "messages": [user(1, "read"), gemini(2, [tool_call("c1", False)])]}
    path = tmp_path / "session-2030-03-17T10-00-7d1c2b9e.json"
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    assert violations(path)
    assert repair(path).result.changed == 1
    after = path.read_text()
    repaired = json.loads(after)
    assert after == json.dumps(repaired, indent=2, ensure_ascii=False) + "\n"
    assert repaired["messages"][1]["toolCalls"][0]["result"][0]["functionResponse"]["id"] == "c1"
    assert {k: v for k, v in repaired.items() if k != "messages"} == HEADER
    assert violations(path) == []
