"""``threadfix repair``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from threadfix.cli import State, app, describe_store, error_line, note
from threadfix.cli.options import Format, LeaveTools, Paths, check_format, reads_stores
from threadfix.errors import ConfigError

if TYPE_CHECKING:
    from threadfix.stores import StoreOptions


@app.command()
@reads_stores
def repair(
    paths: Paths,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Show what would be repaired; write nothing.")] = False,
    check: Annotated[bool, typer.Option("--check", help="Write nothing; exit 1 if anything would change.")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Print a unified diff of each change; write nothing.")] = False,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the repaired store here instead of in place (one file input).")] = None,
    output_format: Format = "text",
    min_age: Annotated[str, typer.Option("--min-age", help="Skip threads changed more recently than this (e.g. 30s, 10m, 2h, 0): their calls may still be running.")] = "10m",
    leave_tool: LeaveTools = None,
    reason: Annotated[Optional[str], typer.Option("--reason", help="The sentence the model reads in every written output, instead of threadfix's per-cause sentence.")] = None,
    drop_orphans: Annotated[bool, typer.Option("--drop-orphans", help="Delete outputs that have no call, instead of keeping them as plain messages.")] = False,
    journal_dir: Annotated[Optional[Path], typer.Option("--journal-dir", help="Folder for the undo journal (default: $XDG_STATE_HOME/threadfix/journal).")] = None,
    *,
    store: StoreOptions,
) -> None:
    """Give every call with no output an error output that says why, in its provider's exact shape.

    Also moves outputs that stand where the provider refuses them, and keeps orphan and duplicate
    outputs as plain messages. Writes atomically in place (or to -o), records an undo journal, and
    leaves every other byte as it was. With - the repaired document goes to stdout.
    """
    from msgspec.structs import replace

    from threadfix.batch import RepairRun, RunOptions, parse_duration
    from threadfix.config import tool_patterns
    from threadfix.repair import RepairOptions

    check_format(output_format, ("text", "json"))
    try:
        min_age_seconds = parse_duration(min_age)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    leave_tools = tool_patterns(leave_tool, "--leave-tool") if leave_tool else ()
    reading_stdin = "-" in paths
    if reading_stdin and len(paths) > 1:
        raise ConfigError("- (stdin) cannot be combined with other paths")
    if output is not None and (len(paths) != 1 or reading_stdin or Path(paths[0]).is_dir()):
        raise ConfigError("--output takes exactly one input file")
    writes = not (dry_run or check or diff)
    options = RunOptions(
        repair=RepairOptions(drop_orphans=drop_orphans, reason=reason),
        store=replace(store, writable=writes),
        dry_run=not writes, keep_bytes=diff, output=output, min_age=min_age_seconds, leave_tools=leave_tools,
        journal_dir=journal_dir,
        argv=tuple(sys.argv), jobs=State.jobs,
    )
    from threadfix.cli.progress import progress_line
    from threadfix.render.repair import RepairPrinter

    with progress_line("reading" if not writes else "repairing") as progress:
        printer = RepairPrinter(output_format, on_problem=error_line, diff=diff, quiet_stdout=reading_stdin and writes)
        run = RepairRun(list(paths), options, progress=progress, on_store=describe_store)
        for outcome in run.outcomes():
            printer.outcome(outcome)
    result = run.result
    printer.finish(result)
    if reading_stdin and writes and result.stdout is not None:
        sys.stdout.buffer.write(result.stdout)
    if result.threads or not result.problems:  # a run that read nothing has only its error lines to say
        note(printer.summary(result, writes=writes))
    if result.journal is not None:
        note(f"undo journal: {result.journal} (threadfix undo {result.journal})")
    raise typer.Exit(int(result.exit_code(check=check)))

