"""Decide what a thread needs (pure), and lay it in with the thread's dialect.

The planner works on the neutral :class:`~threadfix.model.ThreadIndex` only, so every wire format gets
the same decisions:

* a call with no output gets an error output that says why (from :mod:`threadfix.failures`);
* a real output that stands where its provider will not accept it is moved, never replaced;
* of several outputs for one call, a real one wins over one threadfix wrote, the first real one over
  later ones, and the losers are kept as plain messages (threadfix's own are dropped);
* an output with no call is kept as a plain message naming the call it answered (dropped only when
  asked);
* calls that reuse an id across turns are paired by order (:func:`pair_by_order`); calls that cannot be told
  apart (no id, a blank id, the same id twice in one turn) are refused whole and reported, never in silence;
* a call its format marks as waiting on a person (``Call.waiting``) is left open while it ends its thread.

Whether a thread may be repaired at all (it may still be in flight) is the caller's policy; the open call
it waits on, when its tool's output comes from someone else, is :func:`waiting_on`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Sequence
from fnmatch import fnmatchcase
from itertools import pairwise
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from threadfix.dialects import Dialect
from threadfix.failures import aborted_payload, explain
from threadfix.model import Action, Call, Edit, Loc, Output, RepairPlan, Skip, ThreadIndex


class RepairOptions(Struct, frozen=True):
    #: drop outputs that have no call instead of keeping them as plain messages
    drop_orphans: bool = False
    #: replace the sentence the model reads in every synthetic output
    reason: str | None = None
    #: answer the calls the format marks as waiting (an approval requested, a call deferred) at the end of their
    #: thread too, for the engineer who knows the answer will never come (``--answer-waiting``)
    answer_waiting: bool = False


def plan_repair(index: ThreadIndex, dialect: Dialect, items: Sequence[Any], options: RepairOptions = RepairOptions()) -> RepairPlan:
    """Every edit ``items`` needs, and every problem left alone with its reason."""
    edits: list[Edit] = []
    skips: list[Skip] = []
    answered, unpaired = pair_by_order(index, dialect, skips)
    moved_on = max(index.user_turns, default=-1)
    for call, outputs in answered:
        if call.waiting and (options.answer_waiting or moved_on > call.at[0]):
            call = replace(call, waiting=False)  # asked, or a later user turn moved past it: stuck, not waiting
        edits.extend(_answer(call, outputs, index, dialect, items, options, skips))

    for output in sorted(unpaired, key=lambda o: o.at):
        action = Action.DROP_ORPHAN if options.drop_orphans else Action.CONVERT_ORPHAN
        edits.append(Edit(action, output.call_id, None, output.at, output=output,
                          evidence="no call in this thread can be answered by it"))
    edits.extend(dialect.layout_edits(index, items))
    edits.sort(key=lambda e: e.at)
    skips.sort(key=lambda s: s.at)
    return RepairPlan(tuple(edits), tuple(skips))


def pair_by_order(index: ThreadIndex, dialect: Dialect, skips: list[Skip]) -> tuple[list[tuple[Call, list[Output]]], list[Output]]:
    """Each call with the outputs that answer it, in call order, and the outputs no call can take.

    Where calls repeat an id (providers and OpenAI-compatible servers reuse ids across turns), order pairs
    them, as Pydantic AI does (``_repair_dangling_tool_calls`` in ``pydantic_ai/_agent_graph.py``) and as
    providers pair per turn: an output answers the most recent call with its id before it, so a call that
    reuses an open id leaves the older one dangling (answered where its provider needs it). An output before
    every call with its id answers the first (misplaced, moved). Only calls that share an id *inside one turn*
    (:func:`_one_turn`) cannot be told apart by order: they are refused whole, their outputs left as they are.
    A call with no id, or a blank one, is refused too: no output can name it.
    """
    by_id: dict[str, list[Call]] = defaultdict(list)
    refused: set[str] = set()
    for call in index.calls:
        if call.call_id is None:
            skips.append(Skip(None, call.name, call.at, "the call has no id, so no output can be paired with it"))
        elif not call.call_id.strip():
            skips.append(Skip(call.call_id, call.name, call.at, BLANK_ID))
            refused.add(call.call_id)
        else:
            by_id[call.call_id].append(call)
    outputs_by_id: dict[str | None, list[Output]] = defaultdict(list)
    for output in index.outputs:
        outputs_by_id[output.call_id].append(output)
    # (threadfix's own outputs are no turn's end: the turns are the model's and the user's, as first stored)
    places = sorted(output.at for output in index.outputs if not output.by_threadfix)

    unpaired: list[Output] = [o for call_id, outs in outputs_by_id.items()
                              if call_id is None or (call_id not in by_id and call_id not in refused) for o in outs]
    answered: list[tuple[Call, list[Output]]] = []
    for call_id, calls in by_id.items():
        if any(_one_turn(a, b, index, places) for a, b in pairwise(calls)):
            for call in calls:
                skips.append(Skip(call_id, call.name, call.at,
                                  f"{len(calls)} calls share the id {call_id}, two of them in one turn, so order cannot "
                                  "tell their outputs apart; refused whole"))
            continue
        owned: dict[int, list[Output]] = {id(call): [] for call in calls}
        for output in outputs_by_id.get(call_id, []):
            owner = next((c for c in reversed(calls) if c.at <= output.at), calls[0])
            if dialect.answers(owner, output):
                owned[id(owner)].append(output)
            else:
                unpaired.append(output)
        answered.extend((call, owned[id(call)]) for call in calls)
    answered.sort(key=lambda pair: pair[0].at)
    return answered, unpaired


def _one_turn(a: Call, b: Call, index: ThreadIndex, places: list[Loc]) -> bool:
    """Whether calls ``a`` and ``b`` (in that order) stand in one turn of the model: one message, or nothing
    between them that answers a call or comes from the user (OpenAI Responses' parallel call items, Anthropic's
    assistant messages the API merges). The provider refuses a turn that repeats an id, and no order tells
    which of its calls a later output answers."""
    if a.at[0] == b.at[0]:
        return True
    answered_between = bisect_left(places, a.at) < bisect_left(places, b.at)
    users = index.user_turns  # (in document order: O(log n) per pair, a thread may reuse one id every turn)
    return not answered_between and bisect_right(users, a.at[0]) == bisect_left(users, b.at[0])


#: why a call with a blank id is refused: no provider takes an empty id (Anthropic and Bedrock ids match
#: ``[a-zA-Z0-9_-]+``, OpenAI's are generated and never empty), so an output naming it would be refused too
BLANK_ID = ("the call's id is blank, which providers refuse, so no output can be paired with it; give the call "
            "its id or remove it by hand")
#: why a dangling call that names no tool is refused: the provider refuses the call itself, answered or not
BLANK_NAME = ("the call names no tool, which providers refuse whether it is answered or not; name the tool or "
              "remove the call by hand")


def _answer(call: Call, outputs: list[Output], index: ThreadIndex, dialect: Dialect, items: Sequence[Any],
            options: RepairOptions, skips: list[Skip]) -> list[Edit]:
    if not outputs:
        if dialect.is_pending(index, call, items):
            return []
        if not call.name.strip():
            skips.append(Skip(call.call_id, call.name, call.at, BLANK_NAME))
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


def waiting_on(plan: RepairPlan, leave_tools: Sequence[str] = ()) -> Call | None:
    """The first call the plan would answer that waits on a person or another process: one the format marks as
    waiting at the end of its thread (an approval requested, a call deferred; see each dialect), or one whose tool
    matches a pattern of ``leave_tools`` (``--leave-tool``).

    Such a call's output comes later, often hours later, so it is not a fault: the app resumes the turn with the
    real output, and one written over it would break that resume. The whole thread is left as it is.
    (``RepairOptions.answer_waiting`` plans the marked ones as stuck, so they are not found here.)
    """
    return next((edit.call for edit in plan.edits if edit.action is Action.INSERT_OUTPUT and edit.call is not None
                 and (edit.call.waiting or any(fnmatchcase(edit.call.name, pattern) for pattern in leave_tools))), None)


def waiting_reason(call: Call) -> str:
    """Why a thread is left whole for ``call`` (:func:`waiting_on`), as one line for the user."""
    if call.waiting:
        return (f"its call {call.call_id} to {call.name} waits on a person or another process (its format marks it so) "
                "and ends the thread; --answer-waiting answers it")
    return f"its call {call.call_id} waits on {call.name}, a tool left to others (--leave-tool)"


def id_label(call_id: str | None) -> str:
    """A call id as a message shows it: ``(no id)`` when it has none, quoted when it is blank."""
    if call_id is None:
        return "(no id)"
    return call_id if call_id.strip() else f'"{call_id}"'


def as_written(plan: RepairPlan, saved_outputs: dict[str, str] | None) -> RepairPlan:
    """``plan`` as the store writes it: an error output planned for a call whose own output the store saved apart
    from the thread (:attr:`Thread.saved_outputs`) goes in as that saved output, which is what a repair says."""
    if not saved_outputs:
        return plan
    edits = tuple(replace(edit, action=Action.INSERT_SAVED_OUTPUT, kind=None, cause=None, payload=None,
                          evidence=saved_outputs[edit.call_id])
                  if edit.action is Action.INSERT_OUTPUT and edit.call_id in saved_outputs else edit
                  for edit in plan.edits)
    return replace(plan, edits=edits)


def refusal_reason(plan: RepairPlan) -> str:
    """One line for a thread repair leaves alone because it refuses its calls: the ids and why."""
    reasons: dict[str, list[str]] = defaultdict(list)
    for skip in plan.skips:
        call = id_label(skip.call_id)
        if call not in reasons[skip.reason]:
            reasons[skip.reason].append(call)
    return "; ".join(f"not repaired: call{'s' if len(ids) > 1 else ''} {', '.join(ids)}: {reason}"
                     for reason, ids in reasons.items())


def repair_items(items: Sequence[Any], dialect: Dialect, options: RepairOptions = RepairOptions()) -> tuple[RepairPlan, list[Any] | None]:
    """Plan and apply; the new items are None when nothing needs to change."""
    index = dialect.index(items)
    plan = plan_repair(index, dialect, items, options)
    if not plan:
        return plan, None
    return plan, dialect.apply(items, plan)
