"""Paths and names: nothing threadfix creates follows a planted symlink, and nothing found in a folder (or
derived from thread data) makes it write outside that folder.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import orjson
import pytest

from tests.reliability.harness import cli, repair, stuck_thread, temps, thread_lines
from threadfix import journal as journal_module
from threadfix.stores import atomic

VICTIM = b"precious, not a thread\n"


@pytest.fixture()
def victim(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "victim.jsonl"
    path.write_bytes(VICTIM)
    return path


def test_journal_names_already_taken_by_symlinks_are_skipped(tmp_path: Path, victim: Path, monkeypatch) -> None:
    """Someone who can write the journal folder plants links at the names the next journal will take."""
    folder = tmp_path / "journal"
    folder.mkdir(mode=0o700)
    tokens = iter(["t0", "t1", "t2", "fresh"])  # the names are random; make the first three predictable
    monkeypatch.setattr("threadfix.journal.name_token", lambda: next(tokens))
    planted = []
    for second in range(int(time.time()) - 1, int(time.time()) + 30):
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(second))
        for attempt in range(3):
            link = folder / f"repair-{stamp}-{os.getpid()}-t{attempt}.jsonl"
            link.symlink_to(victim)
            planted.append(link)
    store = tmp_path / "threads.jsonl"
    store.write_bytes(thread_lines(2))
    run = repair([store], tmp_path, journal_dir=folder)
    assert victim.read_bytes() == VICTIM
    assert run.result.journal not in planted and not run.result.journal.is_symlink()
    assert all(link.is_symlink() for link in planted)
    assert oct(run.result.journal.stat().st_mode & 0o777) == oct(0o600)


def test_a_symlinked_journal_folder_is_refused(tmp_path: Path, victim: Path) -> None:
    store = tmp_path / "threads.jsonl"
    store.write_bytes(thread_lines(2))
    link = tmp_path / "journal"
    link.symlink_to(victim.parent, target_is_directory=True)
    ran = cli("repair", "--min-age", "0", "--journal-dir", str(link), str(store))
    assert (ran.code, ran.errors()) == (2, [f"{link}: the journal folder is a symlink; refusing to write through it"])
    assert store.read_bytes() == thread_lines(2) and sorted(victim.parent.iterdir()) == [victim]


def test_a_planted_temp_name_is_never_followed(tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The temp file's name is random, but even a correctly guessed one is refused, not followed."""
    names = iter(["planted", "fresh"])
    monkeypatch.setattr(atomic, "temp_token", lambda: next(names))
    store = tmp_path / "threads.jsonl"
    store.write_bytes(thread_lines(2))
    link = tmp_path / ".threadfix-planted.tmp"
    link.symlink_to(victim)
    repair([store], tmp_path)
    assert victim.read_bytes() == VICTIM and link.is_symlink()
    assert b"function_call_output" in store.read_bytes()
    assert temps(tmp_path) == [link]


def test_output_onto_a_planted_symlink_is_refused(tmp_path: Path, victim: Path) -> None:
    store = tmp_path / "threads.jsonl"
    store.write_bytes(thread_lines(2))
    link = tmp_path / "out.jsonl"
    link.symlink_to(victim)
    ran = cli("repair", "--min-age", "0", "-o", str(link), str(store))
    assert (ran.code, ran.errors()) == (2, [f"{link}: exists and is not a regular file; refusing to replace it"])
    assert victim.read_bytes() == VICTIM and store.read_bytes() == thread_lines(2)


def test_a_folder_walk_does_not_follow_a_symlink_out_of_the_folder(tmp_path: Path) -> None:
    """``threadfix repair chats/`` must not rewrite a file outside ``chats/`` that a link inside points to."""
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(thread_lines(2))
    chats = tmp_path / "chats"
    chats.mkdir()
    (chats / "mine.jsonl").write_bytes(thread_lines(2))
    (chats / "link.jsonl").symlink_to(outside)
    (chats / "inside.jsonl").symlink_to(chats / "mine.jsonl")
    ran = cli("repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(chats))
    assert outside.read_bytes() == thread_lines(2), "a file outside the folder was rewritten"
    assert ran.errors() == [f"{chats / 'link.jsonl'}: is a symlink to a file outside {chats}; name it directly "
                            "to repair it"]
    assert b"function_call_output" in (chats / "mine.jsonl").read_bytes()
    assert (chats / "link.jsonl").is_symlink() and (chats / "inside.jsonl").is_symlink()
    # named directly, a link is followed on purpose, and stays a link
    assert cli("repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(chats / "link.jsonl")).code == 0
    assert b"function_call_output" in outside.read_bytes() and (chats / "link.jsonl").is_symlink()


JOURNAL_NAME = re.compile(r"repair-\d{8}T\d{6}Z-\d+-[0-9a-f]{8}\.jsonl")


@pytest.mark.parametrize("ident", ["../../escape", "/etc/passwd", "a/../../b", "..", "\x00", "x" * 5000])
def test_journal_names_carry_no_data(tmp_path: Path, ident: str) -> None:
    thread = stuck_thread(0) | {"id": ident}
    store = tmp_path / "threads.jsonl"
    store.write_bytes(orjson.dumps(thread) + b"\n")
    run = repair([store], tmp_path)
    assert run.result.changed == 1
    assert run.result.journal.parent == tmp_path / "journal" and JOURNAL_NAME.fullmatch(run.result.journal.name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal", "threads.jsonl"]
    entries = list(journal_module.read_journal(run.result.journal))
    assert [e.path for e in entries] == [str(store)]
