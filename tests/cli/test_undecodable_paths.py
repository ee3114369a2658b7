"""A file whose name is not UTF-8 gets the same results in every JSON format as any other file.

On Linux a file name is bytes; Python hands an undecodable byte to us as a lone surrogate (PEP 383), which
orjson refuses to write. Each JSON format used to stop with an internal error after its opening bracket.
Here each format runs in a real process under a UTF-8 locale whose stdout is strict (what a user's shell
has), and its document must parse and name the file so that ``os.fsencode`` gives back its bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from threadfix.jsonio import dumps_os_strings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_threads" / "openai-chat" / "conversations.jsonl"
NAME = b"chat-\xff\xfe.jsonl"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    try:
        target = Path(os.fsdecode(bytes(tmp_path) + b"/" + NAME))
        shutil.copyfile(SAMPLE, target)
    except (OSError, UnicodeError):
        pytest.skip("this file system does not take a file name that is not UTF-8")
    return tmp_path


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONUTF8", "PYTHONIOENCODING")}
    return subprocess.run([sys.executable, "-m", "threadfix", *args, os.fsdecode(NAME)], capture_output=True,
                          cwd=folder, env={**environment, "LC_ALL": "C.UTF-8", "PYTHONPATH": str(ROOT)}, timeout=60)


def _documents(stdout: bytes, lines: bool) -> list:
    return [json.loads(line) for line in stdout.splitlines()] if lines else [json.loads(stdout)]


def _names_the_file(value: object) -> bool:
    """Whether some string in ``value`` starts with the file's name, read back to its bytes."""
    if isinstance(value, str):
        return os.fsencode(value).startswith(NAME)
    if isinstance(value, dict):
        return any(_names_the_file(item) for item in value.values())
    if isinstance(value, list):
        return any(_names_the_file(item) for item in value)
    return False


@pytest.mark.parametrize(("command", "status"), [
    (["lint", "--format", "json"], 1), (["lint", "--format", "jsonl"], 1), (["lint", "--format", "sarif"], 1),
    (["report", "--format", "json"], 0), (["report", "--format", "json", "--by", "thread"], 0),
    (["repair", "--dry-run", "--min-age", "0", "--format", "json"], 0),
    (["repair", "--dry-run", "--min-age", "0", "--format", "jsonl"], 0),
])
def test_each_json_format_names_a_file_whose_name_is_not_utf8(folder: Path, command: list[str], status: int) -> None:
    ran = _run(folder, *command)
    assert (ran.returncode, ran.stderr.count(b"internal error")) == (status, 0), ran.stderr
    documents = _documents(ran.stdout, lines=command[-1] == "jsonl")
    if command[0] == "lint" and command[-1] == "sarif":
        uris = {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for result in documents[0]["runs"][0]["results"]}
        assert uris == {"chat-%FF%FE.jsonl"}
    else:
        assert _names_the_file(documents)


def test_repair_writes_the_file_and_undo_puts_it_back(folder: Path) -> None:
    """The journal names the file by its bytes too: ``undo`` finds it and restores what it held."""
    before = (folder / os.fsdecode(NAME)).read_bytes()
    journals = folder / "journals"
    ran = _run(folder, "repair", "--min-age", "0", "--format", "json", "--journal-dir", str(journals))
    assert ran.returncode == 0, ran.stderr
    assert _names_the_file(json.loads(ran.stdout)["threads"])
    assert (folder / os.fsdecode(NAME)).read_bytes() != before
    after = _run(folder, "lint", "--format", "json", "--select", "TF001")
    assert (after.returncode, json.loads(after.stdout)["findings"]) == (0, [])
    (journal,) = journals.iterdir()
    undone = subprocess.run([sys.executable, "-m", "threadfix", "undo", str(journal)], capture_output=True, cwd=folder,
                            env={**os.environ, "LC_ALL": "C.UTF-8", "PYTHONPATH": str(ROOT)}, timeout=60)
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.count(b"restored") == 3
    assert (folder / os.fsdecode(NAME)).read_bytes() == before


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                     max_leaves=20)
_SURROGATE = st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF)


@given(_JSON)
def test_a_document_orjson_can_write_is_orjsons_bytes(value: object) -> None:
    for option in (0, orjson.OPT_APPEND_NEWLINE, orjson.OPT_INDENT_2):
        assert dumps_os_strings(value, option) == orjson.dumps(value, option=option)


@given(_JSON, st.builds("{}{}{}".format, st.text(), _SURROGATE, st.text(st.characters(codec="utf-8") | _SURROGATE)))
def test_a_document_with_a_lone_surrogate_reads_back_as_itself(value: object, name: str) -> None:
    document = {"path": name, "value": value, name: [name]}
    for option in (0, orjson.OPT_APPEND_NEWLINE, orjson.OPT_INDENT_2):
        written = dumps_os_strings(document, option)
        written.decode("utf-8")  # valid UTF-8 for any reader
        assert json.loads(written) == document
        assert written.endswith(b"\n") == bool(option & orjson.OPT_APPEND_NEWLINE)
