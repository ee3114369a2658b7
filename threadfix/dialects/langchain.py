"""LangChain / LangGraph message lists, in the three shapes langchain-core writes.

* ``messages_to_dict``: ``{"type": "ai", "data": {"content": ..., "tool_calls": [...], ...}}``;
* the plain dict (``message.model_dump()``, LangGraph API thread state): ``{"type": "ai", "content": ...}``;
* ``langchain_core.load.dumpd``: ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}``.

A thread may mix them; each item is read on its own, and what threadfix writes takes the shape of the
message it answers (or replaces).

**LangChain or OpenAI Chat?** The key that names the speaker decides. LangChain messages carry
``type`` (``human``, ``ai``, ``tool``, ``system``...) and never ``role`` (except ``type: "chat"``);
OpenAI Chat messages carry ``role`` and no ``type``. LangChain's own ``convert_to_messages`` also reads
role-keyed dicts, but those are OpenAI's shape (what ``convert_to_openai_messages`` writes), so they
belong to the ``openai-chat`` dialect whatever their ``tool_calls`` look like.

**Calls** of an ``AIMessage``: ``tool_calls`` (``{name, args, id}``, or OpenAI's ``{id, function}``),
``invalid_tool_calls`` (arguments that did not parse: providers still receive them as calls, so they need
an answer too), the legacy ``additional_kwargs.tool_calls`` when neither is set (langchain-core parses
them on load), and call blocks inside ``content``: OpenAI Responses ``function_call`` (paired by
``call_id``; deepagents #5781), Anthropic ``tool_use`` and standard ``tool_call`` /
``invalid_tool_call`` blocks. A block repeating an id already listed in the same message is the same call.
Legacy ``FunctionMessage`` pairs by name, not id, and is left alone.

**Placement.** LangGraph only checks that every ``tool_calls`` id has a ``ToolMessage`` somewhere
(``_validate_chat_history``, INVALID_CHAT_HISTORY), but the chat models send the list on to providers
that need the ``ToolMessage``\\ s right after their ``AIMessage`` (OpenAI's block rule), so that is the rule
repaired to. A synthetic answer is a ``ToolMessage`` with ``status: "error"`` and the payload as its
JSON-text content; an orphan becomes a ``HumanMessage`` that keeps its text.

**Layout.** An ``AIMessage`` whose ``content`` blocks put text after its ``tool_use`` blocks (what
langchain-anthropic stores from a stream) is sent to Anthropic in that order, which it refuses (``tool_use``
must end the turn): the text is moved ahead of the calls (``move_text``), in a message of text and
``tool_use`` blocks only, as in the anthropic dialect (thinking blocks stay as written). OpenAI Responses
``function_call`` blocks are not moved: that API takes text after a call. A tool call block in a
``HumanMessage``'s content (providers take calls from the model only) is kept as text where it stood
(``convert_call``), and a ``ToolMessage`` that answered it, left without a call, as a ``HumanMessage``.

**Waiting calls.** Nothing in the stored messages marks a call as waiting on a person: a LangGraph
``interrupt()`` (``HumanInTheLoopMiddleware``) is kept in the checkpoint's pending writes under
``__interrupt__`` (``langgraph/_internal/_constants.py`` ``INTERRUPT``), not in ``messages``, so the message
list alone reads as a thread that ends on its calls. The LangGraph checkpoint store reads that write and
marks the calls waiting (:mod:`threadfix.stores.langgraph_checkpoints`); for a list stored elsewhere,
``--leave-tool`` names such tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

import orjson
from msgspec import Struct

from msgspec.structs import replace

from threadfix.dialects.base import (
    LAYOUT,
    Dialect,
    Screen,
    ToolBlocks,
    Violation,
    call_text,
    calls_in_user_turns,
    absent,
    answered_in_blocks,
    orphan_text,
    screen_struct,
    str_or_none,
    text_after_calls,
    text_first,
)
from threadfix.failures import ArgumentsState, is_threadfix_output, read_arguments
from threadfix.model import Action, Call, Edit, Output, RepairPlan, ThreadIndex

_KINDS = {"human": "Human", "ai": "AI", "tool": "Tool", "system": "System", "chat": "Chat", "function": "Function"}
#: ``type`` values langchain-core's ``messages_from_dict`` reads, by the part they play
_TYPES: dict[str, str] = {**{kind: kind for kind in _KINDS}, **{f"{cls}MessageChunk": kind for kind, cls in _KINDS.items()},
                          "remove": "remove"}
#: class names in a ``dumpd`` constructor's ``id``
_CLASSES: dict[str, str] = {**{f"{cls}Message{chunk}": kind for kind, cls in _KINDS.items() for chunk in ("", "Chunk")},
                            "RemoveMessage": "remove"}
#: content blocks that are client tool calls, and the key holding the id their answer names
_CALL_BLOCKS: dict[str, str] = {"function_call": "call_id", "tool_use": "id", "tool_call": "id", "invalid_tool_call": "id"}
_TRUNCATING = {
    "finish_reason": frozenset({"length", "max_tokens", "MAX_TOKENS"}),
    "stop_reason": frozenset({"max_tokens", "model_context_window_exceeded"}),
    "stopReason": frozenset({"max_tokens"}),
}
_LANGGRAPH_HELP = ("Every tool call (LLM requesting to call a tool) in the message history MUST have a corresponding "
                   "ToolMessage (result of a tool invocation to return to the LLM) - this is required by most LLM "
                   "providers.")


class Message(Struct, frozen=True):
    """One item read: the part it plays, its fields, and which of the three shapes held them."""

    kind: str
    fields: dict[str, Any]
    shape: str  # "wrapped" | "plain" | "constructor"


def read(item: Any) -> Message | None:
    """The LangChain message an item holds, or None when it is not one."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind == "constructor" and item.get("lc") == 1:
        path = item.get("id")
        kwargs = item.get("kwargs")
        if isinstance(path, list) and path and isinstance(path[-1], str) and path[-1] in _CLASSES and isinstance(kwargs, dict):
            return Message(_CLASSES[path[-1]], kwargs, "constructor")
        return None
    if not isinstance(kind, str) or kind not in _TYPES:
        return None
    if isinstance(item.get("data"), dict):
        return Message(_TYPES[kind], item["data"], "wrapped")
    if "content" in item and ("role" not in item or kind == "chat"):
        return Message(_TYPES[kind], item, "plain")
    return None


