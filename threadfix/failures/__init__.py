"""The failure-classification library: one source of truth for what a failure is and what the model reads.

``threadfix.failures.classify`` (``classify()``, ``output_text()``, ``refusal_payload()``) is imported on
its own: it holds many pattern and code tables, and commands that never classify (``--help``, repair) skip
building them.

Repair uses it to explain dangling calls and write their outputs; lint and report use it to classify
existing outputs. Pure functions, no I/O.
"""

from threadfix.failures.arguments import Arguments, ArgumentsState, read_arguments
from threadfix.failures.dangling import (
    MARKER,
    MARKER_KEY,
    Cause,
    Explanation,
    aborted_payload,
    clip,
    explain,
    is_threadfix_output,
)
from threadfix.failures.kinds import KIND_INFO, Kind, KindInfo, info

__all__ = [
    "Arguments",
    "ArgumentsState",
    "Cause",
    "Explanation",
    "KIND_INFO",
    "Kind",
    "KindInfo",
    "MARKER",
    "MARKER_KEY",
    "aborted_payload",
    "clip",
    "explain",
    "info",
    "is_threadfix_output",
    "read_arguments",
]
