"""Run repair over many stores: the library entry point a batch job imports and the CLI calls.

Per store: read threads, plan each one, and, unless this is a dry run, record the before-images in the
journal and commit the store's changes atomically. A bad file, line or thread is reported and the rest
of the batch goes on; a store that changed underneath us is retried, then skipped.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from functools import cache, partial
from itertools import repeat
from pathlib import Path
from typing import Any

from msgspec import Struct, field
from msgspec.structs import force_setattr, replace

from threadfix import dialects
from threadfix.dialects import Dialect
from threadfix.errors import BusyError, ExitCode, InputError, StoreError, ThreadfixError
from threadfix.given import parse_duration
from threadfix.journal import Entry, Journal, default_folder
from threadfix.model import Problem, RepairPlan, Thread, ThreadIndex
from threadfix.parallel import (
    Shard, WorkerLost, folder_store, plan_run, run_sharded, shard_stores, sharded, spread_for_store,
)
from threadfix.repair import RepairOptions, as_written, plan_repair, refusal_reason, waiting_on, waiting_reason
from threadfix.spill import SpillList
from threadfix.stores import MEDIA, ReadProblem, Store, StoreOptions, iter_stores, medium_of, open_stores  # noqa: F401 - re-exported
from threadfix.stores.atomic import crashpoint, folder_unsynced, fsync_folder, sync_temps
from threadfix.stores.base import Change, Settled, StoreWriter
from threadfix.stores.files import walks_kept
from threadfix.stores.jsonl import IndexedThread

DEFAULT_MIN_AGE = 600.0
BUSY_ATTEMPTS = 3
PROGRESS_EVERY = 256
#: before-images held in memory before they are appended to the journal
JOURNAL_BATCH_BYTES = 2 * 1024 * 1024
#: a folder's files are committed in batches: of this many changed files (each holds a temp file open until its
#: batch is committed), of this many bytes of new versions, or of this many files read (whose outcomes wait)
FOLDER_BATCH_CHANGED = 64
FOLDER_BATCH_BYTES = 32 * 2**20
FOLDER_BATCH_FILES = 4096
#: about what a held outcome of a changed thread costs in memory, its bytes for --diff aside (measured: 2 KB)
OUTCOME_BYTES = 2048


def as_paths(specs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    """The paths a library call was given: one (a ``str`` or a ``Path``, never iterated as characters) or several.

    ``RepairRun("chats/")`` once read each character as a path, ``"/"`` first: a batch job walked the whole file
    system (issue #22)."""
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    elif isinstance(specs, (bytes, bytearray)) or not isinstance(specs, Iterable):
        raise TypeError(f"paths must be a str, a Path or a list of them, not {type(specs).__name__}")
    found = []
    for spec in specs:
        if not isinstance(spec, (str, os.PathLike)):
            raise TypeError(f"each path must be a str or a Path, not {type(spec).__name__}: {spec!r}")
        found.append(os.fspath(spec))
    return found


def as_seconds(value: Any, name: str) -> float:
    """A duration option as seconds: a number, or a string such as ``"10m"``; negative or unparseable refused."""
    seconds = parse_duration(value) if isinstance(value, str) else value
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"{name} must be seconds (a number) or a duration such as '10m', not {value!r}")
    if not (0 <= seconds < float("inf")):
        raise ValueError(f"{name} must be a duration of at least 0, not {value!r}")
    return float(seconds)


def as_patterns(value: Any, name: str) -> tuple[str, ...]:
    """Tool name globs: one string is one pattern, never its characters."""
    patterns = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(p, str) and p.strip() for p in patterns):
        raise ValueError(f"{name} must be tool names or globs (non-empty strings), not {value!r}")
    return patterns


class RunOptions(Struct, frozen=True):
    """What a repair run does; the defaults are those of ``threadfix repair``.

    Checked when built: ``min_age`` may be a duration string (``"10m"``), read as seconds; a bad value raises
    ``ValueError`` or ``TypeError`` here, not later inside :meth:`RepairRun.outcomes`.
    """

    repair: RepairOptions = RepairOptions()
    store: StoreOptions = StoreOptions()
    #: plan only, write nothing
    dry_run: bool = False
    #: keep before/after bytes of changed threads (for --diff)
    keep_bytes: bool = False
    #: write the repaired store here instead of in place (one input only)
    output: Path | None = None
    #: skip threads changed less than this many seconds ago (their calls may still be running)
    min_age: float = DEFAULT_MIN_AGE
    #: tool name patterns whose outputs come from a person or another process: a thread with an open call to
    #: one of them waits, and is left whole (see :func:`threadfix.repair.waiting_on`)
    leave_tools: tuple[str, ...] = ()
    journal_dir: Path | None = None
    argv: tuple[str, ...] = ()
    #: the clock, for tests
    now: float | None = None
    #: processes to spread large file inputs over (None: by input size)
    jobs: int | None = 1

    def __post_init__(self) -> None:
        force_setattr(self, "min_age", as_seconds(self.min_age, "min_age"))
        force_setattr(self, "leave_tools", as_patterns(self.leave_tools, "leave_tools"))
        if self.jobs is not None and (isinstance(self.jobs, bool) or not isinstance(self.jobs, int) or self.jobs < 1):
            raise ValueError(f"jobs must be a whole number of at least 1, or None (by input size), not {self.jobs!r}")
        for name in ("repair", "store"):
            expected = RepairOptions if name == "repair" else StoreOptions
            if not isinstance(getattr(self, name), expected):
                raise TypeError(f"{name} must be a {expected.__name__}, not {type(getattr(self, name)).__name__}")
        for name in ("output", "journal_dir"):
            value = getattr(self, name)
            if isinstance(value, str):
                force_setattr(self, name, Path(value))


