"""Start-up stays small: what ``threadfix --help`` and a small run import, and the pydantic-free reading of
option values (``threadfix.cli.values``) agreeing with typer's own.

The import checks guard structure, not time: each runs threadfix in a fresh interpreter and looks at
``sys.modules`` afterwards.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import typer.main

from threadfix.cli import _register, app
from threadfix.cli import values as cli_values

SAMPLE = Path(__file__).resolve().parents[2] / "sample_threads" / "openai-chat" / "support-bot-timeout.json"
COMMANDS = ("dialects", "lint", "repair", "report", "rules", "undo")
#: what only running a command may import: the library, and the libraries behind its output
HEAVY_THIRD_PARTY = ("rich", "pydantic", "sqlite_utils", "sqlite3", "multiprocessing", "msgspec")

RUN_AND_LIST_MODULES = """
import sys
from threadfix.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n")
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
    assert not [package for package in HEAVY_THIRD_PARTY if imported(modules, package)]


@pytest.mark.parametrize("command", COMMANDS)
def test_command_help_imports_only_the_command_line(command: str) -> None:
    out, modules = run_threadfix(command, "--help")
    assert f"{command} [OPTIONS]" in out
    assert {name for name in modules if name.startswith("threadfix") and not name.startswith("threadfix.cli")} \
        <= {"threadfix", "threadfix.errors"}


@pytest.mark.parametrize("args", [
    ("repair", "--dry-run", "--min-age", "0", "--max-doc-mb", "3"),
    ("lint", "--max-doc-mb", "3"),
    ("report", "--top", "3"),
])
def test_small_run_does_not_import_pydantic_or_rich(args: tuple[str, ...]) -> None:
    """typer would import pydantic to read the options; a piped run has no use for rich."""
    _, modules = run_threadfix("--jobs", "1", *args, str(SAMPLE))
    assert "threadfix.batch" in modules  # the command did run
    assert not imported(modules, "pydantic") or _typer_imports_pydantic_itself()
    assert not imported(modules, "rich")
    # what repair's held outcomes need only once they spill to disk (about 6 ms of every start-up)
    assert not imported(modules, "pickle") and not imported(modules, "tempfile")


@pytest.mark.parametrize("args", [
    ("lint", "--max-doc-mb", "3"),
    ("--jobs", "1", "--color", "never", "report", "--top", "3"),
    ("-j", "1", "--traceback", "repair", "--dry-run", "--min-age", "0"),
])
def test_a_run_registers_only_its_own_command(args: tuple[str, ...]) -> None:
    """Typer builds every registered command's options on each run: the others are not even imported."""
    command = next(arg for arg in args if arg in COMMANDS)
    _, modules = run_threadfix(*args, str(SAMPLE))
    assert "threadfix.batch" in modules  # the command did run
    assert {name for name in modules if name.rpartition(".")[2] in COMMANDS and name.startswith("threadfix.cli.")} \
        == {f"threadfix.cli.{command}"}


def listed_commands(help_text: str) -> list[str]:
    return [line.split()[0] for line in help_text[help_text.index("Commands:"):].splitlines()[1:] if line.startswith("  ")]


@pytest.mark.parametrize("args", [("--help",), ("--help", "lint"), ("-j", "2", "-h", "lint")])
def test_root_help_still_lists_every_command(args: tuple[str, ...]) -> None:
    out, _ = run_threadfix(*args)
    assert listed_commands(out) == sorted(COMMANDS), out


