"""Spread a command over processes: each large store is cut into parts as it cuts itself, and workers read them.

Parsing is the cost of every command and it is CPU-bound, so two cores give close to twice the speed on
large inputs; on small ones the cost of starting workers would eat the gain, so ``auto`` stays in one
process below :data:`AUTO_MIN_BYTES`. How a store is cut is the store's own business (a JSONL file into
byte ranges, a table into row id ranges or runs of keys: :func:`threadfix.stores.cut`), and a part is the
store's own data, which nothing here reads; this module decides how many parts, runs them, and keeps the
ledger where each part's reader posts what it counted for the parts after it (:class:`LineLedger`).
Workers return compact results (findings, partial reports, changed threads' new bytes), never whole threads,
and results come back in input order. Where the system forks, a run's workers are forked straight from this
process and handed one part at a time through a pipe (:class:`_ForkedPool`); elsewhere, and for a store that
spreads its own work (:func:`spread`), they are a :class:`concurrent.futures.ProcessPoolExecutor`'s.
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

from msgspec.structs import replace

from threadfix.errors import ThreadfixError
from threadfix.model import Problem
from threadfix.stores.base import Shard

if TYPE_CHECKING:
    from threadfix.stores import Input, Store, StoreOptions

#: shards handed to the workers ahead of the one the parent is taking, per process (the rest wait, unread)
AHEAD_PER_PROCESS = 2
#: below this much input, one process is faster than starting workers
AUTO_MIN_BYTES = 64 * 1024 * 1024
#: the same for repair, whose screen settles healthy threads without a full parse: one process repairs 200 MB of
#: JSONL in about half a second and the write is one stream whatever the processes, so with the default a second
#: process was slower than one at 130-220 MB (0.80-0.94x in every dialect) and gained nothing measurable at 600 MB
AUTO_MIN_REPAIR_BYTES = 1024 * 1024 * 1024
#: a shard is at least this big (smaller files are not cut)
MIN_SHARD_BYTES = 8 * 1024 * 1024
#: and at most about this big, so that memory stays flat as files grow, and small enough that the workers
#: finish together: a part's cost follows its threads, not its bytes, and a core another program takes slows
#: its worker, so in the last round one worker waits on the others for up to a part's time (with 25 MB parts
#: lint's two workers of 100 MB ended 90 ms apart, a sixth of the run)
MAX_SHARD_BYTES = 16 * 1024 * 1024

Result = TypeVar("Result")


class WorkerLost(ThreadfixError):
    """A worker process died before its part was done: the whole run stops (its part was neither read nor
    written, and the workers' results after it will not come)."""


def resolve_jobs(jobs: int | None, specs: Iterable[str | Input], *, repair: bool = False) -> int:
    """``None`` means automatic: one process for small inputs, every core (at most 8) for large ones (for a repair,
    from :data:`AUTO_MIN_REPAIR_BYTES`). ``specs``: paths, or the inputs :func:`sized` found in them."""
    if jobs is not None:
        return max(1, jobs)
    total = sum(found.size for found in sized(specs))
    floor = AUTO_MIN_REPAIR_BYTES if repair else AUTO_MIN_BYTES
    return 1 if total < floor else max(1, min(os.cpu_count() or 1, 8))


def sized(specs: Iterable[str | Input]) -> list[Input]:
    """The inputs the paths name, each with the bytes it holds (:func:`threadfix.stores.inputs`: a folder walked, a
    database asked its size); an input already sized is kept as it is. What :func:`resolve_jobs` and
    :func:`plan_shards` read, so that a run that asks both walks a folder, or connects to a database, once."""
    from threadfix.stores import Input, inputs

    found: list[Input] = []
    for spec in specs:
        found.extend([spec] if isinstance(spec, Input) else inputs(spec))
    return found


def plan_shards(specs: Iterable[str | Input], jobs: int, options: StoreOptions | None = None, by_key: bool = False
                ) -> list[Shard]:
    """Every input as parts for ``jobs`` workers, each store cut as it cuts itself (:func:`threadfix.stores.cut`;
    ``by_key``: lint and report may take a table of one item per row by runs of keys, where repair screens it
    first, then cuts what it must read itself: see :meth:`threadfix.stores.Store.parts_to_repair`); a store that
    does not cut, or one too small to be worth it, is one part. ``specs``: paths, or the inputs :func:`sized` found
    in them; ``options``: how the stores are found, as the command reads them. What an input is (a file, one a
    folder walk found, a database) is the stores' to say (:func:`threadfix.stores.inputs`): nothing here asks."""
    from threadfix.stores import StoreOptions, cut

    shards: list[Shard] = []
    for found in sized(specs):
        whole = found.whole
        parts = None
        if jobs > 1 and found.size >= 2 * MIN_SHARD_BYTES:
            parts = cut(whole.spec, _parts(found.size, jobs), options or StoreOptions(), by_key)
        shards.extend([replace(whole, part=part, number=number) for number, part in enumerate(parts)] if parts
                      else [whole])
    return shards


def _parts(size: int, jobs: int) -> int:
    """How many parts ``size`` bytes are cut into: at least ``jobs``, none over MAX_SHARD_BYTES nor under
    MIN_SHARD_BYTES, and a multiple of ``jobs`` when that fits (workers take parts in rounds, and a last
    round of fewer parts than workers leaves a core idle)."""
    most = max(1, size // MIN_SHARD_BYTES)
    wanted = max(jobs, -(-size // MAX_SHARD_BYTES))
    rounded = -(-wanted // jobs) * jobs
    return rounded if rounded <= most else min(most, wanted)


class LineLedger:
    """What each part of a run counted, posted by the process that reads the part: a byte range its lines.

    Messages name a thread ``file:LINE``, so a range's reader must know the line it starts on: one past the
    newlines of its file's earlier ranges. Each reader counts its own range's lines as it reads them (so no
    process reads the file twice: a parent counting the lines ahead of the workers took about 0.2 s of CPU
    per GB from them) and posts the count; a range's first line is then the sum of its file's earlier
    counts, which their readers, taking ranges in file order, post about as soon as it needs them. A count
    that does not come in time (a reader that failed, or ranges read out of order) is left to the reader to
    count for itself (:class:`threadfix.stores.ranges.FirstLine`: slower, never wrong). What a part counts is
    its store's business; the ledger only adds up the counts of one input's parts.
    """

    UNKNOWN, ABANDONED = -1, -2

    def __init__(self, size: int, shared: bool, forked: bool = False) -> None:
        """``shared``: in memory that spawned workers share; ``forked`` as well: in memory that forked ones share
        (an anonymous map, without the ctypes that multiprocessing's shared arrays import)."""
        if shared and forked:
            import mmap
            from array import array

            self._map = mmap.mmap(-1, 8 * max(1, size))
            self.counts: Any = memoryview(self._map).cast("q")[:size]
            self.counts[:] = array("q", [self.UNKNOWN] * size)
        elif shared:
            from multiprocessing.sharedctypes import RawArray

            self.counts = RawArray("q", [self.UNKNOWN] * size)
        else:
            self.counts = [self.UNKNOWN] * size

    def lines_before(self, first: int, slot: int) -> int | None:
        """The counts of parts ``first`` to ``slot - 1``, waiting up to LEDGER_WAIT for each; None when one of
        them will not come."""
        total = 0
        deadline = None
        for earlier in range(first, slot):
            count = self.counts[earlier]
            while count == self.UNKNOWN:
                deadline = deadline or time.monotonic() + LEDGER_WAIT
                if time.monotonic() > deadline:
                    return None
                time.sleep(0.0005)
                count = self.counts[earlier]
            if count == self.ABANDONED:
                return None
            total += count
        return total


class LedgerSlot:
    """One part's place in its run's :class:`LineLedger` (what its reader posts to and reads from): the
    :class:`~threadfix.stores.base.PartLedger` a store's part is handed."""

    def __init__(self, ledger: LineLedger, first: int, slot: int) -> None:
        self.ledger, self.first, self.slot = ledger, first, slot

    def post(self, count: int) -> int | None:
        self.ledger.counts[self.slot] = count
        return self.ledger.lines_before(self.first, self.slot)

    def abandon(self) -> None:
        self.ledger.counts[self.slot] = LineLedger.ABANDONED


#: seconds a part's reader waits for an earlier part's count before counting for itself
LEDGER_WAIT = 10.0
#: the ledger of the run in progress in this process (a worker's is its parent's)
_ledger: LineLedger | None = None


def in_order(shards: Iterable[Shard]) -> list[Shard]:
    """The shards of a run read in this process, in order, each part given its slots in a new ledger (this
    process's from now on)."""
    global _ledger
    slotted = _slotted(shards)
    _ledger = LineLedger(len(slotted), shared=False)
    return slotted


def _slotted(shards: Iterable[Shard]) -> list[Shard]:
    """Each part with its slots in a ledger as long as the list: its input's first part's and its own."""
    slotted: list[Shard] = []
    first = 0
    for slot, shard in enumerate(shards):
        if shard.part is not None:
            first = first if shard.continues else slot
            shard = replace(shard, slots=(first, slot))
        slotted.append(shard)
    return slotted


def ledger_slot(shard: Shard) -> LedgerSlot | None:
    """Where the part ``shard`` posts its count in this run's ledger; None when it is read on its own (its
    reader counts for itself)."""
    if _ledger is None or shard.slots is None:
        return None
    return LedgerSlot(_ledger, *shard.slots)


def run_sharded(shards: list[Shard], work: Callable[[Shard], Result], jobs: int) -> Iterator[Result]:
    """``work(shard)`` for every shard, in order; in ``jobs`` processes when there is more than one shard.
    WorkerLost when a worker process dies (killed, out of memory) before its shard is done."""
    if jobs <= 1 or len(shards) <= 1:
        for shard in in_order(shards):
            yield work(shard)
        return
    shards = _slotted(shards)
    processes = min(jobs, len(shards))
    if FORK and _can_fork():
        ledger = LineLedger(len(shards), shared=True, forked=True)  # the workers' (this process reads no range)
        with _forked_pool(processes, ledger) as pool:
            yield from _ahead(pool, work, shards, AHEAD_PER_PROCESS * processes)
        return
    from concurrent.futures.process import BrokenProcessPool

    ledger = LineLedger(len(shards), shared=True)
    with _pool(processes, ledger) as pool:
        try:
            yield from _ahead(pool, work, shards, AHEAD_PER_PROCESS * processes)
        except BrokenProcessPool:
            raise WorkerLost(_LOST) from None


_LOST = ("a --jobs worker process died (killed, or out of memory) before its part was done; "
         "the run stopped there: run again, with fewer --jobs if memory is short")
#: False: --jobs parts go to a multiprocessing pool even where the system forks (the tests compare the two ways)
FORK = True


def _can_fork() -> bool:
    """Whether workers may be forked: as :func:`_pool` decides, without importing multiprocessing to ask."""
    return hasattr(os, "fork") and sys.platform != "win32"


def _ahead(pool: Any, work: Callable[[Shard], Result], shards: list[Shard], ahead: int) -> Iterator[Result]:
    """``pool.map(work, shards)``, with at most ``ahead`` shards handed out and not yet taken by the caller.

    ``map`` hands out every shard at once, so when the caller is the slower side (repair writing what the
    workers planned) the results of a whole input pile up in this process. Shards are handed out in order,
    so a range's worker never waits on the line count of a range not yet handed out.
    """
    queued: deque[Any] = deque()
    waiting = iter(shards)
    for shard in islice(waiting, ahead):
        queued.append(pool.submit(work, shard))
    while queued:
        result = queued.popleft().result()
        shard = next(waiting, None)
        if shard is not None:
            queued.append(pool.submit(work, shard))  # (before the caller takes its time over this result)
        yield result


def spread(work: Callable[[Any, Any], Result], tasks: list[Any], jobs: int, shared: Any = None) -> list[Result] | None:
    """``work(task, shared)`` for every task, in ``jobs`` worker processes, in order. ``shared`` is what every
    task reads: handed to each worker once, and with fork not even copied. A store that spreads its own work
    is handed this as a callback (:attr:`threadfix.stores.StoreOptions.spread`), never imports it.

    None when a worker failed or died (or no process could be started): the caller then does the work
    itself, where an error it meets is reported as its own (an exception crossing from a worker loses
    SQLite's codes).
    """
    try:
        with _pool(min(jobs, len(tasks)), shared=shared) as pool:
            return list(pool.map(partial(_with_shared, work), tasks))
    except Exception:  # noqa: BLE001 - see above
        return None


def spread_for_store(work: Callable[[Any, Any], Result], tasks: list[Any], jobs: int, shared: Any) -> list[Result] | None:
    """:func:`spread`, as handed down to a store (``StoreOptions.spread``: a module-level function, so the
    options still reach ``--jobs`` workers by pickling)."""
    return spread(work, tasks, jobs, shared=shared)


def _with_shared(work: Callable[[Any, Any], Result], task: Any) -> Result:
    """In a worker of :func:`spread`: one task, with what the tasks share."""
    return work(task, shared)


@contextmanager
def _pool(processes: int, ledger: LineLedger | None = None, shared: Any = None) -> Iterator[Any]:
    """Worker processes, stopped at once when the caller leaves early (Ctrl-C, an error, a reader that stops),
    not waited for. A worker that dies fails the results it owed (BrokenProcessPool), where
    multiprocessing's Pool would wait for them for ever."""
    import multiprocessing  # only when there is work to spread: it costs a few ms of every start-up
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    pool = ProcessPoolExecutor(processes, mp_context=context, initializer=_start_worker, initargs=(ledger, shared))
    try:
        yield pool
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown()


def _stop(pool: Any) -> None:
    """End a pool's workers now, whatever they are doing (Python 3.14's ``terminate_workers``)."""
    workers = list((pool._processes or {}).values())  # noqa: SLF001 - no public way before 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(5)


#: in a worker of :func:`spread`, what its tasks share
shared: Any = None


class _Result:
    """What a forked worker will send back for one part (:meth:`_ForkedPool.submit`): ``result()`` waits for it."""

    __slots__ = ("pool", "done", "value", "error")

    def __init__(self, pool: _ForkedPool) -> None:
        self.pool, self.done, self.value, self.error = pool, False, None, None

    def result(self) -> Any:
        while not self.done:
            self.pool.pump()
        if self.error is not None:
            raise self.error
        return self.value


class _ForkedPool:
    """Worker processes forked straight from this one, each handed one part at a time through a pipe.

    What :class:`concurrent.futures.ProcessPoolExecutor` does for the parts of a run, without its imports, its
    manager thread and its queues: those took 25-45 ms of each ``--jobs`` run's start (multiprocessing's
    modules and its shared arrays' ctypes about half, starting the pool and the first parts the rest), time in
    which no worker reads, where the floor in two processes pays one fork. A part's result crosses its pipe
    pickled, as it does through the executor's queue; a worker's exception is raised here; a worker that ends
    before its result is whole stops the run (:class:`WorkerLost`).
    """

    def __init__(self, processes: int, ledger: LineLedger) -> None:
        #: per worker: (pid, its task pipe's end, its result pipe's end)
        self.workers: list[tuple[int, int, int]] = []
        self.idle: deque[int] = deque()
        self.busy: dict[int, tuple[int, _Result]] = {}  # result pipe -> (worker, what it owes)
        self.waiting: deque[tuple[bytes, _Result]] = deque()
        try:
            for _ in range(processes):
                self._start(ledger)
        except OSError as exc:  # no process could be forked (EAGAIN, ENOMEM): none of them is left waiting
            self.terminate()
            raise WorkerLost(f"could not start a --jobs worker process ({exc.strerror or exc}); "
                             "run again, with fewer --jobs") from None

    def _start(self, ledger: LineLedger) -> None:
        tasks_read, tasks_write = os.pipe()
        try:
            results_read, results_write = os.pipe()
        except OSError:
            os.close(tasks_read)
            os.close(tasks_write)
            raise
        try:
            pid = os.fork()
        except OSError:  # (EAGAIN, ENOMEM): the pool ends the workers it has; these ends are no worker's yet
            for end in (tasks_read, tasks_write, results_read, results_write):
                os.close(end)
            raise
        if pid == 0:  # pragma: no cover - the worker (coverage is not collected in forked processes)
            code = 0
            try:
                for _, task_end, result_end in self.workers:  # the parent's ends to the workers forked before
                    os.close(task_end)
                    os.close(result_end)
                os.close(tasks_write)
                os.close(results_read)
                _start_worker(ledger, None)
                _serve(tasks_read, results_write)
            except BaseException:  # noqa: BLE001 - a worker never returns into the parent's code
                code = 1
            finally:
                os._exit(code)
        os.close(tasks_read)
        os.close(results_write)
        self.workers.append((pid, tasks_write, results_read))
        self.idle.append(len(self.workers) - 1)

    def submit(self, work: Callable[[Any], Any], shard: Any) -> _Result:
        import pickle

        owed = _Result(self)
        self.waiting.append((pickle.dumps((work, shard), pickle.HIGHEST_PROTOCOL), owed))
        self._hand_out()
        return owed

    def _hand_out(self) -> None:
        while self.waiting and self.idle:
            task, owed = self.waiting.popleft()
            worker = self.idle.popleft()
            pid, task_end, result_end = self.workers[worker]
            try:
                _send(task_end, task)
            except OSError:
                raise WorkerLost(_LOST) from None
            self.busy[result_end] = (worker, owed)

    def pump(self) -> None:
        """Wait for a worker to send its result, and take every one that is in."""
        import pickle
        import select

        if not self.busy:
            raise WorkerLost(_LOST)  # (nothing is owed: a result was asked for that no worker will send)
        ready, _, _ = select.select(list(self.busy), [], [])
        for result_end in ready:
            worker, owed = self.busy.pop(result_end)
            message = _receive(result_end)
            if message is None:
                raise WorkerLost(_LOST)
            ok, owed.value = pickle.loads(message)
            if not ok:
                owed.error, owed.value = owed.value, None
            owed.done = True
            self.idle.append(worker)
        self._hand_out()

    def shutdown(self) -> None:
        """Let the workers end (no more parts) and wait for them."""
        for pid, task_end, result_end in self.workers:
            os.close(task_end)
        for pid, task_end, result_end in self.workers:
            os.waitpid(pid, 0)
            os.close(result_end)
        self.workers = []

    def terminate(self) -> None:
        """End the workers now, whatever they are doing."""
        import signal

        for pid, task_end, result_end in self.workers:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid, task_end, result_end in self.workers:
            os.close(task_end)
            os.close(result_end)
            os.waitpid(pid, 0)
        self.workers = []


@contextmanager
def _forked_pool(processes: int, ledger: LineLedger) -> Iterator[_ForkedPool]:
    """:func:`_pool` for the parts of a run, with forked workers (:class:`_ForkedPool`)."""
    pool = _ForkedPool(processes, ledger)
    try:
        yield pool
    except BaseException:
        pool.terminate()
        raise
    pool.shutdown()


def _serve(tasks: int, results: int) -> None:  # pragma: no cover - runs in a forked worker
    """A forked worker's loop: each part's work, its result (or its exception) sent back, until the parent
    closes the pipe."""
    import pickle

    while (task := _receive(tasks)) is not None:
        work, shard = pickle.loads(task)
        try:
            message = pickle.dumps((True, work(shard)), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - raised again in the parent, as the executor does
            try:
                message = pickle.dumps((False, exc), pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - an exception that does not pickle: its type and text
                message = pickle.dumps((False, ThreadfixError(f"{type(exc).__name__}: {exc}")), pickle.HIGHEST_PROTOCOL)
        _send(results, message)


_HEADER = 8


def _send(fd: int, message: bytes) -> None:
    """Write ``message`` whole, led by its length."""
    data = memoryview(len(message).to_bytes(_HEADER, "little") + message)
    while data:
        data = data[os.write(fd, data):]


def _receive(fd: int) -> bytes | None:
    """The next message written by :func:`_send`; None when the pipe ends first (the writer ended)."""
    header = _read(fd, _HEADER)
    if header is None:
        return None
    return _read(fd, int.from_bytes(header, "little"))


def _read(fd: int, size: int) -> bytes | None:
    chunks = []
    while size > 0:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _start_worker(ledger: LineLedger | None, common: Any) -> None:
    """Workers share the parent's ledger, and end quietly: Ctrl-C is the parent's to handle, and it ends them
    with SIGTERM (whose CLI handler, inherited through fork, would otherwise print a traceback in each)."""
    import signal

    global _ledger, shared
    _ledger, shared = ledger, common

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def shard_stores(shard: Shard, options: StoreOptions, stdin: Any = None,
                 on_store: Callable[[Store], None] | None = None) -> Iterator[Store | Any]:
    """The stores of one shard, as :func:`threadfix.stores.iter_stores` gives them (Problems included): a part
    reopened by its store's medium and restricted to it, a file a folder walk found, or an input read whole."""
    from threadfix.stores import iter_stores, open_part

    if shard.part is not None:
        for store in open_part(shard.spec, shard.part, options, ledger_slot(shard)):
            if on_store is not None and not isinstance(store, Problem):
                on_store(store)
            yield store  # (or why it cannot be read: each part says it, the parent once in a row)
        return
    if not shard.in_folder:
        yield from iter_stores([shard.spec], options, stdin, on_store)
        return
    store = folder_store(shard, options)
    if on_store is not None and shard.refused is None:
        on_store(store)
    yield store


def folder_store(shard: Shard, options: StoreOptions) -> Store:
    """The store of a file a folder walk found, read whole: read by its suffix, or refused; as the walk found it
    (one of many files: screened from the first)."""
    from threadfix.stores import open_found

    return open_found(shard.spec, shard.refused, options, many=shard.many)


def plan_run(specs: list[str], jobs: int | None, options: StoreOptions | None = None, by_key: bool = False, *,
             repair: bool = False) -> tuple[int, list[Shard] | None]:
    """How many processes a run over ``specs`` takes (``jobs``, or automatic: :func:`resolve_jobs`), and its shards
    when the work is worth spreading over them (None: it stays in this process); ``options`` and ``by_key`` as for
    :func:`plan_shards`. The inputs are sized once, and only when the answer needs it."""
    if "-" in specs:
        return 1, None  # (stdin is read here)
    found = sized(specs) if jobs is None else specs
    count = resolve_jobs(jobs, found, repair=repair)
    if count <= 1:
        return count, None
    shards = plan_shards(found, count, options, by_key)
    return count, shards if len(shards) > 1 else None


def sharded(specs: list[str], jobs: int | None, options: StoreOptions | None = None, by_key: bool = False
            ) -> tuple[int, list[Shard]] | None:
    """``(processes, shards)`` when the work is worth spreading over processes, else None (stay in this one);
    as :func:`plan_run`."""
    count, shards = plan_run(specs, jobs, options, by_key)
    return None if shards is None else (count, shards)
