"""Aggregate scanned threads into a :class:`Report`: what failed, where, and how often. Pure.

A report is built in one streaming pass and holds counters and bounded structures only, never a list of
threads, so its memory does not grow with the store: tools beyond :data:`MAX_TOOLS` are folded into one
row, error-message patterns are pruned to the most frequent, the stuck threads kept are the worst
``keep``. Two reports over different threads merge into the report of both (a ``--jobs`` worker each).

Accepted OpenAI Responses threads in JSONL are read typed (:mod:`threadfix.stores.typed_read`, as lint reads them):
their index is built straight from msgspec's structs and their items and document are never built, since an
accepted thread is neither planned nor checked and its day is its document's (no item of a typed read holds a time
of its own). :data:`TYPED_READ` off reads every thread in full; the tests compare the two.

Every decision comes from the shared libraries, so report agrees with lint and repair: outputs are
classified by :func:`threadfix.failures.classify` (once each, a text that comes back answered from
:mod:`threadfix.verdicts`, as in lint), dangling calls are the planner's
(:func:`threadfix.repair.plan_repair`), their kinds its explanations, and "a provider would refuse this
thread" is the dialect's own oracle (:meth:`Dialect.check`).

The ``*_rows`` functions at the end are the report's tables as plain rows; every renderer prints those,
so every format shows the same numbers.
"""

from __future__ import annotations

import heapq
import os
import re
import time
from bisect import bisect_right
from collections import Counter, _count_elements
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from functools import cache, lru_cache, partial
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any

from msgspec import Struct, field
from msgspec.structs import replace

from threadfix.batch import PROGRESS_EVERY, Problem, Repeats, Scanned, scan, scan_parts
from threadfix.dialects import Dialect
from threadfix.failures import clip, info
from threadfix.failures.classifier import Classification, output_text
from threadfix.failures.dangling import TOOL_NAME_CHARS
from threadfix.failures.kinds import Kind
from threadfix.model import Action, Call, Edit, Loc, Output, RepairPlan, Thread, ThreadIndex
from threadfix.repair import plan_repair, waiting_on
from threadfix.stores import Store, StoreOptions
from threadfix.stores.jsonl import IndexedThread
from threadfix.times import ITEM_TIME_KEYS, modified_time, parse_time
from threadfix.verdicts import failure_of

#: distinct tools counted one by one; the rest share the row :data:`OTHER_TOOLS`
MAX_TOOLS = 1000
#: distinct error-message patterns remembered; beyond twice this, the rarest are pruned
MAX_PATTERNS = 1000
#: distinct days counted; threads on further days count as undated
MAX_DAYS = 3700
#: later user turns at or above this share one bucket of the stuck-since histogram
TURNS_CAP = 10
#: characters of an error message kept for its example and its pattern
MESSAGE_CHARS = 400
ADDRESS_CHARS = 300
STUCK_TOOLS = 3

OTHER_TOOLS = "(other tools)"
NO_CALL = "(no call)"
BREAKDOWNS = ("tool", "kind", "thread", "day")
#: keys a thread's container may carry for when it started (the update keys come first)
THREAD_START_KEYS = ("created_at", "createdAt", "timestamp", "created", "time", "started_at")
#: False: no shortcut (every call's and output's day looked up one by one, the dialect's quick check asked, the
#: index's own verdict not taken, every message mask tried); the tests compare the two ways
FAST = True
#: False: every thread line read in full; True: accepted Responses threads read typed, as lint reads them
#: (:mod:`threadfix.stores.typed_read`), their items never built
TYPED_READ = True


# --------------------------------------------------------------------------- data


class Totals(Struct):
    """Store-wide counts. ``unreadable``: files, lines or rows that could not be read as threads."""

    threads: int = 0
    unrecognised_threads: int = 0
    calls: int = 0
    outputs: int = 0
    error_outputs: int = 0
    threadfix_outputs: int = 0
    dangling_calls: int = 0
    calls_left_alone: int = 0
    stuck_threads: int = 0
    refused_threads: int = 0
    repaired_threads: int = 0
    undated_threads: int = 0
    unreadable: int = 0
    #: threads with open calls changed under ``min_age`` ago (their calls may still run): not counted as stuck
    recent_threads: int = 0
    #: threads with an open call to a tool left to others (``leave_tools``): not counted as stuck
    waiting_threads: int = 0

    def merge(self, other: Totals) -> None:
        for name in self.__struct_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class ToolStats(Struct):
    """One tool's calls and failures; ``*_kinds`` count failure kinds by value."""

    calls: int = 0
    outputs: int = 0
    error_outputs: int = 0
    dangling_calls: int = 0
    error_kinds: Counter[str] = field(default_factory=Counter)
    dangling_kinds: Counter[str] = field(default_factory=Counter)

    @property
    def failures(self) -> int:
        return self.error_outputs + self.dangling_calls

    @property
    def kinds(self) -> Counter[str]:
        return self.error_kinds + self.dangling_kinds

    @property
    def error_rate(self) -> float | None:
        """Failed calls per call (None for outputs whose call is not in the thread)."""
        return self.failures / self.calls if self.calls else None

    def merge(self, other: ToolStats) -> None:
        self.calls += other.calls
        self.outputs += other.outputs
        self.error_outputs += other.error_outputs
        self.dangling_calls += other.dangling_calls
        self.error_kinds.update(other.error_kinds)
        self.dangling_kinds.update(other.dangling_kinds)


