"""The command line's parser (issue #28: argparse in place of typer): any command line either parses to the values
the typer parser gave it, or is refused in one line with exit 2 and no traceback.

The pieces below are written from the typer parser's behaviour (1,325 lines this strategy drew were run through
typer's parser before it was replaced, and gave these values; typer handed an empty repeated option on as None):
the same words gave the same values, a repeated option collected a list, the last of a single-valued one won, a
global option before the command stood unless given again after it, and a value could start with a dash. Where the
new parser is stricter it says so: spellings typer's pydantic coercion accepted (``--jobs 5.0`` as 5, ``5_0`` as
50, ``--busy-timeout inf``) are refused by name.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.reliability.harness import cli
from threadfix.cli import parse
from threadfix.cli.parser import UsageError

SET, ADD, FLAG = "set", "add", "flag"
#: (the words, the parameter they set, its value, how): before the command or after it alike
GLOBAL = [
    (("--color", "never"), "color", "never", SET), (("--color=always",), "color", "always", SET),
    (("--traceback",), "traceback", True, FLAG),
    (("--jobs", "2"), "jobs", 2, SET), (("-j", "3"), "jobs", 3, SET), (("-j4",), "jobs", 4, SET),
    (("--jobs=+5",), "jobs", 5, SET), (("--jobs", " 7"), "jobs", 7, SET), (("-j", "007"), "jobs", 7, SET),
    (("--jobs", "99999999999999999999"), "jobs", 99999999999999999999, SET),
]
COLOR_TRACEBACK = [piece for piece in GLOBAL if piece[1] != "jobs"]
SETTINGS = [(("--config", "x.toml"), "config", "x.toml", SET), (("--isolated",), "isolated", True, FLAG)]
STORE = [
    (("--dialect", "openai-chat"), "dialect", "openai-chat", SET), (("--max-doc-mb", "3"), "max_doc_mb", 3, SET),
    (("--max-doc-mb=+8",), "max_doc_mb", 8, SET), (("--table", "chats"), "table", "chats", SET),
    (("--id-column", "id"), "id_column", "id", SET), (("--json-column", "messages"), "json_column", "messages", SET),
    (("--thread-column", "thread_id"), "thread_column", "thread_id", SET),
    (("--order-column", "position"), "order_column", "position", SET),
    (("--item-column", "data"), "item_column", "data", SET),
    (("--busy-timeout", "0.5"), "busy_timeout", 0.5, SET), (("--busy-timeout", "1e3"), "busy_timeout", 1000.0, SET),
    (("--busy-timeout", " 1"), "busy_timeout", 1.0, SET), (("--busy-timeout=.5",), "busy_timeout", 0.5, SET),
    (("--busy-timeout", "2"), "busy_timeout", 2.0, SET),
]
WAITING = [(("--leave-tool", "approve_*"), "leave_tool", "approve_*", ADD),
           (("--leave-tool", "-dash"), "leave_tool", "-dash", ADD)]
MIN_AGE = [(("--min-age", "10m"), "min_age", "10m", SET), (("--min-age", "-5m"), "min_age", "-5m", SET),
           (("--min-age=0",), "min_age", "0", SET)]
ANSWER = [(("--answer-waiting",), "answer_waiting", True, FLAG)]


def formats(*names: str) -> list[tuple[tuple[str, ...], str, Any, str]]:
    return [piece for name in names for piece in (
        (("--format", name), "output_format", name, SET), (("-f", name), "output_format", name, SET),
        ((f"-f{name}",), "output_format", name, SET), ((f"--format={name}",), "output_format", name, SET))]


#: every command's pieces after the command word, and its parameters' defaults as typer gave them
PIECES = {
    "lint": [(("--select", "TF0"), "select", "TF0", ADD), (("--select", "TF2,TF3"), "select", "TF2,TF3", ADD),
             (("--ignore", "TF207"), "ignore", "TF207", ADD), (("--fail-on", "error"), "fail_on", "error", SET),
             (("--exit-zero",), "exit_zero", True, FLAG), (("--oversized-bytes", "100"), "oversized_bytes", 100, SET),
             *formats("json", "sarif"), *MIN_AGE, *WAITING, *ANSWER, *SETTINGS, *STORE, *GLOBAL],
    "repair": [(("--dry-run",), "dry_run", True, FLAG), (("-n",), "dry_run", True, FLAG),
               (("--check",), "check", True, FLAG), (("--diff",), "diff", True, FLAG),
               (("-o", "out.json"), "output", "out.json", SET), (("--output", "-"), "output", "-", SET),
               (("--reason", "-x marks it"), "reason", "-x marks it", SET),
               (("--drop-orphans",), "drop_orphans", True, FLAG), (("--journal-dir", "j"), "journal_dir", "j", SET),
               *formats("jsonl"), *MIN_AGE, *WAITING, *ANSWER, *SETTINGS, *STORE, *GLOBAL],
    "report": [(("--by", "kind"), "by", "kind", SET), (("--top", "3"), "top", 3, SET), (("--top=+2",), "top", 2, SET),
               *formats("csv"), *MIN_AGE, *WAITING, *SETTINGS, *STORE, *GLOBAL],
    "undo": [(("--dry-run",), "dry_run", True, FLAG), (("-n",), "dry_run", True, FLAG), *SETTINGS,
             *COLOR_TRACEBACK],
    "rules": [*formats("json"), *COLOR_TRACEBACK],
    "dialects": COLOR_TRACEBACK,
}
STORE_DEFAULTS = {name: None for name in ("dialect", "max_doc_mb", "table", "id_column", "json_column",
                                           "thread_column", "order_column", "item_column", "busy_timeout")}
RUNS = {"output_format": "text", "min_age": None, "leave_tool": None, "config": None, "isolated": False,
        **STORE_DEFAULTS}
DEFAULTS = {
    "lint": {"select": None, "ignore": None, "fail_on": None, "exit_zero": False, "oversized_bytes": None,
             "answer_waiting": False, **RUNS},
    "repair": {"dry_run": False, "check": False, "diff": False, "output": None, "reason": None, "drop_orphans": False,
               "journal_dir": None, "answer_waiting": False, **RUNS},
    "report": {"by": None, "top": None, **RUNS},
    "undo": {"dry_run": False, "config": None, "isolated": False},
    "rules": {"code": None, "output_format": "text"},
    "dialects": {},
}
PATHS = ["a.jsonl", "-", "chats.db", "postgresql://u@db/app", "dir/", "with space.json"]
#: the arguments each command takes: (their parameter, a strategy for their words)
ARGUMENTS = {
    "lint": ("paths", st.lists(st.sampled_from(PATHS), min_size=1, max_size=3)),
    "repair": ("paths", st.lists(st.sampled_from(PATHS), min_size=1, max_size=3)),
    "report": ("paths", st.lists(st.sampled_from(PATHS), min_size=1, max_size=3)),
    "undo": ("journal", st.lists(st.sampled_from(["journal.jsonl", "j/2026.jsonl"]), min_size=1, max_size=1)),
    "rules": ("code", st.lists(st.sampled_from(["TF001", "dangling-call"]), max_size=1)),
    "dialects": (None, st.just([])),
}

#: words that make any command line refused, wherever they stand (before the command or after it)
REFUSED = [("--jobs", "0"), ("--jobs", "x"), ("-j", "-1"), ("--jobs=",), ("-j", "٣"), ("--selct", "TF0"), ("--nope",),
           ("-x",), ("--colour", "never"), ("--traceback=yes",),
           ("--jobs", "5.0"), ("--jobs", "5_0")]  # (typer's pydantic coercion took these last two as 5 and 50)
#: refused after the command word (each command's own)
REFUSED_AFTER = {
    "lint": [("--max-doc-mb", "0"), ("--oversized-bytes", "-5"), ("--busy-timeout", "-1"), ("--busy-timeout", "nan"),
             ("--busy-timeout", "inf"), ("--exit-zero=1",), ("--sel", "TF0"), ("--version",), ("--top", "3")],
    "repair": [("--dry-run=yes",), ("--max-doc-mb", "x"), ("--select", "TF0"), ("--busy-timeout", "")],
    "report": [("--top", "0"), ("--top", "1.5"), ("--exit-zero",)],
    "undo": [("second.jsonl",), ("--jobs", "2"), ("--format", "json")],
    "rules": [("--jobs", "2"), ("--config", "x.toml")],
    "dialects": [("x",), ("--jobs", "2"), ("--isolated",)],
}
#: an option at the very end with its value missing
MISSING_VALUE = {"lint": "--select", "repair": "--reason", "report": "--by", "undo": "--config", "rules": "--format",
                 "dialects": "--color"}


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[list[str], dict[str, Any] | None]:
    """A command line and the values typer's parser gave it, or None where it is refused."""
    name = draw(st.sampled_from(sorted(PIECES)))
    before = draw(st.lists(st.sampled_from(GLOBAL), max_size=3))
    after = draw(st.lists(st.sampled_from(PIECES[name]), max_size=6))
    parameter, words = ARGUMENTS[name]
    arguments = draw(words)
    dashed = parameter == "paths" and draw(st.booleans())  # a path that looks like an option, after --
    # the arguments stand anywhere among the options, in their own order
    slots = sorted(draw(st.lists(st.integers(0, len(after)), min_size=len(arguments), max_size=len(arguments))))
    chunks: list[tuple[str, ...]] = [piece[0] for piece in before] + [(name,)]
    for index, piece in enumerate(after):
        chunks += [(argument,) for argument, slot in zip(arguments, slots) if slot == index]
        chunks.append(piece[0])
    chunks += [(argument,) for argument, slot in zip(arguments, slots) if slot == len(after)]
    tail = ["--", "-odd.jsonl"] if dashed else []

    values: dict[str, Any] = {"command": name, "color": None, "traceback": False, "jobs": None, **DEFAULTS[name]}
    for _, key, value, how in (*before, *after):
        if how == ADD:
            values[key] = [*(values[key] or []), value]
        else:
            values[key] = value
    if parameter == "paths":
        values["paths"] = [*arguments, *tail[1:]]
    elif parameter is not None:
        values[parameter] = arguments[0] if arguments else None

    refusal = draw(st.sampled_from(["none", "anywhere", "after", "missing value"]))
    if refusal == "anywhere":
        chunks.insert(draw(st.integers(0, len(chunks))), draw(st.sampled_from(REFUSED)))
    elif refusal == "after":
        chunks.insert(draw(st.integers(len(before) + 1, len(chunks))), draw(st.sampled_from(REFUSED_AFTER[name])))
    elif refusal == "missing value":
        tail = []
        chunks.append((MISSING_VALUE[name],))
    return [word for chunk in chunks for word in chunk] + tail, None if refusal != "none" else values


