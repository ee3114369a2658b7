"""Settings from ``[tool.threadfix]`` in ``pyproject.toml``, or from ``threadfix.toml``.

The file is found from the current folder upwards: in each folder a ``threadfix.toml`` wins over a
``pyproject.toml``, and a ``pyproject.toml`` without a ``[tool.threadfix]`` table is passed over (as
ruff and black do). In ``threadfix.toml`` the same tables stand at the top level::

    # pyproject.toml                  # threadfix.toml
    [tool.threadfix.lint]             [lint]
    ignore = ["TF207"]                ignore = ["TF207"]
    oversized-bytes = 200_000         oversized-bytes = 200_000

Every command has a table (``[tool.threadfix.repair]``, ``[report]``...). A key that means the same for
every command that has it (:data:`SHARED`: ``min-age``, ``leave-tools``, ``answer-waiting``, ``max-doc-mb``,
``busy-timeout``, ``jobs``, ``color``) may also stand at the top (``[tool.threadfix]`` itself), for every
command that has it; a command's own table wins over the top.

Every key is checked: an unknown one is refused by name (with the closest known key), so a typo
never silently does nothing. Command-line options override the file.

A command declares its table in :data:`SECTIONS`.
"""

from __future__ import annotations

import math
from pathlib import Path

from threadfix.errors import ConfigError, UsageError, did_you_mean
from threadfix.given import parse_duration

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

CONFIG_FILE = "threadfix.toml"
PYPROJECT = "pyproject.toml"


class Key:
    """One setting: its kebab-case name in the file, the option field it sets, and how it is read (``read(value,
    where)``). A plain class, not a msgspec struct: a run whose paths name nothing reads its settings and stops
    before msgspec is imported (issue #28)."""

    __slots__ = ("name", "read", "help")

    def __init__(self, name: str, read: Callable[[Any, str], Any], help: str) -> None:
        self.name = name
        self.read = read
        self.help = help

    @property
    def field(self) -> str:
        return self.name.replace("-", "_")


# --------------------------------------------------------------------------- value readers
# Each takes the raw TOML value and the place to name in an error ("pyproject.toml: [tool.threadfix.lint] ...").
# A bound (a whole number's least value, seconds' range) is defined once, here, and read two ways: from the file
# (the TOML value, ``__call__``) and from the command line (the option's text, ``text``; cli/values.py). The
# command line's spelling is its own: a whole number only in its plain spelling, ASCII digits (a ``+`` and spaces
# around them allowed, as a shell user may type them), anything else (``5.0``, ``5_0``, other scripts' digits)
# refused by name rather than guessed at; seconds read by Python's ``float`` over ASCII text (``0.5``, ``.5``,
# ``1e3``), as the command line always read them.


class _Whole:
    """A whole number of at least ``minimum``."""

    __slots__ = ("minimum",)

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum

    def __call__(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum:
            raise ConfigError(f"{where} must be an integer of at least {self.minimum}, not {value!r}")
        return value

    def text(self, text: str, flag: str) -> int:
        import re

        if re.fullmatch(r"\s*\+?[0-9]+\s*", text, re.ASCII) and int(text) >= self.minimum:
            return int(text)
        raise UsageError(f"{flag} must be a whole number of at least {self.minimum}, not {text!r}")


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings, not {value!r}")
    return tuple(value)


def tool_patterns(value: Any, where: str) -> tuple[str, ...]:
    """Tool name globs (``--leave-tool``): none of them empty, which would match no tool and so do nothing."""
    patterns = _strings(value, where)
    if not all(pattern.strip() for pattern in patterns):
        raise ConfigError(f"{where} must name tools (a name or a glob such as approve_*), not an empty string")
    return patterns


def _selectors(value: Any, where: str) -> tuple[str, ...]:
    from threadfix.rules import check_selectors

    return check_selectors(_strings(value, where), where)


def _severity(value: Any, where: str) -> Any:
    from threadfix.model import Severity

    try:
        return Severity(value)
    except ValueError:
        raise ConfigError(f"{where} must be one of {', '.join(s.value for s in Severity)}, not {value!r}") from None


def _duration(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(f"{where} must be a duration such as \"10m\" or a number of seconds, not {value!r}")
    try:
        seconds = parse_duration(str(value))
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError(f"{where} must be a duration of at least 0 (such as 30s, 10m, 2h, 1d), not {value!r}")
    return seconds


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where} must be true or false, not {value!r}")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} must be a non-empty string, not {value!r}")
    return value


