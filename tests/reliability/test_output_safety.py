"""No byte of thread text reaches a terminal as a control sequence or a live link, no newline from data
forges a line, and lint and report never print a leaked credential whole.

Every command and format runs on threads that carry the payload corpus (``harness.PAYLOADS``: OSC 8
links, title and clipboard writes, CSI, DCS, 8-bit CSI, CR/BS overwrites, bidi overrides, rich markup,
"\\nthreadfix: error: ..." forgeries) in their ids, call ids, tool names, arguments and outputs, and in
a file name. Text output is checked twice: captured with colour off (then no escape at all may appear),
and on a real pseudo-terminal with colour forced (then only SGR colour codes may).
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest

from tests.cli.terminal import run_on_pty
from tests.reliability.harness import CANARIES, PAYLOADS, cli, hostile_threads, repair, stuck_thread, tally

#: what must never come out raw: C0 but newline and tab, DEL, C1, bidi controls, line/paragraph separators
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
SGR = re.compile("\x1b\\[[0-9;]*m")
#: a file name is data too
HOSTILE_NAME = "evil\x1b]0;title\x07\u202e\nthreadfix: error: forged.jsonl"

TEXT_COMMANDS = [
    ["repair", "--dry-run", "--min-age", "0"],
    ["repair", "--diff", "--min-age", "0"],
    ["lint"],
    *(["report", "--by", by] for by in ("tool", "kind", "thread", "day")),
    ["report", "--format", "markdown", "--by", "thread"],
    ["report", "--format", "csv"],
]
MACHINE_COMMANDS = [
    ["repair", "--dry-run", "--min-age", "0", "--format", "json"],
    *(["lint", "--format", fmt] for fmt in ("json", "jsonl", "github", "sarif")),
    ["report", "--format", "json", "--by", "thread"],
]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "threads.jsonl").write_bytes(hostile_threads())
    (folder / HOSTILE_NAME).write_bytes(orjson.dumps(stuck_thread(0)) + b"\n")
    return folder


def assert_inert(text: str, where: str) -> None:
    """Nothing in ``text`` can drive a terminal, and no line is a forged threadfix line."""
    tally("hostile payloads rendered and checked (payload x command x format)", len(PAYLOADS))
    found = FORBIDDEN.search(text)
    assert found is None, f"{where}: raw {found.group()!r} in …{text[max(0, found.start() - 60):found.end() + 20]!r}"
    assert "tab\there" not in text, f"{where}: a tab from data makes a fake column"
    for line in text.splitlines():
        assert "forged" not in line.split(":", 1)[0] and not line.startswith("threadfix: error: forged"), where


@pytest.mark.parametrize("command", TEXT_COMMANDS, ids=" ".join)
def test_text_output_is_inert(hostile: Path, command: list[str]) -> None:
    ran = cli("--color", "never", *command, str(hostile))
    ran.errors()  # also: no traceback, every stderr line is threadfix's
    assert ran.stdout, "the command printed nothing: the check would be vacuous"
    assert_inert(ran.stdout.decode(), " ".join(command))
    assert_inert(ran.stderr, " ".join(command) + " (stderr)")


@pytest.mark.parametrize("command", MACHINE_COMMANDS, ids=" ".join)
def test_machine_output_escapes_control_characters(hostile: Path, command: list[str]) -> None:
    ran = cli(*command, str(hostile))
    assert b"\x1b" not in ran.stdout and b"\r" not in ran.stdout
    fmt = command[command.index("--format") + 1]
    if fmt in ("json", "sarif"):
        orjson.loads(ran.stdout)
    elif fmt == "jsonl":
        [orjson.loads(line) for line in ran.stdout.splitlines()]
    else:  # github workflow commands: one per line, data never starts a new one
        assert all(line.startswith("::") for line in ran.stdout.decode().splitlines())


def on_terminal(command: list[str], folder: Path) -> tuple[bytes, bytes, int]:
    """Run ``threadfix --color always COMMAND folder`` with stdout on a pseudo-terminal (stderr a pipe)."""
    return run_on_pty(["--color", "always", *command, str(folder)], cwd=folder.parent, columns=220,
                      stderr_on_pty=False)


def test_on_a_real_terminal_only_colour_codes_come_out(hostile: Path) -> None:
    commands = [["repair", "--dry-run", "--min-age", "0"], ["lint"], ["report", "--by", "thread"]]
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda c: on_terminal(c, hostile), commands))
    assert any(b"\x1b[" in stdout for stdout, _, _ in results), "no colour at all: the check would be vacuous"
    for command, (stdout, stderr, code) in zip(commands, results):
        where = " ".join(command)
        assert code in (0, 1, 2), (where, stderr)
        text = stdout.decode()
        assert "\x1b]8;" not in text, f"{where}: a live link"
        assert_inert(SGR.sub("", text).replace("\r\n", "\n"), where + " (terminal)")
        assert_inert(stderr.decode(), where + " (stderr)")


@pytest.mark.parametrize("command", [["lint"], ["lint", "--format", "json"], ["lint", "--format", "sarif"],
                                     ["lint", "--format", "github"], ["report", "--by", "thread"],
                                     ["report", "--format", "json"], ["report", "--format", "markdown"],
                                     ["report", "--format", "csv", "--by", "kind"]], ids=" ".join)
def test_lint_and_report_never_print_a_credential(hostile: Path, command: list[str]) -> None:
    ran = cli(*command, str(hostile))
    output = ran.stdout.decode() + ran.stderr
    leaked = [c for c in CANARIES if c in output or c[8:24] in output]
    assert not leaked, f"{' '.join(command)} printed {leaked}"


def test_undo_and_a_writing_repair_are_inert(tmp_path: Path) -> None:
    path = tmp_path / "threads.jsonl"
    path.write_bytes(hostile_threads())
    ran = cli("--color", "never", "repair", "--min-age", "0", "--journal-dir", str(tmp_path / "j"), str(path))
    assert_inert(ran.stdout.decode() + ran.stderr, "repair")
    (journal,) = (tmp_path / "j").iterdir()
    undone = cli("--color", "never", "undo", str(journal))
    assert undone.code == 0 and undone.stdout
    assert_inert(undone.stdout.decode() + undone.stderr, "undo")
    assert path.read_bytes() == hostile_threads()


def test_the_library_keeps_data_exact(tmp_path: Path) -> None:
    """Escaping is for display only: what repair writes keeps every payload byte for byte."""
    path = tmp_path / "threads.jsonl"
    path.write_bytes(hostile_threads())
    repair([path], tmp_path)
    for before, after in zip(hostile_threads().splitlines(), path.read_bytes().splitlines()):
        old, new = orjson.loads(before), orjson.loads(after)
        kept = [item for item in old["items"] if item["type"] != "function_call_output"]  # orphans are converted
        assert new["id"] == old["id"] and all(item in new["items"] for item in kept)
