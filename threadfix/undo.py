"""Undo a repair from its journal: put each repaired thread back the way it was, when that is still safe.

A thread is restored only while it holds exactly what the repair wrote (same hash). If the app changed
it since, undo refuses that thread (restoring would destroy the app's work) and says so; the others are
still restored; one that already holds its before-image is reported as already original. Each store
kind restores its own entries (a file in one atomic replacement).
"""

from __future__ import annotations

import importlib
import os
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from threadfix.errors import ThreadfixError
from threadfix.journal import Entry, UndoOutcome, digest, read_journal
from threadfix.stores.atomic import Fingerprint, Rewriter
from threadfix.stores.files import _Lines

#: store kind -> "module:function" that undoes a list of that store's entries for one path
UNDOERS = {
    "file": "threadfix.undo:undo_file",
    "sqlite": "threadfix.stores.sqlite:undo_entries",
    "postgres": "threadfix.stores.postgres:undo_entries",
}


def undo(journal: Path) -> Iterator[UndoOutcome]:
    """Undo every entry of ``journal``, store by store."""
    grouped: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for entry in read_journal(journal):
        grouped[(entry.store, entry.path)].append(entry)
    for (kind, path), entries in grouped.items():
        target = UNDOERS.get(kind)
        if target is None:
            for entry in entries:
                yield UndoOutcome(entry.address, "refused", f"unknown store kind {kind!r}")
            continue
        module, _, function = target.partition(":")
        try:
            yield from getattr(importlib.import_module(module), function)(path, entries)
        except ThreadfixError as exc:
            for entry in entries:
                yield UndoOutcome(entry.address, "refused", str(exc))


def undo_file(path: str, entries: list[Entry]) -> Iterator[UndoOutcome]:
    """Restore threads of one JSON/JSONL file in a single atomic replacement."""
    if not os.path.exists(path):
        for entry in entries:
            yield UndoOutcome(entry.address, "missing", "the file no longer exists")
        return
    fingerprint = Fingerprint.of(os.stat(path))
    splices: list[tuple[int, int, bytes]] = []
    outcomes: list[UndoOutcome] = []
    by_line = {entry.locator["line"]: entry for entry in entries if "line" in entry.locator}
    for entry in entries:
        if "line" not in entry.locator:
            with open(path, "rb") as handle:
                current = handle.read()
            outcomes.append(_decide(entry, current, lambda e=entry, size=len(current): splices.append((0, size, e.before))))
    if by_line:
        with open(path, "rb") as handle:
            for number, start, line in _Lines(handle, 1 << 40):
                entry = by_line.pop(number, None)
                if entry is None or line is None:
                    continue
                content = line.rstrip(b"\r\n")
                outcomes.append(_decide(entry, content, lambda e=entry, s=start, n=len(content): splices.append((s, s + n, e.before))))
        outcomes.extend(UndoOutcome(e.address, "missing", "the line is no longer in the file") for e in by_line.values())
    if splices:
        rewriter = Rewriter(Path(path), fingerprint)
        try:
            for start, end, data in sorted(splices):
                rewriter.splice(start, end, data)
            rewriter.commit()
        except BaseException:
            rewriter.abort()
            raise
    yield from outcomes


def _decide(entry: Entry, current: bytes, restore) -> UndoOutcome:
    found = digest(current)
    if found == entry.after_sha256:
        restore()
        return UndoOutcome(entry.address, "restored")
    if found == digest(entry.before):
        return UndoOutcome(entry.address, "already_original", "it already holds what it held before the repair")
    return UndoOutcome(entry.address, "refused", "it changed after the repair; restoring it would lose those changes")
