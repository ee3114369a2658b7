"""``threadfix dialects``."""

from __future__ import annotations

import sys

from threadfix.cli import app


@app.command("dialects")
def list_dialects() -> None:
    """List the thread formats threadfix reads (names for --dialect), in sniffing order."""
    from threadfix import dialects

    width = max(len(name) for name in dialects.names())
    for name in dialects.names():
        sys.stdout.write(f"{name:<{width}}  {dialects.get(name).title}\n")