class DayStats(Struct):
    threads: int = 0
    stuck_threads: int = 0
    calls: int = 0
    error_outputs: int = 0
    dangling_calls: int = 0

    def merge(self, other: DayStats) -> None:
        for name in self.__struct_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class Cluster(Struct):
    """Error outputs whose text is the same once ids, numbers, paths... are masked, with one example."""

    kind: str
    pattern: str
    count: int
    #: the first example seen: where it is, the tool, and its text (raw, clipped: renderers make it safe)
    address: str
    tool: str
    text: str


class StuckThread(Struct, frozen=True):
    """A thread with dangling calls; worse = more user turns since the first one, then more of them."""

    address: str
    dialect: str
    dangling_calls: int
    later_user_turns: int
    #: the first dangling call: where it is, its kind and cause
    first: str
    kind: str
    cause: str
    tools: tuple[str, ...]
    day: str | None

    @property
    def severity(self) -> tuple[int, int]:
        return self.later_user_turns, self.dangling_calls


class Report(Struct):
    """What failed, where, and how often, over every thread added. Constant memory; mergeable."""

    #: how many of the worst stuck threads to remember
    keep: int = 10
    totals: Totals = field(default_factory=Totals)
    tools: dict[str, ToolStats] = field(default_factory=dict)
    #: error-message clusters by (kind, pattern)
    clusters: dict[tuple[str, str], Cluster] = field(default_factory=dict)
    #: error outputs whose cluster was pruned (counted in totals, in no cluster)
    unclustered: int = 0
    days: dict[str, DayStats] = field(default_factory=dict)
    #: stuck threads by later user turns (``TURNS_CAP`` = that many or more)
    stuck_by_turns: Counter[int] = field(default_factory=Counter)
    #: min-heap of (later user turns, dangling calls, -order, thread): the worst ``keep``
    _stuck: list[tuple[int, int, int, StuckThread]] = field(default_factory=list)
    _order: int = 0
    #: open calls of threads changed more recently than this many seconds are pending, not dangling (as in lint)
    min_age: float = 0.0
    #: tool name globs whose open calls wait on a person or another process (``--leave-tool``), as in lint
    leave_tools: tuple[str, ...] = ()
    #: the clock for ``min_age`` (None: now)
    now: float | None = None

    # ------------------------------------------------------------------ adding

    def add(self, thread: Thread, dialect: Dialect | None, index: ThreadIndex | None) -> None:
        """Count one thread read by ``dialect`` (None when no dialect recognised it)."""
        totals = self.totals
        totals.threads += 1
        self._order += 1
        times = _Times(thread)
        day = self._day(times.thread_day)
        if day is None:
            totals.undated_threads += 1
        else:
            day.threads += 1
        if dialect is None or index is None:
            totals.unrecognised_threads += 1
            return
        tool_of = self._add_calls(index, times)
        self._add_outputs(thread, index, times, tool_of)
        # as in repair and lint: a healthy thread is not planned (the index may have seen it accepted on its way)
        accepted = (FAST and index.accepted) or dialect.quick_accepted(thread.items)
        healthy = accepted or dialect.quick_healthy(thread.items)
        plan = RepairPlan() if healthy else plan_repair(index, dialect, thread.items)
        totals.calls_left_alone += len(plan.skips)
        dangling = [edit for edit in plan.edits if edit.action is Action.INSERT_OUTPUT]
        if dangling and waiting_on(plan, self.leave_tools) is not None:
            totals.waiting_threads += 1
            dangling = []
        elif dangling and self.min_age > 0:
            changed = thread.last_changed()
            now = self.now if self.now is not None else time.time()
            if changed is not None and now - changed < self.min_age:
                totals.recent_threads += 1
                dangling = []
        if dangling:
            self._add_dangling(thread, dialect, index, times, dangling)
            if day is not None:
                day.stuck_threads += 1
        if not accepted and dialect.check(thread.items):
            totals.refused_threads += 1

    def _add_calls(self, index: ThreadIndex, times: _Times) -> dict[str, str]:
        """Count calls per tool and day; returns the tool of each call id."""
        calls = index.calls
        if FAST:
            # C-level passes: counted by name, first seen first; each id's first call names its tool (where an id
            # comes twice the dict is built again backwards, so the first wins); a None id is no output's: no key
            names = list(map(_NAME, calls))
            per_tool = _tally(names)
            ids = list(map(_CALL_ID, calls))
            tool_of = dict(zip(ids, names))
            if len(tool_of) < len(ids):
                tool_of = dict(zip(reversed(ids), reversed(names)))
            tool_of.pop(None, None)  # type: ignore[call-overload]
            per_day = times.calls_by_day(calls)
        else:
            tool_of = {}
            per_tool = {}  # counted here, then added once per tool (first seen first, as one by one)
            per_day = {}
            for call in calls:
                name = call.name
                per_tool[name] = per_tool.get(name, 0) + 1
                if call.call_id is not None:
                    tool_of.setdefault(call.call_id, name)
                day = times.of(call.at)
                per_day[day] = per_day.get(day, 0) + 1
        for name, count in per_tool.items():
            self._tool(name).calls += count
        for day, count in per_day.items():
            if (stats := self._day(day)) is not None:
                stats.calls += count
        self.totals.calls += len(calls)
        return tool_of

    def _add_outputs(self, thread: Thread, index: ThreadIndex, times: _Times, tool_of: dict[str, str]) -> None:
        """Classify each output once; count the failures by tool, kind, day and message."""
        totals = self.totals
        outputs = index.outputs
        totals.outputs += len(outputs)
        if FAST:
            # outputs counted per tool in C-level passes (first seen first, as one by one; a None id is no key of
            # tool_of), then asked of the classifier in one C-level pass, and only failures looked at again
            tools = list(map(tool_of.get, map(_CALL_ID, outputs), repeat(NO_CALL)))
            for name, count in _tally(tools).items():
                self._tool(name).outputs += count
            ours = sum(map(_BY_THREADFIX, outputs))
            found = list(map(failure_of, map(_CONTENT, outputs), map(_IS_ERROR, outputs), map(_STATUS, outputs)))
            if found.count(None) < len(found):
                for at in [at for at, verdict in enumerate(found) if verdict is not None]:
                    tool = tools[at]
                    self._add_failure(found[at], outputs[at], self._tool(tool), thread, times, tool)
        else:
            ours = 0
            for output in outputs:
                call_id = output.call_id
                tool = tool_of.get(call_id, NO_CALL) if call_id is not None else NO_CALL
                stats = self._tool(tool)
                stats.outputs += 1
                ours += output.by_threadfix
                failure = failure_of(output.content, output.is_error, output.status)
                if failure is not None:
                    self._add_failure(failure, output, stats, thread, times, tool)
        totals.threadfix_outputs += ours
        totals.repaired_threads += ours > 0

    def _add_failure(self, found: Classification, output: Output, stats: ToolStats, thread: Thread, times: _Times,
                     tool: str) -> None:
        """Count one error output by tool, kind, day and message."""
        kind = found.kind.value
        self.totals.error_outputs += 1
        stats.error_outputs += 1
        stats.error_kinds[kind] += 1
        if (day := self._day(times.of(output.at))) is not None:
            day.error_outputs += 1
        text = found.excerpt or output_text(output.content, MESSAGE_CHARS)
        self._cluster(kind, text, thread, tool, output.at)

    def _add_dangling(self, thread: Thread, dialect: Dialect, index: ThreadIndex, times: _Times,
                      dangling: list[Edit]) -> None:
        """Count the calls repair would answer, and remember the thread if it is among the worst."""
        for edit in dangling:
            stats = self._tool(edit.tool or "unknown")
            stats.dangling_calls += 1
            stats.dangling_kinds[edit.kind.value if edit.kind else Kind.ABORTED.value] += 1
            if (day := self._day(times.of(edit.at))) is not None:
                day.dangling_calls += 1
        self.totals.dangling_calls += len(dangling)
        self.totals.stuck_threads += 1
        self._add_stuck(thread, dialect.name, index, dangling, times.thread_day)

    def add_problem(self) -> None:
        """Count a file, line or row that could not be read."""
        self.totals.unreadable += 1

    # ------------------------------------------------------------------ merging

    def merge(self, other: Report) -> Report:
        """Fold ``other`` (a report over other threads, read after these) into this one; returns self."""
        self.totals.merge(other.totals)
        for name, stats in other.tools.items():
            self._tool(name).merge(stats)
        for key, cluster in other.clusters.items():
            mine = self.clusters.get(key)
            if mine is None:
                self.clusters[key] = replace(cluster)
            else:
                mine.count += cluster.count
        self.unclustered += other.unclustered
        self._prune_clusters()
        for name, stats in other.days.items():
            if (day := self._day(name)) is not None:
                day.merge(stats)
            else:
                self.totals.undated_threads += stats.threads
        self.stuck_by_turns.update(other.stuck_by_turns)
        for turns, count, order, stuck in other._stuck:
            self._push_stuck((turns, count, order - self._order, stuck))
        self._order += other._order
        return self

    # ------------------------------------------------------------------ reading

    def stuck(self) -> list[StuckThread]:
        """The worst stuck threads kept, worst first (ties: the one read first)."""
        return [entry[3] for entry in sorted(self._stuck, reverse=True)]

    def kinds(self) -> dict[str, ToolStats]:
        """Failures by kind: one ToolStats-shaped tally per kind (calls unused), tools in ``*_kinds``."""
        by_kind: dict[str, ToolStats] = {}
        for tool, stats in self.tools.items():
            for kind, count in stats.error_kinds.items():
                entry = by_kind.setdefault(kind, ToolStats())
                entry.error_outputs += count
                entry.error_kinds[tool] += count
            for kind, count in stats.dangling_kinds.items():
                entry = by_kind.setdefault(kind, ToolStats())
                entry.dangling_calls += count
                entry.dangling_kinds[tool] += count
        return by_kind

    @property
    def approximate(self) -> bool:
        """Whether some counts are folded or pruned (very many tools, patterns or days)."""
        return OTHER_TOOLS in self.tools or self.unclustered > 0 or len(self.days) >= MAX_DAYS

    # ------------------------------------------------------------------ internals

    def _tool(self, name: str) -> ToolStats:
        """A tool's tally; once :data:`MAX_TOOLS` tools have one, new tools share :data:`OTHER_TOOLS`."""
        if FAST and (stats := self.tools.get(name)) is not None:
            return stats  # a name that is a key is its own clip (clip is idempotent): the common case, one lookup
        name = clip(name, TOOL_NAME_CHARS)
        stats = self.tools.get(name)
        if stats is None:
            if len(self.tools) >= MAX_TOOLS:
                name = OTHER_TOOLS
                stats = self.tools.get(name)
            if stats is None:
                stats = self.tools[name] = ToolStats()
        return stats

    def _day(self, day: str | None) -> DayStats | None:
        if day is None:
            return None
        stats = self.days.get(day)
        if stats is None and len(self.days) < MAX_DAYS:
            stats = self.days[day] = DayStats()
        return stats

    def _cluster(self, kind: str, text: str, where: str | Thread, tool: str, at: Loc | None = None) -> None:
        """Count one error message; ``where`` is its address, or with ``at`` the thread it is in (the address is
        only written out for a new cluster's example)."""
        text = clip(text, MESSAGE_CHARS)
        key = (kind, pattern_of(text))
        cluster = self.clusters.get(key)
        if cluster is None:
            address = _item_address(where, at) if at is not None and isinstance(where, Thread) else str(where)
            self.clusters[key] = Cluster(kind, key[1], 1, clip(address, ADDRESS_CHARS), tool, text)
            self._prune_clusters()
        else:
            cluster.count += 1

    def _prune_clusters(self) -> None:
        """Keep the most frequent patterns once there are twice too many (amortised: one sort per MAX)."""
        if len(self.clusters) < 2 * MAX_PATTERNS:
            return
        ranked = sorted(self.clusters.items(), key=lambda entry: entry[1].count, reverse=True)
        for key, cluster in ranked[MAX_PATTERNS:]:
            self.unclustered += cluster.count
            del self.clusters[key]

    def _add_stuck(self, thread: Thread, dialect: str, index: ThreadIndex, dangling: list[Edit], day: str | None) -> None:
        first = min(dangling, key=lambda edit: edit.at)
        turns = len(index.user_turns) - bisect_right(index.user_turns, first.at[0])
        self.stuck_by_turns[min(turns, TURNS_CAP)] += 1
        tools = tuple(dict.fromkeys(clip(edit.tool or "unknown", TOOL_NAME_CHARS) for edit in dangling))[:STUCK_TOOLS]
        stuck = StuckThread(
            address=clip(str(thread.address), ADDRESS_CHARS), dialect=dialect, dangling_calls=len(dangling),
            later_user_turns=turns, first=_item_label(first.at),
            kind=first.kind.value if first.kind else Kind.ABORTED.value, cause=first.cause or "", tools=tools, day=day,
        )
        self._push_stuck((turns, len(dangling), -self._order, stuck))

    def _push_stuck(self, entry: tuple[int, int, int, StuckThread]) -> None:
        if self.keep <= 0:
            return
        if len(self._stuck) < self.keep:
            heapq.heappush(self._stuck, entry)
        elif entry[:3] > self._stuck[0][:3]:
            heapq.heapreplace(self._stuck, entry)


