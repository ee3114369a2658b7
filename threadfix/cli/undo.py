"""``threadfix undo``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from threadfix.cli import app, note
from threadfix.errors import ExitCode


@app.command()
def undo(
    journal: Annotated[Path, typer.Argument(help="A journal written by `threadfix repair` (its path is printed after each repair).")],
) -> None:
    """Put back every thread a repair changed, as long as it still holds what the repair wrote.

    A thread the app changed since the repair is refused (restoring it would lose the app's work) and
    reported; the others are restored. Exit 1 when any thread was refused or is missing.
    """
    from threadfix.render.safe import terminal_safe
    from threadfix.undo import undo as run_undo

    counts: dict[str, int] = {}
    for outcome in run_undo(journal):
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        line = f"{terminal_safe(outcome.address, 300)}: {outcome.status.replace('_', ' ')}"
        if outcome.message:
            line += f": {terminal_safe(outcome.message, 300)}"
        sys.stdout.write(line + "\n")
    note(", ".join(f"{n} {status.replace('_', ' ')}" for status, n in sorted(counts.items())) or "the journal is empty")
    refused = counts.get("refused", 0) + counts.get("missing", 0)
    raise typer.Exit(int(ExitCode.FINDINGS if refused else ExitCode.OK))
