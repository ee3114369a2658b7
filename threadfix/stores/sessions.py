"""Which coding agent's session a file is, told from its first records: the registry of session containers
(:mod:`.records` says what a container is)."""

from __future__ import annotations

from typing import Any

from threadfix import jsonio
from threadfix.stores import claude_code, codex_rollout, gemini_cli
from threadfix.stores.records import Container

#: the app modules in the order they are tried (Claude Code, the most used, first)
CONTAINERS: tuple[Container, ...] = (claude_code, codex_rollout, gemini_cli)  # type: ignore[assignment]
#: how many leading records a container is shown to recognise its file
SNIFF_RECORDS = 8


def session_container(head: bytes, suffix: str) -> Container | None:
    """The app whose records start ``head`` (a file's first bytes), or None: the hook where the file medium
    chooses a session container over its own JSON and JSONL ones."""
    values: list[Any] = []
    for raw in head.split(b"\n", SNIFF_RECORDS)[:SNIFF_RECORDS]:
        body = raw[3:] if not values and raw[:3] == jsonio.BOM else raw
        if not body.strip():
            continue
        try:
            values.append(jsonio.loads(body))
        except jsonio.JsonReadError:
            break
    if not values and suffix == ".json":
        try:
            values.append(jsonio.loads(head))
        except jsonio.JsonReadError:
            return None
    for container in CONTAINERS:
        if values and container.recognise(values, suffix):
            return container
    return None
