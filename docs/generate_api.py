"""Write docs/api.md from the docstrings of what ``threadfix`` exports: ``python docs/generate_api.py``.

The test suite fails when docs/api.md differs from what this writes (tests/cli/test_readme.py).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "docs" / "api.md"


def _doc(obj: object) -> str:
    return inspect.cleandoc(obj.__doc__ or "").strip()


class _Short:
    """A default shown by its type alone (``RunOptions()``), so the page does not change with every field."""

    def __init__(self, value: object) -> None:
        self.text = f"{type(value).__name__}()"

    def __repr__(self) -> str:
        return self.text


def _signature(name: str, obj: object) -> str:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return name
    parameters = [p.replace(default=_Short(p.default)) if p.default is not p.empty and len(repr(p.default)) > 40
                  else p for p in signature.parameters.values()]
    return f"{name}{signature.replace(parameters=parameters)}"


def _members(cls: type) -> list[tuple[str, object]]:
    """Public methods and properties the class itself defines, in source order."""
    found = []
    for key, value in vars(cls).items():
        if key.startswith("_") or not (inspect.isfunction(value) or isinstance(value, property)):
            continue
        found.append((key, value))
    return found


def render() -> str:
    sys.path.insert(0, str(ROOT))
    import threadfix

    lines = ["# threadfix API", "", "Generated from the docstrings by `python docs/generate_api.py`; do not edit.", "",
             _doc(threadfix), ""]
    for name in threadfix.__all__:
        if name == "__version__":
            continue
        obj = getattr(threadfix, name)
        kind = "class" if inspect.isclass(obj) else "function" if callable(obj) else "value"
        lines += [f"## `{name}`", "", f"*{kind}* from `{getattr(obj, '__module__', '?')}`", ""]
        if kind != "value":
            lines += ["```python", _signature(name, obj), "```", ""]
        if _doc(obj):
            lines += [_doc(obj), ""]
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            fields = getattr(obj, "__struct_fields__", None)
            if fields and not hasattr(obj, "__members__"):
                defaults = dict(zip(fields[len(fields) - len(obj.__struct_defaults__):], obj.__struct_defaults__))
                lines += ["Fields: " + ", ".join(f"`{f}`" + (f" (default `{defaults[f]!r}`)" if f in defaults and
                                                          not callable(defaults[f]) and "factory" not in repr(defaults[f]) and len(repr(defaults[f])) < 40
                                                          else "") for f in fields), ""]
            for key, member in _members(obj):
                target = member.fget if isinstance(member, property) else member
                title = f"`{name}.{key}`" if isinstance(member, property) else f"`{_signature(f'{name}.{key}', target)}`"
                summary = " ".join(_doc(target).split("\n\n")[0].split())
                lines += [f"- {title}: {summary}".rstrip(": ")]
            if _members(obj):
                lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
