"""What a credential looks like in text: the one pattern rendering masks and lint's secret rule flags.

Kept apart from both (render masks what it prints, a rule reports what the model read) so the two can
never disagree about what counts as a secret.
"""

from __future__ import annotations

import re

from threadfix.patterns import Lazy

#: Provider and platform key formats, JWTs, PEM private keys and bearer tokens. A token must not be
#: glued to a preceding word character ("task-management-service" is not an ``sk-`` key). Compiled once text
#: may hold one (:func:`may_hold_secret`): most runs never need it.
SECRET = Lazy(
    r"(?<![A-Za-z0-9_\-])"
    r"(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|xox[baprs]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{30,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|(?:[Bb]earer|BEARER)\s+[A-Za-z0-9._\-]{16,})"
)
#: What every match of SECRET holds (each alternative one of these, or "bearer"), for a cheap check of much
#: text at once, far faster than SECRET, which then only reads text that may hold a secret. Each regex starts
#: with one literal character, the token's rarest where it has a rare one ("sk-" is looked for at its "-"):
#: ``re`` skips from one to the next about twice as fast as ``in`` finds a short word.
_MARKS = (
    re.compile(r"-(?:(?<=sk-)|(?<=xox[baprs]-)|----BEGIN)"),
    re.compile(r"A(?:KIA|Iza)"),
    re.compile(r"J(?<=eyJ)"),
    re.compile(r"B(?:earer|EARER)"),
    re.compile(r"_(?<=gh[pousr]_)"),
)
#: How many characters of a secret stay visible once masked (enough to tell keys apart, not to use one).
VISIBLE = 4
REDACTED = "…[redacted]"


def mask(match: re.Match[str]) -> str:
    return match.group()[:VISIBLE] + REDACTED


def may_hold_secret(text: str) -> bool:
    """False only when ``text`` holds no SECRET match."""
    return any(mark.search(text) for mark in _MARKS) or "bearer" in text


def mask_secrets(text: str) -> str:
    """Replace anything that looks like a credential with a marker that keeps its first characters."""
    return SECRET.sub(mask, text) if may_hold_secret(text) else text