def build_report(scanned: Iterable[Scanned | Problem], *, keep: int = 10,
                 on_problem: Callable[[Problem], None] | None = None,
                 progress: Callable[[str, int], None] | None = None,
                 min_age: float = 0.0, leave_tools: tuple[str, ...] = (), now: float | None = None) -> Report:
    """A report over what :func:`threadfix.batch.scan` yields; each unreadable part goes to ``on_problem``.

    ``progress(store, threads_read)`` is called every few hundred threads (for a progress line). Open calls of
    threads changed under ``min_age`` seconds ago, or waiting on a tool of ``leave_tools``, are not counted as
    dangling (as lint does not report them).
    """
    report = Report(keep=keep, min_age=min_age, leave_tools=leave_tools,
                    now=now if now is not None or min_age <= 0 else time.time())
    for entry in scanned:
        if isinstance(entry, Scanned):
            report.add(entry.thread, entry.dialect, entry.index)
            if progress is not None and report.totals.threads % PROGRESS_EVERY == 0:
                progress(entry.thread.address.source, report.totals.threads)
        else:
            report.add_problem()
            if on_problem is not None:
                on_problem(entry)
    return report


def report_paths(specs: list[str], options: StoreOptions = StoreOptions(), *, keep: int = 10, jobs: int | None = 1,
                 on_problem: Callable[[Problem], None] | None = None,
                 progress: Callable[[str, int], None] | None = None,
                 on_store: Callable[[Store], None] | None = None,
                 min_age: float = 0.0, leave_tools: tuple[str, ...] = ()) -> Report:
    """:func:`build_report` over paths, spread over ``jobs`` processes when the input is large (None: by its size).

    Each worker reports on its share of the threads; the parts are merged in input order, so the report is the
    one a single process builds.
    """
    if isinstance(specs, (str, os.PathLike)):  # one path, never its characters
        specs = [specs]
    specs = [os.fspath(spec) for spec in specs]
    judged = {"min_age": min_age, "leave_tools": tuple(leave_tools), "now": time.time() if min_age > 0 else None}
    typed = TYPED_READ
    parts = scan_parts(specs, jobs, options, partial(_report_part, keep=keep, judged=judged), on_store=on_store,
                       indexed=typed)
    if parts is None:
        # a store that spreads its own read (PostgreSQL key ranges over connections) takes --jobs itself
        scanned = scan(specs, replace(options, jobs=jobs) if jobs else options, on_store=on_store, indexed=typed)
        return build_report(scanned, keep=keep, on_problem=on_problem,
                            progress=progress, **judged)
    report = Report(keep=keep, **judged)
    repeats = Repeats()
    for shard, (part, problems) in parts:
        for problem in problems:
            if repeats.repeated(problem):
                part.totals.unreadable -= 1  # (its worker counted it too)
            elif on_problem is not None:
                on_problem(problem)
        report.merge(part)
        if progress is not None:
            progress(shard.spec, report.totals.threads)
    return report


