"""Why a call has no output, from the evidence the stored thread holds, and what the model should read.

Every peer writes one fixed placeholder for every cause. The thread usually says more: the turn hit its
output limit mid-call, the arguments never parsed, the user moved on, the turn went on without the
output, or the thread simply ends on the call. The output repair writes says which, in one sentence the
model can act on, and is deterministic (no timestamps), so the same input always gives the same bytes.
"""

from __future__ import annotations

from bisect import bisect_right
from enum import Enum, unique
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from threadfix.failures.arguments import ArgumentsState, read_arguments
from threadfix.failures.kinds import Kind

if TYPE_CHECKING:  # model imports kinds from this package; only types are needed here
    from threadfix.model import Call, ThreadIndex

#: The key and value that mark an output threadfix wrote; lint, report and a second repair read them.
MARKER_KEY = "written_by"
MARKER = "threadfix"
_MARKER_TEXT = (f'"{MARKER_KEY}":"{MARKER}"', f'"{MARKER_KEY}": "{MARKER}"')
_MARKER_END = f'"{MARKER}"'

TOOL_NAME_CHARS = 128
MESSAGE_CHARS = 1000


@unique
class Cause(str, Enum):
    TURN_CUT_OFF = "turn_cut_off"
    ARGUMENTS_UNPARSEABLE = "arguments_unparseable"
    USER_MOVED_ON = "user_moved_on"
    OUTPUT_LOST = "output_lost"
    THREAD_ENDED = "thread_ended"

    def __str__(self) -> str:
        return self.value


class Explanation(Struct, frozen=True):
    """The kind and cause of a dangling call, with the evidence that decided it."""

    kind: Kind
    cause: Cause
    evidence: str


_SENTENCES: dict[Cause, str] = {
    Cause.TURN_CUT_OFF: (
        "This call was never run: the response was cut off while its arguments were being written. "
        "If it is still needed, send it again with complete arguments."
    ),
    Cause.ARGUMENTS_UNPARSEABLE: (
        "This call was never run: its arguments are not valid JSON. "
        "If it is still needed, send it again with valid JSON arguments."
    ),
    Cause.USER_MOVED_ON: (
        "This call did not return a result: the user sent a new message before its output was recorded. "
        "It may have run in part, so check its effects before repeating it."
    ),
    Cause.OUTPUT_LOST: (
        "This call did not return a result: the turn went on without its output being recorded. "
        "It may have run in part, so check its effects before repeating it."
    ),
    Cause.THREAD_ENDED: (
        "This call did not return a result: the conversation stopped before its output was recorded. "
        "It may have run in part, so check its effects before repeating it."
    ),
}


def explain(call: Call, index: ThreadIndex) -> Explanation:
    """Explain why ``call`` has no output, preferring the most specific evidence."""
    arguments = read_arguments(call.arguments)
    if call.truncated:
        return Explanation(Kind.TRUNCATED, Cause.TURN_CUT_OFF, "the turn stopped at its output limit during this call")
    if arguments.state is ArgumentsState.MALFORMED:
        return Explanation(
            Kind.MALFORMED_ARGUMENTS, Cause.ARGUMENTS_UNPARSEABLE,
            f"its {arguments.chars} characters of arguments are not valid JSON and the turn was not cut off",
        )
    message = call.at[0]
    later_user = _first_after(index.user_turns, message)
    if later_user is not None:
        return Explanation(Kind.ABORTED, Cause.USER_MOVED_ON, f"item {later_user} is a later user message")
    later_model = _first_after(index.model_turns, message)
    if later_model is not None:
        return Explanation(Kind.ABORTED, Cause.OUTPUT_LOST, f"item {later_model} continues the turn without the output")
    return Explanation(Kind.ABORTED, Cause.THREAD_ENDED, "the thread ends on this call")


def _first_after(turns: tuple[int, ...], message: int) -> int | None:
    """The first turn after ``message`` (turns are in document order; a thread may have thousands)."""
    at = bisect_right(turns, message)
    return turns[at] if at < len(turns) else None


def clip(text: str, chars: int) -> str:
    """Cut ``text`` to at most ``chars`` characters, marking the cut."""
    return text if len(text) <= chars else text[: chars - 1] + "…"


def aborted_payload(call: Call, explanation: Explanation, reason: str | None = None) -> dict[str, Any]:
    """The JSON object a repaired call's output carries, bounded before it is serialised."""
    return {
        "error": {
            "kind": explanation.kind.value,
            "cause": explanation.cause.value,
            "tool": clip(call.name or "unknown", TOOL_NAME_CHARS),
            "message": clip(reason if reason is not None else _SENTENCES[explanation.cause], MESSAGE_CHARS),
        },
        MARKER_KEY: MARKER,
    }


def is_threadfix_output(content: Any) -> bool:
    """Whether an output's content is a payload threadfix wrote (string, dict, or parts holding one)."""
    if isinstance(content, dict):
        return content.get(MARKER_KEY) == MARKER
    if isinstance(content, str):  # one search of every output's text, then the exact markers (issue 7)
        return _MARKER_END in content and any(marker in content for marker in _MARKER_TEXT)
    if isinstance(content, list):
        return any(is_threadfix_output(_part_body(part)) for part in content[:4])
    return False


def _part_body(part: Any) -> Any:
    """The payload a content part carries: its text, or its JSON (Bedrock ``{"json": ...}`` blocks)."""
    if isinstance(part, dict):
        return part.get("text", part.get("json"))
    return part
