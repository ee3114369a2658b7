"""Repair's fast path: telling a healthy thread from a few of its fields, without reading it whole.

Most stored threads need no repair, and telling so takes only a few fields of each item: for OpenAI
Responses items, each item's ``type`` and the ``call_id`` of calls and outputs. Two readers get those
fields for less than a full parse costs:

- SQLite, over tables of one row per Responses item (:mod:`threadfix.stores.sqlite_screen`);
- msgspec, over a whole thread's JSON (a JSONL line, a row of one thread): each dialect's screen
  (:class:`threadfix.dialects.base.Screen`, declared beside the dialect) decodes only those fields and skips
  the rest of each item in C, several times faster than building every string and dict of it.

A thread is **settled** when its dialect's screen vouches that a full read would sniff it as that dialect and
find nothing to repair (the tests hold every screen to the full read's answers). Anything else (another
shape, a missing or non-string id, a value msgspec cannot read) is read in full, so settling can only ever
skip work, never change a repair. A :class:`Screener` tries first the dialect that settled the store's last
thread: a store's threads share a dialect, and another is tried only when a thread is not known to be its.

Two kinds of document a full read refuses can still settle, both inside values msgspec skips: invalid
UTF-8 in a string (checking it would cost a fifth of the read), and a number beyond a double's range
(``1e400``, legal JSON that orjson will not read). Such a thread is left as it is (its bytes are copied),
as a healthy one is, where a full read would report it unreadable; ``lint`` and ``report`` always read in
full and report it. (The SQLite screen has its own list: see its module.)
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from operator import attrgetter
from typing import Any

from threadfix import dialects
from threadfix.dialects.base import Dialect, screen_struct
from threadfix.dialects.openai_responses import (  # noqa: F401 - the Responses rules the SQLite screen shares
    CALL,
    IS_CALL,
    IS_OUTPUT,
    OUTPUT,
    answered_in_turn,
    pairs_settle,
    plain_types,
)
from threadfix.stores.base import Settled

#: the dialect the SQLite screen of item tables settles
DIALECT = "openai-responses"
#: a store of fewer bytes is read in full: importing the decoder (~20 ms) would cost more than it saves
MIN_DOCUMENTS_BYTES = 4 * 1024 * 1024
#: a store's first document is sniffed by a full read (to pick the screen tried first) only up to this size: a
#: larger one is screened in the registry's order, as a second full parse of it would cost more than the screens
HINT_BYTES = 1024 * 1024


def worth_screening(dialect: str | None, size: int | None = None) -> bool:
    """Whether a store's threads are screened as Responses items before a full read (SQLite's screen of item
    tables, which decodes nothing and so has no floor; with ``size``, the bytes msgspec would decode, only
    from MIN_DOCUMENTS_BYTES up)."""
    return dialect in (None, DIALECT) and (size is None or size >= MIN_DOCUMENTS_BYTES)


def screens_documents(dialect: str | None, size: int) -> bool:
    """Whether a store of ``size`` bytes of thread documents is screened: from MIN_DOCUMENTS_BYTES up, when its
    dialect is sniffed or forced to one with a screen."""
    return size >= MIN_DOCUMENTS_BYTES and has_screen(dialect)


def has_screen(dialect: str | None) -> bool:
    """Whether threads of ``dialect`` (None: sniffed) can be screened: it, or any dialect when sniffed, has one."""
    return dialect is None or dialect in screened()


@cache
def screened() -> tuple[str, ...]:
    """The dialects with a screen (their class overrides :meth:`Dialect.screen`), in the registry's order. Told from
    the class, so that no screen is built until a document is tried with it (each costs its msgspec types and
    decoder, 5-9 ms for all nine: issue #28)."""
    return tuple(name for name in dialects.names() if type(dialects.get(name)).screen is not Dialect.screen)


class Screener:
    """Settles a store's thread documents one at a time: ``screener(raw)`` is a :class:`Settled` count of one,
    or None (read it in full).

    The dialect that settled the last thread is tried first (the first document's is sniffed by a full read, once
    per store, not per thread); the others only when its screen cannot tell the document is its thread, never when
    it can and the thread needs a closer look (a stuck thread of the same dialect). ``dialect``: the one forced on
    the store, the only one tried.
    """

    def __init__(self, dialect: str | None = None) -> None:
        self.order = [dialect] if dialect is not None else list(screened())
        #: whether the order was set by the dialect a full read sniffs the first document as (see :meth:`_hint`)
        self.hinted = dialect is not None
        #: the dialect whose screen knew the last document for its thread, settled or not, else None: what a full
        #: read sniffs it as, so that the full read of a stuck thread need not sniff it again
        self.known: str | None = None

    def __call__(self, raw: bytes) -> Settled | None:
        if not self.hinted:
            self.hinted = True
            if len(raw) <= HINT_BYTES:
                self._hint(raw)
        order = self.order
        for at, name in enumerate(order):
            verdict = _verdict(name, raw)
            if verdict is None:
                continue  # not this dialect's, as far as its screen can tell
            if at:
                order.insert(0, order.pop(at))
            self.known = name
            return _settled(name) if verdict else None
        self.known = None
        return None


    def _hint(self, raw: bytes) -> None:
        """Try first the dialect a full read of the store's first document sniffs: one parse and sniff, where
        trying the screens in the registry's order builds each one tried before its own (a folder of Bedrock files
        built seven). Only the order changes: each screen still vouches for its own dialect alone."""
        from threadfix import jsonio
        from threadfix.stores.document import split_container

        try:
            parts = split_container(jsonio.loads(raw))
        except (jsonio.JsonReadError, RecursionError):
            return  # (the screens in order; the full read says what is wrong with it)
        sniffed = dialects.sniff(parts[0]) if parts is not None else None
        if sniffed is not None and sniffed.name in self.order:
            self.order.insert(0, self.order.pop(self.order.index(sniffed.name)))


def _verdict(name: str, raw: bytes) -> bool | None:
    """True: settled as dialect ``name``; False: its thread, not settled; None: not known to be its thread."""
    decode, unreadable, settles = _document_decoder(name)
    try:
        document = decode(raw)
    except unreadable:
        return None
    items = document if document.__class__ is list else document.thread_items()
    return settles(items) if items is not None else None


@cache
def _settled(name: str) -> Settled:
    return Settled(1, name)


@cache
def _document_decoder(name: str) -> tuple[Callable[[bytes], Any], tuple[type[BaseException], ...],
                                          Callable[[list[Any]], bool]]:
    """(decode, what it raises on a document it cannot vouch for, the screen's ``settles``) for dialect ``name``.

    The document is an array of the screen's items, or an object whose thread keys, in the order a full read
    tries them, hold such an array or null (a key holding anything else fails to decode: read in full).
    """
    import msgspec

    from threadfix.stores.document import THREAD_KEYS

    screen = dialects.get(name).screen()
    values = attrgetter(*THREAD_KEYS)

    def thread_items(self: Any) -> Any:
        """The first thread key that holds an array (null is no array), as a full read takes it."""
        for value in values(self):
            if value is not None:
                return value
        return None

    container = screen_struct(f"Settle{name.title().replace('-', '')}Document",
                              [(key, list[screen.item] | None, None) for key in THREAD_KEYS],
                              namespace={"thread_items": thread_items})
    decoder = msgspec.json.Decoder(list[screen.item] | container)
    # a document msgspec cannot read for any reason (even memory) is left to the full read, which says why
    return decoder.decode, (msgspec.DecodeError, RecursionError, MemoryError), screen.settles
