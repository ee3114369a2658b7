"""Options shared by several commands, declared once."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:  # the stores package is imported when a command runs, not to build --help
    from threadfix.stores import StoreOptions

Paths = Annotated[list[str], typer.Argument(help="JSON/JSONL files, SQLite databases, folders (searched recursively for both), or - for stdin.", show_default=False, metavar="PATH")]
Dialect = Annotated[Optional[str], typer.Option("--dialect", help="Read every thread as this format instead of sniffing it (see `threadfix dialects`).")]
MaxDocMb = Annotated[int, typer.Option("--max-doc-mb", help="Largest single JSON document or JSONL line to parse, in MiB.", min=1)]
Table = Annotated[Optional[str], typer.Option("--table", help="Databases (SQLite, PostgreSQL): the table holding threads or items.", rich_help_panel="SQLite")]
IdColumn = Annotated[Optional[str], typer.Option("--id-column", help="Databases (SQLite, PostgreSQL): the thread id column (one row per thread).", rich_help_panel="SQLite")]
JsonColumn = Annotated[Optional[str], typer.Option("--json-column", help="Databases (SQLite, PostgreSQL): the JSON column holding a thread's items (one row per thread).", rich_help_panel="SQLite")]
ThreadColumn = Annotated[Optional[str], typer.Option("--thread-column", help="Databases (SQLite, PostgreSQL): the column naming an item's thread (one row per item).", rich_help_panel="SQLite")]
OrderColumn = Annotated[Optional[str], typer.Option("--order-column", help="Databases (SQLite, PostgreSQL): the column ordering items within a thread (one row per item).", rich_help_panel="SQLite")]
ItemColumn = Annotated[Optional[str], typer.Option("--item-column", help="Databases (SQLite, PostgreSQL): the JSON column holding one item (one row per item).", rich_help_panel="SQLite")]
BusyTimeout = Annotated[float, typer.Option("--busy-timeout", help="Databases: seconds to wait for the app's write lock (PostgreSQL: lock_timeout).", rich_help_panel="SQLite")]
Format = Annotated[str, typer.Option("--format", "-f", help="Output format.")]
LeaveTools = Annotated[Optional[list[str]], typer.Option("--leave-tool", metavar="NAME", help="A tool whose outputs come from a person or another process (approvals, deferred or external tools): a thread with an open call to it is waiting, left whole. A glob (approve_*); repeat for more.", show_default=False)]


#: the options of every command that reads stores: (parameter name, annotated type, default)
STORE_PARAMETERS: tuple[tuple[str, object, object], ...] = (
    ("dialect", Dialect, None),
    ("max_doc_mb", MaxDocMb, 256),
    ("table", Table, None),
    ("id_column", IdColumn, None),
    ("json_column", JsonColumn, None),
    ("thread_column", ThreadColumn, None),
    ("order_column", OrderColumn, None),
    ("item_column", ItemColumn, None),
    ("busy_timeout", BusyTimeout, 5.0),
)


def reads_stores(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command the shared store options, declared once; it receives them as ``store: StoreOptions``.

    Typer reads a command's options from its signature, so the shared ones are appended to the
    command's own and gathered back into one StoreOptions before the command runs. ``store`` is
    keyword-only and its annotation is left unevaluated, so that declaring it imports nothing.
    """
    signature = inspect.signature(command)
    own = [_evaluated(p, command) for p in signature.parameters.values() if p.name != "store"]
    shared = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
              for name, annotation, default in STORE_PARAMETERS]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name, _, _ in STORE_PARAMETERS}
        return command(**kwargs, store=store_options(**values))

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


def store_options(*, dialect: str | None, max_doc_mb: int, table: str | None = None, id_column: str | None = None,
                  json_column: str | None = None, thread_column: str | None = None, order_column: str | None = None,
                  item_column: str | None = None, busy_timeout: float = 5.0, writable: bool = False) -> StoreOptions:
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

