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



#: what a ``--jobs`` worker says of an input that is now another kind of store than the one cut into its parts
CHANGED_KIND = ("changed since --jobs cut it into parts: it is no longer the kind of store it was cut as, so none of "
                "it was read; run again")


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
    #: :class:`Shard` s of the store's own parts (see :meth:`Store.restrict`)
    shards: list[Any]
    problems: list[ReadProblem]


class Shard(Struct, frozen=True):
    """One unit of ``--jobs`` work: an input read whole, or one part of it as its store cut itself. Plain data, sent
    to a worker process, which opens the store of its part (:func:`threadfix.parallel.shard_stores`).

    The part is the store's own (a byte range of a JSONL file, row ids or thread keys of a table): made by its
    medium's :meth:`Medium.cut`, handed back to the store it reopens (:meth:`Store.restrict`), and read by nothing
    in between, so the ``--jobs`` machinery knows no store kind."""

    spec: str
    #: the part, as the store cut it (None: the whole input)
    part: Any = None
    #: which of its input's parts this is (0: the first, or the whole input)
    number: int = 0
    #: a file found by walking a folder: read as the walk reads it (by suffix), or refused with this reason
    in_folder: bool = False
    refused: str | None = None
    #: one of many thread files in its folder, screened from its first byte (:attr:`FolderEntry.many`)
    many: bool = False
    #: the part's slots in its run's :class:`~threadfix.parallel.LineLedger`: its input's first part's and its own
    slots: tuple[int, int] | None = None

    @property
    def continues(self) -> bool:
        """Whether this is a later part of the input before it."""
        return self.number > 0


class Change(Struct):
    """One thread's repair as its store will make it, built by the store (:meth:`Store.change`) and carried whole to
    its writer, across the ``--jobs`` pipe too (plain data: it pickles, and holds no items), so that no store keeps
    anything of a planned thread between its plan and its write.

    - ``thread``: what the write needs of the thread (:meth:`Store.detached`: its address and locator; a store
      whose compare-and-swap compares bytes keeps those too), never its items;
    - ``data``: the after-image, which ``--diff`` shows and the journal digests (for most stores it is also the
      write: the document's or line's new bytes);
    - ``ops``: the store's own operations when the write is more than ``data`` (append these records with these
      fresh ids and move the tip; renumber these files), carried out by its writer; None: write ``data``;
    - ``precondition``: what must still hold at write time for the write to go ahead (the compare-and-swap),
      when the thread's locator does not say it;
    - ``entry``: the journal entry undo replays (None: a dry run, or ``-o``, which changes nothing in place);
    - ``before``: the before-image ``--diff`` shows (:meth:`Store.before_bytes`), only when a diff is asked for
      (:meth:`Store.keep_before`): the very bytes the store read the thread from, never a second copy, and
      nothing more across the ``--jobs`` pipe when no diff is asked for.
    """

    thread: Thread
    data: bytes
    ops: Any = None
    precondition: Any = None
    entry: Entry | None = None
    before: bytes | None = None


class LineNumbering(Protocol):
    """How the reader of a byte range of a file learns the number of its first line (see
    :class:`threadfix.stores.ranges.FirstLine`)."""

    def first_line(self, lines: int) -> int:
        """Post that the range holds ``lines`` lines; the number of its first line."""

    def abandon(self) -> None:
        """The range was not read through: the ranges after it count their lines for themselves."""


class PartLedger(Protocol):
    """A part's place in its run's ledger, handed down by the ``--jobs`` machinery (see
    :class:`threadfix.parallel.LineLedger`): the reader of a part posts how many units it holds (a byte range its
    lines), and learns how many the parts of its input before it hold, which other processes are reading."""

    def post(self, count: int) -> int | None:
        """Post that the part holds ``count``; what its input's earlier parts hold in all (None: one of them did not
        say in time, and the reader counts for itself)."""

    def abandon(self) -> None:
        """The part was not read through: the parts after it count for themselves."""


