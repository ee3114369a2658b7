"""``threadfix dialects``."""

from __future__ import annotations

import sys

from threadfix.cli.options import add_global_options, command_settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace

    from threadfix.cli.parser import Parser

USAGE = "threadfix dialects [OPTIONS]"
HELP = """List the thread formats threadfix reads (names for --dialect), in sniffing order.

Exit codes:
  0    done
"""


def arguments(parser: Parser) -> None:
    add_global_options(parser, jobs=False)


def run(args: Namespace) -> int:
    from threadfix import dialects

    command_settings("dialects")
    width = max(len(name) for name in dialects.names())
    for name in dialects.names():
        sys.stdout.write(f"{name:<{width}}  {dialects.get(name).title}\n")
    return 0
