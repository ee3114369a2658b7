"""What a person sees on a real terminal (a pseudo-terminal, never a mock): progress never mixes with
results or messages, error lines stay whole, and colour follows --color and NO_COLOR (issue #22)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli.terminal import SGR, run_on_pty, screen

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_threads" / "openai-responses" / "sessions.jsonl"
FINDING = re.compile(r"^\S+: TF\d{3} .* \([a-z-]+\)$")
SPINNER = re.compile("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]")


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000 threads: enough for the progress line to be redrawn between findings."""
    folder = tmp_path_factory.mktemp("big")
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    (folder / "big.jsonl").write_bytes(b"".join(lines[i % len(lines)] for i in range(2000)))
    return folder


def test_lint_findings_never_share_a_line_with_the_progress_line(big: Path) -> None:
    raw, _, code = run_on_pty(["lint", "big.jsonl"], cwd=big)
    assert code == 1
    assert SPINNER.search(raw.decode()), "no progress line was drawn: the check would be vacuous"
    shown = screen(raw)
    assert shown[-1].startswith("threadfix: ") and " findings " in shown[-1]
    findings = shown[:-1]
    assert len(findings) > 1000
    garbled = [line for line in findings if not FINDING.match(line)]
    assert not garbled, garbled[:3]


def test_repair_lines_never_share_a_line_with_the_progress_line(big: Path) -> None:
    raw, _, code = run_on_pty(["repair", "--dry-run", "--min-age", "0", "big.jsonl"], cwd=big)
    assert code == 0
    shown = screen(raw)
    assert shown[-1].startswith("threadfix: would repair ")
    garbled = [line for line in shown[:-1] if not re.match(r"^big\.jsonl:\d+:\S+: \S", line) or SPINNER.search(line)]
    assert not garbled, garbled[:3]


def test_an_error_line_is_one_line_on_a_narrow_terminal(big: Path) -> None:
    name = "a-file-with-a-long-name-" * 4 + ".jsonl"
    (big / name).write_bytes(b"{not json\n")
    raw, _, code = run_on_pty(["lint", "big.jsonl", name], cwd=big, columns=40)
    assert code == 2
    errors = [line for line in raw.decode().replace("\r\n", "\n").split("\n") if "threadfix: error:" in line]
    assert len(errors) == 1
    (line,) = [line for line in screen(raw) if line.startswith("threadfix: error: ")]
    assert name in line and len(line) > 40  # whole, wider than the screen: the terminal wraps it, not threadfix


@pytest.mark.parametrize(("args", "env"), [(["--color", "never"], {}), ([], {"NO_COLOR": "1"})],
                         ids=["--color never", "NO_COLOR"])
def test_no_colour_means_no_styled_byte_at_all(big: Path, args: list[str], env: dict[str, str]) -> None:
    for command in (["lint", "big.jsonl"], ["report", "big.jsonl"], ["repair", "-n", "--min-age", "0", "big.jsonl"]):
        raw, _, _ = run_on_pty([*args, *command], cwd=big, env=env)
        assert not SGR.search(raw.decode()), (command, SGR.findall(raw.decode())[:5])


def test_colour_on_a_terminal_styles_the_spinner_and_lint_text(big: Path) -> None:
    raw, _, _ = run_on_pty(["lint", "big.jsonl"], cwd=big)
    assert "\x1b[32m" in raw.decode()  # the spinner
    finding = next(line for line in raw.decode().split("\r\n") if "TF001" in line)
    assert "\x1b[1;31mTF001\x1b[0m" in finding
    assert FINDING.match(SGR.sub("", finding).split("\x1b[2K")[-1])  # the same words as without colour


def test_report_keeps_its_table_whatever_the_colour(big: Path) -> None:
    coloured, _, _ = run_on_pty(["report", "big.jsonl"], cwd=big)
    plain, _, _ = run_on_pty(["--color", "never", "report", "big.jsonl"], cwd=big)
    assert screen(coloured) == screen(plain)
    assert "\t" not in "\n".join(screen(plain))
    _, piped, _ = run_on_pty(["--color", "always", "report", "big.jsonl"], cwd=big, stdout_on_pty=False)
    assert piped.startswith(b"# totals\n") and b"\x1b" not in piped
