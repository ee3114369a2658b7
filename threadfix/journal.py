"""The before-image of every thread a repair changed, so that ``threadfix undo`` can put it back.

A journal is JSON lines, mode 0600 in a 0700 folder, created with ``O_EXCL|O_NOFOLLOW`` (a planted
symlink is refused, never followed). Entries are written and synced *before* the store they describe is
changed. Undo restores a thread only while it still holds exactly what the repair wrote (its hash), and
refuses, per thread, when the app changed it since.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from msgspec import Struct, field

from threadfix.errors import InputError, StoreError
from threadfix.jsonio import dumps_os_strings, loads_os_strings

FORMAT = "threadfix-journal"
VERSION = 1
#: bytes of a before-image base64-encoded at a time (a multiple of 3: the slices' encodings join up)
BASE64_SLICE = 3 * 2**18


def name_token() -> str:
    """The random part of a journal's name (tests replace it to plant links at a known name)."""
    return os.urandom(4).hex()


def default_folder() -> Path:
    """Where journals go unless ``--journal-dir`` says otherwise (XDG state home)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "threadfix" / "journal"


#: bytes hashed by the interpreter's own SHA-256 before OpenSSL's is loaded for the rest (see :func:`digest`)
BUILTIN_DIGEST_BYTES = 2 * 2**20
_builtin_digested = 0


def digest(data: bytes) -> str:
    """The SHA-256 of ``data``, as hex.

    The first few MiB a process hashes go through the interpreter's own SHA-256: ``hashlib`` loads OpenSSL, which
    costs a repair 3-8 ms of start-up, more than a folder's few changed files take to hash (issue #28). Past
    BUILTIN_DIGEST_BYTES, OpenSSL's, several times faster on large stores. The digest is the same either way."""
    global _builtin_digested
    if _builtin_digested < BUILTIN_DIGEST_BYTES:
        sha256 = _builtin_sha256()
        if sha256 is not None:
            _builtin_digested += len(data)
            return sha256(data).hexdigest()
    import hashlib  # only a repair that writes needs it: kept out of every other command's start-up

    return hashlib.sha256(data).hexdigest()


@cache
def _builtin_sha256() -> Any:
    """The interpreter's own ``sha256`` (``_sha2`` from Python 3.12, ``_sha256`` before), or None in a build
    without it (then OpenSSL's, through hashlib)."""
    for name in ("_sha2", "_sha256"):
        try:
            return __import__(name).sha256
        except (ImportError, AttributeError):
            continue
    return None


class Entry(Struct, frozen=True):
    """One changed thread: where it is, what it was, and a hash of what the repair wrote."""

    store: str  # "file" or "sqlite"
    path: str  # the real path of the file or database
    address: str  # the printable thread address
    before: bytes
    after_sha256: str
    #: how to find the thread again: {"line": N} for a JSONL line, {} for a whole file, row keys for SQLite
    locator: dict[str, Any] = field(default_factory=dict)

    def json_parts(self) -> Iterator[bytes]:
        """The entry as one JSON line, in pieces: the before-image is base64-encoded a slice at a time, so a
        large thread is never held over again whole (encoded, then as text, then as the line)."""
        import binascii

        head = dumps_os_strings({
            "store": self.store, "path": self.path, "address": self.address, "locator": self.locator,
            "before_sha256": digest(self.before), "after_sha256": self.after_sha256,
        })
        yield head[:-1] + b',"before":"'  # (base64 needs no JSON escaping)
        before = memoryview(self.before)
        for at in range(0, len(before), BASE64_SLICE):
            yield binascii.b2a_base64(before[at:at + BASE64_SLICE], newline=False)
        yield b'"}\n'

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Entry:
        import base64

        return cls(value["store"], value["path"], value["address"], base64.b64decode(value["before"]),
                   value["after_sha256"], value.get("locator") or {})


