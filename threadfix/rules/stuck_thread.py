from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.model import Finding, Severity
from threadfix.rules.base import Fix, Rule, call_label
from threadfix.rules.structure import reported_dangling

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class StuckThread(Rule):
    """A thread the user kept writing to after a call was left without an output.

    ## What it does
    Finds a dangling call followed by at least `stuck-turns` (default 1) later user turns, and
    reports the thread once, at its first such call, with the number of turns sent since.

    ## Why is this bad?
    Each of those turns was sent with the unanswered call still in the thread, so the provider
    refused every one of them: the user has been talking to an error message. This is the failure
    users notice ("the bot stopped answering"), and the one to fix first.

    ## Example
    ```json
    [{"role": "assistant", "tool_calls": [{"id": "call_inv", "type": "function", "function": {"name": "lookup_invoice", "arguments": "{}"}}]},
     {"role": "user", "content": "Hello?? It has been 5 minutes."},
     {"role": "user", "content": "Are you there?"}]
    ```

    ## Use instead
    Record an error output as soon as a call fails or its turn is cancelled, before accepting the
    next user message.

    ## Fix
    Always. `threadfix repair` answers the dangling call, which unblocks the thread.

    The threshold is the `stuck-turns` key of `[tool.threadfix.lint]`.
    """

    code = "TF007"
    name = "stuck-thread"
    severity = Severity.ERROR
    fix = Fix.ALWAYS
    summary = "users kept writing after a call was left unanswered; each turn was refused"
    structural = True

    def check(self, ctx: Context) -> Iterator[Finding]:
        for found in reported_dangling(ctx):
            call = found.call
            turns = sum(1 for turn in ctx.index.user_turns if turn > call.at[0])
            if turns >= ctx.options.stuck_turns:
                yield self.finding(ctx, f"thread stuck since call {call_label(call.call_id, call.name)}: {turns} later "
                                   f"user turn{'s' if turns != 1 else ''} sent with it unanswered, each refused by the provider",
                                   at=call.at, call_id=call.call_id, tool=call.name, kind=found.kind,
                                   fixable=found.fixable, turns=turns)
                return


RULE = StuckThread()
