"""Strands ``FileSessionManager`` folders: a thread is one agent's ``messages/message_<N>.json`` files in N order.

The layout (strands-agents ``FileSessionManager``)::

    <storage>/session_<id>/session.json
    <storage>/session_<id>/agents/agent_<id>/agent.json          (conversation_manager_state...)
    <storage>/session_<id>/agents/agent_<id>/messages/message_<N>.json

Each file is a ``SessionMessage`` (``{"message": {role, content}, "message_id": N, "redact_message",
"created_at", "updated_at"}``); Strands reads them sorted by N, skipping the conversation manager's
``removed_message_count`` first ones, and sends the ``redact_message`` of a file that has one. Content
blocks are Bedrock Converse shapes, so the ``bedrock`` dialect reads them: every ``toolUse`` answered by a
``toolResult`` in the next message.

A repair writes what Strands writes. An unanswered call at the end gets the next file, a user message of
error results (as Strands' agent appends one when the next prompt arrives); a call in the middle gets a new
message right after it, as Strands' own restore (``_fix_broken_tool_use``) inserts one in memory, so every
later file is renumbered, its ``message_id`` with it (Strands numbers its next message from the last one);
a batch partly answered gets its missing results in the results message, which is rewritten as
``update_message`` would (``created_at`` kept). Files are written as Strands writes them (JSON indented by
2, a temporary file beside them, then a rename) and in an order a crash cannot break: later files first,
each rewritten with its new number under its old name and only then renamed up, into a name already
vacated; the new file last. At every point each message is in the folder once, in order, and no number the
app would take next is taken. The journal holds every file touched; undo runs the same steps backwards.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
from msgspec import Struct

from threadfix.errors import BusyError, InputError, StoreError, ThreadfixError
from threadfix.journal import Entry, UndoOutcome, digest
from threadfix.model import Address, Thread
from threadfix.stores.atomic import TEMP_PREFIX, fsync_folder
from threadfix.stores.base import Change, ReadProblem, Store, StoreWriter, parse_time
from threadfix.stores.frameworks import PendingWriter, place

PRESET = "Strands FileSessionManager messages"
#: the store kind of this module's journal entries (undo finds :func:`undo_entries` by it)
JOURNAL_KIND = "strands"
_MESSAGE_PREFIX, _SUFFIX = "message_", ".json"


def agent_folders(path: Path) -> list[Path] | None:
    """The agent folders a path names, when it is a Strands storage folder, a session or an agent; else None."""
    if (path / "agent.json").is_file() and (path / "messages").is_dir():
        return [path]
    if (path / "session.json").is_file() and (path / "agents").is_dir():
        return sorted(p for p in (path / "agents").iterdir() if p.name.startswith("agent_") and p.is_dir()
                      and (p / "messages").is_dir())
    sessions = sorted(p for p in path.iterdir() if p.name.startswith("session_") and (p / "session.json").is_file())
    if not sessions:
        return None
    return [agent for session in sessions for agent in agent_folders(session) or []]


def dumps(value: dict[str, Any]) -> bytes:
    """A file's bytes as ``FileSessionManager._write_file`` writes them."""
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")


class File(Struct):
    """One message file as read."""

    index: int
    raw: bytes
    value: dict[str, Any]


class Folder(Struct):
    """An agent's messages as read: the files the thread is (after the offset), the message each holds (the
    thread's items), and a digest of them all."""

    files: list[File]
    messages: list[Any]
    #: every message file's digest, by number, as read
    digests: dict[int, str]


class Renumbering(Struct):
    """The file operations a repair takes: files moved up (old index, new index, new bytes), files rewritten
    in place (index, new bytes), files created (index, bytes)."""

    moves: list[tuple[int, int, bytes]]
    edits: list[tuple[int, bytes]]
    creates: list[tuple[int, bytes]]


def _name(index: int) -> str:
    return f"{_MESSAGE_PREFIX}{index}{_SUFFIX}"


def _listing(messages: Path) -> tuple[list[tuple[int, Path]], list[ReadProblem]]:
    found, problems = [], []
    for entry in os.scandir(messages):
        name = entry.name
        if not (name.startswith(_MESSAGE_PREFIX) and name.endswith(_SUFFIX)):
            continue
        try:
            index = int(name[len(_MESSAGE_PREFIX):-len(_SUFFIX)])
        except ValueError:
            problems.append(ReadProblem(str(messages / name), "is not named message_<N>.json, which Strands "
                                        "cannot read; the agent's messages are left alone"))
            continue
        found.append((index, messages / name))
    return sorted(found), problems


def _file_digests(files: list[tuple[int, Path]]) -> dict[int, str]:
    """Each message file's digest, by its number (the whole folder, the files before the offset too)."""
    found = {}
    for index, path in files:
        try:
            found[index] = digest(path.read_bytes())
        except OSError:
            found[index] = "gone"
    return found


def _digest_files(files: dict[int, str]) -> str:
    return digest("\n".join(f"{index}:{sha}" for index, sha in sorted(files.items())).encode())


