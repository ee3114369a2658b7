"""Nothing is skipped in silence (issue #22): an input that cannot be read, in a folder walk or named, is a
problem naming its path and reason, and the run exits 2; a file named like a database that is not one says so."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_options import threadfix

ROOT = Path(__file__).resolve().parents[2]
THREAD = ROOT / "sample_threads" / "openai-chat" / "support-bot-timeout.json"


@pytest.fixture()
def here(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chats").mkdir()
    shutil.copy(THREAD, tmp_path / "chats" / "stuck.json")
    return tmp_path


@pytest.mark.parametrize("command", [["lint"], ["report", "--format", "json"], ["repair", "-n", "--min-age", "0"]])
@pytest.mark.parametrize("content", [b'{"a": 1}\n', b"SQLite format 2\x00 not quite", b""], ids=["json", "other", "empty"])
def test_a_db_that_is_not_sqlite_says_so_named_and_in_a_folder(capsysbinary, here: Path, command, content) -> None:
    (here / "chats" / "app.db").write_bytes(content)
    for path, shown in (("chats", "chats/app.db"), ("chats/app.db", "chats/app.db")):
        code, _, err = threadfix(capsysbinary, *command, path)
        assert code == 2, (command, path, err)
        (line,) = [line for line in err.splitlines() if line.startswith("threadfix: error:")]
        assert line.startswith(f"threadfix: error: {shown}: is ") and "SQLite database" in line
        assert "JSON" not in line


@pytest.fixture()
def shared() -> Iterator[Path]:
    """A folder another user can read (the test's own temporary folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="threadfix-skips-"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        for dirpath, dirnames, _ in os.walk(folder):
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o755)
        shutil.rmtree(folder)


def _unprivileged() -> list[str] | None:
    """A command prefix that runs as a user who is refused what mode 000 refuses (root is not)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] if setpriv else None


@pytest.mark.parametrize("command", [["lint"], ["report"], ["repair", "-n", "--min-age", "0"]])
def test_an_unreadable_folder_or_file_is_a_problem_walked_or_named(shared: Path, command: list[str]) -> None:
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: mode 000 refuses root nothing")
    (shared / "chats" / "locked").mkdir(parents=True)
    for folder in (shared / "chats", shared / "chats" / "locked"):
        folder.chmod(0o755)
    shutil.copy(THREAD, shared / "chats" / "stuck.json")
    (shared / "chats" / "stuck.json").chmod(0o644)
    shutil.copy(THREAD, shared / "chats" / "locked" / "hidden.json")
    (shared / "secret.jsonl").write_bytes(THREAD.read_bytes().replace(b"\n", b"") + b"\n")
    (shared / "secret.jsonl").chmod(0o000)
    (shared / "chats" / "locked").chmod(0o000)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": str(shared / ".state")}
    env.pop("NO_COLOR", None)
    for path, where in (("chats", "chats/locked"), ("chats/locked", "chats/locked"), ("secret.jsonl", "secret.jsonl")):
        ran = subprocess.run([*prefix, sys.executable, "-m", "threadfix", *command, path], cwd=shared, env=env,
                             capture_output=True, timeout=60)
        err = ran.stderr.decode()
        assert ran.returncode == 2, (command, path, err)
        assert f"threadfix: error: {where}: " in err and "permission denied" in err, (command, path, err)
        assert "Traceback" not in err
        if path == "chats":  # the rest of the folder is still read
            assert b"stuck.json" in ran.stdout or "1 thread" in err or "threads\t1" in ran.stdout.decode(), err
