"""A chat app writing to a database while threadfix repairs it: run as its own process (stdlib only).

    python app_sim.py DB LAYOUT SECONDS SEED THREADS

Appends whole turns (a user message, a tool call and its output, in one ``BEGIN IMMEDIATE``
transaction, as a correct app does) to random threads of the layout's table, for SECONDS. It prints
``ready`` once connected, then the ``app_id`` of every item it committed, one per line, then ``done``.
The test checks that every printed id is in the database afterwards, exactly once.

Layouts (the schemas ``tests/sqlite/dbs.py`` creates):
  thread  conversations(id TEXT PRIMARY KEY, title, messages TEXT, updated_at): the app reads the JSON,
          appends, writes it back
  item    items(id INTEGER PRIMARY KEY, thread_id, position INTEGER, data TEXT, created_at): the app
          appends at max(position) + 1
  agents  the OpenAI Agents SDK's agent_sessions/agent_messages, written the way SQLiteSession writes
  agents-sdk  the same tables written by the real SDK (``SQLiteSession.add_items``; needs openai-agents)
"""

from __future__ import annotations

import json
import random
import sqlite3
import sys
import time


def turn(n: int) -> list[dict]:
    call = f"app_call_{n}"
    return [
        {"type": "message", "role": "user", "content": f"question {n}", "app_id": f"u{n}"},
        {"type": "function_call", "call_id": call, "name": "lookup", "arguments": "{}", "app_id": f"c{n}"},
        {"type": "function_call_output", "call_id": call, "output": "ok", "app_id": f"o{n}"},
    ]


def append(conn: sqlite3.Connection, layout: str, thread: str, items: list[dict]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if layout == "thread":
            (raw,) = conn.execute("SELECT messages FROM conversations WHERE id = ?", (thread,)).fetchone()
            value = json.loads(raw)
            value.extend(items)
            conn.execute("UPDATE conversations SET messages = ?, updated_at = datetime('now') WHERE id = ?",
                         (json.dumps(value), thread))
        elif layout == "item":
            (top,) = conn.execute("SELECT coalesce(max(position), -1) FROM items WHERE thread_id = ?", (thread,)).fetchone()
            for k, item in enumerate(items, 1):
                conn.execute("INSERT INTO items (thread_id, position, data, created_at) VALUES (?, ?, ?, datetime('now'))",
                             (thread, top + k, json.dumps(item)))
        else:
            conn.execute("INSERT OR IGNORE INTO agent_sessions (session_id) VALUES (?)", (thread,))
            conn.executemany("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                             [(thread, json.dumps(item)) for item in items])
            conn.execute("UPDATE agent_sessions SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?", (thread,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def drive(seconds: float, seed: int, threads: int, write) -> None:
    """Append a turn to a random thread with ``write(thread, items)``, over and over for ``seconds`` (and at
    least three times)."""
    rng = random.Random(seed)
    print("ready", flush=True)
    deadline = time.monotonic() + seconds
    n = 0
    while n < 3 or time.monotonic() < deadline:  # a few turns even on a machine too busy to keep time
        n += 1
        items = turn(seed * 100_000 + n)
        write(f"t{rng.randrange(threads)}", items)
        print("\n".join(item["app_id"] for item in items), flush=True)  # committed: now in the database for good
        time.sleep(rng.random() * 0.004)
    print("done", flush=True)


def main() -> None:
    path, layout, seconds, seed, threads = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    if layout == "agents-sdk":
        # through openai-agents itself: each turn is one add_items call, as the Runner makes
        import asyncio

        from agents.memory import SQLiteSession

        sessions = {f"t{i}": SQLiteSession(f"t{i}", path) for i in range(threads)}
        drive(seconds, seed, threads, lambda thread, items: asyncio.run(sessions[thread].add_items(items)))
        for session in sessions.values():
            session.close()
        return
    conn = sqlite3.connect(path, timeout=10.0, isolation_level=None)

    def write(thread: str, items: list[dict]) -> None:
        while True:
            try:
                return append(conn, layout, thread, items)
            except sqlite3.OperationalError as exc:  # locked past the timeout: a real app would retry
                print(f"retry {exc}", file=sys.stderr, flush=True)

    drive(seconds, seed, threads, write)
    conn.close()


if __name__ == "__main__":
    main()
