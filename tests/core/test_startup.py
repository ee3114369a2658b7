"""Start-up stays small: what ``threadfix --help``, ``--version`` and a small run import (issue #28).

The import checks guard structure, not time: each runs threadfix in a fresh interpreter and looks at
``sys.modules`` afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample_threads" / "openai-chat" / "support-bot-timeout.json"
COMMANDS = ("dialects", "lint", "repair", "report", "rules", "undo")
#: what only running a command may import: the library, and the libraries behind its output (and never the
#: command-line frameworks threadfix no longer uses)
HEAVY_THIRD_PARTY = ("rich", "pydantic", "sqlite_utils", "sqlite3", "multiprocessing", "msgspec", "orjson", "typer",
                     "click", "typing_extensions", "pathlib", "tomllib", "difflib")

#: (only the modules imported from here on: an editable install's import hook brings its own at start-up)
RUN_AND_LIST_MODULES = """
import sys
before = set(sys.modules)
from threadfix.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("\\nMODULES " + " ".join(sorted(set(sys.modules) - before)) + "\\n")
"""


def run_threadfix(*args: str) -> tuple[str, set[str]]:
    """stdout of ``threadfix ARGS`` run in a fresh interpreter (stdout piped), and every module it imported."""
    done = subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, *args], capture_output=True, text=True,
                          timeout=60, check=False)
    listed = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    assert listed, done.stderr
    return done.stdout, set(listed[-1].split()[1:])


def imported(modules: set[str], package: str) -> bool:
    return any(name == package or name.startswith(package + ".") for name in modules)


def test_help_imports_only_the_command_line() -> None:
    out, modules = run_threadfix("--help")
    listed = out[out.index("Commands:"):].split()
    assert all(command in listed for command in COMMANDS), out
    ours = {name for name in modules if name.startswith("threadfix")}
    assert ours <= {"threadfix", "threadfix.errors"} | {m for m in ours if m.startswith("threadfix.cli")}, ours
    assert "threadfix.cli.progress" not in ours
    assert not [package for package in HEAVY_THIRD_PARTY if imported(modules, package)]


def test_version_imports_no_command() -> None:
    out, modules = run_threadfix("--version")
    assert out.startswith("threadfix ") and out.count("\n") == 1
    ours = {name for name in modules if name.startswith("threadfix")}
    assert ours == {"threadfix", "threadfix.errors", "threadfix.cli", "threadfix.cli.options", "threadfix.cli.parser",
                    "threadfix.cli.values"}, ours
    assert not [package for package in (*HEAVY_THIRD_PARTY, "typing", "textwrap") if imported(modules, package)]


@pytest.mark.parametrize("command", COMMANDS)
def test_command_help_imports_only_the_command_line(command: str) -> None:
    out, modules = run_threadfix(command, "--help")
    assert f"{command} [OPTIONS]" in out
    assert {name for name in modules if name.startswith("threadfix") and not name.startswith("threadfix.cli")} \
        <= {"threadfix", "threadfix.errors"}
    assert {name for name in modules if name.rpartition(".")[2] in COMMANDS and name.startswith("threadfix.cli.")} \
        == {f"threadfix.cli.{command}"}
    assert not [package for package in HEAVY_THIRD_PARTY if imported(modules, package)]


@pytest.mark.parametrize("args", [
    ("repair", "--dry-run", "--min-age", "0", "--max-doc-mb", "3"),
    ("lint", "--max-doc-mb", "3"),
    ("report", "--top", "3"),
])
def test_small_run_does_not_import_pydantic_or_rich(args: tuple[str, ...]) -> None:
    """typer imported pydantic to read the options (and click behind it); a piped run has no use for rich."""
    _, modules = run_threadfix("--jobs", "1", *args, str(SAMPLE))
    assert "threadfix.batch" in modules  # the command did run
    assert [name for name in ("pydantic", "typer", "click", "rich") if imported(modules, name)] == []
    # what repair's held outcomes need only once they spill to disk (about 6 ms of every start-up)
    assert not imported(modules, "pickle") and not imported(modules, "tempfile")


@pytest.mark.parametrize("args", [
    ("lint", "--max-doc-mb", "3"),
    ("--jobs", "1", "--color", "never", "report", "--top", "3"),
    ("-j", "1", "--traceback", "repair", "--dry-run", "--min-age", "0"),
])
def test_a_run_registers_only_its_own_command(args: tuple[str, ...]) -> None:
    """A run builds only its own command's options: the others are not even imported."""
    command = next(arg for arg in args if arg in COMMANDS)
    _, modules = run_threadfix(*args, str(SAMPLE))
    assert "threadfix.batch" in modules  # the command did run
    assert {name for name in modules if name.rpartition(".")[2] in COMMANDS and name.startswith("threadfix.cli.")} \
        == {f"threadfix.cli.{command}"}


