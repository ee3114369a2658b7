"""The dialect interface, and the two ways a repair plan is laid into a thread.

A dialect knows one wire format: how to recognise it, where its calls and outputs are, the rule its
provider enforces about where an output must sit, and how to write an output in that provider's exact
shape. Everything else (deciding what is wrong and what to do) is shared and lives in
:mod:`threadfix.repair`.

Formats come in two families, and each family has one applier here:

* **flat** (OpenAI Responses, OpenAI Chat, LangChain): every call or output is an item of the list.
* **blocks** (Anthropic, Bedrock, Gemini, Pydantic AI): calls and outputs are blocks inside messages.

Appliers never mutate their input. Every item they do not change is passed through *by identity*, so
stores can copy its original bytes instead of re-serialising it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from typing import Any, ClassVar

from msgspec import Struct
from msgspec.structs import replace

from threadfix.model import Action, Call, Edit, Loc, Output, RepairPlan, ThreadIndex

#: Actions that take an output out of where it stands.
REMOVING = frozenset({Action.MOVE_OUTPUT, Action.DROP_ORPHAN, Action.DROP_DUPLICATE})
CONVERTING = frozenset({Action.CONVERT_ORPHAN, Action.CONVERT_DUPLICATE})
ANSWERING = frozenset({Action.INSERT_OUTPUT, Action.MOVE_OUTPUT})
#: edits that mend a turn's layout, laid in before the others (:func:`lay_out`)
LAYOUT = frozenset({Action.MOVE_TEXT, Action.CONVERT_CALL})


class Violation(Struct, frozen=True):
    """One reason a provider would refuse the thread, worded as the provider words it."""

    rule: str
    at: int
    message: str
    call_id: str | None = None


class Dialect(ABC):
    """One wire format. Subclasses are stateless singletons registered by name."""

    name: ClassVar[str]
    #: a short description for ``--help`` and docs
    title: ClassVar[str]

    @abstractmethod
    def sniff(self, items: Sequence[Any]) -> int:
        """How sure we are that ``items`` are in this format: 0 = not at all, 100 = certain."""

    @abstractmethod
    def index(self, items: Sequence[Any]) -> ThreadIndex:
        """Every call and output, in document order."""

    @abstractmethod
    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        """Whether ``output`` stands where this provider requires the answer to ``call``."""

    @abstractmethod
    def check(self, items: Sequence[Any]) -> list[Violation]:
        """Every violation of the provider's tool-call rules, in document order (the oracle)."""

    @abstractmethod
    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        """The repaired items; untouched items by identity."""

    def quick_healthy(self, items: Sequence[Any]) -> bool:
        """A cheap, sound pre-check: True only when the thread certainly needs no repair.

        Most stored threads are healthy; deciding that without building an index keeps a scan close
        to the cost of parsing. False means "look closer", never "broken".
        """
        return False

    def quick_accepted(self, items: Sequence[Any]) -> bool:
        """A cheap, sound pre-check for lint and report: True only when the thread needs no repair
        (as :meth:`quick_healthy`) *and* the provider accepts it (``check(items) == []``).

        Property-tested for every dialect that implements it; False means "run the full check".
        """
        return False

    def answers(self, call: Call, output: Output) -> bool:
        """Whether ``output`` is of a type that can answer ``call`` at all (same id is not always enough)."""
        return True

    def is_pending(self, index: ThreadIndex, call: Call, items: Sequence[Any]) -> bool:
        """A call the provider itself may still be answering (not a fault yet)."""
        return False

    def layout_edits(self, index: ThreadIndex, items: Sequence[Any]) -> list[Edit]:
        """The edits that mend what the provider refuses in how a turn is laid out, beyond calls and outputs
        (Anthropic: text after a turn's tool calls). A layout they cannot mend stays a violation of ``check``."""
        return []

    def screen(self) -> Screen | None:
        """How repair settles a whole thread document of this dialect from a few of its fields (see
        :class:`Screen`); None when it has none."""
        return None


