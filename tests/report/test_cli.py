"""``threadfix report`` as a user runs it: exit codes, stdout (the report) and stderr (errors) kept apart."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.report import storegen

ROOT = Path(__file__).resolve().parents[2]


def threadfix(*args: str, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "COLUMNS", "FORCE_COLOR")}
    return subprocess.run([sys.executable, "-m", "threadfix", *args], input=stdin, capture_output=True, cwd=ROOT,
                          env={**environment, **(env or {})}, timeout=60)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, storegen.Truth]:
    folder = tmp_path_factory.mktemp("clean")
    return folder, storegen.write_store(folder, 30, seed=2, broken=False)


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, storegen.Truth]:
    folder = tmp_path_factory.mktemp("broken")
    return folder, storegen.write_store(folder, 30, seed=2, broken=True)


def test_json_report_of_a_readable_store_exits_0_with_nothing_on_stderr(clean) -> None:
    folder, truth = clean
    result = threadfix("report", "--format", "json", str(folder))
    assert (result.returncode, result.stderr) == (0, b"")
    document = orjson.loads(result.stdout)
    assert {key: document["totals"][key] for key in truth.totals()} == truth.totals()


def test_unreadable_input_is_one_error_line_and_exit_2_and_the_rest_is_reported(broken) -> None:
    folder, truth = broken
    result = threadfix("report", "--format", "json", str(folder))
    assert result.returncode == 2
    assert result.stderr.decode().startswith(f"threadfix: error: {folder / 'openai-chat.jsonl'}:3:")
    assert result.stderr.count(b"\n") == 1
    assert orjson.loads(result.stdout)["totals"]["threads"] == truth.threads


def test_a_missing_path_is_reported_and_the_other_paths_still_are(clean, tmp_path: Path) -> None:
    folder, truth = clean
    result = threadfix("report", "--format", "json", str(tmp_path / "nope.jsonl"), str(folder))
    assert result.returncode == 2
    assert result.stderr.decode() == f"threadfix: error: {tmp_path / 'nope.jsonl'}: no such file or folder\n"
    assert orjson.loads(result.stdout)["totals"]["threads"] == truth.threads


def test_text_on_a_pipe_is_tab_separated_and_plain(clean) -> None:
    folder, truth = clean
    result = threadfix("report", "--by", "day", str(folder))
    assert result.returncode == 0
    text = result.stdout.decode()
    assert text.startswith(f"# totals\nthreads\t{truth.threads}\n")
    assert text.index("# by day (utc)") < text.index("# failures by tool")
    assert "\x1b" not in text


def test_color_never_changes_the_layout_on_a_pipe(clean) -> None:
    """Issue #22: --color styles output, it never switches the tab-separated text to the terminal tables."""
    folder, truth = clean
    coloured = threadfix("--color", "always", "report", str(folder), env={"COLUMNS": "100"})
    plain = threadfix("--color", "never", "report", str(folder))
    assert coloured.returncode == plain.returncode == 0
    assert coloured.stdout == plain.stdout
    assert plain.stdout.startswith(f"# totals\nthreads\t{truth.threads}\n".encode())


@pytest.mark.parametrize(("fmt", "start"), [("csv", b"address,later_user_turns,"), ("markdown", b"## threadfix report\n")])
def test_csv_and_markdown(clean, fmt: str, start: bytes) -> None:
    folder, truth = clean
    result = threadfix("report", "--format", fmt, "--by", "thread", "--top", "3", str(folder))
    assert result.returncode == 0 and result.stdout.startswith(start)
    if fmt == "csv":
        assert result.stdout.count(b"\n") == 1 + 3


def test_stdin_is_read_with_a_dash(clean) -> None:
    folder, _ = clean
    data = (folder / "anthropic.jsonl").read_bytes()
    result = threadfix("report", "--format", "json", "-", stdin=data)
    assert result.returncode == 0
    assert orjson.loads(result.stdout)["totals"]["threads"] == data.count(b"\n")


@pytest.mark.parametrize(("args", "message"), [
    (("--by", "tools"), b"unknown --by 'tools'; choose one of: tool, kind, thread, day"),
    (("--format", "yaml"), b"unknown --format 'yaml'; choose one of: text, json, csv, markdown"),
    (("--dialect", "nope"), b"unknown dialect 'nope'"),
    (("--top", "0"), b"--top must be a whole number of at least 1, not '0'"),
])
def test_bad_options_exit_2_with_one_message(clean, args: tuple[str, ...], message: bytes) -> None:
    folder, _ = clean
    result = threadfix("report", *args, str(folder))
    assert result.returncode == 2
    assert result.stdout == b""
    assert message in result.stderr


def test_help_names_every_format_and_breakdown() -> None:
    result = threadfix("report", "--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    for word in ("--by", "--top", "--format", "markdown", "csv", "thread"):
        assert word in text
