"""Agent frameworks' own SQLite stores, recognised from their schema (a preset each, as openai-agents'
``SQLiteSession`` is a table preset): LangGraph's ``SqliteSaver``, llm's ``logs.db``, Google ADK's
``DatabaseSessionService``. ``--table`` and friends override them (the database is then read as a table)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from threadfix.errors import ThreadfixError
from threadfix.stores.base import Store
from threadfix.stores.sqlite_layout import connect

#: the options that name a table layout themselves: given any, no preset is looked for
_LAYOUT_OPTIONS = ("table", "id_column", "json_column", "thread_column", "order_column", "item_column")


def _tables(conn: sqlite3.Connection) -> dict[str, set[str]]:
    names = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {name: {row[1] for row in conn.execute("SELECT * FROM pragma_table_info(?)", (name,))} for name in names}


def open_framework_store(path: Path, options: Any) -> Store | None:
    """The framework store a SQLite database is, from its schema; None when it is none of them or the options
    name a table layout (``--table`` and friends override a preset)."""
    if any(getattr(options, name, None) for name in _LAYOUT_OPTIONS):
        return None
    try:
        conn = connect(path, write=False, timeout=options.busy_timeout)
        try:
            tables = _tables(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return None  # the table store's own open says what is wrong with the database
    except ThreadfixError:
        return None
    checkpoints, writes = tables.get("checkpoints", set()), tables.get("writes", set())
    if {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint"} <= checkpoints \
            and {"task_id", "channel", "value"} <= writes:
        from threadfix.stores.langgraph_checkpoints import LangGraphStore

        return LangGraphStore(path, options)
    if {"hash", "parent_hash", "role"} <= tables.get("messages", set()) \
            and {"id", "tip_message_hash"} <= tables.get("threads", set()) \
            and {"message_hash", "position", "type", "payload"} <= tables.get("parts", set()):
        from threadfix.stores.llm_logs import LlmLogsStore

        return LlmLogsStore(path, options)
    if {"app_name", "user_id", "id", "update_time"} <= tables.get("sessions", set()) \
            and {"id", "session_id", "invocation_id", "timestamp", "event_data"} <= tables.get("events", set()) \
            and "adk_internal_metadata" in tables:
        from threadfix.stores.adk_sessions import AdkSessionsStore

        return AdkSessionsStore(path, options)
    return None
