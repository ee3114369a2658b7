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
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import Any

from msgspec import Struct, field
from msgspec.structs import replace

from threadfix import dialects
from threadfix.batch import PROGRESS_EVERY, Problem, Repeats, Scanned, scan, scan_stores
from threadfix.dialects import Dialect
from threadfix.errors import ExitCode
from threadfix.model import Address, Finding, Severity, Thread
from threadfix.parallel import Shard, run_sharded, shard_stores, sharded
from threadfix.rules import Rule, select_rules
from threadfix.rules.context import (  # noqa: F401 - the options and context are lint's API
    DEFAULT_OVERSIZED_BYTES, DEFAULT_SCAN_CHARS, Context, LintOptions, NotInFormat,
)
from threadfix.stores import StoreOptions

_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}
#: Structural rules are not run on a thread the dialect's quick check accepts: they read only the plan and the
#: provider's check, both empty there. False runs them anyway (the tests compare the two).
SKIP_STRUCTURAL_WHEN_ACCEPTED = True


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