def _report_part(scanned: Iterable[Scanned | Problem], *, keep: int, judged: dict[str, Any]
                 ) -> tuple[Report, list[Problem]]:
    """A ``--jobs`` worker: the report over one part, and what could not be read there."""
    problems: list[Problem] = []
    part = build_report(scanned, keep=keep, on_problem=problems.append, **judged)
    return part, problems


# --------------------------------------------------------------------------- time


class _Times:
    """The day of a thread and of its items, read lazily: each message's time is looked up at most once."""

    __slots__ = ("items", "thread_day", "_by_message")

    def __init__(self, thread: Thread) -> None:
        moment = thread.exact_time()
        if thread.__class__ is IndexedThread and thread.full is None:
            # a typed read: no item holds a time (it knows no such key), so every item is on the thread's day, which
            # its document's update time gives, else its start time (what the lines below read of the full document)
            self.items = None
            if moment is None:
                updated, created = thread.document_times
                moment = None if updated is None else parse_time(updated)
                if moment is None and created is not None:
                    moment = parse_time(created)
            self.thread_day = day_of(moment)
            return
        self.items = items = thread.items
        # the store's exact time (a row's time column), else the thread's and its last items' own; never
        # a file's mtime, which says when the file was written, not when its threads happened
        if moment is None:
            # what Thread.last_changed reads: the container and the last three items (none of which holds a time,
            # in most threads: then the container alone, without a lookup of every time key in each)
            moment = modified_time(thread.document, [] if FAST and _timeless(items[-3:]) else items, None)
        if moment is None and thread.document:
            moment = next((t for key in THREAD_START_KEYS if (t := parse_time(thread.document.get(key))) is not None), None)
        self.thread_day = day_of(moment)
        self._by_message: dict[int, str | None] = {}

    def of(self, at: Loc) -> str | None:
        """The day of the message at ``at``: its own time, else the thread's."""
        if self.items is None:
            return self.thread_day
        message = at[0]
        if message not in self._by_message:
            item = self.items[message] if 0 <= message < len(self.items) else None
            moment = _item_time(item) if isinstance(item, dict) else None
            self._by_message[message] = day_of(moment) if moment is not None else self.thread_day
        return self._by_message[message]

    def calls_by_day(self, calls: tuple[Call, ...]) -> dict[str | None, int]:
        """How many of ``calls`` fall on each day: one C-level pass over their messages' keys when none holds
        a time (most threads), so each is on the thread's day; else each call's day in turn."""
        items = self.items
        if items is None:
            return {self.thread_day: len(calls)} if calls else {}
        try:
            # an index past the end raises; a negative one reads another item, whose answer is only ever
            # "look at each" or the thread's day, what of() gives a message outside the thread
            if _timeless(map(items.__getitem__, map(_MESSAGE, map(_AT, calls)))):
                return {self.thread_day: len(calls)} if calls else {}
        except IndexError:
            pass
        return Counter(map(self.of, map(_AT, calls)))


