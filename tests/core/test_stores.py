"""File stores: every byte we did not mean to change stays as it was, and writes are atomic."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import orjson
import pytest

from threadfix.batch import RepairRun, RunOptions
from threadfix.errors import ExitCode
from threadfix.stores.atomic import Rewriter

STUCK = {"id": "t1", "items": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "deploy"}]},
    {"type": "function_call", "call_id": "call_1", "name": "deploy", "arguments": "{}"},
]}
HEALTHY = {"id": "t2", "items": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    {"type": "function_call", "call_id": "call_2", "name": "f", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_2", "output": "ok"},
]}


def run(paths, tmp_path: Path, **kwargs) -> RepairRun:
    options = RunOptions(min_age=0, journal_dir=tmp_path / "journal", **kwargs)
    repair = RepairRun([str(p) for p in paths], options)
    list(repair.outcomes())
    return repair


def line(value) -> bytes:
    return orjson.dumps(value) + b"\n"


def test_jsonl_untouched_lines_are_byte_identical(tmp_path: Path) -> None:
    odd = b'{"id": "t3",  "items": [ {"n": 18446744073709551616, "z": -0.0, "a": 1, "a": 2} ] }\n'
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEALTHY) + odd + line(STUCK) + b"\n" + line(HEALTHY))
    result = run([path], tmp_path).result
    assert result.changed == 1 and not result.problems
    lines = path.read_bytes().split(b"\n")
    assert lines[0] + b"\n" == line(HEALTHY)
    assert lines[1] + b"\n" == odd
    assert lines[3] == b""
    assert lines[4] + b"\n" == line(HEALTHY)
    repaired = orjson.loads(lines[2])
    assert repaired["items"][:2] == STUCK["items"]
    assert repaired["items"][2]["call_id"] == "call_1"
    assert len(lines) == 6


def test_crlf_bom_and_missing_final_newline_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + orjson.dumps(STUCK) + b"\r\n" + orjson.dumps(HEALTHY))
    run([path], tmp_path)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf{")
    first, second = data[3:].split(b"\r\n")
    assert "function_call_output" in first.decode()
    assert second == orjson.dumps(HEALTHY)


def test_corrupt_line_is_named_and_kept_and_the_rest_is_repaired(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(STUCK) + b'{"id": "broken", "items": [\n' + line(STUCK))
    repair = run([path], tmp_path)
    assert [(p.where, p.exit_code) for p in repair.result.problems] == [(f"{path}:2:28", ExitCode.ERROR)]
    lines = path.read_bytes().split(b"\n")
    assert lines[1] == b'{"id": "broken", "items": ['
    assert b"function_call_output" in lines[0] and b"function_call_output" in lines[2]


@pytest.mark.parametrize("layout", [
    {"indent": 2}, {"indent": 2, "ensure_ascii": False}, {"indent": 4}, {}, {"separators": (",", ":")},
])
def test_json_document_keeps_its_layout(tmp_path: Path, layout: dict) -> None:
    document = {"conversation": "naïve ☃", "messages": STUCK["items"], "meta": {"n": 1.5}}
    path = tmp_path / "t.json"
    original = json.dumps(document, **layout) + "\n"
    path.write_text(original)
    run([path], tmp_path)
    after = path.read_text()
    expected = dict(document, messages=[*STUCK["items"], json.loads(after)["messages"][2]])
    assert after == json.dumps(expected, **layout) + "\n"


@pytest.mark.parametrize("value, reason", [
    (18446744073709551616, "does not fit in 64 bits"),
    (-0.0, "negative zero"),
])
def test_a_thread_that_cannot_be_written_back_exactly_is_left_alone(tmp_path: Path, value, reason) -> None:
    stuck = {"id": "t", "items": [*STUCK["items"][:1], {"type": "function_call", "call_id": "c", "name": "f",
                                                      "arguments": "{}", "meta": value}]}
    raw = json.dumps(stuck).encode() + b"\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw)
    repair = RepairRun([str(path)], RunOptions(min_age=0, journal_dir=tmp_path / "j"))
    outcomes = list(repair.outcomes())
    assert outcomes[0].status == "left_alone" and reason in outcomes[0].message
    assert path.read_bytes() == raw
    assert repair.result.exit_code() == ExitCode.ERROR


def test_duplicate_keys_block_a_rewrite(tmp_path: Path) -> None:
    raw = b'{"id":"t","id":"u","items":' + orjson.dumps(STUCK["items"]) + b"}\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw)
    outcome = list(RepairRun([str(path)], RunOptions(min_age=0, journal_dir=tmp_path / "j")).outcomes())[0]
    assert outcome.status == "left_alone" and "duplicate keys" in outcome.message
    assert path.read_bytes() == raw


def test_lines_that_are_items_form_one_thread(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    lines = [orjson.dumps(item) + b"\n" for item in STUCK["items"]]
    path.write_bytes(lines[0] + b"\n" + lines[1])
    run([path], tmp_path)
    after = path.read_bytes().split(b"\n")
    assert after[0] + b"\n" == lines[0] and after[1] == b"" and after[2] + b"\n" == lines[1]
    assert orjson.loads(after[3])["type"] == "function_call_output"


def test_output_elsewhere_leaves_the_original_alone(tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(line(STUCK))
    target = tmp_path / "out.jsonl"
    run([source], tmp_path, output=target)
    assert source.read_bytes() == line(STUCK)
    assert b"function_call_output" in target.read_bytes()


def test_mode_is_kept_and_no_temp_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(STUCK))
    os.chmod(path, 0o664)
    run([path], tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o664
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal", "s.jsonl"]


def test_a_symlink_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    target = tmp_path / "real.jsonl"
    target.write_bytes(line(STUCK))
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    run([link], tmp_path)
    assert link.is_symlink()
    assert b"function_call_output" in target.read_bytes()


def test_a_hard_linked_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(STUCK))
    os.link(path, tmp_path / "other.jsonl")
    repair = run([path], tmp_path)
    assert "hard links" in repair.result.problems[0].message
    assert path.read_bytes() == line(STUCK)


def test_an_app_appending_during_the_repair_is_never_overwritten(tmp_path: Path, monkeypatch) -> None:
    """The file changes between our read and our rename on every attempt: nothing is written, exit 75."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(STUCK))
    real_commit = Rewriter.commit

    def app_appends_then_commit(self, always=False):
        with open(path, "ab") as app:
            app.write(line(HEALTHY))
        return real_commit(self, always)

    monkeypatch.setattr(Rewriter, "commit", app_appends_then_commit)
    monkeypatch.setattr("threadfix.batch.time.sleep", lambda s: None)
    repair = run([path], tmp_path)
    assert [p.exit_code for p in repair.result.problems] == [ExitCode.BUSY]
    assert path.read_bytes() == line(STUCK) + line(HEALTHY) * 3
    assert repair.result.exit_code() == ExitCode.BUSY
    assert not list(tmp_path.glob(".threadfix-*"))


