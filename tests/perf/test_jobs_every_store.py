"""``--jobs 1`` and ``--jobs N`` give the same result on every kind of store: the same stdout, stderr and exit
code, the same bytes written, the same journal, and an undo that puts back the same bytes.

Each store sits in a folder beside a JSONL file large enough (with the cut floor patched down) to be cut into
byte ranges, so that ``--jobs 3`` really runs workers: the store is cut as it cuts itself, or read whole."""

from __future__ import annotations

import json
import pickle
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from threadfix import batch, parallel
from threadfix.model import Problem
from threadfix.stores import StoreOptions, iter_stores
from threadfix.stores.base import Change
from tests.perf.test_jobs import _database, _items_database, _run, _store, _thread, small_shards  # noqa: F401


def _jsonl_items(folder: Path) -> None:
    items = _thread(random.Random(1), 1)["items"]
    items.append({"type": "function_call", "call_id": "open", "name": "shell", "arguments": "{}"})
    (folder / "one.jsonl").write_bytes(b"\n".join(orjson.dumps(item) for item in items * 3) + b"\n")


def _documents(folder: Path) -> None:
    root = Path(__file__).resolve().parents[2] / "sample_threads"
    for sample in ("openai-chat", "anthropic", "gemini"):
        shutil.copytree(root / sample, folder / sample)


def _claude_code(folder: Path) -> None:
    from tests.agents.sessions import Transcript

    t = Transcript()
    t.user("go")
    t.call("toolu_a", "msg_1")
    t.write(folder / "claude" / "session.jsonl")


def _codex(folder: Path) -> None:
    from tests.agents.sessions import rollout

    rollout(folder / "codex" / "rollout-2030-03-17T10-00-00-x.jsonl", [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list it"}]},
        {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "call_1"}])


def _gemini_cli(folder: Path) -> None:
    from tests.agents.test_gemini import HEADER, gemini, jsonl, tool_call, user

    (folder / "gemini").mkdir()
    jsonl(folder / "gemini" / "session-2030-03-17T10-00-7d1c2b9e.jsonl",
          [HEADER, user(1, "read it"), gemini(2, [tool_call("c1", True), tool_call("c2", False)]), user(3, "again")])


def _llm(folder: Path) -> None:
    pytest.importorskip("llm")
    from tests.frameworks.llm_app import write_stuck

    write_stuck(folder / "logs.db")


def _langgraph(folder: Path) -> None:
    pytest.importorskip("langgraph.checkpoint.sqlite")
    from tests.frameworks.langgraph_app import write_stuck

    write_stuck(folder / "checkpoints.db")


def _strands(folder: Path) -> None:
    pytest.importorskip("strands")
    from tests.frameworks.strands_app import write_stuck

    write_stuck(folder / "sessions")


def _adk(folder: Path) -> None:
    pytest.importorskip("google.adk")
    from tests.frameworks.adk_app import write_stuck

    write_stuck(folder / "sessions.db")


#: each kind of store, and how to write one into a folder
KINDS: dict[str, Callable[[Path], object]] = {
    "jsonl of threads": lambda folder: _store(folder / "threads.jsonl", threads=160, seed=5),
    "jsonl of one thread's items": _jsonl_items,
    "json documents": _documents,
    "sqlite, a thread per row": lambda folder: _database(folder / "c.db", threads=120),
    "sqlite, an item per row": lambda folder: _items_database(folder / "i.db", threads=80, odd=True),
    "claude code session": _claude_code,
    "codex rollout": _codex,
    "gemini cli session": _gemini_cli,
    "llm logs": _llm,
    "langgraph checkpoints": _langgraph,
    "strands session folder": _strands,
    "adk sessions": _adk,
}
#: stores ``--jobs`` cuts into parts, each as it cuts itself; the others are read whole (one thread, or a file whose
#: lines are one thread's items; an item table is cut for repair only after its screen)
CUT = {"jsonl of threads", "sqlite, a thread per row", "llm logs", "langgraph checkpoints", "adk sessions"}
#: stores whose repair writes the time it ran or a fresh random id (as their library does): two runs never write
#: the same bytes, whatever the jobs; their runs are compared by what they say and by what undo puts back
STAMPED = {"langgraph checkpoints", "strands session folder", "adk sessions"}
#: rows an undo leaves touched on purpose: ADK's session row keeps the time of its last change (the undo), as ADK
#: compares it to tell a session changed under it
TOUCHED = {"adk sessions": 'INSERT INTO "sessions" '}