def _tally(values: Iterable[str]) -> dict[str, int]:
    """How many times each value comes, first seen first: what ``Counter(values)`` holds, by the C loop Counter
    itself counts with, without Counter's own set-up (its type check of the argument costs more than counting the
    dozen tool names of a thread, and it is paid twice a thread)."""
    counts: dict[str, int] = {}
    _count_elements(counts, values)
    return counts


def _timeless(items: Iterable[Any]) -> bool:
    """No item is an object with a time key (one C-level pass over the items' keys)."""
    try:
        return all(map(_TIME_KEYS.isdisjoint, items))
    except TypeError:  # an item that is not an object or a list (a number): look at each
        return False


_TIME_KEYS = frozenset(ITEM_TIME_KEYS)
_NAME = attrgetter("name")
_CALL_ID = attrgetter("call_id")
_BY_THREADFIX = attrgetter("by_threadfix")
_CONTENT = attrgetter("content")
_IS_ERROR = attrgetter("is_error")
_STATUS = attrgetter("status")
_AT = attrgetter("at")
_MESSAGE = itemgetter(0)


def _item_time(item: dict[str, Any]) -> float | None:
    if item.keys().isdisjoint(ITEM_TIME_KEYS):
        return None  # most items carry no time of their own: settled by one C-level pass over the keys
    for key in ITEM_TIME_KEYS:
        value = item.get(key)
        if value is not None and (moment := parse_time(value)) is not None:
            return moment
    return None


