"""Option values read without pydantic.

Recent typer coerces every option value through a pydantic ``TypeAdapter``, built when the option is
first read, even when it was not given. Importing pydantic and building the adapters costs more CPU than
the rest of a small run. threadfix's options are strings, whole or decimal numbers and lists of strings,
whose coerced value is known without pydantic: :func:`read_plainly` hands typer a coercion that gives
that value directly and falls back to typer's own for any other value or type, so odd spellings
(``+5``, `` 5``, ``1e3``) and every error message stay exactly typer's. With a typer that coerces
differently, :func:`read_plainly` leaves the command as it is.
"""

from __future__ import annotations

import re
from typing import Any

try:  # typer's runtime coercion; absent from typer versions that coerce through click types
    from typer._coercion import RuntimeParam, build_runtime_param
except ImportError:  # pragma: no cover - depends on the installed typer
    RuntimeParam = None  # type: ignore[assignment,misc]

#: what :func:`plain_value` returns when only typer's own coercion can say
UNSURE: Any = object()

# Only the canonical spellings: anything else (signs, spaces, underscores, exponents, other scripts'
# digits) goes to typer, which accepts some of them and words the refusal of the rest.
_WHOLE = re.compile(r"0|[1-9][0-9]{0,17}")
_DECIMAL = re.compile(r"(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?")


def plain_value(annotation: Any, info: Any, value: Any) -> Any:
    """The value typer's coercion gives ``value`` (never None) for an option typed ``annotation``, or
    :data:`UNSURE` when that takes typer itself (a custom parser, a clamp, a refusal, another type)."""
    if getattr(info, "parser", None) is not None or getattr(info, "clamp", False):
        return UNSURE
    if annotation is str:
        return value if type(value) is str else UNSURE
    if annotation is int:
        number = int(value) if type(value) is str and _WHOLE.fullmatch(value) else value
        return number if type(number) is int and _within(number, info) else UNSURE
    if annotation is float:
        number = float(value) if type(value) is str and _DECIMAL.fullmatch(value) else value
        return number if type(number) is float and _within(number, info) else UNSURE
    if annotation == list[str]:
        if isinstance(value, (list, tuple)) and all(type(item) is str for item in value):
            return list(value)
    return UNSURE


def _within(number: float, info: Any) -> bool:
    low, high = getattr(info, "min", None), getattr(info, "max", None)
    return (low is None or number >= low) and (high is None or number <= high)


if RuntimeParam is not None:

    class PlainRuntimeParam(RuntimeParam):  # type: ignore[misc,valid-type]
        """typer's coercion of one option, answered by :func:`plain_value` where it can. (Not a dataclass
        itself: generating one costs a millisecond of start-up.)"""

        def __init__(self, descriptor: Any) -> None:
            super().__init__(descriptor.parameter_info, descriptor.annotation)
            object.__setattr__(self, "descriptor", descriptor)
            #: typer's own coercion, built the first time a value needs it
            object.__setattr__(self, "built", [])

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            plain = plain_value(self.annotation, self.parameter_info, value)
            if plain is not UNSURE:
                return plain
            if not self.built:
                self.built.append(build_runtime_param(self.descriptor))
            return self.built[0]._coerce_value(value, param=param, ctx=ctx)


def read_plainly(command: Any, parent: Any = None) -> None:
    """Give every option of ``command`` and of its subcommands, ``--help`` included, the pydantic-free
    coercion.

    ``--help`` is made per command from its context's settings (its names are inherited), so each
    command gets the context its parsing would make, and is asked for its parameters through it.
    """
    if RuntimeParam is None:
        return
    context = command.context_class(command, parent=parent, **command.context_settings)
    for param in command.get_params(context):
        descriptor = getattr(param, "type_descriptor", None)
        if (descriptor is None or getattr(param, "_runtime_param", UNSURE) is not None
                or getattr(descriptor, "file_annotation", None) is not None):
            continue
        param._runtime_param = PlainRuntimeParam(descriptor)
    for subcommand in getattr(command, "commands", {}).values():
        read_plainly(subcommand, context)