class _CallSite(Struct, frozen=True):
    call_id: str | None
    name: str
    wire_type: str
    arguments: Any


def _entry(entry: Any, wire_type: str) -> _CallSite | None:
    """A ``tool_calls`` / ``invalid_tool_calls`` entry, in LangChain's shape or OpenAI's."""
    if not isinstance(entry, dict):
        return None
    spec = entry.get("function")
    if isinstance(spec, dict):  # OpenAI's shape, which langchain-core converts on load
        arguments = spec.get("arguments")
        if wire_type == "tool_call" and read_arguments(arguments).state is ArgumentsState.MALFORMED:
            wire_type = "invalid_tool_call"
        return _CallSite(str_or_none(entry.get("id")), str_or_none(spec.get("name")) or "unknown", wire_type, arguments)
    return _CallSite(str_or_none(entry.get("id")), str_or_none(entry.get("name")) or "unknown", wire_type, entry.get("args"))


def call_sites(fields: dict[str, Any]) -> list[_CallSite]:
    """Every client tool call an AI message makes, in the order its provider would receive them."""
    sites: list[_CallSite] = []
    for key, wire_type in (("tool_calls", "tool_call"), ("invalid_tool_calls", "invalid_tool_call")):
        entries = fields.get(key)
        if isinstance(entries, list):
            sites.extend(site for site in (_entry(e, wire_type) for e in entries) if site is not None)
    extra = fields.get("additional_kwargs")
    if not any(fields.get(k) for k in ("tool_calls", "invalid_tool_calls", "tool_call_chunks")) and isinstance(extra, dict):
        legacy = extra.get("tool_calls")  # read into tool_calls by langchain-core when nothing else is set
        if isinstance(legacy, list):
            sites.extend(site for site in (_entry(e, "tool_call") for e in legacy) if site is not None)
    content = fields.get("content")
    if isinstance(content, list):
        known = {site.call_id for site in sites}
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if not isinstance(kind, str) or kind not in _CALL_BLOCKS:
                continue
            call_id = str_or_none(block.get(_CALL_BLOCKS[kind]))
            if call_id is not None and call_id in known:
                continue  # the same call, listed in tool_calls too
            known.add(call_id)
            arguments = block.get("arguments", block.get("args", block.get("input")))
            sites.append(_CallSite(call_id, str_or_none(block.get("name")) or "unknown", kind, arguments))
    return sites