def listed_commands(help_text: str) -> list[str]:
    """The names the root's help lists (a long summary goes on over indented lines of its own)."""
    return [line.split()[0] for line in help_text[help_text.index("Commands:"):].splitlines()[1:]
            if line.startswith("  ") and not line[2].isspace()]


@pytest.mark.parametrize("args", [("--help",), ("--help", "lint"), ("-j", "2", "-h", "lint")])
def test_root_help_still_lists_every_command(args: tuple[str, ...]) -> None:
    out, _ = run_threadfix(*args)
    assert listed_commands(out) == sorted(COMMANDS), out


def test_bare_threadfix_prints_the_help_on_stderr_and_exits_2() -> None:
    """A bare ``threadfix`` asks for help: the help itself, not an error line that quotes it."""
    done = subprocess.run([sys.executable, "-m", "threadfix"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("Usage: ") and "[OPTIONS] COMMAND" in done.stderr and "\\x0a" not in done.stderr
    assert listed_commands(done.stderr) == sorted(COMMANDS)


def test_a_mistyped_command_is_matched_against_every_command(capsys) -> None:
    from threadfix.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["--color", "never", "repiar", "x"])
    assert exited.value.code == 2
    assert capsys.readouterr().err == ("threadfix: error: no such command 'repiar'; did you mean 'repair', 'report'? "
                                       "(see --help)\n")


def test_no_record_type_is_a_dataclass() -> None:
    """Records are msgspec Structs: Python 3.11 generates a dataclass's methods from source at import, about
    a millisecond each, and a small run imports some 40 records."""
    import importlib
    import inspect
    import pkgutil

    import threadfix

    names = [info.name for info in pkgutil.walk_packages(threadfix.__path__, "threadfix.")
             if not info.name.endswith("__main__")]
    assert len(names) > 50
    records = [f"{name}.{cls.__qualname__}" for name in names
               for _, cls in inspect.getmembers(importlib.import_module(name), inspect.isclass)
               if cls.__module__ == name and "__dataclass_fields__" in vars(cls)]  # (not inherited)
    assert records == []


#: what a small run over a plain file of threads has no use for: the libraries of other commands and stores, the
#: session containers (their files are told by a cheap test first), a settings parser with no settings file, and
#: the machinery of writes and of --jobs
NOT_FOR_A_SMALL_RUN = ("pydantic", "typer", "click", "rich", "sqlite_utils", "sqlite3", "multiprocessing", "concurrent",
                       "ctypes", "psycopg", "difflib", "threadfix.render.report", "threadfix.report",
                       "threadfix.stores.sqlite_layout",
                       "tomllib", "pickle", "tempfile", "threadfix.stores.records", "threadfix.stores.claude_code",
                       "threadfix.stores.codex_rollout", "threadfix.stores.gemini_cli", "threadfix.stores.sqlite",
                       "threadfix.stores.table", "threadfix.stores.postgres", "threadfix.undo")


@pytest.mark.parametrize("args", [
    ("lint", "--format", "json", "--exit-zero"),
    ("repair", "--dry-run", "--min-age", "0", "--format", "json"),
])
@pytest.mark.parametrize("name", ["threads.jsonl", "thread.json"])
def test_a_small_run_imports_nothing_it_does_not_use(tmp_path: Path, args: tuple[str, ...], name: str) -> None:
    """Start-up is paid by every run (issue #28): each module here cost a small run milliseconds it did not use."""
    thread = SAMPLE.read_bytes()
    (tmp_path / name).write_bytes(thread if name.endswith(".json") else thread.replace(b"\n", b"") + b"\n")
    done = subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, *args, name], capture_output=True, text=True,
                          timeout=60, check=False, cwd=tmp_path)  # (no settings file here)
    modules = set(done.stderr.splitlines()[-1].split()[1:])
    assert "threadfix.batch" in modules and done.stdout.strip(), done.stderr  # the command did run
    assert [name for name in NOT_FOR_A_SMALL_RUN if imported(modules, name)] == []
    assert [name for name in NOT_FOR_A_SMALL[args[0]] if imported(modules, name)] == []


