"""One thread as the lint rules see it (:class:`Context`), and the options a lint run reads (:class:`LintOptions`).

Lint builds a context per thread and runs the selected rules over it; the rules only read it. It lives
beside the rules, below :mod:`threadfix.lint`, so that a rule never imports the runner that imports it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson
from msgspec import Struct
from msgspec.structs import force_setattr

from threadfix.batch import MALFORMED, as_patterns, as_seconds, not_in_format
from threadfix.dialects import Dialect, Violation
from threadfix.failures import Arguments, read_arguments
from threadfix.model import Address, Call, Output, RepairPlan, Severity, Thread, ThreadIndex
from threadfix.repair import RepairOptions, as_written, plan_repair, waiting_on
from threadfix.rules.marks import Lines

if TYPE_CHECKING:
    from threadfix.failures.classifier import Classification

#: False: every rule reads every output, and the index's own verdict is not taken (``quick_accepted`` is asked
#: instead); ``lint.SKIP_STRUCTURAL_WHEN_ACCEPTED`` is what runs every rule on every thread. The tests turn all the
#: switches off together (tests/shortcuts.py) and compare on generated stores of every dialect and the sample threads
FAST = True
#: the first keys of an object that names an error, as the cut-JSON rule (TF202) reads it; the pass over the outputs
#: leaves out an unflagged object whose first key starts with none of them
ERROR_KEYS = ("error", "errors", "err", "exception", "fault", "kind", "subcode", "isError", "is_error")
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


class once:  # noqa: N801 - used as a decorator, like the functools one it stands in for
    """``functools.cached_property`` without its lock (Python 3.11 takes one on every first read, and a context
    has a dozen views read once each): computed on first read, then an ordinary attribute. A context is never
    shared between threads of execution."""

    def __init__(self, function: Callable[[Any], Any]) -> None:
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.function(instance)
        return value


class OutputsRead(NamedTuple):
    """What :attr:`Context._outputs_read`'s one pass over the outputs gives each rule that reads them."""

    #: every output's text (:attr:`Context.texts`)
    texts: list[str]
    #: those the cut-JSON rule reads closely (:attr:`Context.closer`)
    closer: Sequence[Output]
    #: those the wire flags or threadfix wrote (:attr:`Context.marked`)
    marked: Sequence[Output]
    #: those the oversized rule measures (:attr:`Context.unsized`)
    unsized: Sequence[Output]
    #: those the empty rule reads closely (:attr:`Context.blank_led`)
    blank_led: Sequence[Output]


class NotInFormat(Exception):
    """The thread's items broke its dialect's own code: reported for the thread, the batch goes on."""


