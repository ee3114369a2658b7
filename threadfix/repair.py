"""Decide what a thread needs (pure), and lay it in with the thread's dialect.

The planner works on the neutral :class:`~threadfix.model.ThreadIndex` only, so every wire format gets
the same decisions:

* a call with no output gets an error output that says why (from :mod:`threadfix.failures`);
* a real output that stands where its provider will not accept it is moved, never replaced;
* of several outputs for one call, a real one wins over one threadfix wrote, the first real one over
  later ones, and the losers are kept as plain messages (threadfix's own are dropped);
* an output with no call is kept as a plain message naming the call it answered (dropped only when
  asked);
* calls that cannot be told apart (no id, or the same id twice) are refused whole and reported.

Whether a thread may be repaired at all (it may still be in flight) is the caller's policy; the open call
it waits on, when its tool's output comes from someone else, is :func:`waiting_on`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

from msgspec import Struct

from threadfix.dialects import Dialect
from threadfix.failures import aborted_payload, explain
from threadfix.model import Action, Call, Edit, Output, RepairPlan, Skip, ThreadIndex


class RepairOptions(Struct, frozen=True):
    #: drop outputs that have no call instead of keeping them as plain messages
    drop_orphans: bool = False
    #: replace the sentence the model reads in every synthetic output
    reason: str | None = None


def plan_repair(index: ThreadIndex, dialect: Dialect, items: Sequence[Any], options: RepairOptions = RepairOptions()) -> RepairPlan:
    """Every edit ``items`` needs, and every problem left alone with its reason."""
    edits: list[Edit] = []
    skips: list[Skip] = []
    calls_by_id: dict[str, list[Call]] = defaultdict(list)
    for call in index.calls:
        if call.call_id is None:
            skips.append(Skip(None, call.name, call.at, "the call has no id, so no output can be paired with it"))
        else:
            calls_by_id[call.call_id].append(call)
    outputs_by_id: dict[str | None, list[Output]] = defaultdict(list)
    for output in index.outputs:
        outputs_by_id[output.call_id].append(output)

    unpaired: list[Output] = [o for call_id, outs in outputs_by_id.items() if call_id is None or call_id not in calls_by_id
                              for o in outs]
    for call_id, calls in calls_by_id.items():
        if len(calls) > 1:
            for call in calls:
                skips.append(Skip(call_id, call.name, call.at,
                                  f"{len(calls)} calls share this id and cannot be told apart; refused whole"))
            continue
        fitting = [o for o in outputs_by_id.get(call_id, []) if dialect.answers(calls[0], o)]
        unpaired.extend(o for o in outputs_by_id.get(call_id, []) if not dialect.answers(calls[0], o))
        edits.extend(_answer(calls[0], fitting, index, dialect, items, options, skips))

    for output in sorted(unpaired, key=lambda o: o.at):
        action = Action.DROP_ORPHAN if options.drop_orphans else Action.CONVERT_ORPHAN
        edits.append(Edit(action, output.call_id, None, output.at, output=output,
                          evidence="no call in this thread can be answered by it"))
    edits.extend(dialect.layout_edits(index, items))
    edits.sort(key=lambda e: e.at)
    return RepairPlan(tuple(edits), tuple(skips))


def _answer(call: Call, outputs: list[Output], index: ThreadIndex, dialect: Dialect, items: Sequence[Any],
            options: RepairOptions, skips: list[Skip]) -> list[Edit]:
    if not outputs:
        if dialect.is_pending(index, call, items):
            return []
        if call.unanswerable:
            skips.append(Skip(call.call_id, call.name, call.at,
                              f"a {call.wire_type} cannot be answered with an invented output; answer or remove it by hand"))
            return []
        why = explain(call, index)
        return [Edit(Action.INSERT_OUTPUT, call.call_id, call.name, call.at, kind=why.kind, cause=why.cause.value,
                     evidence=why.evidence, call=call, payload=aborted_payload(call, why, options.reason))]
    winner = next((o for o in outputs if not o.by_threadfix), outputs[0])
    edits: list[Edit] = []
    for loser in outputs:
        if loser is winner:
            continue
        if loser.by_threadfix or options.drop_orphans:
            action = Action.DROP_DUPLICATE
        else:
            action = Action.CONVERT_DUPLICATE
        edits.append(Edit(action, call.call_id, call.name, loser.at, output=loser, call=call,
                          evidence="another output answers this call"))
    if not dialect.in_place(index, call, winner, items):
        edits.append(Edit(Action.MOVE_OUTPUT, call.call_id, call.name, winner.at, output=winner, call=call,
                          evidence="the provider requires it elsewhere"))
    return edits


def waiting_on(plan: RepairPlan, leave_tools: Sequence[str]) -> Call | None:
    """The first call the plan would answer whose tool matches a pattern of ``leave_tools`` (``--leave-tool``).

    Such a tool's output comes from a person or another process (an approval, a deferred or external run),
    often hours later, so an open call to it is not a fault: the app resumes the turn with the real output,
    and one written over it would break that resume. The whole thread is left as it is.
    """
    if not leave_tools:
        return None
    return next((edit.call for edit in plan.edits if edit.action is Action.INSERT_OUTPUT and edit.call is not None
                 and any(fnmatchcase(edit.call.name, pattern) for pattern in leave_tools)), None)


def repair_items(items: Sequence[Any], dialect: Dialect, options: RepairOptions = RepairOptions()) -> tuple[RepairPlan, list[Any] | None]:
    """Plan and apply; the new items are None when nothing needs to change."""
    index = dialect.index(items)
    plan = plan_repair(index, dialect, items, options)
    if not plan:
        return plan, None
    return plan, dialect.apply(items, plan)