class Screen(Struct, frozen=True):
    """A dialect's screen: the msgspec type of one item, holding only the fields that decide whether a thread
    needs repair (msgspec skips the rest of each item in C), and ``settles``, which decides over the decoded
    items. :mod:`threadfix.stores.settle` decodes documents with it.

    ``settles(items)`` is True only for a thread that the full read would (a) sniff as this dialect, whatever
    other dialects say of it, so a screened store never settles a thread as the wrong format, and (b) find
    nothing in: ``quick_healthy`` true, and a plan with no edit and no refusal. False: (a) holds, (b) does not
    (a stuck thread: read it in full). None: (a) is not certain (another dialect's screen may be tried). Fields
    that must be absent for (a) are typed ``UnsetType``, so an item holding one fails to decode.

    Text a screen must know is a string (Chat's and LangChain's content, Anthropic's string content) is decoded
    as one, not deferred as ``msgspec.Raw``: msgspec skips a string byte by byte at about the cost of building
    it, so a Raw saves only the string object (on 1,000 Chat files, 179 M instructions of decoding down to
    149 M), and telling afterwards that the Raw is a string, a step per message in Python, cost more than twice
    that (the rule, 101 M up to 175 M; issue #28).
    """

    item: Any
    settles: Callable[[list[Any]], bool | None]


def screen_struct(name: str, fields: list[Any], **options: Any) -> type:
    """A msgspec type of a screen (``defstruct`` with ``options``): frozen, and not tracked by the garbage collector.

    A screen decodes every item of every thread it is shown into these, and what JSON decodes into holds no
    reference cycle, so tracking them only had each collection walk them all again (a fiftieth of a folder repair's
    instructions, issue #28)."""
    from msgspec import defstruct

    return defstruct(name, fields, **{"frozen": True, **options, "gc": False})


def absent(*keys: str) -> list[tuple[str, Any, Any]]:
    """Screen fields for keys an item must not hold: typed ``UnsetType``, any value fails to decode."""
    from msgspec import UNSET, UnsetType

    return [(key, UnsetType, UNSET) for key in keys]


def usable_ids(ids: Iterable[str]) -> bool:
    """Whether no id among ``ids`` (strings) is blank: repair refuses a call with a blank id (``BLANK_ID``)."""
    return all(map(str.strip, ids))


def blank_id(value: Any) -> bool:
    """Whether a call's id is a blank string: the planner refuses such a call (``BLANK_ID``), so a quick check
    that let it through would call a thread healthy that repair refuses (issue #28)."""
    return isinstance(value, str) and not value.strip()


def answered_in_blocks(items: Sequence[Any], outputs: frozenset[str], callers: frozenset[str],
                       calls_of: Callable[[Any], Any] | None = None) -> bool:
    """The screens' :class:`ToolBlocks` rule (OpenAI Chat, LangChain): each message's calls answered by the run of
    outputs right after it, one per id, and no other output; every id a non-blank string no other call uses.

    A screen's item has ``sender`` (its role or type), ``tool_call_id`` and ``tool_calls``: an item whose sender is
    in ``outputs`` is an output naming ``tool_call_id``; one whose sender is in ``callers`` carries the calls
    ``calls_of(item)`` gives (default: its ``tool_calls``), each with an ``id``, or none; every other item calls
    nothing. The fields are read in this loop, not through a function per item: a call per message was a third of
    the rule's instructions on the benchmark's Chat folder (issue #28). Stricter than the planner (an id reused in
    another turn is read in full)."""
    seen: set[Any] = set()
    wanted: set[Any] | None = None  # the ids of the block being answered, not yet answered
    for item in items:
        sender = item.sender
        if sender in outputs:
            if not wanted:
                return False  # an output no call's block holds
            try:
                wanted.remove(item.tool_call_id)
            except KeyError:
                return False  # an output of no call of its block, or a second one
            continue
        if wanted:
            return False  # a call its block left unanswered
        if sender in callers and (calls := item.tool_calls if calls_of is None else calls_of(item)):
            ids = [call.id for call in calls]
            wanted = set(ids)
            if len(wanted) != len(ids) or not wanted.isdisjoint(seen):
                return False
            seen |= wanted
    if wanted:
        return False
    return usable_ids(seen)


# --------------------------------------------------------------------------- shared helpers


