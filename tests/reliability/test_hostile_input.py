"""Bad input: never a traceback, one ``threadfix: error: <where>: <what>`` line per bad file or line, a
documented exit code, and the rest of the batch still repaired.

``nasty/`` holds the named cases of the reliability notes (truncated JSON, a corrupt JSONL line, BOM,
invalid UTF-8, lone surrogates, nesting 254/255/1024/1025, integers past 64 bits, -0, 1e400, NaN,
duplicate keys, NUL, binary, empty files...) and what the fuzzer found, with their expected outcome in
``nasty/expected.json``: add a file and its expectation, get a test. After a deliberate change of
behaviour, ``python -m tests.reliability.test_hostile_input`` rewrites expected.json; review its diff.

Hypothesis then mutates valid threads (cuts, flipped bytes, spliced-in nasties, raw bytes) and throws
them at repair, lint and report; bigger cases (a 2 MiB line, 100 000 levels, a file over --max-doc-mb)
are built here rather than stored. ``fuzz_loaders.py`` is the atheris harness (nightly); CI replays its
corpus (``nasty/``).
"""

from __future__ import annotations

import json
import os
import shutil
import unittest.mock
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core import threadgen
from tests.reliability.harness import cli, stuck_thread, tally, thread_lines

NASTY = Path(__file__).parent / "nasty"
EXPECTED = json.loads((NASTY / "expected.json").read_text())
CASES = sorted(p.name for p in NASTY.iterdir() if p.name != "expected.json")
#: what a reading error may say; each is one short line
EXIT_CODES = {"repair": (0, 2), "lint": (0, 1, 2), "report": (0, 2)}


def test_every_case_has_an_expectation() -> None:
    assert sorted(EXPECTED) == CASES


def repair_case(tmp: Path, name: str) -> tuple[dict, list[str]]:
    """Repair a copy of case ``name``; its outcome as ``expected.json`` records it, and the raw error lines."""
    path = tmp / name
    shutil.copy(NASTY / name, path)
    ran = cli("repair", "--min-age", "0", "--journal-dir", str(tmp / "journal"), str(path))
    errors = ran.errors()
    outcome = {"exit": ran.code, "errors": [e.replace(str(path), "{file}") for e in errors],
               "changed": path.read_bytes() != (NASTY / name).read_bytes()}
    return outcome, errors


@pytest.mark.parametrize("name", CASES)
def test_named_nasty_case(tmp_path: Path, name: str) -> None:
    tally("hostile inputs thrown at repair, lint and report")
    expected = EXPECTED[name]
    outcome, errors = repair_case(tmp_path, name)
    assert outcome == expected
    path = tmp_path / name
    if expected["changed"]:  # the repaired file needs nothing more, and still says what it said
        again = cli("repair", "--min-age", "0", "--check", str(path))
        assert (again.code, again.errors(), again.stdout) == (expected["exit"], errors, b"")
    assert_readers_agree(NASTY / name, expected["errors"], "{file}")


def assert_readers_agree(path: Path, repair_errors: list[str], shown_as: str | None = None) -> None:
    """lint and report name the same unreadable parts, all of which repair named too (repair also names
    what it cannot write back)."""
    seen = []
    for command in ("lint", "report"):
        looked = cli(command, str(path))
        assert looked.code in EXIT_CODES[command], (command, looked.stderr)
        errors = looked.errors()
        seen.append([e.replace(str(path), shown_as) for e in errors] if shown_as else errors)
    assert seen[0] == seen[1], "lint and report disagree about what they could not read"
    assert set(seen[0]) <= set(repair_errors), "lint reports a reading error repair did not"


# --------------------------------------------------------------------------- generated: mutated threads

#: spliced into valid threads at random places
NASTIES = [b"\xef\xbb\xbf", b'"\\ud800"', b"\xed\xa0\x80", b"18446744073709551616", b"-0", b"1e400", b"NaN",
           b'"a":1,"a":2', b"[" * 300, b"[" * 1100, b"\x00", b"\xff", b"\r\n", b"\n", "\u2028".encode(), b"}", b"]",
           b",", b'"', b"\\", b"\x1b]8;;https://evil\x07", b"[/bold]"]


