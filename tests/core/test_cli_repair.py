"""``threadfix repair`` and ``undo`` as a user runs them: exit codes, stdout and stderr kept apart."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from threadfix.stores import is_sqlite

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_threads"
STUCK = {"id": "t1", "items": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "deploy"}]},
    {"type": "function_call", "call_id": "call_1", "name": "deploy", "arguments": "{}"},
]}


def threadfix(*args: str, stdin: bytes | None = None, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "XDG_STATE_HOME": str((cwd or ROOT) / ".state"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "threadfix", *args], input=stdin, capture_output=True, cwd=cwd,
                          env=environment, timeout=60)


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(orjson.dumps(STUCK) + b"\n")
    return path


def test_dry_run_lists_each_change_on_stdout_and_summarises_on_stderr(store: Path) -> None:
    result = threadfix("repair", "--dry-run", "--min-age", "0", str(store), cwd=store.parent)
    assert result.returncode == 0
    assert result.stdout.decode() == (f"{store}:1:id=t1#1: add error output for call_1 (deploy): aborted, "
                                      "the thread ends on this call\n")
    assert result.stderr.decode() == "threadfix: would repair 1 of 1 thread (1 insert output)\n"
    assert store.read_bytes() == orjson.dumps(STUCK) + b"\n"


def test_check_exits_1_when_something_would_change_and_0_after_repair(store: Path) -> None:
    assert threadfix("repair", "--check", "--min-age", "0", str(store), cwd=store.parent).returncode == 1
    repaired = threadfix("repair", "--min-age", "0", str(store), cwd=store.parent)
    assert repaired.returncode == 0, repaired.stderr
    assert "undo journal:" in repaired.stderr.decode()
    assert threadfix("repair", "--check", "--min-age", "0", str(store), cwd=store.parent).returncode == 0


def test_format_json_reports_each_edit(store: Path) -> None:
    result = threadfix("repair", "--dry-run", "--min-age", "0", "--format", "json", str(store), cwd=store.parent)
    document = json.loads(result.stdout)
    (thread,) = document["threads"]
    assert thread["edits"] == [{"action": "insert_output", "call_id": "call_1", "tool": "deploy", "item": "1",
                                "kind": "aborted", "cause": "thread_ended", "evidence": "the thread ends on this call"}]
    assert document["summary"]["changed"] == 1


def test_diff_shows_the_inserted_output_and_writes_nothing(store: Path) -> None:
    result = threadfix("repair", "--diff", "--min-age", "0", str(store), cwd=store.parent)
    text = result.stdout.decode()
    assert result.returncode == 0
    assert f"--- {store}:1:id=t1 (before)" in text
    assert '+      "type": "function_call_output",' in text
    assert all(not line.startswith("-  ") for line in text.splitlines()[2:])
    assert store.read_bytes() == orjson.dumps(STUCK) + b"\n"


def test_stdin_gives_the_repaired_document_and_nothing_else_on_stdout(tmp_path: Path) -> None:
    result = threadfix("repair", "--min-age", "0", "-", stdin=orjson.dumps(STUCK), cwd=tmp_path)
    assert result.returncode == 0
    repaired = orjson.loads(result.stdout)
    assert repaired["items"][2]["type"] == "function_call_output"
    assert b"repaired 1 of 1" in result.stderr
    assert not (tmp_path / ".state").exists(), "stdin repairs need no journal"


def test_a_bad_file_is_one_line_exit_2_and_the_batch_goes_on(tmp_path: Path, store: Path) -> None:
    (tmp_path / "bad.json").write_bytes(b'{"messages": [}')
    result = threadfix("repair", "--min-age", "0", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    errors = [line for line in result.stderr.decode().splitlines() if line.startswith("threadfix: error:")]
    assert len(errors) == 1
    assert errors[0].startswith(f"threadfix: error: {tmp_path}/bad.json:1:15: not valid JSON (unexpected character")
    assert b"function_call_output" in store.read_bytes()
    assert b"Traceback" not in result.stderr


@pytest.mark.parametrize("args, message", [
    (["repair", "nowhere.jsonl"], "threadfix: error: nowhere.jsonl: no such file or folder"),
    (["repair", "--dialect", "klingon", "x"], "threadfix: error: unknown dialect 'klingon'"),
    (["repair", "--min-age", "soon", "x"], "threadfix: error: --min-age: not a duration"),
    (["repair", "--format", "xml", "x"], "threadfix: error: unknown --format 'xml'"),
])
def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path, args, message) -> None:
    result = threadfix(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.decode().startswith(message)
    assert len(result.stderr.decode().strip().splitlines()) == 1
    assert result.stdout == b""


def test_undo_restores_the_samples_byte_for_byte(tmp_path: Path) -> None:
    copy = tmp_path / "samples"
    shutil.copytree(SAMPLES, copy)
    result = threadfix("repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(copy), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert threadfix("repair", "--check", "--min-age", "0", str(copy), cwd=tmp_path).returncode == 0
    (journal,) = (tmp_path / "j").iterdir()
    undone = threadfix("undo", str(journal), cwd=tmp_path)
    assert undone.returncode == 0
    for original in SAMPLES.rglob("*"):
        if original.is_file() and is_sqlite(original):  # a database gets its rows back, not its pages
            assert rows_of(copy / original.relative_to(SAMPLES)) == rows_of(original), original
        elif original.is_file():
            assert (copy / original.relative_to(SAMPLES)).read_bytes() == original.read_bytes(), original


def rows_of(db: Path) -> list[str]:
    """Every row of every table, as SQL; AUTOINCREMENT's counter aside (it stays ahead: ids are never reused)."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [line for line in conn.iterdump() if "sqlite_sequence" not in line]
    finally:
        conn.close()


def test_untrusted_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    evil = dict(STUCK, items=[STUCK["items"][0], dict(STUCK["items"][1], call_id="c\x1b]8;;http://evil\x07x\x1b[2J",
                                                       name="[link=http://evil]x[/link]\u202e")])
    path = tmp_path / "evil.jsonl"
    path.write_bytes(orjson.dumps(evil) + b"\n")
    result = threadfix("repair", "--dry-run", "--min-age", "0", str(path), cwd=tmp_path)
    assert b"\x1b" not in result.stdout + result.stderr
    assert "\u202e" not in result.stdout.decode()
    assert "\\x1b]8;;http://evil\\x07" in result.stdout.decode()


def test_python_dash_m_and_help() -> None:
    result = threadfix("--help")
    assert result.returncode == 0 and b"repair" in result.stdout
