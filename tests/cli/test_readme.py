"""The README says what the program does (issue #22): every command example in it is run against sample_threads/
and its output compared, and its library example is run."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
ELIDED = "..."


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, re.M | re.S)


def examples() -> list[tuple[str, list[str]]]:
    """Each ``$ threadfix ...`` line of the README's sh blocks, with the lines it shows as its output."""
    found: list[tuple[str, list[str]]] = []
    for block in blocks("sh"):
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append((line[2:], []))
            elif found:
                found[-1][1].append(line)
    return found


EXAMPLES = examples()


def split(shown: list[str]) -> tuple[list[str], list[str]]:
    """The lines shown, by the stream they go to (``threadfix:`` lines are stderr's); ``...`` goes with the line
    before it."""
    out: list[str] = []
    err: list[str] = []
    last = out
    for line in shown:
        if line == ELIDED:
            last.append(line)
            continue
        last = err if line.startswith("threadfix: ") else out
        last.append(line)
    return out, err


def matches(shown: list[str], actual: list[str]) -> bool:
    """``actual`` is ``shown`` with each ``...`` standing for any lines (none included)."""
    pieces: list[list[str]] = [[]]
    for line in shown:
        if line == ELIDED:
            pieces.append([])
        else:
            pieces[-1].append(line)
    at = 0
    for number, piece in enumerate(pieces):
        if number == 0:
            if actual[: len(piece)] != piece:
                return False
            at = len(piece)
            continue
        last = number == len(pieces) - 1
        if last:
            return len(actual) - len(piece) >= at and (not piece or actual[len(actual) - len(piece):] == piece)
        for start in range(at, len(actual) - len(piece) + 1):
            if actual[start:start + len(piece)] == piece:
                at = start + len(piece)
                break
        else:
            return False
    return at == len(actual)


def test_the_readme_has_examples_of_every_command() -> None:
    named = {shlex.split(command)[1] for command, _ in EXAMPLES}
    assert named >= {"repair", "lint", "report", "rules", "dialects"}
    assert all(command.startswith("threadfix ") for command, _ in EXAMPLES)


@pytest.mark.parametrize(("command", "shown"), EXAMPLES, ids=[command for command, _ in EXAMPLES])
def test_a_readme_example_prints_what_the_readme_shows(command: str, shown: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NO_COLOR", None)
    ran = subprocess.run([sys.executable, "-m", "threadfix", *shlex.split(command)[1:]], cwd=ROOT, env=env,
                         capture_output=True, timeout=120)
    out, err = split(shown)
    actual_out, actual_err = ran.stdout.decode().splitlines(), ran.stderr.decode().splitlines()
    assert matches(out, actual_out), f"{command}: stdout\n" + "\n".join(actual_out[:40])
    assert matches(err, actual_err), f"{command}: stderr\n" + "\n".join(actual_err)
    assert ran.returncode in (0, 1), ran.stderr


def test_the_matcher_refuses_what_differs() -> None:
    assert matches(["a", ELIDED, "d"], ["a", "b", "c", "d"]) and matches(["a", ELIDED], ["a"])
    assert not matches(["a", "b"], ["a", "b", "c"]) and not matches(["a", ELIDED, "d"], ["a", "b", "e"])
    assert not matches(["x", ELIDED], ["a", "x"]) and matches([], [])


def test_the_library_example_runs_and_agrees_with_the_command() -> None:
    (code,) = [block for block in blocks("python") if "RepairRun" in block]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ran = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, timeout=120, text=True)
    assert ran.returncode == 0, ran.stderr
    cli = subprocess.run([sys.executable, "-m", "threadfix", "repair", "--dry-run", "--min-age", "0", "sample_threads/"],
                         cwd=ROOT, env=env, capture_output=True, timeout=120, text=True)
    changed, threads = re.search(r"would repair (\d+) of (\d+) threads", cli.stderr).groups()
    lines = ran.stdout.splitlines()
    assert lines[-1] == f"{changed} of {threads} threads; exit 0"
    assert len([line for line in lines[:-1] if line.endswith(" would_repair")]) == int(changed)


def test_help_of_the_package_says_how_to_use_it() -> None:
    import pydoc

    import threadfix

    text = pydoc.render_doc(threadfix, renderer=pydoc.plaintext)
    for name in ("RepairRun", "RunOptions", "LintRun", "report_paths", "undo_journal", "Problem", "ExitCode"):
        assert name in text, name
        assert getattr(threadfix, name) is not None
    assert set(dir(threadfix)) >= set(threadfix.__all__)


def test_the_api_page_is_generated_from_the_docstrings_as_they_are() -> None:
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import generate_api
    finally:
        sys.path.remove(str(ROOT / "docs"))
    assert (ROOT / "docs" / "api.md").read_text(encoding="utf-8") == generate_api.render(), \
        "docs/api.md is out of date: run python docs/generate_api.py"
