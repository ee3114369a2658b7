"""A list that keeps its newest items in memory and the older ones in a temporary file.

Repair holds back what happened to each thread of a store until the store is committed, so that a store
retried after a busy error is reported once, and one whose commit failed is reported as not written. A
store with hundreds of thousands of stuck threads would hold hundreds of MB of outcomes (more with
``--diff``, which keeps each changed thread's bytes twice); past a budget they wait on disk instead, and
memory stays flat however many threads change.

The file is an anonymous temporary file (no name another process could open), read back once, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Generic, TypeVar

T = TypeVar("T")

#: bytes of items kept in memory before the older ones are written out
SPILL_BYTES = 8 * 1024 * 1024


class SpillList(Generic[T]):
    """Append-only, read once in order; an item can still be changed (:meth:`update`) after it is written out."""

    def __init__(self, budget: int | None = None) -> None:
        self.budget = SPILL_BYTES if budget is None else budget
        self._memory: list[T] = []
        self._weight = 0
        #: how many items are in the file, all older than those in memory
        self._spilled = 0
        self._file: IO[bytes] | None = None
        #: the byte length of each chunk in the file, one chunk written per spill
        self._chunks: list[int] = []
        #: changes to items already in the file, applied as they are read back
        self._updates: dict[int, list[Callable[[T], T]]] = {}

    def __len__(self) -> int:
        return self._spilled + len(self._memory)

    def append(self, item: T, weight: int) -> int:
        """Add ``item``, which costs about ``weight`` bytes held; its index, for :meth:`update`."""
        self._memory.append(item)
        self._weight += weight
        if self._weight > self.budget:
            self._spill()
        return len(self) - 1

    def update(self, index: int, change: Callable[[T], T]) -> None:
        """Replace the item at ``index`` with ``change(item)``, now or when it is read back."""
        if index >= self._spilled:
            self._memory[index - self._spilled] = change(self._memory[index - self._spilled])
        else:
            self._updates.setdefault(index, []).append(change)

    def __iter__(self) -> Iterator[T]:
        index = 0
        if self._file is not None:
            import pickle

            self._file.seek(0)
            for length in self._chunks:
                for item in pickle.loads(_read_exactly(self._file, length)):
                    for change in self._updates.get(index, ()):
                        item = change(item)
                    index += 1
                    yield item
        yield from self._memory

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _spill(self) -> None:
        """Write the items in memory out as one chunk; when that fails (no room), keep them in memory."""
        import pickle  # (only a store with many changed threads comes here: kept out of every start-up)
        import tempfile

        from threadfix.fileio import write_all

        try:
            # (JSON nested deeper than the pickler recurses, from a hostile thread, cannot go out)
            chunk = pickle.dumps(self._memory, protocol=pickle.HIGHEST_PROTOCOL)
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="threadfix-", buffering=0)  # noqa: SIM115 - open until close()
            self._file.seek(sum(self._chunks))  # (after what a failed spill may have left half written)
            write_all(self._file.fileno(), chunk)
        except (OSError, RecursionError, pickle.PicklingError):
            self.budget = 2**63  # as before there was a file: what is written stays, the rest in memory
            return
        self._chunks.append(len(chunk))
        self._spilled += len(self._memory)
        self._memory = []
        self._weight = 0


def _read_exactly(file: IO[bytes], length: int) -> bytes:
    data = file.read(length)
    while len(data) < length:
        more = file.read(length - len(data))
        if not more:
            raise OSError("the spill file was cut short")
        data += more
    return data
