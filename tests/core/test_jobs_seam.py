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