def _files(folder: Path) -> dict[str, bytes | list[str]]:
    """Every file's bytes; a database's rows, as SQL (its pages may be laid out anew by a write and its undo)."""
    import sqlite3

    found: dict[str, bytes | list[str]] = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".db":
            conn = sqlite3.connect(path)
            try:
                found[str(path.relative_to(folder))] = list(conn.iterdump())
            finally:
                conn.close()
        elif path.is_file() and not path.name.endswith(("-wal", "-shm", "-journal")):
            found[str(path.relative_to(folder))] = path.read_bytes()
    return found


def _untouched(files: dict[str, bytes | list[str]], kind: str) -> dict[str, bytes | list[str]]:
    touched = TOUCHED.get(kind)
    if touched is None:
        return files
    return {name: [row for row in content if not row.startswith(touched)] if isinstance(content, list) else content
            for name, content in files.items()}


def _said(result: tuple[int, bytes, str], *places: tuple[Path, str]) -> tuple[int, str, str]:
    code, out, err = result
    text = out.decode()
    for path, name in places:
        text, err = text.replace(str(path), name), err.replace(str(path), name)
    return code, text, err


def _journal(path: Path, folder: Path) -> list[dict]:
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for entry in entries:
        entry.pop("created", None)  # (the header's: when the run began)
    return json.loads(json.dumps(entries).replace(str(folder.resolve()), "F").replace(str(folder), "F"))


def _changes(folder: Path, diff: bool = False) -> list[Change]:
    """Every change a repair of the folder's stores plans, as a worker builds it (journal entry included)."""
    run = batch.RepairRun([], batch.RunOptions(min_age=0, keep_bytes=diff))
    return [change for store in iter_stores([str(folder)], StoreOptions()) if not isinstance(store, Problem)
            for _, change in run._plan(store, 0.0) if change is not None]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_jobs_1_and_jobs_3_give_the_same_result(tmp_path: Path, small_shards, kind: str) -> None:
    base = tmp_path / "base"
    base.mkdir()
    KINDS[kind](base)
    # what crosses the --jobs pipe: each change whole, as plain data that pickles, holding none of the items
    changes = [change for change in _changes(base) if str(base / "z-cut.jsonl") not in change.thread.address.source]
    assert changes and all(change.entry is not None and change.thread.items == [] for change in changes)
    assert [pickle.loads(pickle.dumps(change)) for change in changes] == changes
    # the before-image crosses only when a diff is asked for, and then in the change
    assert all(change.before is None for change in changes)
    shown = [change for change in _changes(base, diff=True) if str(base / "z-cut.jsonl") not in change.thread.address.source]
    assert [change.before is not None and change.before != change.data for change in shown] == [True] * len(changes)
    parts = [shard for shard in parallel.plan_shards([str(base)], 3) if shard.part is not None]
    assert (len(parts) > 1, len(parts)) == (kind in CUT, len(parts) if kind in CUT else 0), kind  # (--jobs 3 below reads it in parts)
    _store(base / "z-cut.jsonl", threads=160, seed=9)
    original = _files(base)
    seen = {}
    for jobs in ("1", "3"):
        folder, journals = tmp_path / f"jobs{jobs}", tmp_path / f"journal{jobs}"
        shutil.copytree(base, folder)
        for command in (["lint", "--format", "json"], ["report", "--format", "json"],
                        ["repair", "--min-age", "0", "--dry-run", "--format", "json"],
                        ["repair", "--min-age", "0", "--dry-run", "--diff"]):
            said = _said(_run("--jobs", jobs, *command, str(folder)), (folder, "F"))
            stamped = kind in STAMPED and command[-1] == "--diff"  # (its fresh ids and times differ run to run)
            seen[jobs, command[0] + command[-1]] = (said[0], said[1].count("\n"), said[2]) if stamped else said
        repaired = _run("--jobs", jobs, "repair", "--min-age", "0", "--format", "json", "--journal-dir", str(journals),
                        str(folder))
        journal = next(journals.iterdir())
        seen[jobs, "repair"] = _said(repaired, (journal, "J"), (folder, "F"))
        entries = _journal(journal, folder)
        seen[jobs, "journal"] = len(entries) if kind in STAMPED else entries
        seen[jobs, "written"] = (len(_files(folder)) if kind in STAMPED else _files(folder))
        assert _files(folder) != original  # something was repaired
        seen[jobs, "undo"] = _said(_run("undo", str(journal)), (journal, "J"), (folder, "F"))
        assert _untouched(_files(folder), kind) == _untouched(original, kind), kind  # every byte put back
    for (jobs, what), result in seen.items():
        if jobs == "3":
            assert result == seen["1", what], (kind, what)
    assert seen["1", "repair"][0] == 2  # the broken line of the cut file; the rest is repaired
