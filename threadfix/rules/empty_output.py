from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule, call_label

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class EmptyOutput(Rule):
    """A tool output with nothing in it.

    ## What it does
    Finds outputs whose content is missing (`null`), a blank string, or text parts that are all
    blank. An empty list is not reported: for search-like tools it means "no results".

    ## Why is this bad?
    The model cannot tell whether the tool succeeded, failed or never ran, and tends to call it
    again. Some providers also refuse blank text blocks.

    ## Example
    ```json
    {"role": "tool", "tool_call_id": "call_1", "content": ""}
    ```

    ## Use instead
    Say what happened, even when there is no data: `"ok: 0 rows"`, `"created src/app.py"`.

    ## Fix
    None: only the tool knows what it did.
    """

    code = "TF207"
    name = "empty-output"
    severity = Severity.INFO
    summary = "a tool output is empty"
    reads = "blank_led"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for output in ctx.blank_led:  # (the rest cannot hold what this rule finds)
            content = output.content
            if isinstance(content, str) and content and not content[0].isspace():
                continue  # most outputs: text that starts with something to read
            if _blank(content):
                yield self.finding(ctx, f"output of call {call_label(output.call_id, ctx.tool_of(output))} is empty",
                                   at=output.at, call_id=output.call_id, tool=ctx.tool_of(output))


def _blank(content: Any) -> bool:
    if content is None:
        return True
    if isinstance(content, str):
        return not content or content.isspace()  # what ``not content.strip()`` says, without copying the text
    if isinstance(content, list) and content:
        return all(isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text")
                   and not str(part.get("text") or "").strip() for part in content)
    return False


RULE = EmptyOutput()
