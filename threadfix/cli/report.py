"""``threadfix report``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from threadfix.cli import State, app, describe_store, error_line, stdout_is_terminal, use_color
from threadfix.cli.options import Paths, check_format, reads_stores
from threadfix.errors import ConfigError, ExitCode

if TYPE_CHECKING:
    from threadfix.stores import StoreOptions

FORMATS = ("text", "json", "csv", "markdown")


@app.command()
@reads_stores
def report(
    paths: Paths,
    by: Annotated[str, typer.Option("--by", help="The main table: tool, kind, thread (the stuck ones, worst first) or day.")] = "tool",
    top: Annotated[int, typer.Option("--top", help="Rows per table.", min=1)] = 10,
    output_format: Annotated[str, typer.Option("--format", "-f", help="text (tables on a terminal, tab-separated when piped), json, csv (the --by table) or markdown.")] = "text",
    *,
    store: StoreOptions,
) -> None:
    """What failed, where, and how often, across whole stores. Reads only.

    Totals (threads, calls, error outputs, dangling calls, stuck threads, threads a provider would refuse
    now, threads threadfix already repaired), failures by tool and by kind, the commonest error messages
    with ids and numbers masked, the stuck threads worst first, and counts by day when threads carry
    timestamps. Exit 0, or 2 when some inputs could not be read (the report covers the rest).
    """
    from threadfix.batch import Problem
    from threadfix.cli.progress import progress_line
    from threadfix.render.report import RENDERERS, View
    from threadfix.report import BREAKDOWNS, report_paths

    check_format(output_format, FORMATS)
    if by not in BREAKDOWNS:
        raise ConfigError(f"unknown --by {by!r}; choose one of: {', '.join(BREAKDOWNS)}")
    if "-" in paths and len(paths) > 1:
        raise ConfigError("- (stdin) cannot be combined with other paths")
    options = store
    codes: list[ExitCode] = []

    def on_problem(problem: Problem) -> None:
        codes.append(problem.exit_code)
        error_line(problem.where, problem.message)

    with progress_line("reading") as progress:
        result = report_paths(list(paths), options, keep=top, jobs=State.jobs, on_problem=on_problem,
                              progress=progress, on_store=describe_store)
    name = output_format
    terminal = stdout_is_terminal()
    if name == "text":  # the layout follows where stdout goes; --color only styles it
        name = "rich" if terminal else "tsv"
    RENDERERS[name](View(by=by, top=top, color=use_color(terminal))).write(result, sys.stdout)
    raise typer.Exit(int(max(codes, key=lambda c: (c == ExitCode.BUSY, c))) if codes else 0)
