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
    run.summary.exit_code(Severity.ERROR)
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from threadfix import dialects
from threadfix.batch import Problem, Scanned, scan
from threadfix.dialects import Dialect, Violation
from threadfix.errors import ExitCode
from threadfix.model import Address, Call, Finding, Output, RepairPlan, Severity, Thread, ThreadIndex
from threadfix.repair import plan_repair
from threadfix.rules import Rule, select_rules
from threadfix.stores import StoreOptions

DEFAULT_OVERSIZED_BYTES = 100_000
#: characters of each output the text rules (secrets, stack traces, paths) read; the rest is not scanned
DEFAULT_SCAN_CHARS = 32_768
#: statuses some wires give a failed output (Bedrock, Vercel AI SDK, LangGraph)
ERROR_STATUSES = frozenset({"failed", "error", "output-error", "incomplete"})
_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


@dataclass(frozen=True, slots=True)
class LintOptions:
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
    #: an output larger than this many bytes is oversized
    oversized_bytes: int = DEFAULT_OVERSIZED_BYTES
    #: a dangling call followed by at least this many user turns makes the thread stuck
    stuck_turns: int = 1
    #: this many failures in a row of the same tool are a retry storm
    retry_storm: int = 3
    scan_chars: int = DEFAULT_SCAN_CHARS
    #: the clock, for tests
    now: float | None = None


class Context:
    """One thread as the rules see it. Every view is computed on first use and kept for the next rule."""

    def __init__(self, thread: Thread, dialect: Dialect | None, index: ThreadIndex | None, options: LintOptions,
                 recent: bool = False) -> None:
        self.thread = thread
        self.items: Sequence[Any] = thread.items
        self.address: Address = thread.address
        self.dialect = dialect
        self.index = index if index is not None else ThreadIndex((), ())
        self.options = options
        #: changed under --min-age ago: its open calls may still be running
        self.recent = recent
        self._texts: dict[Any, str] = {}
        self._failures: dict[Any, Any] = {}

    @cached_property
    def plan(self) -> RepairPlan:
        """What repair would do to this thread (the same call repair makes, with its default options)."""
        assert self.dialect is not None
        return plan_repair(self.index, self.dialect, self.items)

    @cached_property
    def violations(self) -> list[Violation]:
        """Everything the provider would refuse, in its own words."""
        assert self.dialect is not None
        return self.dialect.check(self.items)

    @cached_property
    def calls_by_id(self) -> dict[str | None, list[Call]]:
        grouped: dict[str | None, list[Call]] = defaultdict(list)
        for call in self.index.calls:
            grouped[call.call_id].append(call)
        return grouped

    @cached_property
    def outputs_by_id(self) -> dict[str | None, list[Output]]:
        grouped: dict[str | None, list[Output]] = defaultdict(list)
        for output in self.index.outputs:
            grouped[output.call_id].append(output)
        return grouped

    def call_of(self, output: Output) -> Call | None:
        """The call an output answers, when exactly one call has its id."""
        calls = self.calls_by_id.get(output.call_id) if output.call_id is not None else None
        return calls[0] if calls and len(calls) == 1 else None

    def tool_of(self, output: Output) -> str | None:
        call = self.call_of(output)
        return call.name if call is not None else None

    def text(self, output: Output) -> str:
        """The output's text as the model read it (parts joined), in full."""
        text = self._texts.get(output.at)
        if text is None:
            from threadfix.failures.classify import output_text

            text = self._texts[output.at] = output_text(output.content)
        return text

    def head(self, output: Output) -> str:
        """The part of the output's text the text rules scan (bounded, so huge outputs cost little)."""
        return self.text(output)[: self.options.scan_chars]

    def failure(self, output: Output) -> Any:
        """The output's classification when it is an error output, else None."""
        if output.at in self._failures:
            return self._failures[output.at]
        from threadfix.failures.classify import classify

        found = classify(output.content, is_error=output.is_error, status=output.status)
        result = found if found.is_error else None
        self._failures[output.at] = result
        return result

    def is_error(self, output: Output) -> bool:
        return self.failure(output) is not None


@dataclass(slots=True)
class ThreadResult:
    """The findings of one thread (empty when it is clean)."""

    address: Address
    dialect: str | None
    findings: list[Finding]
    #: changed under --min-age ago; its open calls were not reported
    recent: bool = False


@dataclass(slots=True)
class LintSummary:
    threads: int = 0
    recent: int = 0
    by_severity: dict[Severity, int] = field(default_factory=lambda: {s: 0 for s in Severity})
    by_code: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def findings(self) -> int:
        return sum(self.by_severity.values())

    def add(self, result: ThreadResult) -> None:
        self.threads += 1
        self.recent += result.recent
        for finding in result.findings:
            self.by_severity[finding.severity] += 1
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


def is_recent(thread: Thread, options: LintOptions, now: float) -> bool:
    return options.min_age > 0 and thread.modified is not None and now - thread.modified < options.min_age


def lint_thread(scanned: Scanned, rules: Sequence[Rule], options: LintOptions, now: float | None = None) -> ThreadResult:
    """Every finding of ``rules`` in one scanned thread, in item order."""
    thread = scanned.thread
    now = now if now is not None else options.now if options.now is not None else time.time()
    recent = is_recent(thread, options, now)
    ctx = Context(thread, scanned.dialect, scanned.index, options, recent)
    known = scanned.dialect is not None
    findings = [f for rule in rules if rule.on_unknown_format is not known for f in rule.check(ctx)]
    findings.sort(key=_order)
    return ThreadResult(thread.address, scanned.dialect.name if known else None, findings, recent)


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
                 store: StoreOptions = StoreOptions(), stdin: Any = None) -> None:
        self.specs = list(specs)
        self.options = options
        self.store = store
        self.stdin = stdin
        self.rules = select_rules(options.select, options.ignore)
        self.summary = LintSummary()

    def results(self) -> Iterator[ThreadResult | Problem]:
        now = self.options.now if self.options.now is not None else time.time()
        for scanned in scan(self.specs, self.store, self.stdin):
            if isinstance(scanned, Problem):
                self.summary.problems.append(scanned)
                yield scanned
                continue
            try:
                result = lint_thread(scanned, self.rules, self.options, now)
            except Exception as exc:  # noqa: BLE001 - one thread's surprise must not stop a gigabyte batch
                problem = Problem(str(scanned.thread.address),
                                  f"internal error while linting ({type(exc).__name__}: {exc}); please report it")
                self.summary.problems.append(problem)
                yield problem
                continue
            self.summary.add(result)
            yield result
