from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule, call_label

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class RepairedByThreadfix(Rule):
    """An output threadfix wrote for a call that never got one.

    ## What it does
    Notes outputs marked as written by `threadfix repair`, with the kind of failure they report.

    ## Why is this bad?
    It is not bad in itself: the thread can continue. But the call never returned, so whatever it
    was meant to do may or may not have happened, and the cause (a cancelled turn, a crashed
    runtime) is worth fixing at its source.

    ## Example
    ```json
    {"type": "function_call_output", "call_id": "call_x",
     "output": "{\\"error\\": {\\"kind\\": \\"aborted\\", \\"cause\\": \\"thread_ended\\"}, \\"written_by\\": \\"threadfix\\"}"}
    ```

    ## Use instead
    Have the app record an output for every call itself, so no repair is needed.

    ## Fix
    None needed.
    """

    code = "TF902"
    name = "repaired-by-threadfix"
    severity = Severity.INFO
    summary = "threadfix answered this call in an earlier repair"
    reads = "marked"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for output in ctx.marked:  # (only a marked output can hold what this rule finds)
            if output.by_threadfix:
                failure = ctx.failure(output)
                kind = failure.kind if failure is not None else None
                yield self.finding(ctx, f"call {call_label(output.call_id, ctx.tool_of(output))} was answered by threadfix"
                                   + (f": {kind}" if kind else ""), at=output.at, call_id=output.call_id,
                                   tool=ctx.tool_of(output), kind=kind)


RULE = RepairedByThreadfix()
