"""What agent frameworks' own session stores share (each is recognised in :mod:`.framework_presets`).

A framework store is written only the way its library writes it: a new checkpoint on top (LangGraph), new
chain rows and a moved tip (llm), a new event (Google ADK), new or renumbered message files (Strands). Each
store's module says how its records become the items a dialect reads and how a repaired item list becomes
the library's own records; this module holds what they share: writing changes one thread per transaction
after re-reading what the plan was made from (compare-and-swap), mapping a repaired message list back to
records of one message each, and undo.
"""

from __future__ import annotations

import importlib
import os
import sqlite3
from abc import abstractmethod
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

from msgspec import Struct

from threadfix.errors import BusyError, ConfigError, InputError, ThreadfixError
from threadfix.journal import Entry, UndoOutcome, digest
from threadfix.model import Thread
from threadfix.stores.base import Change, ReadProblem, Store, StoreWriter
from threadfix.stores.sqlite_layout import connect, sqlite_error

def needs(module: str, extra: str, what: str) -> Any:
    """Import a library a store needs, or one line naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(f"{what} needs the {extra} extra: pip install 'threadfix[{extra}]'") from None


class ThreadKeys(Struct, frozen=True):
    """A ``--jobs`` part of a framework store: the keys of a run of its threads, in store order (a snapshot taken
    when it was cut: a thread begun after it waits for the next run)."""

    keys: tuple[tuple[Any, ...], ...]


class FrameworkStore(Store):
    """A framework's SQLite database: threads read by its own rules, each change written in its own
    ``BEGIN IMMEDIATE`` transaction once the thread is seen to hold what its plan was made from.

    Its threads are listed by one query (:attr:`listing`) whose first :attr:`key_width` columns are a thread's
    key, and each is read by its key alone, so ``--jobs`` cuts it into runs of keys (:meth:`cut`)."""

    all_or_nothing = False  # threads written before a failure stay written (and say so)
    #: the journal's store kind (a key of UNDO_MODULES)
    kind: str
    #: what the store is, for the person at the terminal
    preset: str
    #: the query that lists its threads in store order, a thread's key first, and how many columns the key is
    listing: str
    key_width: int

    def __init__(self, path: Path, options: Any) -> None:
        self.path = path
        self.options = options
        self.display = str(path)
        self.description = f"{path}: reading {self.preset}"
        #: the keys of the threads a --jobs part reads (None: every thread)
        self.only: frozenset[tuple[Any, ...]] | None = None

    def _reader(self) -> sqlite3.Connection:
        return connect(self.path, write=False, timeout=self.options.busy_timeout)

    def listed(self, conn: sqlite3.Connection) -> list[Any]:
        """The rows of :attr:`listing` this store reads: all of them, or its part's."""
        rows = conn.execute(self.listing).fetchall()
        return rows if self.only is None else [row for row in rows if tuple(row[:self.key_width]) in self.only]

    def cut(self, parts: int) -> list[ThreadKeys] | None:
        """The store's threads as about ``parts`` runs of keys for ``--jobs`` workers; None (read whole) when there
        are fewer than two threads, or the database cannot be read here (a worker says why)."""
        try:
            conn = self._reader()
            try:
                keys = [tuple(row[:self.key_width]) for row in conn.execute(self.listing).fetchall()]
            finally:
                conn.close()
        except (ThreadfixError, sqlite3.Error):
            return None
        parts = min(parts, len(keys))
        if parts < 2:
            return None
        ends = [len(keys) * k // parts for k in range(parts + 1)]
        return [ThreadKeys(tuple(keys[start:end])) for start, end in pairwise(ends)]

    part_types = (ThreadKeys,)

    def restrict(self, part: ThreadKeys, ledger: Any = None) -> None:
        self.only = frozenset(part.keys)

    def threads(self) -> Iterator[Thread | ReadProblem]:
        try:
            conn = self._reader()
        except ThreadfixError as exc:
            yield ReadProblem(exc.where or self.display, exc.message)
            return
        try:
            yield from self.read(conn)
        except sqlite3.Error as exc:
            raise sqlite_error(exc, self.display, self.options.busy_timeout) from None
        finally:
            conn.close()

    @abstractmethod
    def read(self, conn: sqlite3.Connection) -> Iterator[Thread | ReadProblem]:
        """Every thread, in store order, read on ``conn`` (read-only)."""

    @abstractmethod
    def records_for(self, thread: Thread, new_items: list[Any]) -> tuple[Any, bytes]:
        """What writing ``new_items`` in place of the thread's items takes (the store's own records: plain data,
        carried in the :class:`Change` as its ``ops``), and the bytes shown for it (``--diff``) and digested in
        the journal."""

    @abstractmethod
    def check(self, conn: sqlite3.Connection, thread: Thread, change: Any) -> None:
        """Raise BusyError unless the thread (its locator: what its plan was made from) still holds what it held
        when read (inside the write's transaction); ``change``: the records :meth:`records_for` planned."""

    @abstractmethod
    def write(self, conn: sqlite3.Connection, thread: Thread, change: Any) -> None:
        """Write ``change`` (inside the transaction :meth:`check` ran in)."""

    @abstractmethod
    def undo_locator(self, thread: Thread, change: Any) -> dict[str, Any]:
        """What undo needs to find and take back what ``change`` added."""

    def change(self, thread: Thread, new_items: list[Any]) -> Change:
        records, shown = self.records_for(thread, new_items)
        return Change(self.detached(thread), shown, ops=records)

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        return self.change(thread, new_items).data

    def writer(self, dest: Path | None = None) -> StoreWriter:
        if dest is not None:
            raise ConfigError(f"--output cannot take a copy of {self.preset}; "
                              "repair it in place (journaled, undoable) or use --dry-run", self.display)
        return FrameworkWriter(self)

    def entry(self, thread: Thread, change: Change) -> Entry | None:
        return Entry(self.kind, os.path.realpath(self.path), str(thread.address), thread.raw, digest(change.data),
                     self.undo_locator(thread, change.ops))


class PendingWriter(StoreWriter):
    """Holds the changes until :meth:`commit` carries out the operations each one holds (:attr:`Change.ops`)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.pending: list[Change] = []
        self.left: list[tuple[Thread, ThreadfixError]] = []

    def add(self, change: Change) -> None:
        self.pending.append(change)

    def abort(self) -> None:
        self.pending = []


class FrameworkWriter(PendingWriter):
    """Writes each changed thread in its own transaction, after re-reading it (compare-and-swap)."""

    def commit(self) -> bool:
        store = self.store
        conn = connect(store.path, write=True, timeout=store.options.busy_timeout)
        try:
            for change in self.pending:
                thread = change.thread
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    store.check(conn, thread, change.ops)
                    store.write(conn, thread, change.ops)
                    if conn.in_transaction:
                        conn.execute("COMMIT")
                    self.durable = True
                except BusyError as exc:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    if "locked" in exc.message:
                        raise
                    self.left.append((thread, exc))
                except sqlite3.Error as exc:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise sqlite_error(exc, store.display, store.options.busy_timeout) from None
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()
            self.pending = []
        return True

    def unwritten(self) -> list[tuple[Thread, ThreadfixError]]:
        left, self.left = self.left, []
        return left


def place(new_items: list[Any], messages: list[Any], content_key: str, is_result: Callable[[Any], bool],
          record: str) -> list[tuple[int | None, list[Any] | None]]:
    """Where each message of a repaired list comes from, for a store of one record per message (a file, an
    event): ``(i, None)`` the stored message ``i`` unchanged (the same object), ``(i, content)`` message ``i``
    with new content (it keeps some of its blocks, or replaces it whole), ``(None, content)`` a new record.

    Results a dialect put at the head of the next message (Bedrock's and Gemini's rule: one message of
    results after the call) come back as a record of their own before it, as frameworks write results (a
    message or an event per tool batch). Every stored record stays, in its order; anything else is refused.
    """
    sources = {id(message): i for i, message in enumerate(messages)}
    blocks = {id(b): i for i, message in enumerate(messages) for b in _blocks(message, content_key)}
    present = {sources[id(item)] for item in new_items if id(item) in sources} | {
        blocks[id(b)] for item in new_items for b in _blocks(item, content_key) if id(b) in blocks}
    placed: list[tuple[int | None, list[Any] | None]] = []
    for item in new_items:
        source = sources.get(id(item))
        if source is not None:
            placed.append((source, None))
            continue
        content = item.get(content_key) if isinstance(item, dict) else None
        if not isinstance(content, list):
            raise InputError(f"a repaired message cannot be written as {record}; left alone")
        owners = {blocks[id(b)] for b in content if id(b) in blocks}
        if len(owners) > 1:
            raise InputError(f"a repair would join two messages into {record}; left alone")
        if not owners:
            following = max((s for s, _ in placed if s is not None), default=-1) + 1
            if following < len(messages) and following not in present:  # it replaces that message whole
                placed.append((following, content))
            else:
                placed.append((None, content))
            continue
        owner = owners.pop()
        stored = _blocks(messages[owner], content_key)
        added = content[:len(content) - len(stored)]
        if content[len(added):] == stored and all(map(is_result, added)) and not any(map(is_result, stored)):
            placed.append((None, added))  # results put at the head of the next message: a record of their own
            placed.append((owner, None))
        else:
            placed.append((owner, content))
    if [source for source, _ in placed if source is not None] != list(range(len(messages))):
        raise InputError(f"a repair would drop or reorder {record}s; left alone")
    return placed


def _blocks(message: Any, content_key: str) -> list[Any]:
    content = message.get(content_key) if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def moved(thread: Thread) -> BusyError:
    return BusyError("the app changed this thread since it was read; left alone, run again", str(thread.address))


def undo_entries(undo_one: Callable[[sqlite3.Connection, Entry], tuple[str, str]], path: str,
                 entries: list[Entry], *, dry_run: bool = False) -> Iterator[UndoOutcome]:
    """Take back what repairs of one framework database added, newest first, each in its own transaction
    (``undo_one``: the store's own step, which says what became of the entry; ``dry_run``: each step is
    decided the same way, then rolled back)."""
    if not os.path.exists(path):
        for entry in entries:
            yield UndoOutcome(entry.address, "missing", "the database no longer exists")
        return
    conn = connect(Path(path), write=True, timeout=5.0)
    outcomes = []
    try:
        for entry in reversed(entries):
            try:
                conn.execute("BEGIN IMMEDIATE")
                status, message = undo_one(conn, entry)
                conn.execute("COMMIT" if status == "restored" and not dry_run else "ROLLBACK")
            except ThreadfixError as exc:
                status, message = "refused", exc.message
            except sqlite3.Error as exc:
                raise sqlite_error(exc, path, 5.0) from None
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            outcomes.append(UndoOutcome(entry.address, status, message))
    finally:
        conn.close()
    yield from reversed(outcomes)
