from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from threadfix.model import Finding, Severity
from threadfix.rules.base import Rule, call_label

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class OversizedOutput(Rule):
    """A tool output larger than the configured limit.

    ## What it does
    Finds outputs whose text (all strings inside them, UTF-8) is larger than `oversized-bytes`
    (default 100,000 bytes; `--oversized-bytes` or the `oversized-bytes` key of
    `[tool.threadfix.lint]`).

    ## Why is this bad?
    The whole output is sent again with every later turn: it costs tokens on each, pushes earlier
    context out of the window, and can make the thread exceed the model's context limit, after which
    every request fails. Models also follow instructions hidden deep in large outputs poorly.

    ## Example
    A `read_file` tool that returns a 2 MB log file whole.

    ## Use instead
    Cap tool outputs (head and tail with a marker in between), paginate, or store large results
    elsewhere and return a reference and a summary.

    ## Fix
    None: what to keep of a large output is the tool's decision.
    """

    code = "TF203"
    name = "oversized-output"
    severity = Severity.WARNING
    summary = "a tool output is larger than oversized-bytes"
    reads = "unsized"

    def check(self, ctx: Context) -> Iterator[Finding]:
        limit = ctx.options.oversized_bytes
        for output in ctx.unsized:  # (the rest cannot be that large)
            content = output.content
            if isinstance(content, str) and 4 * len(content) <= limit:
                continue  # at most 4 bytes a character: most outputs are settled by their length alone
            size = utf8_size(content, limit)
            if size > limit:
                yield self.finding(ctx, f"output of call {call_label(output.call_id, ctx.tool_of(output))} is "
                                   f"{size:,} bytes, over the {limit:,}-byte limit", at=output.at,
                                   call_id=output.call_id, tool=ctx.tool_of(output), size=size)


def utf8_size(value: Any, limit: int) -> int:
    """The UTF-8 size of every string in ``value``: exact when it may exceed ``limit``, else an upper bound.

    ``str.isascii`` is free in CPython and a character takes at most 4 bytes, so strings are only
    encoded when the bound alone cannot settle the question.
    """
    if isinstance(value, str):  # most outputs
        return len(value) if value.isascii() else _exact(value) if 4 * len(value) > limit else 4 * len(value)
    bound = _strings(value, _upper)
    return bound if bound <= limit else _strings(value, _exact)


def _upper(text: str) -> int:
    return len(text) if text.isascii() else 4 * len(text)


def _exact(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _strings(value: Any, measure: Callable[[str], int]) -> int:
    """The sum of ``measure`` over every string in ``value`` (iterative: stored JSON nests deeper than Python's stack)."""
    total = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            total += measure(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return total


RULE = OversizedOutput()