class ThreadOutcome(Struct):
    """What happened to one thread."""

    address: str
    dialect: str | None
    plan: RepairPlan
    #: healthy | repaired | would_repair | recent | waiting | refused | left_alone | busy
    status: str
    message: str | None = None
    before: bytes | None = None
    after: bytes | None = None
    #: seconds since the thread last changed, when ``min_age`` asked (None at 0, or when nothing tells)
    age: float | None = None


class Repeats:
    """Tells a problem that repeats the one before it word for word. An input that vanished, or turned
    unreadable, after it was cut for ``--jobs`` is met by the worker of each of its parts: one problem, said once."""

    def __init__(self) -> None:
        self.last: Problem | None = None

    def repeated(self, problem: Problem) -> bool:
        same = problem == self.last
        self.last = problem
        return same


class RunResult(Struct):
    threads: int = 0
    changed: int = 0
    edits: dict[str, int] = field(default_factory=dict)
    recent: int = 0
    #: threads with an open call to a tool left to others (--leave-tool)
    waiting: int = 0
    #: threads that need repair but cannot be rewritten safely (an input error: exit 2)
    left_alone: int = 0
    skipped_calls: int = 0
    problems: list[Problem] = field(default_factory=list)
    journal: Path | None = None
    #: the repaired document when reading stdin
    stdout: bytes | None = None

    def exit_code(self, check: bool = False) -> ExitCode:
        if self.problems:
            return ExitCode.worst(p.exit_code for p in self.problems)
        if self.left_alone:
            return ExitCode.ERROR
        if self.skipped_calls:  # calls repair refused to touch are left for a person
            return ExitCode.FINDINGS
        if check and self.changed:
            return ExitCode.FINDINGS
        return ExitCode.OK


def resolve_dialect(thread: Thread, forced: str | None) -> Dialect | None:
    """The dialect a thread is read with: forced by the user or the store, else sniffed."""
    name = forced or thread.dialect
    if isinstance(thread, IndexedThread) and name in (None, thread.sniffed):
        return dialects.get(thread.sniffed)  # what a sniff of its items gives (and a check of them against it)
    if not name:
        return dialects.sniff(thread.items)
    dialect = dialects.get(name)
    if forced and thread.items and dialect.sniff(thread.items) == 0:
        # forcing settles an ambiguous thread; it must not silently read another format as healthy
        seen = dialects.sniff(thread.items)
        if seen is not None and seen is not dialect:
            raise InputError(f"does not look like {name} (it reads as {seen.name}); drop --dialect or name the "
                             "right one", str(thread.address))
    return dialect


class Scanned(Struct, frozen=True):
    """A thread read for lint or report: its dialect (None when unrecognised) and its index."""

    thread: Thread
    dialect: Dialect | None
    index: ThreadIndex | None


def scan(specs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], options: StoreOptions = StoreOptions(),
         stdin: Any = None, on_store: Callable[[Store], None] | None = None, indexed: bool = False
         ) -> Iterator[Scanned | Problem]:
    """Every thread of every store, indexed by its dialect, read-only; unreadable parts as Problems. ``indexed``:
    through :meth:`Store.threads_indexed` (lint's and report's read: accepted threads indexed from a typed read)."""
    return scan_stores(iter_stores(as_paths(specs), options, stdin, on_store), options, indexed)


def _described(parts: Iterable[tuple[Shard, Any]], options: StoreOptions, on_store: Callable[[Any], None]
               ) -> Iterator[tuple[Shard, Any]]:
    """The parts' results, each input's stores shown to ``on_store`` just before its first part's result, as one
    process shows each store as it opens it, before its threads (what was detected: a table's layout, a
    framework's store; workers never say it). A file a folder walk found has nothing to say; a store the
    parent cannot open is the workers' to report."""
    said: set[str] = set()
    for shard, result in parts:
        if not shard.continues and not shard.in_folder and shard.spec not in said:
            said.add(shard.spec)
            for store in iter_stores([shard.spec], options):
                if not isinstance(store, Problem):
                    on_store(store)
        yield shard, result


