"""Options shared by several commands, declared once."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:  # the stores package is imported when a command runs, not to build --help
    from threadfix.stores import StoreOptions

Paths = Annotated[list[str], typer.Argument(help="JSON/JSONL files, SQLite databases, PostgreSQL URLs, folders (searched recursively for files and databases), or - for stdin.", show_default=False, metavar="PATH")]
Dialect = Annotated[Optional[str], typer.Option("--dialect", metavar="NAME", help="Read every thread as this format instead of sniffing it (see `threadfix dialects`).")]
MaxDocMb = Annotated[Optional[int], typer.Option("--max-doc-mb", metavar="MIB", show_default=False, help="Largest single JSON document or JSONL line to parse, in MiB. Default: 256.", min=1)]
Table = Annotated[Optional[str], typer.Option("--table", metavar="TABLE", help="Databases (SQLite, PostgreSQL): the table holding threads or items.", rich_help_panel="SQLite")]
IdColumn = Annotated[Optional[str], typer.Option("--id-column", metavar="COLUMN", help="Databases (SQLite, PostgreSQL): the thread id column (one row per thread).", rich_help_panel="SQLite")]
JsonColumn = Annotated[Optional[str], typer.Option("--json-column", metavar="COLUMN", help="Databases (SQLite, PostgreSQL): the JSON column holding a thread's items (one row per thread).", rich_help_panel="SQLite")]
ThreadColumn = Annotated[Optional[str], typer.Option("--thread-column", metavar="COLUMN", help="Databases (SQLite, PostgreSQL): the column naming an item's thread (one row per item).", rich_help_panel="SQLite")]
OrderColumn = Annotated[Optional[str], typer.Option("--order-column", metavar="COLUMN", help="Databases (SQLite, PostgreSQL): the column ordering items within a thread (one row per item).", rich_help_panel="SQLite")]
ItemColumn = Annotated[Optional[str], typer.Option("--item-column", metavar="COLUMN", help="Databases (SQLite, PostgreSQL): the JSON column holding one item (one row per item).", rich_help_panel="SQLite")]
BusyTimeout = Annotated[Optional[float], typer.Option("--busy-timeout", metavar="SECONDS", min=0, show_default=False, help="Databases (SQLite, PostgreSQL): seconds to wait for the app's write lock (PostgreSQL: lock_timeout). Default: 5.", rich_help_panel="SQLite")]
AnswerWaiting = Annotated[bool, typer.Option("--answer-waiting", help="Answer the calls a thread's format marks as waiting (an approval requested, a call deferred) even at the end of their thread, for when the answer will never come; by default such a thread is waiting, left whole.")]
LeaveTools = Annotated[Optional[list[str]], typer.Option("--leave-tool", metavar="NAME", help="A tool whose outputs come from a person or another process (approvals, deferred or external tools): a thread with an open call to it is waiting, left whole. A glob (approve_*); repeat for more.", show_default=False)]
Config = Annotated[Optional[Path], typer.Option("--config", metavar="FILE", help="Read settings from this file instead of the threadfix.toml or pyproject.toml [tool.threadfix] found from the current folder up.")]
Isolated = Annotated[bool, typer.Option("--isolated", help="Ignore every settings file.")]

#: ``--min-age``'s help, the same words on every command that has it; each adds its default and why
MIN_AGE_HELP = ("Threads changed more recently than this (30s, 10m, 2h, 1d, or 0 for none) may have calls still "
                "running: their open calls are pending, not dangling.")


def min_age_option(default: str, why: str) -> Any:
    """``--min-age``, the same option on every command; ``why`` says why this command's default is what it is."""
    return Annotated[Optional[str], typer.Option("--min-age", metavar="DURATION", show_default=False,
                                                 help=f"{MIN_AGE_HELP} Default: {default} ({why}).")]


def format_option(values: dict[str, str] | tuple[str, ...]) -> Any:
    """``--format/-f`` listing the values it takes (with a word on each, when given) in its help."""
    named = values.items() if isinstance(values, dict) else ((value, "") for value in values)
    listed = ", ".join(f"{name} ({what})" if what else name for name, what in named)
    return Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", help=f"One of: {listed}.")]


