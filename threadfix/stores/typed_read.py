"""Thread documents of OpenAI Responses items decoded straight into typed items, for lint: the index without a dict
per item.

``lint`` reads every thread whole (its rules read every output and every call's arguments), so the screen repair
settles healthy threads with is no use to it. What it can skip is the generic read: ``orjson.loads`` building a
dict for every item and part, then the index walking those dicts again to build a :class:`Call` or
:class:`Output` per item. Here msgspec decodes a thread document (``{"id", "created_at", "items"}``, or a bare
array of items) into a union of typed items tagged by ``type``, and :func:`typed_index` builds the index from
them in one pass.

It is exact by refusing, not by guessing. Every struct forbids unknown fields, so every key and every string of the
document is decoded and checked (UTF-8, escapes, surrogates) as the full read checks it: nothing is skipped unread.
Only the common shapes of the four kinds a benchmark store holds are known (messages, reasoning, function calls and
their outputs, with string ids, names and arguments; a message part's ``annotations`` only empty; a status, a role
or a text part's type only one the Responses API names); numbers only in ``created_at``, read as a double, so a
number the full read refuses (``1e400``, a 400-digit integer) is refused here too. Anything else (another item type,
a key it does not know, a value of another type, anything msgspec cannot read) is None: the caller reads the thread
in full, as before. So is any thread the full index would not take as accepted (an open call, an orphan, an id used
twice, a blank id): only threads with nothing to repair and nothing the provider refuses come out of here, the
threads lint runs only its content rules on. ``tests/lint/test_typed_read.py`` holds the result to the full read's
over generated threads and hostile shapes.
"""

from __future__ import annotations

from functools import cache
from operator import attrgetter
from typing import Any, Literal, Union

import msgspec

from threadfix.dialects.openai_responses import _MARKER_END
from threadfix.failures import is_threadfix_output
from threadfix.model import Call, Output, ThreadIndex
from threadfix.stores.document import ID_KEYS, THREAD_KEYS

#: the dialect whose threads are read here, and the one :func:`threadfix.dialects.sniff` names for them (every
#: item's type is one only Responses uses, and it is first in the registry)
DIALECT = "openai-responses"
CALL, OUTPUT = "function_call", "function_call_output"
#: every struct refuses a key it does not know; none is tracked by the cycle collector (a decoded document holds no
#: cycle: only strings, lists and structs of them), which spares the collector a visit of every item
_STRICT = {"forbid_unknown_fields": True, "frozen": True, "gc": False}
#: the values an item's status, a message's role and a text part's type take in the Responses API: decoded as these
#: shared strings instead of a new string per item (any other value: read in full, as before)
Status = Literal["completed", "incomplete", "in_progress"]
Role = Literal["user", "assistant", "system", "developer"]
TextPart = Literal["input_text", "output_text", "summary_text", "reasoning_text"]


class MessagePart(msgspec.Struct, **_STRICT):
    """A message's or a reasoning summary's text part (their text is read by no lint rule; decoded to be checked)."""

    type: TextPart
    text: str
    #: output_text's citations: only an empty list is known (a value inside it could be a number)
    annotations: tuple[()] = ()


class Message(msgspec.Struct, tag_field="type", tag="message", **_STRICT):
    role: Role
    content: str | list[MessagePart]
    id: str | None = None
    status: Status | None = None


class Reasoning(msgspec.Struct, tag_field="type", tag="reasoning", **_STRICT):
    summary: list[MessagePart]
    id: str | None = None
    encrypted_content: str | None = None
    status: Status | None = None


class FunctionCall(msgspec.Struct, tag_field="type", tag=CALL, **_STRICT):
    call_id: str
    name: str
    arguments: str
    id: str | None = None
    status: Status | None = None


class FunctionCallOutput(msgspec.Struct, tag_field="type", tag=OUTPUT, **_STRICT):
    call_id: str
    #: a string, or parts as plain dicts of strings (what orjson gives, in the document's key order: the rules read
    #: an output's value as stored)
    output: str | list[dict[str, str]]
    id: str | None = None
    status: Status | None = None


Item = Union[Message, Reasoning, FunctionCall, FunctionCallOutput]  # noqa: UP007 - msgspec reads the Union


#: the times a thread document may hold besides its items and ids (any other key: read in full)
_TIME_KEYS = ("created_at", "updated_at")