def scan_stores(stores: Iterable[Store | Problem], options: StoreOptions = StoreOptions(), indexed: bool = False
                ) -> Iterator[Scanned | Problem]:
    """:func:`scan` over stores already opened (a ``--jobs`` worker's byte range of a file)."""
    for store in stores:
        if isinstance(store, Problem):
            yield store
            continue
        try:
            for thread in store.threads_indexed() if indexed else store.threads():
                if isinstance(thread, ReadProblem):
                    yield Problem(thread.where, thread.message)
                    continue
                try:
                    dialect = resolve_dialect(thread, options.dialect)
                    index = thread.index(dialect) if dialect else None
                except ThreadfixError as exc:
                    yield Problem(exc.where or str(thread.address), exc.message, exc.exit_code)
                    continue
                except MALFORMED as exc:
                    yield Problem(str(thread.address), not_in_format(dialect, exc))
                    continue
                yield Scanned(thread, dialect, index)
        except ThreadfixError as exc:
            yield Problem(exc.where or store.display, exc.message, exc.exit_code)


def scan_parts(specs: list[str], jobs: int | None, options: StoreOptions, work: Callable[[Iterator[Scanned | Problem]], Any],
               by_key: bool = True, on_store: Callable[[Store], None] | None = None, indexed: bool = False
               ) -> Iterator[tuple[Shard, Any]] | None:
    """``work(scanned)`` over each ``--jobs`` part of the inputs, in worker processes, as lint and report run it:
    ``(part, its result)`` in input order; None when the input is not worth spreading (the caller scans it in
    this process). ``work`` must be picklable (a module-level function, or a partial of one); a generator's
    results come back as a list, since a part's result crosses the pipe whole. ``by_key``: a table of one item
    per row may be cut into runs of thread keys (every thread is read; repair cuts its own after a screen)."""
    spread = sharded(specs, jobs, options, by_key)
    if spread is None:
        return None
    processes, shards = spread
    parts = zip(shards, run_sharded(shards, partial(_scan_part, work=work, options=options, indexed=indexed),
                                    processes))
    # what one process says as it opens each store, said once here, in the same place (issue #22)
    return parts if on_store is None else _described(parts, options, on_store)


def _scan_part(shard: Shard, *, work: Callable[[Iterator[Scanned | Problem]], Any], options: StoreOptions,
               indexed: bool = False) -> Any:
    """A ``--jobs`` worker of :func:`scan_parts`: ``work`` over the threads of one part."""
    result = work(scan_stores(shard_stores(shard, options), options, indexed))
    return list(result) if isinstance(result, Iterator) else result


