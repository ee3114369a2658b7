"""A call whose id is blank (``" "``, a tab, Unicode space) is refused by the planner (no output can name it): every
dialect's quick check, every document screen and the SQLite screen of item tables leave such a thread to the
planner, which refuses it and says so, instead of calling it healthy (issue #28)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.dialects.wire_checks import assert_quick_healthy_is_sound
from tests.screens.test_screens import RENDER, threads
from threadfix import dialects
from threadfix.batch import RepairRun, RunOptions
from threadfix.repair import BLANK_ID
from threadfix.stores import settle

BLANKS = [" ", "\t", "  \n", "\u3000", "\u00a0"]


def answered(render: Any, call_id: str) -> list[Any]:
    """A conversation whose one tool call, with id ``call_id``, is answered."""
    return render([("user", "hi"), ("tools", [call_id], [call_id], "done"), ("user", "thanks")])


@pytest.mark.parametrize("blank", BLANKS)
@pytest.mark.parametrize("name", sorted(RENDER))
def test_a_blank_call_id_is_never_quick_healthy_nor_settled(name: str, blank: str) -> None:
    dialect = dialects.get(name)
    real = answered(RENDER[name], "call_1")  # the same thread with a real id is healthy, told so quickly
    assert settle.Screener(name)(orjson.dumps(real)) is not None
    items = answered(RENDER[name], blank)
    assert not dialect.quick_healthy(items)
    assert settle.Screener(name)(orjson.dumps(items)) is None
    assert_quick_healthy_is_sound(dialect, items)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(sorted(RENDER)))
def test_quick_healthy_agrees_with_the_planner(data: Any, name: str) -> None:
    """Generated conversations (ids blank, empty, reused, missing): quick_healthy only where the planner finds
    nothing to do and nothing to refuse."""
    assert_quick_healthy_is_sound(dialects.get(name), data.draw(threads(name)))


@pytest.mark.parametrize("blank", [" ", "\u3000"])
def test_the_sqlite_item_screen_leaves_a_blank_id_to_the_planner(tmp_path: Path, blank: str) -> None:
    """A table of one Responses item per row: the thread whose call id is blank is refused (exit 1), the healthy
    ones beside it settle."""
    db = tmp_path / "items.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, thread_id TEXT, position INTEGER, data TEXT)")
    rows = []
    for thread, call_id in (("t1", "call_a"), ("t2", blank), ("t3", "call_b")):
        items = [{"type": "message", "role": "user", "content": "go"},
                 {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"},
                 {"type": "function_call_output", "call_id": call_id, "output": "ok"}]
        rows += [(thread, at, orjson.dumps(item).decode()) for at, item in enumerate(items)]
    conn.executemany("INSERT INTO items (thread_id, position, data) VALUES (?, ?, ?)", rows)
    conn.commit()
    conn.close()
    run = RepairRun([str(db)], RunOptions(min_age=0, dry_run=True))
    outcomes = list(run.threads())
    assert [(o.status, o.message.endswith(BLANK_ID)) for o in outcomes if o.status != "healthy"] == [("refused", True)]
    assert run.result.threads == 3 and run.result.exit_code() == 1
