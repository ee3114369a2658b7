from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from threadfix import dialects
from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class UnrecognisedFormat(Rule):
    """A thread in no format threadfix knows.

    ## What it does
    Reports threads that no dialect recognised, so no other rule could read them.

    ## Why is this bad?
    Nothing in such a thread was checked: a clean lint run says nothing about it. It is usually a
    store in a format threadfix does not read yet, or a document that is not a thread at all.

    ## Example
    ```json
    {"id": "t1", "messages": [{"speaker": "bot", "said": "hi"}]}
    ```

    ## Use instead
    Pass `--dialect NAME` when the format is one threadfix knows but could not sniff (`threadfix lint
    --help` lists them), or leave such files out of the paths you lint.

    ## Fix
    None.
    """

    code = "TF901"
    name = "unrecognised-format"
    severity = Severity.INFO
    summary = "no known thread format was recognised; nothing else was checked"
    on_unknown_format = True

    def check(self, ctx: Context) -> Iterator[Finding]:
        what = "the thread has no items" if not ctx.items else "no known thread format was recognised"
        yield self.finding(ctx, f"{what}; nothing was checked (pass --dialect, one of: {', '.join(dialects.names())})")


RULE = UnrecognisedFormat()