#: a thread document: an object holding its items under one of THREAD_KEYS (the first array of them is the thread, as
#: for the full read), and ids and times (a number only as a
#: double, so a number the full read refuses is refused here)
Document = msgspec.defstruct("Document", [
    *((key, list[Item] | None, None) for key in THREAD_KEYS),
    *((key, str | None, None) for key in ID_KEYS),
    *((key, float | str | None, None) for key in _TIME_KEYS),
], forbid_unknown_fields=True, frozen=True, gc=False)
_items_of = attrgetter(*THREAD_KEYS)
_ids_of = attrgetter(*ID_KEYS)


class TypedRead(msgspec.Struct, frozen=True):
    """What a typed read gives: the thread's index (accepted), the key of the document that holds its items (None:
    the document is the array of items) and its id as :func:`threadfix.stores.document.thread_id` reads it."""

    index: ThreadIndex
    items_key: str | None
    thread_id: str | None


@cache
def _decoder() -> msgspec.json.Decoder:
    return msgspec.json.Decoder(Document | list[Item])


def typed_read(body: bytes) -> TypedRead | None:
    """The index of an accepted Responses thread read from its JSON ``body``; None: read it in full (see above)."""
    read = typed_read_timed(body)
    return None if read is None else read[0]


def typed_index(items: list[Any]) -> ThreadIndex | None:
    """What ``OpenAIResponses.index`` builds from these items' dicts, when it finds the thread accepted; None when
    it would not (or there are no items: no dialect sniffs an empty thread)."""
    if not items:
        return None
    calls: list[Call] = []
    outputs: list[Output] = []
    users: list[int] = []
    models: list[int] = []
    opened: set[str] = set()
    answered: set[str] = set()
    marker = _MARKER_END
    before_call = False
    for i, item in enumerate(items):
        cls = item.__class__
        if cls is FunctionCall:
            call_id = item.call_id
            if call_id in opened or not call_id.strip():
                return None
            opened.add(call_id)
            calls.append(Call(call_id, item.name, CALL, (i, -1), item.arguments, item.status == "incomplete",
                              False, False))
            if not before_call:
                models.append(i)  # a new batch of calls is a new model turn; parallel siblings are not
            before_call = True
            continue
        before_call = False
        if cls is FunctionCallOutput:
            call_id = item.call_id
            if call_id in answered or call_id not in opened:
                return None
            answered.add(call_id)
            content = item.output
            outputs.append(Output(
                call_id, OUTPUT, (i, -1), content, None, item.status,
                marker in content and is_threadfix_output(content) if content.__class__ is str
                else is_threadfix_output(content),
            ))
        elif cls is Message:
            role = item.role
            if role == "user":
                users.append(i)
            elif role == "assistant":
                models.append(i)
        else:
            models.append(i)
    if len(answered) != len(opened):
        return None
    ids = [item.id for item in items]
    present = len(ids) - ids.count(None)
    unique = set(ids)
    unique.discard(None)
    if len(unique) != present:
        return None  # the provider refuses a repeated item id
    return ThreadIndex(tuple(calls), tuple(outputs), tuple(users), tuple(models), len(items), True)


#: a thread document's own times as the typed read decoded them: (``updated_at``, ``created_at``), each None when
#: absent; the only time keys a typed read lets through (see ``_TIME_KEYS``), so every item is without a time
DocumentTimes = tuple[Union[float, str, None], Union[float, str, None]]  # noqa: UP007 - a runtime alias
NO_TIMES: DocumentTimes = (None, None)


def typed_read_timed(body: bytes) -> tuple[TypedRead, DocumentTimes] | None:
    """:func:`typed_read`, with the document's own times: what report reads a thread's day from, without the
    document itself (every item of a typed read is without a time of its own, so the thread's day is every
    item's)."""
    try:
        document = _decoder().decode(body)
    except (msgspec.DecodeError, RecursionError, MemoryError):
        return None
    if document.__class__ is list:
        items, key, thread_id, times = document, None, None, NO_TIMES
    else:
        key = next((key for key, value in zip(THREAD_KEYS, _items_of(document)) if value is not None), None)
        if key is None:
            return None  # no thread in it: the full read says so
        items = getattr(document, key)
        thread_id = next((value for value in _ids_of(document) if value is not None), None)
        times = (document.updated_at, document.created_at)
    index = typed_index(items)
    return None if index is None else (TypedRead(index, key, thread_id), times)
