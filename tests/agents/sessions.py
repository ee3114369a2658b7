"""Session files written in the shape the apps write them (from the real files' field sets and orders), and the
checks every repaired session must pass: the conversation the app rebuilds is one the provider accepts, nothing
of the original is lost, the chain is linear and its end has not moved."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from threadfix import dialects
from threadfix.batch import RepairRun, RunOptions
from threadfix.stores.files import FileStore

SESSION = "0b6f3c1e-7a51-4c2d-9f0e-5d8a2b4c6e10"
NOW = 1_900_000_000.0

#: the pairing refusals (what makes a session stuck); a fixture that has none of them is accepted
PAIRING = {"tool-use-without-result", "unexpected-tool-result", "multiple-tool-results", "tool-result-not-leading",
           "missing-output", "orphan-output", "response-count", "response-turn-misplaced"}


def uid(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-{n:012x}"


class Transcript:
    """A Claude Code transcript built record by record; ``parent`` defaults to the record written before."""

    def __init__(self, version: str = "2.1.39", sidechain: bool = False, agent: str | None = None,
                 slug: str | None = "quiet-river-otter", separators: tuple[str, str] = (",", ":")) -> None:
        self.version = version
        self.sidechain = sidechain
        self.agent = agent
        self.slug = slug
        self.separators = separators
        self.records: list[dict[str, Any]] = []
        self.n = 0
        self.last: str | None = None
        self.second = 0

    def _base(self, parent: str | None) -> dict[str, Any]:
        self.n += 1
        self.second += 1
        record: dict[str, Any] = {"parentUuid": parent, "isSidechain": self.sidechain, "userType": "external",
                                  "cwd": "/home/dev/project", "sessionId": SESSION, "version": self.version,
                                  "gitBranch": "main"}
        if self.agent:
            record["agentId"] = self.agent
        if self.slug and not self.version.startswith("1."):
            record["slug"] = self.slug
        return record

    def _stamp(self) -> str:
        return f"2030-03-17T10:{self.second // 60:02d}:{self.second % 60:02d}.000Z"

    def _put(self, record: dict[str, Any], tail: dict[str, Any] | None = None) -> str:
        record["uuid"] = uid(self.n)
        record["timestamp"] = self._stamp()
        record.update(tail or {})
        self.records.append(record)
        self.last = record["uuid"]
        return record["uuid"]

    def user(self, content: Any, parent: str | None = "", **extra: Any) -> str:
        record = self._base(self.last if parent == "" else parent)
        record.update(type="user", message={"role": "user", "content": content})
        record.update(extra)
        return self._put(record)

    def result(self, call: str, text: str = "ok", parent: str | None = "", source: str | None = None,
               is_error: bool = False) -> str:
        block: dict[str, Any] = {"tool_use_id": call, "type": "tool_result", "content": text}
        if is_error:
            block["is_error"] = True
        record = self._base(self.last if parent == "" else parent)
        record.update(type="user", message={"role": "user", "content": [block]})
        tail: dict[str, Any] = {"toolUseResult": {"stdout": text, "stderr": "", "interrupted": False}}
        if not self.version.startswith(("1.", "2.0")):
            tail["sourceToolAssistantUUID"] = source or (self.last if parent == "" else parent)
        return self._put(record, tail)

    def assistant(self, block: dict[str, Any], message_id: str, parent: str | None = "",
                  stop: str | None = None) -> str:
        record = self._base(self.last if parent == "" else parent)
        record.update(message={"model": "claude-opus-4-6", "id": message_id, "type": "message", "role": "assistant",
                               "content": [block], "stop_reason": stop, "stop_sequence": None,
                               "usage": {"input_tokens": 3, "output_tokens": 9}},
                      requestId=f"req_{message_id}", type="assistant")
        return self._put(record)

    def text(self, text: str, message_id: str, **kw: Any) -> str:
        return self.assistant({"type": "text", "text": text}, message_id, **kw)

    def call(self, call: str, message_id: str, name: str = "Bash", **kw: Any) -> str:
        return self.assistant({"type": "tool_use", "id": call, "name": name, "input": {"command": "ls"}},
                              message_id, **kw)

    def progress(self, parent: str | None = "") -> str:
        record = self._base(self.last if parent == "" else parent)
        record.update(type="progress", data={"type": "hook_progress", "hookEvent": "PostToolUse"},
                      toolUseID="toolu_x", parentToolUseID="toolu_x")
        return self._put(record)

    def system(self, subtype: str, parent: str | None = "", **extra: Any) -> str:
        record = self._base(self.last if parent == "" else parent)
        record.update(type="system", subtype=subtype, content="", isMeta=False, level="info", **extra)
        return self._put(record)

    def snapshot(self) -> None:
        self.records.append({"type": "file-history-snapshot", "messageId": uid(900 + len(self.records)),
                             "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False})

    def bytes(self, final_newline: bool = True, crlf: bool = False) -> bytes:
        ending = "\r\n" if crlf else "\n"
        text = ending.join(json.dumps(r, separators=self.separators, ensure_ascii=False) for r in self.records)
        return (text + (ending if final_newline else "")).encode()

    def write(self, path: Path, **kw: Any) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.bytes(**kw))
        return path


def rollout_line(kind: str, payload: Any, second: int = 0) -> dict[str, Any]:
    return {"timestamp": f"2030-03-17T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def rollout(path: Path, items: list[dict[str, Any]], *, meta: bool = True, crlf: bool = False) -> Path:
    """A Codex rollout: session_meta, turn_context, then each item as a response_item (dicts with ``type`` in
    ``session_meta|event_msg|turn_context|compacted`` pass as whole records)."""
    records: list[Any] = []
    if meta:
        records.append(rollout_line("session_meta", {"id": SESSION, "timestamp": "2030-03-17T10:00:00.000Z",
                                                     "cwd": "/home/dev/project", "originator": "codex_cli_rs",
                                                     "cli_version": "0.104.0", "source": "cli",
                                                     "model_provider": "openai"}))
        records.append(rollout_line("turn_context", {"cwd": "/home/dev/project", "model": "gpt-5.3-codex"}))
    for n, item in enumerate(items, 1):
        if item.get("record") is not None:
            records.append(rollout_line(item["record"], item["payload"], n))
        else:
            records.append(rollout_line("response_item", item, n))
    ending = "\r\n" if crlf else "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(json.dumps(r, separators=(",", ":")) + ending for r in records).encode())
    return path


def repair(*paths: Path, jobs: int = 1, **options: Any) -> RepairRun:
    run = RepairRun([str(p) for p in paths], RunOptions(min_age=options.pop("min_age", 0), now=NOW, jobs=jobs,
                                                        journal_dir=options.pop("journal_dir", None), **options))
    list(run.outcomes())
    return run


def session_of(path: Path) -> Any:
    """The session the file medium reads from ``path`` (its container's mapping)."""
    store = FileStore(path, str(path), jsonl=path.suffix == ".jsonl")
    threads = list(store.threads())
    assert len(threads) == 1, threads
    assert store.session is not None, threads
    return store.session


def violations(path: Path) -> list[Any]:
    """The pairing refusals of the conversation the app rebuilds from the file."""
    session = session_of(path)
    dialect = dialects.get(session.thread.dialect)
    return [v for v in dialect.check(session.thread.items) if v.rule in PAIRING]


def records(data: bytes) -> list[Any]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def assert_nothing_lost(before: bytes, after: bytes, may_change: frozenset[str] = frozenset({"parentUuid"})) -> None:
    """Every original line is in the repaired file: byte for byte, or (a re-linked record) with only the fields
    ``may_change`` changed; line endings and the final newline as they were."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert before.endswith(b"\n") == after.endswith(b"\n")
    assert (b"\r\n" in before) == (b"\r\n" in after)
    kept = Counter(new)
    for line in old:
        if kept[line] > 0:
            kept[line] -= 1
            continue
        value = json.loads(line)
        twins = [json.loads(n) for n in new if n.strip() and json.loads(n).get("uuid", object()) == value.get("uuid")]
        assert len(twins) == 1, f"line lost: {line[:120]!r}"
        changed = {k for k in set(value) | set(twins[0]) if value.get(k) != twins[0].get(k)}
        assert changed <= may_change, changed
    assert len(new) >= len(old)


def chain_uuids(path: Path) -> list[str]:
    """The uuids of the records on the chain the app resumes (what the container walks)."""
    session = session_of(path)
    return [session.lines[i].value["uuid"] for i in session.chain]