def text_of(value: Any, limit: int = 4000) -> str:
    """Flatten an output's content (string, parts, dict) into text for a converted message."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, list):
        parts = [text_of(part, limit) for part in value]
        return "\n".join(part for part in parts if part)[:limit]
    if isinstance(value, dict):
        for key in ("text", "output", "content", "result", "error"):
            if key in value and value[key] is not None:
                return text_of(value[key], limit)
        import orjson

        try:
            return orjson.dumps(value).decode()[:limit]
        except (TypeError, orjson.JSONEncodeError):
            return ""
    return "" if value is None else str(value)[:limit]


def str_under(value: Any, key: str) -> str | None:
    """``value[key]`` when ``value`` is an object holding a string there, else None."""
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def each_answered_once(calls: Iterable[tuple[Any, bool]]) -> bool:
    """Whether every ``(call id, answered)`` is answered and has a string id no other call uses: the quick
    check of the formats whose calls carry their own outputs (nothing else can be wrong with them)."""
    seen: set[str] = set()
    for call_id, answered in calls:
        if not answered or not isinstance(call_id, str) or call_id in seen or not call_id.strip():
            return False
        seen.add(call_id)
    return True


def index_in_place(items: Sequence[Any], role_of: Callable[[Any], str | None],
                   tool_parts: Callable[[Any], Iterable[tuple[int, Any]]],
                   read: Callable[[Any, Loc], tuple[Call, Output | None]]) -> ThreadIndex:
    """The index of a format whose calls carry their own outputs (AI SDK 4 and 5): ``read`` makes each tool part
    a call, and its output too once it is answered, at the same place. An answered part without an id is left
    out: there is nothing to pair and nothing to do."""
    calls: list[Call] = []
    outputs: list[Output] = []
    users: list[int] = []
    models: list[int] = []
    for m, message in enumerate(items):
        role = role_of(message)
        if role == "user":
            users.append(m)
        elif role == "assistant":
            models.append(m)
        for p, part in tool_parts(message):
            call, output = read(part, (m, p))
            if output is not None:
                if call.call_id is None:
                    continue
                outputs.append(output)
            calls.append(call)
    return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items))


def list_under(value: Any, key: str) -> list[Any]:
    """``value[key]`` when ``value`` is an object holding a list there, else ``[]`` (hostile input reads as empty)."""
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, list) else []


def orphan_text(output: Output, duplicate: bool) -> str:
    """The words a converted orphan or duplicate output carries, so nothing it said is lost."""
    what = "a second output" if duplicate else "the output"
    why = "which already has an output" if duplicate else "whose call is not in this thread"
    call = output.call_id if output.call_id is not None else "(no id)"
    return f"[threadfix] This was {what} of tool call {call}, {why}: {text_of(output.content, 100_000)}"


def answers_by_anchor(plan: RepairPlan, anchor: Callable[[Edit], Any]) -> dict[Any, list[Edit]]:
    """Group the edits that answer a call by where their answer goes, in call order."""
    grouped: dict[Any, list[Edit]] = defaultdict(list)
    for edit in sorted((e for e in plan.edits if e.action in ANSWERING), key=lambda e: e.call.at if e.call else (0, 0)):
        grouped[anchor(edit)].append(edit)
    return grouped


def text_after_calls(items: Sequence[Any], *, blocks_of: Callable[[Any], list[Any] | None], kind_of: Callable[[Any], Any],
                     call_kind: str, reorderable: frozenset[Any],
                     label: Callable[[Any], tuple[str | None, str | None]]) -> list[Edit]:
    """A ``move_text`` edit for each model message whose text follows its tool calls, which Anthropic refuses
    (``tool_use`` must end the turn), in a message of text and calls only (``reorderable``): thinking must stay
    as the model wrote it, so a message with any other block is left for lint. ``blocks_of`` gives a model
    message's blocks (None for any other message); ``label`` the (id, name) of a call block."""
    edits: list[Edit] = []
    for m, message in enumerate(items):
        content = blocks_of(message)
        if not content:
            continue
        kinds = [kind_of(block) for block in content]
        if call_kind not in kinds or not set(kinds) <= reorderable:
            continue
        last = max(b for b, kind in enumerate(kinds) if kind == call_kind)
        if last + 1 < len(content):  # (only text can follow)
            call_id, name = label(content[kinds.index(call_kind)])
            edits.append(Edit(Action.MOVE_TEXT, call_id, name, (m, last + 1),
                              evidence="the provider refuses text after a turn's tool calls"))
    return edits


def calls_in_user_turns(items: Sequence[Any], *, user_blocks: Callable[[Any], list[Any] | None],
                        call_of: Callable[[Any], tuple[str | None, str | None] | None]) -> list[Edit]:
    """A ``convert_call`` edit for each tool call block in a user message, which the provider refuses (a call is the
    model's; goose's conversation fix removes such blocks). It is kept as text that says what it was, where it
    stood, so nothing is lost; a result that answered it then has no call and is kept as text too."""
    edits: list[Edit] = []
    for m, message in enumerate(items):
        for b, block in enumerate(user_blocks(message) or ()):
            found = call_of(block)
            if found is not None:
                edits.append(Edit(Action.CONVERT_CALL, found[0], found[1], (m, b),
                                  evidence="the provider refuses a tool call in a user message"))
    return edits