def _truncated(fields: dict[str, Any]) -> bool:
    metadata = fields.get("response_metadata")
    if not isinstance(metadata, dict):
        return False
    return any(isinstance(metadata.get(key), str) and metadata[key] in values for key, values in _TRUNCATING.items())


def _is_tool(item: Any) -> bool:
    message = read(item)
    return message is not None and message.kind == "tool"


def _call_ids(item: Any) -> list[Any]:
    message = read(item)
    if message is None or message.kind != "ai":
        return []
    return [site.call_id for site in call_sites(message.fields)]


def _output_id(item: Any) -> Any:
    message = read(item)
    return message.fields.get("tool_call_id") if message is not None else None


BLOCKS = ToolBlocks(is_output=_is_tool, call_ids=_call_ids, output_id=_output_id)


class LangChain(Dialect):
    name = "langchain"
    title = "LangChain / LangGraph messages (messages_to_dict, plain dicts, dumpd)"

    def sniff(self, items: Sequence[Any]) -> int:
        score = 0
        for item in items[:200]:
            message = read(item)
            if message is None:
                return 0
            # no other format names its speakers human/ai/tool; system alone is weaker evidence
            score = max(score, 100 if message.kind in ("human", "ai", "tool") else 60)
        return score

    def index(self, items: Sequence[Any]) -> ThreadIndex:
        calls: list[Call] = []
        outputs: list[Output] = []
        users: list[int] = []
        models: list[int] = []
        for i, item in enumerate(items):
            message = read(item)
            if message is None:
                continue
            fields = message.fields
            if message.kind == "ai":
                models.append(i)
                truncated = _truncated(fields)
                calls.extend(Call(call_id=site.call_id, name=site.name, wire_type=site.wire_type, at=(i, -1),
                                  arguments=site.arguments, truncated=truncated) for site in call_sites(fields))
            elif message.kind == "tool":
                content = fields.get("content")
                # langchain-core writes status "success" unless a tool node caught an exception, whatever
                # the content says: only "error" is a verdict (and the output reads as Chat's would)
                failed = fields.get("status") == "error"
                outputs.append(Output(
                    call_id=str_or_none(fields.get("tool_call_id")),
                    wire_type="tool",
                    at=(i, -1),
                    content=content,
                    is_error=True if failed else None,
                    status="error" if failed else None,
                    by_threadfix=is_threadfix_output(content),
                ))
            elif message.kind == "human":
                users.append(i)
        return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items))

    def in_place(self, index: ThreadIndex, call: Call, output: Output, items: Sequence[Any]) -> bool:
        return BLOCKS.in_place(call, output, items)

    def screen(self) -> Screen:
        return _screen()

    def check(self, items: Sequence[Any]) -> list[Violation]:
        """LangGraph's ``_validate_chat_history``, then the block rule providers apply."""
        violations: list[Violation] = []
        answered = {str_or_none(_output_id(item)) for item in items if _is_tool(item)}
        unanswered: list[tuple[int, _CallSite]] = []
        for i, item in enumerate(items):
            message = read(item)
            if message is not None and message.kind == "ai":
                unanswered.extend((i, site) for site in call_sites(message.fields)
                                  if site.wire_type == "tool_call" and site.call_id not in answered)
        if unanswered:
            shown = [{"name": site.name, "args": site.arguments, "id": site.call_id, "type": "tool_call"}
                     for _, site in unanswered[:3]]
            violations.append(Violation(
                "invalid-chat-history", unanswered[0][0],
                "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. Here are the first few "
                f"of those tool calls: {shown}.\n\n{_LANGGRAPH_HELP}", unanswered[0][1].call_id))
        violations.extend(BLOCKS.violations(items))
        for edit in self.layout_edits(ThreadIndex((), ()), items):
            if edit.action is Action.MOVE_TEXT:
                violations.append(Violation("tool-use-not-last", edit.at[0], f"messages.{edit.at[0]}: `tool_use` blocks "
                                            "must end the assistant turn (Anthropic, through langchain-anthropic)"))
            else:
                violations.append(Violation("tool-call-in-human-message", edit.at[0], f"messages.{edit.at[0]}.content."
                                            f"{edit.at[1]}: a tool call block in a HumanMessage, which providers take "
                                            "from the model only", edit.call_id))
        return sorted(violations, key=lambda v: v.at)

    def layout_edits(self, index: ThreadIndex, items: Sequence[Any]) -> list[Edit]:
        return [*text_after_calls(items, blocks_of=_ai_blocks, kind_of=_block_type, call_kind="tool_use",
                                  reorderable=_REORDERABLE, label=_call_label),
                *calls_in_user_turns(items, user_blocks=_human_blocks,
                                     call_of=lambda block: _call_label(block) if _block_type(block) in _CALL_BLOCKS else None)]

    def apply(self, items: Sequence[Any], plan: RepairPlan) -> list[Any]:
        moved = {edit.at[0] for edit in plan.edits if edit.action is Action.MOVE_TEXT}
        turned = {edit.at for edit in plan.edits if edit.action is Action.CONVERT_CALL}
        if moved or turned:  # first: no message changes place, so the other edits' places still hold
            items = [_text_moved(item) if i in moved else _calls_as_text(item, i, turned) for i, item in enumerate(items)]
            plan = replace(plan, edits=tuple(edit for edit in plan.edits if edit.action not in LAYOUT))

        def build(edit: Edit) -> dict[str, Any]:
            shape = read(items[edit.call.at[0]]).shape
            return _tool_message(shape, edit.call, orjson.dumps(edit.payload).decode())

        def convert(edit: Edit, item: Any) -> dict[str, Any]:
            text = orphan_text(edit.output, edit.action.value.endswith("duplicate"))
            return _human_message(read(item).shape, text)

        return BLOCKS.apply(items, plan, build=build, convert=convert)


