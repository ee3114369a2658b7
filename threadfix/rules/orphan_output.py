from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.model import Action, Finding, Severity
from threadfix.rules.base import Fix, Rule, label, quoted
from threadfix.rules.structure import edits

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class OrphanOutput(Rule):
    """A tool output whose call is not in the thread.

    ## What it does
    Finds outputs that name a call id no call in the thread has (or name none at all), typically
    left behind when an app trims or compacts a long thread and drops the call but not its output.

    ## Why is this bad?
    Providers refuse them: OpenAI Responses says "No tool call found for function call output with
    call_id ...", Chat Completions "messages with role 'tool' must be a response to a preceeding
    message with 'tool_calls'", Anthropic "unexpected `tool_use_id` found in `tool_result` blocks".

    ## Example
    ```json
    [{"type": "message", "role": "user", "content": "Run the tests."},
     {"type": "function_call_output", "call_id": "call_gone", "output": "212 passed"}]
    ```

    ## Use instead
    When trimming a thread, drop a call and its output together, or keep both.

    ## Fix
    Always. `threadfix repair` keeps the output's text as a plain message that names the call it
    answered, so nothing it said is lost (`--drop-orphans` deletes it instead).
    """

    code = "TF002"
    name = "orphan-output"
    severity = Severity.ERROR
    fix = Fix.ALWAYS
    summary = "a tool output answers a call that is not in the thread"
    structural = True

    def check(self, ctx: Context) -> Iterator[Finding]:
        for edit in edits(ctx, Action.CONVERT_ORPHAN, Action.DROP_ORPHAN):
            text = ctx.text(edit.output) if edit.output is not None else ""
            yield self.finding(ctx, f"output for call {label(edit.call_id)} answers no call in this thread: {quoted(text, 60)}",
                               at=edit.at, call_id=edit.call_id, fixable=True, excerpt=text)


RULE = OrphanOutput()
