"""Tables for the PostgreSQL tests, in the shapes real apps use, and helpers to read them back."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from tests.sqlite.dbs import OLD, healthy, stuck

__all__ = ["OLD", "create", "healthy", "rows", "stuck", "threads"]


def create(url: str, layout: str, threads: dict[str, list[dict[str, Any]]], *, json_type: str = "jsonb",
           table: str = "conversations", schema: str = "public", key: str = "bigserial") -> None:
    """A table of ``layout`` ("thread", "item" or "nokey": one row per item with no thread index) holding
    ``threads`` (id -> items); rows of different threads interleaved, as concurrent apps write them. ``key``:
    the type of a row-per-item table's id (a serial, or an identity column)."""
    t = f'"{schema}"."{table}"' if '"' not in table else f'"{schema}".{table}'
    with psycopg.connect(url, autocommit=True) as conn:
        if schema != "public":
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        if layout == "thread":
            conn.execute(f"CREATE TABLE {t} (id text PRIMARY KEY, title text, messages {json_type} NOT NULL, "
                         "updated_at timestamptz NOT NULL DEFAULT now())")
            for key, items in threads.items():
                conn.execute(f"INSERT INTO {t} (id, title, messages, updated_at) VALUES (%s, %s, %s, %s)",
                             (key, f"title {key}", json.dumps(items), OLD))
            return
        conn.execute(f"CREATE TABLE {t} (id {key} PRIMARY KEY, thread_id text NOT NULL, position integer NOT NULL, "
                     f"data {json_type} NOT NULL, created_at timestamptz NOT NULL DEFAULT now()"
                     f"{', UNIQUE (thread_id, position)' if layout == 'item' else ''})")
        longest = max((len(v) for v in threads.values()), default=0)
        for position in range(longest):
            for key, items in threads.items():
                if position < len(items):
                    conn.execute(f"INSERT INTO {t} (thread_id, position, data, created_at) VALUES (%s, %s, %s, %s)",
                                 (key, position, json.dumps(items[position]), OLD))


def rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(sql, params).fetchall()


def threads(url: str, layout: str, table: str = "conversations") -> dict[str, list[Any]]:
    """Every thread as the app reads it back: id -> items."""
    if layout == "thread":
        return {k: (json.loads(v) if isinstance(v, str) else v) for k, v in rows(url, f'SELECT id, messages FROM "{table}"')}
    found: dict[str, list[Any]] = {}
    for key, data in rows(url, f'SELECT thread_id, data FROM "{table}" ORDER BY thread_id, position, id'):
        found.setdefault(key, []).append(json.loads(data) if isinstance(data, str) else data)
    return found


def agents_session(url: str, threads: dict[str, list[dict[str, Any]]]) -> None:
    """The tables the real openai-agents ``SQLAlchemySession`` creates, holding ``threads`` written by it."""
    import asyncio

    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
    from sqlalchemy.ext.asyncio import create_async_engine

    async def write() -> None:
        engine = create_async_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
        for key, items in threads.items():
            await SQLAlchemySession(key, engine=engine, create_tables=True).add_items(items)
        await engine.dispose()

    asyncio.run(write())


def agents_items(url: str, key: str) -> list[Any]:
    """A session's items as the real SDK reads them back."""
    import asyncio

    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
    from sqlalchemy.ext.asyncio import create_async_engine

    async def read() -> list[Any]:
        engine = create_async_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
        try:
            return await SQLAlchemySession(key, engine=engine).get_items()
        finally:
            await engine.dispose()

    return asyncio.run(read())