@st.composite
def valid_thread(draw: st.DrawFn) -> bytes:
    """One thread document of a core dialect, as an app would store it."""
    name = draw(st.sampled_from(sorted(threadgen.RENDERERS)))
    items = threadgen.RENDERERS[name](draw(threadgen.conversations()))
    key = draw(st.sampled_from(["items", "messages", "input", None]))
    return orjson.dumps(items if key is None else {"id": "g", key: items})


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid thread, then up to three cuts, byte flips and spliced-in nasties; or plain random bytes."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=600))
    data = bytearray(draw(valid_thread()))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        how = draw(st.sampled_from(["cut", "flip", "splice", "splice"]))
        if how == "cut":
            del data[at:]
        elif how == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        else:
            data[at:at] = draw(st.sampled_from(NASTIES))
    return bytes(data)


CONTROL = orjson.dumps(stuck_thread(0)) + b"\n"


def check_batch(tmp: Path, bad: bytes, suffix: str) -> None:
    """The bad file next to a good one: errors name only the bad file, one per bad unit, and the good file
    is still planned, repaired, and linted."""
    tally("hostile inputs thrown at repair, lint and report")
    folder = tmp / "batch"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    bad_path, control = folder / f"bad{suffix}", folder / "control.jsonl"
    bad_path.write_bytes(bad)
    control.write_bytes(CONTROL)
    planned = cli("repair", "--dry-run", "--min-age", "0", str(folder))
    errors = planned.errors()
    # a call that cannot be told apart (no id, one id twice in a turn) is refused, said on its own line, exit 1
    refused = [line for line in planned.stdout.splitlines() if b": not repaired (" in line]
    assert all(line.startswith(str(bad_path).encode()) for line in refused), refused
    assert planned.code == (2 if errors else 1 if refused else 0), planned.stderr
    assert all(e.startswith(str(bad_path)) for e in errors), errors
    units = 1 if suffix == ".json" else bad.count(b"\n") + 2  # each line, and the file as one thread
    assert len(errors) <= units, errors
    assert f"{control}:1:id=t-0#1: add error output for call_0".encode() in planned.stdout
    assert_readers_agree(folder, errors)
    written = cli("repair", "--min-age", "0", "--journal-dir", str(tmp / "journal"), str(folder))
    assert written.code == planned.code and written.errors() == errors
    assert control.read_bytes() != CONTROL
    settled = cli("repair", "--min-age", "0", "--check", str(folder))
    # (the same refusals: their item numbers may have moved with the outputs written before them)
    said = [line for line in settled.stdout.splitlines() if line.startswith(str(bad_path).encode())]
    assert said == settled.stdout.splitlines() and settled.errors() == errors, "a second run still changes something"
    assert [line[line.index(b": not repaired ("):] for line in said if b": not repaired (" in line] == \
        [line[line.index(b": not repaired ("):] for line in refused] and len(said) == len(refused), \
        "a second run no longer says what it refuses, or changes something"


@given(bad=mutated(), suffix=st.sampled_from([".json", ".jsonl"]))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_mutated_threads_never_stop_the_batch(tmp_path: Path, bad: bytes, suffix: str) -> None:
    with unittest.mock.patch.object(os, "fsync", lambda fd: None):  # durability is not what is tested here
        check_batch(tmp_path, bad, suffix)


@pytest.mark.slow
@given(bad=mutated(), suffix=st.sampled_from([".json", ".jsonl"]))
@settings(max_examples=5000, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_mutated_threads_never_stop_the_batch_campaign(tmp_path: Path, bad: bytes, suffix: str) -> None:
    with unittest.mock.patch.object(os, "fsync", lambda fd: None):
        check_batch(tmp_path, bad, suffix)


@given(bad=mutated())
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_stdin_gets_one_error_or_a_document(bad: bytes) -> None:
    tally("hostile inputs thrown at repair, lint and report")
    ran = cli("repair", "--min-age", "0", "-", stdin=bad)
    errors = ran.errors()
    # a refused call is said on stderr (stdout holds the document) and exits 1; any other error exits 2
    refused = [e for e in errors if e.startswith("<stdin>: not repaired: ")]
    assert ran.code == (2 if len(refused) < len(errors) else 1 if refused else 0), ran.stderr
    assert all(e.startswith("<stdin>") for e in errors)
    if not errors:
        assert ran.stdout, "nothing on stdout and no error"


# --------------------------------------------------------------------------- big inputs, built here


def test_a_line_over_the_size_limit_is_skipped_and_the_rest_repaired(tmp_path: Path) -> None:
    huge = orjson.dumps({"id": "huge", "items": [{"role": "user", "content": "x" * (2 * 2**20)}]}) + b"\n"
    path = tmp_path / "t.jsonl"
    path.write_bytes(CONTROL + huge + CONTROL)
    ran = cli("repair", "--min-age", "0", "--max-doc-mb", "1", "--journal-dir", str(tmp_path / "j"), str(path))
    assert (ran.code, ran.errors()) == (2, [f"{path}:2: line is over the 1 MiB limit (raise --max-doc-mb)"])
    lines = path.read_bytes().split(b"\n")
    assert lines[1] + b"\n" == huge and b"function_call_output" in lines[0] and b"function_call_output" in lines[2]


def test_a_document_over_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b"[" + b"{}," * (2**20) + b"{}]")  # ~3 MiB of tiny objects: ~30x that to parse
    ran = cli("repair", "--min-age", "0", "--max-doc-mb", "1", str(path))
    assert (ran.code, ran.errors()) == (2, [f"{path}: is 3 MiB, over the 1 MiB limit for one document "
                                               "(raise --max-doc-mb)"])


