from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.model import Finding, Severity
from threadfix.rules.base import Fix, Rule, call_label
from threadfix.rules.structure import reported_dangling

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class DanglingCall(Rule):
    """A tool call with no output.

    ## What it does
    Finds tool calls that no output answers anywhere in the thread, and says why the output is
    missing, from what the thread itself shows: the turn was cut off mid-call (truncated), the
    arguments never parsed (malformed_arguments), or the call never returned (aborted) because the
    user moved on, the turn went on without it, or the thread ends on it.

    Calls in a thread changed less than `--min-age` ago are pending, not dangling: their tool may
    still be running, so they are not reported. So are those of a thread with an open call to a tool
    named by `--leave-tool` (one whose output comes from a person or another process, such as an
    approval): the thread is waiting, not broken.

    ## Why is this bad?
    Every provider refuses a thread with an unanswered call. OpenAI answers every later turn with
    "No tool output found for function call call_x", Anthropic with "tool_use ids were found without
    tool_result blocks immediately after". The chat cannot go on until the call has an output.

    ## Example
    ```json
    [{"type": "message", "role": "user", "content": "Why is CI red?"},
     {"type": "function_call", "call_id": "call_x", "name": "shell", "arguments": "{\\"cmd\\": \\"gh run view\\"}"}]
    ```

    ## Use instead
    Record an output for every call, including when the tool fails, times out or the turn is
    cancelled: an error output the model can read is what lets the thread continue.
    ```json
    {"type": "function_call_output", "call_id": "call_x", "output": "{\\"error\\": {\\"kind\\": \\"cancelled\\"}}"}
    ```

    ## Fix
    Sometimes. `threadfix repair` writes an error output in the provider's exact shape, saying why the
    call did not finish; where the store kept the tool's own output apart from the thread (a LangGraph
    pending write), it puts that output in instead, and the finding says so. It cannot for calls whose wire type needs real data (an OpenAI
    `computer_call` needs a screenshot); those are reported as not fixable.
    """

    code = "TF001"
    name = "dangling-call"
    severity = Severity.ERROR
    fix = Fix.SOMETIMES
    summary = "a tool call has no output; the provider refuses every later turn"
    structural = True

    def check(self, ctx: Context) -> Iterator[Finding]:
        for found in reported_dangling(ctx):
            call = found.call
            saved = (ctx.thread.saved_outputs or {}).get(call.call_id) if found.fixable else None
            if saved:  # repair puts in the tool's own output, kept by the store apart from the thread
                message = f"call {call_label(call.call_id, call.name)} has no output in the thread; fixable: its output was saved ({saved})"
            else:
                message = f"call {call_label(call.call_id, call.name)} has no output: {found.kind}, {found.evidence}"
            if found.note:
                message += f"; {found.note}"
            yield self.finding(ctx, message, at=call.at, call_id=call.call_id, tool=call.name, kind=found.kind,
                               fixable=found.fixable, cause=found.cause)


RULE = DanglingCall()