class RepairRun:
    """One ``repair`` over many paths. Iterate :meth:`outcomes`; read :attr:`result` afterwards."""

    def __init__(self, specs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                 options: RunOptions = RunOptions(), stdin: Any = None,
                 progress: Callable[[str, int], None] | None = None,
                 on_store: Callable[[Store], None] | None = None) -> None:
        """``specs``: one path (a str or a Path) or a list of them. ``progress(store, threads_read)`` is called every
        few hundred threads (for a progress bar); ``on_store(store)`` as each store opens (to show what was
        detected about it)."""
        if not isinstance(options, RunOptions):
            raise TypeError(f"options must be a RunOptions, not {type(options).__name__}")
        self.progress = progress
        self.on_store = on_store
        self.specs = as_paths(specs)
        self.options = options
        self.stdin = stdin
        self.result = RunResult()
        self.journal: Journal | None = None

    def threads(self) -> Iterator[ThreadOutcome]:
        """What happened to each thread that was not healthy, and only that: what could not be read is kept in
        ``result.problems`` (and makes :meth:`RunResult.exit_code` 2), so a batch job cannot mistake one for the
        other."""
        for outcome in self.outcomes():
            if isinstance(outcome, ThreadOutcome):
                yield outcome

    def outcomes(self) -> Iterator[ThreadOutcome | Problem]:
        """Each thread's outcome and each problem (a file, line or store that could not be read), in read order:
        tell them apart with ``isinstance`` (or iterate :meth:`threads`, and read ``result.problems`` after)."""
        with walks_kept():  # (a folder is walked once, to size the run and to read it)
            yield from self._outcomes()

    def _outcomes(self) -> Iterator[ThreadOutcome | Problem]:
        options = self.options
        jobs, shards = plan_run(self.specs, options.jobs, options.store, repair=True)  # (inputs sized once)
        try:
            if shards is not None:
                yield from self._sharded(jobs, shards)
                return
            # a table of one item per row may spread its own read over processes: never beside the run's workers
            store_options = replace(options.store, jobs=jobs, spread=spread_for_store)
            batch = _FolderBatch(self) if not options.dry_run and options.output is None else None
            try:
                for store in iter_stores(self.specs, store_options, self.stdin, self.on_store):
                    if batch is not None and batch.takes(store):
                        if batch.add(store):
                            yield from batch.flush()
                        continue
                    if batch is not None:
                        yield from batch.flush()  # (outcomes in read order)
                    if isinstance(store, Problem):
                        self.result.problems.append(store)
                        yield store
                        continue
                    yield from self._store_with_retries(store, partial(self._planned, store, jobs))
                if batch is not None:
                    yield from batch.flush()
            finally:
                if batch is not None:
                    batch.abort()
        finally:
            if self.journal is not None:
                self.journal.close()
                self.result.journal = self.journal.path

    def _sharded(self, processes: int, shards: list[Shard]) -> Iterator[ThreadOutcome | Problem]:
        """Plan file shards and row id ranges in ``processes`` workers; commit each store here, through
        :meth:`_store` as one process does. Other stores are repaired here when their turn comes."""
        now = self._now()
        groups: list[tuple[Store | Problem | None, list[Shard]]] = []
        for shard in shards:
            if groups and shard.continues and groups[-1][1][-1].spec == shard.spec:
                groups[-1][1].append(shard)
            else:
                groups.append((_parent_store(shard, self.options.store), [shard]))
        planned = run_sharded(shards, partial(_plan_shard, options=self.options, now=now), processes)
        # a folder's documents planned by the workers are committed here in batches, as one process does
        batch = _FolderBatch(self) if not self.options.dry_run and self.options.output is None else None
        try:
            yield from self._commit_sharded(groups, planned, batch)
        finally:
            if batch is not None:
                batch.abort()

    def _commit_sharded(self, groups: list[tuple[Store | Problem | None, list[Shard]]], planned: Iterator[Any],
                        batch: _FolderBatch | None) -> Iterator[ThreadOutcome | Problem]:
        for store, members in groups:
            parts = _Parts(planned, len(members))
            if batch is not None and batch.takes(store):
                if self.on_store is not None:
                    self.on_store(store)
                full = batch.add(store, _replay(parts))
                parts.drain()
                if full:
                    yield from batch.flush()
                continue
            if batch is not None:
                yield from batch.flush()  # (outcomes in read order)
            if isinstance(store, Problem):  # its first range's worker met the same: said once, from here
                parts.drain()
                self.result.problems.append(store)
                yield store
                continue
            if store is None:  # not a store the workers read: repaired here, in order
                parts.drain()
                for problem_or_store in iter_stores([members[0].spec], self.options.store, self.stdin, self.on_store):
                    if isinstance(problem_or_store, Problem):
                        self.result.problems.append(problem_or_store)
                        yield problem_or_store
                    else:
                        yield from self._store_with_retries(problem_or_store)
                continue
            if self.on_store is not None:
                self.on_store(store)
            yield from self._store_with_retries(store, lambda parts=parts: _replay(parts))
            parts.drain()  # what a failed first attempt did not read (a retry reads the store itself)
        if batch is not None:
            yield from batch.flush()

    def _planned(self, store: Store, jobs: int) -> Iterator[Planned]:
        """The store's threads planned in ``jobs`` workers by the parts it cuts itself into, when it does (see
        :meth:`Store.parts_to_repair`); else read and planned here."""
        parts = store.parts_to_repair() if jobs > 1 else None
        if parts is None:
            yield from self._plan(store, self._now())
            return
        yield from repeat((_healthy(parts.settled.dialect), None), parts.settled.count)
        yield from _replay(run_sharded(parts.shards, partial(_plan_shard, options=self.options, now=self._now()), jobs))
        for problem in parts.problems:
            yield Problem(problem.where, problem.message), None

    def _now(self) -> float:
        return self.options.now if self.options.now is not None else time.time()

    def _store_with_retries(self, store: Store, planned: Callable[[], Iterable[Planned]] | None = None
                            ) -> Iterator[ThreadOutcome | Problem]:
        """Outcomes are held back until the store committed, so a retried store is reported once.

        Healthy threads are only counted, and the other outcomes wait on disk past a budget (:class:`_Held`),
        so a store of millions of threads, however many of them change, costs flat memory here.
        """
        for attempt in range(BUSY_ATTEMPTS):
            held = _Held()
            try:
                # a retry reads the store again here: the workers' plans are of what it held before
                self._store(store, held, planned() if planned is not None and attempt == 0 else None)
            except WorkerLost:
                held.close()
                raise  # the run's workers are gone: nothing after this can be planned
            except BusyError as exc:
                message = exc.message
                if not held.durable:  # nothing was written: the store can be read again from the start
                    held.close()
                    if attempt + 1 < BUSY_ATTEMPTS:
                        time.sleep(0.2 * (attempt + 1))
                        store = store.reopened()
                        continue
                    held = _Held()
                else:  # part of it is written: what was, and what was not, is reported, not read again
                    read = f"{held.threads:,} thread{'s' if held.threads != 1 else ''}"
                    message += f" (stopped after {read}; the rest were not read)"
                held.add(Problem(exc.where or store.display, message, ExitCode.BUSY))
            except ThreadfixError as exc:
                held.unwritten = store.all_or_nothing  # nothing in it may be reported as repaired
                held.add(Problem(exc.where or store.display, exc.message, exc.exit_code))
            except KeyboardInterrupt:
                if not held.durable:
                    held.close()
                    raise
                # batches already committed stay written: they are reported (and are in the journal), the
                # threads of the batch the interrupt stopped are not (issue #22)
                yield from self._report(held)
                raise
            except BaseException:
                held.close()
                raise
            yield from self._report(held)
            return

    def _report(self, held: _Held) -> Iterator[ThreadOutcome | Problem]:
        """Count a committed store's outcomes into the result, then give them out, in read order."""
        try:
            self.result.threads += held.healthy
            for outcome in held.outcomes:
                if held.unwritten:
                    outcome = _not_written(outcome)
                self._count(outcome)
                yield outcome
        finally:
            held.close()

    def _count(self, outcome: ThreadOutcome | Problem) -> None:
        result = self.result
        if isinstance(outcome, Problem):
            result.problems.append(outcome)
            return
        result.threads += 1
        result.skipped_calls += len(outcome.plan.skips)
        if outcome.status == "recent":
            result.recent += 1
        if outcome.status == "waiting":
            result.waiting += 1
        if outcome.status == "left_alone":
            result.left_alone += 1
        if outcome.status in ("repaired", "would_repair"):
            result.changed += 1
            for edit in outcome.plan.edits:
                result.edits[edit.action.value] = result.edits.get(edit.action.value, 0) + 1

    def _plan(self, store: Store, now: float) -> Iterator[Planned]:
        """Read and plan every thread of a store: what happened to it, and its new bytes and undo record."""
        options = self.options
        for thread in store.threads_to_repair():
            if isinstance(thread, Settled):  # healthy, shown by the store without reading them whole
                yield from repeat((_healthy(thread.dialect), None), thread.count)
                continue
            if isinstance(thread, ReadProblem):
                yield Problem(thread.where, thread.message), None
                continue
            outcome, change = self._thread(store, thread, now)
            if change is None or options.dry_run:
                yield outcome, None
                continue
            if options.output is None:  # (-o changes nothing in place: nothing to undo)
                change.entry = store.entry(thread, change)
            yield outcome, change

    def _store(self, store: Store, held: _Held, planned: Iterable[Planned] | None = None) -> None:
        """Plan the store's threads (or take ``planned``, a ``--jobs`` workers' plans) into ``held``, journal them
        and write them: the one write path of every repair.

        A writer that writes as it goes (a database, in short transactions) is handed the changes as soon as
        their before-images are in the journal, so it holds a batch of threads, not every changed one.
        """
        options = self.options
        writer = None if options.dry_run else store.writer(options.output)
        entries: list[Entry] = []
        #: where the outcome of each thread handed to the writer is held, by thread, to correct those it leaves alone
        written: dict[int, int] = {}
        now = self._now()
        pending = 0  # bytes of before-images in ``entries``, not yet in the journal
        busy = 0  # threads the writer left alone because someone else changed them
        progress, read = self.progress, 0  # (threads planned here or by --jobs workers alike)
        plans = planned if planned is not None else self._plan(store, now)
        try:
            for outcome, change in plans:
                read += 1
                if progress is not None and not read % PROGRESS_EVERY:
                    progress(store.display, read)
                at = held.add(outcome)
                if change is not None and writer is not None:
                    if change.entry is not None:
                        entries.append(change.entry)
                        pending += len(change.entry.before)
                        if pending >= JOURNAL_BATCH_BYTES:  # memory stays flat however many threads change
                            self._journal(entries)
                            pending = 0
                    writer.add(change)
                    written[id(change.thread)] = at
                    if writer.due():
                        self._journal(entries)  # every before-image is synced before the store changes
                        pending = 0
                        busy += self._write(writer, held, written, writer.flush)
            if writer is not None:
                self._journal(entries)
                busy += self._write(writer, held, written, writer.commit)
                if busy:
                    held.add(Problem(store.display, f"{busy} thread{'s' if busy != 1 else ''} changed while "
                                     "threadfix worked on them and were left alone; run again", ExitCode.BUSY))
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):  # handed to the writer, never committed: not repaired
                _uncommitted(held, written)
            close = getattr(plans, "close", None)
            if close is not None:  # the read stops here, not whenever its generator is collected (a retry reads on)
                close()
            if writer is not None:
                writer.abort()
            raise

    def _write(self, writer: StoreWriter, held: _Held, written: dict[int, int], write: Callable[[], Any]) -> int:
        """Have the writer write what it holds (``write``: flush or commit), then mark the outcomes of the threads it
        left alone; how many of those someone else had changed."""
        interrupted = False
        try:
            committed = write()
            if isinstance(committed, bytes):
                self.result.stdout = committed
        except KeyboardInterrupt:  # the writer rolled back what it had not committed: not repaired, not an error
            interrupted = True
            raise
        finally:
            held.durable = writer.durable  # (once true, it stays: committed batches stay written)
            busy = 0
            for thread, error in writer.unwritten():
                at = written.get(id(thread))
                if at is not None:
                    held.outcomes.update(at, _not_written if interrupted else partial(_left_alone, message=error.message))
                busy += error.exit_code == ExitCode.BUSY
            written.clear()  # (the writer let go of those threads: their ids may be reused)
        return busy

    def _journal(self, entries: list[Entry]) -> None:
        """Append ``entries`` to this run's journal (created on first use), then forget them."""
        if entries:
            if self.journal is None:
                self.journal = Journal(self.options.journal_dir or default_folder(), list(self.options.argv))
            self.journal.record(entries)
            entries.clear()

    def _thread(self, store: Store, thread: Thread, now: float) -> tuple[ThreadOutcome, Change | None]:
        """Plan one thread: its outcome, and when it changes, the change its store built (without its journal
        entry)."""
        options = self.options
        try:
            dialect = resolve_dialect(thread, options.store.dialect)
        except ThreadfixError as exc:
            return ThreadOutcome(str(thread.address), None, RepairPlan(), "left_alone", exc.message), None
        if dialect is None:
            return _healthy(None), None
        try:
            if dialect.quick_healthy(thread.items):
                return _healthy(dialect.name), None  # most threads: no address formatted, no outcome built
            plan = plan_repair(thread.index(dialect), dialect, thread.items, options.repair)
        except MALFORMED as exc:
            return (ThreadOutcome(str(thread.address), dialect.name, RepairPlan(), "left_alone",
                                  not_in_format(dialect, exc)), None)
        address = str(thread.address)
        if not plan:
            if plan.skips:  # nothing it can do, and something it must not touch: said, never silent
                return ThreadOutcome(address, dialect.name, plan, "refused", refusal_reason(plan)), None
            return ThreadOutcome(address, dialect.name, plan, "healthy"), None
        applied, plan = plan, as_written(plan, thread.saved_outputs)  # (the dialect applies its own plan)
        age = None
        if options.min_age > 0:  # (at 0 every thread is old enough: no lookup, a query a thread on item tables)
            changed = thread.last_changed()
            # a time in the future (clock skew) counts as "just now": recent
            age = None if changed is None else max(0.0, now - changed)
            if age is not None and age < options.min_age:
                return ThreadOutcome(address, dialect.name, plan, "recent",
                                     f"changed {format_age(age)} ago, under --min-age; its calls may still be running",
                                     age=age), None
        waiting = waiting_on(plan, options.leave_tools)  # (a call whose own output was saved waits on nobody)
        if waiting is not None:
            return ThreadOutcome(address, dialect.name, plan, "waiting", waiting_reason(waiting), age=age), None
        try:
            change = store.change(thread, dialect.apply(thread.items, applied))
        except MALFORMED as exc:
            return ThreadOutcome(address, dialect.name, plan, "left_alone", not_in_format(dialect, exc)), None
        except ThreadfixError as exc:
            return ThreadOutcome(address, dialect.name, plan, "left_alone", exc.message), None
        status = "would_repair" if options.dry_run else "repaired"
        if not options.keep_bytes:
            return ThreadOutcome(address, dialect.name, plan, status, age=age), change
        store.keep_before(thread, change)  # (--diff shows what the change carries)
        return ThreadOutcome(address, dialect.name, plan, status, before=change.before, after=change.data,
                             age=age), change


