"""``threadfix lint`` and ``threadfix rules`` as a user runs them: exit codes, stdout and stderr apart."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from threadfix.cli import main

STUCK = {"id": "t1", "items": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "deploy"}]},
    {"type": "function_call", "call_id": "call_1", "name": "deploy", "arguments": "{}"},
]}
HEALTHY = {"id": "t2", "items": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
    {"type": "function_call", "call_id": "call_2", "name": "shell", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_2", "output": ""},
]}


def threadfix(capsysbinary, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    out, err = capsysbinary.readouterr()
    return exited.value.code, out.decode(), err.decode()


@pytest.fixture()
def here(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture()
def store(here: Path) -> Path:
    path = here / "s.jsonl"
    path.write_bytes(orjson.dumps(STUCK) + b"\n" + orjson.dumps(HEALTHY) + b"\n")
    return path


def test_findings_on_stdout_summary_on_stderr_exit_1(capsysbinary, store: Path) -> None:
    code, out, err = threadfix(capsysbinary, "lint", "s.jsonl")
    assert code == 1
    assert out == ("s.jsonl:1:id=t1#1: TF001 call call_1 (deploy) has no output: aborted, the thread ends on this call "
                   "(dangling-call)\n"
                   "s.jsonl:2:id=t2#2: TF207 output of call call_2 (shell) is empty (empty-output)\n")
    assert err == "threadfix: 2 findings in 2 of 2 threads read (1 error, 0 warnings, 1 info); 1 fixable with `threadfix repair`\n"


def test_clean_store_exits_0(capsysbinary, here: Path) -> None:
    (here / "ok.json").write_bytes(orjson.dumps(HEALTHY))
    code, out, err = threadfix(capsysbinary, "lint", "ok.json", "--ignore", "TF207")
    assert (code, out) == (0, "")
    assert err == "threadfix: 0 findings in 0 of 1 thread read (0 errors, 0 warnings)\n"


@pytest.mark.parametrize(("args", "code"), [
    ((), 1),
    (("--exit-zero",), 0),
    (("--fail-on", "error"), 1),
    (("--select", "TF2"), 0),  # only an info finding: below the default --fail-on warning
    (("--select", "TF2", "--fail-on", "info"), 1),
    (("--select", "TF0,TF2", "--ignore", "TF001"), 0),
])
def test_fail_on_select_and_exit_zero(capsysbinary, store: Path, args: tuple[str, ...], code: int) -> None:
    assert threadfix(capsysbinary, "lint", "s.jsonl", *args)[0] == code


def test_errors_beat_findings_and_the_batch_goes_on(capsysbinary, store: Path, here: Path) -> None:
    (here / "bad.json").write_bytes(b"{not json")
    code, out, err = threadfix(capsysbinary, "lint", "bad.json", "s.jsonl", "--exit-zero")
    assert code == 2
    assert "s.jsonl:1:id=t1#1: TF001" in out  # the rest was still linted
    assert err.startswith("threadfix: error: bad.json")
    assert err.endswith("; 1 input error\n")


def test_stdin(capsysbinary, monkeypatch) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(orjson.dumps(STUCK))))
    code, out, _ = threadfix(capsysbinary, "lint", "-", "--format", "jsonl")
    assert code == 1
    assert [json.loads(line)["code"] for line in out.splitlines()] == ["TF001"]


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_machine_formats_are_one_document(capsysbinary, store: Path, fmt: str) -> None:
    code, out, _ = threadfix(capsysbinary, "lint", "s.jsonl", "--format", fmt)
    assert code == 1 and json.loads(out)


def test_min_age_makes_open_calls_pending(capsysbinary, here: Path) -> None:
    (here / "live.json").write_bytes(orjson.dumps(STUCK))  # just written: its mtime is now
    code, out, err = threadfix(capsysbinary, "lint", "live.json", "--min-age", "1h")
    assert (code, out) == (0, "")
    assert "1 thread changed under --min-age ago, open calls not reported" in err


def test_settings_file_applies_and_options_override_it(capsysbinary, store: Path, here: Path) -> None:
    (here / "threadfix.toml").write_text('[lint]\nignore = ["TF207"]\nfail-on = "error"\n')
    code, out, _ = threadfix(capsysbinary, "lint", "s.jsonl", "--select", "TF2")
    assert (code, out) == (0, "")
    code, out, _ = threadfix(capsysbinary, "lint", "s.jsonl", "--select", "TF2", "--ignore", "TF1", "--fail-on", "info")
    assert code == 1 and "TF207" in out
    assert threadfix(capsysbinary, "lint", "s.jsonl", "--isolated", "--select", "TF2")[0] == 0


def test_unknown_setting_is_a_usage_error(capsysbinary, store: Path, here: Path) -> None:
    (here / "pyproject.toml").write_text("[tool.threadfix.lint]\nselct = ['TF0']\n")
    code, out, err = threadfix(capsysbinary, "lint", "s.jsonl")
    assert (code, out) == (2, "")
    assert err == (f"threadfix: error: {here / 'pyproject.toml'}: unknown [tool.threadfix.lint] key 'selct' "
                   "(did you mean 'select'?); known: select, ignore, fail-on, min-age, leave-tools, answer-waiting, "
                   "oversized-bytes, stuck-turns, retry-storm, scan-chars, max-doc-mb, busy-timeout, jobs, color\n")


@pytest.mark.parametrize(("args", "message"), [
    (("--select", "TF999"), "--select: 'TF999' matches no rule code or name"),
    (("--format", "xml"), "unknown --format 'xml'"),
    (("--fail-on", "fatal"), "--fail-on must be one of error, warning, info"),
    (("--min-age", "soon"), "not a duration"),
])
def test_bad_options_exit_2(capsysbinary, store: Path, args: tuple[str, ...], message: str) -> None:
    code, out, err = threadfix(capsysbinary, "lint", "s.jsonl", *args)
    assert (code, out) == (2, "")
    assert message in err


def test_oversized_bytes_option(capsysbinary, here: Path) -> None:
    thread = dict(HEALTHY, items=[*HEALTHY["items"][:2], {**HEALTHY["items"][2], "output": "x" * 500}])
    (here / "big.json").write_bytes(orjson.dumps(thread))
    assert "TF203" not in threadfix(capsysbinary, "lint", "big.json")[1]
    code, out, _ = threadfix(capsysbinary, "lint", "big.json", "--oversized-bytes", "100")
    assert code == 1 and "TF203 output of call call_2 (shell) is 500 bytes, over the 100-byte limit" in out


def test_rules_lists_every_rule(capsysbinary) -> None:
    from threadfix.rules import all_rules

    code, out, err = threadfix(capsysbinary, "rules")
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert lines[0].split() == ["code", "name", "severity", "fix", "summary"]
    assert [line.split()[0] for line in lines[1:]] == [r.code for r in all_rules()]
    assert lines[1].split()[:4] == ["TF001", "dangling-call", "error", "sometimes"]


@pytest.mark.parametrize("name", ["TF205", "tf205", "secret-in-output"])
def test_rules_code_prints_the_documentation(capsysbinary, name: str) -> None:
    code, out, _ = threadfix(capsysbinary, "rules", name)
    assert code == 0
    assert out.startswith("TF205 secret-in-output (error, fix: none)\n\nA tool output that holds something shaped like a credential.\n")
    assert "## Why is this bad?" in out


def test_rules_unknown_code(capsysbinary) -> None:
    code, out, err = threadfix(capsysbinary, "rules", "TF999")
    assert (code, out) == (2, "")
    assert err == "threadfix: error: unknown rule 'TF999'; `threadfix rules` lists them\n"


def test_rules_json(capsysbinary) -> None:
    code, out, _ = threadfix(capsysbinary, "rules", "--format", "json")
    records = json.loads(out)
    assert code == 0 and records[0] == {"code": "TF001", "name": "dangling-call", "severity": "error", "fix": "sometimes",
                                        "summary": records[0]["summary"]}


def test_config_option_reads_that_file_only(capsysbinary, store: Path, here: Path) -> None:
    (here / "threadfix.toml").write_text('[lint]\nselect = ["TF001"]\n')
    (here / "ci.toml").write_text('[lint]\nselect = ["TF207"]\nfail-on = "info"\n')
    code, out, _ = threadfix(capsysbinary, "lint", "s.jsonl", "--config", "ci.toml")
    assert code == 1 and [line.split()[1] for line in out.splitlines()] == ["TF207"]
    code, out, _ = threadfix(capsysbinary, "lint", "s.jsonl")
    assert code == 1 and [line.split()[1] for line in out.splitlines()] == ["TF001"]