class Journal:
    """An append-only journal file, created on first use."""

    def __init__(self, folder: Path, argv: list[str] | None = None) -> None:
        self.folder = folder
        self.argv = argv or []
        self.path: Path | None = None
        self._fd: int | None = None
        self._broken = False

    def _create(self) -> None:
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the journal folder ({exc.strerror})", str(self.folder)) from None
        if self.folder.is_symlink():
            raise StoreError("the journal folder is a symlink; refusing to write through it", str(self.folder))
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        for attempt in range(100):
            # random, not a counter: a batch job may run many repairs per second in one process
            name = f"repair-{stamp}-{os.getpid()}-{name_token()}.jsonl"
            path = self.folder / name
            try:
                self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND, 0o600)
            except FileExistsError:
                continue
            except OSError as exc:
                raise StoreError(f"cannot create the journal ({exc.strerror})", str(path)) from None
            self.path = path
            header = {"format": FORMAT, "version": VERSION, "created": stamp, "argv": self.argv}
            try:
                self._append([(dumps_os_strings(header) + b"\n",)])
            except StoreError:  # a journal without its header is no journal: start afresh next time
                self.close()
                self.path = None
                try:
                    path.unlink(missing_ok=True)
                except OSError:
                    pass
                raise
            return
        raise StoreError("cannot find a free journal name", str(self.folder))

    def record(self, entries: list[Entry]) -> None:
        """Append and sync ``entries`` (call before changing the store)."""
        if not entries:
            return
        if self._fd is None:
            self._create()
        self._append(entry.json_parts() for entry in entries)

    def _append(self, lines: Iterable[Iterable[bytes]]) -> None:
        """Append whole lines, each given in pieces, and sync; on failure cut the journal back to its last whole
        entry.

        A half-written entry would otherwise sit in front of the next store's entries, and ``undo`` refuses
        a journal with a damaged line in the middle.
        """
        if self._broken:
            raise StoreError("the journal could not be written earlier in this run, so nothing more is changed",
                             str(self.path))
        # (imported here: the stores package imports this module)
        from threadfix.fileio import write_all

        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            for line in lines:  # a piece at a time: a batch of large before-images is never copied whole
                for piece in line:
                    write_all(self._fd, piece)
            os.fsync(self._fd)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, start)
            except OSError:
                self._broken = True
            raise StoreError(f"cannot write the journal ({exc.strerror})", str(self.path)) from None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_journal(path: Path) -> Iterator[Entry]:
    """The entries of a journal, checking that it is one."""
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        raise InputError("no such file or folder", str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read it ({(exc.strerror or str(exc)).lower()})", str(path)) from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                value = loads_os_strings(line)
            except orjson.JSONDecodeError:
                if number > 1 and not line.endswith(b"\n"):
                    return  # cut short by a crash while it was written: its store was never changed
                raise InputError("is not a threadfix journal (a line is not JSON)", f"{path}:{number}") from None
            if number == 1:
                if not isinstance(value, dict) or value.get("format") != FORMAT:
                    raise InputError("is not a threadfix journal", str(path))
                continue
            try:
                yield Entry.from_json(value)
            except (KeyError, TypeError, ValueError):
                raise InputError("has a damaged entry", f"{path}:{number}") from None


class UndoOutcome(Struct, frozen=True):
    """What undo did to one journalled thread (each store's undo gives these)."""

    address: str
    #: restored | would_restore (a dry run) | already_original | refused | missing
    status: str
    message: str = ""


def restore_if_unchanged(entry: Entry, current: bytes, original: bytes, restore: Callable[[], Any]) -> UndoOutcome:
    """Undo one thread: ``restore()`` it only while it holds exactly what the repair wrote (``current`` hashes to
    the entry's after-image); one that holds ``original`` already counts as restored; any other was changed
    since, and restoring it would lose that change."""
    found = digest(current)
    if found == entry.after_sha256:
        restore()
        return UndoOutcome(entry.address, "restored")
    if found == digest(original):
        return UndoOutcome(entry.address, "already_original", "it already holds what it held before the repair")
    return UndoOutcome(entry.address, "refused", "it changed after the repair; restoring it would lose those changes")
