"""Neutral, frozen data that flows store → dialect → findings → repair plan → write.

Nothing here does I/O. A dialect turns a wire-format thread into a :class:`ThreadIndex` of calls and
outputs; rules and the repair planner read only that index, so they work the same for every format.
"""

from __future__ import annotations

from enum import Enum, unique
from typing import Any

from msgspec import Struct, field
from msgspec.structs import replace

from threadfix.errors import ExitCode


@unique
class Kind(str, Enum):
    """What went wrong with one tool call (see :mod:`threadfix.failures.kinds` for what each means and may do).

    Stable snake_case values: they appear in JSON output, lint codes' messages and repaired threads."""

    NOT_IMPLEMENTED = "not_implemented"
    INVALID_ARGUMENTS = "invalid_arguments"
    NOT_FOUND = "not_found"
    PERMISSION_DENIED = "permission_denied"
    UNAUTHORIZED = "unauthorized"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    RATE_LIMITED = "rate_limited"
    USAGE_POOL_EXHAUSTED = "usage_pool_exhausted"
    USAGE_LIMIT_REACHED = "usage_limit_reached"
    GLOBAL_RATE_LIMIT = "global_rate_limit"
    CONCURRENCY_LIMIT = "concurrency_limit"
    SERVICE_UNAVAILABLE = "service_unavailable"
    NETWORK_ERROR = "network_error"
    EXECUTION = "execution"
    BEHAVIOR_VERSION_UNSUPPORTED = "behavior_version_unsupported"
    RENDER_LIMITED = "render_limited"
    TERMINAL_ERROR = "terminal_error"
    CUSTOM = "custom"
    # What stored threads add.
    ABORTED = "aborted"
    TRUNCATED = "truncated"
    MALFORMED_ARGUMENTS = "malformed_arguments"
    SUCCESS = "success"
    UNKNOWN = "unknown"

    def __str__(self) -> str:  # so f-strings and rich show the value, not Kind.X
        return self.value


#: Where an item lives in a thread: (message index, block index), block -1 when the message itself is
#: the call or output (flat formats such as OpenAI Responses or Chat).
Loc = tuple[int, int]


class Address(Struct, frozen=True):
    """A printable, grep-able name for one thread: ``file``, ``file:LINE`` or ``db:table:key``."""

    source: str
    line: int | None = None
    key: str | None = None

    def __str__(self) -> str:
        text = self.source
        if self.line is not None:
            text += f":{self.line}"
        if self.key is not None:
            text += f":{self.key}"
        return text

    def at(self, item: int | None) -> str:
        """The address of one item of the thread (``file:LINE#4``)."""
        return str(self) if item is None else f"{self}#{item}"


class Call(Struct, frozen=True):
    """A tool call the client was expected to answer (or, when ``server``, the provider itself)."""

    call_id: str | None
    name: str
    wire_type: str
    at: Loc
    arguments: Any = None
    #: the turn's stop reason or the call's status says it was cut off mid-call
    truncated: bool = False
    #: answered inside the same turn by the provider (Anthropic server tools)
    server: bool = False
    #: the wire cannot carry an invented output for it (e.g. computer_call needs a screenshot)
    unanswerable: bool = False
    #: the format itself marks it as waiting on a person or another process (an approval requested, a call
    #: deferred, an interrupt): pending while it ends its thread, stuck once a later user turn moved past it
    waiting: bool = False


class Output(Struct, frozen=True):
    """A tool output found in a thread, as stored."""

    call_id: str | None
    wire_type: str
    at: Loc
    content: Any = None
    #: the wire's own error flag (Anthropic ``is_error``, Bedrock ``status``); None when it has none
    is_error: bool | None = None
    #: any other status the wire carries (``failed``, ``error``, ``output-error``...)
    status: str | None = None
    #: threadfix wrote this output in an earlier repair
    by_threadfix: bool = False


class ThreadIndex(Struct, frozen=True):
    """Every call and output of one thread, in document order, plus what explains a dangling call."""

    calls: tuple[Call, ...]
    outputs: tuple[Output, ...]
    #: message indices holding new input from the user (not tool results)
    user_turns: tuple[int, ...] = ()
    #: message indices of assistant/model messages
    model_turns: tuple[int, ...] = ()
    length: int = 0
    #: True when the dialect's index, on its way through the items, saw what its ``quick_accepted`` says True to
    #: (lint and report then skip that second pass); False: not seen, ask that check
    accepted: bool = False