def call_text(call_id: str | None, name: str | None, arguments: Any) -> str:
    """The words a tool call kept as text carries."""
    import orjson

    try:
        args = orjson.dumps(arguments).decode()
    except (TypeError, orjson.JSONEncodeError):
        args = str(arguments)
    return (f"[threadfix] A tool call stood here in a user message, where the provider refuses it: "
            f"{name or 'unknown'} (id {call_id if call_id is not None else '(no id)'}) with {args[:100_000]}")


def text_first(content: list[Any], kind_of: Callable[[Any], Any], call_kind: str) -> list[Any]:
    """``content`` with the blocks after its last call moved ahead of its first (``move_text``)."""
    calls = [b for b, block in enumerate(content) if kind_of(block) == call_kind]
    first, last = calls[0], calls[-1]
    return [*content[:first], *content[last + 1:], *content[first:last + 1]]


def lay_out(items: Sequence[Any], plan: RepairPlan, *, content_key: str, kind_of: Callable[[Any], Any],
            call_kind: str, as_text: Callable[[Any], Any] | None = None) -> tuple[Sequence[Any], RepairPlan]:
    """Lay in the plan's layout edits first, and give the plan without them: ``move_text`` (the blocks after a
    message's last call go ahead of its first) and ``convert_call`` (a call block replaced by ``as_text`` of it).
    No message or call changes place, so the other edits' places still hold."""
    moved = {edit.at[0] for edit in plan.edits if edit.action is Action.MOVE_TEXT}
    turned = {edit.at for edit in plan.edits if edit.action is Action.CONVERT_CALL}
    if not moved and not turned:
        return items, plan

    def laid(m: int, message: Any) -> Any:
        if m in moved:
            message = {**message, content_key: text_first(message[content_key], kind_of, call_kind)}
        if as_text is not None and any(at[0] == m for at in turned):
            message = {**message, content_key: [as_text(block) if (m, b) in turned else block
                                                for b, block in enumerate(message[content_key])]}
        return message

    items = [laid(m, message) for m, message in enumerate(items)]
    return items, replace(plan, edits=tuple(edit for edit in plan.edits if edit.action not in LAYOUT))


# --------------------------------------------------------------------------- flat family


def apply_flat(
    items: Sequence[Any],
    plan: RepairPlan,
    *,
    anchor: Callable[[Call], int],
    build: Callable[[Edit], Any],
    convert: Callable[[Edit, Any], Any],
    defer: Callable[[int], int | None] = lambda index: None,
) -> list[Any]:
    """Lay a plan into a flat list of items.

    ``anchor(call)`` is the index after which the call's answer goes; ``build`` makes a synthetic
    output item; ``convert`` turns an orphan or duplicate output into a plain message; ``defer(i)``
    says where a converted item at ``i`` must go instead of in place (a Chat tool block must not be
    split by a user message), or None to keep it in place.
    """
    removed: set[int] = set()
    replaced: dict[int, Any] = {}
    after: dict[int, list[Any]] = defaultdict(list)
    for edit in plan.edits:
        if edit.output is None:
            continue
        where = edit.output.at[0]
        if edit.action in REMOVING:
            removed.add(where)
        elif edit.action in CONVERTING:
            target = defer(where)
            if target is None:
                replaced[where] = convert(edit, items[where])
            else:
                removed.add(where)
                after[target].append(convert(edit, items[where]))
    answers = answers_by_anchor(plan, lambda e: anchor(e.call))
    result: list[Any] = []
    for i, item in enumerate(items):
        if i not in removed:
            result.append(replaced.get(i, item))
        for edit in answers.get(i, ()):
            result.append(items[edit.output.at[0]] if edit.action is Action.MOVE_OUTPUT else build(edit))
        result.extend(after.get(i, ()))
    return result


