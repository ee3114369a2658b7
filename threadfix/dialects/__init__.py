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
    # speakers named by ``type`` (human/ai/tool), never ``role``: no overlap with openai-chat
    "langchain": "threadfix.dialects.langchain:LangChain",
    # messages with ``kind`` request/response and ``parts`` with ``part_kind``: no overlap with any other
    "pydantic-ai": "threadfix.dialects.pydantic_ai:PydanticAI",
    # ``parts`` whose keys are Gemini Part fields (no ``type``), roles user/model/function
    "gemini": "threadfix.dialects.gemini:Gemini",
    # ``content`` lists of one-key ContentBlock unions (no ``type``): Anthropic and Chat both refuse those
    "bedrock": "threadfix.dialects.bedrock:Bedrock",
    # ``parts`` that all carry a ``type`` (text, step-start, tool-<name>...), roles user/assistant/system
    "ai-sdk": "threadfix.dialects.ai_sdk:AISDK",
    # AI SDK 4 messages: ``tool-invocation`` parts or ``toolInvocations`` (the 5+ dialect refuses both)
    "ai-sdk-4": "threadfix.dialects.ai_sdk_4:AISDK4",
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
