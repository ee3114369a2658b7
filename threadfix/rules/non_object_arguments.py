from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from threadfix.failures import ArgumentsState
from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule, call_label

if TYPE_CHECKING:
    from threadfix.rules.context import Context

_TYPE_NAMES = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean",
               type(None): "null"}


class NonObjectArguments(Rule):
    """Call arguments that are valid JSON but not an object.

    ## What it does
    Finds calls whose arguments parse, but as an array, a string, a number, a boolean or `null`
    instead of an object.

    ## Why is this bad?
    Tools read their arguments as named fields. A careful runtime reads such arguments as `{}`, so the
    tool runs with none of the values the model meant to pass; a careless one indexes into a list or
    string and fails somewhere far from the cause.

    ## Example
    ```json
    {"type": "function_call", "call_id": "call_7", "name": "read_file", "arguments": "[\\"README.md\\"]"}
    ```

    ## Use instead
    Declare an object schema for every tool (`"type": "object"` with named properties) and use strict
    tool schemas where the provider offers them.

    ## Fix
    None: the model's intent cannot be recovered from the arguments.
    """

    code = "TF102"
    name = "non-object-arguments"
    severity = Severity.WARNING
    summary = "call arguments are JSON but not an object; tools read them as {}"
    reads = "unusual_arguments"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for call, arguments in ctx.unusual_arguments:
            if call.arguments is None or call.truncated:
                continue
            if arguments.state is ArgumentsState.NOT_OBJECT:
                what = _TYPE_NAMES.get(type(_value(call.arguments)), "not an object")
                yield self.finding(ctx, f"arguments of call {call_label(call.call_id, call.name)} are {what}, "
                                   "not a JSON object; tools read them as {}", at=call.at, call_id=call.call_id,
                                   tool=call.name)


def _value(raw: Any) -> Any:
    return orjson.loads(raw) if isinstance(raw, str) else raw


RULE = NonObjectArguments()