#: an AI message of only these content blocks can have its text moved ahead of its tool_use blocks
_REORDERABLE = frozenset({"text", "tool_use"})


def _block_type(block: Any) -> str | None:
    """A block's type; None when it is not a string (a hostile one may be a list, which no set or dict can hold)."""
    return str_or_none(block.get("type")) if isinstance(block, dict) else None


def _ai_blocks(item: Any) -> list[Any] | None:
    message = read(item)
    content = message.fields.get("content") if message is not None and message.kind == "ai" else None
    return content if isinstance(content, list) else None


def _human_blocks(item: Any) -> list[Any] | None:
    message = read(item)
    content = message.fields.get("content") if message is not None and message.kind == "human" else None
    return content if isinstance(content, list) else None


def _call_label(block: dict[str, Any]) -> tuple[str | None, str | None]:
    return str_or_none(block.get(_CALL_BLOCKS.get(block.get("type"), "id"))), str_or_none(block.get("name"))


def _calls_as_text(item: Any, i: int, turned: set[tuple[int, int]]) -> Any:
    """``item``, or a copy in its own shape whose call blocks named in ``turned`` are text saying what they were."""
    if not any(m == i for m, _ in turned):
        return item
    content = read(item).fields["content"]
    return _with_content(item, [{"type": "text", "text": call_text(*_call_label(block), block.get(
        "input", block.get("args", block.get("arguments"))))} if (i, b) in turned else block
        for b, block in enumerate(content)])


