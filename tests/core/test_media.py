"""A new medium is one module and one entry in stores.MEDIA: the shared machinery reads it with no case of its own."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any

import orjson

from threadfix import stores
from threadfix.batch import RepairRun, RunOptions, Scanned, scan
from threadfix.stores.base import Medium, Store
from threadfix.stores.files import FileStore
from threadfix.undo import undoer

STUCK = [{"role": "user", "content": "weather?"},
         {"role": "assistant", "content": None, "tool_calls": [
             {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}]


class MemoryMedium(Medium):
    """Threads kept in a dict, named ``mem:NAME``: a medium no code outside this test knows."""

    def __init__(self, held: dict[str, bytes]) -> None:
        self.held = held

    def open(self, spec: str, options: Any, stdin: Any = None) -> Iterator[Store]:
        yield FileStore(None, spec, self.held[spec.removeprefix("mem:")], dialect=options.dialect)


def test_a_registered_medium_is_read_and_repaired_by_the_shared_machinery(monkeypatch) -> None:
    module = types.ModuleType("threadfix_test_memory_medium")
    module.MEDIUM = MemoryMedium({"chat": orjson.dumps(STUCK)})
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(stores, "MEDIA", [stores.RegisteredMedium("memory", lambda spec: spec.startswith("mem:"),
                                                                  module.__name__), *stores.MEDIA])
    scanned = [s for s in scan(["mem:chat"]) if isinstance(s, Scanned)]
    assert [(str(s.thread.address), s.dialect.name if s.dialect else None) for s in scanned] == [("mem:chat", "openai-chat")]
    run = RepairRun(["mem:chat"], RunOptions(min_age=0))
    statuses = [outcome.status for outcome in run.outcomes()]
    assert statuses == ["repaired"]
    repaired = orjson.loads(run.result.stdout)
    assert repaired[2]["role"] == "tool" and repaired[2]["tool_call_id"] == "c1"


def test_undo_finds_each_store_module_by_the_kind_its_entries_name() -> None:
    from threadfix.stores import files, sqlite

    assert undoer("file") is files.undo_entries
    assert undoer("sqlite") is sqlite.undo_entries
    assert undoer("no-such-kind") is None
