"""The failure vocabulary shared by repair, lint and report.

A kind is what went wrong with one tool call, stated so that a person, a metric and the model can all
act on it. The first nineteen follow the cross-ecosystem tool-error taxonomy the project grew from; the
rest are what only a *stored* thread can show (a call that never got an output, a call cut off
mid-arguments, arguments that never parsed) plus ``success`` and ``unknown`` so that every output has a
kind.

The enum itself lives in :mod:`threadfix.model` (a finding carries a kind, and the model is the layer below
this one); it is importable from here and from :mod:`threadfix.failures` as before.
"""

from __future__ import annotations

from msgspec import Struct

from threadfix.model import Kind  # (defined with the thread model, which names it: kept importable from here)


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
