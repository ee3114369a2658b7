"""Databases for the SQLite tests, in the shapes real apps use, and helpers to read them back."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

OLD = "2020-01-01 00:00:00"


def stuck(n: int) -> list[dict[str, Any]]:
    """A Responses thread whose tool call never got an output, and the user moved on."""
    return [
        {"type": "message", "role": "user", "content": f"hello {n}", "app_id": f"seed_u{n}"},
        {"type": "function_call", "call_id": f"stuck_{n}", "name": "search", "arguments": "{\"q\": \"x\"}",
         "app_id": f"seed_c{n}"},
        {"type": "message", "role": "user", "content": "are you there?", "app_id": f"seed_m{n}"},
    ]


def healthy(n: int) -> list[dict[str, Any]]:
    return [
        {"type": "message", "role": "user", "content": f"hi {n}", "app_id": f"seed_h{n}"},
        {"type": "function_call", "call_id": f"ok_{n}", "name": "search", "arguments": "{}", "app_id": f"seed_hc{n}"},
        {"type": "function_call_output", "call_id": f"ok_{n}", "output": "found", "app_id": f"seed_ho{n}"},
    ]


def create(path: Path, layout: str, threads: dict[str, list[dict[str, Any]]], *, journal_mode: str = "delete") -> Path:
    """A database of ``layout`` ("thread", "item" or "agents") holding ``threads`` (id -> items)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(f"PRAGMA journal_mode={journal_mode}")
    conn.execute("PRAGMA synchronous = OFF")  # building a fixture; its durability is not under test
    conn.execute("BEGIN")
    if layout == "thread":
        conn.execute("CREATE TABLE conversations (id TEXT PRIMARY KEY, title TEXT, messages TEXT NOT NULL, updated_at TEXT)")
        for key, items in threads.items():
            conn.execute("INSERT INTO conversations VALUES (?, ?, ?, ?)", (key, f"title {key}", json.dumps(items), OLD))
    elif layout == "item":
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, thread_id TEXT NOT NULL, position INTEGER NOT NULL, "
                     "data TEXT NOT NULL, created_at TEXT, UNIQUE (thread_id, position))")
        for key, items in threads.items():
            for position, item in enumerate(items):
                conn.execute("INSERT INTO items (thread_id, position, data, created_at) VALUES (?, ?, ?, ?)",
                             (key, position, json.dumps(item), OLD))
    elif layout == "agents":
        # the schema SQLiteSession (openai-agents) creates
        conn.execute("CREATE TABLE agent_sessions (session_id TEXT PRIMARY KEY, created_at TIMESTAMP DEFAULT "
                     "CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)")
        conn.execute("CREATE TABLE agent_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, "
                     "message_data TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, FOREIGN KEY "
                     "(session_id) REFERENCES agent_sessions (session_id) ON DELETE CASCADE)")
        conn.execute("CREATE INDEX idx_agent_messages_session_id ON agent_messages (session_id, id)")
        # interleave the sessions' rows, as concurrent sessions do
        longest = max((len(items) for items in threads.values()), default=0)
        for key in threads:
            conn.execute("INSERT INTO agent_sessions VALUES (?, ?, ?)", (key, OLD, OLD))
        for position in range(longest):
            for key, items in threads.items():
                if position < len(items):
                    conn.execute("INSERT INTO agent_messages (session_id, message_data, created_at) VALUES (?, ?, ?)",
                                 (key, json.dumps(items[position]), OLD))
    else:
        raise ValueError(layout)
    conn.execute("COMMIT")
    conn.close()
    return path


#: an OpenAI Chat thread whose refund call never got its tool message
STUCK_CHAT = [{"role": "user", "content": "refund"},
              {"role": "assistant", "content": None,
               "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "refund", "arguments": "{}"}}]}]


def chat_table(path: Path, keys: Iterable[str]) -> Path:
    """A ``threads(id, messages)`` table, as a Chat app keeps one, whose every thread is :data:`STUCK_CHAT`."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, messages TEXT)")
    conn.executemany("INSERT INTO threads VALUES (?, ?)", [(key, json.dumps(STUCK_CHAT)) for key in keys])
    conn.commit()
    conn.close()
    return path


def query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """The rows of one statement, read through a read-only connection."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def read(path: Path, layout: str) -> dict[str, list[dict[str, Any]]]:
    """Every thread as the app reads it back (id -> items, in the app's order)."""
    if layout == "thread":
        return {key: json.loads(raw) for key, raw in query(path, "SELECT id, messages FROM conversations ORDER BY id")}
    if layout == "item":
        rows = query(path, "SELECT thread_id, data FROM items ORDER BY thread_id, position")
    else:
        rows = query(path, "SELECT session_id, message_data FROM agent_messages ORDER BY session_id, id")
    threads: dict[str, list[dict[str, Any]]] = {}
    for key, raw in rows:
        threads.setdefault(key, []).append(json.loads(raw))
    return threads


def dump(path: Path) -> list[str]:
    """The whole database as SQL text (for "nothing changed" checks)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def integrity(path: Path) -> str:
    return query(path, "PRAGMA integrity_check")[0][0]


def journal_mode(path: Path) -> str:
    return query(path, "PRAGMA journal_mode")[0][0]


def repair(db: Path, journal: Path, **store: Any) -> tuple[Any, list[Any]]:
    """Repair ``db`` in place with no --min-age (tests date their own rows): the run and its outcomes."""
    from threadfix.batch import RepairRun, RunOptions
    from threadfix.stores import StoreOptions

    run = RepairRun([str(db)], RunOptions(store=StoreOptions(writable=True, **store), min_age=0, journal_dir=journal))
    return run, list(run.outcomes())


def outputs_per_call(items: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        if item.get("type") == "function_call":
            counts.setdefault(item["call_id"], 0)
    for item in items:
        if item.get("type") == "function_call_output":
            counts[item["call_id"]] = counts.get(item["call_id"], 0) + 1
    return counts


def run_cli(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    """Run ``threadfix`` in this process: (exit code, stdout, stderr)."""
    from threadfix.cli import main

    capsys.readouterr()
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


class App:
    """``app_sim.py`` in its own interpreter, appending turns to ``db`` while the test repairs it."""

    def __init__(self, db: Path, layout: str, seconds: float, seed: int, threads: int) -> None:
        self.errors = tempfile.TemporaryFile(mode="w+")  # a file: a full stderr pipe could never block the app
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("app_sim.py")), str(db), layout,
                                         str(seconds), str(seed), str(threads)],
                                        stdout=subprocess.PIPE, stderr=self.errors, text=True)
        assert self.process.stdout.readline().strip() == "ready", self.stderr()

    def stderr(self) -> str:
        self.errors.seek(0)
        return self.errors.read()

    def running(self) -> bool:
        return self.process.poll() is None

    def finish(self) -> list[str]:
        """Wait for the app to end: the ids of every item it committed."""
        # read through the same buffered stream as the "ready" line: lines it already buffered are not lost
        # (communicate() would read the pipe underneath it and miss them)
        lines = self.process.stdout.read().split()
        assert self.process.wait(timeout=120) == 0, self.stderr()
        assert lines and lines[-1] == "done", self.stderr()
        return lines[:-1]

    def __enter__(self) -> App:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.running():
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.errors.close()
