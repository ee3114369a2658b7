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

import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import Any, NamedTuple

from msgspec import Struct, field, structs

from threadfix import dialects
from threadfix.batch import PROGRESS_EVERY, Problem, Repeats, Scanned, as_paths, scan, scan_parts
from threadfix.dialects import Dialect
from threadfix.errors import ExitCode
from threadfix.model import Address, Finding, Severity, Thread
from threadfix.rules import Rule, marks, select_rules
from threadfix.rules.context import (  # noqa: F401 - the options and context are lint's API
    DEFAULT_OVERSIZED_BYTES, DEFAULT_SCAN_CHARS, Context, LintOptions, NotInFormat,
)
from threadfix.stores import StoreOptions

_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}
#: Structural rules are not run on a thread the dialect's quick check accepts: they read only the plan and the
#: provider's check, both empty there. False runs them anyway (the tests compare the two).
SKIP_STRUCTURAL_WHEN_ACCEPTED = True
#: A rule whose view of the thread (:attr:`Rule.reads`) is empty is not run on it. False runs it anyway (the tests
#: compare the two).
RUN_ONLY_WHERE_RULES_READ = True
#: Inputs of at least this many bytes have the text rules' one pass (:mod:`threadfix.rules.marks`) from their first
#: thread on: output text is a fifth of a benchmark store's bytes, so such a run reads more than the pass's
#: ``COMPILE_AFTER`` characters, and compiling the scanner at once costs less than the rules' own tests over them.
TEXT_PASS_AT_ONCE_BYTES = 8 << 20
#: Threads of a JSONL file of Responses threads are read by a typed decode that indexes an accepted thread without
#: building its items (:mod:`threadfix.stores.typed_read`); any other thread is read in full. False reads
#: every thread in full (the tests compare the two).
TYPED_READ = True


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
    #: threads read
    threads: int = 0
    #: threads with at least one finding
    flagged: int = 0
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
        self.flagged += bool(result.findings)
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
            return ExitCode.worst(p.exit_code for p in self.problems)
        if not exit_zero and self.failing(fail_on):
            return ExitCode.FINDINGS
        return ExitCode.OK


def lint_thread(scanned: Scanned, rules: Sequence[Rule] | RuleSplit, options: LintOptions,
                now: float | None = None) -> ThreadResult:
    """Every finding of ``rules`` in one scanned thread, in item order."""
    now = now if now is not None else options.now if options.now is not None else time.time()
    ctx = Context(scanned.thread, scanned.dialect, scanned.index, options, now)
    known = scanned.dialect is not None
    findings: list[Finding] = []
    split = rules if isinstance(rules, RuleSplit) else RuleSplit.of(rules)
    every, content = (split.known, split.known_content) if known else (split.unknown, split.unknown_content)
    only_where_read = RUN_ONLY_WHERE_RULES_READ
    for rule in content if len(content) < len(every) and SKIP_STRUCTURAL_WHEN_ACCEPTED and ctx.accepted else every:
        view = rule.reads
        if view is not None and only_where_read and not getattr(ctx, view):
            continue  # the view the rule reads is empty here: it finds nothing, and is not even started
        findings.extend(rule.check(ctx))
    findings.sort(key=_order)
    line_of = getattr(scanned.thread.locator, "line_of", None)
    if line_of is not None:  # a session's items come from records: a finding names the record's line
        findings = [_on_line(f, line_of(f.item)) for f in findings]
    # asked (and so counted) only for threads with open calls
    recent, waiting = ("recent" in ctx.__dict__ and ctx.recent), ("waiting" in ctx.__dict__ and ctx.waiting)
    return ThreadResult(scanned.thread.address, scanned.dialect.name if known else None, findings, recent, waiting)


class RuleSplit(NamedTuple):
    """The selected rules split once per run: those that read a thread of a known format (or of none), and of
    those, the ones that are not structural (all a thread the dialect accepts is given)."""

    known: tuple[Rule, ...]
    known_content: tuple[Rule, ...]
    unknown: tuple[Rule, ...]
    unknown_content: tuple[Rule, ...]

    @classmethod
    def of(cls, rules: Sequence[Rule]) -> RuleSplit:
        known = tuple(rule for rule in rules if not rule.on_unknown_format)
        unknown = tuple(rule for rule in rules if rule.on_unknown_format)
        return cls(known, tuple(rule for rule in known if not rule.structural), unknown,
                   tuple(rule for rule in unknown if not rule.structural))


