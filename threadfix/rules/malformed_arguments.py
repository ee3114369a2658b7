from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.failures import ArgumentsState, Kind
from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule, call_label

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class MalformedArguments(Rule):
    """A finished turn whose call arguments are not valid JSON.

    ## What it does
    Finds calls whose arguments do not parse as JSON although the turn was not cut off (its stop
    reason is not an output limit). Blank arguments are a tool that takes none, and are fine; a cut
    off turn is reported by TF103 (truncated-call) instead, because its cause and cure differ.

    ## Why is this bad?
    The model wrote broken JSON in a turn that ended normally. The tool cannot have run as asked:
    either the app ran it on a guess, or it never ran and the call has no real output. Repeated
    cases point at a weak model, an over-long schema, or a streaming bug that drops fragments.

    ## Example
    ```json
    {"role": "assistant", "tool_calls": [{"id": "call_q5", "type": "function", "function": {"name": "sql_query", "arguments": "{\\"sql\\": \\"SELECT * FROM sales WHERE"}}]}
    ```

    ## Use instead
    Validate arguments before running a tool, and answer the call with an `invalid_arguments`
    error output the model can correct itself from. Structured outputs / strict tool schemas make
    this rare.

    ## Fix
    None for the arguments. When the call also has no output, TF001 reports it and
    `threadfix repair` answers it with a `malformed_arguments` error.
    """

    code = "TF101"
    name = "malformed-arguments"
    severity = Severity.WARNING
    summary = "a finished turn's call arguments are not valid JSON"
    reads = "unusual_arguments"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for call, arguments in ctx.unusual_arguments:
            if call.truncated or call.arguments is None:
                continue
            if arguments.state is ArgumentsState.MALFORMED:
                yield self.finding(ctx, f"arguments of call {call_label(call.call_id, call.name)} are not valid JSON "
                                   f"({arguments.chars} characters) and the turn was not cut off",
                                   at=call.at, call_id=call.call_id, tool=call.name, kind=Kind.MALFORMED_ARGUMENTS)


RULE = MalformedArguments()
