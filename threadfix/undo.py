"""Undo a repair from its journal: put each repaired thread back the way it was, when that is still safe.

A thread is restored only while it holds exactly what the repair wrote (same hash). If the app changed
it since, undo refuses that thread (restoring would destroy the app's work) and says so; the others are
still restored; one that already holds its before-image is reported as already original. Each store
kind restores its own entries (a file in one atomic replacement, a database in one transaction), found by
the kind its journal entries name (:func:`undoer`).
"""

from __future__ import annotations

import importlib
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

from threadfix.errors import ThreadfixError
from threadfix.journal import Entry, UndoOutcome, read_journal

def undoer(kind: str) -> Callable[[str, list[Entry]], Iterator[UndoOutcome]] | None:
    """The ``undo_entries(path, entries)`` of the store module whose journal entries are of ``kind``.

    Each store module that journals declares the kind it writes (``JOURNAL_KIND``) beside the function that
    puts its entries back, so a new store is undone with no table here to extend. A module whose optional
    dependency is missing (a database driver) cannot have written the entries: it is skipped.
    """
    import pkgutil

    import threadfix.stores

    for found in pkgutil.iter_modules(threadfix.stores.__path__):
        try:
            module = importlib.import_module(f"threadfix.stores.{found.name}")
        except ImportError:
            continue
        if getattr(module, "JOURNAL_KIND", None) == kind:
            return module.undo_entries
    return None


def undo(journal: Path | str, *, dry_run: bool = False) -> Iterator[UndoOutcome]:
    """Undo every entry of ``journal``, store by store; with ``dry_run``, decide each thread the same way and
    write nothing (a thread that would be restored is ``would_restore``)."""
    journal = Path(journal)
    grouped: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for entry in read_journal(journal):
        grouped[(entry.store, entry.path)].append(entry)
    for (kind, path), entries in grouped.items():
        undo_entries = undoer(kind)
        if undo_entries is None:
            for entry in entries:
                yield UndoOutcome(entry.address, "refused", f"unknown store kind {kind!r}")
            continue
        try:
            for outcome in undo_entries(path, entries, dry_run=dry_run):
                yield UndoOutcome(outcome.address, "would_restore", outcome.message) \
                    if dry_run and outcome.status == "restored" else outcome
        except ThreadfixError as exc:
            for entry in entries:
                yield UndoOutcome(entry.address, "refused", str(exc))