# --------------------------------------------------------------------------- global options
# Accepted before the command (``threadfix --jobs 2 lint``) and after it (``threadfix lint --jobs 2``) alike.

COLORS = ("auto", "always", "never")
Color = Annotated[Optional[str], typer.Option("--color", metavar="WHEN", show_default=False, help="Colour: auto (on a terminal, unless NO_COLOR is set), always or never. Styles output; never changes what is printed. Default: auto.")]
Jobs = Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, metavar="N", show_default=False, help="Processes to spread large inputs over. Default: one below 64 MB of input, else one per core (at most 8).")]
Traceback = Annotated[bool, typer.Option("--traceback", help="Show the full traceback of an unexpected error.")]


def check_color(value: str | None) -> str | None:
    if value is not None and value not in COLORS:
        from threadfix.errors import ConfigError

        raise ConfigError(f"unknown --color {value!r}; choose one of: {', '.join(COLORS)}")
    return value


def takes_global_options(*, jobs: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command ``--color`` and ``--traceback`` (and ``--jobs`` when ``jobs``), which the root command
    also takes: given after the command, they set the same state as before it."""
    parameters: list[tuple[str, object, object]] = [("color", Color, None), ("traceback", Traceback, False)]
    if jobs:
        parameters.append(("jobs", Jobs, None))

    def apply(values: dict[str, Any]) -> dict[str, Any]:
        from threadfix.cli import State

        if values["color"] is not None:
            State.color = check_color(values["color"])
        if values.get("jobs") is not None:
            State.jobs = values["jobs"]
        State.traceback = State.traceback or values["traceback"]
        return {}

    return lambda command: with_parameters(command, tuple(parameters), apply)


#: the options of every command that reads stores: (parameter name, annotated type, default). ``--max-doc-mb``
#: and ``--busy-timeout`` default to None (not given) so that a settings file can set them; their defaults are:
DEFAULT_MAX_DOC_MB, DEFAULT_BUSY_TIMEOUT = 256, 5.0
STORE_PARAMETERS: tuple[tuple[str, object, object], ...] = (
    ("dialect", Dialect, None),
    ("max_doc_mb", MaxDocMb, None),
    ("table", Table, None),
    ("id_column", IdColumn, None),
    ("json_column", JsonColumn, None),
    ("thread_column", ThreadColumn, None),
    ("order_column", OrderColumn, None),
    ("item_column", ItemColumn, None),
    ("busy_timeout", BusyTimeout, None),
)


def reads_stores(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command the shared store options, declared once; it receives them as ``store: StoreOptions``.

    ``store`` is keyword-only and its annotation is left unevaluated, so that declaring it imports nothing.
    """
    return with_parameters(command, STORE_PARAMETERS, lambda values: {"store": StoreArgs(values)})


class StoreArgs:
    """The store options as given on the command line; :meth:`options` completes them from the settings."""

    def __init__(self, given: dict[str, Any]) -> None:
        self.given = given

    def options(self, settings: dict[str, Any], *, writable: bool = False) -> StoreOptions:
        values = dict(self.given)
        for name, default in (("max_doc_mb", DEFAULT_MAX_DOC_MB), ("busy_timeout", DEFAULT_BUSY_TIMEOUT)):
            if values[name] is None:
                values[name] = settings.get(name, default)
        return store_options(**values, writable=writable)


def command_settings(command: str, config: Path | None = None, isolated: bool = False) -> dict[str, Any]:
    """The settings file's values for ``command`` (field names), after which ``--color``/``--jobs`` not given on the
    command line take the file's."""
    from threadfix import config as settings
    from threadfix.cli import State

    found = {} if isolated else settings.load(config).section(command)
    if State.color is None and "color" in found:
        State.color = found["color"]
    if State.jobs is None and "jobs" in found:
        State.jobs = found["jobs"]
    return found


def option_value(key: str, value: Any, flag: str | None = None) -> Any:
    """An option's value checked as its settings key is (``--min-age -5m`` is refused as ``min-age = "-5m"``)."""
    from threadfix import config as settings

    return None if value is None else settings.SHARED[key].read(value, flag or f"--{key}")


def with_parameters(command: Callable[..., Any], parameters: tuple[tuple[str, object, object], ...],
                    gather: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[..., Any]:
    """``command`` with ``parameters`` (name, annotated type, default) appended to its options; their values are
    handed to ``gather``, whose result is passed to the command as keywords.

    Typer reads a command's options from its signature, so the shared ones are appended to the command's own.
    """
    signature = inspect.signature(command)
    own = [_evaluated(p, command) for p in signature.parameters.values() if p.name != "store"]
    shared = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
              for name, annotation, default in parameters]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name, _, _ in parameters}
        return command(**kwargs, **gather(values))

    wrapper.__signature__ = signature.replace(parameters=[*own, *shared])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in (*own, *shared)}
    return wrapper


