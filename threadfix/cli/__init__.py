"""The ``threadfix`` command: options → library → renderer → exit code. Nothing else lives here."""

from __future__ import annotations

import io
import os
import signal
import sys
from typing import Annotated, Any, Optional

import typer

from threadfix import __version__
from threadfix.cli.options import Color, Jobs, Traceback, check_color, plain_metavars
from threadfix.cli.values import read_plainly
from threadfix.errors import ExitCode, ThreadfixError

HELP = """Repair, lint and report stored LLM chat threads whose tool calls never got an output.

Global options (--color, --jobs, --traceback) go before or after the command alike. Settings come from
[tool.threadfix] and [tool.threadfix.COMMAND] in pyproject.toml, or threadfix.toml, found from the current
folder up. `threadfix COMMAND --help` lists each command's exit codes.

\b
Exit codes:
  0    ok
  1    lint findings; repair --check would change something; undo refused a thread
  2    usage, input or store error (the rest of the batch still ran); a --jobs worker killed;
       errors beat every other code but 130
  75   a store was busy or changed while threadfix worked: nothing more written, retry
  130  interrupted
"""


#: the commands, each registered on ``app`` by importing its module (``threadfix.cli.<name>``)
COMMANDS = ("dialects", "lint", "repair", "report", "rules", "undo")
#: the options before the command that take a value: what follows them is not the command's name
_VALUED_ROOT_OPTIONS = frozenset(("--color", "--jobs", "-j"))