def day_of(moment: float | None) -> str | None:
    """``YYYY-MM-DD`` (UTC) of seconds since the epoch; None when unknown or out of range."""
    if moment is None or moment != moment:
        return None
    try:
        return datetime.fromtimestamp(moment, timezone.utc).date().isoformat()
    except (OverflowError, OSError, ValueError):
        return None


# --------------------------------------------------------------------------- clustering

QUOTED_VALUE_CHARS = 34
_SPACE = re.compile(r"\s")
_DIGIT = re.compile(r"\d")
#: "0x", or eight characters of the hex mask's class: in every text the hex mask changes (the class and "x" under
#: IGNORECASE match exactly these characters, and a pattern without the flag is searched faster)
_HEXY = re.compile(r"0[xX]|[0-9a-fA-F]{8}")
#: the minutes of a time of day, between its colons: in every text the time-of-day mask changes
_CLOCK = re.compile(r":\d\d:")
#: three labels joined by dots, as the host mask takes them (under its flags)
_DOTTED = re.compile(r"[a-z0-9-]\.[a-z0-9-]+\.[a-z0-9-]", re.I)
#: a digit, then a letter later in the same run of word characters and dashes
_DIGIT_THEN_LETTER = re.compile(r"\d[\w-]*[A-Za-z]")


def _holding(*needles: str) -> Callable[[str], bool]:
    """A test of whether a text holds one of ``needles``: ``in`` once for each, no generator set up per call."""
    needle, *rest = needles
    if not rest:
        return lambda text: needle in text
    holds_another = _holding(*rest)
    return lambda text: needle in text or holds_another(text)


def _host_like(text: str) -> bool:
    """A digit and three labels joined by dots: in every text the host mask changes (the counts first: cheaper)."""
    return text.count(".") > 1 and _DIGIT.search(text) is not None and _DOTTED.search(text) is not None