class _Staged:
    """One file of a folder's batch: its outcomes, held until the batch is committed, and its writer, holding the
    file's new version in a temp file once it changes."""

    __slots__ = ("store", "held", "writer", "entries", "again")

    def __init__(self, store: Store) -> None:
        self.store = store
        self.held = _Held()
        self.writer: Any = None
        self.entries: list[Entry] = []
        #: someone changed the file since it was read: repaired again on its own, in its place in the batch
        self.again = False

    def fail(self, exc: ThreadfixError) -> None:
        """The file is not written (its temp file, if any, removed): said, and nothing in it reported repaired."""
        if self.writer is not None:
            self.writer.abort()
        self.held.unwritten = True
        self.held.add(Problem(exc.where or self.store.display, exc.message, exc.exit_code))


class _FolderBatch:
    """The files of a folder walk, repaired in batches: each file read and planned, its new version written to a
    temp file beside it; then, per batch, the journal appended and synced once, the temp files synced, each file
    swapped in by compare-and-swap (one changed since it was read is not overwritten: it is read and repaired
    again on its own, as any store that changed underneath is), and each folder synced once.

    What a file holds is always its old or its new version, and the journal, synced before the first swap of a
    batch, holds the before-image of every file the batch may swap (``undo`` finds the ones left unswapped as
    they were). Outcomes come out in read order once their batch is committed."""

    def __init__(self, run: RepairRun) -> None:
        self.run = run
        self.staged: list[_Staged] = []
        self.bytes = 0
        self.changed = 0
        #: files read, and the healthy threads of those that hold nothing else (no outcome held for them)
        self.files = 0
        self.healthy = 0

    def takes(self, store: Store | Problem) -> bool:
        return getattr(store, "batched", False)

    def add(self, store: Store, planned: Iterable[Planned] | None = None) -> bool:
        """Read and plan one file (or take ``planned``, a ``--jobs`` worker's plan of it), its new version to a temp
        file; True when the batch is full (flush it)."""
        run = self.run
        self.files += 1
        staged = None
        healthy = 0
        try:
            for outcome, change in planned if planned is not None else run._plan(store, run._now()):
                if change is None and outcome.__class__ is ThreadOutcome and outcome.status == "healthy":
                    healthy += 1  # (most files: one healthy thread, only counted)
                    continue
                if staged is None:
                    staged = self._stage(store)
                staged.held.add(outcome)
                if change is None:
                    continue
                if staged.writer is None:
                    staged.writer = store.writer(None)
                    self.changed += 1
                if change.entry is not None:
                    staged.entries.append(change.entry)
                staged.writer.add(change)
                self.bytes += len(change.data)
            if staged is not None and staged.writer is not None and (rewriter := staged.writer.staged) is not None:
                rewriter.finish()
        except BusyError:
            staged = staged or self._stage(store)
            if staged.writer is not None:
                staged.writer.abort()
            staged.held.close()
            staged.again = True
        except ThreadfixError as exc:
            staged = staged or self._stage(store)
            staged.fail(exc)
        if staged is None:
            self.healthy += healthy
        else:
            staged.held.healthy += healthy
            staged.held.threads += healthy
        return (self.changed >= FOLDER_BATCH_CHANGED or self.bytes >= FOLDER_BATCH_BYTES
                or self.files >= FOLDER_BATCH_FILES)

    def _stage(self, store: Store) -> _Staged:
        staged = _Staged(store)
        self.staged.append(staged)
        return staged

    def flush(self) -> Iterator[ThreadOutcome | Problem]:
        """Commit the batch (journal, sync, swap, sync the folders), then give out its outcomes in read order."""
        run, staged = self.run, self.staged
        run.result.threads += self.healthy  # (files of healthy threads only: nothing to commit)
        self.healthy = self.files = 0
        if not staged:
            return
        changing = [s for s in staged if s.writer is not None and not (s.again or s.held.unwritten) and s.writer.staged]
        try:
            if changing:
                # the temp files are synced while the journal is appended and synced: both before any file changes
                try:
                    errors = sync_temps([s.writer.staged for s in changing],
                                        partial(run._journal, [entry for s in changing for entry in s.entries]))
                except ThreadfixError as exc:
                    for s in changing:
                        s.fail(exc)
                    changing = []
                else:
                    synced = iter(errors)
                    changing = _each(changing, lambda s: s.writer.staged.synced(next(synced)))
                swapped = _each(changing, lambda s: s.writer.staged.swap_in())
                folders: dict[Path, list[_Staged]] = {}
                for s in swapped:
                    folders.setdefault(s.writer.staged.target.parent, []).append(s)
                for folder, in_it in folders.items():
                    try:
                        fsync_folder(folder)
                    except OSError as exc:
                        for s in in_it:
                            s.fail(StoreError(folder_unsynced(exc), s.store.display))
                crashpoint("committed")
        except KeyboardInterrupt:
            # the files swapped in stay written: reported (and in the journal); the others are not (issue #22)
            self.staged, self.bytes, self.changed, self.files = [], 0, 0, 0
            for s in staged:
                if s.writer is not None and s.writer.durable:
                    yield from run._report(s.held)
                else:
                    if s.writer is not None:
                        s.writer.abort()
                    s.held.close()
            raise
        self.staged, self.bytes, self.changed, self.files = [], 0, 0, 0
        for at, s in enumerate(staged):
            try:
                if s.again:
                    yield from run._store_with_retries(s.store.reopened())
                else:
                    yield from run._report(s.held)
            except BaseException:
                for rest in staged[at + 1:]:
                    rest.held.close()
                raise

    def abort(self) -> None:
        """Remove the temp files of a batch that will not be committed (an interrupt, an error) and let it go."""
        for s in self.staged:
            if s.writer is not None:
                s.writer.abort()
            s.held.close()
        self.staged, self.bytes, self.changed, self.files, self.healthy = [], 0, 0, 0, 0


