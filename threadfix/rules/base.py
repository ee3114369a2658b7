"""What every lint rule is: a code, the name of the bad pattern, a severity, a fix, and its documentation.

A rule is a stateless object with one method, :meth:`Rule.check`, that reads one thread through a
:class:`threadfix.rules.context.Context` and yields findings. Everything costly (the repair plan, the
provider's own check, output texts, classifications) is computed by the context once, on first use,
so a rule pays only for what it reads, and unselected rules cost nothing.

The class docstring is the rule's documentation (``threadfix rules CODE`` prints it); it must hold the
sections named in :data:`SECTIONS`.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from enum import Enum, unique
from typing import TYPE_CHECKING, Any, ClassVar

from threadfix.failures import Kind, clip
from threadfix.model import Finding, Loc, Severity
from threadfix.secrets import mask_secrets

if TYPE_CHECKING:  # lint builds the context and imports the rules; rules only read it
    from threadfix.rules.context import Context

#: The documentation sections every rule's docstring holds, in this order (as ruff's rule pages).
SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix")
#: Untrusted pieces of a message (call ids, tool names) and excerpts are cut to these lengths.
ID_CHARS = 80
EXCERPT_CHARS = 100


@unique
class Fix(str, Enum):
    """Whether ``threadfix repair`` fixes what the rule finds."""

    ALWAYS = "always"
    SOMETIMES = "sometimes"
    NONE = "none"

    def __str__(self) -> str:
        return self.value


class Rule:
    """One lint rule. Subclasses set the class attributes and implement :meth:`check`."""

    #: ``TF`` + 3 digits; never reused once released, even when a rule is removed
    code: ClassVar[str]
    #: kebab-case name of the bad pattern (reads well after "allow")
    name: ClassVar[str]
    severity: ClassVar[Severity]
    fix: ClassVar[Fix] = Fix.NONE
    #: one line for ``threadfix rules``
    summary: ClassVar[str]
    #: runs on threads no dialect recognised (and only on those); every other rule needs a dialect
    on_unknown_format: ClassVar[bool] = False
    #: reads only the repair plan and the provider's own check, so it finds nothing in a thread the dialect's
    #: quick check accepts (nothing to repair, nothing refused): lint does not run it there
    structural: ClassVar[bool] = False
    #: the context view (an attribute of :class:`~threadfix.rules.context.Context`) that holds all this rule looks at,
    #: read first by :meth:`check`: where it is empty (or 0) the rule finds nothing, and lint does not run it there
    #: (most threads give most of the output rules nothing to read). None: the rule is run on every thread.
    reads: ClassVar[str | None] = None

    def check(self, ctx: Context) -> Iterator[Finding]:
        """Every finding of this rule in the thread ``ctx`` holds."""
        raise NotImplementedError

    @classmethod
    def doc(cls) -> str:
        """The rule's documentation: its docstring, dedented."""
        return inspect.cleandoc(cls.__doc__ or "")

    def finding(self, ctx: Context, message: str, *, at: Loc | None = None, call_id: str | None = None,
                tool: str | None = None, kind: Kind | None = None, fixable: bool = False,
                **extra: Any) -> Finding:
        """A finding of this rule; its message and excerpt are masked here, so no output format leaks a secret."""
        if "excerpt" in extra:
            extra["excerpt"] = excerpt(extra["excerpt"])
        return Finding(self.code, self.name, self.severity, mask_secrets(message), ctx.address, at, call_id,
                       tool, kind, fixable, extra)


def label(value: str | None, missing: str = "(no id)") -> str:
    """A call id or tool name as it appears inside a message: bounded, never empty."""
    return missing if value is None else clip(value, ID_CHARS)


def call_label(call_id: str | None, tool: str | None) -> str:
    """``call_x (shell)``: how messages name a call."""
    return f"{label(call_id)} ({label(tool, 'unknown tool')})" if tool else label(call_id)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """Untrusted text for a finding: secrets masked, whitespace runs folded, cut short.

    Control characters stay as they are here (JSON formats escape them); text formats pass every
    message through ``terminal_safe`` when they print it.
    """
    cut = limit * 4
    words = text[:cut].split()
    if len(text) > cut and not text[cut].isspace() and not text[cut - 1].isspace():
        words.pop()  # a token cut in two is dropped: half a key would not be masked
    return clip(mask_secrets(" ".join(words)), limit)


def quoted(text: str, limit: int = EXCERPT_CHARS) -> str:
    """An excerpt in double quotes, for the end of a message."""
    return f'"{excerpt(text, limit)}"'