class StoreWriter(ABC):
    """Receives changed threads in read order, then commits them: all or nothing (a file's atomic swap), or
    as it goes, in short transactions (a database)."""

    #: some of the changes are durable already, before :meth:`commit`
    durable: bool = False

    def add(self, change: Change) -> None:
        """Take ``change`` (as :meth:`Store.change` built it) to write; a writer whose store's changes carry their own
        operations keeps the change itself."""
        self.replace(change.thread, change.data)

    def replace(self, thread: Thread, data: bytes) -> None:
        """Put ``data`` (the thread's new encoding) in place of the thread: the write of a store whose change is its
        new bytes."""
        raise NotImplementedError(f"{type(self).__name__} takes whole changes (add)")

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

    def threads_indexed(self) -> Iterator[Thread | ReadProblem]:
        """:meth:`threads` for lint and report: a store that can index a healthy thread from a typed read may give it
        as a thread that knows its index and reads its items only when asked (a JSONL file of Responses threads)."""
        return self.threads()

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

    def journal_entry(self, thread: Thread, data: bytes) -> Entry | None:
        """The undo record for replacing ``thread`` with ``data`` in place (None: nothing to undo): the journal of a
        store whose change is its new bytes (one whose change carries operations overrides :meth:`entry`)."""
        raise NotImplementedError(f"{type(self).__name__} journals whole changes (entry)")

    def change(self, thread: Thread, new_items: list[Any]) -> Change:
        """The change that makes the thread hold ``new_items``, without its journal entry (:meth:`entry`): what the
        batch runner journals and hands to :meth:`writer`, in this process or from a ``--jobs`` worker. Most stores
        only :meth:`encode`; one whose write is more than new bytes puts its own operations and precondition in the
        change (see :class:`Change`)."""
        return Change(self.detached(thread), self.encode(thread, new_items))

    def entry(self, thread: Thread, change: Change) -> Entry | None:
        """The journal entry undo replays to take ``change`` back (``thread``: as read, with its items and
        before-image); None: nothing to undo."""
        return self.journal_entry(thread, change.data)

    def detached(self, thread: Thread) -> Thread:
        """What :meth:`writer` needs of a changed thread, for its :class:`Change` (which a ``--jobs`` worker sends
        back instead of the whole thread): its address and locator; a store whose write compares the bytes the
        plan was made from keeps those too. Never the thread itself: a change holds no items."""
        return Thread(thread.address, [], locator=thread.locator)

    #: the kinds of ``--jobs`` part its cut makes, the only ones :meth:`restrict` is handed (none: it is read whole)
    part_types: tuple[type, ...] = ()

    def restrict(self, part: Any, ledger: PartLedger | None = None) -> None:
        """Read only ``part`` of the store from now on: a ``--jobs`` worker's share, as the store's own cut made it
        (:meth:`Medium.cut`, or :meth:`parts_to_repair`), one of :attr:`part_types` (any other is refused before
        this: :meth:`refusal`). ``ledger``: the part's place in its run's ledger (a byte range learns its first
        line's number there)."""

    def refusal(self) -> ReadProblem:
        """Why a ``--jobs`` part of another kind than :attr:`part_types` is not read: the input was cut as another
        kind of store than it is now (a database replaced by a file, or gone), and reading it whole in each worker
        would read every thread once per part. Its own reason comes first: a store that cannot be found now (gone
        since the cut) says why as the start of its read does; else that it changed."""
        if not self.pin():
            read = iter(self.threads())
            try:
                first = next(read, None)
            finally:
                getattr(read, "close", lambda: None)()
            if isinstance(first, ReadProblem):
                return first
        return ReadProblem(self.display, CHANGED_KIND)

    def pin(self) -> bool:
        """Note what the store holds now, before ``--jobs`` workers read its parts, so that the write of what they
        planned can tell it changed meanwhile (a file's fingerprint; a table checks each row as it writes it).
        False: it cannot be found now (its workers say why)."""
        return True

    def before_bytes(self, thread: Thread) -> bytes:
        """What a thread held before its repair, as a diff shows it and the journal keeps it."""
        return thread.raw or self.whole_bytes()

    def keep_before(self, thread: Thread, change: Change) -> Change:
        """``change`` carrying the thread's before-image (:attr:`Change.before`), for ``--diff``."""
        change.before = self.before_bytes(thread)
        return change

    def whole_bytes(self) -> bytes:
        """The store's whole content, for a thread that spans it (diffs of item-per-line files)."""
        return b""

    def reopened(self) -> Store:
        """The store to read again after a busy error: itself, as each read opens what it reads; a store that
        could not be opened at all tries again (a lock at open may be gone by then)."""
        return self


class Medium(ABC):
    """Where a store's bytes live: a file or stdin, a SQLite database; next a PostgreSQL database, a folder of
    one file per message.

    One module per medium holds one instance as ``MEDIUM`` and is registered in :data:`threadfix.stores.MEDIA`
    with a cheap test of the paths it claims (a file's header, a URL's scheme), so that start-up imports no
    medium a run does not use. Everything else a store needs is shared and asks the medium or the store it
    opened: ``--jobs`` cuts (:meth:`cut`, then :meth:`reopen` and :meth:`Store.restrict` in the worker), reading in
    chunks and compare-and-swap before a write (the store's writer, given each :class:`Change`), the journal
    (:meth:`Store.entry`) and undo
    (the module's ``undo_entries(path, entries)``, found by the ``JOURNAL_KIND`` it declares).
    """

    @abstractmethod
    def open(self, spec: str, options: Any, stdin: Any = None) -> Iterator[Store]:
        """The stores ``spec`` names in this medium (a database: its table; a file: itself)."""

    def size(self, spec: str) -> int:
        """The bytes ``spec`` holds when no file does (a database by its URL), which decide as a file's size does
        whether ``--jobs`` cuts it (:meth:`cut`); 0 (the default): read whole."""
        return 0

    def cut(self, spec: str, parts: int, options: Any, by_key: bool) -> list[Any] | None:
        """``spec``'s store cut into about ``parts`` parts for ``--jobs`` workers, in store order (``by_key``: lint and
        report, which read every thread, may take a table by runs of keys); None: it is read whole. A part is plain
        data (it is pickled to a worker) that only the store reads: :meth:`reopen` opens the store again in the
        worker and :meth:`Store.restrict` hands it the part."""
        return None

    def reopen(self, spec: str, options: Any) -> Iterator[Store]:
        """The stores of ``spec`` again, in a ``--jobs`` worker (or in the parent that writes what the workers
        planned), to be restricted to one part each."""
        return self.open(spec, options)
