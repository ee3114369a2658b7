"""A database left with a hot -journal by a write that was killed (issue #22): read-only commands say so and what to
run; repair rolls the journal back as SQLite does on a read-write open, says it did, then repairs."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_options import threadfix
from tests.sqlite.dbs import STUCK_CHAT, chat_table

#: an app's write killed mid-transaction: its pages spilled to the database, the journal left hot
KILLED_WRITE = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("PRAGMA cache_size=1")
conn.execute("BEGIN")
conn.execute("UPDATE threads SET messages = json_insert(messages, '$[#]', json('{\\"role\\": \\"user\\"}'))")
conn.execute("INSERT INTO threads SELECT id || '-copy', messages FROM threads")
os._exit(9)
"""


@pytest.fixture()
def crashed(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / ".state"))
    path = chat_table(tmp_path / "chats.db", (f"t{n}" for n in range(150)))
    subprocess.run([sys.executable, "-c", KILLED_WRITE, str(path)], check=False, timeout=60)
    journal = tmp_path / "chats.db-journal"
    assert journal.exists() and journal.stat().st_size > 0, "the killed write left no journal: the test would be vacuous"
    return path


@pytest.mark.parametrize("command", [["lint"], ["report"], ["repair", "--dry-run", "--min-age", "0"],
                                     ["repair", "--check", "--min-age", "0"]])
def test_read_only_commands_say_a_write_was_interrupted_and_what_to_run(capsysbinary, crashed: Path, command) -> None:
    code, out, err = threadfix(capsysbinary, *command, "chats.db")
    assert code == 2
    assert ("threadfix: error: chats.db: a write to this database was interrupted: its -journal holds an unfinished "
            "transaction") in err
    assert "run `threadfix repair` on it" in err and "readonly" not in err
    assert (crashed.parent / "chats.db-journal").stat().st_size > 0  # a read-only command changed nothing


def test_repair_rolls_the_journal_back_says_so_and_repairs(capsysbinary, crashed: Path) -> None:
    code, out, err = threadfix(capsysbinary, "repair", "--min-age", "0", "chats.db")
    assert code == 0, err
    assert ("threadfix: chats.db: a write to this database was interrupted; its -journal was rolled back, as SQLite "
            "does on opening it for writing") in err
    assert "repaired 150 of 150 threads" in err
    conn = sqlite3.connect(crashed)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    rows = conn.execute("SELECT id, messages FROM threads").fetchall()
    assert len(rows) == 150  # the killed write's copies were rolled back
    assert all(json.loads(messages)[:2] == STUCK_CHAT and len(json.loads(messages)) == 3 for _, messages in rows)
    assert threadfix(capsysbinary, "lint", "chats.db")[0] == 0  # readable again, and clean