def _after(state: Folder, plan: Renumbering) -> dict[int, str]:
    """The folder's file digests once ``plan`` is carried out."""
    files = dict(state.digests)
    for old, _, _ in plan.moves:
        del files[old]
    for index, data in [(new, data) for _, new, data in plan.moves] + plan.edits + plan.creates:
        files[index] = digest(data)
    return files


class StrandsStore(Store):
    """One Strands agent's messages folder. ``--jobs`` reads it whole: it is one thread, whose message files are
    numbered as one history (a repair renumbers the files after a new one), so no cut of it is sound."""

    all_or_nothing = True

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.messages = folder / "messages"
        self.display = str(folder)
        self.description = f"{folder}: reading {PRESET}"

    def _offset(self) -> int:
        try:
            agent = orjson.loads((self.folder / "agent.json").read_bytes())
            removed = agent.get("conversation_manager_state", {}).get("removed_message_count", 0)
        except (OSError, orjson.JSONDecodeError, AttributeError) as exc:
            raise InputError(f"agent.json cannot be read ({exc})", str(self.folder / "agent.json")) from None
        return removed if isinstance(removed, int) and removed > 0 else 0

    def threads(self) -> Iterator[Thread | ReadProblem]:
        try:
            listing, problems = _listing(self.messages)
            offset = self._offset()
        except ThreadfixError as exc:
            yield ReadProblem(exc.where or self.display, exc.message)
            return
        except OSError as exc:
            yield ReadProblem(str(self.messages), f"cannot be read ({exc.strerror})")
            return
        if problems:
            yield from problems
            return
        files, items, times = [], [], []
        for index, path in listing[offset:]:
            if path.is_symlink():
                yield ReadProblem(str(path), "is a symlink, which Strands refuses to read; the agent's messages "
                                  "are left alone")
                return
            try:
                raw = path.read_bytes()
                value = orjson.loads(raw)
                message = value["redact_message"] if value.get("redact_message") is not None else value["message"]
                content = message["content"]
            except (OSError, orjson.JSONDecodeError, KeyError, TypeError) as exc:
                yield ReadProblem(str(path), f"is not a Strands session message ({type(exc).__name__}); the "
                                  "agent's messages are left alone")
                return
            files.append(File(index, raw, value))
            items.append(message)
            times.extend(t for key in ("updated_at", "created_at") if (t := parse_time(value.get(key))) is not None)
        state = Folder(files, items, _file_digests(listing))
        raw = orjson.dumps({_name(f.index): f.value for f in files}, option=orjson.OPT_INDENT_2)
        yield Thread(Address(self.display), items, raw=raw,
                     modified=max(times) if times else None, dialect="bedrock", locator=state)

    def change(self, thread: Thread, new_items: list[Any]) -> Change:
        """The renumbering as the change's operations, and the digests of the files it was planned on as its
        precondition (the folder is written only while it holds exactly those)."""
        state: Folder = thread.locator
        plan = _renumber(state, new_items)
        return Change(Thread(thread.address, []), _shown(state, plan), ops=plan, precondition=state.digests)

    def encode(self, thread: Thread, new_items: list[Any]) -> bytes:
        return self.change(thread, new_items).data

    def writer(self, dest: Path | None = None) -> StoreWriter:
        if dest is not None:
            raise InputError("--output cannot take a copy of a Strands session folder; repair it in place "
                             "(journaled, undoable) or use --dry-run", self.display)
        return _Writer(self)

    def entry(self, thread: Thread, change: Change) -> Entry | None:
        state: Folder = thread.locator
        plan: Renumbering = change.ops
        by_index = {f.index: f for f in state.files}
        touched = [old for old, _, _ in plan.moves] + [n for n, _ in plan.edits]
        before = orjson.dumps({str(n): by_index[n].raw.decode("utf-8") for n in touched})
        return Entry(JOURNAL_KIND, os.path.realpath(self.folder), str(thread.address), before, digest(change.data), {
            "moves": [[old, new, digest(data)] for old, new, data in plan.moves],
            "edits": [[n, digest(data)] for n, data in plan.edits],
            "creates": [[n, digest(data)] for n, data in plan.creates],
            "before": _digest_files(state.digests), "after": _digest_files(_after(state, plan))})


