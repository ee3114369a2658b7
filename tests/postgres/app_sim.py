"""A chat app writing to a PostgreSQL database while threadfix repairs it, as its own process.

    python app_sim.py URL LAYOUT SECONDS SEED THREADS

Appends whole turns (a user message, a tool call and its output, in one transaction) to random threads:
``thread`` reads a conversation's JSON ``FOR UPDATE``, appends and writes it back; ``item`` locks the
thread's last row ``FOR UPDATE`` and appends at the next position (again on a unique violation);
``agents`` is the real openai-agents ``SQLAlchemySession.add_items``. Prints ``ready``, then the
``app_id`` of every item it committed, one per line, then ``done``.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time

import psycopg


def turn(n: int) -> list[dict]:
    call = f"app_call_{n}"
    return [{"type": "message", "role": "user", "content": f"app {n}", "app_id": f"app_u{n}"},
            {"type": "function_call", "call_id": call, "name": "lookup", "arguments": "{}", "app_id": f"app_c{n}"},
            {"type": "function_call_output", "call_id": call, "output": "ok", "app_id": f"app_o{n}"}]


def plain(url: str, layout: str, seconds: float, rng: random.Random, threads: int) -> None:
    conn = psycopg.connect(url)
    print("ready", flush=True)
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        key, items = f"t{rng.randrange(threads)}", turn(n)
        try:
            with conn.transaction():
                if layout == "thread":
                    (doc,) = conn.execute("SELECT messages FROM conversations WHERE id = %s FOR UPDATE", (key,)).fetchone()
                    conn.execute("UPDATE conversations SET messages = %s WHERE id = %s", (json.dumps(doc + items), key))
                else:
                    last = conn.execute("SELECT position FROM conversations WHERE thread_id = %s ORDER BY position DESC "
                                        "LIMIT 1 FOR UPDATE", (key,)).fetchone()
                    at = last[0] + 1 if last else 0
                    for k, item in enumerate(items):
                        conn.execute("INSERT INTO conversations (thread_id, position, data) VALUES (%s, %s, %s)",
                                     (key, at + k, json.dumps(item)))
        except (psycopg.errors.UniqueViolation, psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure):
            continue
        for item in items:
            print(item["app_id"], flush=True)
        n += 1
    conn.close()


async def agents(url: str, seconds: float, rng: random.Random, threads: int) -> None:
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    sessions = [SQLAlchemySession(f"t{i}", engine=engine) for i in range(threads)]
    print("ready", flush=True)
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        items = turn(n)
        await sessions[rng.randrange(threads)].add_items(items)
        for item in items:
            print(item["app_id"], flush=True)
        n += 1
    await engine.dispose()


if __name__ == "__main__":
    url, layout, seconds, seed, count = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    rng = random.Random(seed)
    if layout == "agents":
        asyncio.run(agents(url, seconds, rng, count))
    else:
        plain(url, layout, seconds, rng, count)
    print("done", flush=True)