#: what each small run has no use for beyond :data:`NOT_FOR_A_SMALL_RUN`: lint scans with Hyperscan only once a run
#: has read a MiB of text and prints no diff; repair never classifies an existing output, runs no rule and masks
#: no secret (its lines hold ids and tool names, made terminal-safe), and imports the diff only with --diff
NOT_FOR_A_SMALL = {
    "lint": ("hyperscan", "threadfix.render.diff"),
    "repair": ("hyperscan", "threadfix.render.diff", "threadfix.failures.classifier", "threadfix.verdicts",
               "threadfix.secrets", "threadfix.rules", "threadfix.lint", "threadfix.render.lint"),
}


#: a small run, listing each regular expression compiled by the code of a module of threadfix as it is imported
#: (``<module>``), and whether the patterns compiled on first use (:mod:`threadfix.patterns`) were compiled
RUN_AND_LIST_COMPILES = """
import re, sys
compile_, at_import = re.compile, []
def spy(pattern, flags=0):
    frame = sys._getframe(1)
    if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__", "").startswith("threadfix"):
        at_import.append(frame.f_globals["__name__"])
    return compile_(pattern, flags)
re.compile = spy
from threadfix.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
lazy = {"threadfix.secrets": "SECRET", "threadfix.rules.internals_leaked": "_IMPLEMENTATION_PATH",
        "threadfix.render.safe": "_UNSAFE"}
def compiled(pattern):
    return isinstance(pattern, re.Pattern) or "search" in vars(pattern)
used = sorted(f"{name}.{attribute}" for name, attribute in lazy.items()
              if name in sys.modules and compiled(getattr(sys.modules[name], attribute)))
sys.stderr.write("\\nCOMPILED " + " ".join(sorted(at_import)) + "\\nUSED " + " ".join(used) + "\\n")
"""