def test_a_change_before_one_attempt_is_retried_with_the_new_bytes(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(STUCK))
    real_commit = Rewriter.commit
    calls = []

    def app_appends_once(self, always=False):
        if not calls:
            with open(path, "ab") as app:
                app.write(line(HEALTHY))
        calls.append(1)
        return real_commit(self, always)

    monkeypatch.setattr(Rewriter, "commit", app_appends_once)
    repair = run([path], tmp_path)
    assert not repair.result.problems
    lines = path.read_bytes().split(b"\n")
    assert b"function_call_output" in lines[0] and lines[1] + b"\n" == line(HEALTHY)


def test_recent_threads_are_skipped_by_min_age(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    old = dict(STUCK, id="old", items=[*STUCK["items"][:1], dict(STUCK["items"][1], created_at="2020-01-01T00:00:00Z")])
    path.write_bytes(line(STUCK) + line(old))
    repair = RepairRun([str(path)], RunOptions(min_age=600, journal_dir=tmp_path / "j"))
    statuses = [o.status for o in repair.outcomes()]
    assert statuses == ["recent", "repaired"]
    first, second = path.read_bytes().split(b"\n")[:2]
    assert first + b"\n" == line(STUCK) and b"function_call_output" in second


def test_journal_is_private_and_undo_refuses_a_thread_changed_since(tmp_path: Path) -> None:
    from threadfix.undo import undo

    path = tmp_path / "s.jsonl"
    path.write_bytes(line(STUCK) + line(dict(STUCK, id="t9")))
    repair = run([path], tmp_path)
    journal = repair.result.journal
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    assert stat.S_IMODE(journal.parent.stat().st_mode) == 0o700
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"t9"', b'"t9-edited-by-app"')
    path.write_bytes(b"\n".join(lines))
    outcomes = {o.address.split(":")[1]: o.status for o in undo(journal)}
    assert outcomes == {"1": "restored", "2": "refused"}
    restored = path.read_bytes().split(b"\n")
    assert restored[0] + b"\n" == line(STUCK) and b"t9-edited-by-app" in restored[1]


def test_a_planted_symlink_in_the_journal_folder_is_not_followed(tmp_path: Path, monkeypatch) -> None:
    import time as _time

    from threadfix.journal import Entry, Journal

    victim = tmp_path / "victim"
    victim.write_text("keep me")
    folder = tmp_path / "j"
    folder.mkdir(mode=0o700)
    tokens = iter(["planted", "fresh"])
    monkeypatch.setattr("threadfix.journal.name_token", lambda: next(tokens))
    journal = Journal(folder)
    now = int(_time.time())
    for second in range(now - 1, now + 60):  # whatever second the journal's name takes under load
        stamp = _time.strftime("%Y%m%dT%H%M%SZ", _time.gmtime(second))
        (folder / f"repair-{stamp}-{os.getpid()}-planted.jsonl").symlink_to(victim)
    journal.record([Entry("file", "/x", "x", b"a", "h")])
    journal.close()
    assert victim.read_text() == "keep me"
    assert not journal.path.is_symlink() and journal.path.name.endswith("-fresh.jsonl")


# --------------------------------------------------------------------------- medium x container


@pytest.mark.parametrize("name, content, container", [
    ("thread.json", orjson.dumps(STUCK), "Document"),
    ("threads.jsonl", line(HEALTHY) + line(STUCK), "ThreadLines"),
    ("items.jsonl", b"".join(line(item) for item in STUCK["items"]), "ItemLines"),
])
def test_a_file_store_encodes_through_the_container_its_read_found(tmp_path: Path, name: str, content: bytes,
                                                                  container: str) -> None:
    """The file medium opens the bytes; how threads sit in them is the container a read finds (issue #21)."""
    from threadfix.stores.files import FileStore

    path = tmp_path / name
    path.write_bytes(content)
    store = FileStore(path, str(path), jsonl=name.endswith(".jsonl"))
    threads = list(store.threads())
    assert type(store.container).__name__ == container
    assert store.encode(threads[-1], threads[-1].items) == (content if container == "ItemLines" else threads[-1].raw)
    assert run([path], tmp_path).result.changed == 1


def test_documents_are_screened_once_a_run_has_read_enough_of_them(tmp_path: Path, monkeypatch) -> None:
    """A folder of many small documents builds the screen's decoder once and settles its healthy Responses
    threads without a full parse (issue #28); the repair is the same as a full read's."""
    from threadfix.stores import files, settle

    folder = tmp_path / "threads"
    folder.mkdir()
    healthy = orjson.dumps(HEALTHY["items"])
    for n in range(30):
        (folder / f"{n:02}.json").write_bytes(healthy)
    (folder / "30.json").write_bytes(orjson.dumps(STUCK["items"]))
    settled = []
    real = settle.Screener.__call__
    monkeypatch.setattr(settle.Screener, "__call__",
                        lambda self, raw: settled.append(real(self, raw) is not None) or real(self, raw))
    monkeypatch.setattr(files, "SCREEN_DOCUMENTS_AFTER", 5 * len(healthy))
    monkeypatch.setattr(files, "_documents_read", 0)
    result = run([folder], tmp_path).result
    assert (result.threads, result.changed, result.problems) == (31, 1, [])
    assert settled.count(True) == 25 and settled.count(False) == 1  # the first five read in full, the stuck one too
    repaired = orjson.loads((folder / "30.json").read_bytes())
    assert repaired[:2] == STUCK["items"] and repaired[2]["call_id"] == "call_1"


@pytest.mark.parametrize("name, content", [
    ("folder/a.json", orjson.dumps(HEALTHY["items"])),  # a folder's document: screened, settled
    ("folder/b.json", orjson.dumps(STUCK["items"])),  # read in full
    ("c.jsonl", line(HEALTHY) + line(STUCK)),  # the stream read of a JSONL file
])
def test_a_store_fingerprints_the_file_as_its_read_found_it(tmp_path: Path, name: str, content: bytes) -> None:
    """The compare-and-swap's fingerprint, made from the read's fstat only when asked: None before a read, the file
    as it was read after it, and unmoved by a change made since (which the swap must then refuse)."""
    from threadfix.stores import StoreOptions, iter_stores
    from threadfix.stores.atomic import Fingerprint

    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    for n in range(40):  # (a folder of many files: its documents are screened from the first)
        if path.parent.name == "folder":
            (path.parent / f"x{n:02}.json").write_bytes(orjson.dumps(HEALTHY["items"]))
    path.write_bytes(content)
    as_read = Fingerprint.of(os.stat(path))
    spec = path.parent if path.parent.name == "folder" else path
    [store] = [s for s in iter_stores([str(spec)], StoreOptions()) if str(getattr(s, "display", "")) == str(path)]
    assert store.fingerprint is None
    read = list(store.threads_to_repair())
    assert read and store.fingerprint == as_read and store.mtime == os.stat(path).st_mtime
    path.write_bytes(content + b" ")
    os.utime(path, ns=(as_read.mtime_ns + 10**9, as_read.mtime_ns + 10**9))
    assert store.fingerprint == as_read != Fingerprint.of(os.stat(path))
