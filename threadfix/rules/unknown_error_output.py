from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.failures import Kind
from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule, call_label, quoted

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class UnknownErrorOutput(Rule):
    """An error output that does not say what went wrong.

    ## What it does
    Finds outputs that are errors (the wire flags them, e.g. Anthropic `is_error: true`, or they are
    framed as a failure) but whose content names no recognisable failure: no error code, HTTP
    status, exception, or wording the failure classifier knows (the `unknown` kind).

    ## Why is this bad?
    The model cannot tell whether to retry, fix its arguments, try another tool or ask the user;
    it usually guesses, often by repeating the same call. Failure reports count such outputs as
    unknown, so they hide what is really failing.

    ## Example
    ```json
    [{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "src/app.py"}}]},
     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": "something happened"}]}]
    ```

    ## Use instead
    Give every error output a kind and a cause the model can act on:
    ```json
    [{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "src/app.py"}}]},
     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
      "content": "{\\"error\\": {\\"code\\": \\"not_found\\", \\"cause\\": \\"no file src/app.py\\", \\"fix\\": \\"list the folder first\\"}}"}]}]
    ```

    ## Fix
    None: only the tool knows what went wrong.
    """

    code = "TF201"
    name = "unknown-error-output"
    severity = Severity.WARNING
    summary = "an error output names no recognisable failure"
    reads = "marked"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for output in ctx.marked:  # (only a marked output can hold what this rule finds)
            # ``unknown`` is the kind of an output the wire flags (is_error, a status) that names no cause
            if output.by_threadfix or (output.is_error is None and output.status is None):
                continue
            failure = ctx.failure(output)
            if failure is not None and failure.kind is Kind.UNKNOWN:
                text = ctx.text(output)
                yield self.finding(ctx, f"error output of call {call_label(output.call_id, ctx.tool_of(output))} names no "
                                   f"recognisable failure: {quoted(text, 60)}", at=output.at, call_id=output.call_id,
                                   tool=ctx.tool_of(output), kind=Kind.UNKNOWN, excerpt=text)


RULE = UnknownErrorOutput()
