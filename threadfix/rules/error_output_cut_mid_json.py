from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from threadfix.model import Finding, Severity
from threadfix.patterns import Lazy
from threadfix.rules.base import Rule, call_label, quoted
from threadfix.rules.context import ERROR_KEYS

if TYPE_CHECKING:
    from threadfix.rules.context import Context

#: an object whose first key names an error (the shapes tools and the seed projects write)
_JSON_START = Lazy(r"\s*[\[{]")
_ERROR_OBJECT = Lazy(r'\s*\{\s*"(?:' + "|".join(ERROR_KEYS) + r')"\s*:')


class ErrorOutputCutMidJson(Rule):
    """An error output that was cut short in the middle of its JSON.

    ## What it does
    Finds error outputs (JSON objects whose first key is `error`, `errors`, `kind`..., or outputs the
    wire flags as failed) that start like a JSON object or array but do not parse: a length limit
    cut the serialised text instead of the error itself.

    ## Why is this bad?
    The model reads half an object, often without the part that said what to do (the cause and fix
    usually come last), and tools that parse their own errors back fail on it. The limit was applied
    after serialising: the one order that breaks the JSON.

    ## Example
    ```json
    {"type": "function_call_output", "call_id": "call_1", "output": "{\\"error\\": {\\"code\\": \\"timeout\\", \\"cause\\": \\"the query ran for 30 s and"}
    ```

    ## Use instead
    Bound each field (the cause, the fix, any excerpt) before serialising, so the JSON is always
    whole:
    ```json
    {"type": "function_call_output", "call_id": "call_1", "output": "{\\"error\\": {\\"code\\": \\"timeout\\", \\"cause\\": \\"the query ran for 30 s and…\\"}}"}
    ```

    ## Fix
    None: the missing part of the text is gone.
    """

    code = "TF202"
    name = "error-output-cut-mid-json"
    severity = Severity.WARNING
    summary = "an error output's JSON was cut short and does not parse"
    reads = "closer"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for output in ctx.closer:  # (the rest cannot hold what this rule finds)
            content = output.content
            text = content if content.__class__ is str else _whole_text(content)
            if not text or (named := _named(text)) is None:
                continue
            if not (named or output.is_error is not None or output.status is not None) or not _broken(text):
                continue
            if named or ctx.is_error(output):
                tool = ctx.tool_of(output)
                yield self.finding(ctx, f"error output of call {call_label(output.call_id, tool)} is cut mid-JSON "
                                   f"({len(text)} characters that do not parse): {quoted(text, 60)}",
                                   at=output.at, call_id=output.call_id, tool=tool, excerpt=text)


def _whole_text(content: Any) -> str | None:
    """The output's whole text when it is one string (a parsed object was whole when it was stored)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


def _named(text: str) -> bool | None:
    """None when ``text`` does not start like JSON (``_JSON_START``), else whether it is an object whose first key names
    an error (``_ERROR_OBJECT``). Most starts settle the first alone, and the regex runs only where the first key may
    be one of the names."""
    first = text[:1]
    if first == "{":
        return (text[1:2] != '"' or text.startswith(ERROR_KEYS, 2)) and _ERROR_OBJECT.match(text) is not None
    if first == "[":
        return False
    if first.isspace() and _JSON_START.match(text) is not None:
        return _ERROR_OBJECT.match(text) is not None
    return None


def _broken(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return True
    return False


RULE = ErrorOutputCutMidJson()
