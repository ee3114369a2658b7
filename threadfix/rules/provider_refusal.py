from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.failures import clip
from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule
from threadfix.rules.structure import covers, laid_out_anew

if TYPE_CHECKING:
    from threadfix.rules.context import Context


#: provider messages quote call ids, which are untrusted and unbounded
MESSAGE_CHARS = 400


class ProviderRefusal(Rule):
    """Anything else the provider would refuse, in the provider's own words.

    ## What it does
    Runs the thread through its dialect's check of the provider's tool-call rules (the same oracle
    repair's tests are judged by) and reports every violation no more specific rule (TF001–TF006)
    already reports: text after a `tool_use` in an Anthropic assistant turn, a server tool with no
    result in the middle of a thread, items with duplicate ids in OpenAI Responses input, and the
    like.

    ## Why is this bad?
    The provider rejects the whole request, so the thread cannot be continued as stored.

    ## Example
    ```json
    [{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}},
                                        {"type": "text", "text": "Running it now."}]}]
    ```

    ## Use instead
    Store messages exactly as the provider returned them, and build follow-up requests from them
    without reordering blocks.

    ## Fix
    `threadfix repair` moves text that follows an Anthropic turn's tool calls ahead of them when the turn
    is one message of text and `tool_use` blocks (not when it holds thinking blocks, which the provider
    forbids changing). The other shapes have no safe automatic repair; the message says what the provider
    requires.
    """

    code = "TF008"
    name = "provider-refusal"
    severity = Severity.ERROR
    summary = "the provider would refuse the thread for a reason no other rule reports"
    structural = True

    def check(self, ctx: Context) -> Iterator[Finding]:
        for violation in ctx.violations:
            if not covers(ctx, violation):
                yield self.finding(ctx, f"{ctx.dialect.title} refuses this: {clip(violation.message, MESSAGE_CHARS)}", at=(violation.at, -1),
                                   call_id=violation.call_id, violation=violation.rule,
                                   fixable=laid_out_anew(ctx, violation.at))


RULE = ProviderRefusal()
