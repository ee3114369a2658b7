"""Make untrusted text (anything from a thread: model- and tool-written) harmless on a terminal.

rich passes ESC through untouched and interprets ``[link=…]`` markup, so a tool output could retitle the
terminal, clear it, plant a live hyperlink or forge a log line. Every string that comes from a thread
goes through :func:`terminal_safe` and is rendered as plain ``Text``, never as markup.
"""

from __future__ import annotations

from threadfix.patterns import Lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

#: C0 controls (including newline and tab), DEL, C1 controls, bidi overrides/isolates, line/paragraph
#: separators and the BOM: everything that can move the cursor, change the terminal or reorder text.
_UNSAFE = Lazy("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]")
DEFAULT_WIDTH = 160


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: object, limit: int | None = DEFAULT_WIDTH) -> str:
    """One printable line: control and bidi characters shown as escapes, cut to ``limit`` characters."""
    value = text if isinstance(text, str) else str(text)
    if limit is not None and len(value) > limit * 4:
        value = value[: limit * 4]
    value = _UNSAFE.sub(_escape, value)
    if limit is not None and len(value) > limit:
        value = value[: limit - 1] + "…"
    return value


def safe_excerpt(text: object, limit: int = 120) -> str:
    """Untrusted text for a report or finding: secrets masked, terminal-safe, short."""
    from threadfix.secrets import mask_secrets  # (report's: a repair prints none, and need not import it)

    value = text if isinstance(text, str) else str(text)
    return terminal_safe(mask_secrets(value[: limit * 8]), limit)
