"""The ``--jobs`` machinery knows no store kind: what an input is and how it is cut are the stores' to say.

``parallel`` and ``batch`` must not reach into a folder walk's entries or a store's parts: every such name
below was once read there (a Strands folder's ``agents``, a found file's ``database`` flag), and a new store
kind must need no edit of either."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

from threadfix import parallel
from threadfix.stores import inputs

PACKAGE = Path(parallel.__file__).parent
#: what only the stores may read: the folder walk's entries, and each store's own parts and classes
STORE_KINDS = {"FolderEntry", "walk_folder", "agents", "database", "open_folder_entry", "ByteRange", "TablePart",
               "ThreadKeys", "FileStore", "TableStore", "ItemRowStore", "ThreadRowStore", "FrameworkStore",
               "StrandsStore", "SQLiteMedium", "FileMedium"}


def _names(path: Path) -> set[str]:
    """Every name a module's code uses: names, attributes, and what it imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.name.rsplit(".", 1)[-1])
    return found


@pytest.mark.parametrize("module", ["parallel.py", "batch.py"])
def test_the_jobs_machinery_names_no_store_kind(module: str) -> None:
    assert _names(PACKAGE / module) & STORE_KINDS == set()


def test_a_folder_says_what_each_of_its_stores_is_as_an_input(tmp_path: Path) -> None:
    """A thread file is read by the walk's suffix rules, a database as if named, a refused file with its reason,
    a Strands folder as if named and whole; only what may be cut counts its bytes."""
    (tmp_path / "a.jsonl").write_text('{"messages": []}\n')
    (tmp_path / "b.db").write_text("not sqlite")
    conn = sqlite3.connect(tmp_path / "c.db")
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    agent = tmp_path / "strands" / "session_s" / "agents" / "agent_a"
    (agent / "messages").mkdir(parents=True)
    (agent / "agent.json").write_text("{}")
    (tmp_path / "strands" / "session_s" / "session.json").write_text("{}")
    found = {Path(i.whole.spec).relative_to(tmp_path).as_posix(): (i.whole.in_folder, i.whole.refused is not None, i.size)
             for i in inputs(str(tmp_path))}
    assert found["a.jsonl"] == (True, False, (tmp_path / "a.jsonl").stat().st_size)
    assert found["b.db"] == (True, True, 0)
    assert found["c.db"] == (False, False, (tmp_path / "c.db").stat().st_size)
    strands = [name for name in found if name.startswith("strands")]
    assert len(strands) == 1 and found[strands[0]] == (False, False, 0)


def test_a_sharded_folder_of_many_files_is_read_as_one_process_reads_it(tmp_path: Path, capsys) -> None:
    """A folder of many thread files has its documents screened from the first (``FolderEntry.many``): so does each
    ``--jobs`` worker's store of one of them, and the run gives exactly the one-process result."""
    import json

    from tests.sqlite.dbs import healthy, run_cli, stuck
    from threadfix.stores import StoreOptions
    from threadfix.stores.files import SCREEN_FOLDER_FILES

    folder = tmp_path / "threads"
    folder.mkdir()
    for n in range(SCREEN_FOLDER_FILES + 8):
        (folder / f"t{n:03}.json").write_text(json.dumps({"id": f"t{n}", "input": stuck(n) if n % 5 == 0 else healthy(n)}))
    shards = parallel.plan_shards([str(folder)], 2)
    assert len(shards) == SCREEN_FOLDER_FILES + 8 and all(shard.many for shard in shards)
    stores = [store for shard in shards for store in parallel.shard_stores(shard, StoreOptions())]
    assert all(store.screen_always for store in stores)  # (as the one process's walk opens them)

    args = ["repair", "--dry-run", "--min-age", "0", "--format", "json", str(folder)]
    one, two = run_cli(["--jobs", "1", *args], capsys), run_cli(["--jobs", "2", *args], capsys)
    assert one[0] == two[0] == 0 and json.loads(one[1]) == json.loads(two[1])
    assert one[2] == two[2] and "would repair 8 of 40 threads" in one[2], one[2]
