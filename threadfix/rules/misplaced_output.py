from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.model import Action, Finding, Severity
from threadfix.rules.base import Fix, Rule, call_label
from threadfix.rules.structure import edits

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class MisplacedOutput(Rule):
    """A tool output that stands where its provider does not accept it.

    ## What it does
    Finds outputs whose call is in the thread but which stand in the wrong place: before their call
    (OpenAI Responses), outside the block of tool messages right after the assistant message that
    made the call (Chat Completions), or not in the leading run of the next user turn (Anthropic).

    ## Why is this bad?
    The provider refuses the thread as if the call had no output at all ("An assistant message with
    'tool_calls' must be followed by tool messages responding to each 'tool_call_id'";
    "tool_result blocks must come first in the user message").

    ## Example
    ```json
    [{"role": "assistant", "tool_calls": [{"id": "call_b7", "type": "function", "function": {"name": "book_room", "arguments": "{}"}}]},
     {"role": "assistant", "content": "Booking now..."},
     {"role": "tool", "tool_call_id": "call_b7", "content": "{\\"booked\\": true}"}]
    ```

    ## Use instead
    Append each output right after its call's turn, as the provider expects, before any other
    message.

    ## Fix
    Always. `threadfix repair` moves the real output where the provider requires it; it never
    replaces it.
    """

    code = "TF003"
    name = "misplaced-output"
    severity = Severity.ERROR
    fix = Fix.ALWAYS
    summary = "a tool output stands where its provider refuses it"
    structural = True

    def check(self, ctx: Context) -> Iterator[Finding]:
        for edit in edits(ctx, Action.MOVE_OUTPUT):
            where = f" (its call is item {edit.call.at[0]})" if edit.call is not None else ""
            yield self.finding(ctx, f"output of call {call_label(edit.call_id, edit.tool)} is out of place: "
                               f"the provider requires it elsewhere{where}",
                               at=edit.at, call_id=edit.call_id, tool=edit.tool, fixable=True)


RULE = MisplacedOutput()
