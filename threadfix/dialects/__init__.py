"""Wire formats, by name. Each is one module; this registry finds them and sniffs which one a thread uses."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import cache
from typing import Any

from threadfix.dialects.base import Dialect, Violation
from threadfix.errors import ConfigError

#: name -> "module:Class"; the order breaks ties when two dialects are equally sure
REGISTRY: dict[str, str] = {
    "openai-responses": "threadfix.dialects.openai_responses:OpenAIResponses",
    "anthropic": "threadfix.dialects.anthropic:Anthropic",
    "openai-chat": "threadfix.dialects.openai_chat:OpenAIChat",
}


def names() -> list[str]:
    return list(REGISTRY)


@cache
def get(name: str) -> Dialect:
    """The dialect called ``name``; a ConfigError lists the known ones."""
    try:
        module_name, _, class_name = REGISTRY[name].partition(":")
    except KeyError:
        raise ConfigError(f"unknown dialect {name!r}; choose one of: {', '.join(REGISTRY)}") from None
    return getattr(importlib.import_module(module_name), class_name)()


def sniff(items: Sequence[Any]) -> Dialect | None:
    """The dialect most sure of ``items``, or None when none recognises them."""
    best: Dialect | None = None
    best_score = 0
    for name in REGISTRY:
        dialect = get(name)
        score = dialect.sniff(items)
        if score > best_score:
            best, best_score = dialect, score
            if score >= 100:
                break
    return best


__all__ = ["Dialect", "REGISTRY", "Violation", "get", "names", "sniff"]
