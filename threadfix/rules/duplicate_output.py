from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.model import Action, Finding, Severity
from threadfix.rules.base import Fix, Rule, call_label
from threadfix.rules.structure import edits

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class DuplicateOutput(Rule):
    """A call answered by more than one output.

    ## What it does
    Finds every output after the first that answers the same call (a retried tool whose first
    result was also kept, or a threadfix output next to a real one that arrived later).

    ## Why is this bad?
    Chat Completions refuses "Duplicate value for 'tool_call_id'", Anthropic "each tool_use must have
    a single result". Where a provider accepts it, the model reads two answers to one question and
    may act on the wrong one.

    ## Example
    ```json
    [{"role": "assistant", "tool_calls": [{"id": "call_s1", "type": "function", "function": {"name": "search_docs", "arguments": "{}"}}]},
     {"role": "tool", "tool_call_id": "call_s1", "content": "Rate limits are per key."},
     {"role": "tool", "tool_call_id": "call_s1", "content": "Rate limits are per key (retry)."}]
    ```

    ## Use instead
    Record one output per call: replace a retried call's output instead of appending another.

    ## Fix
    Always. `threadfix repair` keeps the first real output; the others are kept as plain messages
    naming the call (an extra output threadfix wrote itself is dropped).
    """

    code = "TF004"
    name = "duplicate-output"
    severity = Severity.ERROR
    fix = Fix.ALWAYS
    summary = "a call is answered by more than one output"
    structural = True

    def check(self, ctx: Context) -> Iterator[Finding]:
        for edit in edits(ctx, Action.CONVERT_DUPLICATE, Action.DROP_DUPLICATE):
            whose = " (written by threadfix; a real one arrived too)" if edit.output is not None and edit.output.by_threadfix else ""
            yield self.finding(ctx, f"call {call_label(edit.call_id, edit.tool)} already has an output; this one is extra{whose}",
                               at=edit.at, call_id=edit.call_id, tool=edit.tool, fixable=True)


RULE = DuplicateOutput()