class ToolBlocks(Struct, frozen=True):
    """The block rule of flat formats where a message's calls are answered by the run of output items
    right after it, in any order, with nothing in between (OpenAI Chat; LangChain, whose chat models
    send that shape to OpenAI).

    ``call_ids(item)`` lists the ids of the calls an item makes (empty for any other item);
    ``output_id(item)`` is the call id an output item names.
    """

    is_output: Callable[[Any], bool]
    call_ids: Callable[[Any], list[Any]]
    output_id: Callable[[Any], Any]

    def owner(self, items: Sequence[Any], i: int) -> int | None:
        """The calling item whose block holds output ``i``, if ``i`` sits in one."""
        if not self.is_output(items[i]):
            return None
        j = i - 1
        while j >= 0 and self.is_output(items[j]):
            j -= 1
        return j if j >= 0 and self.call_ids(items[j]) else None

    def end(self, items: Sequence[Any], owner: int) -> int:
        """The last index of the block after item ``owner`` (``owner`` when the block is empty)."""
        end = owner
        while end + 1 < len(items) and self.is_output(items[end + 1]):
            end += 1
        return end

    def in_place(self, call: Call, output: Output, items: Sequence[Any]) -> bool:
        return self.owner(items, output.at[0]) == call.at[0]

    def violations(self, items: Sequence[Any]) -> list[Violation]:
        """Every breach of the block rule, worded as OpenAI Chat Completions words it.

        An id that is not a string is no id (the provider refuses it on its schema first)."""
        violations: list[Violation] = []
        i = 0
        while i < len(items):
            if self.is_output(items[i]):
                violations.append(Violation(
                    "tool-without-call", i,
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                    "with 'tool_calls'.", str_or_none(self.output_id(items[i]))))
                i += 1
                continue
            wanted = [str_or_none(c) for c in self.call_ids(items[i])]
            if not wanted:
                i += 1
                continue
            for call_id in dict.fromkeys(c for c in wanted if wanted.count(c) > 1):
                # OpenAI refuses an id twice among one message's tool_calls; its words for that are not on record
                # apart from the same two-tool-messages error for one message, which DeepSeek's servers give too
                violations.append(Violation(
                    "duplicate-call-id", i, f"Invalid parameter: Duplicate value for 'tool_call_id' of '{call_id}' "
                    f"in messages[{i}].", call_id))
            seen: dict[Any, int] = {}
            j = i + 1
            while j < len(items) and self.is_output(items[j]):
                call_id = str_or_none(self.output_id(items[j]))
                if call_id not in wanted:
                    violations.append(Violation(
                        "unknown-tool-call-id", j,
                        f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of previous "
                        "message.", call_id))
                elif call_id in seen:
                    violations.append(Violation(
                        "duplicate-tool-call-id", j,
                        f"Invalid parameter: Duplicate value for 'tool_call_id' of '{call_id}', in "
                        f"messages[{seen[call_id]}] and messages[{j}].", call_id))
                else:
                    seen[call_id] = j
                j += 1
            missing = [str(c) for c in wanted if c not in seen]
            if missing:
                violations.append(Violation(
                    "missing-tool-messages", i,
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                    f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(missing)}",
                    missing[0]))
            i = j
        return violations

    def apply(self, items: Sequence[Any], plan: RepairPlan, *, build: Callable[[Edit], Any],
              convert: Callable[[Edit, Any], Any]) -> list[Any]:
        """Answers go at the end of their call's block; a converted output inside a block moves after it."""
        def defer(i: int) -> int | None:
            owner = self.owner(items, i)
            return None if owner is None else self.end(items, owner)

        return apply_flat(items, plan, anchor=lambda call: self.end(items, call.at[0]), build=build, convert=convert,
                          defer=defer)


def str_or_none(value: Any) -> str | None:
    """A wire value that must be a string (an id, a name), or None when it is anything else."""
    return value if isinstance(value, str) else None


# --------------------------------------------------------------------------- blocks family


class Slot(Struct, frozen=True):
    """Where a call's answer goes in a blocks-family thread.

    ``into``: append to message ``message`` at the end of its leading run of results.
    ``before``: a new message inserted before index ``message`` (``len(items)`` = at the end).
    ``after_block``: right after block ``block`` of message ``message`` (server tools).
    """

    how: str
    message: int
    block: int = -1