def _text_moved(item: dict[str, Any]) -> dict[str, Any]:
    """A copy of an AI message, in its own shape, with its content's text moved ahead of its tool_use blocks."""
    return _with_content(item, text_first(read(item).fields["content"], _block_type, "tool_use"))


def _with_content(item: dict[str, Any], content: list[Any]) -> dict[str, Any]:
    """A copy of a message, in its own shape, with ``content`` as its content."""
    message = read(item)
    fields = {**message.fields, "content": content}
    if message.shape == "constructor":
        return {**item, "kwargs": fields}
    return {**item, "data": fields} if message.shape == "wrapped" else fields


# The exact keys langchain-core (1.x) writes for these classes, so its loaders read them back unchanged.


def _tool_message(shape: str, call: Call, content: str) -> dict[str, Any]:
    if shape == "constructor":
        return _constructor("ToolMessage", {"content": content, "type": "tool", "name": call.name,
                                            "tool_call_id": call.call_id, "status": "error"})
    fields = {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": "tool", "name": call.name,
              "id": None, "tool_call_id": call.call_id, "artifact": None, "status": "error"}
    return {"type": "tool", "data": fields} if shape == "wrapped" else fields


def _human_message(shape: str, text: str) -> dict[str, Any]:
    if shape == "constructor":
        return _constructor("HumanMessage", {"content": text, "type": "human"})
    fields = {"content": text, "additional_kwargs": {}, "response_metadata": {}, "type": "human", "name": None,
              "id": None}
    return {"type": "human", "data": fields} if shape == "wrapped" else fields


def _constructor(cls: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


@cache
def _screen() -> Screen:
    """Plain message dicts (``model_dump()``) with a ``type`` langchain-core reads, text ``content``, and no
    ``role`` or ``data`` (so :func:`read` takes each as a plain message). No dialect before LangChain in the
    registry can be sure of them (OpenAI Responses knows none of these types; Anthropic and Chat need a
    ``role``), and :meth:`LangChain.sniff` is, once a human, AI or tool message stands among the first 200.

    Text content holds no call blocks and nothing to lay out, so an AI message's calls are its ``tool_calls``
    and ``invalid_tool_calls`` entries (a string ``id`` each), or, when it has none of those and no
    ``tool_call_chunks``, the legacy ``additional_kwargs.tool_calls``, as :func:`call_sites` reads them; they
    must satisfy the block rule (:func:`answered_in_blocks`)."""
    from msgspec import UNSET, UnsetType, field

    call = screen_struct("ScreenLangChainCall", [("id", str)])
    calls = list[call] | None | UnsetType
    extra = screen_struct("ScreenLangChainExtra", [("tool_calls", calls, UNSET)])
    message = screen_struct("ScreenLangChainMessage", [
        ("sender", Literal[tuple(_TYPES)], field(name="type")),  # (the block rule reads a ``sender``)
        ("content", str),
        ("tool_calls", calls, UNSET),
        ("invalid_tool_calls", calls, UNSET),
        ("tool_call_chunks", list[Any] | None | UnsetType, UNSET),
        ("additional_kwargs", extra | None | UnsetType, UNSET),
        ("tool_call_id", str | None | UnsetType, UNSET),
        *absent("role", "data"),
    ])

    def calls_of(m: Any) -> Any:
        listed = m.tool_calls or ()
        if m.invalid_tool_calls:
            listed = [*listed, *m.invalid_tool_calls]
        if not listed and not m.tool_call_chunks and m.additional_kwargs:
            listed = m.additional_kwargs.tool_calls or ()
        return listed  # (most AI messages call nothing)

    def settles(items: list[Any]) -> bool | None:
        if not any(_TYPES[m.sender] in ("human", "ai", "tool") for m in items[:200]):
            return None
        return answered_in_blocks(items, _TOOL_TYPES, _AI_TYPES, calls_of)

    return Screen(message, settles)


#: the block rule's kinds, by the ``type`` a message is read as: a tool message answers, an AI message calls
_TOOL_TYPES = frozenset(name for name, kind in _TYPES.items() if kind == "tool")
_AI_TYPES = frozenset(name for name, kind in _TYPES.items() if kind == "ai")