def _each(staged: list[_Staged], step: Callable[[_Staged], None]) -> list[_Staged]:
    """``step`` on each file of a batch; the files it succeeded on. One someone changed meanwhile (BusyError) is
    repaired again on its own; one that cannot be written is said."""
    done = []
    for s in staged:
        try:
            step(s)
        except BusyError:
            s.writer.abort()
            s.held.close()
            s.held = _Held()
            s.again = True
        except ThreadfixError as exc:
            s.fail(exc)
        else:
            done.append(s)
    return done


#: one planned thread: its outcome (or a read problem), and when it changes, the Change its store built
Planned = tuple["ThreadOutcome | Problem", "Change | None"]


def _parent_store(shard: Shard, options: StoreOptions) -> Store | Problem | None:
    """The store a ``--jobs`` parent commits an input's planned parts through (None: the workers do not plan it,
    an input read whole is repaired here), with what it holds noted before any worker reads it (:meth:`Store.pin`:
    a file's fingerprint, so a change meanwhile is caught at commit; a table checks each row as it writes it)."""
    if shard.part is None and not shard.in_folder:
        return None
    if shard.refused is not None:
        return folder_store(shard, options)  # never read, never written: the worker says why
    store: Store | Problem | None
    try:
        store = folder_store(shard, options) if shard.part is None else \
            next(iter(medium_of(shard.spec).reopen(shard.spec, options)), None)  # (unrestricted: it writes them all)
    except ThreadfixError as exc:  # a database that cannot be opened: said once, from here
        return Problem(exc.where or shard.spec, exc.message, exc.exit_code)
    if isinstance(store, Store) and not store.pin():
        return None  # (gone: the worker reports it)
    return store


