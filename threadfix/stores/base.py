"""What every store offers: threads to read, and a writer that swaps changed threads in atomically."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from msgspec import Struct

from threadfix.errors import ThreadfixError
from threadfix.journal import Entry
from threadfix.model import Thread

#: keys that say when a thread last changed; a thread's own creation time says nothing about that,
#: but an item's does (an item is created when it is appended)
THREAD_TIME_KEYS = ("updated_at", "updatedAt", "modified_at", "last_updated", "last_modified")
ITEM_TIME_KEYS = (*THREAD_TIME_KEYS, "created_at", "createdAt", "timestamp", "created", "time")


class ReadProblem(Struct, frozen=True):
    """A file, line or row that could not be read as a thread; the rest of the store goes on."""

    where: str
    message: str


class Settled(Struct, frozen=True):
    """``count`` threads, next in store order, that a store showed need no repair without reading them whole."""

    count: int
    #: the dialect a full read finds them in
    dialect: str | None = None


class RepairParts(Struct):
    """A store's repair cut into parts it chose itself, for ``--jobs`` workers to read and plan (see
    :meth:`Store.parts_to_repair`): threads already known healthy, the parts in store order, and what could
    not be read, said after them."""

    settled: Settled
    shards: list[Any]
    problems: list[ReadProblem]


class StoreWriter(ABC):
    """Receives changed threads in read order, then commits them: all or nothing (a file's atomic swap), or
    as it goes, in short transactions (a database)."""

    #: some of the changes are durable already, before :meth:`commit`
    durable: bool = False

    @abstractmethod
    def replace(self, thread: Thread, data: bytes) -> None:
        """Put ``data`` (the thread's new encoding) in place of the thread."""

    def due(self) -> bool:
        """Whether the changes handed over so far should be written now (:meth:`flush`), before more are read.

        A writer that writes as it goes says so once it holds a batch, so that it never holds every changed
        thread of a large store; its caller first puts their before-images in the journal.
        """
        return False

    def flush(self) -> None:
        """Write the changes handed over so far (only when :meth:`due` said so)."""

    @abstractmethod
    def commit(self) -> Any:
        """Make the changes durable; returns what the caller needs (bytes for stdout, True when written)."""

    @abstractmethod
    def abort(self) -> None:
        """Drop everything not yet committed."""

    def unwritten(self) -> list[tuple[Thread, ThreadfixError]]:
        """Threads :meth:`flush` or :meth:`commit` left alone since this was last asked, and why (a BusyError:
        someone else changed it meanwhile).

        A store that writes threads one by one (SQLite) re-checks each as it writes it; the others write all
        or nothing and have none.
        """
        return []


class Store(ABC):
    """A place threads live: a file, stdin, a database table."""

    display: str
    #: a failed commit writes nothing (a file's atomic swap); False when earlier batches may be durable
    all_or_nothing: bool = True
    #: what was detected about the store (a SQLite layout), for the person at the terminal
    description: str | None = None

    @abstractmethod
    def threads(self) -> Iterator[Thread | ReadProblem]:
        """Every thread in store order; unreadable parts as ReadProblems."""

    def threads_to_repair(self) -> Iterator[Thread | ReadProblem | Settled]:
        """:meth:`threads` for repair: a store that can tell healthy threads from cheaper facts than their
        items (SQLite extracting two fields per row) may give them as :class:`Settled` counts."""
        return self.threads()

    def parts_to_repair(self) -> RepairParts | None:
        """With ``--jobs``, how to plan this store's repair in worker processes when the store knows better
        than byte or row id ranges (a table of one item per row, after its screen); None: read it through
        :meth:`threads_to_repair`."""
        return None

    @abstractmethod
    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        """The bytes the thread will be stored as once its items are ``new_items``."""

    @abstractmethod
    def writer(self, dest: Path | None = None) -> StoreWriter:
        """A writer for this store (``dest``: write elsewhere instead of in place)."""

    @abstractmethod
    def journal_entry(self, thread: Thread, data: bytes) -> Entry | None:
        """The undo record for replacing ``thread`` with ``data`` in place (None: nothing to undo)."""

    def detached(self, thread: Thread) -> Thread:
        """What :meth:`writer` needs of a thread planned in another process (a ``--jobs`` worker), which sends
        this back instead of the whole thread."""
        return Thread(thread.address, [], locator=thread.locator)

    def whole_bytes(self) -> bytes:
        """The store's whole content, for a thread that spans it (diffs of item-per-line files)."""
        return b""

    def reopened(self) -> Store:
        """The store to read again after a busy error: itself, as each read opens what it reads; a store that
        could not be opened at all tries again (a lock at open may be gone by then)."""
        return self


def parse_time(value: Any) -> float | None:
    """Seconds since the epoch from an ISO-8601 string or a number in seconds or milliseconds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str) and 8 <= len(value) <= 40:
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            from datetime import timezone

            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    return None


def modified_time(container: dict[str, Any] | None, items: list[Any], fallback: float | None) -> float | None:
    """When a thread last changed: its update time or its last items' times, else the file's mtime."""
    found = [t for key in THREAD_TIME_KEYS if container and (value := container.get(key)) is not None
             and (t := parse_time(value)) is not None]
    for item in items[-3:]:
        if isinstance(item, dict):
            found.extend(t for key in ITEM_TIME_KEYS if (value := item.get(key)) is not None
                         and (t := parse_time(value)) is not None)
    return max(found) if found else fallback