def test_nesting_100000_deep(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    ran = cli("lint", str(path))
    assert (ran.code, ran.errors()) == (2, [f"{path}:1:1026: not valid JSON (depth limit exceeded)"])


@pytest.mark.parametrize("command", ["repair", "lint"])
def test_a_forced_wrong_dialect_is_not_silent(tmp_path: Path, command: str) -> None:
    """``--dialect anthropic`` on a Responses thread with a dangling call must not read as all healthy."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(thread_lines(2))
    ran = cli(command, *(["--dry-run", "--min-age", "0"] if command == "repair" else []), "--dialect", "anthropic",
              str(path))
    assert ran.code != 0 or ran.stdout, "a dangling call went unreported under the wrong dialect"


@pytest.mark.parametrize("name", CASES)
def test_fuzz_corpus_replays_cleanly(name: str) -> None:
    """The atheris harness (``fuzz_loaders.py``, nightly) on every seed, as each suffix and as stdin."""
    from tests.reliability.fuzz_loaders import SUFFIXES, one_input

    data = (NASTY / name).read_bytes()
    for selector in range(len(SUFFIXES)):
        tally("hostile inputs thrown at repair, lint and report")
        one_input(bytes([selector]) + data)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        table = {name: repair_case(Path(scratch), name)[0] for name in CASES}
    (NASTY / "expected.json").write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")


# A mutation the batch campaign found: a key renamed so that a tool_use lost its id. The call is refused (said,
# exit 1), the thread's other call is still answered, and a second run says the refusal again and changes nothing.
ID_LOST = (b'[{"role":"user","content":"start"},{"role":"assistant","content":[{"type":"text","text":"calling"},'
           b'{"type":"tool_use","id":"call_001","name":"shell","input":{}},'
           b'{"type":"tool_use"," d":"call_008","name":"shell","input":{}}]}]')


# and one whose "id" key gained a byte-order mark, after a call that is answered by the repair (so the refused
# call's item number moves by one between the first run and the second)
ID_LOST_AFTER_ANSWERED = (
    b'{"id":"g","items":[{"role":"user","content":"start"},{"role":"assistant","content":null,"tool_calls":'
    b'[{"id":"call_001","type":"function","function":{"name":"read_file","arguments":"{}"}}]},'
    b'{"role":"user","content":"next 0"},{"role":"assistant","content":null,"tool_calls":['
    b'{"id":"call_002","type":"function","function":{"name":"read_file","arguments":""}},'
    b'{"\xef\xbb\xbfid":"call_003","type":"function","function":{"name":"shell","arguments":"{}"}}]}]}')


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
@pytest.mark.parametrize("bad", [ID_LOST, ID_LOST_AFTER_ANSWERED], ids=["id-key-renamed", "after-an-answered-call"])
def test_a_call_that_lost_its_id_is_refused_in_a_batch(tmp_path: Path, bad: bytes, suffix: str) -> None:
    check_batch(tmp_path, bad, suffix)


def test_a_call_that_lost_its_id_is_refused_from_stdin() -> None:
    ran = cli("repair", "--min-age", "0", "-", stdin=ID_LOST)
    assert ran.code == 1 and ran.errors() == [
        "<stdin>: not repaired: call (no id): the call has no id, so no output can be paired with it"]
    assert b'"tool_use_id":"call_001"' in ran.stdout
