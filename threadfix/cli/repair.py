"""``threadfix repair``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from threadfix.cli import State, app, describe_store, error_line, note
from threadfix.cli.options import (AnswerWaiting, Config, Isolated, LeaveTools, Paths, check_format, command_settings, format_option,
                                   min_age_option, one_stdin, option_value, reads_stores, takes_global_options)
from threadfix.errors import ConfigError, ExitCode

if TYPE_CHECKING:
    from threadfix.cli.options import StoreArgs

FORMATS = {"text": "one line per change", "json": "one document", "jsonl": "one record per thread, then the summary"}


@app.command()
@takes_global_options(jobs=True)
@reads_stores
def repair(
    paths: Paths,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Show what would be repaired; write nothing.")] = False,
    check: Annotated[bool, typer.Option("--check", help="Write nothing; exit 1 if anything would change.")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Print a unified diff of each change; write nothing.")] = False,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", metavar="FILE", help="Write the repaired store here instead of in place (one file input).")] = None,
    output_format: format_option(FORMATS) = "text",
    min_age: min_age_option("10m", "repair writes: an output written for a call still running would be followed by its real one") = None,
    leave_tool: LeaveTools = None,
    answer_waiting: AnswerWaiting = False,
    reason: Annotated[Optional[str], typer.Option("--reason", metavar="TEXT", help="The sentence the model reads in every written output, instead of threadfix's per-cause sentence.")] = None,
    drop_orphans: Annotated[bool, typer.Option("--drop-orphans", help="Delete outputs that have no call, instead of keeping them as plain messages.")] = False,
    journal_dir: Annotated[Optional[Path], typer.Option("--journal-dir", metavar="FOLDER", help="Folder for the undo journal (default: $XDG_STATE_HOME/threadfix/journal).")] = None,
    config: Config = None,
    isolated: Isolated = False,
    *,
    store: StoreArgs,
) -> None:
    """Give every call with no output an error output that says why, in its provider's exact shape.

    Also moves outputs that stand where the provider refuses them, and keeps orphan and duplicate
    outputs as plain messages. Writes atomically in place (or to -o), records an undo journal, and
    leaves every other byte as it was. With - the repaired document goes to stdout. Settings come from
    `[tool.threadfix.repair]` (and `[tool.threadfix]`) in pyproject.toml or `[repair]` in threadfix.toml.

    \b
    Exit codes:
      0    done (or, with --dry-run/--diff, planned)
      1    --check: something would change
      2    usage error, or some input could not be read or written (the rest still ran)
      75   a store was locked or changed while threadfix worked: nothing more written, retry
      130  interrupted (what was committed before is listed, with its journal)
    """
    from msgspec.structs import replace

    from threadfix.batch import DEFAULT_MIN_AGE, RepairRun, RunOptions
    from threadfix.repair import RepairOptions

    check_format(output_format, tuple(FORMATS))
    one_stdin(paths)
    found = command_settings("repair", config, isolated)
    min_age_seconds = option_value("min-age", min_age)
    leave_tools = option_value("leave-tools", leave_tool, "--leave-tool")
    reading_stdin = "-" in paths
    if output is not None and (len(paths) != 1 or reading_stdin or Path(paths[0]).is_dir()):
        raise ConfigError("--output takes exactly one input file")
    writes = not (dry_run or check or diff)
    options = RunOptions(
        repair=RepairOptions(drop_orphans=drop_orphans or found.get("drop_orphans", False),
                             reason=reason if reason is not None else found.get("reason"),
                             answer_waiting=answer_waiting or found.get("answer_waiting", False)),
        store=store.options(found, writable=writes),
        dry_run=not writes, keep_bytes=diff, output=output,
        min_age=min_age_seconds if min_age_seconds is not None else found.get("min_age", DEFAULT_MIN_AGE),
        leave_tools=leave_tools if leave_tools is not None else found.get("leave_tools", ()),
        journal_dir=journal_dir if journal_dir is not None else (Path(found["journal_dir"]) if "journal_dir" in found else None),
        argv=tuple(sys.argv), jobs=State.jobs,
    )
    from threadfix.cli.progress import progress_line
    from threadfix.render.repair import RepairPrinter

    with progress_line("reading" if not writes else "repairing") as progress:
        printer = RepairPrinter(output_format, on_problem=error_line, diff=diff, quiet_stdout=reading_stdin and writes)
        run = RepairRun(list(paths), options, progress=progress, on_store=describe_store)
        interrupted = False
        try:
            for outcome in run.outcomes():
                printer.outcome(outcome)
        except KeyboardInterrupt:  # what was committed before is said, and where its journal is (issue #22)
            interrupted = True
    result = run.result
    printer.finish(result)
    if reading_stdin and writes and result.stdout is not None and not interrupted:
        sys.stdout.buffer.write(result.stdout)
    if interrupted:
        State.interrupt_said = True
        done = f"{printer.summary(result, writes=writes)}; " if result.changed else ""  # what was committed, if any
        note(f"interrupted; {done}nothing half-written was left behind")
    elif result.threads or not result.problems:  # a run that read nothing has only its error lines to say
        note(printer.summary(result, writes=writes))
    if result.journal is not None:
        note(f"undo journal: {result.journal} (threadfix undo {result.journal})")
    raise typer.Exit(int(ExitCode.INTERRUPTED if interrupted else result.exit_code(check=check)))
