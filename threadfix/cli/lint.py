"""``threadfix lint``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from threadfix.cli import State, app, error_line, note, stdout_is_terminal, use_color
from threadfix.cli.options import LeaveTools, Paths, check_format, reads_stores
from threadfix.errors import ConfigError

if TYPE_CHECKING:
    from threadfix.stores import StoreOptions

Selectors = Optional[list[str]]


def _split(values: list[str] | None) -> tuple[str, ...] | None:
    """``--select TF0,TF2`` and ``--select TF0 --select TF2`` alike."""
    if values is None:
        return None
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


@app.command()
@reads_stores
def lint(
    paths: Paths,
    select: Annotated[Selectors, typer.Option("--select", help="Run only these rules: codes by prefix (TF0, TF201) or names, comma-separated or repeated. Default: all.", show_default=False)] = None,
    ignore: Annotated[Selectors, typer.Option("--ignore", help="Leave out these rules (codes by prefix or names). The more specific of --select and --ignore wins.", show_default=False)] = None,
    fail_on: Annotated[Optional[str], typer.Option("--fail-on", help="Exit 1 when a finding is at least this severe: error, warning or info. Default: warning.", show_default=False)] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even with findings (errors reading input still exit 2).")] = False,
    output_format: Annotated[str, typer.Option("--format", "-f", help="text, json, jsonl, github (workflow annotations) or sarif (2.1.0).")] = "text",
    min_age: Annotated[Optional[str], typer.Option("--min-age", help="Threads changed more recently than this (e.g. 30s, 10m) may have calls still running: their open calls are pending, not reported. Default: 0.", show_default=False)] = None,
    leave_tool: LeaveTools = None,
    oversized_bytes: Annotated[Optional[int], typer.Option("--oversized-bytes", help="Outputs larger than this many bytes are oversized (TF203). Default: 100000.", min=1, show_default=False)] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help="Read settings from this file instead of the threadfix.toml or pyproject.toml [tool.threadfix] found from the current folder up.")] = None,
    isolated: Annotated[bool, typer.Option("--isolated", help="Ignore every settings file.")] = False,
    *,
    store: StoreOptions,
) -> None:
    """Find what is wrong or risky in stored threads: dangling calls, outputs a provider refuses, errors the
    model cannot act on, oversized outputs, leaked secrets and stack traces. Reads only.

    One line per finding on stdout (`address#item: CODE message (rule-name)`), a summary on stderr.
    `threadfix rules` lists the rules; `threadfix rules CODE` explains one. Settings come from
    `[tool.threadfix.lint]` in pyproject.toml or `[lint]` in threadfix.toml; options override them.
    Exit 0 clean, 1 findings at or above --fail-on, 2 when some input could not be read (the rest is
    still linted).
    """
    from threadfix import config as settings
    from threadfix.batch import Problem
    from threadfix.cli.progress import progress_line
    from threadfix.lint import LintOptions, LintRun
    from threadfix.render.lint import FORMATTERS, summary_line

    check_format(output_format, tuple(FORMATTERS))
    if "-" in paths and len(paths) > 1:
        raise ConfigError("- (stdin) cannot be combined with other paths")
    found = settings.Config() if isolated else settings.load(config)
    keys = settings.SECTIONS["lint"]

    def read(key: str, value: Any) -> Any:  # an option is checked as its settings key is
        return None if value is None else keys[key].read(value, f"--{key}")

    given = {"select": _split(select), "ignore": _split(ignore), "oversized_bytes": oversized_bytes,
             "fail_on": read("fail-on", fail_on), "min_age": read("min-age", min_age),
             "leave_tools": None if leave_tool is None else settings.tool_patterns(leave_tool, "--leave-tool")}
    values = found.section("lint") | {k: v for k, v in given.items() if v is not None}
    options = LintOptions(**values)

    with progress_line("linting") as progress:
        run = LintRun(paths, options, store, progress=progress, jobs=State.jobs)
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
