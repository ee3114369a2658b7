"""One exception family and one exit-status enum, so every failure maps to a documented exit code."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import IntEnum


class ExitCode(IntEnum):
    """The contract with shells and schedulers (documented in README and ``--help``)."""

    OK = 0
    #: lint found problems, ``repair --check`` would change something, ``undo`` refused a thread
    FINDINGS = 1
    #: bad usage, or an input/store error (the rest of the batch still ran)
    ERROR = 2
    #: a store was locked or changed while threadfix worked on it; nothing was written, safe to retry
    BUSY = 75
    INTERRUPTED = 130

    @classmethod
    def worst(cls, codes: Iterable[ExitCode]) -> ExitCode:
        """The code a run of several outcomes exits with: an input or store error (2) beats a busy store (75),
        which a retry clears and an error it does not; then interrupted, busy, findings, ok (issue #22)."""
        return max(codes, key=lambda code: (code == cls.ERROR, code), default=cls.OK)


class ThreadfixError(Exception):
    """An error a user can act on: printed as one line ``threadfix: error: <where>: <what>``."""

    exit_code = ExitCode.ERROR
    #: what the one line ends with after the message (a usage error points at ``--help``)
    suffix = ""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class InputError(ThreadfixError):
    """A store or thread that cannot be read: missing, not JSON, not a thread."""


class StoreError(ThreadfixError):
    """A store that cannot be written safely (permissions, disk full, a link we will not replace)."""


class BusyError(ThreadfixError):
    """The store is in use or changed underneath us; nothing was written."""

    exit_code = ExitCode.BUSY


class ConfigError(ThreadfixError):
    """A bad option or configuration value."""


class UsageError(ThreadfixError):
    """A command line threadfix cannot run (an unknown option, a value out of bounds): one line naming the option
    or value, pointing at ``--help``."""

    suffix = " (see --help)"


class UnrewritableError(ThreadfixError):
    """A thread whose JSON cannot be written back without altering values (big ints, -0, duplicate keys)."""


def did_you_mean(name: str, known: Iterable[str], *, most: int = 1, show: Callable[[str], str] = repr,
                 joined: str = ", ") -> str:
    """``did you mean 'x'?`` naming the (at most ``most``) known names closest to ``name``, or "" when none is close:
    the hint of every refusal of an unknown name (a command, an option, a settings key or table)."""
    import difflib  # only to word a refusal

    close = difflib.get_close_matches(name, list(known), n=most)
    return f"did you mean {joined.join(map(show, close))}?" if close else ""