class _Group(typer.core.TyperGroup):
    """The ``threadfix`` command as typer builds it, its and its subcommands' options read without pydantic."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        read_plainly(self)  # typer hands over the subcommands, built, to this constructor
        plain_metavars(self)

    def list_commands(self, ctx: Any) -> list[str]:
        """Help lists the commands by name, whichever were registered first."""
        return sorted(self.commands)


app = typer.Typer(
    name="threadfix",
    cls=_Group,
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: starts in a third of the time and prints nothing from data
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


STDOUT = "<stdout>"


class State:
    traceback = False
    #: auto, always or never; None: not given (a settings file may say, else auto)
    color: str | None = None
    #: processes for lint, report and repair (None: by input size)
    jobs: int | None = None
    #: the command said what an interrupt left (repair: what it committed), so main need not
    interrupt_said = False


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"threadfix {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def root(
    traceback: Traceback = False,
    color: Color = None,
    version: Annotated[Optional[bool], typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")] = None,
    jobs: Jobs = None,
) -> None:
    State.traceback = traceback
    State.color = check_color(color)
    State.jobs = jobs
    State.interrupt_said = False


def error_line(where: str | None, message: str) -> None:
    """``threadfix: error: <where>: <what>``, with untrusted parts made terminal-safe."""
    from threadfix.render.safe import terminal_safe

    text = terminal_safe(message, 500)
    if where:
        text = f"{terminal_safe(where, 300)}: {text}"
    sys.stderr.write(f"threadfix: error: {text}\n")


def note(message: str) -> None:
    """A message for the person at the terminal (stderr, never stdout)."""
    sys.stderr.write(f"threadfix: {message}\n")


def describe_store(store: object) -> None:
    """Say on stderr what was detected about a store (a SQLite layout), for ``on_store`` callbacks."""
    description = getattr(store, "description", None)
    if description:
        from threadfix.render.safe import terminal_safe

        note(terminal_safe(description, 500))


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def use_color(stream_is_terminal: bool) -> bool:
    if State.color == "always":
        return True
    if State.color == "never" or os.environ.get("NO_COLOR"):
        return False
    return stream_is_terminal


def _register(args: list[str] | None = None) -> None:
    """Register the command ``args`` run, or every command when they name none (help, a mistyped name).

    Typer builds every registered command's options on each run; building the five a run does not use, and
    importing their modules, cost about 4 ms of a small run's start-up.
    """
    import importlib

    named = None if args is None else command_named(args)
    for name in COMMANDS if named is None else (named,):
        importlib.import_module(f"threadfix.cli.{name}")


def command_named(args: list[str]) -> str | None:
    """The command ``args`` run, or None when they ask for the root's help or name no known command."""
    after_value = False
    for arg in args:
        if after_value:
            after_value = False
        elif arg in _VALUED_ROOT_OPTIONS:
            after_value = True
        elif arg in ("-h", "--help", "--"):
            return None
        elif not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def _on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # run every ``finally`` (temp files, transactions) as Ctrl-C would


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning every failure into one line and a documented exit code."""
    _register(argv if argv is not None else sys.argv[1:])
    _name_stdout()
    if os.name == "posix":
        signal.signal(signal.SIGTERM, _on_sigterm)
    traceback = "--traceback" in (argv if argv is not None else sys.argv[1:])
    try:
        code = app(args=argv, standalone_mode=False)
        if code == ExitCode.INTERRUPTED and not State.interrupt_said:  # typer turns Ctrl-C and SIGTERM inside a
            note("interrupted; nothing half-written was left behind")  # command into a quiet 130
    except ThreadfixError as exc:
        error_line(exc.where, exc.message)
        code = exc.exit_code
    except KeyboardInterrupt:
        note("interrupted; nothing half-written was left behind")
        code = ExitCode.INTERRUPTED
    except (BrokenPipeError, StdoutClosed):
        _silence_stdout()
        code = ExitCode.OK
    except SystemExit as exc:
        code = exc.code
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into one line
        aborts, usage_errors, help_asked = _click_exception_types()
        if isinstance(exc, aborts):
            code = ExitCode.INTERRUPTED
        elif isinstance(exc, help_asked):  # a bare ``threadfix``: the help, on stderr, as click would print it
            sys.stderr.write(exc.format_message() + "\n")
            code = ExitCode.ERROR
        elif isinstance(exc, usage_errors):
            error_line(None, f"{exc.format_message()} (see --help)")
            code = ExitCode.ERROR
        elif isinstance(exc, OSError) and exc.errno is not None:
            where = getattr(exc, "filename", None)
            error_line(where, os.strerror(exc.errno).lower())
            if where == STDOUT:
                _silence_stdout()  # Python's own flush at exit would complain a second time
            code = ExitCode.ERROR
        else:
            if traceback:
                import traceback as tb

                tb.print_exc()
            error_line(None, f"internal error ({type(exc).__name__}); rerun with --traceback and report it")
            code = ExitCode.ERROR
    try:
        sys.stdout.flush()
    except (BrokenPipeError, StdoutClosed):
        _silence_stdout()
    except OSError as exc:
        error_line(STDOUT, os.strerror(exc.errno).lower() if exc.errno else str(exc))
        _silence_stdout()
        code = ExitCode.ERROR
    sys.exit(int(code) if isinstance(code, int) else 0 if code is None else ExitCode.ERROR)


class StdoutClosed(Exception):
    """The reader of stdout went away (``threadfix lint | head``). Not an OSError, so that click, which turns
    EPIPE into exit 1 ("findings") on its own, lets it through to :func:`main`."""


class _NamedStdout(io.FileIO):
    """Descriptor 1 naming itself in the errors it raises, so ``> /dev/full`` reads ``<stdout>: no space left``."""

    def write(self, data) -> int:  # type: ignore[override]
        try:
            return super().write(data)
        except BrokenPipeError as exc:
            raise StdoutClosed() from exc
        except OSError as exc:
            if exc.filename is None:
                exc.filename = STDOUT
            raise


def _name_stdout() -> None:
    out = sys.stdout
    try:
        if not isinstance(out, io.TextIOWrapper) or out.fileno() != 1:
            return
    except (OSError, ValueError):  # no real stdout (embedded, captured): leave it alone
        return
    out.flush()
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(_NamedStdout(1, "w", closefd=False)), encoding=out.encoding,
                                  errors=out.errors, line_buffering=out.line_buffering)


def _click_exception_types() -> tuple[tuple[type, ...], ...]:
    """Abort, usage-error and no-arguments-so-help classes of click and of the copy of click that newer typer
    bundles."""
    import importlib

    found: tuple[list[type], ...] = ([], [], [])
    for name in ("typer._click.exceptions", "click.exceptions", "typer.exceptions"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for kinds, attr in zip(found, ("Abort", "ClickException", "NoArgsIsHelpError")):
            if hasattr(module, attr):
                kinds.append(getattr(module, attr))
    return tuple(map(tuple, found))


def _silence_stdout() -> None:
    """After a closed pipe (``threadfix report | head``), point stdout at /dev/null so exit is quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
