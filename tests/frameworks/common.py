"""What the framework tests share: a process killed while a tool runs, and a store copied for one test."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any


def killed(turn: Callable[[], Any]) -> None:
    """Run ``turn`` in a forked process that dies while a tool runs (the tool calls ``os._exit(9)``): the store
    holds exactly what the library saved before it."""
    pid = os.fork()
    if pid == 0:
        try:
            turn()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9, "the tool was never reached"


def copy_database(source: Path, target: Path) -> Path:
    """A copy of a database written once per module, for one test to change."""
    a, b = sqlite3.connect(source), sqlite3.connect(target)
    try:
        a.backup(b)
    finally:
        a.close(), b.close()
    return target
