"""The JSON document container: a thread as an array of items, or an object holding them under a key.

Files (``.json``, each line of a ``.jsonl`` of threads) and rows of one thread per row hold threads this
way; this module says where a document keeps its items and writes a repaired one back in the layout
of the original (only the values that changed are new bytes).
"""

from __future__ import annotations

from typing import Any

from threadfix import jsonio
from threadfix.errors import UnrewritableError
from threadfix.model import Thread

#: keys under which an object holds its thread's items, in the order they are tried
THREAD_KEYS = ("input", "messages", "items", "contents", "history")
ID_KEYS = ("id", "thread_id", "session_id", "conversation_id", "chat_id")


def split_container(value: Any) -> tuple[list[Any], dict[str, Any] | None, str | None] | None:
    """The items of a thread document and the object holding them, or None when it holds no thread."""
    if isinstance(value, list):
        return value, None, None
    if isinstance(value, dict):
        for key in THREAD_KEYS:
            if isinstance(value.get(key), list):
                return value[key], value, key
    return None


def thread_id(container: dict[str, Any] | None) -> str | None:
    if container:
        for key in ID_KEYS:
            value = container.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                return str(value)
    return None


def encode_document(thread: Thread, new_items: list[Any]) -> bytes:
    """The new bytes of a one-document thread, in the layout of the original."""
    problem = jsonio.fidelity_problem(thread.raw)
    if problem:
        raise UnrewritableError(f"left alone: rewriting it would alter values ({problem})", str(thread.address))
    if thread.container is None:
        value, original = new_items, thread.items
    else:
        value = dict(thread.container)
        value[thread.key] = new_items
        original = thread.container
    try:
        data, _style = jsonio.rewrite(thread.raw, value, original)
    except jsonio.JsonWriteError as exc:
        raise UnrewritableError(f"left alone: cannot be written back ({exc})", str(thread.address)) from None
    return data