def _plan_shard(shard: Shard, *, options: RunOptions, now: float) -> tuple[int, list[Planned]] | None:
    """A ``--jobs`` worker: plan one shard (a file's byte range, a table's row id range or keys); healthy
    threads only counted, changed ones as the :class:`~threadfix.stores.base.Change` their store built (what its
    writer needs, the new bytes and the undo record; never whole threads). None: not a shard workers plan, the parent does it."""
    if shard.part is None and _parent_store(shard, options.store) is None:
        return None
    run = RepairRun([], options)
    writes = not options.dry_run  # (a dry run's parent needs only the outcomes)
    healthy = 0
    kept: list[Planned] = []
    for store in shard_stores(shard, options.store):
        if isinstance(store, Problem):  # a database that cannot be read (the parent says so too)
            kept.append((store, None))
            continue
        try:
            for outcome, change in run._plan(store, now):
                if isinstance(outcome, ThreadOutcome) and outcome.status == "healthy":
                    healthy += 1
                    continue
                kept.append((outcome, change if writes else None))  # (the change as its store built it, whole)
        except ThreadfixError as exc:
            kept.append((Problem(exc.where or store.display, exc.message, exc.exit_code), None))
    return healthy, kept


class _Parts:
    """The workers' plans of one input's shards, taken from the pool as they are needed: the parent holds a few
    shards' plans at a time (see :func:`threadfix.parallel._ahead`), however large the input."""

    def __init__(self, planned: Iterator[tuple[int, list[Planned]] | None], count: int) -> None:
        self.planned = planned
        self.left = count

    def __iter__(self) -> Iterator[tuple[int, list[Planned]] | None]:
        while self.left:
            self.left -= 1
            yield next(self.planned)

    def drain(self) -> None:
        for _ in self:
            pass