def _evaluated(parameter: inspect.Parameter, function: Callable[..., Any]) -> inspect.Parameter:
    """``parameter`` with its annotation evaluated where it was written (it is a string under
    ``from __future__ import annotations``), as ``inspect.signature(eval_str=True)`` would."""
    annotation = parameter.annotation
    if isinstance(annotation, str):
        annotation = eval(annotation, function.__globals__)  # noqa: S307 - our own source's annotations
    return parameter.replace(annotation=annotation)


def store_options(*, dialect: str | None, max_doc_mb: int = DEFAULT_MAX_DOC_MB, table: str | None = None,
                  id_column: str | None = None, json_column: str | None = None, thread_column: str | None = None,
                  order_column: str | None = None, item_column: str | None = None,
                  busy_timeout: float = DEFAULT_BUSY_TIMEOUT, writable: bool = False) -> StoreOptions:
    from threadfix import dialects
    from threadfix.stores import StoreOptions

    if dialect is not None:
        dialects.get(dialect)  # a ConfigError naming the known dialects
    return StoreOptions(max_doc_bytes=max_doc_mb * 2**20, dialect=dialect, table=table, id_column=id_column,
                        json_column=json_column, thread_column=thread_column, order_column=order_column,
                        item_column=item_column, busy_timeout=busy_timeout, writable=writable)


def check_format(value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        from threadfix.errors import ConfigError

        raise ConfigError(f"unknown --format {value!r}; choose one of: {', '.join(allowed)}")
    return value



def one_stdin(paths: list[str]) -> None:
    """``-`` (stdin) stands alone: it cannot be mixed with other paths."""
    if "-" in paths and len(paths) > 1:
        from threadfix.errors import ConfigError

        raise ConfigError("- (stdin) cannot be combined with other paths")


#: the metavar of an option that names none itself, by the type of its value (never typer's ``<list[str]>``)
FALLBACK_METAVARS = {str: "TEXT", int: "N", float: "NUMBER", Path: "PATH"}


def plain_metavars(command: Any) -> None:
    """Help with plain metavars: ``--top N``, ``PATH...``, never typer's type labels (``<int range>``)."""
    for param in getattr(command, "params", ()):
        if getattr(param, "param_type_name", None) == "argument":
            name = param.metavar or param.name.upper()
            shown = name if param.nargs == 1 else f"{name}..."
            param.display_type_rich = lambda ctx: None
            param._rich_display_name = lambda shown=shown: shown
            param._usage_display_name = lambda shown=shown, required=param.required: shown if required else f"[{shown}]"
        elif getattr(param, "metavar", "") is None and not getattr(param, "is_flag", False):
            descriptor = getattr(param, "type_descriptor", None)
            annotation = getattr(descriptor, "annotation", None)
            if getattr(descriptor, "is_list", False):
                annotation = str
            param.metavar = FALLBACK_METAVARS.get(annotation, "VALUE")
    for subcommand in getattr(command, "commands", {}).values():
        plain_metavars(subcommand)