class Context:
    """One thread as the rules see it. Every view is computed on first use and kept for the next rule."""

    def __init__(self, thread: Thread, dialect: Dialect | None, index: ThreadIndex | None, options: LintOptions,
                 now: float) -> None:
        self.thread = thread
        self.address: Address = thread.address
        self.dialect = dialect
        self.index = index if index is not None else ThreadIndex((), ())
        self.options = options
        self.now = now
        # per-output cache, keyed by the index's objects (a Chat message's outputs may share one location)
        self._failures: dict[int, Classification | None] = {}
        #: the texts :meth:`text` built from parts or cut from a long string, by output (built once for all rules)
        self._texts: dict[int, str] = {}
        #: the shortcuts are taken (False: every rule reads every output; see :data:`FAST`)
        self.fast = FAST

    @once
    def items(self) -> Sequence[Any]:
        """The thread's items (read on first use: a thread a typed read indexed reads them only if a rule asks)."""
        return self.thread.items

    @once
    def recent(self) -> bool:
        """Changed under ``min_age`` ago, so its open calls may still be running (asked only when it has some)."""
        if self.options.min_age <= 0:
            return False
        changed = self.thread.last_changed()
        return changed is not None and self.now - changed < self.options.min_age

    @once
    def waiting(self) -> bool:
        """Has an open call to a tool left to others, so its open calls are pending (asked only when it has some)."""
        # as repair decides it: a call whose own output the store saved waits on nobody
        return waiting_on(as_written(self.plan, self.thread.saved_outputs), self.options.leave_tools) is not None

    @once
    def accepted(self) -> bool:
        """The dialect's quick check that nothing needs repair and the provider accepts the thread."""
        assert self.dialect is not None
        if self.index.accepted and self.fast:
            return True  # seen by the index on its way (one pass over the items, not two)
        try:
            return self.dialect.quick_accepted(self.items)
        except MALFORMED:  # its contract is "False: look closer"; the index below read the thread already
            return False

    @once
    def healthy(self) -> bool:
        """The dialect's quick check: nothing to repair."""
        assert self.dialect is not None
        if self.accepted:
            return True
        try:
            return self.dialect.quick_healthy(self.items)
        except MALFORMED:
            return False

    @once
    def plan(self) -> RepairPlan:
        """What repair would do to this thread: the same calls repair makes, with its default options.

        Like repair, a thread the dialect's quick check finds healthy is not planned at all.
        """
        assert self.dialect is not None
        if self.healthy:
            return RepairPlan()
        return self._dialect_call(plan_repair, self.index, self.dialect, self.items,
                                  RepairOptions(answer_waiting=self.options.answer_waiting))

    @once
    def violations(self) -> list[Violation]:
        """Everything the provider would refuse, in its own words."""
        assert self.dialect is not None
        if self.accepted:
            return []
        return self._dialect_call(self.dialect.check, self.items)

    @once
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

    @once
    def truncated_calls(self) -> Sequence[Call]:
        """The calls the turn's output limit cut off, in index order (most threads have none: told at C speed)."""
        calls = self.index.calls
        return [call for call in calls if call.truncated] if any(map(_TRUNCATED, calls)) else ()

    @once
    def calls_by_id(self) -> dict[str | None, list[Call]]:
        grouped: dict[str | None, list[Call]] = defaultdict(list)
        for call in self.index.calls:
            grouped[call.call_id].append(call)
        return grouped

    def call_of(self, output: Output) -> Call | None:
        """The call an output answers, when exactly one call has its id."""
        calls = self.calls_by_id.get(output.call_id) if output.call_id is not None else None
        return calls[0] if calls and len(calls) == 1 else None

    @once
    def _first_outputs(self) -> dict[str | None, Output]:
        return {output.call_id: output for output in reversed(self.index.outputs)}

    def output_of(self, call: Call) -> Output | None:
        """The first output that names the call's id (None for a call without one)."""
        return self._first_outputs.get(call.call_id) if call.call_id is not None else None

    def tool_of(self, output: Output) -> str | None:
        call = self.call_of(output)
        return call.name if call is not None else None

    @once
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
        text = self._texts.get(id(output))
        if text is None:
            parts = _parts_read(content) if self.fast else None
            text = self._texts[id(output)] = parts[0] if parts is not None and len(parts[0]) <= limit else None
            if text is None:
                from threadfix.failures.classifier import output_text

                text = self._texts[id(output)] = output_text(content, limit)
        return text

    @once
    def texts(self) -> list[str]:
        """:meth:`text` of every output, in index order."""
        return self._outputs_read.texts

    @once
    def closer(self) -> Sequence[Output]:
        """The outputs the cut-JSON rule reads closely (TF202), in index order: all but those whose text (one string,
        or a list of text parts) is led by a character that is neither whitespace nor a bracket (such an output does
        not start like JSON), and those the wire does not flag whose text opens an object with a key that names no
        error (``{"`` not followed by one of :data:`ERROR_KEYS`: half the outputs of a store, each a JSON result)."""
        return self._outputs_read.closer

    @once
    def blank_led(self) -> Sequence[Output]:
        """The outputs the empty rule reads closely (TF207), in index order: those of :attr:`closer` whose text is
        empty or led by whitespace, and those that are neither one string nor text parts."""
        return self._outputs_read.blank_led

    @once
    def unsized(self) -> Sequence[Output]:
        """The outputs the oversized rule (TF203) measures, in index order: all but one string, or text parts of
        nothing but a type and a text, of at most a quarter of ``oversized_bytes`` characters (at most 4 bytes a
        character)."""
        return self._outputs_read.unsized

    @once
    def marked(self) -> Sequence[Output]:
        """The outputs the wire flags (``is_error``, a status) or threadfix wrote (what TF201 and TF902 read), in
        index order."""
        return self._outputs_read.marked

    @once
    def _outputs_read(self) -> OutputsRead:
        """One pass over the outputs for every rule that reads them; it sets each view it builds (:attr:`texts`,
        :attr:`closer`...), so a rule reads them as plain attributes, never through :class:`once` again."""
        outputs = self.index.outputs
        limit, short = self.options.scan_chars, self.options.oversized_bytes // 4
        if not self.fast:
            return OutputsRead([self.text(output) for output in outputs], outputs, outputs, outputs, outputs)
        texts: list[str] = []
        closer: list[Output] = []
        marked: list[Output] = []
        unsized: list[Output] = []
        blank_led: list[Output] = []
        for output in outputs:
            content = output.content
            if content.__class__ is str:
                text, chars = content, len(content)
                texts.append(content if chars <= limit else self.text(output))
            elif (parts := _parts_read(content)) is not None:
                text, chars = parts
                if len(text) <= limit:
                    self._texts[id(output)] = text
                    texts.append(text)
                else:
                    texts.append(self.text(output))
            else:
                texts.append(self.text(output))
                closer.append(output)
                unsized.append(output)
                blank_led.append(output)
                text = None
            flagged = output.is_error is not None or output.status is not None
            if text is not None:
                if not text:
                    closer.append(output)
                    blank_led.append(output)
                elif (first := text[0]) == "{":
                    if flagged or text[1:2] != '"' or text.startswith(ERROR_KEYS, 2):
                        closer.append(output)
                elif first == "[":
                    closer.append(output)
                elif first.isspace():
                    closer.append(output)
                    blank_led.append(output)
                if chars > short:
                    unsized.append(output)
            if flagged or output.by_threadfix:
                marked.append(output)
        read = OutputsRead(texts, closer, marked, unsized, blank_led)
        self.__dict__.update(texts=texts, closer=closer, marked=marked, unsized=unsized, blank_led=blank_led)
        return read

    @once
    def all_text(self) -> str:
        """Every output's text, each after a newline: one string for rules that search them all at once."""
        return "\n".join(["", *self.texts])

    @once
    def text_marks(self) -> int:
        """The text rules that may find something in :attr:`all_text`, a bit each (:mod:`threadfix.rules.marks`):
        one pass over the text for all of them."""
        return self._lines.marks if self.index.outputs else 0

    def texts_holding(self, group: int) -> Sequence[int]:
        """The indices (into :attr:`texts` and the index's outputs) of the outputs in whose text, after a newline, the
        :mod:`~threadfix.rules.marks` ``group`` may match, in order: the outputs the text rules read closely, told by
        the same one pass as :attr:`text_marks` (the thread's text encoded once, for the thread and for its outputs).
        Every output when that pass did not run."""
        return self._lines.holding(group) if self.text_marks & group else ()

    @once
    def texts_scanned(self) -> bool:
        """Whether :attr:`text_marks` came from the pass (False: every group may match, and every output is held)."""
        return self._lines.data is not None

    @once
    def _lines(self) -> Lines:
        return Lines(self.texts)

    def failure(self, output: Output) -> Classification | None:
        """The output's classification when it is an error output, else None (classified once, on demand)."""
        key = id(output)
        failures = self._failures
        if key in failures:
            return failures[key]
        result = failures[key] = _failure_of()(output.content, output.is_error, output.status)
        return result

    def is_error(self, output: Output) -> bool:
        return self.failure(output) is not None


