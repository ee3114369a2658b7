"""``threadfix repair``."""

from __future__ import annotations

import sys

from threadfix.cli import State, describe_store, error_line, note
from threadfix.cli.options import (add_format, add_global_options, add_min_age, add_paths, add_settings_options,
                                   add_store_options, add_waiting_options, check_format, command_settings, one_stdin,
                                   option_value, store_options)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace

    from threadfix.cli.parser import Parser

USAGE = "threadfix repair [OPTIONS] PATH..."
HELP = """Give every call with no output an error output that says why, in its provider's exact shape.

Also moves outputs that stand where the provider refuses them, and keeps orphan and duplicate
outputs as plain messages. Writes atomically in place (or to -o), records an undo journal, and
leaves every other byte as it was. With - the repaired document goes to stdout. Settings come from
`[tool.threadfix.repair]` (and `[tool.threadfix]`) in pyproject.toml or `[repair]` in threadfix.toml.

Exit codes:
  0    done (or, with --dry-run/--diff, planned)
  1    --check: something would change
  2    usage error, or some input could not be read or written (the rest still ran)
  75   a store was locked or changed while threadfix worked: nothing more written, retry
  130  interrupted (what was committed before is listed, with its journal)
"""
FORMATS = {"text": "one line per change", "json": "one document", "jsonl": "one record per thread, then the summary"}


def arguments(parser: Parser) -> None:
    add_paths(parser)
    parser.add_argument("-n", "--dry-run", action="store_true", help="Show what would be repaired; write nothing.")
    parser.add_argument("--check", action="store_true", help="Write nothing; exit 1 if anything would change.")
    parser.add_argument("--diff", action="store_true", help="Print a unified diff of each change; write nothing.")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="Write the repaired store here instead of in place (one file input).")
    add_format(parser, FORMATS)
    add_min_age(parser, "10m", "repair writes: an output written for a call still running would be followed by its "
                               "real one")
    add_waiting_options(parser, answer=True)
    parser.add_argument("--reason", metavar="TEXT", help=(
        "The sentence the model reads in every written output, instead of threadfix's per-cause sentence."))
    parser.add_argument("--drop-orphans", action="store_true",
                        help="Delete outputs that have no call, instead of keeping them as plain messages.")
    parser.add_argument("--journal-dir", metavar="FOLDER",
                        help="Folder for the undo journal (default: $XDG_STATE_HOME/threadfix/journal).")
    add_settings_options(parser)
    add_store_options(parser)
    add_global_options(parser, jobs=True)


def run(args: Namespace) -> int:
    from pathlib import Path

    from threadfix.errors import ConfigError, ExitCode
    from threadfix.given import names_nothing, nothing_there

    paths = list(args.paths)
    check_format(args.output_format, tuple(FORMATS))
    one_stdin(paths)
    found = command_settings("repair", args.config, args.isolated)
    min_age_seconds = option_value("min-age", args.min_age)
    leave_tools = option_value("leave-tools", args.leave_tool, "--leave-tool")
    reading_stdin = "-" in paths
    output = None if args.output is None else Path(args.output)
    if output is not None and (len(paths) != 1 or reading_stdin or Path(paths[0]).is_dir()):
        raise ConfigError("--output takes exactly one input file")
    writes = not (args.dry_run or args.check or args.diff)
    journal_dir = args.journal_dir if args.journal_dir is not None else found.get("journal_dir")
    if args.output_format == "text" and args.dialect is None and all(map(names_nothing, paths)):
        # every option is checked (a --dialect by the registry: left to the run); what is left is what the run's
        # read would say of each path, and its exit status, before the library is imported (issue #28)
        for spec in paths:
            error_line(spec, nothing_there(spec))
        return int(ExitCode.ERROR)
    from threadfix.batch import DEFAULT_MIN_AGE, RepairRun, RunOptions
    from threadfix.repair import RepairOptions

    options = RunOptions(
        repair=RepairOptions(drop_orphans=args.drop_orphans or found.get("drop_orphans", False),
                             reason=args.reason if args.reason is not None else found.get("reason"),
                             answer_waiting=args.answer_waiting or found.get("answer_waiting", False)),
        store=store_options(args, found, writable=writes),
        dry_run=not writes, keep_bytes=args.diff, output=output,
        min_age=min_age_seconds if min_age_seconds is not None else found.get("min_age", DEFAULT_MIN_AGE),
        leave_tools=leave_tools if leave_tools is not None else found.get("leave_tools", ()),
        journal_dir=None if journal_dir is None else Path(journal_dir),
        argv=tuple(sys.argv), jobs=State.jobs,
    )
    from threadfix.cli.progress import progress_line
    from threadfix.render.repair import RepairPrinter

    with progress_line("reading" if not writes else "repairing") as progress:
        printer = RepairPrinter(args.output_format, on_problem=error_line, diff=args.diff,
                                quiet_stdout=reading_stdin and writes)
        repair_run = RepairRun(paths, options, progress=progress, on_store=describe_store)
        interrupted = False
        try:
            for outcome in repair_run.outcomes():
                printer.outcome(outcome)
        except KeyboardInterrupt:  # what was committed before is said, and where its journal is (issue #22)
            interrupted = True
    result = repair_run.result
    printer.finish(result)
    if reading_stdin and writes and result.stdout is not None and not interrupted:
        sys.stdout.buffer.write(result.stdout)
    if interrupted:
        done = f"{printer.summary(result, writes=writes)}; " if result.changed else ""  # what was committed, if any
        note(f"interrupted; {done}nothing half-written was left behind")
    elif result.threads or not result.problems:  # a run that read nothing has only its error lines to say
        note(printer.summary(result, writes=writes))
    if result.journal is not None:
        note(f"undo journal: {result.journal} (threadfix undo {result.journal})")
    return int(ExitCode.INTERRUPTED if interrupted else result.exit_code(check=args.check))
