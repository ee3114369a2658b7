"""The JSON document container: a thread as an array of items, or an object holding them under a key.

Files (``.json``, each line of a ``.jsonl`` of threads) and rows of one thread per row hold threads this
way; this module says where a document keeps its items and writes a repaired one back in the layout
of the original (only the values that changed are new bytes).
"""

from __future__ import annotations

from typing import Any, Protocol

from msgspec import Struct

from threadfix import jsonio
from threadfix.errors import UnrewritableError
from threadfix.model import Address, Thread

#: keys under which an object holds its thread's items, in the order they are tried
THREAD_KEYS = ("input", "messages", "items", "contents", "history")
ID_KEYS = ("id", "thread_id", "session_id", "conversation_id", "chat_id")


class Span(Struct, frozen=True):
    """A thread's byte range in its file."""

    start: int
    end: int


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
    if thread.document is None:
        value, original = new_items, thread.items
    else:
        value = dict(thread.document)
        value[thread.items_key] = new_items
        original = thread.document
    try:
        data, _style = jsonio.rewrite(thread.raw, value, original)
    except jsonio.JsonWriteError as exc:
        raise UnrewritableError(f"left alone: cannot be written back ({exc})", str(thread.address)) from None
    return data


class FileContainer(Protocol):
    """How threads sit in a file: what the file store encodes a repaired thread through (the reading is the
    container's own; see :mod:`.files`)."""

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        """The bytes that replace the thread's byte range once its items are ``new_items``."""


class Document:
    """A JSON document holding one thread: a ``.json`` file, or stdin's bytes."""

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        return encode_document(thread, new_items)


DOCUMENT = Document()
NO_THREAD = f"holds no thread (expected an array of items, or an object with one of {', '.join(THREAD_KEYS)})"


def read_document(raw: bytes, display: str, mtime: float | None, dialect: str | None, value: Any = None
                  ) -> Thread | tuple[str, str]:
    """The thread of the document ``raw`` (``value``: it parsed already), or where and why it cannot be read."""
    if value is None:
        try:
            value = jsonio.loads(raw)
        except jsonio.JsonReadError as exc:
            where = display + (f":{exc.line}" if exc.line is not None else "") + (
                f":{exc.column}" if exc.column is not None else "")
            return where, exc.message
    parts = split_container(value)
    if parts is None:
        return display, NO_THREAD
    items, container, key = parts
    return Thread(address=Address(display, key=None), items=items, document=container, items_key=key, raw=raw,
                  mtime=mtime, dialect=dialect, locator=Span(0, len(raw)))
