from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby, islice
from operator import attrgetter, eq
from typing import TYPE_CHECKING, Any

from threadfix.failures import Kind
from threadfix.model import Call, Finding, Severity
from threadfix.rules.base import Rule, label

if TYPE_CHECKING:
    from threadfix.rules.context import Context


class RetryStorm(Rule):
    """The same tool failing several times in a row.

    ## What it does
    Finds runs of consecutive calls to one tool whose outputs are all errors, at least `retry-storm`
    long (default 3; the `retry-storm` key of `[tool.threadfix.lint]`), and reports each run once,
    at its first call, with the kind of its last failure.

    ## Why is this bad?
    The model is retrying blindly: the error did not tell it what to change, or it ignored what it
    was told. Every retry costs a turn, tokens and the tool's own work, and a failing dependency
    (a rate limit, an outage) gets hammered harder.

    ## Example
    Three `search` calls in a row, each answered `{"error": "rate limited"}`.

    ## Use instead
    Make errors say whether and when to retry (a kind, `retry_after`), and cap retries of one tool
    in the agent loop.

    ## Fix
    None: this is agent behaviour, visible only after the fact.
    """

    code = "TF206"
    name = "retry-storm"
    severity = Severity.WARNING
    summary = "one tool failed several times in a row"

    def check(self, ctx: Context) -> Iterator[Finding]:
        wanted = ctx.options.retry_storm
        calls = ctx.index.calls
        if len(calls) < wanted or ctx.fast and not _has_run(calls, wanted):
            return  # no run of one tool's calls is long enough

        def failure(call: Call) -> Any:
            output = ctx.output_of(call)
            return ctx.failure(output) if output is not None else None

        for _, group in groupby(ctx.index.calls, key=attrgetter("name")):
            calls = list(group)
            # A run of `wanted` failures holds one of every `wanted`-th call: probe those, then widen, so
            # healthy threads classify few outputs.
            probe = wanted - 1
            while probe < len(calls):
                if failure(calls[probe]) is None:
                    probe += wanted
                    continue
                start, end = probe, probe + 1
                while start > 0 and failure(calls[start - 1]) is not None:
                    start -= 1
                while end < len(calls) and failure(calls[end]) is not None:
                    end += 1
                if end - start >= wanted:
                    yield self._finding(ctx, calls[start], end - start, failure(calls[end - 1]).kind)
                probe = end + wanted

    def _finding(self, ctx: Context, first: Call, count: int, kind: Kind) -> Finding:
        return self.finding(ctx, f"tool {label(first.name, 'unknown tool')} failed {count} times in a row, from call "
                            f"{label(first.call_id)} (last: {kind})", at=first.at, call_id=first.call_id,
                            tool=first.name, kind=kind, calls=count)


_NAME = attrgetter("name")


def _has_run(calls: tuple[Call, ...], wanted: int) -> bool:
    """Whether ``wanted`` calls in a row name one tool, the run :func:`groupby` must find for the rule to probe anything.

    A byte per neighbouring pair says whether the two names are equal, and ``wanted`` calls in a row of one tool are
    ``wanted - 1`` such bytes in a row: built and searched at C speed, where walking the groups in Python cost more
    than the rule's classifications on a healthy store. ``==`` is what :func:`groupby` compares keys with; a name is
    a string, or a JSON value decoded from a thread, and those answer ``==`` with a bool.
    """
    if wanted <= 1:
        return True
    names = list(map(_NAME, calls))
    try:
        pairs = bytes(map(eq, names, islice(names, 1, None)))
    except (TypeError, ValueError):  # a name whose == is not a bool: walk the groups
        return True
    return b"\x01" * (wanted - 1) in pairs


RULE = RetryStorm()
