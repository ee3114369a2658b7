"""One pass over a thread's output text that says which text rules may find something in it.

The secret rule (TF205) and the leaked-internals rule (TF204) each start with literal tests over all of a
thread's output text (:func:`threadfix.secrets.may_hold_secret`, ``internals_leaked._TESTS``): eleven
passes, each at about 1 GB/s, which made them half of lint's rules. Hyperscan runs one automaton over the
text's UTF-8 bytes for every one of those tests at once and says which group may match; a thread where
neither may match is settled, and only the rest go through the rules' own tests.

Each pattern below admits every text the test it stands for passes (a superset: a looser pattern only
sends more threads to the exact tests). The patterns are bytes, without Hyperscan's UTF-8 mode, so text
with lone surrogates (``surrogatepass``) is scanned as any other: every literal is ASCII, and an ASCII
byte never occurs inside a multi-byte UTF-8 sequence. ``\\s`` and ``\\d`` of a ``str`` regex are Python's
own (``str.isspace``, ``str.isdecimal``), so whitespace is spelt out here as those characters' UTF-8 and a
digit as ASCII or any non-ASCII byte. tests/lint/test_marks.py holds each group to the tests it stands
for, over generated text.

Without Hyperscan (a platform with no wheel), with :data:`FAST` off, or before a run has read
:data:`COMPILE_AFTER` characters (unless its caller knew it was large: :func:`start_now`), :func:`marks`
says "every group", and the rules run their own tests. :class:`Lines` keeps the bytes it scanned, so the
rules then read closely only the outputs a match ends in.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from functools import cache
from itertools import accumulate, repeat
from typing import Any

#: False: no pass at all; the rules run their own tests on every thread (the tests compare the two ways)
FAST = True
#: the groups, a bit each
SECRET = 1
LEAK = 2
EVERY = SECRET | LEAK

#: a byte of any character ``str.isspace`` is true of (what ``\\s`` matches in a ``str`` regex): ASCII whitespace,
#: the separators U+001C-U+001F, or any byte of a non-ASCII character (a superset: U+0085, U+00A0, U+2000...)
_SPACE = rb"[\x09-\x0d\x1c-\x20\x80-\xff]"
#: a byte that may start a character ``\\d`` matches in a ``str`` regex: an ASCII digit, or any non-ASCII byte
_DIGIT = rb"[0-9\x80-\xff]"
_INSTALLED = rb"(?:srv/|opt/|app/|var/|usr/|workspace/|site-packages|dist-packages|node_modules|\.venv|Program\x20Files)"
_PATTERNS: tuple[tuple[int, bytes], ...] = (
    # threadfix.secrets._MARKS and "bearer"
    (SECRET, rb"sk-|xox[baprs]-|-----BEGIN|A(?:KIA|Iza)|eyJ|Bearer|BEARER|bearer|gh[pousr]_"),
    # internals_leaked._TESTS: an installation path after a slash or a backslash
    (LEAK, rb"[/\\]" + _INSTALLED),
    # a frame line after a newline or an escaped one (the rule also asks for "at" and a space: implied)
    (LEAK, rb"(?:\n|\\n)" + _SPACE + rb"*at" + _SPACE),
    (LEAK, rb"Traceback\x20\(most\x20recent\x20call\x20last\)|Exception\x20in\x20thread|Node\.js"),
    # a JVM "... 3 more": dots, whitespace, a digit (the rest is the rule's to check)
    (LEAK, rb"\.\.\." + _SPACE + b"+" + _DIGIT),
)


#: characters of text a process reads before the scanner is compiled (a few milliseconds, with Hyperscan's import):
#: a small run (a file of a few threads) leaves the work to the rules' own tests, a store's run pays it once
COMPILE_AFTER = 1 << 20
_read = 0


def start_now() -> None:
    """Have the pass run from the first text on, for a run its caller knows is large (a store of many megabytes):
    waiting for :data:`COMPILE_AFTER` characters there only had the rules' own tests read its first megabyte, which
    cost as much as compiling the scanner. Nothing changes but when the pass starts: every group stays a superset."""
    global _read
    _read = max(_read, COMPILE_AFTER)


def marks(text: str) -> int:
    """The groups that may match somewhere in ``text`` (a bit each); :data:`EVERY` when there is no scanner yet."""
    return marks_of_lines((text,), "")


def marks_of_lines(texts: Sequence[str], before: str = "\n") -> int:
    """:func:`marks` of ``before`` joined to each of ``texts`` (a thread's outputs, each after a newline), without
    building that string (see :class:`Lines`)."""
    return Lines(texts, before).marks


class Lines:
    """A thread's output texts, each after a newline, as the UTF-8 bytes the scanner reads: encoded once, for the
    groups that may match anywhere in them (:attr:`marks`) and for the texts a group may match in (:meth:`holding`).

    Each text is encoded alone and the bytes joined: joined first, every text of a thread was widened to its widest
    character and then encoded as wide text, where an ASCII text alone is one copy; UTF-8 encodes a string piece by
    piece, so the bytes scanned are the same."""

    __slots__ = ("_encoded", "_step", "data", "marks")

    def __init__(self, texts: Sequence[str], before: str = "\n") -> None:
        global _read
        #: the bytes scanned, None when they were not (every group may match in every text)
        self.data: bytes | None = None
        self._encoded: list[bytes] | range = range(len(texts))
        #: the groups that may match in some text (a bit each); :data:`EVERY` when there is no scanner (yet)
        self.marks = EVERY
        if not FAST:
            return
        if _read < COMPILE_AFTER:
            _read += sum(map(len, texts))
            return
        scan = _scanner()
        if scan is None:
            return
        separator = before.encode()
        self._step = len(separator)
        try:  # str.encode's own default (UTF-8, strict) takes its fast way, and gives the same bytes where it can
            encoded = list(map(str.encode, texts))
        except UnicodeEncodeError:  # a lone surrogate: passed through, as the patterns read any non-ASCII byte
            encoded = [text.encode("utf-8", "surrogatepass") for text in texts]
        self._encoded = encoded
        self.data = separator.join([b"", *encoded])  # (one copy of the text's bytes, not two)
        self.marks = scan(self.data)

    def holding(self, group: int) -> Sequence[int]:
        """The indices of the texts (in order) that a match of ``group`` may end in, each read after its newline: every
        text a scan of that text alone marks with ``group`` is among them (a match that ends in a text is found by the
        one scan of all of them, at the same bytes). Every text when they were not scanned."""
        if not self.marks & group:
            return ()
        if self.data is None:
            return range(len(self._encoded))
        scan = _scanner()
        found = scan.ends(self.data, group) if scan is not None else None  # type: ignore[attr-defined]
        if found is None:  # the scanner's scratch space in use by another thread: every text may
            return range(len(self._encoded))
        step = self._step
        # text i's bytes end where its own and every earlier text's bytes and newlines do
        ends = [end + step * i for i, end in enumerate(accumulate(map(len, self._encoded)), 1)]
        return sorted({index for index in map(bisect_left, repeat(ends), found) if index < len(ends)})


def scanner() -> Callable[[bytes], int] | None:
    """The compiled scan of UTF-8 bytes (``surrogatepass``: what :func:`marks` uses once a run has read enough
    text); None without Hyperscan. Its ``ends(data, group)`` says where the matches of ``group`` end in ``data``
    (None: not scanned), for :meth:`Lines.holding`."""
    return _scanner()


@cache
def _scanner() -> Callable[[bytes], int] | None:
    """Compile the patterns once per process (about 5 ms); None without Hyperscan."""
    try:
        import hyperscan
    except ImportError:  # no wheel for this platform: the rules' own tests do all the work
        return None
    groups = [group for group, _ in _PATTERNS]
    database = hyperscan.Database()
    # every match is reported (HS_FLAG_SINGLEMATCH makes compiling these five times slower); the scan stops
    # once every group is seen
    try:
        database.compile(expressions=[pattern for _, pattern in _PATTERNS], ids=list(range(len(_PATTERNS))),
                         elements=len(_PATTERNS), flags=[0] * len(_PATTERNS))
    except hyperscan.HyperscanError:  # a processor the library cannot run on (it needs SSSE3 on x86)
        return None
    stopped, failed = hyperscan.ScanTerminated, hyperscan.HyperscanError

    def on_match(pattern: int, start: int, end: int, flags: int, found: list[int]) -> bool:
        seen = found[0] = found[0] | groups[pattern]
        return seen == EVERY

    def scan(data: bytes) -> int:
        found = [0]  # each scan its own (a library caller may lint from several threads)
        try:
            database.scan(data, match_event_handler=on_match, context=found)
        except stopped:
            pass
        except failed:  # the database's scratch space in use by another thread: the rules' own tests decide
            return EVERY
        return found[0]

    def on_match_ending(pattern: int, start: int, end: int, flags: int, found: tuple[int, list[int]]) -> None:
        if groups[pattern] & found[0]:
            found[1].append(end)

    def ends(data: bytes, group: int) -> list[int] | None:
        found: tuple[int, list[int]] = (group, [])  # every match of the group, to the end of the data
        try:
            database.scan(data, match_event_handler=on_match_ending, context=found)
        except failed:
            return None
        return found[1]

    scan.ends = ends  # type: ignore[attr-defined]
    return scan
