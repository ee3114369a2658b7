"""The real session files the apps wrote (``../shared/agent-sessions/``, see its SOURCES.md; skipped when absent,
never copied into the project): the stuck ones are repaired, the healthy ones left byte-identical."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.agents.sessions import assert_nothing_lost, repair, session_of, violations
from threadfix.undo import undo

ROOT = Path(__file__).resolve().parents[2]
REAL = Path(os.environ.get("THREADFIX_AGENT_SESSIONS", ROOT.parent / "shared" / "agent-sessions"))
#: the sessions the apps left stuck (SOURCES.md): parallel results off the chain, and calls left open
STUCK = {"258c7280-ae70-4798-800f-63464d01a85d.jsonl", "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", "subagent.jsonl",
         "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl",
         "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"}

pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason="the real session files are not here")


@pytest.fixture(scope="module")
def copied(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[Path, bytes], dict[Path, bool]]:
    """A writable copy of the real sessions, each file's bytes and whether it was stuck, then one repair."""
    folder = tmp_path_factory.mktemp("real") / "sessions"
    shutil.copytree(REAL / "claude-code", folder / "claude-code")
    shutil.copytree(REAL / "codex", folder / "codex")
    shutil.copytree(REAL / "gemini-cli", folder / "gemini-cli")
    for path in folder.rglob("*"):
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl"))
    before = {path: path.read_bytes() for path in files}
    stuck = {path: bool(violations(path)) for path in files}
    run = repair(folder, journal_dir=folder.parent / "journal")
    assert run.result.problems == []
    return folder, before, stuck


def test_the_sessions_the_apps_left_stuck_are_found_stuck(copied) -> None:
    _, _, stuck = copied
    assert {path.name for path, is_stuck in stuck.items() if is_stuck} == STUCK


def test_stuck_sessions_resume_answered_with_every_line_kept(copied) -> None:
    _, before, stuck = copied
    for path, is_stuck in stuck.items():
        after = path.read_bytes()
        if not is_stuck:
            assert after == before[path], path.name
            continue
        assert after != before[path]
        assert violations(path) == [], path.name
        if path.parent.name != "codex":
            assert_nothing_lost(before[path], after)
            # nothing invented where the real result exists: the same count of results, re-linked
            assert after.count(b'"tool_result"') == before[path].count(b'"tool_result"'), path.name
        else:
            old = before[path].splitlines(keepends=True)
            assert [line for line in after.splitlines(keepends=True) if line in old] == old


def test_a_second_run_changes_nothing_and_undo_restores_every_byte(copied) -> None:
    folder, before, stuck = copied
    assert repair(folder).result.changed == 0
    outcomes = list(undo(max((folder.parent / "journal").glob("*"))))
    assert {o.status for o in outcomes} == {"restored"}
    assert all(path.read_bytes() == data for path, data in before.items())


def test_every_real_version_is_read_as_its_app(copied) -> None:
    folder, _, _ = copied
    dialect = {"codex": "openai-responses", "gemini-cli": "gemini"}
    for path in sorted(p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl")):
        thread = session_of(path).thread
        assert thread.dialect == dialect.get(path.parent.name, "anthropic")
        assert thread.items, path.name