@cache
def _failure_of() -> Callable[..., Classification | None]:
    """:func:`threadfix.verdicts.failure_of`, imported on first use (a run whose rules classify nothing never loads
    the classifier) and then found at once: an import statement in :meth:`Context.failure` was paid per output."""
    from threadfix.verdicts import failure_of

    return failure_of


_TRUNCATED = attrgetter("truncated")
#: the part types whose text is all output_text reads of them
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
#: what a part with more than its type and text counts for in :func:`_parts_read`'s characters: more than any limit
_UNMEASURED = 1 << 62


def _parts_read(content: Any) -> tuple[str, int] | None:
    """A list of text parts (the common shape after a string) read without the general walks: its text as
    ``output_text`` joins it (uncut), and the characters of every string in it, as the oversized rule counts them
    (beyond any limit when a part holds more than its type and text); None for anything else. The tests hold
    both to what they stand in for."""
    if content.__class__ is not list:
        return None
    pieces = []
    chars = 0
    for part in content:
        if (part.__class__ is not dict or (kind := part.get("type")).__class__ is not str or kind not in _TEXT_PARTS
                or (text := part.get("text")).__class__ is not str):
            return None
        if text:
            pieces.append(text)
        chars += len(kind) + len(text) if len(part) == 2 else _UNMEASURED
    return "\n".join(pieces), chars
