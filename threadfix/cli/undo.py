"""``threadfix undo``."""

from __future__ import annotations

import sys

from threadfix.cli import note
from threadfix.cli.options import add_global_options, add_settings_options, command_settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace

    from threadfix.cli.parser import Parser

USAGE = "threadfix undo [OPTIONS] JOURNAL"
HELP = """Put back every thread a repair changed, as long as it still holds what the repair wrote.

A thread the app changed since the repair is refused (restoring it would lose the app's work) and
reported; the others are restored.

Exit codes:
  0    every thread restored (or already original)
  1    some thread refused (changed since the repair) or missing
  2    usage error, or the journal or a store could not be read or written
  75   a database was locked: retry
  130  interrupted
"""


def arguments(parser: Parser) -> None:
    parser.add_argument("journal", metavar="JOURNAL", help=(
        "A journal written by `threadfix repair` (its path is printed after each repair). [required]"))
    parser.add_argument("-n", "--dry-run", action="store_true",
                        help="Say what would be restored or refused; write nothing.")
    add_settings_options(parser)
    add_global_options(parser, jobs=False)


def run(args: Namespace) -> int:
    from pathlib import Path

    from threadfix.errors import ExitCode
    from threadfix.render.safe import terminal_safe
    from threadfix.undo import undo as run_undo

    command_settings("undo", args.config, args.isolated)
    counts: dict[str, int] = {}
    for outcome in run_undo(Path(args.journal), dry_run=args.dry_run):
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        line = f"{terminal_safe(outcome.address, 300)}: {outcome.status.replace('_', ' ')}"
        if outcome.message:
            line += f": {terminal_safe(outcome.message, 300)}"
        sys.stdout.write(line + "\n")
    note(", ".join(f"{n} {status.replace('_', ' ')}" for status, n in sorted(counts.items())) or "the journal is empty")
    refused = counts.get("refused", 0) + counts.get("missing", 0)
    return int(ExitCode.FINDINGS if refused else ExitCode.OK)