def _mixed_word(text: str) -> bool:
    """A run of word characters and dashes that holds a digit and a letter, in either order: in every text the id
    mask changes. A letter then a digit is a digit then a letter in the reversed text, so both are searched from the
    digits, which are few, never from every letter."""
    return _DIGIT_THEN_LETTER.search(text) is not None or _DIGIT_THEN_LETTER.search(text[::-1]) is not None


#: (pattern, mask, flags, a cheap test true of every text the regex matches in, the characters every match starts
#: with or None); a mask whose test fails on the text as the masks before it left it is not tried, which spares most
#: messages most of the regexes
_MASK_TABLE: tuple[tuple[str, Any, int, Callable[[str], Any], str | None], ...] = (
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uuid>", re.I, lambda t: t.count("-") > 3,
     "[0-9a-f]"),
    (r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b", "<time>", 0,
     lambda t: t.count("-") > 1, r"\d"),
    (r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "<time>", 0, _CLOCK.search, r"\d"),
    (r"\b[a-z][a-z0-9+.-]*://\S+", "<url>", re.I, _holding("://"), None),
    (r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b", "<email>", 0, _holding("@"), None),
    (r"\b(?=[\w.-]*\d)[a-z0-9-]+(?:\.[a-z0-9-]+){2,}(?::\d+)?\b", "<host>", re.I, _host_like, None),
    # a quoted name or value varies; a quoted sentence (a nested message) is kept, its ids masked below
    (r"\"[^\"\n]{0,200}\"|(?<!\w)'[^'\n]{0,200}'(?!\w)|`[^`\n]{0,200}`",
     lambda m: "<str>" if len(m.group()) <= QUOTED_VALUE_CHARS or not _SPACE.search(m.group()) else m.group(), 0,
     _holding('"', "'", "`"), "[\"'`]"),
    (r"(?:\b[A-Za-z]:|~|\.{1,2})?(?:[\\/][\w.@~+-]+)+[\\/]?|\b[\w.-]+(?:/[\w.@~+-]+)+", "<path>", 0,
     _holding("/", "\\"), r"[\w.~\\/-]"),
    (r"\b0x[0-9a-f]+\b|\b(?=[a-f]*\d)(?=\d*[a-f])[0-9a-f]{8,}\b", "<hex>", re.I, _HEXY.search, None),
    (r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])\w+(?:[_-]\w+)+\b|\b(?=\w*\d)(?=\w*[A-Za-z])\w{8,}\b", "<id>", 0, _mixed_word, None),
    (r"[-+]?\b\d+(?:[.,]\d+)*", "<n>", 0, _DIGIT.search, r"[-+\d]"),
    # one space for one space changes nothing; every other whitespace character is not printable
    (r"\s+", " ", 0, lambda t: "  " in t or not t.isprintable(), None),
)


@cache
def written_masks() -> tuple[tuple[re.Pattern[str], Any, Callable[[str], Any]], ...]:
    """(regex, mask, its test): the masks as written, each tried in turn; compiled when first asked for (only a run
    with :data:`FAST` off, and the tests that hold the led masks to them, ask), not at every report's start."""
    return tuple((re.compile(pattern, flags), mask, may_match) for pattern, mask, flags, may_match, _ in _MASK_TABLE)


#: the masks, each regex led by a lookahead for the characters its matches start with: the regex engine then skips
#: every other position at once instead of trying the whole pattern there (a third faster on the benchmark's error
#: messages), and matches exactly where the regex as written matches, since it consumes such a character first
_LED_MASKS: tuple[tuple[re.Pattern[str], Any, Callable[[str], Any]], ...] = tuple(
    (re.compile(pattern if lead is None else f"(?={lead})(?:{pattern})", flags), mask, may_match)
    for pattern, mask, flags, may_match, lead in _MASK_TABLE)
PATTERN_CHARS = 160


@lru_cache(maxsize=2048)  # the same error text comes back again and again (a rate limit, a timeout)
def pattern_of(text: str) -> str:
    """The message with what varies between occurrences masked, so the same error groups together."""
    if FAST:
        for regex, mask, may_match in _LED_MASKS:
            if may_match(text):
                text = regex.sub(mask, text)
    else:
        for regex, mask, _ in written_masks():
            text = regex.sub(mask, text)
    return clip(text.strip(), PATTERN_CHARS)


# --------------------------------------------------------------------------- addresses


def _item_label(at: Loc) -> str:
    message, block = at
    return f"{message}" if block < 0 else f"{message}.{block}"


def _item_address(thread: Thread, at: Loc) -> str:
    return f"{thread.address}#{_item_label(at)}"


