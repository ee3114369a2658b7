"""Options shared by several commands, declared once, and the checks of their values."""

from __future__ import annotations

from threadfix.cli.values import by_key

TYPE_CHECKING = False
if TYPE_CHECKING:  # the stores package is imported when a command runs, not to build --help
    from argparse import Namespace
    from typing import Any

    from threadfix.cli.parser import Parser
    from pathlib import Path

    from threadfix.stores import StoreOptions

#: ``--min-age``'s help, the same words on every command that has it; each adds its default and why
MIN_AGE_HELP = ("Threads changed more recently than this (30s, 10m, 2h, 1d, or 0 for none) may have calls still "
                "running: their open calls are pending, not dangling.")
DB = "Databases (SQLite, PostgreSQL): "


def add_paths(parser: Parser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help=(
        "JSON/JSONL files, SQLite databases, PostgreSQL URLs, folders (searched recursively for files and "
        "databases), or - for stdin. [required]"))


def add_min_age(parser: Parser, default: str, why: str) -> None:
    """``--min-age``, the same option on every command; ``why`` says why this command's default is what it is."""
    parser.add_argument("--min-age", metavar="DURATION", help=f"{MIN_AGE_HELP} Default: {default} ({why}).")


def add_format(parser: Parser, values: dict[str, str] | tuple[str, ...]) -> None:
    """``--format/-f`` listing the values it takes (with a word on each, when given) in its help."""
    named = values.items() if isinstance(values, dict) else ((value, "") for value in values)
    listed = ", ".join(f"{name} ({what})" if what else name for name, what in named)
    parser.add_argument("-f", "--format", dest="output_format", metavar="FORMAT", default="text",
                        help=f"One of: {listed}. Default: text.")


def add_waiting_options(parser: Parser, *, answer: bool) -> None:
    """``--leave-tool`` (and ``--answer-waiting`` when ``answer``): which open calls wait on someone else."""
    parser.add_argument("--leave-tool", action="append", metavar="NAME", help=(
        "A tool whose outputs come from a person or another process (approvals, deferred or external tools): a "
        "thread with an open call to it is waiting, left whole. A glob (approve_*); repeat for more."))
    if answer:
        parser.add_argument("--answer-waiting", action="store_true", help=(
            "Answer the calls a thread's format marks as waiting (an approval requested, a call deferred) even at "
            "the end of their thread, for when the answer will never come; by default such a thread is waiting, "
            "left whole."))


def add_settings_options(parser: Parser) -> None:
    parser.add_argument("--config", metavar="FILE", help=(
        "Read settings from this file instead of the threadfix.toml or pyproject.toml [tool.threadfix] found "
        "from the current folder up."))
    parser.add_argument("--isolated", action="store_true", help="Ignore every settings file.")


# --------------------------------------------------------------------------- global options
# Accepted before the command (``threadfix --jobs 2 lint``) and after it (``threadfix lint --jobs 2``) alike: the
# root parser sets their defaults, a command's parser leaves them unset (argparse.SUPPRESS), so a value given
# before the command stands unless the same option is given again after it.

COLOR_HELP = ("Colour: auto (on a terminal, unless NO_COLOR is set), always or never. Styles output; never changes "
              "what is printed. Default: auto.")
JOBS_HELP = ("Processes to spread large inputs over (at least 1). Default: one below 64 MB of input (1 GiB for "
             "repair), else one per core (at most 8).")
TRACEBACK_HELP = "Show the full traceback of an unexpected error."


def add_global_options(parser: Parser, *, jobs: bool, root: bool = False) -> None:
    """``--color`` and ``--traceback`` (and ``--jobs``/``-j`` when ``jobs``), on the root or after a command."""
    from argparse import SUPPRESS

    parser.add_argument("--color", metavar="WHEN", default=None if root else SUPPRESS, help=COLOR_HELP)
    parser.add_argument("--traceback", action="store_true", default=False if root else SUPPRESS, help=TRACEBACK_HELP)
    if jobs:
        parser.add_argument("-j", "--jobs", metavar="N", type=by_key("jobs"), default=None if root else SUPPRESS,
                            help=JOBS_HELP)


def check_color(value: str | None) -> str | None:
    if value is not None:
        from threadfix.config import COLORS

        check_format(value, COLORS, "--color")
    return value