def _replay(parts: Iterable[tuple[int, list[Planned]] | None]) -> Iterator[Planned]:
    """The workers' plans of one input, in order (healthy threads as one shared outcome each)."""
    repeats = Repeats()
    for part in parts:
        assert part is not None
        healthy, kept = part
        yield from repeat((_healthy(None), None), healthy)
        yield from (planned for planned in kept
                    if not (isinstance(planned[0], Problem) and repeats.repeated(planned[0])))


@cache
def _healthy(dialect: str | None) -> ThreadOutcome:
    """The outcome every healthy thread of a dialect shares: healthy threads are only counted."""
    return ThreadOutcome("", dialect, RepairPlan(), "healthy")


def _uncommitted(held: _Held, written: dict[int, int]) -> None:
    """Mark the outcomes of the threads handed to the writer but not committed as not written, and forget them."""
    for at in written.values():
        held.outcomes.update(at, _not_written)
    written.clear()


def _left_alone(outcome: ThreadOutcome, message: str) -> ThreadOutcome:
    """A thread's outcome once the writer did not write it."""
    return replace(outcome, status="left_alone", message=message)


class _Held:
    """One store's outcomes, held back until it is committed: healthy threads counted, the rest in read order."""

    def __init__(self) -> None:
        self.healthy = 0
        #: threads read, healthy or not
        self.threads = 0
        self.outcomes: SpillList[ThreadOutcome | Problem] = SpillList()
        #: some of the store's changes are durable: it is not read again after a busy error
        self.durable = False
        #: the store was not written (a failed atomic commit): nothing in it may be reported as repaired
        self.unwritten = False

    def add(self, outcome: ThreadOutcome | Problem) -> int:
        """Hold ``outcome``; where it is held (-1 for a healthy thread, only counted)."""
        if isinstance(outcome, ThreadOutcome):
            self.threads += 1
            if outcome.status == "healthy":
                self.healthy += 1
                return -1
            weight = OUTCOME_BYTES + len(outcome.before or b"") + len(outcome.after or b"")
        else:
            weight = OUTCOME_BYTES
        return self.outcomes.append(outcome, weight)

    def close(self) -> None:
        self.outcomes.close()


#: what a dialect raises on items that are not in its format (it reads untrusted JSON)
MALFORMED = (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError)


def not_in_format(dialect: Dialect, exc: BaseException) -> str:
    return f"its items do not follow the {dialect.name} format ({type(exc).__name__}); left alone"


def _not_written(outcome: ThreadOutcome | Problem) -> ThreadOutcome | Problem:
    if isinstance(outcome, ThreadOutcome) and outcome.status == "repaired":
        return ThreadOutcome(outcome.address, outcome.dialect, outcome.plan, "not_written",
                             "the store could not be written", age=outcome.age)
    return outcome


def format_age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