@given(command_lines())
def test_a_command_line_gives_typers_values_or_is_refused_in_one_line(line: tuple[list[str], dict | None]) -> None:
    argv, expected = line
    if expected is not None:
        assert vars(parse(argv)) == expected
        return
    with pytest.raises(UsageError) as refused:
        parse(argv)
    assert "\n" not in str(refused.value)
    ran = cli(*argv)
    assert (ran.code, ran.stdout) == (2, b"")
    assert ran.stderr.startswith("threadfix: error: ") and ran.stderr.endswith(" (see --help)\n")
    assert ran.stderr.count("\n") == 1 and "Traceback" not in ran.stderr


@pytest.mark.parametrize(("argv", "message"), [
    (["lint", "--selct", "TF0", "a.jsonl"], "no such option --selct; did you mean --select?"),
    (["lint", "--sel", "TF0", "a.jsonl"], "no such option --sel; did you mean --select?"),
    (["lint", "-x", "a.jsonl"], "no such option -x"),
    (["--nope", "lint", "a.jsonl"], "no such option --nope"),
    (["lint", "--version"], "no such option --version"),
    (["lint", "--jobs", "0", "a.jsonl"], "--jobs must be a whole number of at least 1, not '0'"),
    (["-j", "5.0", "lint", "a.jsonl"], "--jobs must be a whole number of at least 1, not '5.0'"),
    (["report", "--top", "0", "a"], "--top must be a whole number of at least 1, not '0'"),
    (["lint", "--busy-timeout", "nan", "a"], "--busy-timeout must be a number of seconds of at least 0, not 'nan'"),
    (["lint", "--jobs"], "--jobs needs a value"),
    (["-j"], "--jobs needs a value"),
    (["lint", "--exit-zero=1", "a"], "--exit-zero takes no value"),
    (["lint"], "missing argument PATH"),
    (["undo"], "missing argument JOURNAL"),
    (["undo", "a", "b"], "unexpected extra argument: b"),
    (["dialects", "x", "y"], "unexpected extra arguments: x y"),
    (["--jobs", "2"], "missing command"),
    (["lnit", "a"], "no such command 'lnit'; did you mean 'lint'?"),
])
def test_each_refusal_names_the_option_or_value(argv: list[str], message: str) -> None:
    ran = cli(*argv)
    assert (ran.code, ran.stdout, ran.stderr) == (2, b"", f"threadfix: error: {message} (see --help)\n")


