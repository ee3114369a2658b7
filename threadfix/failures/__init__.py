"""The failure-classification library: one source of truth for what a failure is and what the model reads.

``classify()``, ``could_be_failure()``, ``output_text()``, ``refusal_payload()`` and ``Classification`` live in
``threadfix.failures.classifier``, imported on first use of one of those names (``from threadfix.failures
import classify`` gives the function): it holds many pattern and code tables, and commands that never
classify (``--help``, repair) skip building them.

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

#: Names served by the classifier module, imported only when one is asked for.
_CLASSIFIER_NAMES = frozenset({"Classification", "classify", "could_be_failure", "output_text", "refusal_payload"})

__all__ = [
    "Arguments",
    "ArgumentsState",
    "Cause",
    "Classification",
    "Explanation",
    "KIND_INFO",
    "Kind",
    "KindInfo",
    "MARKER",
    "MARKER_KEY",
    "aborted_payload",
    "classify",
    "clip",
    "could_be_failure",
    "explain",
    "info",
    "is_threadfix_output",
    "output_text",
    "read_arguments",
    "refusal_payload",
]


def __getattr__(name: str) -> object:
    if name not in _CLASSIFIER_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from threadfix.failures import classifier

    value = getattr(classifier, name)
    globals()[name] = value  # later lookups are plain attribute hits
    return value
