"""Where threads live. ``open_stores`` turns a command-line path into stores of the right kind."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from msgspec import Struct

from threadfix.errors import ThreadfixError
from threadfix.model import Problem
from threadfix.stores.base import ReadProblem, Store, StoreWriter
from threadfix.stores.files import (
    DEFAULT_MAX_DOC_BYTES,
    FileStore,
    FolderEntry,
    UnopenedDatabase,
    folder_file_store,
    is_sqlite,
    open_file_stores,
    walk_folder,
)


class StoreOptions(Struct, frozen=True):
    """How to read stores; the SQLite fields only matter for databases."""

    max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES
    dialect: str | None = None
    #: SQLite layout: one row per thread (json_column) or one row per item (thread/order/item columns)
    table: str | None = None
    id_column: str | None = None
    json_column: str | None = None
    thread_column: str | None = None
    order_column: str | None = None
    item_column: str | None = None
    #: seconds to wait for an app's write lock
    busy_timeout: float = 5.0
    #: threads per write transaction
    batch_size: int = 50
    #: open databases for writing (repair) rather than read-only
    writable: bool = False
    #: processes a store may spread its own work over (repair of a SQLite table of one item per row)
    jobs: int = 1
    #: how it spreads it, handed down by whoever owns the processes (stores never start them themselves):
    #: ``spread(work, tasks, jobs, shared)`` -> ``[work(task, shared) for task in tasks]`` or None when a worker
    #: failed (see :func:`threadfix.parallel.spread_for_store`); None: in this process
    spread: Any = None


def open_stores(spec: str, options: StoreOptions = StoreOptions(), stdin: Any = None) -> Iterator[Store]:
    """Every store a path names: a JSON/JSONL file, ``-`` (stdin), a SQLite database, or a folder of them; or a
    PostgreSQL database by its URL (``postgresql://``)."""
    if spec.startswith(("postgresql://", "postgres://")):
        from threadfix.stores.postgres import open_postgres_store

        yield open_postgres_store(spec, options)
        return
    path = Path(spec)
    if spec != "-" and path.is_dir():
        for entry in walk_folder(spec):
            yield open_folder_entry(entry, options)
        return
    if spec != "-" and path.is_file() and is_sqlite(path):
        from threadfix.stores.sqlite import open_sqlite_store

        yield open_sqlite_store(path, options)
        return
    yield from open_file_stores(spec, max_doc_bytes=options.max_doc_bytes, dialect=options.dialect, stdin=stdin)


def open_folder_entry(entry: FolderEntry, options: StoreOptions) -> Store:
    """The store of a file a folder walk found. A database that cannot be opened is still a store, whose read
    says why: the walk goes on to the folder's other files."""
    if not entry.database or entry.refused is not None:
        return folder_file_store(entry, max_doc_bytes=options.max_doc_bytes, dialect=options.dialect)
    from threadfix.stores.sqlite import open_sqlite_store

    reopen = partial(open_sqlite_store, entry.path, options)
    try:
        return reopen()
    except ThreadfixError as exc:
        return UnopenedDatabase(entry.path, exc, reopen)


def iter_stores(specs: Iterable[str], options: StoreOptions, stdin: Any = None,
                on_store: Callable[[Store], None] | None = None) -> Iterator[Store | Problem]:
    """Every store the paths name; ``on_store`` sees each as it opens (to show what was detected)."""
    for spec in specs:
        try:
            for store in open_stores(spec, options, stdin=stdin):
                if on_store is not None:
                    on_store(store)
                yield store
        except ThreadfixError as exc:
            yield Problem(exc.where or spec, exc.message, exc.exit_code)


__all__ = ["FileStore", "ReadProblem", "Store", "StoreOptions", "StoreWriter", "is_sqlite", "iter_stores", "open_folder_entry",
           "open_stores", "walk_folder"]