def _on_line(finding: Finding, line: int | None) -> Finding:
    if line is None:
        return finding
    return structs.replace(finding, address=Address(finding.address.source, line, finding.address.key))


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

    def __init__(self, specs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                 options: LintOptions = LintOptions(), store: StoreOptions = StoreOptions(), stdin: Any = None,
                 progress: Callable[[str, int], None] | None = None, jobs: int | None = 1,
                 on_store: Callable[[Any], None] | None = None) -> None:
        """``specs``: one path (a str or a Path) or a list of them. ``progress(store, threads_read)`` is called every
        few hundred threads (for a progress line); ``jobs``: processes to spread large inputs over (None: by input
        size); ``on_store(store)`` as each store opens (to show what was detected about it, as repair and report
        do)."""
        self.on_store = on_store
        self.jobs = jobs
        self.specs = as_paths(specs)
        self.progress = progress
        self.options = options
        self.store = store
        self.stdin = stdin
        self.rules = select_rules(options.select, options.ignore)
        self.summary = LintSummary()

    def results(self) -> Iterator[ThreadResult | Problem]:
        now = self.options.now if self.options.now is not None else time.time()
        if _stored_bytes(self.specs) >= TEXT_PASS_AT_ONCE_BYTES:
            marks.start_now()  # (forked workers start with it too)
        typed = TYPED_READ
        parts = scan_parts(list(self.specs), self.jobs, self.store, partial(_lint_part, options=self.options, now=now),
                           on_store=self.on_store, indexed=typed)
        if parts is None:
            # a store that spreads its own read (PostgreSQL key ranges over connections) takes --jobs itself
            store = structs.replace(self.store, jobs=self.jobs) if self.jobs else self.store
            found = lint_scanned(scan(self.specs, store, self.stdin, on_store=self.on_store, indexed=typed), self.rules,
                                 self.options, now)
        else:
            found = (result for _, results in parts for result in results)
        repeats = Repeats()
        for result in found:
            if isinstance(result, Problem):
                if parts is not None and repeats.repeated(result):
                    continue
                self.summary.problems.append(result)
                yield result
                continue
            self.summary.add(result)
            if self.progress is not None and self.summary.threads % PROGRESS_EVERY == 0:
                self.progress(result.address.source, self.summary.threads)
            yield result


def _stored_bytes(specs: Iterable[str]) -> int:
    """The bytes of the files among ``specs`` (a folder, stdin or a database URL counts for nothing): what a run is
    known to read before it starts."""
    total = 0
    for spec in specs:
        try:
            found = os.stat(spec)
        except (OSError, ValueError):
            continue
        total += found.st_size if stat.S_ISREG(found.st_mode) else 0
    return total


def lint_scanned(scanned: Iterable[Scanned | Problem], rules: Sequence[Rule], options: LintOptions,
                 now: float) -> Iterator[ThreadResult | Problem]:
    """:func:`lint_thread` over scanned threads; a thread the rules choke on becomes a Problem."""
    split = RuleSplit.of(rules)
    for entry in scanned:
        if isinstance(entry, Problem):
            yield entry
            continue
        try:
            yield lint_thread(entry, split, options, now)
        except Exception as exc:  # noqa: BLE001 - one thread's surprise must not stop a gigabyte batch
            message = (str(exc) if isinstance(exc, NotInFormat)
                       else f"internal error while linting ({type(exc).__name__}: {exc}); please report it")
            yield Problem(str(entry.thread.address), message)


def _lint_part(scanned: Iterable[Scanned | Problem], *, options: LintOptions, now: float) -> Iterator[ThreadResult | Problem]:
    """A ``--jobs`` worker: the results of one part, in order."""
    return lint_scanned(scanned, select_rules(options.select, options.ignore), options, now)
