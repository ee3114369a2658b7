"""Links that loop or name nothing, named pipes, sockets and ``<(command)``'s ``/dev/fd/N``: each is named with what
it is, the rest of the run goes on, and nothing waits for a writer that never comes.

Before, a link to itself in a folder ended lint, repair and report with no summary (report printed nothing at all),
a named pipe in a folder held the walk until it was killed, and a repair of ``<(cat thread.json)`` said "no such
file or directory"; all in real processes here, each with a timeout that a hang fails.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUCK = ROOT / "sample_threads" / "openai-responses" / "deploy-killed-shell.json"
LOOPS = "is a symbolic link that loops (too many levels of symbolic links)"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder with one stuck thread beside every kind of name a walk must leave alone, and say why."""
    shutil.copyfile(STUCK, tmp_path / "stuck.json")
    (tmp_path / "self.json").symlink_to("self.json")
    (tmp_path / "gone.json").symlink_to("moved-away.json")
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "to-pipe.json").symlink_to("pipe.jsonl")
    listening = socket.socket(socket.AF_UNIX)
    try:
        listening.bind(str(tmp_path / "sock.json"))
    except OSError:
        pass  # (a socket path too long for this system: the other names still stand)
    listening.close()
    return tmp_path


def _run(cwd: Path, *args: str, shell: str | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "threadfix", *args] if shell is None else ["bash", "-c", shell]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=environment, timeout=60)


def _problems(folder: Path) -> dict[str, str]:
    found = {"self.json": LOOPS, "gone.json": "is a symbolic link to moved-away.json, which names nothing",
             "pipe.jsonl": "is a named pipe, not a file; left alone",
             "to-pipe.json": "is a symlink to a named pipe, not a file; left alone"}
    if (folder / "sock.json").exists():
        found["sock.json"] = "is a socket, not a file; left alone"
    return found


@pytest.mark.parametrize("command", [["lint"], ["repair", "--dry-run", "--min-age", "0"], ["report"]])
def test_a_folder_of_odd_names_is_read_whole_and_each_is_named_with_what_it_is(folder: Path, command: list[str]) -> None:
    done = _run(folder, *command, ".")
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    for name, why in _problems(folder).items():
        assert f"threadfix: error: {name}: {why}" in lines, done.stderr
    if command[0] == "report":
        assert "threads\t1" in done.stdout.splitlines() and "dangling_calls\t1" in done.stdout.splitlines()
    else:
        assert "stuck.json#3" in done.stdout
        assert lines[-1].endswith(f"{len(_problems(folder))} input errors" if command == ["lint"]
                                  else f"{len(_problems(folder))} errors")


def test_the_json_report_lists_each_odd_name_as_a_problem(folder: Path) -> None:
    done = _run(folder, "lint", "--format", "json", ".")
    problems = {problem["where"]: problem["message"] for problem in json.loads(done.stdout)["summary"]["problems"]}
    assert problems == _problems(folder)


def test_a_real_repair_of_the_folder_writes_the_stuck_thread_and_touches_no_odd_name(folder: Path) -> None:
    before = {name: os.readlink(folder / name) for name in ("self.json", "gone.json", "to-pipe.json")}
    done = _run(folder, "repair", "--min-age", "0", "--journal-dir", str(folder / ".journal"), ".")
    assert done.returncode == 2, done.stderr
    assert "function_call_output" in (folder / "stuck.json").read_text()
    assert {name: os.readlink(folder / name) for name in before} == before
    assert (folder / "pipe.jsonl").is_fifo()


def test_a_pipe_is_read_but_a_repair_cannot_be_written_to_it_or_from_it(tmp_path: Path) -> None:
    """``<(cat FILE)`` reads as the file does; writing needs the bytes twice, so the run says to use stdin."""
    shutil.copyfile(STUCK, tmp_path / "stuck.json")
    dry = _run(tmp_path, shell=f"{sys.executable} -m threadfix repair --dry-run --min-age 0 <(cat stuck.json)")
    assert dry.returncode == 0 and "add error output for call_Zq81shell" in dry.stdout
    for extra in ("", "-o repaired.json"):
        done = _run(tmp_path, shell=f"{sys.executable} -m threadfix repair --min-age 0 {extra} <(cat stuck.json)")
        assert done.returncode == 2
        assert "is a pipe, a socket or a device, whose bytes cannot be read again to write the repair; give it as " \
               "stdin (threadfix repair - < it)" in done.stderr
        assert "no such file" not in done.stderr
    assert not (tmp_path / "repaired.json").exists()
    through_stdin = _run(tmp_path, shell=f"{sys.executable} -m threadfix repair --min-age 0 - < <(cat stuck.json)")
    assert through_stdin.returncode == 0 and "function_call_output" in through_stdin.stdout


def test_a_link_that_loops_beside_a_real_file_is_named_by_the_stores_as_by_the_fast_answer(tmp_path: Path) -> None:
    shutil.copyfile(STUCK, tmp_path / "stuck.json")
    (tmp_path / "self.json").symlink_to("self.json")
    alone = _run(tmp_path, "lint", "self.json")
    beside = _run(tmp_path, "lint", "self.json", "stuck.json")
    assert alone.stderr.splitlines()[0] == beside.stderr.splitlines()[0] == f"threadfix: error: self.json: {LOOPS}"
    assert beside.returncode == 2 and "stuck.json#3" in beside.stdout
