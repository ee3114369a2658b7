"""One vocabulary of options and settings across commands (issue #22): global options on either side of the
command, the same meaning and default for the same option, --format values and exit codes in help, settings for
every command, bad values refused."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from tests.lint.test_cli import threadfix
from threadfix.errors import ExitCode

STUCK = {"id": "t1", "items": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "refund"}]},
    {"type": "function_call", "call_id": "call_1", "name": "approve_refund", "arguments": "{}"},
]}
COMMANDS = ("lint", "repair", "report", "undo", "rules", "dialects")


@pytest.fixture()
def here(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / ".state"))
    (tmp_path / "s.jsonl").write_bytes(orjson.dumps(STUCK) + b"\n")
    return tmp_path


@pytest.mark.parametrize("command", [["lint"], ["report", "--format", "json"], ["repair", "-n", "--min-age", "0"]])
@pytest.mark.parametrize("option", [["--jobs", "2"], ["-j", "1"], ["--color", "never"], ["--traceback"]])
def test_global_options_go_before_or_after_the_command(capsysbinary, here: Path, command, option) -> None:
    before = threadfix(capsysbinary, *option, *command, "s.jsonl")
    after = threadfix(capsysbinary, *command, *option, "s.jsonl")
    assert after == before
    assert before[0] in (0, 1)


def test_a_bad_color_is_refused_before_and_after(capsysbinary, here: Path) -> None:
    for args in (["--color", "sometimes", "lint", "s.jsonl"], ["lint", "--color", "sometimes", "s.jsonl"]):
        assert threadfix(capsysbinary, *args) == (2, "", "threadfix: error: unknown --color 'sometimes'; choose one "
                                                         "of: auto, always, never\n")


@pytest.mark.parametrize("command", ["lint", "repair", "report"])
@pytest.mark.parametrize("value", ["-5m", "-1", "nan", "inf", "soon"])
def test_a_bad_duration_is_refused_by_every_command(capsysbinary, here: Path, command: str, value: str) -> None:
    code, out, err = threadfix(capsysbinary, command, "--min-age", value, "s.jsonl")
    assert (code, out) == (2, "")
    assert err.startswith("threadfix: error: --min-age") and err.count("\n") == 1


def test_help_has_plain_metavars_the_format_values_and_the_exit_codes(capsysbinary) -> None:
    for command in COMMANDS:
        code, out, _ = threadfix(capsysbinary, command, "--help")
        assert code == 0
        assert not re.search(r"<[a-z][\w\[\], ]*>", out), (command, re.findall(r"<[^>]+>", out))
        assert "Exit codes:" in out, command
        listed = {int(n) for n in re.findall(r"^\s+(\d+)\s{2,}", out.split("Exit codes:")[1], re.M)}
        assert 0 in listed, command
        if command in ("lint", "repair", "report"):
            assert listed >= {0, 2, 75, 130}, command
            assert "--jobs N" in out and "--color WHEN" in out and "--min-age DURATION" in out
            assert "--leave-tool NAME" in out
    def flat(command: str) -> str:
        return " ".join(threadfix(capsysbinary, command, "--help")[1].split())

    assert "One of: text (one line per change), json (one document), jsonl" in flat("repair")
    assert "One of: text (one line per finding), json, jsonl, github" in flat("lint")
    assert "One of: text (tables on a terminal, tab-separated when piped, whatever --color), json" in flat("report")


def test_min_age_defaults_say_why_they_differ(capsysbinary) -> None:
    helps = {command: " ".join(threadfix(capsysbinary, command, "--help")[1].split()) for command in ("lint", "repair", "report")}
    assert "Default: 10m (repair writes" in helps["repair"]
    assert "Default: 0 (lint reads only" in helps["lint"] and "Default: 0 (report reads only" in helps["report"]


def test_repair_writes_json_lines(capsysbinary, here: Path) -> None:
    code, out, _ = threadfix(capsysbinary, "repair", "-n", "--min-age", "0", "--format", "jsonl", "s.jsonl")
    assert code == 0
    records = [orjson.loads(line) for line in out.splitlines()]
    assert records[0]["address"] == "s.jsonl:1:id=t1" and records[0]["status"] == "would_repair"
    assert records[-1]["summary"]["changed"] == 1 and len(records) == 2


def test_report_takes_min_age_and_leave_tool(capsysbinary, here: Path) -> None:
    def totals(*args: str) -> dict:
        code, out, _ = threadfix(capsysbinary, "report", "--format", "json", *args, "s.jsonl")
        assert code == 0
        return orjson.loads(out)["totals"]

    assert totals()["stuck_threads"] == 1
    waiting = totals("--leave-tool", "approve_*")
    assert (waiting["stuck_threads"], waiting["dangling_calls"], waiting["waiting_threads"]) == (0, 0, 1)
    recent = totals("--min-age", "1d")  # the file was written just now
    assert (recent["stuck_threads"], recent["recent_threads"]) == (0, 1)


def test_undo_dry_run_writes_nothing(capsysbinary, here: Path) -> None:
    code, _, err = threadfix(capsysbinary, "repair", "--min-age", "0", "s.jsonl")
    assert code == 0
    journal = re.search(r"undo journal: (\S+)", err).group(1)
    repaired = (here / "s.jsonl").read_bytes()
    code, out, err = threadfix(capsysbinary, "undo", "--dry-run", journal)
    assert (code, out, err) == (0, "s.jsonl:1:id=t1: would restore\n", "threadfix: 1 would restore\n")
    assert (here / "s.jsonl").read_bytes() == repaired
    assert threadfix(capsysbinary, "undo", journal)[1] == "s.jsonl:1:id=t1: restored\n"
    assert (here / "s.jsonl").read_bytes() == orjson.dumps(STUCK) + b"\n"


@pytest.mark.parametrize("where", ["[tool.threadfix]", "[tool.threadfix.repair]"])
def test_repair_reads_its_settings_and_the_shared_ones(capsysbinary, here: Path, where: str) -> None:
    (here / "pyproject.toml").write_text(f'{where}\nmin-age = "0"\nleave-tools = ["approve_*"]\n')
    code, out, err = threadfix(capsysbinary, "repair", "-n", "s.jsonl")
    assert code == 0 and "a tool left to others" in out and "1 waiting" in err
    (here / "pyproject.toml").write_text(f'{where}\nmin-age = "0"\n')
    assert "add error output" in threadfix(capsysbinary, "repair", "-n", "s.jsonl")[1]
    assert "skipped" in threadfix(capsysbinary, "repair", "-n", "--min-age", "1d", "s.jsonl")[1]  # options win


WAITING = [  # an AI SDK approval requested in the last step: waiting on a person, left whole by default (#23)
    {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "delete old backups"}]},
    {"id": "a1", "role": "assistant", "parts": [
        {"type": "step-start"},
        {"type": "tool-deleteBackups", "toolCallId": "toolu_3", "state": "approval-requested", "input": {"days": 30},
         "approval": {"id": "appr_3"}}]},
]


@pytest.mark.parametrize("where", ["[tool.threadfix]", "[tool.threadfix.repair]", "[tool.threadfix.lint]"])
def test_answer_waiting_is_a_setting_of_repair_and_lint(capsysbinary, here: Path, where: str) -> None:
    (here / "w.json").write_bytes(orjson.dumps(WAITING))
    (here / "pyproject.toml").write_text(f'{where}\nanswer-waiting = true\n')
    repair = threadfix(capsysbinary, "repair", "-n", "--min-age", "0", "w.json")
    lint = threadfix(capsysbinary, "lint", "w.json")
    answered = (0, "w.json#1.1: add error output for toolu_3 (deleteBackups): aborted, the thread ends on this call\n",
                "threadfix: would repair 1 of 1 thread (1 insert output)\n")
    left = (0, "w.json: skipped: its call toolu_3 to deleteBackups waits on a person or another process (its format "
               "marks it so) and ends the thread; --answer-waiting answers it\n",
            "threadfix: would repair 0 of 1 thread; 1 waiting on a person or another process (--leave-tool, "
            "--answer-waiting)\n")
    assert repair == (left if where.endswith("lint]") else answered)
    assert (lint[0], "TF001" in lint[1]) == ((0, False) if where.endswith("repair]") else (1, True)), lint
    (here / "pyproject.toml").write_text(f'{where}\nanswer-waiting = "yes"\n')
    code, out, err = threadfix(capsysbinary, "lint", "w.json")
    assert (code, out) == (2, "") and f"{where} answer-waiting must be true or false, not 'yes'" in err


def test_report_reads_its_settings(capsysbinary, here: Path) -> None:
    (here / "threadfix.toml").write_text('[report]\nby = "thread"\ntop = 1\n\n[lint]\nfail-on = "error"\n')
    code, out, _ = threadfix(capsysbinary, "report", "--format", "csv", "s.jsonl")
    assert code == 0 and out.startswith("address,later_user_turns,")


@pytest.mark.parametrize(("text", "message"), [
    ('[tool.threadfix]\nmin-ag = "1m"\n', "unknown key 'min-ag' at [tool.threadfix] (did you mean 'min-age'?)"),
    ('[tool.threadfix.repair]\nselect = ["TF0"]\n', "unknown [tool.threadfix.repair] key 'select'"),
    ('[tool.threadfix]\nmin-age = "-5m"\n', "[tool.threadfix] min-age must be a duration of at least 0"),
    ('[tool.threadfix.report]\ntop = 0\n', "[tool.threadfix.report] top must be an integer of at least 1"),
])
def test_bad_settings_are_named_for_every_command(capsysbinary, here: Path, text: str, message: str) -> None:
    (here / "pyproject.toml").write_text(text)
    for command in ("lint", "repair", "report"):
        code, out, err = threadfix(capsysbinary, command, "s.jsonl")
        assert (code, out) == (2, "")
        assert message in err and err.count("\n") == 1, (command, err)


def test_settings_set_color_and_jobs(capsysbinary, here: Path) -> None:
    (here / "pyproject.toml").write_text('[tool.threadfix]\ncolor = "always"\n')
    assert "\x1b[1;31mTF001" in threadfix(capsysbinary, "lint", "s.jsonl")[1]
    assert "\x1b[" not in threadfix(capsysbinary, "lint", "--color", "never", "s.jsonl")[1]


def test_an_input_error_beats_a_busy_store() -> None:
    """Issue #22: with both a locked database and an unreadable input in one batch, 2 (fix something) wins over
    75 (retry), which a retry alone would not clear."""
    assert ExitCode.worst([ExitCode.BUSY, ExitCode.ERROR, ExitCode.FINDINGS]) == ExitCode.ERROR
    assert ExitCode.worst([ExitCode.BUSY, ExitCode.FINDINGS]) == ExitCode.BUSY
    assert ExitCode.worst([]) == ExitCode.OK



#: every option whose value has a bound, with its settings key: (command, option, key's table, key, the bound's words)
BOUNDED = [("lint", "--jobs", "tool.threadfix", "jobs", "whole number of at least 1"),
           ("lint", "--max-doc-mb", "tool.threadfix", "max-doc-mb", "whole number of at least 1"),
           ("lint", "--oversized-bytes", "tool.threadfix.lint", "oversized-bytes", "whole number of at least 1"),
           ("report", "--top", "tool.threadfix.report", "top", "whole number of at least 1"),
           ("lint", "--busy-timeout", "tool.threadfix", "busy-timeout", "number of seconds of at least 0")]


@pytest.mark.parametrize(("command", "option", "table", "key", "bound"), BOUNDED)
@pytest.mark.parametrize("value", ["-1", "0", "1", "2", "0.5", "nan", "inf", "-inf", "1e400"])
def test_an_option_and_its_settings_key_share_one_bound(capsysbinary, here: Path, command: str, option: str,
                                                       table: str, key: str, bound: str, value: str) -> None:
    """The review's finding: the command line and the settings file checked the same bounds twice, and the file let
    `busy-timeout = inf` (and nan) through where --busy-timeout refused it. Now a value the file takes (as a TOML
    number) the option takes (as text), and a value one refuses the other refuses, each in its own words."""
    (here / "pyproject.toml").write_text(f"[{table}]\n{key} = {value}\n")
    by_file = threadfix(capsysbinary, command, "s.jsonl")
    (here / "pyproject.toml").unlink()
    by_option = threadfix(capsysbinary, command, option, value, "s.jsonl")
    refused = by_option[0] == 2
    assert refused == (value in ("-1", "nan", "inf", "-inf", "1e400") or (value in ("0", "0.5") and "whole" in bound))
    if refused:
        assert by_option == (2, "", f"threadfix: error: {option} {'must be a ' + bound}, not {value!r} (see --help)\n")
        assert by_file[:2] == (2, "")
        in_file = bound.replace("whole number", "integer")
        shown = "inf" if value == "1e400" else value
        assert by_file[2].endswith(f"pyproject.toml: [{table}] {key} must be a{'n' * ('whole' in bound)} {in_file}, "
                                   f"not {shown}\n"), by_file
    else:
        assert by_file == by_option
