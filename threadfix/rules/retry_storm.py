from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cache
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
        if len(calls) < wanted:
            return  # no run of one tool's calls is long enough
        runs = _runs(calls, wanted) if ctx.fast else None
        if runs is None:  # every group of one tool's calls in a row, as groupby finds them
            runs = [list(group) for _, group in groupby(calls, key=_NAME)]

        def failure(call: Call) -> Any:
            output = ctx.output_of(call)
            return ctx.failure(output) if output is not None else None

        for calls in runs:
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


def _runs(calls: tuple[Call, ...], wanted: int) -> list[Sequence[Call]] | None:
    """The groups of calls in a row that name one tool, as :func:`groupby` finds them, that are at least ``wanted``
    long (the only ones the rule can find a storm in), in order; None when they cannot be told this way (every group
    is then walked).

    A byte per neighbouring pair says whether the two names are equal, and ``wanted`` calls in a row of one tool are
    ``wanted - 1`` such bytes in a row: built and searched at C speed, where walking every group in Python cost more
    than the rule's classifications on a healthy store. ``==`` is what :func:`groupby` compares keys with; a name is
    a string, or a JSON value decoded from a thread, and those answer ``==`` with a bool, as an equivalence (so a
    neighbour equal to the last name of a group is equal to its first, which groupby compares with).
    """
    if wanted <= 1:
        return None
    names = list(map(_NAME, calls))
    try:
        pairs = bytes(map(eq, names, islice(names, 1, None)))
    except (TypeError, ValueError):  # a name whose == is not a bool: walk the groups
        return None
    if b"\x01" * (wanted - 1) not in pairs:
        return []  # most threads: no run long enough
    return [calls[run.start():run.end() + 1] for run in _run_of(wanted - 1).finditer(pairs)]


@cache
def _run_of(equal_pairs: int) -> re.Pattern[bytes]:
    """At least ``equal_pairs`` neighbouring pairs in a row with equal names."""
    return re.compile(b"\x01{%d,}" % equal_pairs)


RULE = RetryStorm()
