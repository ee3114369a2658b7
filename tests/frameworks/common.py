"""What the framework tests share: a process killed while a tool runs, and a store copied for one test."""

from __future__ import annotations

import importlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any


def killed(module: str, turns: list[tuple[str, list[Any]]]) -> None:
    """Run each turn (a function of ``module`` and its JSON-able arguments) in a process that dies while a tool
    runs (the tool calls ``os._exit(9)``): the store holds exactly what the library saved before it.

    The turns run in a fresh interpreter that forks a child per turn. Forking the test process itself is not
    safe: earlier tests leave threads in it, and a child forked while one of them holds a lock waits forever.
    """
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    subprocess.run([sys.executable, "-W", "ignore", "-m", "tests.frameworks.common", module, json.dumps(turns)],
                   cwd=root, env=env, timeout=300, check=True)


def copy_database(source: Path, target: Path) -> Path:
    """A copy of a database written once per module, for one test to change."""
    a, b = sqlite3.connect(source), sqlite3.connect(target)
    try:
        a.backup(b)
    finally:
        a.close(), b.close()
    return target


def _die_in_turns(module: str, turns: list[tuple[str, list[Any]]]) -> None:
    loaded = importlib.import_module(module)
    for function, args in turns:
        pid = os.fork()  # (this interpreter runs no library code itself, so it holds no threads to fork)
        if pid == 0:
            try:
                getattr(loaded, function)(*args)
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 9:
            sys.exit(f"{function}{tuple(args)}: the tool was never reached")


if __name__ == "__main__":
    _die_in_turns(sys.argv[1], json.loads(sys.argv[2]))
