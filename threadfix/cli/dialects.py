"""``threadfix dialects``."""

from __future__ import annotations

import sys

from threadfix.cli import app
from threadfix.cli.options import command_settings, takes_global_options


@app.command("dialects")
@takes_global_options(jobs=False)
def list_dialects() -> None:
    """List the thread formats threadfix reads (names for --dialect), in sniffing order.

    \b
    Exit codes:
      0    done
    """
    from threadfix import dialects

    command_settings("dialects")
    width = max(len(name) for name in dialects.names())
    for name in dialects.names():
        sys.stdout.write(f"{name:<{width}}  {dialects.get(name).title}\n")
