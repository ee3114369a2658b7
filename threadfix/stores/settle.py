"""Repair's fast path: telling a healthy thread from a few of its fields, without reading it whole.

Most stored threads need no repair, and for a thread of OpenAI Responses items that takes only each
item's ``type`` and, for function calls and their outputs, the ``call_id``. Two readers get those fields
for less than a full parse costs:

- SQLite, over tables of one row per item (:mod:`threadfix.stores.sqlite_screen`);
- msgspec, over a whole thread's JSON (a JSONL line, a row of one thread): :func:`settles_document`
  decodes only those fields and skips the rest of each item in C, several times faster than building
  every string and dict of it.

A thread is **settled** when every item is an object of a Responses type, and its calls and outputs are
function calls each answered once, after it: what the dialect's ``quick_healthy`` checks (the tests hold
:func:`pairs_settle` and :func:`settles_document` to its answers). Its first item then names the dialect,
so a full read finds it healthy too. Anything else (another type, a missing or non-string id, a value
msgspec cannot read) is read in full, so settling can only ever skip work, never change a repair.

Two kinds of document a full read refuses can still settle, both inside values msgspec skips: invalid
UTF-8 in a string (checking it would cost a fifth of the read), and a number beyond a double's range
(``1e400``, legal JSON that orjson will not read). Such a thread is left as it is (its bytes are copied),
as a healthy one is, where a full read would report it unreadable; ``lint`` and ``report`` always read in
full and report it. (The SQLite screen has its own list: see its module.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from itertools import compress
from operator import attrgetter, itemgetter
from typing import Any, Union

from threadfix.stores.base import Settled

#: the dialect whose threads can be settled, and the only call and output types a settled thread may hold
DIALECT = "openai-responses"
CALL, OUTPUT = "function_call", "function_call_output"
#: how a screened item codes its type: a function call, its output
IS_CALL, IS_OUTPUT = 0, 1
#: the first byte of an id that SQLite's ``->>`` gave as JSON text (an object or an array, not a string)
_FIRST_BYTE = itemgetter(0)
_NOT_STRING_IDS = frozenset(b"{[")
#: a store of fewer bytes is read in full: importing the decoder (~20 ms) would cost more than it saves
MIN_DOCUMENTS_BYTES = 4 * 1024 * 1024
#: one settled thread (documents are settled one at a time)
SETTLED = Settled(1, DIALECT)


def worth_screening(dialect: str | None, size: int | None = None) -> bool:
    """Whether a store's threads are screened before a full read: only when they may be Responses threads
    (sniffed, or forced to it), and with ``size``, the bytes msgspec would decode, only from
    MIN_DOCUMENTS_BYTES up (SQLite's own screen decodes nothing, so it has no floor)."""
    return dialect in (None, DIALECT) and (size is None or size >= MIN_DOCUMENTS_BYTES)


def plain_types() -> tuple[str, ...]:
    """The Responses item types that are neither calls nor outputs (the dialect's own list), in a fixed order."""
    from threadfix.dialects.openai_responses import PLAIN_TYPES

    return tuple(sorted(PLAIN_TYPES))


def answered_in_turn(codes: Sequence[Any], call_ids: Sequence[Any]) -> bool:
    """The most common healthy thread, cheaply: each call answered right after it (call, output, call, output),
    no id twice, every id a string. False says nothing: :func:`pairs_settle` decides."""
    calls = call_ids[0::2]
    return (calls == call_ids[1::2] and codes.count(IS_CALL) == len(calls) and all(codes[1::2])
            and len(set(calls)) == len(calls) and _ids_are_strings(calls))


def pairs_settle(codes: Sequence[Any], call_ids: Sequence[Any]) -> bool:
    """Whether a thread whose calls and outputs are ``codes`` and ``call_ids`` (in thread order) is healthy to
    the Responses dialect: only function calls and their outputs, string ids, each call answered once, after
    it, and no id used twice. Ids are str (a typed decode) or bytes (SQLite's JSON text of the value).

    What ``quick_healthy`` decides over those items, in C-level operations: its per-item loop would cost
    more than the rest of the screen.
    """
    pairs = len(call_ids) // 2
    if None in codes or 2 * pairs != len(call_ids) or sum(codes) != pairs:
        return False  # an item that could not be vouched for, or another type; or not as many outputs as calls
    first = dict(zip(call_ids[::-1], codes[::-1]))  # each id's first code (read backwards, it is written last)
    # as many ids as calls, each first called, no output id twice: each id called once, then answered once
    return (len(first) == pairs and IS_OUTPUT not in first.values() and len(set(compress(call_ids, codes))) == pairs
            and _ids_are_strings(first))


def _ids_are_strings(call_ids: Any) -> bool:
    """Every id came from a JSON string: str, or bytes that are not an object's or an array's JSON text."""
    try:
        return not _NOT_STRING_IDS & set(map(_FIRST_BYTE, call_ids))
    except (TypeError, IndexError):
        return False  # an id that is not a string (or an empty one: left to a full read)


# --------------------------------------------------------------------------- whole documents


def settles_document(raw: bytes) -> bool:
    """Whether the thread in ``raw`` (as a file or row holds it: an array of items, or an object with one of
    the thread keys) is settled. False says nothing: read it in full."""
    decode, unreadable, paired = _document_decoder()
    try:
        document = decode(raw)
    except unreadable:
        return False
    items = document if document.__class__ is list else document.thread_items()
    if not items:
        return False  # no item names the dialect
    calls_and_outputs = [item for item in items if item.__class__ in paired]
    codes = tuple([item.code for item in calls_and_outputs])
    call_ids = tuple([item.call_id for item in calls_and_outputs])
    return answered_in_turn(codes, call_ids) or pairs_settle(codes, call_ids)


@cache
def _document_decoder() -> tuple[Callable[[bytes], Any], tuple[type[BaseException], ...], frozenset[type]]:
    """(decode, what it raises on a document it cannot vouch for, the classes of calls and outputs).

    Items are a union tagged by ``type``: one class per plain type, with no fields (msgspec skips everything
    in them), and one each for function calls and outputs, with a required string ``call_id``. An item of
    any other type, without a type, or with a repeated ``type`` key fails to decode: a full read decides it.
    The container takes the thread keys in the order a full read tries them (a key holding anything but an
    array or null fails too).
    """
    import msgspec

    from threadfix.stores.document import THREAD_KEYS

    def tagged(name: str, tag: str, fields: list[Any], code: int | None) -> type:
        return msgspec.defstruct(name, fields, tag_field="type", tag=tag, namespace={"code": code}, frozen=True)

    call = tagged("SettleCall", CALL, [("call_id", str)], IS_CALL)
    output = tagged("SettleOutput", OUTPUT, [("call_id", str)], IS_OUTPUT)
    plain = [tagged(f"SettlePlain{i}", kind, [], None) for i, kind in enumerate(plain_types())]
    item = Union[tuple([call, output, *plain])]  # noqa: UP007 - a union of classes made at run time

    values = attrgetter(*THREAD_KEYS)

    def thread_items(self: Any) -> Any:
        """The first thread key that holds an array (null is no array), as a full read takes it."""
        for value in values(self):
            if value is not None:
                return value
        return None

    container = msgspec.defstruct("SettleDocument", [(key, list[item] | None, None) for key in THREAD_KEYS],
                                  namespace={"thread_items": thread_items})
    decoder = msgspec.json.Decoder(list[item] | container)
    # a document msgspec cannot read for any reason (even memory) is left to the full read, which says why
    return decoder.decode, (msgspec.DecodeError, RecursionError, MemoryError), frozenset((call, output))