def _shown(state: Folder, plan: Renumbering) -> bytes:
    """The agent's message files once the plan is carried out, by name, for ``--diff`` and the journal."""
    files = {_name(f.index): f.value for f in state.files}
    for old, _, _ in plan.moves:
        del files[_name(old)]
    for index, data in [(new, data) for _, new, data in plan.moves] + plan.edits + plan.creates:
        files[_name(index)] = orjson.loads(data)
    return orjson.dumps(dict(sorted(files.items(), key=lambda kv: int(kv[0][len(_MESSAGE_PREFIX):-len(_SUFFIX)]))),
                        option=orjson.OPT_INDENT_2)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _renumber(state: Folder, new_items: list[Any]) -> Renumbering:
    """The file operations that make the folder hold ``new_items``: each message mapped to the file it came
    from (the same object), a file whose blocks it keeps and adds to (rewritten), or none (a new file)."""
    files = state.files
    placed = place(new_items, state.messages, "content", lambda b: isinstance(b, dict) and "toolResult" in b,
                   "a Strands message file")
    for source, content in placed:
        if source is not None and content is not None and files[source].value.get("redact_message") is not None:
            raise InputError(f"{_name(files[source].index)} is redacted; a repair would change it; left alone")
    moves, edits, creates = [], [], []
    first = files[0].index if files else 0
    for position, (source, content) in enumerate(placed):
        index = first + position
        if source is None:
            message = {"role": "user", "content": content, "tracking_id": str(uuid.uuid4())}
            now = _now()
            creates.append((index, dumps({"message": message, "message_id": index, "redact_message": None,
                                          "created_at": now, "updated_at": now})))
            continue
        file = files[source]
        if content is None and index == file.index:
            continue
        value = dict(file.value)
        value["message_id"] = index
        if content is not None:
            value["message"] = {**value["message"], "content": content}
            value["updated_at"] = _now()
        data = dumps(value)
        if index == file.index:
            edits.append((index, data))
        else:
            moves.append((file.index, index, data))
    if files and any(f.index != first + i for i, f in enumerate(files)):
        raise InputError("its message files are not numbered one after another; left alone")
    return Renumbering(moves, edits, creates)


def _write(path: Path, data: bytes, *, new: bool) -> None:
    """Write ``data`` to ``path`` as Strands does (a temporary file beside it, then a rename); ``new``: the
    name must not be taken (checked, then linked, so that a file someone put there is never replaced)."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if new:
            os.link(temp, path)
            os.unlink(temp)
        else:
            if path.is_symlink():
                raise StoreError("is a symlink; refusing to write through it", str(path))
            os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _move(messages: Path, old: int, new: int, data: bytes) -> None:
    """Give the file ``old`` its new number: rewritten under its old name first, then renamed up into a
    vacated name (a crash between leaves it once, in order, numbered for what comes after it)."""
    target = messages / _name(new)
    if target.exists():
        raise BusyError(f"{target.name} appeared while the folder was being renumbered; run again", str(messages))
    _write(messages / _name(old), data, new=False)
    os.rename(messages / _name(old), target)


def apply(messages: Path, plan: Renumbering) -> None:
    """Carry out a renumbering in the crash-safe order: moves from the last file down, then rewrites, then
    the new files."""
    for old, new, data in sorted(plan.moves, reverse=True):
        _move(messages, old, new, data)
    for index, data in plan.edits:
        _write(messages / _name(index), data, new=False)
    for index, data in plan.creates:
        _write(messages / _name(index), data, new=True)
    fsync_folder(messages)


class _Writer(PendingWriter):
    """Writes each agent's files all at once after checking they are as read (the folder is the agent's)."""

    def commit(self) -> bool:
        store = self.store
        for change in self.pending:
            plan: Renumbering = change.ops
            listing, _ = _listing(store.messages)
            if _file_digests(listing) != change.precondition:
                raise BusyError("the app changed the agent's messages since they were read; nothing was written, "
                                "run again", store.display)
            try:
                apply(store.messages, plan)
            except OSError as exc:
                raise StoreError(f"cannot write the message files ({exc.strerror})", store.display) from None
            self.durable = True
        self.pending = []
        return True


def undo_entries(path: str, entries: list[Entry], *, dry_run: bool = False) -> Iterator[UndoOutcome]:
    """Put an agent's message files back: the new files deleted, rewritten ones restored, moved ones moved
    back down (from the first up, each into the name just vacated), while the folder holds exactly what the
    repair left (a message the app saved since is refused: taking the repair back would break the history
    under it)."""
    messages = Path(path) / "messages"
    for entry in reversed(entries):
        loc = entry.locator
        before = {int(k): v.encode("utf-8") for k, v in orjson.loads(entry.before).items()}
        listing, _ = _listing(messages) if messages.is_dir() else ([], [])
        now = _digest_files(_file_digests(listing))
        if now == loc["before"]:
            yield UndoOutcome(entry.address, "already_original", "it already holds what it held before the repair")
            continue
        if now == loc["after"] and dry_run:
            yield UndoOutcome(entry.address, "restored")
        elif now == loc["after"]:
            for n, _ in loc["creates"]:
                os.unlink(messages / _name(n))
            for n, _ in loc["edits"]:
                _write(messages / _name(n), before[n], new=False)
            for old, new, _ in sorted(loc["moves"]):
                if (messages / _name(old)).exists():
                    raise StoreError(f"{_name(old)} is taken; the rest of this undo was not done", str(messages))
                _write(messages / _name(new), before[old], new=False)
                os.rename(messages / _name(new), messages / _name(old))
            fsync_folder(messages)
            yield UndoOutcome(entry.address, "restored")
        else:
            yield UndoOutcome(entry.address, "refused", "the agent's messages changed after the repair; restoring "
                              "them would lose those changes")
