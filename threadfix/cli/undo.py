"""``threadfix undo``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from threadfix.cli import app, note
from threadfix.cli.options import Config, Isolated, command_settings, takes_global_options
from threadfix.errors import ExitCode


@app.command()
@takes_global_options(jobs=False)
def undo(
    journal: Annotated[Path, typer.Argument(metavar="JOURNAL", help="A journal written by `threadfix repair` (its path is printed after each repair).")],
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Say what would be restored or refused; write nothing.")] = False,
    config: Config = None,
    isolated: Isolated = False,
) -> None:
    """Put back every thread a repair changed, as long as it still holds what the repair wrote.

    A thread the app changed since the repair is refused (restoring it would lose the app's work) and
    reported; the others are restored.

    \b
    Exit codes:
      0    every thread restored (or already original)
      1    some thread refused (changed since the repair) or missing
      2    usage error, or the journal or a store could not be read or written
      75   a database was locked: retry
      130  interrupted
    """
    from threadfix.render.safe import terminal_safe
    from threadfix.undo import undo as run_undo

    command_settings("undo", config, isolated)
    counts: dict[str, int] = {}
    for outcome in run_undo(journal, dry_run=dry_run):
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        line = f"{terminal_safe(outcome.address, 300)}: {outcome.status.replace('_', ' ')}"
        if outcome.message:
            line += f": {terminal_safe(outcome.message, 300)}"
        sys.stdout.write(line + "\n")
    note(", ".join(f"{n} {status.replace('_', ' ')}" for status, n in sorted(counts.items())) or "the journal is empty")
    refused = counts.get("refused", 0) + counts.get("missing", 0)
    raise typer.Exit(int(ExitCode.FINDINGS if refused else ExitCode.OK))