class _Seconds:
    """A finite number of seconds of at least 0 (``nan`` and ``inf`` are no time to wait)."""

    __slots__ = ()

    def __call__(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise ConfigError(f"{where} must be a number of seconds of at least 0, not {value!r}")
        return float(value)

    def text(self, text: str, flag: str) -> float:
        try:
            number = float(text) if text.isascii() else -1.0
        except ValueError:
            number = -1.0
        if 0 <= number < math.inf:
            return number
        raise UsageError(f"{flag} must be a number of seconds of at least 0, not {text!r}")


_seconds = _Seconds()


#: ``--color`` and the ``color`` key
COLORS = ("auto", "always", "never")


def _color(value: Any, where: str) -> str:
    if value not in COLORS:
        raise ConfigError(f"{where} must be one of {', '.join(COLORS)}, not {value!r}")
    return value


#: keys that mean the same for every command that has them: at the top of the table ([tool.threadfix]) they
#: apply to each such command; in a command's table, to that command only (and win over the top)
SHARED: dict[str, Key] = {key.name: key for key in (
    Key("min-age", _duration, "threads changed more recently than this have pending, not dangling, calls"),
    Key("leave-tools", tool_patterns, "tools (globs) whose outputs come from a person or another process: "
                                      "a thread with an open call to one is waiting, its open calls pending"),
    Key("answer-waiting", _bool, "answer the calls a thread's format marks as waiting (an approval requested) "
                                 "even at the end of their thread, for when the answer will never come"),
    Key("max-doc-mb", _Whole(1), "the largest single JSON document or JSONL line to parse, in MiB"),
    Key("busy-timeout", _seconds, "SQLite: seconds to wait for the app's write lock"),
    Key("jobs", _Whole(1), "processes to spread large inputs over"),
    Key("color", _color, "auto, always or never"),
)}
_READS_STORES = ("min-age", "leave-tools", "max-doc-mb", "busy-timeout", "jobs", "color")

#: table name (a command) -> its keys. ``lint``'s own keys feed :class:`threadfix.lint.LintOptions` (field names
#: match); the shared ones go where the command's options of the same name go.
SECTIONS: dict[str, dict[str, Key]] = {
    "lint": {key.name: key for key in (
        Key("select", _selectors, "rule codes (by prefix) or names to run"),
        Key("ignore", _selectors, "rule codes (by prefix) or names to leave out"),
        Key("fail-on", _severity, "the least severe finding that fails the run: error, warning or info"),
        SHARED["min-age"], SHARED["leave-tools"], SHARED["answer-waiting"],
        Key("oversized-bytes", _Whole(1), "outputs larger than this are oversized (TF203)"),
        Key("stuck-turns", _Whole(1), "later user turns that make a dangling call a stuck thread (TF007)"),
        Key("retry-storm", _Whole(2), "failures in a row of one tool that make a retry storm (TF206)"),
        Key("scan-chars", _Whole(1), "characters of each output the text rules read"),
        *(SHARED[name] for name in _READS_STORES[2:]),
    )},
    "repair": {key.name: key for key in (
        Key("drop-orphans", _bool, "delete outputs that have no call instead of keeping them as plain messages"),
        Key("reason", _text, "the sentence the model reads in every written output"),
        Key("journal-dir", _text, "the folder for undo journals"),
        SHARED["answer-waiting"],
        *(SHARED[name] for name in _READS_STORES),
    )},
    "report": {key.name: key for key in (
        Key("by", _text, "the main table: tool, kind, thread or day"),
        Key("top", _Whole(1), "rows per table"),
        *(SHARED[name] for name in _READS_STORES),
    )},
    "undo": {"color": SHARED["color"]},
    "rules": {"color": SHARED["color"]},
    "dialects": {"color": SHARED["color"]},
}


class Config:
    """The settings found (empty when there is no file), by table, under their option field names; ``shared``: the
    keys at the top of the table, for every command that has them. (A plain class, as :class:`Key` is.)"""

    __slots__ = ("path", "sections", "shared")

    def __init__(self, path: Path | None = None, sections: Mapping[str, Mapping[str, Any]] | None = None,
                 shared: Mapping[str, Any] | None = None) -> None:
        self.path = path
        self.sections = {} if sections is None else sections
        self.shared = {} if shared is None else shared

    def section(self, name: str) -> dict[str, Any]:
        """The settings of command ``name``: the shared keys it has, then its own table's keys over them."""
        keys = SECTIONS[name]
        inherited = {field: value for field, value in self.shared.items() if field.replace("_", "-") in keys}
        return inherited | dict(self.sections.get(name, {}))


def find(start: Path | None = None) -> Path | None:
    """The settings file that applies in ``start`` (default: the current folder), or None."""
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        own = candidate / CONFIG_FILE
        if own.is_file():
            return own
        pyproject = candidate / PYPROJECT
        if pyproject.is_file() and _table(pyproject) is not None:
            return pyproject
    return None


def load(path: Path | None = None, start: Path | None = None) -> Config:
    """Read and check the settings of ``path``, or of the file :func:`find` finds from ``start``."""
    path = path if path is not None else find(start)
    if path is None:
        return Config()
    table = _table(path)
    if table is None:
        if path.name == PYPROJECT:
            raise ConfigError("has no [tool.threadfix] table", str(path))
        table = {}
    prefix = "tool.threadfix." if path.name == PYPROJECT else ""
    top = "[tool.threadfix]" if prefix else "the top level"
    sections: dict[str, dict[str, Any]] = {}
    shared = _read_section({k: v for k, v in table.items() if not isinstance(v, dict) and k not in SECTIONS},
                           SHARED, top, path, SECTIONS)
    for name, values in table.items():
        where = f"[{prefix}{name}]"
        if not isinstance(values, dict) and name not in SECTIONS:
            continue  # a shared key, read above
        if name not in SECTIONS:
            raise ConfigError(_unknown(f"table {where}", name, SECTIONS), str(path))
        if not isinstance(values, dict):
            raise ConfigError(f"{where} must be a table", str(path))
        sections[name] = _read_section(values, SECTIONS[name], where, path)
    return Config(path, sections, shared)


def _read_section(values: dict[str, Any], keys: dict[str, Key], where: str, path: Path,
                  tables: Mapping[str, Any] | None = None) -> dict[str, Any]:
    read: dict[str, Any] = {}
    for name, value in values.items():
        key = keys.get(name)
        if key is None:
            known = {**keys, **(tables or {})}
            raise ConfigError(_unknown(f"key {name!r} at {where}" if tables else f"{where} key {name!r}", name, known),
                              str(path))
        try:
            read[key.field] = key.read(value, f"{where} {name}")
        except ConfigError as exc:
            raise ConfigError(exc.message, str(path)) from None
    return read


def _unknown(what: str, name: str, known: Mapping[str, Any]) -> str:
    hint = did_you_mean(name, known)
    return f"unknown {what}{f' ({hint})' if hint else ''}; known: {', '.join(known)}"


def _table(path: Path) -> dict[str, Any] | None:
    """The threadfix table of a settings file: the whole of threadfix.toml, [tool.threadfix] of pyproject.toml."""
    import tomllib  # only when a settings file was found: most runs have none

    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML ({exc})", str(path)) from None
    except FileNotFoundError:
        raise ConfigError("no such file or folder", str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read it ({(exc.strerror or str(exc)).lower()})", str(path)) from None
    if path.name != PYPROJECT:
        return data
    tool = data.get("tool")
    table = tool.get("threadfix") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None
