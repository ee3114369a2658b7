"""One thread as the lint rules see it (:class:`Context`), and the options a lint run reads (:class:`LintOptions`).

Lint builds a context per thread and runs the selected rules over it; the rules only read it. It lives
beside the rules, below :mod:`threadfix.lint`, so that a rule never imports the runner that imports it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import orjson
from msgspec import Struct
from msgspec.structs import force_setattr

from threadfix.batch import MALFORMED, as_patterns, as_seconds, not_in_format
from threadfix.dialects import Dialect, Violation
from threadfix.failures import Arguments, read_arguments
from threadfix.model import Address, Call, Output, RepairPlan, Severity, Thread, ThreadIndex
from threadfix.repair import RepairOptions, as_written, plan_repair, waiting_on

if TYPE_CHECKING:
    from threadfix.failures.classifier import Classification

DEFAULT_OVERSIZED_BYTES = 100_000
#: characters of each output the text rules (secrets, stack traces, paths) read; the rest is not scanned
DEFAULT_SCAN_CHARS = 32_768


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
    #: the calls a format marks as waiting are stuck even at the end of their thread (``--answer-waiting``)
    answer_waiting: bool = False
    #: an output larger than this many bytes is oversized
    oversized_bytes: int = DEFAULT_OVERSIZED_BYTES
    #: a dangling call followed by at least this many user turns makes the thread stuck
    stuck_turns: int = 1
    #: this many failures in a row of the same tool are a retry storm
    retry_storm: int = 3
    scan_chars: int = DEFAULT_SCAN_CHARS
    #: the clock, for tests
    now: float | None = None

    def __post_init__(self) -> None:
        """Checked when built: ``min_age`` may be a duration string (``"10m"``); a bad value raises here."""
        force_setattr(self, "min_age", as_seconds(self.min_age, "min_age"))
        force_setattr(self, "leave_tools", as_patterns(self.leave_tools, "leave_tools"))
        for name in ("select", "ignore"):
            if isinstance(getattr(self, name), str):  # one selector, never its characters
                force_setattr(self, name, (getattr(self, name),))
        if not isinstance(self.fail_on, Severity):
            force_setattr(self, "fail_on", Severity(self.fail_on))


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
        # as repair decides it: a call whose own output the store saved waits on nobody
        return waiting_on(as_written(self.plan, self.thread.saved_outputs), self.options.leave_tools) is not None

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
        if self.healthy:
            return RepairPlan()
        return self._dialect_call(plan_repair, self.index, self.dialect, self.items,
                                  RepairOptions(answer_waiting=self.options.answer_waiting))

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
        from threadfix.failures.classifier import output_text

        return output_text(content, limit)

    @cached_property
    def texts(self) -> list[str]:
        """:meth:`text` of every output, in index order."""
        limit = self.options.scan_chars
        # text()'s fast path inline: most outputs are short strings, and this runs for every output
        return [content if (content := output.content).__class__ is str and len(content) <= limit
                else self.text(output) for output in self.index.outputs]

    @cached_property
    def all_text(self) -> str:
        """Every output's text, each after a newline: one string for rules that search them all at once."""
        return "\n".join(["", *self.texts])

    def failure(self, output: Output) -> Classification | None:
        """The output's classification when it is an error output, else None (classified once, on demand)."""
        if id(output) in self._failures:
            return self._failures[id(output)]
        from threadfix.verdicts import failure_of

        result = self._failures[id(output)] = failure_of(output.content, output.is_error, output.status)
        return result

    def is_error(self, output: Output) -> bool:
        return self.failure(output) is not None
