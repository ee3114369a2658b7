"""Regular expressions compiled on their first use (issue #28).

Compiling a pattern costs from tens of microseconds to a millisecond; a module that compiled all of its own at
import charged every run that imported it, though a small run reaches few of them (a lint of a few threads with
no finding needs neither the secret pattern nor the leaked-path one).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Lazy:
    """A regular expression compiled on its first use, then standing for the compiled pattern."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags

    def __getattr__(self, name: str) -> Any:
        # Reached only until the first use, which binds the compiled pattern's methods on the instance:
        # every later call is an ordinary attribute hit.
        pattern = re.compile(self.source, self.flags)
        for method in ("match", "search", "fullmatch", "finditer", "findall", "sub"):
            setattr(self, method, getattr(pattern, method))
        return getattr(pattern, name)
