"""What the structural rules read off the repair plan, so lint reports exactly what repair would act on.

The planner (:func:`threadfix.repair.plan_repair`) already decides, for every call and output, whether
it is dangling, orphaned, misplaced or a duplicate, and which calls it refuses to touch. The rules
TF001–TF007 only name what it found; none of them decides anything on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum, unique
from typing import TYPE_CHECKING

from threadfix.failures import Kind, explain
from threadfix.model import Action, Call, Edit, Skip

if TYPE_CHECKING:
    from threadfix.dialects import Violation
    from threadfix.lint import Context


@dataclass(frozen=True, slots=True)
class Dangling:
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
    call = next(c for c in ctx.index.calls if c.at == skip.at and c.call_id == skip.call_id)
    if call.call_id is None:
        return SkipKind.NO_ID, call
    if len(ctx.calls_by_id[call.call_id]) > 1:
        return SkipKind.SHARED_ID, call
    return SkipKind.UNANSWERABLE, call


def skips(ctx: Context, kind: SkipKind) -> Iterator[tuple[Skip, Call]]:
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


def covers(ctx: Context, violation: Violation) -> bool:
    """Whether a structural finding already reports this provider violation.

    A violation naming a call id is covered when the planner acts on (or refuses) that id; one without
    an id, when the planner acts on an id-less call or output at the same item.
    """
    plan = ctx.plan
    if violation.call_id is not None:
        return any(e.call_id == violation.call_id for e in plan.edits) or any(
            s.call_id == violation.call_id for s in plan.skips)
    at = violation.at
    return any(e.call_id is None and e.at[0] == at for e in plan.edits) or any(
        s.call_id is None and s.at[0] == at for s in plan.skips)
