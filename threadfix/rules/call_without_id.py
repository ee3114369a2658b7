from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule, label
from threadfix.rules.structure import SkipKind, skips

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class CallWithoutId(Rule):
    """A tool call with no id.

    ## What it does
    Finds calls whose id is missing or not a string.

    ## Why is this bad?
    An output names its call by id; a call without one can never be answered, and every provider
    requires the id ("Field required: tool_calls[0].id"). Such calls usually come from an app that
    rebuilt calls from a stream and lost the id fragment.

    ## Example
    ```json
    [{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}]
    ```

    ## Use instead
    Keep the id the provider sent with the call's first streamed fragment.

    ## Fix
    None. `threadfix repair` cannot pair an output with it and reports it; fix it by hand.
    """

    code = "TF006"
    name = "call-without-id"
    severity = Severity.ERROR
    summary = "a tool call has no id, so no output can answer it"
    structural = True

    def check(self, ctx: Context) -> Iterator[Finding]:
        for _, call in skips(ctx, SkipKind.NO_ID):
            yield self.finding(ctx, f"call to {label(call.name, 'unknown tool')} has no id; no output can be paired with it",
                               at=call.at, tool=call.name)


RULE = CallWithoutId()