def test_bare_threadfix_prints_the_help_on_stderr_and_exits_2() -> None:
    """As click does for a group run with no arguments: the help itself, not an error line that quotes it."""
    done = subprocess.run([sys.executable, "-m", "threadfix"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("Usage: ") and "[OPTIONS] COMMAND" in done.stderr and "\\x0a" not in done.stderr
    assert listed_commands(done.stderr) == sorted(COMMANDS)


def test_a_mistyped_command_is_matched_against_every_command(capsys) -> None:
    from threadfix.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["--color", "never", "repiar", "x"])
    assert exited.value.code == 2
    assert "No such command 'repiar'. Did you mean 'repair', 'report'?" in capsys.readouterr().err


@given(st.lists(st.sampled_from(["--jobs", "-j", "2", "--color", "never", "--traceback", "--", "-h", "--help",
                                 "--jobs=2", "-j2", "--version", *COMMANDS, "x.json", "lnit"]), max_size=6))
def test_the_command_found_is_the_one_click_runs(args: list[str]) -> None:
    """Found before click parses, the name must be the word click takes for the command (None, which registers
    every command, is always safe). Help for the root: test_root_help_still_lists_every_command."""
    from threadfix.cli import command_named

    named = command_named(args)
    if named is not None:
        context = ROOT.make_context("threadfix", list(args), resilient_parsing=True)
        words = context._protected_args if hasattr(context, "_protected_args") else context.protected_args  # click < 8.2
        assert words[:1] == [named]


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


def _typer_imports_pydantic_itself() -> bool:
    done = subprocess.run([sys.executable, "-c", "import sys, typer; print('pydantic' in sys.modules)"],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip() == "True"


# --------------------------------------------------------------------------- option values without pydantic

needs_typer_coercion = pytest.mark.skipif(cli_values.RuntimeParam is None,
                                          reason="this typer does not coerce through pydantic")


def every_parameter() -> list[tuple[object, object, object]]:
    """(command, context, parameter) for every typed option and argument of the real command tree, --help's included."""
    found = []

    def walk(command, parent) -> None:
        context = command.context_class(command, parent=parent, **command.context_settings)
        for param in command.get_params(context):
            if getattr(param, "type_descriptor", None) is not None:
                found.append((command, context, param))
        for sub in getattr(command, "commands", {}).values():
            walk(sub, context)

    _register()
    walk(typer.main.get_command(app), None)
    return found


PARAMETERS = every_parameter()
#: the root command with every command registered
ROOT = typer.main.get_command(app)


@needs_typer_coercion
def test_every_option_is_read_plainly() -> None:
    assert len(PARAMETERS) > 40
    for _, _, param in PARAMETERS:
        assert isinstance(param._runtime_param, cli_values.PlainRuntimeParam), param.name


def _typer_coercion(param):
    from typer._coercion import build_runtime_param

    return build_runtime_param(param.type_descriptor)


def _outcome(coercion, value, param, context):
    """What a coercion makes of ``value``: ("value", type, value) or ("error", type, message)."""
    try:
        result = coercion.coerce(value, param=param, ctx=context)
    except Exception as exc:  # noqa: BLE001 - the refusal itself is what is compared
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        return ("error", type(exc).__name__, message)
    return ("value", type(result).__name__, repr(result))  # repr: nan equals nan, 5 differs from 5.0 and "5"


def _shape(param) -> tuple[str, str]:
    info = param.type_descriptor.parameter_info
    return (repr(param.type_descriptor.annotation), f"min={info.min} max={info.max} multi={param.multiple or param.nargs == -1}")


#: one parameter of each kind (type, bounds, multiplicity) the commands declare
SHAPES = {_shape(param): (context, param) for _, context, param in PARAMETERS}

# Values a shell can hand an option: canonical numbers, and every near miss typer treats its own way.
NEAR_MISSES = st.sampled_from(["+5", " 5", "5 ", "5_0", "5.0", "5.", ".5", "1e3", "0", "-1", "007", "٣", "nan", "inf",
                               "", " ", "1" * 19, "1" * 16 + ".5", "0.1234567890123456", "true", "a\udcffb"])
NUMBERISH = st.text(alphabet="0123456789.+-_ eEaniInfx\t\n٣\U0001d7d8\udcff", max_size=12)
NUMBERS = st.one_of(st.integers(-10, 10**19), st.floats(allow_nan=True, allow_infinity=True),
                    st.integers(-5, 10**6).map(str), st.decimals(0, 10**6, places=3, allow_nan=False).map(str))
TEXT = st.text(st.one_of(st.characters(), st.sampled_from("\udcff\ud800\x00")), max_size=8)
SCALARS = st.one_of(NEAR_MISSES, NUMBERISH, NUMBERS, TEXT, st.booleans())
VALUES = st.one_of(SCALARS, st.none(),
                   st.lists(SCALARS, max_size=3).flatmap(lambda v: st.sampled_from([v, tuple(v)])))


@needs_typer_coercion
@pytest.mark.parametrize("shape", sorted(SHAPES), ids=" ".join)
@given(value=VALUES)
def test_plain_reading_agrees_with_typer(shape: tuple[str, str], value: object) -> None:
    """For any value, the plain coercion gives typer's value, or typer's refusal in typer's words."""
    context, param = SHAPES[shape]
    plain = cli_values.PlainRuntimeParam(param.type_descriptor)
    assert _outcome(plain, value, param, context) == _outcome(_typer_coercion(param), value, param, context)


@needs_typer_coercion
@pytest.mark.parametrize(("annotation", "value", "expected"), [
    (str, "text", "text"), (str, "a\udcffb", "a\udcffb"), (int, "5", 5), (int, "0", 0), (int, 256, 256),
    (float, "5", 5.0), (float, "0.25", 0.25), (float, 5.0, 5.0), (list[str], ("a", "b"), ["a", "b"]),
])
def test_common_values_take_the_plain_path(annotation: object, value: object, expected: object) -> None:
    """The values every run reads never reach pydantic (and the agreement test above has something to check)."""
    from typer.models import OptionInfo

    got = cli_values.plain_value(annotation, OptionInfo(), value)
    assert got == expected and type(got) is type(expected)


@needs_typer_coercion
@pytest.mark.parametrize("value", ["+5", " 5", "5_0", "5.0", "1e3", "٣", "-1", "0"])
def test_near_misses_are_left_to_typer(value: str) -> None:
    """Spellings typer accepts or refuses in its own way (and ``--top 0`` below its minimum) are not guessed."""
    from typer.models import OptionInfo

    assert cli_values.plain_value(int, OptionInfo(min=1), value) is cli_values.UNSURE


#: what a small run over a plain file of threads has no use for: the libraries of other commands and stores, the
#: session containers (their files are told by a cheap test first), a settings parser with no settings file, and
#: the machinery of writes and of --jobs
NOT_FOR_A_SMALL_RUN = ("pydantic", "rich", "sqlite_utils", "sqlite3", "multiprocessing", "concurrent", "ctypes",
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
    if args[0] == "repair":  # repair never classifies an existing output
        assert "threadfix.failures.classifier" not in modules
