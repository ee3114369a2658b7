"""Strands ``FileSessionManager`` folders written by a real agent, repaired, then restored and resumed by Strands.

The folders come from ``tests/frameworks/strands_app.py``: an agent on a scripted model whose process dies
while a tool runs (forked, so the folder holds exactly what Strands saved), and messages the app saved
through the session manager itself. Strands patches a broken history only in memory when it restores a
session (``_fix_broken_tool_use``); after the repair the history it restores is the one on disk, every
call answered by the next message, and the agent takes the next prompt and saves it after the others.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("strands", reason="strands-agents is not installed")

from tests.frameworks.strands_app import agent, messages_folder, write_stuck  # noqa: E402
from tests.sqlite.dbs import run_cli  # noqa: E402

SESSIONS = ("end", "healthy", "moved-on", "orphan", "parallel")


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    storage = tmp_path_factory.mktemp("strands") / "sessions"
    write_stuck(storage)
    return storage


@pytest.fixture
def storage(written: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "sessions"
    shutil.copytree(written, copy)
    return copy


def on_disk(storage: Path, session: str) -> list[dict]:
    folder = messages_folder(storage, session)
    files = sorted(folder.glob("message_*.json"), key=lambda p: int(p.stem.split("_")[1]))
    return [json.loads(p.read_text()) for p in files]


def restored(storage: Path, session: str, replies: list | None = None):
    return agent(storage, session, replies or [])


def answered_next(messages: list[dict]) -> bool:
    for i, message in enumerate(messages):
        uses = {b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b}
        if uses:
            following = messages[i + 1]["content"] if i + 1 < len(messages) else []
            if uses - {b["toolResult"]["toolUseId"] for b in following if "toolResult" in b}:
                return False
    return True


def test_lint_reads_each_agent_folder_as_one_thread(storage: Path, capsys) -> None:
    code, out, err = run_cli(["lint", str(storage)], capsys)
    assert code == 1
    found = {(line.split("session_")[1].split("/")[0], line.split()[1]) for line in out.splitlines()}
    assert found == {("end", "TF001"), ("moved-on", "TF001"), ("moved-on", "TF007"), ("orphan", "TF002"),
                     ("parallel", "TF001")}
    assert "holds no thread" not in err


@pytest.mark.parametrize("session", ["end", "moved-on", "parallel"])
def test_strands_patches_a_stuck_session_only_in_memory_before_the_repair(storage: Path, session: str) -> None:
    history = [f["message"] for f in on_disk(storage, session)]
    assert not answered_next(history)
    assert [dict(m) for m in restored(storage, session).messages] != history or session == "end"


def test_repair_writes_message_files_strands_restores_and_resumes(storage: Path, tmp_path: Path, capsys) -> None:
    before = {s: on_disk(storage, s) for s in SESSIONS}
    code, out, err = run_cli(["repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(storage)], capsys)
    assert code == 0, err
    assert "repaired 4 of 5 threads" in err
    after = {s: on_disk(storage, s) for s in SESSIONS}
    assert after["healthy"] == before["healthy"]
    for session in SESSIONS:
        files = after[session]
        first = files[0]["message_id"]
        assert [f["message_id"] for f in files] == list(range(first, first + len(files))), session
        history = [f["message"] for f in files]
        assert answered_next(history), session
        # Strands restores exactly what is on disk: nothing left for it to patch in memory
        assert [dict(m) for m in restored(storage, session).messages] == history, session
        # nothing the app saved is lost (the orphan's result kept as text)
        kept = [f["message"] for f in before[session]]
        for message in kept:
            if session == "orphan" and any("toolResult" in b for b in message["content"]):
                assert "sunny in Rome" in json.dumps(history)
                continue
            assert any(message["content"] == m["content"] or all(b in m["content"] for b in message["content"])
                       for m in history), (session, message)
    moved = after["moved-on"]
    assert [m["message"]["content"][0].keys() for m in moved] == [{"text"}, {"toolUse"}, {"toolResult"}, {"text"},
                                                                  {"text"}]
    assert moved[3]["created_at"] == before["moved-on"][2]["created_at"]  # renumbered, not rewritten as new
    parallel = {b["toolResult"]["toolUseId"]: b["toolResult"] for b in after["parallel"][2]["message"]["content"]}
    assert parallel["call_p1"]["status"] == "success" and parallel["call_p2"]["status"] == "error"
    assert after["parallel"][2]["created_at"] == before["parallel"][2]["created_at"]
    # the agent takes the next prompt; Strands numbers it after the last file
    bot = restored(storage, "moved-on", ["here is what I found"])
    assert str(bot("and now?")).strip() == "here is what I found"
    assert answered_next(bot.model.seen[-1])
    resumed = on_disk(storage, "moved-on")
    assert len(resumed) == len(moved) + 2 and resumed[:len(moved)] == moved


def test_undo_puts_every_file_back(storage: Path, tmp_path: Path, capsys) -> None:
    before = {s: on_disk(storage, s) for s in SESSIONS}
    journal = tmp_path / "j"
    assert run_cli(["repair", "--min-age", "0", "--journal-dir", str(journal), str(storage)], capsys)[0] == 0
    code, out, err = run_cli(["undo", str(next(journal.iterdir()))], capsys)
    assert code == 0, err
    assert {s: on_disk(storage, s) for s in SESSIONS} == before


def test_a_crash_at_any_step_of_the_renumbering_leaves_every_message_once_in_order(storage: Path, monkeypatch) -> None:
    """The renumbering stopped after each of its file operations in turn: Strands restores the same messages,
    in the same order, and its next message takes a number no file has."""
    import os

    from threadfix.stores import strands_folder

    folder = messages_folder(storage, "moved-on")
    original = [f["message"] for f in on_disk(storage, "moved-on")]
    pristine = storage.parent / "pristine"
    shutil.copytree(folder, pristine)
    steps = 0
    while True:
        shutil.rmtree(folder)
        shutil.copytree(pristine, folder)
        done = []

        def counted(real):
            def step(*args, **kwargs):
                if len(done) == steps:
                    raise KeyboardInterrupt
                done.append(1)
                return real(*args, **kwargs)
            return step

        monkeypatch.setattr(strands_folder.os, "rename", counted(os.rename))
        monkeypatch.setattr(strands_folder.os, "replace", counted(os.replace))
        monkeypatch.setattr(strands_folder.os, "link", counted(os.link))
        finished = True
        try:
            run = strands_folder.StrandsStore(folder.parent)
            thread = next(run.threads())
            from threadfix import dialects
            from threadfix.repair import RepairOptions, plan_repair

            dialect = dialects.get("bedrock")
            plan = plan_repair(dialect.index(thread.items), dialect, thread.items, RepairOptions())
            change = run.change(thread, dialect.apply(thread.items, plan))
            writer = run.writer()
            writer.add(change)
            writer.commit()
        except KeyboardInterrupt:
            finished = False
        monkeypatch.undo()
        files = on_disk(storage, "moved-on")
        history = [f["message"] for f in files]
        assert [m for m in history if not any("toolResult" in b for b in m["content"])] == original, steps
        names = sorted(int(p.stem.split("_")[1]) for p in folder.glob("message_*.json"))
        assert max(f["message_id"] for f in files) >= names[-1], steps  # Strands' next number is free
        if finished:
            break
        steps += 1
    assert steps >= 3  # two files moved up, each rewritten then renamed, then the new file


def test_check_and_min_age_write_nothing(storage: Path, tmp_path: Path, capsys) -> None:
    import os

    before = {s: on_disk(storage, s) for s in SESSIONS}
    code, out, err = run_cli(["repair", "--min-age", "0", "--check", str(storage)], capsys)
    assert code == 1 and "would repair 4 of 5 threads" in err
    for path in storage.rglob("*.json"):
        os.utime(path, (0, 0))  # the age is the files' own updated_at, not their mtime
    code, out, err = run_cli(["repair", "--min-age", "1h", "--journal-dir", str(tmp_path / "j"), str(storage)], capsys)
    assert code == 0 and "4 skipped as recent" in err
    assert {s: on_disk(storage, s) for s in SESSIONS} == before


def test_a_folder_the_app_changed_meanwhile_is_left_alone(storage: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    from threadfix.stores.strands_folder import StrandsStore

    planned = StrandsStore.change

    def app_writes(self, thread, new_items):
        change = planned(self, thread, new_items)
        if "moved-on" in self.display:
            restored(storage, "moved-on", ["still here"])("hello?")
        return change

    monkeypatch.setattr(StrandsStore, "change", app_writes)
    code, out, err = run_cli(["repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(storage)], capsys)
    assert code == 75, err
    assert on_disk(storage, "moved-on")[-1]["message"]["content"][0]["text"] == "still here"
    assert answered_next([f["message"] for f in on_disk(storage, "end")])


def test_jobs_read_each_agent_folder_whole(storage: Path, capsys) -> None:
    for command in (["lint"], ["repair", "--min-age", "0", "--dry-run"]):
        one = run_cli([*command, str(storage)], capsys)
        assert run_cli(["--jobs", "2", *command, str(storage)], capsys) == one
        assert "holds no thread" not in one[2]


def test_undo_refuses_an_agent_the_app_went_on_with(storage: Path, tmp_path: Path, capsys) -> None:
    journal = tmp_path / "j"
    assert run_cli(["repair", "--min-age", "0", "--journal-dir", str(journal), str(storage)], capsys)[0] == 0
    bot = restored(storage, "parallel", ["here is what I found"])
    bot("and now?")
    kept = on_disk(storage, "parallel")
    code, out, err = run_cli(["undo", str(next(journal.iterdir()))], capsys)
    assert code == 1
    assert "changed after the repair" in out + err
    assert on_disk(storage, "parallel") == kept


@pytest.mark.parametrize("jobs", [[], ["--jobs", "2"]])
def test_a_folder_holding_a_strands_folder_deeper_down_reads_it_as_strands(written: Path, tmp_path: Path,
                                                                            jobs: list[str], capsys) -> None:
    app = tmp_path / "app"
    nested = app / "data" / "sessions"
    shutil.copytree(written, nested)
    sample = Path(__file__).resolve().parents[2] / "sample_threads" / "openai-responses" / "deploy-killed-shell.json"
    shutil.copy(sample, app / "deploy.json")  # a thread file beside it: still read as one
    code, out, err = run_cli([*jobs, "lint", str(app)], capsys)
    assert code == 1, err
    assert "holds no thread" not in err
    found = {(line.split("session_")[1].split("/")[0] if "session_" in line else line.split(":")[0].split("#")[0],
              line.split()[1]) for line in out.splitlines()}
    assert found == {("end", "TF001"), ("moved-on", "TF001"), ("moved-on", "TF007"), ("orphan", "TF002"),
                     ("parallel", "TF001"), (str(app / "deploy.json"), "TF001")}
    code, out, err = run_cli([*jobs, "repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(app)],
                             capsys)
    assert code == 0, err
    assert "repaired 5 of 6 threads" in err and "holds no thread" not in err
    for session in ("end", "moved-on", "parallel"):
        assert answered_next([f["message"] for f in on_disk(nested, session)]), session
