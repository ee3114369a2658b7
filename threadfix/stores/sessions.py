"""Which coding agent's session a file is, told from its first records: the registry of session containers
(:mod:`.records` says what a container is).

Each container is registered with a cheap test its files must pass (``may_be``) and the module that decides
(``recognise``), imported only when the test passes: most files are plain threads, and importing the three
app modules cost every run a few milliseconds of start-up (issue #28).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from threadfix import jsonio

if TYPE_CHECKING:
    from threadfix.stores.records import Container

#: how many leading records a container is shown to recognise its file
SNIFF_RECORDS = 8


def _any_key(values: Sequence[Any], keys: tuple[str, ...]) -> bool:
    return any(isinstance(value, dict) and any(key in value for key in keys) for value in values)


class RegisteredContainer(Struct, frozen=True):
    """A session container's place in :data:`CONTAINERS`: what a file it recognises always holds, and its module."""

    name: str
    #: True for every file the module recognises (False may still be True for others); must not import it
    may_be: Callable[[Sequence[Any], str], bool]
    module: str

    def container(self) -> Container:
        return importlib.import_module(self.module)  # type: ignore[return-value]


#: the app modules in the order they are tried (Claude Code, the most used, first). Each ``may_be`` is what the
#: module's ``recognise`` requires before it looks further (tests/agents hold the two to agree).
CONTAINERS: tuple[RegisteredContainer, ...] = (
    # a message record links to its parent; a summary names its leaf; a snapshot its message
    RegisteredContainer("claude-code", lambda values, suffix: suffix == ".jsonl" and _any_key(
        values, ("parentUuid", "leafUuid", "messageId")), "threadfix.stores.claude_code"),
    # every record, the pre-envelope header included, carries a timestamp
    RegisteredContainer("codex", lambda values, suffix: suffix == ".jsonl" and isinstance(values[0], dict)
                        and "timestamp" in values[0], "threadfix.stores.codex_rollout"),
    # the header names the session and the project
    RegisteredContainer("gemini-cli", lambda values, suffix: isinstance(values[0], dict) and "sessionId" in values[0]
                        and "projectHash" in values[0], "threadfix.stores.gemini_cli"),
)


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
    return container_of(values, suffix)


def container_of(values: Sequence[Any], suffix: str) -> Container | None:
    """The app that recognises a file's first records ``values`` (a ``.json`` file: its one document), or None."""
    if not values:
        return None
    for entry in CONTAINERS:
        if entry.may_be(values, suffix) and (container := entry.container()).recognise(values, suffix):
            return container
    return None
