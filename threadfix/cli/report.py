"""``threadfix report``."""

from __future__ import annotations

import sys

from threadfix.cli import State, describe_store, error_line, stdout_is_terminal, use_color
from threadfix.cli.options import (add_format, add_global_options, add_min_age, add_paths, add_settings_options,
                                   add_store_options, add_waiting_options, check_format, command_settings, one_stdin,
                                   option_value, store_options)
from threadfix.cli.values import by_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace

    from threadfix.batch import Problem
    from threadfix.cli.parser import Parser

USAGE = "threadfix report [OPTIONS] PATH..."
HELP = """What failed, where, and how often, across whole stores. Reads only.

Totals (threads, calls, error outputs, dangling calls, stuck threads, threads a provider would refuse
now, threads threadfix already repaired), failures by tool and by kind, the commonest error messages
with ids and numbers masked, the stuck threads worst first, and counts by day when threads carry
timestamps. Settings come from `[tool.threadfix.report]` (and `[tool.threadfix]`) in pyproject.toml or
`[report]` in threadfix.toml.

Exit codes:
  0    done
  2    usage error, or some input could not be read (the report covers the rest)
  75   a database was locked past --busy-timeout: retry
  130  interrupted
"""
FORMATS = {"text": "tables on a terminal, tab-separated when piped, whatever --color", "json": "",
           "csv": "the --by table", "markdown": ""}


def arguments(parser: Parser) -> None:
    add_paths(parser)
    parser.add_argument("--by", metavar="TABLE", help=(
        "The main table: tool, kind, thread (the stuck ones, worst first) or day. Default: tool."))
    parser.add_argument("--top", metavar="N", type=by_key("top", "report"),
                        help="Rows per table (at least 1). Default: 10.")
    add_format(parser, FORMATS)
    add_min_age(parser, "0", "report reads only, as lint: it counts what is stored now")
    add_waiting_options(parser, answer=False)
    add_settings_options(parser)
    add_store_options(parser)
    add_global_options(parser, jobs=True)


def run(args: Namespace) -> int:
    from threadfix.cli.progress import progress_line
    from threadfix.errors import ConfigError, ExitCode
    from threadfix.render.report import RENDERERS, View
    from threadfix.report import BREAKDOWNS, report_paths

    check_format(args.output_format, tuple(FORMATS))
    one_stdin(args.paths)
    found = command_settings("report", args.config, args.isolated)
    by = args.by if args.by is not None else found.get("by", "tool")
    top = args.top if args.top is not None else found.get("top", 10)
    if by not in BREAKDOWNS:
        raise ConfigError(f"unknown --by {by!r}; choose one of: {', '.join(BREAKDOWNS)}")
    min_age_seconds = option_value("min-age", args.min_age)
    leave_tools = option_value("leave-tools", args.leave_tool, "--leave-tool")
    codes: list[ExitCode] = []

    def on_problem(problem: Problem) -> None:
        codes.append(problem.exit_code)
        error_line(problem.where, problem.message)

    with progress_line("reading") as progress:
        result = report_paths(list(args.paths), store_options(args, found), keep=top, jobs=State.jobs,
                              on_problem=on_problem, progress=progress, on_store=describe_store,
                              min_age=min_age_seconds if min_age_seconds is not None else found.get("min_age", 0.0),
                              leave_tools=leave_tools if leave_tools is not None else found.get("leave_tools", ()))
    name = args.output_format
    terminal = stdout_is_terminal()
    if name == "text":  # the layout follows where stdout goes; --color only styles it
        name = "rich" if terminal else "tsv"
    RENDERERS[name](View(by=by, top=top, color=use_color(terminal))).write(result, sys.stdout)
    return int(ExitCode.worst(codes))
