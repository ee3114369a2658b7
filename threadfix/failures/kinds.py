"""The failure vocabulary shared by repair, lint and report.

A kind is what went wrong with one tool call, stated so that a person, a metric and the model can all
act on it. The first nineteen follow the cross-ecosystem tool-error taxonomy the project grew from; the
rest are what only a *stored* thread can show (a call that never got an output, a call cut off
mid-arguments, arguments that never parsed) plus ``success`` and ``unknown`` so that every output has a
kind.
"""

from __future__ import annotations

from enum import Enum, unique

from msgspec import Struct


@unique
class Kind(str, Enum):
    """Stable snake_case values: they appear in JSON output, lint codes' messages and repaired threads."""

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


class KindInfo(Struct, frozen=True):
    """What a caller may do about a kind.

    ``retryable``: repeating the same call later may succeed without changing it.
    ``ends_turn``: a failure of this kind stops the whole turn instead of becoming the call's output
    (a cancelled turn, a runtime that may not survive); these are the failures that leave calls
    dangling in stored threads.
    """

    retryable: bool
    ends_turn: bool
    summary: str


KIND_INFO: dict[Kind, KindInfo] = {
    Kind.NOT_IMPLEMENTED: KindInfo(False, False, "the tool has no implementation for this operation"),
    Kind.INVALID_ARGUMENTS: KindInfo(False, False, "the tool rejected its arguments"),
    Kind.NOT_FOUND: KindInfo(False, False, "the tool or the thing it was asked for does not exist"),
    Kind.PERMISSION_DENIED: KindInfo(False, False, "the caller may not do this (403-shaped)"),
    Kind.UNAUTHORIZED: KindInfo(False, False, "authentication failed (401-shaped)"),
    Kind.TIMEOUT: KindInfo(True, False, "the tool ran past its time budget"),
    Kind.CANCELLED: KindInfo(True, True, "the call or its turn was cancelled"),
    Kind.RATE_LIMITED: KindInfo(True, False, "a per-user or per-key quota was hit"),
    Kind.USAGE_POOL_EXHAUSTED: KindInfo(False, False, "the caller is out of credits"),
    Kind.USAGE_LIMIT_REACHED: KindInfo(False, False, "a usage limit was reached"),
    Kind.GLOBAL_RATE_LIMIT: KindInfo(True, False, "a shared backend shed load"),
    Kind.CONCURRENCY_LIMIT: KindInfo(True, False, "too many calls of this kind are in flight"),
    Kind.SERVICE_UNAVAILABLE: KindInfo(True, False, "a service the tool needs is down or overloaded"),
    Kind.NETWORK_ERROR: KindInfo(True, False, "a connection failed or was reset"),
    Kind.EXECUTION: KindInfo(False, False, "the tool ran and failed"),
    Kind.BEHAVIOR_VERSION_UNSUPPORTED: KindInfo(False, False, "the requested tool behaviour version is not supported"),
    Kind.RENDER_LIMITED: KindInfo(False, False, "a rendering budget was exceeded"),
    Kind.TERMINAL_ERROR: KindInfo(False, False, "a terminal subprocess failed"),
    Kind.CUSTOM: KindInfo(False, False, "a tool-specific error with its own code"),
    Kind.ABORTED: KindInfo(True, True, "the call never returned: its turn ended before an output was recorded"),
    Kind.TRUNCATED: KindInfo(True, True, "the turn was cut off while the call's arguments were being written"),
    Kind.MALFORMED_ARGUMENTS: KindInfo(False, False, "the call's arguments are not valid JSON"),
    Kind.SUCCESS: KindInfo(False, False, "the call returned a result"),
    Kind.UNKNOWN: KindInfo(False, False, "an error output whose cause could not be recognised"),
}


def info(kind: Kind) -> KindInfo:
    """Look up what may be done about ``kind``."""
    return KIND_INFO[kind]
