"""The layers import one way and no package holds an import cycle: import-linter's contracts in pyproject.toml.

The suite runs the contracts on the package as it is (so ``python -m pytest`` fails on a cycle or an upward
import), and on copies of it with such an import added, to show the contracts catch them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter")

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """Run import-linter over the package under ``root`` with the contracts of ``root/pyproject.toml``."""
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "250"}  # (one contract a line)
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_the_package_keeps_every_contract() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def _copy_with(tmp_path: Path, module: str, added: str) -> Path:
    """The package and its contracts copied under ``tmp_path``, with ``added`` appended to ``module``."""
    shutil.copytree(ROOT / "threadfix", tmp_path / "threadfix", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / module
    target.write_text(target.read_text() + "\n\n" + added + "\n")
    return tmp_path


@pytest.mark.parametrize(("module", "added", "broken"), [
    # an upward import, inside a function (imports inside functions count): a store reaching the batch runner
    ("threadfix/stores/files.py", "def _runner():\n    from threadfix import batch\n    return batch",
     "Layers: model at the bottom, cli on top"),
    # the thread model reaching a store, as model.last_changed once did
    ("threadfix/model.py", "def _modified():\n    from threadfix.stores.base import modified_time\n    return modified_time",
     "Layers: model at the bottom, cli on top"),
    # a cycle inside one layer: two stores modules importing each other
    ("threadfix/stores/document.py", "def _settle():\n    from threadfix.stores import settle\n    return settle",
     "No import cycle among the modules of any package"),
    # a rule importing the runner that imports the rules
    ("threadfix/rules/base.py", "def _run():\n    from threadfix import lint\n    return lint",
     "Layers: model at the bottom, cli on top"),
    # the table engine reaching SQLite instead of its adapter
    ("threadfix/stores/table.py", "def _db():\n    import sqlite3\n    return sqlite3",
     "The table engine knows no database"),
])
def test_an_added_cycle_or_upward_import_breaks_a_contract(tmp_path: Path, module: str, added: str, broken: str) -> None:
    result = lint_imports(_copy_with(tmp_path, module, added))
    assert result.returncode == 1, result.stdout + result.stderr
    verdicts = [line for line in result.stdout.splitlines() if " KEPT" in line or " BROKEN" in line]
    assert [line for line in verdicts if line.startswith(broken)] and all(
        " BROKEN" in line for line in verdicts if line.startswith(broken)), result.stdout