@pytest.mark.parametrize("args", [
    ("lint", "--format", "json", "--exit-zero"),
    ("repair", "--dry-run", "--min-age", "0", "--format", "json"),
])
def test_a_small_run_compiles_at_import_only_the_patterns_it_uses(tmp_path: Path, args: tuple[str, ...]) -> None:
    """No regular expression a small run does not need is compiled as its module is imported (issue #28): the secret
    pattern, the leaked-path pattern and the terminal-safe one wait for a text that needs them. What is compiled at
    import is what every lint uses: the secret rule's and the leak rule's cheap tests, made on every thread's text
    until a run has read enough to compile Hyperscan's one pass, and the classifier's few table builders."""
    (tmp_path / "threads.jsonl").write_bytes(SAMPLE.read_bytes().replace(b"\n", b"") + b"\n")
    done = subprocess.run([sys.executable, "-c", RUN_AND_LIST_COMPILES, *args, "threads.jsonl"], capture_output=True,
                          text=True, timeout=60, check=False, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr  # the command did run
    lines = done.stderr.splitlines()
    at_import = lines[-2].split()[1:]
    assert lines[-1].split() == ["USED"]  # a thread with no secret and no installed path: neither pattern compiled
    expected = {"lint": {"threadfix.secrets": 5, "threadfix.rules.internals_leaked": 6}, "repair": {}}[args[0]]
    assert {name: at_import.count(name) for name in set(at_import) - {"threadfix.failures.classifier"}} == expected
    assert at_import.count("threadfix.failures.classifier") <= 3


#: a small run in a fresh interpreter as the console script runs it (``main()``, the words in sys.argv), counting
#: the cyclic collector's passes while it runs; then main given its words by a caller, and the threshold after it
RUN_AND_COUNT_COLLECTIONS = """
import gc, sys
passes = []
gc.callbacks.append(lambda phase, info: passes.append(info["generation"]) if phase == "start" else None)
from threadfix.cli import main
before, words, default = len(passes), sys.argv[1:], gc.get_threshold()
sys.argv[1:] = words
try:
    main()
except SystemExit:
    pass
during = len(passes) - before
gc.set_threshold(*default)
try:
    main(words)
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write(f"\\nPASSES {during} THRESHOLD {gc.get_threshold() == default}\\n")
"""


@pytest.mark.parametrize("args", [
    ("--help",),
    ("lint", "--format", "json", "--exit-zero"),
    ("repair", "--dry-run", "--min-age", "0", "--format", "json"),
])
def test_the_collector_leaves_start_up_alone_in_threadfixs_own_process(tmp_path: Path, args: tuple[str, ...]) -> None:
    """At CPython's threshold of 700 the cyclic collector walked start-up's long-lived objects (modules, functions,
    classes) some 30 times in a small lint, a tenth of its time (issue #28): in threadfix's own process the threshold
    is threadfix.cli.GC_THRESHOLD, and a small run makes no pass; a caller that hands main its words keeps its own."""
    (tmp_path / "threads.jsonl").write_bytes(SAMPLE.read_bytes().replace(b"\n", b"") + b"\n")
    paths = () if args == ("--help",) else ("threads.jsonl",)
    done = subprocess.run([sys.executable, "-c", RUN_AND_COUNT_COLLECTIONS, *args, *paths], capture_output=True,
                          text=True, timeout=60, check=False, cwd=tmp_path)
    assert done.stdout.strip(), done.stderr  # the command did run
    assert done.stderr.splitlines()[-1] == "PASSES 0 THRESHOLD True"


def _stuck_folder(folder: Path, files: int) -> Path:
    folder.mkdir()
    for n in range(files):
        (folder / f"{n:04d}.json").write_bytes(SAMPLE.read_bytes())
    return folder


def test_the_command_ends_its_process_with_every_line_written_and_its_exit_code(tmp_path: Path) -> None:
    """``python -m threadfix`` ends without the interpreter's teardown (issue #28): what it printed must still reach
    a pipe whole, far more than a pipe holds, and the exit code be the command's."""
    folder = _stuck_folder(tmp_path / "chats", 400)
    done = subprocess.run([sys.executable, "-m", "threadfix", "repair", "--check", "--min-age", "0", "--format",
                           "jsonl", str(folder)], capture_output=True, timeout=120, check=False, cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # --check: something would change
    records = [line for line in done.stdout.splitlines() if b'"address"' in line]
    assert len(records) == 400 and len(done.stdout) > 65536, done.stdout[-300:]
    assert done.stdout.endswith(b"\n") and b"would repair 400 of 400 threads" in done.stderr


def test_under_a_profiler_the_command_ends_as_usual_so_the_profile_is_written(tmp_path: Path) -> None:
    """A profiler (or coverage) writes its results at exit, which a process ended without teardown never reaches."""
    profile = tmp_path / "repair.prof"
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "threadfix", "repair",
                           "--dry-run", "--min-age", "0", str(_stuck_folder(tmp_path / "chats", 2))],
                          capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert profile.stat().st_size > 0


def _command(cwd: Path, *args: str, stdin: str = "") -> tuple[int, str, str, set[str]]:
    """(exit status, stdout, stderr without the module list, modules imported) of ``threadfix ARGS`` in a fresh
    interpreter, in ``cwd`` (no settings file there)."""
    listing = RUN_AND_LIST_MODULES.replace("except SystemExit:\n    pass", "except SystemExit as exc:\n    code = exc.code")
    done = subprocess.run([sys.executable, "-c", listing + "sys.exit(code)\n", *args], capture_output=True,
                          text=True, timeout=60, check=False, cwd=cwd, input=stdin)
    lines = done.stderr.splitlines()
    assert lines and lines[-1].startswith("MODULES "), done.stderr
    return done.returncode, done.stdout, "\n".join(lines[:-1]).strip("\n"), set(lines[-1].split()[1:])


def _links(folder: Path) -> None:
    """A link to nothing, and a link to itself: paths that ``ls`` lists and that name nothing."""
    (folder / "dangling-link").symlink_to("nowhere")
    (folder / "looping-link").symlink_to("looping-link")


def _why(name: str) -> str:
    """What every run says of a path that names nothing (a link says what it is, as ``ls -l`` would show it)."""
    return {"dangling-link": "is a symbolic link to nowhere, which names nothing",
            "looping-link": "is a symbolic link that loops (too many levels of symbolic links)"}.get(
                name, "no such file or folder")


def _repair(cwd: Path, *args: str) -> tuple[int, str, str, set[str]]:
    return _command(cwd, "repair", *args)


@pytest.mark.parametrize("names", [("gone.json",), ("gone.json", "also-gone"), ("dangling-link",), ("looping-link",),
                                   ("no-folder/thread.json",)])
def test_a_repair_of_paths_that_name_nothing_says_so_before_importing_the_library(tmp_path: Path,
                                                                                 names: tuple[str, ...]) -> None:
    """Each path that names nothing gets the line the stores' read gives it, and the run its exit status (2), before
    msgspec, orjson and the stores are imported (issue #28): the same lines as a run that also reads a real folder,
    which goes through the stores."""
    _links(tmp_path)
    (tmp_path / "empty").mkdir()
    status, out, err, modules = _repair(tmp_path, "--min-age", "0", *names)
    assert (status, out) == (2, "")
    assert err.splitlines() == [f"threadfix: error: {name}: {_why(name)}" for name in names]
    assert not [name for name in ("msgspec", "orjson", "threadfix.batch", "threadfix.stores") if imported(modules, name)]
    through_the_stores = _repair(tmp_path, "--min-age", "0", *names, "empty")
    assert imported(through_the_stores[3], "threadfix.stores")
    assert through_the_stores[:3] == (status, out, err)


@pytest.mark.parametrize("args", [("--format", "json"), ("--dialect", "no-such-dialect"), ("--dialect", "gemini"),
                                  ("-",)])
def test_a_run_the_fast_answer_cannot_give_goes_through_the_stores(tmp_path: Path, args: tuple[str, ...]) -> None:
    """A JSON summary, a --dialect the registry checks, and stdin are the stores' to answer, as before."""
    status, out, err, modules = _repair(tmp_path, "--min-age", "0", *args, *(("gone.json",) if args != ("-",) else ()))
    assert imported(modules, "threadfix.stores") or "unknown dialect" in err, err
    if args[0] == "--format":
        assert status == 2 and '"message":"no such file or folder"' in out
    elif args[1:] == ("gemini",):
        assert (status, err) == (2, "threadfix: error: gone.json: no such file or folder")


#: what a path may hold that the terminal must not see as it is, and JSON must escape: an escape sequence, a
#: newline, a bidi override, a quote, a backslash, DEL and a line separator
HOSTILE_NAME = "red\x1b[31m\nline\u202e\"quoted\\\x7f\u2028.json"
LINT_FAST_FORMATS = ("text", "json", "jsonl", "github")


@pytest.mark.parametrize("output_format", LINT_FAST_FORMATS)
@pytest.mark.parametrize("names", [("gone.json",), ("gone.json", "also-gone"), ("dangling-link",),
                                   ("looping-link", "gone.json"), ("no-folder/thread.json", "./gone.jsonl"),
                                   (HOSTILE_NAME,)])
def test_a_lint_of_paths_that_name_nothing_says_so_before_importing_the_library(tmp_path: Path, output_format: str,
                                                                                names: tuple[str, ...]) -> None:
    """Each path that names nothing gets the stores' line, then lint's summary of a run that read nothing (and, in
    JSON, the document listing each path as a problem), exit status 2, before msgspec, orjson and the stores are
    imported (issue #28): byte for byte what a run that also reads an empty folder prints, through the stores."""
    _links(tmp_path)
    (tmp_path / "empty").mkdir()
    args = ("lint", "--format", output_format, *names)
    status, out, err, modules = _command(tmp_path, *args)
    assert status == 2
    assert not [name for name in ("msgspec", "orjson", "threadfix.batch", "threadfix.stores", "threadfix.lint",
                                  "threadfix.render.lint") if imported(modules, name)]
    lines = err.splitlines()
    assert len(lines) == len(names) + 1 and "\x1b" not in err and "\u202e" not in err
    assert lines[-1] == f"threadfix: 0 findings in 0 of 0 threads read (0 errors, 0 warnings); {len(names)} input " \
                        f"error{'' if len(names) == 1 else 's'}"
    if names == (HOSTILE_NAME,):
        assert lines[0] == ("threadfix: error: red\\x1b[31m\\x0aline\\u202e\"quoted\\\\x7f\\u2028.json: no such "
                            "file or folder")
    if output_format == "json":
        document = json.loads(out)
        assert document["findings"] == [] and document["summary"]["threads"] == 0
        assert document["summary"]["problems"] == [{"where": name, "message": _why(name), "exit_code": 2}
                                                   for name in names]
    else:
        assert out == ""
    through_the_stores = _command(tmp_path, *args, "empty")
    assert imported(through_the_stores[3], "threadfix.stores") and imported(through_the_stores[3], "orjson")
    assert through_the_stores[:3] == (status, out, err)


@pytest.mark.parametrize("args", [("--format", "sarif", "gone.json"), ("--dialect", "gemini", "gone.json"),
                                  ("--select", "TF0", "gone.json"), ("--ignore", "TF999", "gone.json"),
                                  ("gone.json", "real.json"), ("-",), ("postgresql://127.0.0.1:1/nodb",),
                                  ("--format", "json", "undecodable-\udcff.json")])
def test_a_lint_the_fast_answer_cannot_give_goes_through_the_stores(tmp_path: Path, args: tuple[str, ...]) -> None:
    """SARIF lists every rule; --dialect, --select and --ignore are checked by their registries; a real file is read,
    stdin and a database URL are the stores' to open; a path of undecodable bytes is not text JSON can carry."""
    (tmp_path / "real.json").write_bytes(SAMPLE.read_bytes())
    status, out, err, modules = _command(tmp_path, "lint", *args, stdin="{}")
    assert imported(modules, "threadfix.stores") or "unknown" in err, err
    assert status == 2
    if args[-1] == "real.json":
        assert "TF001" in out and err.splitlines()[0] == "threadfix: error: gone.json: no such file or folder"
    if "--ignore" in args:
        assert "TF999" in err


def test_lint_checks_its_format_against_every_formatter() -> None:
    """The format is checked before the library is imported, against the command's list, which must be the
    formatters'; the summary's severities must be the model's."""
    from threadfix.cli.lint import FORMATS
    from threadfix.model import Severity
    from threadfix.render.lint import FORMATTERS
    from threadfix.render.lint_summary import SEVERITIES

    assert tuple(FORMATS) == tuple(FORMATTERS)
    assert SEVERITIES == tuple(severity.value for severity in Severity)


def test_the_fast_json_answer_escapes_every_character_as_orjson_does() -> None:
    """The JSON answer of paths that name nothing is written by the standard library's encoder, the run's by
    orjson: the two must escape every character a path can hold (all but lone surrogates, which go through the
    stores) the same way."""
    import orjson

    text = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000)
    fields = {"where": text, "exit_code": 2, "by_code": {}}
    assert json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode("utf-8") == orjson.dumps(fields)


def test_a_report_of_a_path_that_names_nothing_still_goes_through_the_stores(tmp_path: Path) -> None:
    """report has no fast answer: what it prints for inputs it could not read is a whole report that read nothing,
    in the layout of its format (issue #28)."""
    status, out, err, modules = _command(tmp_path, "report", "gone.json")
    assert imported(modules, "threadfix.stores") and imported(modules, "threadfix.render.report")
    assert (status, err) == (2, "threadfix: error: gone.json: no such file or folder")
    assert out.startswith("# totals\nthreads\t0\n") and "unreadable\t1\n" in out