class Thread(Struct):
    """One stored thread: its items and enough of its origin to write it back byte-exactly."""

    address: Address
    items: list[Any]
    #: the JSON object that held the items (its other keys are kept), or None for a bare array; not to be confused
    #: with a store's container (how threads sit in a medium: see :mod:`threadfix.stores`)
    document: dict[str, Any] | None = None
    #: the key of ``document`` that holds the items (not :attr:`Address.key`, which names the thread in messages)
    items_key: str | None = None
    #: the exact bytes the thread was read from (a JSONL line, a file, a row's JSON)
    raw: bytes = b""
    #: seconds since the epoch of the thread's last change, when the store knows it exactly
    modified: float | None = None
    #: the store's coarser fallback (a file's mtime), used when neither ``modified`` nor the items say
    mtime: float | None = None
    #: a dialect forced by the store (a preset) or the user
    dialect: str | None = None
    #: store-private data needed to write the thread back (line number, row id...)
    locator: Any = None
    #: outputs of its calls that the store keeps apart from its items (LangGraph's pending writes), by call id, each
    #: with where it was saved: the store's encode puts such an output in place of the error output a plan inserts
    saved_outputs: dict[str, str] | None = None
    #: ids of calls its store marks as waiting on a person or another process, apart from the items (an ADK
    #: event's ``long_running_tool_ids``, a LangGraph interrupt pending): indexed as :attr:`Call.waiting`, the
    #: same mark a format's own marker sets, so the planner, repair and lint treat both alike
    waiting_calls: frozenset[str] = frozenset()

    def index(self, dialect: Any) -> ThreadIndex:
        """``dialect``'s index of the items, with the calls of :attr:`waiting_calls` marked as waiting."""
        index: ThreadIndex = dialect.index(self.items)
        if not self.waiting_calls:
            return index
        calls = tuple(replace(c, waiting=True) if c.call_id in self.waiting_calls else c for c in index.calls)
        return replace(index, calls=calls)

    def exact_time(self) -> float | None:
        """The store's own record of the thread's last change (a row's time column), if it keeps one."""
        return self.modified

    def last_changed(self, fallback: bool = True) -> float | None:
        """When the thread last changed: the store's record, else its items' times, else (``fallback``)
        the file's mtime. Computed only when asked (most threads never need it)."""
        exact = self.exact_time()
        if exact is not None:
            return exact
        from threadfix.times import modified_time

        return modified_time(self.document, self.items, self.mtime if fallback else None)


@unique
class Action(str, Enum):
    """What a repair does to one call or output."""

    INSERT_OUTPUT = "insert_output"
    #: the call's own output, saved by its store apart from the thread (:attr:`Thread.saved_outputs`), put in place
    #: of the error output INSERT_OUTPUT planned; only in what a repair says it did, never in a plan a dialect applies
    INSERT_SAVED_OUTPUT = "insert_saved_output"
    MOVE_OUTPUT = "move_output"
    CONVERT_ORPHAN = "convert_orphan"
    DROP_ORPHAN = "drop_orphan"
    CONVERT_DUPLICATE = "convert_duplicate"
    DROP_DUPLICATE = "drop_duplicate"
    #: text the provider refuses after a turn's tool calls, moved ahead of them (no call or output changes)
    MOVE_TEXT = "move_text"
    #: a tool call where the provider refuses any (a ``tool_use`` block in a user message), kept as text
    CONVERT_CALL = "convert_call"

    def __str__(self) -> str:
        return self.value


class Edit(Struct, frozen=True):
    """One planned change, with the call it concerns and why."""

    action: Action
    call_id: str | None
    tool: str | None
    at: Loc
    kind: Kind | None = None
    cause: str | None = None
    evidence: str | None = None
    #: the output being moved, converted or dropped
    output: Output | None = None
    #: the call being answered
    call: Call | None = None
    #: the synthetic output's payload (a JSON-able dict) for INSERT_OUTPUT
    payload: dict[str, Any] | None = None


class Skip(Struct, frozen=True):
    """A problem repair saw but will not touch, and why (reported, never silent)."""

    call_id: str | None
    tool: str | None
    at: Loc
    reason: str


class RepairPlan(Struct, frozen=True):
    """Everything repair would do to one thread; empty when the thread is healthy."""

    edits: tuple[Edit, ...] = ()
    skips: tuple[Skip, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.edits)


@unique
class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def __str__(self) -> str:
        return self.value


class Finding(Struct, frozen=True):
    """One lint result: a rule code at a place in a thread."""

    code: str
    name: str
    severity: Severity
    message: str
    address: Address
    #: the call's or output's location (as in edits: a block inside a message), None for the whole thread
    item: Loc | None = None
    call_id: str | None = None
    tool: str | None = None
    kind: Kind | None = None
    fixable: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class Problem(Struct):
    """A file, line, thread or store that could not be handled; the batch went on."""

    where: str
    message: str
    exit_code: ExitCode = ExitCode.ERROR