def apply_blocks(
    items: Sequence[Any],
    plan: RepairPlan,
    *,
    content_key: str,
    slot: Callable[[Call], Slot],
    build: Callable[[Edit], Any],
    convert: Callable[[Edit, Any], Any],
    is_result: Callable[[Any], bool],
    new_message: Callable[[list[Any]], Any],
    blocks_of: Callable[[Any], list[Any] | None] | None = None,
) -> list[Any]:
    """Lay a plan into a thread whose calls and outputs are blocks inside messages.

    Messages whose blocks change are shallow-copied with a new block list; a message left with no
    blocks by a move is removed (it held nothing else). ``blocks_of`` reads a message's block list
    (default: ``message[content_key]`` when it is a list).
    """
    blocks_of = blocks_of or (lambda message: message.get(content_key) if isinstance(message.get(content_key), list) else None)
    removed: dict[int, set[int]] = defaultdict(set)
    converted: dict[int, dict[int, Any]] = defaultdict(dict)
    for edit in plan.edits:
        if edit.output is None:
            continue
        m, b = edit.output.at
        if edit.action in REMOVING or edit.action in CONVERTING:
            removed[m].add(b)
        if edit.action in CONVERTING:
            converted[m][b] = convert(edit, blocks_of(items[m])[b])

    into: dict[int, list[Any]] = defaultdict(list)
    before: dict[int, list[Any]] = defaultdict(list)
    after_block: dict[tuple[int, int], list[Any]] = defaultdict(list)
    for edit in sorted((e for e in plan.edits if e.action in ANSWERING), key=lambda e: e.call.at):
        block = blocks_of(items[edit.output.at[0]])[edit.output.at[1]] if edit.action is Action.MOVE_OUTPUT else build(edit)
        where = slot(edit.call)
        if where.how == "into":
            into[where.message].append(block)
        elif where.how == "after_block":
            after_block[(where.message, where.block)].append(block)
        else:
            before[where.message].append(block)

    touched = set(removed) | set(converted) | set(into) | {m for m, _ in after_block}
    result: list[Any] = []
    for i, message in enumerate(items):
        if before.get(i):
            result.append(new_message(before[i]))
        if i not in touched:
            result.append(message)
            continue
        blocks = blocks_of(message) or []
        kept: list[Any] = []
        #: each converted output with the place it had among the kept blocks, to keep the message's order
        placed: list[tuple[int, Any]] = []
        for b, block in enumerate(blocks):
            if b in converted.get(i, {}):
                placed.append((len(kept), converted[i][b]))
            elif b not in removed.get(i, ()):
                kept.append(block)
            kept.extend(after_block.get((i, b), ()))
        lead = _leading_run(kept, is_result)
        # a converted output inside the leading run of results goes right after it (a result may not follow
        # it); one after the run stays where it stood, after the text that came before it
        early = [block for at, block in placed if at <= lead]
        late = [(at, block) for at, block in placed if at > lead]
        for at, block in reversed(late):
            kept.insert(at, block)
        kept[lead:lead] = into.get(i, []) + early
        if not kept and removed.get(i):
            continue  # the message held only outputs that moved away
        copy = dict(message)
        copy[content_key] = kept
        result.append(copy)
    if before.get(len(items)):
        result.append(new_message(before[len(items)]))
    return result


def _leading_run(blocks: Sequence[Any], is_result: Callable[[Any], bool]) -> int:
    run = 0
    while run < len(blocks) and is_result(blocks[run]):
        run += 1
    return run


def join_clashing(
    original: Sequence[Any],
    result: list[Any],
    *,
    role_of: Callable[[Any], Any],
    roles: frozenset[str],
    content_key: str,
) -> list[Any]:
    """Join two messages of one role that a repair left side by side, for formats with strict turn order.

    :func:`apply_blocks` drops a message that a move emptied. Where roles must alternate (Bedrock
    Converse) or a call turn must follow a user turn (Gemini), the messages on either side of the
    dropped one then clash; they are joined into one (the first's keys, then both block lists), which
    is what Anthropic's API does implicitly. Messages that already stood side by side in ``original``
    (same objects, untouched) are left alone: that is not repair's to change.
    """
    adjacent = {(id(a), id(b)) for a, b in pairwise(original)}
    joined: list[Any] = []
    for message in result:
        before = joined[-1] if joined else None
        role = role_of(message)
        if (before is not None and role in roles and role_of(before) == role
                and (id(before), id(message)) not in adjacent
                and isinstance(before.get(content_key), list) and isinstance(message.get(content_key), list)):
            joined[-1] = {**message, **before, content_key: [*before[content_key], *message[content_key]]}
        else:
            joined.append(message)
    return joined
