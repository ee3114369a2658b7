"""What the structural rules read off the repair plan, so lint reports exactly what repair would act on.

The planner (:func:`threadfix.repair.plan_repair`) already decides, for every call and output, whether
it is dangling, orphaned, misplaced or a duplicate, and which calls it refuses to touch. The rules
TF001–TF007 only name what it found; none of them decides anything on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum, unique
from typing import TYPE_CHECKING

from msgspec import Struct

from threadfix.failures import Kind, explain
from threadfix.model import Action, Call, Edit, Skip

if TYPE_CHECKING:
    from threadfix.dialects import Violation
    from threadfix.rules.context import Context


class Dangling(Struct, frozen=True):
    """A call with no output, why, and whether repair writes one (it cannot for some wire types)."""

    call: Call
    kind: Kind
    #: a :class:`threadfix.failures.Cause` value
    cause: str
    evidence: str
    fixable: bool
    #: why repair leaves it alone, when it does
    note: str | None = None


@unique
class SkipKind(str, Enum):
    NO_ID = "no_id"
    SHARED_ID = "shared_id"
    UNANSWERABLE = "unanswerable"


def edits(ctx: Context, *actions: Action) -> Iterator[Edit]:
    """The planned edits of these actions, in item order."""
    return (edit for edit in ctx.plan.edits if edit.action in actions)


def skip_kind(ctx: Context, skip: Skip) -> tuple[SkipKind, Call]:
    """Why the planner left a call alone, read from the call itself (a Skip carries only prose)."""
    call = next(c for c in ctx.index.calls if c.at == skip.at and c.call_id == skip.call_id and c.name == skip.tool)
    if call.call_id is None:
        return SkipKind.NO_ID, call
    if len(ctx.calls_by_id[call.call_id]) > 1:
        return SkipKind.SHARED_ID, call
    return SkipKind.UNANSWERABLE, call


def skips(ctx: Context, kind: SkipKind) -> Iterator[tuple[Skip, Call]]:
    """The calls the planner left alone for this reason, with its Skip."""
    for skip in ctx.plan.skips:
        found, call = skip_kind(ctx, skip)
        if found is kind:
            yield skip, call


def dangling(ctx: Context) -> list[Dangling]:
    """Every call with no output, in item order: those repair answers and those it cannot."""
    found = [Dangling(edit.call, edit.kind, edit.cause, edit.evidence or "", True)
             for edit in edits(ctx, Action.INSERT_OUTPUT) if edit.call is not None and edit.kind is not None]
    for skip, call in skips(ctx, SkipKind.UNANSWERABLE):
        why = explain(call, ctx.index)
        found.append(Dangling(call, why.kind, why.cause.value, why.evidence, False, skip.reason))
    found.sort(key=lambda d: d.call.at)
    return found


def reported_dangling(ctx: Context) -> list[Dangling]:
    """The dangling calls lint reports: none in a thread changed under ``min_age`` ago, or waiting on a tool left
    to others (they are pending)."""
    found = dangling(ctx)
    return [] if not found or ctx.recent or ctx.waiting else found


def laid_out_anew(ctx: Context, message: int) -> bool:
    """Repair moves blocks within this message to mend its layout (text after a turn's tool calls)."""
    return any(edit.action is Action.MOVE_TEXT and edit.at[0] == message for edit in ctx.plan.edits)


def covers(ctx: Context, violation: Violation) -> bool:
    """Whether a structural finding already reports this provider violation.

    It does when the planner acts on (or refuses) the call the violation names, or refuses a call at
    the violation's item; for a violation that names no call, when the planner acts on an id-less
    output at the same item. Failing
    that, a violation of a kind the repaired thread no longer has was caused by what the plan fixes
    (a Bedrock turn order broken by a missing result, a Gemini part count).
    """
    plan = ctx.plan
    if laid_out_anew(ctx, violation.at):
        return False  # no structural rule reports a turn repair lays out anew: the provider's words do
    if any(s.call_id == violation.call_id or s.at[0] == violation.at for s in plan.skips):
        return True  # a call repair refuses is reported by its own rule, with everything at its item
    if violation.call_id is not None:
        if any(e.call_id == violation.call_id for e in plan.edits):
            return True
    elif any(e.call_id is None and e.at[0] == violation.at for e in plan.edits):
        return True
    return bool(plan.edits) and all(left.rule != violation.rule for left in ctx.residual)
