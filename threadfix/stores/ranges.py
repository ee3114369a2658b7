"""A byte range of a file of threads (one per line), as a ``--jobs`` part, and how its reader numbers its lines.

Messages name a thread ``file:LINE``, so the reader of a range must know the line it starts on: one past the
newlines of its file's earlier ranges. It counts its own range's lines as it reads them and posts the count in
its run's ledger (:class:`~threadfix.stores.base.PartLedger`), where the readers of the earlier ranges post
theirs, so no process reads the file twice; a count that does not come in time is counted from the file
instead: slower, never wrong.
"""

from __future__ import annotations

from pathlib import Path

from msgspec import Struct

from threadfix.stores.base import PartLedger

#: newlines are counted in chunks this size: small enough to stay in cache between the copy and the count
_COUNT_CHUNK = 1024 * 1024
#: newlines found one by one in a chunk before counting the rest of it byte by byte is cheaper
_FIND_LIMIT = 4096


class ByteRange(Struct, frozen=True):
    """Bytes ``[start, end)`` of a file, newline-aligned: a ``--jobs`` part of a JSONL file of threads."""

    start: int
    end: int


class FirstLine:
    """How the reader of the range starting at byte ``start`` of ``path`` learns the number of its first line:
    from its ledger (``None``: the range is read on its own), else by counting the newlines before it."""

    def __init__(self, path: Path | str, start: int, ledger: PartLedger | None) -> None:
        self.path, self.start, self.ledger = path, start, ledger
        self.posted = False

    def first_line(self, lines: int) -> int:
        """Post that the range holds ``lines`` lines; the line number it starts on."""
        self.posted = True
        before = None if self.ledger is None else self.ledger.post(lines)
        return 1 + (before if before is not None else count_lines_before(self.path, self.start))

    def abandon(self) -> None:
        """The range was not read through: the ranges after it count their lines for themselves."""
        if not self.posted and self.ledger is not None:
            self.ledger.abandon()
        self.posted = True


def count_lines_before(path: Path | str, end: int) -> int:
    """The newlines in the first ``end`` bytes of a file."""
    newlines, position = 0, 0
    chunk = bytearray(_COUNT_CHUNK)
    with open(path, "rb", buffering=0) as handle:
        while position < end:
            size = handle.readinto(memoryview(chunk)[: min(_COUNT_CHUNK, end - position)])
            if not size:
                break
            newlines += count_newlines(chunk, size)
            position += size
    return newlines


def count_newlines(chunk: bytes | bytearray, end: int) -> int:
    """``chunk.count(b"\\n", 0, end)``, several times faster on thread-sized lines: ``find`` jumps with memchr
    from line to line, while ``count`` steps byte by byte. Many short lines fall back to ``count``."""
    found = 0
    at = chunk.find(b"\n", 0, end)
    while at >= 0:
        found += 1
        if found == _FIND_LIMIT:
            return chunk.count(b"\n", 0, end)
        at = chunk.find(b"\n", at + 1, end)
    return found
