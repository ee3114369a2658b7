"""Option values read by their settings key, so that an option and its key share one bound (issue #28 review).

``--jobs 0`` is refused as ``jobs = 0`` is, by the bound :mod:`threadfix.config` defines once; the command line
keeps its own spelling of a value (see the readers there) and its own words (``must be a whole number``). The
settings module is imported only when such an option is given: ``--help`` and ``--version`` never read one.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def by_key(name: str, section: str | None = None) -> Callable[[str], Any]:
    """An argparse ``type=``: the text of option ``--NAME`` read by settings key ``name`` (of ``section``'s table,
    else a key every command shares)."""

    def read(text: str) -> Any:
        from threadfix import config

        return (config.SECTIONS[section] if section else config.SHARED)[name].read.text(text, f"--{name}")

    return read