#: the options of every command that reads stores, by field name. ``--max-doc-mb`` and ``--busy-timeout`` default
#: to None (not given) so that a settings file can set them; the stores' own defaults (:class:`StoreOptions`) stand
#: when neither does
STORE_OPTIONS = ("dialect", "max_doc_mb", "table", "id_column", "json_column", "thread_column", "order_column",
                 "item_column", "busy_timeout")


def add_store_options(parser: Parser) -> None:
    """The options of every command that reads stores, declared once; :func:`store_options` reads them."""
    parser.add_argument("--dialect", metavar="NAME", help=(
        "Read every thread as this format instead of sniffing it (see `threadfix dialects`)."))
    parser.add_argument("--max-doc-mb", metavar="MIB", type=by_key("max-doc-mb"), help=(
        "Largest single JSON document or JSONL line to parse, in MiB (at least 1). Default: 256."))
    parser.add_argument("--table", metavar="TABLE", help=f"{DB}the table holding threads or items.")
    parser.add_argument("--id-column", metavar="COLUMN", help=f"{DB}the thread id column (one row per thread).")
    parser.add_argument("--json-column", metavar="COLUMN",
                        help=f"{DB}the JSON column holding a thread's items (one row per thread).")
    parser.add_argument("--thread-column", metavar="COLUMN",
                        help=f"{DB}the column naming an item's thread (one row per item).")
    parser.add_argument("--order-column", metavar="COLUMN",
                        help=f"{DB}the column ordering items within a thread (one row per item).")
    parser.add_argument("--item-column", metavar="COLUMN",
                        help=f"{DB}the JSON column holding one item (one row per item).")
    parser.add_argument("--busy-timeout", metavar="SECONDS", type=by_key("busy-timeout"), help=(
        f"{DB}seconds to wait for the app's write lock (PostgreSQL: lock_timeout), at least 0. Default: 5."))


def command_settings(command: str, config: str | Path | None = None, isolated: bool = False) -> dict[str, Any]:
    """The settings file's values for ``command`` (field names), after which ``--color``/``--jobs`` not given on the
    command line take the file's."""
    from pathlib import Path

    from threadfix import config as settings
    from threadfix.cli import State

    found = {} if isolated else settings.load(None if config is None else Path(config)).section(command)
    if State.color is None and "color" in found:
        State.color = found["color"]
    if State.jobs is None and "jobs" in found:
        State.jobs = found["jobs"]
    return found


def option_value(key: str, value: Any, flag: str | None = None) -> Any:
    """An option's value checked as its settings key is (``--min-age -5m`` is refused as ``min-age = "-5m"``)."""
    from threadfix import config as settings

    return None if value is None else settings.SHARED[key].read(value, flag or f"--{key}")


def store_options(args: Namespace, settings: dict[str, Any], *, writable: bool = False) -> StoreOptions:
    """The store options given on the command line, else in the settings (``max-doc-mb``, ``busy-timeout``), else
    the stores' own defaults."""
    from threadfix import dialects
    from threadfix.stores import StoreOptions

    given = {name: getattr(args, name) for name in STORE_OPTIONS}
    for name in ("max_doc_mb", "busy_timeout"):
        if given[name] is None:
            given[name] = settings.get(name)
    if given["dialect"] is not None:
        dialects.get(given["dialect"])  # a ConfigError naming the known dialects
    max_doc_mb = given.pop("max_doc_mb")
    if max_doc_mb is not None:
        given["max_doc_bytes"] = max_doc_mb * 2**20
    return StoreOptions(**{name: value for name, value in given.items() if value is not None}, writable=writable)


def check_format(value: str, allowed: tuple[str, ...], flag: str = "--format") -> str:
    """``value`` when it is one of ``allowed``, else one line naming ``flag`` and every value it takes."""
    if value not in allowed:
        from threadfix.errors import ConfigError

        raise ConfigError(f"unknown {flag} {value!r}; choose one of: {', '.join(allowed)}")
    return value


def one_stdin(paths: list[str]) -> None:
    """``-`` (stdin) stands alone: it cannot be mixed with other paths."""
    if "-" in paths and len(paths) > 1:
        from threadfix.errors import ConfigError

        raise ConfigError("- (stdin) cannot be combined with other paths")