# --------------------------------------------------------------------------- tables as rows


def _top(counter: Counter[str], n: int = 3) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda entry: (-entry[1], entry[0]))[:n])


def tool_rows(report: Report, top: int) -> list[dict[str, Any]]:
    """Per tool: calls, outputs, failures (error outputs + dangling calls), error rate, commonest kinds."""
    ranked = sorted(report.tools.items(), key=lambda entry: (-entry[1].failures, -entry[1].calls, entry[0]))
    return [{
        "tool": name, "calls": stats.calls, "outputs": stats.outputs, "error_outputs": stats.error_outputs,
        "dangling_calls": stats.dangling_calls, "failures": stats.failures,
        "error_rate": None if stats.error_rate is None else round(stats.error_rate, 4), "kinds": _top(stats.kinds),
    } for name, stats in ranked[:top]]


def kind_rows(report: Report, top: int) -> list[dict[str, Any]]:
    """Per failure kind: how many, split into error outputs and dangling calls, and the tools it hit."""
    ranked = sorted(report.kinds().items(), key=lambda entry: (-entry[1].failures, entry[0]))
    return [{
        "kind": kind, "failures": stats.failures, "error_outputs": stats.error_outputs,
        "dangling_calls": stats.dangling_calls, "retryable": _retryable(kind), "tools": _top(stats.kinds),
    } for kind, stats in ranked[:top]]


def matrix(report: Report, kinds: int, tools: int) -> tuple[list[str], list[str], dict[tuple[str, str], int]]:
    """Failures by kind × tool for the commonest ``kinds`` and ``tools`` (others, and kinds none of those
    tools had, left out)."""
    kind_names = [row["kind"] for row in kind_rows(report, kinds)]
    tool_names = [row["tool"] for row in tool_rows(report, tools) if row["failures"]]
    cells = {(kind, tool): count for tool in tool_names for kind, count in report.tools[tool].kinds.items()
             if kind in kind_names}
    return [kind for kind in kind_names if any((kind, tool) in cells for tool in tool_names)], tool_names, cells


def message_rows(report: Report, top: int) -> list[dict[str, Any]]:
    """The commonest error messages, masked into patterns, with one example each."""
    ranked = sorted(report.clusters.values(), key=lambda c: (-c.count, c.kind, c.pattern))
    return [{"count": c.count, "kind": c.kind, "pattern": c.pattern, "tool": c.tool, "example": c.address,
             "text": c.text} for c in ranked[:top]]


def thread_rows(report: Report, top: int) -> list[dict[str, Any]]:
    """The worst stuck threads, worst first."""
    return [{
        "address": s.address, "dialect": s.dialect, "later_user_turns": s.later_user_turns,
        "dangling_calls": s.dangling_calls, "first": s.first, "kind": s.kind, "cause": s.cause,
        "tools": list(s.tools), "day": s.day,
    } for s in report.stuck()[:top]]


def day_rows(report: Report, top: int) -> list[dict[str, Any]]:
    """The last ``top`` days that have threads or items, oldest first."""
    days = sorted(report.days.items())[-top:] if top > 0 else []
    return [{"day": day, "threads": s.threads, "stuck_threads": s.stuck_threads, "calls": s.calls,
             "error_outputs": s.error_outputs, "dangling_calls": s.dangling_calls,
             "failures": s.error_outputs + s.dangling_calls} for day, s in days]


def turn_rows(report: Report) -> list[dict[str, Any]]:
    """Stuck threads by how many user turns came after their first dangling call."""
    return [{"later_user_turns": f"{turns}+" if turns == TURNS_CAP else str(turns), "stuck_threads": count}
            for turns, count in sorted(report.stuck_by_turns.items())]


def totals_row(report: Report) -> dict[str, int]:
    totals = report.totals
    return {name: getattr(totals, name) for name in totals.__struct_fields__}


ROWS: dict[str, Callable[[Report, int], list[dict[str, Any]]]] = {
    "tool": tool_rows, "kind": kind_rows, "thread": thread_rows, "day": day_rows,
}


def breakdown(report: Report, by: str, top: int) -> list[dict[str, Any]]:
    """The main table ``--by`` chooses."""
    return ROWS[by](report, top)


def _retryable(kind: str) -> bool | None:
    try:
        return info(Kind(kind)).retryable
    except ValueError:
        return None


__all__ = [
    "BREAKDOWNS", "Cluster", "DayStats", "Report", "StuckThread", "ToolStats", "Totals", "breakdown",
    "build_report", "day_of", "day_rows", "kind_rows", "matrix", "message_rows", "pattern_of", "thread_rows",
    "tool_rows", "totals_row", "turn_rows",
]
