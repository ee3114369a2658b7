from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule, call_label
from threadfix.rules.structure import SkipKind, skips

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class DuplicateCallId(Rule):
    """Two or more calls with the same id.

    ## What it does
    Finds calls that share their id with another call in the thread.

    ## Why is this bad?
    An output names its call by id, so calls that share one cannot be told apart: an output may
    answer either, and the provider pairs it with whichever it meets first (Anthropic refuses
    outright: "tool_use ids must be unique"). Merging or guessing would run the wrong call's answer.

    ## Example
    ```json
    [{"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{\\"path\\": \\"a\\"}"},
     {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{\\"path\\": \\"b\\"}"}]
    ```

    ## Use instead
    Keep the ids the provider generated; an app that invents ids must make them unique per thread.

    ## Fix
    None. `threadfix repair` refuses such calls whole and reports them; fix the ids by hand.
    """

    code = "TF005"
    name = "duplicate-call-id"
    severity = Severity.ERROR
    summary = "calls share an id, so their outputs cannot be paired"
    structural = True

    def check(self, ctx: Context) -> Iterator[Finding]:
        for _, call in skips(ctx, SkipKind.SHARED_ID):
            count = len(ctx.calls_by_id[call.call_id])
            yield self.finding(ctx, f"call {call_label(call.call_id, call.name)} shares its id with {count - 1} other "
                               "call(s); no output can be paired with it", at=call.at, call_id=call.call_id, tool=call.name)


RULE = DuplicateCallId()
