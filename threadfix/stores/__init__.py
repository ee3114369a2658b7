"""Where threads live. ``open_stores`` turns a command-line path into stores of the right kind.

A store is two choices: its *medium*, where the bytes live (:class:`~threadfix.stores.base.Medium`: a file or
stdin, a SQLite database), registered in :data:`MEDIA`; and its *container*, how threads sit in it (a JSON
document, JSONL of threads or of one thread's items, a row per thread, a row per item), which the medium's
store reads (:mod:`threadfix.stores.document`, :mod:`threadfix.stores.files`, :mod:`threadfix.stores.table`).
See docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
import importlib
import os
from functools import partial
from pathlib import Path
from typing import Any

from msgspec import Struct

from threadfix.errors import InputError, ThreadfixError
from threadfix.given import URL_SCHEMES
from threadfix.model import Problem
from threadfix.stores.base import Medium, PartLedger, ReadProblem, Shard, Store, StoreWriter  # noqa: F401 - re-exported
from threadfix.stores.files import (
    DATABASE_SUFFIXES,
    DEFAULT_MAX_DOC_BYTES,
    FileStore,
    FolderEntry,
    UnopenedDatabase,
    folder_file_store,
    is_sqlite,
    not_a_database,
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


class RegisteredMedium(Struct, frozen=True):
    """A medium's place in :data:`MEDIA`: a cheap test of the paths it claims, and the module holding it."""

    name: str
    #: whether a command-line path (or URL) is this medium's; must not import the module
    claims: Callable[[str], bool]
    #: the module whose ``MEDIUM`` it is (imported on first use)
    module: str

    def medium(self) -> Medium:
        return importlib.import_module(self.module).MEDIUM


def _database_file(spec: str) -> bool:
    return spec != "-" and Path(spec).is_file() and is_sqlite(Path(spec))


#: the media, asked in order; the first that claims a path opens it (files take anything left)
MEDIA: list[RegisteredMedium] = [
    RegisteredMedium("postgres", lambda spec: spec.startswith(URL_SCHEMES), "threadfix.stores.postgres"),
    RegisteredMedium("sqlite", _database_file, "threadfix.stores.sqlite"),
    RegisteredMedium("file", lambda spec: True, "threadfix.stores.files"),
]


def medium_of(spec: str) -> Medium:
    """The medium that holds what ``spec`` names (not a folder: :func:`walk_folder`)."""
    return next(entry for entry in MEDIA if entry.claims(spec)).medium()


def open_stores(spec: str, options: StoreOptions = StoreOptions(), stdin: Any = None) -> Iterator[Store]:
    """Every store a path names: a JSON/JSONL file, ``-`` (stdin), a SQLite database, or a folder of them; or a
    PostgreSQL database by its URL (``postgresql://``)."""
    path = Path(spec)
    if spec != "-" and path.is_dir():
        for entry in walk_folder(spec):
            if entry.agents is not None:  # a Strands session folder: one store per agent, not its files
                from threadfix.stores.strands_folder import StrandsStore

                yield from (StrandsStore(agent) for agent in entry.agents)
            else:
                yield open_folder_entry(entry, options)
        return
    if spec != "-" and spec.endswith(DATABASE_SUFFIXES) and Path(spec).is_file():
        refused = not_a_database(Path(spec))  # named like a database: read as one, or said why not (never as JSON)
        if refused is not None:
            raise InputError(refused, spec)
    yield from medium_of(spec).open(spec, options, stdin)


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


def open_found(spec: str, refused: str | None, options: StoreOptions, many: bool = False) -> Store:
    """The store of a file a folder walk found (a ``--jobs`` input's, :func:`inputs`), read whole: by its suffix, or
    refused with ``refused``; ``many``: one of many thread files in its folder, as the walk found it."""
    return open_folder_entry(FolderEntry(str(Path(spec)), refused=refused, many=many), options)


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



class Input(Struct, frozen=True):
    """One input of a run as ``--jobs`` plans it: how a worker reads it whole (its :class:`Shard`), and how many
    bytes it holds, which decides whether it is worth cutting (by :func:`cut`: the medium that holds it says how)."""

    whole: Shard
    #: 0: read whole whatever its size (stdin, a path that names nothing, a Strands folder, a refused file)
    size: int = 0


def inputs(spec: str) -> Iterator[Input]:
    """What ``spec`` names as ``--jobs`` inputs: itself, or each store a folder walk finds in it (the walk's own
    rules: symlinks out of the folder refused)."""
    path = Path(spec)
    if spec == "-":
        yield Input(Shard(spec))
    elif not path.exists():  # a store no file holds (a database by its URL) is as big as its medium says
        yield Input(Shard(spec), medium_of(spec).size(spec))  # (a path that names nothing: 0; its reader says so)
    elif not path.is_dir():
        yield Input(Shard(spec), _file_size(path))
    else:
        yield from map(_folder_input, walk_folder(spec))


def _folder_input(entry: FolderEntry) -> Input:
    """A folder walk's entry as an input: a Strands folder is opened as if named (one store per agent, each read
    whole), a database as if named (it is one by its header), a thread file by the walk's suffix rules."""
    found = str(entry.where)
    if entry.agents is not None:
        return Input(Shard(found))
    if entry.refused is not None:
        return Input(Shard(found, in_folder=True, refused=entry.refused))
    return Input(Shard(found, in_folder=not entry.database, many=entry.many), _file_size(found))


def _file_size(path: Path | str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # gone since the walk: its reader says so


def cut(spec: str, parts: int, options: StoreOptions = StoreOptions(), by_key: bool = False) -> list[Any] | None:
    """What ``spec`` names cut into about ``parts`` parts for ``--jobs`` workers, by the medium that holds it (a
    JSONL file of threads into byte ranges, a database's table into row id ranges or, ``by_key``, into runs of
    thread keys: lint and report), each part the store's own plain data; None when it is read whole."""
    return medium_of(spec).cut(spec, parts, options, by_key)


def open_part(spec: str, part: Any, options: StoreOptions, ledger: PartLedger | None = None
              ) -> Iterator[Store | Problem]:
    """The stores of ``spec`` reopened by its medium, each restricted to ``part`` (what :func:`cut` or a store's
    :meth:`~Store.parts_to_repair` made; ``ledger``: its place in its run's ledger); a store that cannot be opened
    as a Problem, as :func:`iter_stores` gives it."""
    try:
        for store in medium_of(spec).reopen(spec, options):
            if not isinstance(part, store.part_types):  # (the input changed kind since the cut, or is gone)
                refused = store.refusal()
                yield Problem(refused.where, refused.message)
                continue
            store.restrict(part, ledger)
            yield store
    except ThreadfixError as exc:
        yield Problem(exc.where or spec, exc.message, exc.exit_code)


__all__ = ["MEDIA", "FileStore", "Input", "Medium", "ReadProblem", "RegisteredMedium", "Store", "StoreOptions", "StoreWriter",
           "cut", "inputs", "is_sqlite", "iter_stores", "medium_of", "open_folder_entry", "open_found", "open_part", "open_stores", "walk_folder"]
