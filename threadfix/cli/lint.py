"""``threadfix lint``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from threadfix.cli import State, app, describe_store, error_line, note, stdout_is_terminal, use_color
from threadfix.cli.options import (AnswerWaiting, Config, Isolated, LeaveTools, Paths, check_format, command_settings, format_option,
                                   min_age_option, one_stdin, option_value, reads_stores, takes_global_options)

if TYPE_CHECKING:
    from threadfix.cli.options import StoreArgs

Selectors = Optional[list[str]]
FORMATS = {"text": "one line per finding", "json": "", "jsonl": "", "github": "workflow annotations",
           "sarif": "2.1.0"}


def _split(values: list[str] | None) -> tuple[str, ...] | None:
    """``--select TF0,TF2`` and ``--select TF0 --select TF2`` alike."""
    if values is None:
        return None
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


@app.command()
@takes_global_options(jobs=True)
@reads_stores
def lint(
    paths: Paths,
    select: Annotated[Selectors, typer.Option("--select", metavar="RULES", help="Run only these rules: codes by prefix (TF0, TF201) or names, comma-separated or repeated. Default: all.", show_default=False)] = None,
    ignore: Annotated[Selectors, typer.Option("--ignore", metavar="RULES", help="Leave out these rules (codes by prefix or names). The more specific of --select and --ignore wins.", show_default=False)] = None,
    fail_on: Annotated[Optional[str], typer.Option("--fail-on", metavar="SEVERITY", help="Exit 1 when a finding is at least this severe: error, warning or info. Default: warning.", show_default=False)] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even with findings (errors reading input still exit 2).")] = False,
    output_format: format_option(FORMATS) = "text",
    min_age: min_age_option("0", "lint reads only: it reports what is stored now; give repair's 10m to see what repair would touch") = None,
    leave_tool: LeaveTools = None,
    answer_waiting: AnswerWaiting = False,
    oversized_bytes: Annotated[Optional[int], typer.Option("--oversized-bytes", metavar="BYTES", help="Outputs larger than this many bytes are oversized (TF203). Default: 100000.", min=1, show_default=False)] = None,
    config: Config = None,
    isolated: Isolated = False,
    *,
    store: StoreArgs,
) -> None:
    """Find what is wrong or risky in stored threads: dangling calls, outputs a provider refuses, errors the
    model cannot act on, oversized outputs, leaked secrets and stack traces. Reads only.

    One line per finding on stdout (`address#item: CODE message (rule-name)`), a summary on stderr.
    `threadfix rules` lists the rules; `threadfix rules CODE` explains one. Settings come from
    `[tool.threadfix.lint]` (and `[tool.threadfix]`) in pyproject.toml or `[lint]` in threadfix.toml;
    options override them.

    \b
    Exit codes:
      0    no finding at or above --fail-on
      1    findings at or above --fail-on (warning unless told)
      2    usage error, or some input could not be read (the rest is still linted)
      75   a database was locked past --busy-timeout: retry
      130  interrupted
    """
    from threadfix import config as settings
    from threadfix.batch import Problem
    from threadfix.cli.progress import progress_line
    from threadfix.lint import LintOptions, LintRun
    from threadfix.render.lint import summary_line
    from threadfix.render.lint import FORMATTERS

    check_format(output_format, tuple(FORMATTERS))
    one_stdin(paths)
    found = command_settings("lint", config, isolated)
    keys = settings.SECTIONS["lint"]
    given = {"select": _split(select), "ignore": _split(ignore), "oversized_bytes": oversized_bytes,
             "fail_on": None if fail_on is None else keys["fail-on"].read(fail_on, "--fail-on"),
             "min_age": option_value("min-age", min_age),
             "leave_tools": option_value("leave-tools", leave_tool, "--leave-tool"),
             "answer_waiting": answer_waiting or None}
    lint_fields = set(LintOptions.__struct_fields__)
    values = {k: v for k, v in found.items() if k in lint_fields} | {k: v for k, v in given.items() if v is not None}
    options = LintOptions(**values)

    with progress_line("linting") as progress:
        run = LintRun(paths, options, store.options(found), progress=progress, jobs=State.jobs, on_store=describe_store)
        formatter = FORMATTERS[output_format](sys.stdout.buffer, run.rules)
        formatter.color = use_color(stdout_is_terminal())
        formatter.start()
        for result in run.results():
            if isinstance(result, Problem):
                error_line(result.where, result.message)
            else:
                formatter.thread(result)
        formatter.finish(run.summary)
    note(summary_line(run.summary))
    raise typer.Exit(int(run.summary.exit_code(options.fail_on, exit_zero)))
