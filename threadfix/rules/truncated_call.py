from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.failures import Kind
from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule, call_label

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class TruncatedCall(Rule):
    """A call cut off because its turn hit the output-token limit.

    ## What it does
    Finds calls written in a turn that stopped at its output limit while the call was being
    written: Anthropic `stop_reason: "max_tokens"`, Chat Completions `finish_reason: "length"`,
    a Responses item with `status: "incomplete"`.

    ## Why is this bad?
    The call's arguments are a fragment. If the app ran the tool anyway, it ran on partial input (a
    half-written patch, a cut-off SQL statement); if not, the call has no output and the thread is
    stuck (TF001). Either way the limit is too low for what the model is asked to write.

    ## Example
    ```json
    {"role": "assistant", "stop_reason": "max_tokens", "content": [{"type": "tool_use", "id": "toolu_w9", "name": "write_file", "input": {}}]}
    ```

    ## Use instead
    Raise `max_tokens` / `max_output_tokens` for turns that write large arguments, or have the model
    write large content in several calls. Never run a call from a truncated turn.

    ## Fix
    None for the call itself. When it has no output, TF001 reports it and `threadfix repair` answers
    it with a `truncated` error that asks the model to send it again whole.
    """

    code = "TF103"
    name = "truncated-call"
    severity = Severity.WARNING
    summary = "a call was cut off at the turn's output limit"
    reads = "truncated_calls"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for call in ctx.truncated_calls:
            yield self.finding(ctx, f"call {call_label(call.call_id, call.name)} was cut off: its turn hit the "
                               "output limit while the call was being written", at=call.at, call_id=call.call_id,
                               tool=call.name, kind=Kind.TRUNCATED)


RULE = TruncatedCall()
