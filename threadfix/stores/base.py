"""What every store offers: threads to read, and a writer that swaps changed threads in atomically."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from msgspec import Struct

from threadfix.errors import ThreadfixError
from threadfix.journal import Entry
from threadfix.model import Thread
from threadfix.times import ITEM_TIME_KEYS, THREAD_TIME_KEYS, modified_time, parse_time  # noqa: F401 - re-exported



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


class Shard(Struct, frozen=True):
    """One unit of ``--jobs`` work, as a store cuts itself: a whole input, a byte range of a JSONL file, or a
    row id range or some threads (by key) of a table. Plain data, sent to a worker process, which opens
    the store of its part (:func:`threadfix.parallel.shard_stores`)."""

    spec: str
    start: int | None = None
    end: int | None = None
    #: a byte range's slots in its run's :class:`LineLedger`: its file's first range's and its own
    slots: tuple[int, int] | None = None
    #: a file found by walking a folder: read as the walk reads it (by suffix), or refused with this reason
    in_folder: bool = False
    refused: str | None = None
    #: row ids ``(after, through]`` of a SQLite table of one thread per row (None: unbounded at that end)
    rows: tuple[int | None, int | None] | None = None
    #: the keys of the threads to read of a SQLite table of one item per row, in order
    keys: tuple[Any, ...] | None = None
    #: the input's last part, which says what concerns the whole input after its threads (rows of no thread)
    last: bool = False

    @property
    def continues(self) -> bool:
        """Whether this is a later part of the input before it (a byte or row id range after the first)."""
        return bool(self.start) or (self.rows is not None and self.rows[0] is not None)

    @property
    def part(self) -> bool:
        """Whether this is part of an input rather than all of it."""
        return self.start is not None or self.rows is not None or self.keys is not None


class LineNumbering(Protocol):
    """How the reader of a byte range of a file learns the number of its first line, which the readers of the
    ranges before it count (handed down by the ``--jobs`` machinery: see :class:`threadfix.parallel.LineLedger`)."""

    def first_line(self, lines: int) -> int:
        """Post that the range holds ``lines`` lines; the number of its first line."""

    def abandon(self) -> None:
        """The range was not read through: the ranges after it count their lines for themselves."""


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
