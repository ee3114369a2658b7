"""The ``threadfix`` command: options → library → renderer → exit code. Nothing else lives here."""

from __future__ import annotations

import gc
import io
import os
import signal
import sys

from threadfix import __version__
from threadfix.errors import ExitCode, ThreadfixError

TYPE_CHECKING = False
if TYPE_CHECKING:  # (typing itself costs a small run a millisecond or more)
    from argparse import Namespace
    from typing import Any

    from threadfix.cli.parser import Parser, Root

HELP = """Repair, lint and report stored LLM chat threads whose tool calls never got an output.

Global options (--color, --jobs, --traceback) go before or after the command alike. Settings come from
[tool.threadfix] and [tool.threadfix.COMMAND] in pyproject.toml, or threadfix.toml, found from the current
folder up. `threadfix COMMAND --help` lists each command's exit codes.

Exit codes:
  0    ok
  1    lint findings; repair --check would change something; undo refused a thread
  2    usage, input or store error (the rest of the batch still ran); a --jobs worker killed;
       errors beat every other code but 130
  75   a store was busy or changed while threadfix worked: nothing more written, retry
  130  interrupted
"""


#: the commands, one module each (``threadfix.cli.<name>``: its USAGE, HELP, ``arguments(parser)`` and ``run(args)``)
COMMANDS = ("dialects", "lint", "repair", "report", "rules", "undo")


STDOUT = "<stdout>"


class State:
    traceback = False
    #: auto, always or never; None: not given (a settings file may say, else auto)
    color: str | None = None
    #: processes for lint, report and repair (None: by input size)
    jobs: int | None = None


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


def build_parser() -> Root:
    """The ``threadfix`` parser. A command's module is imported, and its options added, only when it runs (or the
    root's help lists it): the others would cost a small run milliseconds it does not use."""
    from threadfix.cli.options import add_global_options
    from threadfix.cli.parser import Commands, Root, Version

    root = Root("threadfix", "threadfix [OPTIONS] COMMAND [ARGS]...", HELP)
    add_global_options(root, jobs=True, root=True)
    root.add_argument("--version", action=Version, version=__version__, help="Print the version.")
    root.add_help_option()
    root.add_argument("command", action=Commands, known=COMMANDS, load=command_parser,
                      describe=lambda name: _command(name).HELP)
    return root


def command_parser(name: str) -> Parser:
    """The parser of command ``name``, with its options."""
    from threadfix.cli.parser import Parser

    module = _command(name)
    parser = Parser(f"threadfix {name}", module.USAGE, module.HELP)
    module.arguments(parser)
    parser.add_help_option()  # listed last, in every command
    return parser


def _command(name: str) -> Any:
    import importlib

    return importlib.import_module(f"threadfix.cli.{name}")


def parse(args: list[str]) -> Namespace:
    """The values of ``args``: the command's name (``command``), its options, and the global options."""
    from argparse import ArgumentError

    from threadfix.cli.parser import glued, said
    from threadfix.errors import UsageError

    root = build_parser()
    words = glued(args, root.valued_options(), stop_at_word=True)
    command_at = next((i for i, word in enumerate(words) if not word.startswith("-") or word == "--"), len(words))
    root.check_options(words[:command_at])  # (the command's own parser checks the rest)
    try:
        return root.parse_args(words)
    except ArgumentError as exc:
        raise UsageError(said(exc)) from None


def run(args: list[str]) -> int:
    """Parse ``args`` and run their command; its exit code."""
    if not args:  # no_args_is_help: the help, on stderr, and the exit code of a usage error
        sys.stderr.write(build_parser().format_help())
        return ExitCode.ERROR
    from threadfix.cli.options import check_color

    namespace = parse(args)
    State.traceback = namespace.traceback
    State.color = check_color(namespace.color)
    State.jobs = namespace.jobs
    return _command(namespace.command).run(namespace)


def _on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # run every ``finally`` (temp files, transactions) as Ctrl-C would


#: the cyclic garbage collector's first threshold in threadfix's own process, in place of CPython's 700 (issue #28).
#: Start-up creates some 50,000 to 90,000 objects that live as long as the process (modules, functions, classes,
#: tables), and at 700 the collector walked them some 30 times in a small lint: a tenth of its time. A thread's
#: own objects are freed by their reference counts as the run moves on (a lint, report or repair of 20 MB never
#: reached this threshold, and peaked within a MB of the same run at 700); a cycle is still collected, only later.
GC_THRESHOLD = 100_000


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the command, turning every failure into one line and a documented exit code."""
    if argv is None:  # the process is threadfix's (the console script, python -m): a caller's keeps its own
        gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    code = _main(list(sys.argv[1:] if argv is None else argv))
    sys.exit(int(code) if isinstance(code, int) else 0 if code is None else ExitCode.ERROR)


def console() -> None:
    """The ``threadfix`` command and ``python -m threadfix``: :func:`main`, then the process ends without the
    interpreter's teardown (issue #28).

    By then every store is closed, the journal synced and stdout flushed; teardown would free each module's
    objects one by one and run a last collection over them all, 8-10 ms of a small run, for memory the system
    takes back at once. Only the standard streams are left to flush. Under a profiler or a coverage tracer, which
    write their results at exit, the process ends as usual."""
    try:
        main()
    except SystemExit as exc:
        if sys.gettrace() is not None or sys.getprofile() is not None:
            raise
        status = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else ExitCode.ERROR
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, StdoutClosed):  # (a closed pipe or stream: said, or silenced, by _main)
                pass
        os._exit(int(status))


def _main(args: list[str]) -> object:
    """Run the command line ``args``: its exit code, every failure turned into one line."""
    _name_stdout()
    if os.name == "posix":
        signal.signal(signal.SIGTERM, _on_sigterm)
    traceback = "--traceback" in args
    try:
        code = run(args)
    except ThreadfixError as exc:
        error_line(exc.where, exc.message + exc.suffix)
        code = exc.exit_code
    except KeyboardInterrupt:
        note("interrupted; nothing half-written was left behind")
        code = ExitCode.INTERRUPTED
    except (BrokenPipeError, StdoutClosed):
        _silence_stdout()
        code = ExitCode.OK
    except SystemExit as exc:  # --help, --version
        code = exc.code
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into one line
        if isinstance(exc, OSError) and exc.errno is not None:
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
    return code


class StdoutClosed(Exception):
    """The reader of stdout went away (``threadfix lint | head``). Not an OSError, so that no handler on the way
    mistakes it for an error of the store being read or written: :func:`main` ends the run quietly."""


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


def _silence_stdout() -> None:
    """After a closed pipe (``threadfix report | head``), point stdout at /dev/null so exit is quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
