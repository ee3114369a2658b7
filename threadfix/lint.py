"""Lint stored threads: every selected rule over every thread, as plain findings (pure; no printing).

Data flows store → dialect → index → rules → findings. The rules read a thread through a
:class:`Context`, which computes each costly view (the repair plan, the provider's check, output
texts, failure classifications) once and only when a selected rule asks for it, so linting with only
cheap rules costs little more than reading the store.

The structural rules (dangling, orphan, misplaced, duplicate outputs, unpairable calls) are read off
the repair planner's plan (:func:`threadfix.repair.plan_repair`), so lint and repair cannot disagree
about what is wrong with a thread.

A batch job uses it like repair::

    from threadfix.lint import LintOptions, LintRun
    run = LintRun(["chats/"], LintOptions(select=("TF0",)))
    for result in run.results():
        ...
    exit_code = run.summary.exit_code()
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

import orjson
from msgspec import Struct, field
from msgspec.structs import replace

from threadfix import dialects
from threadfix.batch import MALFORMED, PROGRESS_EVERY, Problem, Repeats, Scanned, not_in_format, scan, scan_stores
from threadfix.dialects import Dialect, Violation
from threadfix.errors import ExitCode
from threadfix.failures import Arguments, read_arguments
from threadfix.model import Address, Call, Finding, Output, RepairPlan, Severity, Thread, ThreadIndex
from threadfix.parallel import Shard, run_sharded, shard_stores, sharded
from threadfix.repair import plan_repair, waiting_on
from threadfix.rules import Rule, select_rules
from threadfix.stores import StoreOptions

if TYPE_CHECKING:
    from threadfix.failures.classify import Classification

DEFAULT_OVERSIZED_BYTES = 100_000
#: characters of each output the text rules (secrets, stack traces, paths) read; the rest is not scanned
DEFAULT_SCAN_CHARS = 32_768
_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}
#: Structural rules are not run on a thread the dialect's quick check accepts: they read only the plan and the
#: provider's check, both empty there. False runs them anyway (the tests compare the two).
SKIP_STRUCTURAL_WHEN_ACCEPTED = True


class LintOptions(Struct, frozen=True):
    """What a lint run checks; the defaults are those of ``threadfix lint``."""

    #: rule codes (by prefix) or names to run; ``TF`` is every rule
    select: tuple[str, ...] = ("TF",)
    #: rule codes (by prefix) or names to leave out; the more specific of select/ignore wins
    ignore: tuple[str, ...] = ()
    #: the least severe finding that makes the run fail (exit 1)
    fail_on: Severity = Severity.WARNING
    #: threads changed less than this many seconds ago have calls that may still be running: their
    #: open calls are pending, not dangling
    min_age: float = 0.0
    #: tool name patterns whose outputs come from a person or another process: a thread with an open call to
    #: one of them is waiting, its open calls pending (see :func:`threadfix.repair.waiting_on`)
    leave_tools: tuple[str, ...] = ()
    #: an output larger than this many bytes is oversized
    oversized_bytes: int = DEFAULT_OVERSIZED_BYTES
    #: a dangling call followed by at least this many user turns makes the thread stuck
    stuck_turns: int = 1
    #: this many failures in a row of the same tool are a retry storm
    retry_storm: int = 3
    scan_chars: int = DEFAULT_SCAN_CHARS
    #: the clock, for tests
    now: float | None = None


class NotInFormat(Exception):
    """The thread's items broke its dialect's own code: reported for the thread, the batch goes on."""


class Context:
    """One thread as the rules see it. Every view is computed on first use and kept for the next rule."""

    def __init__(self, thread: Thread, dialect: Dialect | None, index: ThreadIndex | None, options: LintOptions,
                 now: float) -> None:
        self.thread = thread
        self.items: Sequence[Any] = thread.items
        self.address: Address = thread.address
        self.dialect = dialect
        self.index = index if index is not None else ThreadIndex((), ())
        self.options = options
        self.now = now
        # per-output cache, keyed by the index's objects (a Chat message's outputs may share one location)
        self._failures: dict[int, Classification | None] = {}

    @cached_property
    def recent(self) -> bool:
        """Changed under ``min_age`` ago, so its open calls may still be running (asked only when it has some)."""
        if self.options.min_age <= 0:
            return False
        changed = self.thread.last_changed()
        return changed is not None and self.now - changed < self.options.min_age

    @cached_property
    def waiting(self) -> bool:
        """Has an open call to a tool left to others, so its open calls are pending (asked only when it has some)."""
        return waiting_on(self.plan, self.options.leave_tools) is not None

    @cached_property
    def accepted(self) -> bool:
        """The dialect's quick check that nothing needs repair and the provider accepts the thread."""
        assert self.dialect is not None
        try:
            return self.dialect.quick_accepted(self.items)
        except MALFORMED:  # its contract is "False: look closer"; the index below read the thread already
            return False

    @cached_property
    def healthy(self) -> bool:
        """The dialect's quick check: nothing to repair."""
        assert self.dialect is not None
        if self.accepted:
            return True
        try:
            return self.dialect.quick_healthy(self.items)
        except MALFORMED:
            return False

    @cached_property
    def plan(self) -> RepairPlan:
        """What repair would do to this thread: the same calls repair makes, with its default options.

        Like repair, a thread the dialect's quick check finds healthy is not planned at all.
        """
        assert self.dialect is not None
        return RepairPlan() if self.healthy else self._dialect_call(plan_repair, self.index, self.dialect, self.items)

    @cached_property
    def violations(self) -> list[Violation]:
        """Everything the provider would refuse, in its own words."""
        assert self.dialect is not None
        if self.accepted:
            return []
        return self._dialect_call(self.dialect.check, self.items)

    @cached_property
    def residual(self) -> list[Violation]:
        """What the provider would still refuse once repair's plan is applied (nothing to apply: all of it)."""
        assert self.dialect is not None
        if not self.plan:
            return self.violations
        return self._dialect_call(lambda: self.dialect.check(self.dialect.apply(self.items, self.plan)))

    def _dialect_call(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run the dialect's own code on the thread; items it chokes on are the thread's fault, as in repair."""
        try:
            return function(*args)
        except MALFORMED as exc:
            assert self.dialect is not None
            raise NotInFormat(not_in_format(self.dialect, exc)) from exc

    @cached_property
    def calls_by_id(self) -> dict[str | None, list[Call]]:
        grouped: dict[str | None, list[Call]] = defaultdict(list)
        for call in self.index.calls:
            grouped[call.call_id].append(call)
        return grouped

    def call_of(self, output: Output) -> Call | None:
        """The call an output answers, when exactly one call has its id."""
        calls = self.calls_by_id.get(output.call_id) if output.call_id is not None else None
        return calls[0] if calls and len(calls) == 1 else None

    @cached_property
    def _first_outputs(self) -> dict[str | None, Output]:
        return {output.call_id: output for output in reversed(self.index.outputs)}

    def output_of(self, call: Call) -> Output | None:
        """The first output that names the call's id (None for a call without one)."""
        return self._first_outputs.get(call.call_id) if call.call_id is not None else None

    def tool_of(self, output: Output) -> str | None:
        call = self.call_of(output)
        return call.name if call is not None else None

    @cached_property
    def unusual_arguments(self) -> list[tuple[Call, Arguments]]:
        """The calls whose arguments are not a JSON object (blank, another JSON value, not JSON), in index order,
        each as a careful runtime reads them.

        Almost every call's arguments are an object: one ``orjson.loads`` settles those, and only the rest go
        through :func:`read_arguments`, which decides what they are.
        """
        loads, error = orjson.loads, orjson.JSONDecodeError
        unusual = []
        for call in self.index.calls:
            raw = call.arguments
            if raw.__class__ is str:
                try:
                    if loads(raw).__class__ is dict:
                        continue
                except error:
                    pass
            elif raw.__class__ is dict:
                continue
            unusual.append((call, read_arguments(raw)))
        return unusual

    def text(self, output: Output) -> str:
        """The output's text as the model read it (parts joined), cut to ``scan_chars`` characters."""
        content, limit = output.content, self.options.scan_chars
        if isinstance(content, str) and len(content) <= limit:
            return content  # what output_text gives, without its cost: most outputs are short strings
        from threadfix.failures.classify import output_text

        return output_text(content, limit)

    @cached_property
    def texts(self) -> list[str]:
        """:meth:`text` of every output, in index order."""
        return [self.text(output) for output in self.index.outputs]

    @cached_property
    def all_text(self) -> str:
        """Every output's text, each after a newline: one string for rules that search them all at once."""
        return "\n".join(["", *self.texts])

    def failure(self, output: Output) -> Classification | None:
        """The output's classification when it is an error output, else None (classified once, on demand)."""
        if id(output) in self._failures:
            return self._failures[id(output)]
        from threadfix.failures.classify import classify

        found = classify(output.content, is_error=output.is_error, status=output.status)
        result = found if found.is_error else None
        self._failures[id(output)] = result
        return result

    def is_error(self, output: Output) -> bool:
        return self.failure(output) is not None


class ThreadResult(Struct):
    """The findings of one thread (empty when it is clean)."""

    address: Address
    dialect: str | None
    findings: list[Finding]
    #: changed under --min-age ago, and its open calls were not reported
    recent: bool = False
    #: an open call to a tool left to others (--leave-tool): its open calls were not reported
    waiting: bool = False


class LintSummary(Struct):
    threads: int = 0
    recent: int = 0
    waiting: int = 0
    fixable: int = 0
    by_severity: dict[Severity, int] = field(default_factory=lambda: {s: 0 for s in Severity})
    by_code: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def findings(self) -> int:
        return sum(self.by_severity.values())

    def add(self, result: ThreadResult) -> None:
        self.threads += 1
        self.recent += result.recent
        self.waiting += result.waiting
        for finding in result.findings:
            self.by_severity[finding.severity] += 1
            self.fixable += finding.fixable
            self.by_code[finding.code] = self.by_code.get(finding.code, 0) + 1

    def failing(self, fail_on: Severity) -> int:
        """How many findings are at least as severe as ``fail_on``."""
        return sum(n for severity, n in self.by_severity.items() if _RANK[severity] >= _RANK[fail_on])

    def exit_code(self, fail_on: Severity = Severity.WARNING, exit_zero: bool = False) -> ExitCode:
        """2 when anything could not be read (errors beat findings), 1 for failing findings, else 0."""
        if self.problems:
            return max((p.exit_code for p in self.problems), key=lambda c: (c == ExitCode.BUSY, c))
        if not exit_zero and self.failing(fail_on):
            return ExitCode.FINDINGS
        return ExitCode.OK


def lint_thread(scanned: Scanned, rules: Sequence[Rule], options: LintOptions, now: float | None = None) -> ThreadResult:
    """Every finding of ``rules`` in one scanned thread, in item order."""
    now = now if now is not None else options.now if options.now is not None else time.time()
    ctx = Context(scanned.thread, scanned.dialect, scanned.index, options, now)
    known = scanned.dialect is not None
    findings: list[Finding] = []
    for rule in rules:
        if rule.on_unknown_format is known or (rule.structural and SKIP_STRUCTURAL_WHEN_ACCEPTED and ctx.accepted):
            continue
        findings.extend(rule.check(ctx))
    findings.sort(key=_order)
    # asked (and so counted) only for threads with open calls
    recent, waiting = ("recent" in ctx.__dict__ and ctx.recent), ("waiting" in ctx.__dict__ and ctx.waiting)
    return ThreadResult(scanned.thread.address, scanned.dialect.name if known else None, findings, recent, waiting)


def _order(finding: Finding) -> tuple[Any, ...]:
    return (finding.item if finding.item is not None else (-1, -1), finding.code)


def lint_items(items: list[Any], dialect: str | Dialect | None = None, options: LintOptions = LintOptions(),
               address: Address | None = None) -> list[Finding]:
    """Lint one thread's items (a library call: no store, no I/O). The dialect is sniffed unless given."""
    chosen = dialects.get(dialect) if isinstance(dialect, str) else dialect or dialects.sniff(items)
    thread = Thread(address or Address("<items>"), items)
    scanned = Scanned(thread, chosen, chosen.index(items) if chosen else None)
    return lint_thread(scanned, select_rules(options.select, options.ignore), options).findings


class LintRun:
    """One ``lint`` over many paths. Iterate :meth:`results`; read :attr:`summary` afterwards."""

    def __init__(self, specs: Iterable[str], options: LintOptions = LintOptions(),
                 store: StoreOptions = StoreOptions(), stdin: Any = None,
                 progress: Callable[[str, int], None] | None = None, jobs: int | None = 1) -> None:
        """``progress(store, threads_read)`` is called every few hundred threads (for a progress line);
        ``jobs``: processes to spread large inputs over (None: by input size)."""
        self.jobs = jobs
        self.specs = list(specs)
        self.progress = progress
        self.options = options
        self.store = store
        self.stdin = stdin
        self.rules = select_rules(options.select, options.ignore)
        self.summary = LintSummary()

    def results(self) -> Iterator[ThreadResult | Problem]:
        now = self.options.now if self.options.now is not None else time.time()
        spread = sharded(self.specs, self.jobs, self.store, by_key=True)
        if spread is None:
            # a store that spreads its own read (PostgreSQL key ranges over connections) takes --jobs itself
            store = replace(self.store, jobs=self.jobs) if self.jobs else self.store
            found = lint_scanned(scan(self.specs, store, self.stdin), self.rules, self.options, now)
        else:
            work = partial(_lint_shard, options=self.options, store=self.store, now=now)
            found = (result for results in run_sharded(spread[1], work, spread[0]) for result in results)
        repeats = Repeats()
        for result in found:
            if isinstance(result, Problem):
                if spread is not None and repeats.repeated(result):
                    continue
                self.summary.problems.append(result)
                yield result
                continue
            self.summary.add(result)
            if self.progress is not None and self.summary.threads % PROGRESS_EVERY == 0:
                self.progress(result.address.source, self.summary.threads)
            yield result


def lint_scanned(scanned: Iterable[Scanned | Problem], rules: Sequence[Rule], options: LintOptions,
                 now: float) -> Iterator[ThreadResult | Problem]:
    """:func:`lint_thread` over scanned threads; a thread the rules choke on becomes a Problem."""
    for entry in scanned:
        if isinstance(entry, Problem):
            yield entry
            continue
        try:
            yield lint_thread(entry, rules, options, now)
        except Exception as exc:  # noqa: BLE001 - one thread's surprise must not stop a gigabyte batch
            message = (str(exc) if isinstance(exc, NotInFormat)
                       else f"internal error while linting ({type(exc).__name__}: {exc}); please report it")
            yield Problem(str(entry.thread.address), message)


def _lint_shard(shard: Shard, *, options: LintOptions, store: StoreOptions, now: float) -> list[ThreadResult | Problem]:
    """A ``--jobs`` worker: the results of one shard, in order."""
    rules = select_rules(options.select, options.ignore)
    return list(lint_scanned(scan_stores(shard_stores(shard, store), store), rules, options, now))
