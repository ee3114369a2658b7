"""A call with no output may still be running: repairing it then gives the call two outputs.

The app (a separate interpreter) plays tool calls one after another, each in its own session file: it
writes the call, the tool runs ~50 ms, then it writes the real output and reads the thread back, as it
would before its next model request. Meanwhile repair sweeps the folder again and again. With
``--min-age 0`` the app finds calls with two outputs (this proves the harness sees the race); with a
``--min-age`` longer than the tool takes, it never does, and a last pass finds nothing left to repair.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.harness import App, jsonl_values, outputs_per_call, repair, tally

TOOL_MS = 50


def sweep_while_app_runs(tmp: Path, sessions: int, min_age: float, tool_ms: int = TOOL_MS) -> tuple[int, int]:
    """Repair the folder in a loop while the app plays; returns (duplicates the app saw, repairs made)."""
    folder = tmp / "sessions"
    folder.mkdir()
    repaired = 0
    with App() as app:
        app.send(op="sessions", folder=str(folder), count=sessions, tool_ms=tool_ms)
        while not app.replied():
            repaired += repair([folder], tmp, min_age=min_age).result.changed
        answer = app.reply()
    assert answer["done"] == sessions
    tally("in-flight tool calls played against a repair loop", sessions)
    return answer["duplicates"], repaired


def test_repairing_in_flight_calls_creates_duplicates_the_harness_sees(tmp_path: Path) -> None:
    # Tools of 250 ms: a repair pass slowed by a loaded machine still lands inside some call's run.
    duplicates, repaired = sweep_while_app_runs(tmp_path, 12, min_age=0, tool_ms=250)
    assert repaired > 0 and duplicates > 0


@pytest.mark.parametrize("sessions", [12, pytest.param(300, marks=pytest.mark.slow)])
def test_min_age_longer_than_the_tool_leaves_running_calls_alone(tmp_path: Path, sessions: int) -> None:
    duplicates, repaired = sweep_while_app_runs(tmp_path, sessions, min_age=TOOL_MS * 4 / 1000)
    assert (duplicates, repaired) == (0, 0)
    final = repair([tmp_path / "sessions"], tmp_path)
    assert final.result.changed == 0 and not final.result.problems
    for path in sorted((tmp_path / "sessions").iterdir()):
        assert set(outputs_per_call(jsonl_values(path.read_bytes())).values()) == {1}, path.name
