from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix.model import Finding, Severity
from threadfix.rules import marks
from threadfix.rules.base import Rule, call_label
from threadfix.secrets import SECRET, mask, may_hold_secret

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class SecretInOutput(Rule):
    """A tool output that holds something shaped like a credential.

    ## What it does
    Finds API keys (OpenAI, Anthropic, AWS, GitHub, Slack, Google), JWTs, PEM private keys and bearer
    tokens in tool outputs: the same patterns threadfix masks wherever it prints thread text. Only
    the first `scan-chars` characters of each output are read (32,768 by default).

    ## Why is this bad?
    The model read the credential, and may repeat it in an answer, a log line or another tool's
    arguments. The stored thread now holds it too, in every backup and export of the store.

    ## Example
    A shell tool that ran `cat .env`, or an HTTP tool that echoed its request headers:
    ```json
    {"role": "tool", "tool_call_id": "call_1", "content": "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345"}
    ```

    ## Use instead
    Filter secrets out of tool outputs before they reach the model, and keep credentials out of the
    tools' reach (environment the tool cannot print, scoped tokens).

    ## Fix
    None: rotate the credential; it has been disclosed. Findings show only its first characters.
    """

    code = "TF205"
    name = "secret-in-output"
    severity = Severity.ERROR
    summary = "a tool output holds a secret-looking token"
    reads = "text_marks"

    def check(self, ctx: Context) -> Iterator[Finding]:
        # one pass per thread for every text rule, then this rule's own test; the regex only where it may match.
        # Without the pass (every output held), one test of all the text at once leaves most threads out.
        if not ctx.text_marks & marks.SECRET or not ctx.texts_scanned and not may_hold_secret(ctx.all_text):
            return
        outputs, texts = ctx.index.outputs, ctx.texts
        for at in ctx.texts_holding(marks.SECRET):  # the outputs the same scan says may hold one
            output, text = outputs[at], texts[at]
            found = SECRET.search(text) if may_hold_secret(text) else None
            if found:
                yield self.finding(ctx, f"output of call {call_label(output.call_id, ctx.tool_of(output))} holds a "
                                   f"secret-looking token ({mask(found)}); rotate it", at=output.at,
                                   call_id=output.call_id, tool=ctx.tool_of(output))


RULE = SecretInOutput()