def test_a_value_after_dashes_is_a_path_and_a_dash_is_stdin() -> None:
    assert parse(["lint", "--", "-odd.jsonl", "--exit-zero"]).paths == ["-odd.jsonl", "--exit-zero"]
    assert parse(["repair", "-", "-n"]).paths == ["-"]


@pytest.mark.parametrize("argv", [["--help"], ["-h", "lint"], ["lint", "-h"], ["repair", "--help", "-j", "0"]])
def test_help_is_on_stdout_and_exits_0(argv: list[str]) -> None:
    ran = cli(*argv)
    assert ran.code == 0 and ran.stderr == ""
    assert ran.stdout.decode().startswith("Usage: threadfix ")


def test_version_wins_over_the_rest_of_the_line() -> None:
    from threadfix import __version__

    ran = cli("--version", "lint", "--nope")
    assert (ran.code, ran.stdout, ran.stderr) == (0, f"threadfix {__version__}\n".encode(), "")


@pytest.mark.parametrize("command", ["lint", "repair", "report"])
def test_help_keeps_each_bound_default_and_required_argument(command: str) -> None:
    """What typer's help showed as ``[x>=1]``, ``[default: text]`` and ``[required]`` is still said, in words."""
    text = " ".join(cli(command, "--help").stdout.decode().split())
    assert f"Usage: threadfix {command} [OPTIONS] PATH..." in text
    assert "or - for stdin. [required]" in text and "-f, --format FORMAT" in text and "Default: text." in text
    assert "-j, --jobs N Processes to spread large inputs over (at least 1)." in text
    assert "parse, in MiB (at least 1). Default: 256." in text
    assert "(PostgreSQL: lock_timeout), at least 0. Default: 5." in text
    if command == "report":
        assert "--top N Rows per table (at least 1). Default: 10." in text
    if command == "lint":
        assert "(TF203); at least 1. Default: 100000." in text


@pytest.mark.parametrize("argv", [["lint", "--jobs", "0", "a"], ["lnit", "a"], ["lint", "--selct", "x", "a"]])
def test_a_refused_command_line_is_a_threadfix_error_of_exit_2(argv: list[str]) -> None:
    """A usage error is one of the ThreadfixError family, with its exit code, printed by the family's one rule (its
    message, then what it points at: ``--help``), not a case of its own in the handler of surprises."""
    from threadfix.errors import ExitCode, ThreadfixError

    with pytest.raises(ThreadfixError) as refused:
        parse(argv)
    assert isinstance(refused.value, UsageError) and refused.value.exit_code == ExitCode.ERROR
    assert cli(*argv).stderr == f"threadfix: error: {refused.value.message}{refused.value.suffix}\n"
