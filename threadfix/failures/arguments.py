"""Reading a call's arguments the way a careful runtime does.

A blank argument string is a tool that takes no arguments, not a fault. JSON that is not an object is
read as ``{}`` but flagged, because every later reader indexes into it as an object. Text that is not
JSON at all is malformed; whether that means the turn was cut off mid-arguments or the model wrote
broken JSON in a finished turn is decided by the turn's stop reason, never guessed from the text.
"""

from __future__ import annotations

from enum import Enum, unique
from typing import Any

import orjson
from msgspec import Struct, field


@unique
class ArgumentsState(str, Enum):
    OK = "ok"
    BLANK = "blank"
    NOT_OBJECT = "not_object"
    MALFORMED = "malformed"

    def __str__(self) -> str:
        return self.value


class Arguments(Struct, frozen=True):
    state: ArgumentsState
    value: dict[str, Any] = field(default_factory=dict)
    #: characters of argument text that arrived (never the text itself: it is the model's, unscreened)
    chars: int = 0


def read_arguments(raw: Any) -> Arguments:
    """Read arguments stored as a JSON string (OpenAI) or as an already-parsed value (Anthropic, Gemini)."""
    if raw is None:
        return Arguments(ArgumentsState.BLANK)
    if isinstance(raw, str):
        if raw.strip() == "":
            return Arguments(ArgumentsState.BLANK, chars=len(raw))
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return Arguments(ArgumentsState.MALFORMED, chars=len(raw))
        return _object_or_flag(value, len(raw))
    return _object_or_flag(raw, 0)


def _object_or_flag(value: Any, chars: int) -> Arguments:
    if isinstance(value, dict):
        return Arguments(ArgumentsState.OK, value, chars)
    return Arguments(ArgumentsState.NOT_OBJECT, {}, chars)
