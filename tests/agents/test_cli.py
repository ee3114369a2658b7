"""The commands an engineer runs against their sessions folder: lint, report, repair (with --diff, --jobs and
undo), and an app still appending to a transcript while repair works on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.agents.sessions import SESSION, Transcript, rollout, session_of
from threadfix.errors import BusyError
from threadfix.stores.files import FileStore

ROOT = Path(__file__).resolve().parents[2]


def threadfix(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_STATE_HOME": str(home / ".state"), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "threadfix", *args], capture_output=True, env=env, timeout=60,
                          cwd=home)


@pytest.fixture()
def projects(tmp_path: Path) -> Path:
    """A ``~/.claude/projects``-like folder: a stuck session, its stuck subagent, a healthy one, a Codex rollout
    beside them, and a hidden folder the walk skips."""
    root = tmp_path / "projects"
    stuck = Transcript()
    stuck.user("deploy")
    stuck.call("toolu_1", "msg_1", name="Deploy")
    stuck.write(root / "-home-dev-project" / f"{SESSION}.jsonl")
    sub = Transcript(sidechain=True, agent="ab12cd3")
    sub.user("look around", parent=None)
    sub.call("toolu_s", "msg_s", name="Glob")
    sub.write(root / "-home-dev-project" / SESSION / "subagents" / "agent-ab12cd3.jsonl")
    healthy = Transcript(version="2.0.76")
    healthy.user("hi")
    healthy.text("hello", "msg_h")
    healthy.write(root / "-home-dev-other" / "1d2e3f40-0000-4000-8000-000000000001.jsonl", final_newline=False)
    rollout(root / "codex" / "rollout-2030-03-17T10-00-00-x.jsonl", [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "call_c"}])
    stuck.write(root / ".hidden" / "s.jsonl")
    return root


def test_lint_finds_each_stuck_session_by_file_and_line(projects: Path) -> None:
    result = threadfix("lint", str(projects), home=projects.parent)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.decode().splitlines()
    dangling = sorted(line.split(": ")[0] for line in lines if " TF001 " in line)
    assert dangling == sorted([f"{projects}/-home-dev-project/{SESSION}.jsonl:2#1.0",
                               f"{projects}/-home-dev-project/{SESSION}/subagents/agent-ab12cd3.jsonl:2#1.0",
                               f"{projects}/codex/rollout-2030-03-17T10-00-00-x.jsonl:4#1"])
    assert ".hidden" not in result.stdout.decode()


def test_report_counts_the_stuck_sessions(projects: Path) -> None:
    result = threadfix("report", "--format", "json", str(projects), home=projects.parent)
    assert result.returncode == 0, result.stderr
    totals = json.loads(result.stdout)["totals"]
    assert totals["threads"] == 4 and totals["dangling_calls"] == 3


def test_repair_diff_writes_nothing_then_repair_and_undo(projects: Path) -> None:
    files = sorted(p for p in projects.rglob("*.jsonl") if ".hidden" not in p.parts)
    before = {p: p.read_bytes() for p in files}
    diff = threadfix("repair", "--min-age", "0", "--diff", str(projects), home=projects.parent)
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.count(b"\n+{") == 3 and all(p.read_bytes() == before[p] for p in files)
    journals = projects.parent / "journal"
    done = threadfix("repair", "--min-age", "0", "--journal-dir", str(journals), str(projects), home=projects.parent)
    assert done.returncode == 0, done.stderr
    assert b"repaired 3 of 4 threads" in done.stderr
    changed = {p for p in files if p.read_bytes() != before[p]}
    assert len(changed) == 3 and projects / "-home-dev-other" / "1d2e3f40-0000-4000-8000-000000000001.jsonl" not in changed
    (journal,) = journals.iterdir()
    undo = threadfix("undo", str(journal), home=projects.parent)
    assert undo.returncode == 0, undo.stderr
    assert all(p.read_bytes() == before[p] for p in files)


def test_jobs_spreads_a_folder_of_sessions_and_writes_the_same_bytes(projects: Path, tmp_path: Path) -> None:
    import shutil

    other = tmp_path / "copy"
    shutil.copytree(projects, other)
    one = threadfix("--jobs", "1", "repair", "--min-age", "0", str(projects), home=projects.parent)
    two = threadfix("--jobs", "2", "repair", "--min-age", "0", str(other), home=projects.parent)
    assert one.returncode == two.returncode == 0, (one.stderr, two.stderr)
    for path in projects.rglob("*.jsonl"):
        assert path.read_bytes() == (other / path.relative_to(projects)).read_bytes(), path


def test_an_append_while_repair_works_is_never_lost(tmp_path: Path) -> None:
    """Claude Code appends while a session is open: the swap is refused (busy, retry), the file keeps the app's
    line whole and nothing of the repair."""
    t = Transcript()
    t.user("go")
    t.call("toolu_a", "msg_1")
    path = t.write(tmp_path / "s.jsonl")
    store = FileStore(path, str(path), jsonl=True)
    (thread,) = list(store.threads())
    from threadfix import dialects
    from threadfix.repair import repair_items

    _, items = repair_items(thread.items, dialects.get("anthropic"))
    data = store.encode(thread, items)
    writer = store.writer()
    writer.replace(thread, data)
    appended = orjson.dumps({"parentUuid": t.last, "type": "user", "uuid": "late", "timestamp": "2030-03-17T11:00:00Z",
                             "message": {"role": "user", "content": "more"}})
    with open(path, "ab") as handle:
        handle.write(appended + b"\n")
    with pytest.raises(BusyError):
        writer.commit()
    writer.abort()
    assert path.read_bytes() == t.bytes() + appended + b"\n"
    assert session_of(path).thread.items[-1]["content"][-1]["text"] == "more"


def test_a_session_piped_through_stdin_comes_out_repaired(tmp_path: Path) -> None:
    t = Transcript()
    t.user("go")
    t.call("toolu_in", "msg_1")
    data = t.bytes()
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / ".state"), "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "threadfix", "repair", "--min-age", "0", "-"], input=data,
                            capture_output=True, env=env, timeout=60, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(data) and result.stdout.count(b"\n") == data.count(b"\n") + 1
    assert b'"tool_use_id":"toolu_in"' in result.stdout
