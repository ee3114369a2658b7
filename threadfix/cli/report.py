"""``threadfix report``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from threadfix.cli import State, app, describe_store, error_line, stdout_is_terminal, use_color
from threadfix.cli.options import (Config, Isolated, LeaveTools, Paths, check_format, command_settings, format_option,
                                   min_age_option, one_stdin, option_value, reads_stores, takes_global_options)
from threadfix.errors import ConfigError, ExitCode

if TYPE_CHECKING:
    from threadfix.cli.options import StoreArgs

FORMATS = {"text": "tables on a terminal, tab-separated when piped, whatever --color", "json": "",
           "csv": "the --by table", "markdown": ""}


@app.command()
@takes_global_options(jobs=True)
@reads_stores
def report(
    paths: Paths,
    by: Annotated[Optional[str], typer.Option("--by", metavar="TABLE", show_default=False, help="The main table: tool, kind, thread (the stuck ones, worst first) or day. Default: tool.")] = None,
    top: Annotated[Optional[int], typer.Option("--top", metavar="N", show_default=False, help="Rows per table. Default: 10.", min=1)] = None,
    output_format: format_option(FORMATS) = "text",
    min_age: min_age_option("0", "report reads only, as lint: it counts what is stored now") = None,
    leave_tool: LeaveTools = None,
    config: Config = None,
    isolated: Isolated = False,
    *,
    store: StoreArgs,
) -> None:
    """What failed, where, and how often, across whole stores. Reads only.

    Totals (threads, calls, error outputs, dangling calls, stuck threads, threads a provider would refuse
    now, threads threadfix already repaired), failures by tool and by kind, the commonest error messages
    with ids and numbers masked, the stuck threads worst first, and counts by day when threads carry
    timestamps. Settings come from `[tool.threadfix.report]` (and `[tool.threadfix]`) in pyproject.toml or
    `[report]` in threadfix.toml.

    \b
    Exit codes:
      0    done
      2    usage error, or some input could not be read (the report covers the rest)
      75   a database was locked past --busy-timeout: retry
      130  interrupted
    """
    from threadfix.batch import Problem
    from threadfix.cli.progress import progress_line
    from threadfix.render.report import RENDERERS, View
    from threadfix.report import BREAKDOWNS, report_paths

    check_format(output_format, tuple(FORMATS))
    one_stdin(paths)
    found = command_settings("report", config, isolated)
    by = by if by is not None else found.get("by", "tool")
    top = top if top is not None else found.get("top", 10)
    if by not in BREAKDOWNS:
        raise ConfigError(f"unknown --by {by!r}; choose one of: {', '.join(BREAKDOWNS)}")
    min_age_seconds = option_value("min-age", min_age)
    leave_tools = option_value("leave-tools", leave_tool, "--leave-tool")
    codes: list[ExitCode] = []

    def on_problem(problem: Problem) -> None:
        codes.append(problem.exit_code)
        error_line(problem.where, problem.message)

    with progress_line("reading") as progress:
        result = report_paths(list(paths), store.options(found), keep=top, jobs=State.jobs, on_problem=on_problem,
                              progress=progress, on_store=describe_store,
                              min_age=min_age_seconds if min_age_seconds is not None else found.get("min_age", 0.0),
                              leave_tools=leave_tools if leave_tools is not None else found.get("leave_tools", ()))
    name = output_format
    terminal = stdout_is_terminal()
    if name == "text":  # the layout follows where stdout goes; --color only styles it
        name = "rich" if terminal else "tsv"
    RENDERERS[name](View(by=by, top=top, color=use_color(terminal))).write(result, sys.stdout)
    raise typer.Exit(int(ExitCode.worst(codes)))
