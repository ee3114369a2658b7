"""Every sample of every dialect, side by side: each is sniffed as its own dialect, never as another.

Samples live in ``sample_threads/<dialect>/``; a new dialect's samples join the matrix by being there.
The own dialect must be *strictly* surer than every other, so the registry's order never decides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from tests.core import threadgen
from threadfix import dialects
from threadfix.stores import StoreOptions, open_stores

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p for p in (ROOT / "sample_threads").iterdir() if p.is_dir() and p.name in dialects.names())
SAMPLES = sorted(path for folder in FOLDERS for path in folder.iterdir() if path.suffix in (".json", ".jsonl"))
NEW = ("gemini", "bedrock", "ai-sdk", "ai-sdk-4")


def threads_of(path: Path) -> list[tuple[str, list[Any]]]:
    return [(str(thread.address), thread.items) for store in open_stores(str(path), StoreOptions())
            for thread in store.threads()]


def test_every_dialect_of_issue_6_has_samples() -> None:
    assert {f.name for f in FOLDERS} >= {"openai-responses", "openai-chat", "anthropic", *NEW}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_sample_is_sniffed_as_its_own_dialect_only(path: Path) -> None:
    own = path.parent.name
    threads = threads_of(path)
    assert threads
    for address, items in threads:
        scores = {name: dialects.get(name).sniff(items) for name in dialects.names()}
        rivals = {name: score for name, score in scores.items() if name != own and score >= scores[own]}
        assert scores[own] > 0 and not rivals, (address, scores)
        assert dialects.sniff(items) is dialects.get(own)


@pytest.mark.parametrize("name", sorted(threadgen.RENDERERS))
@given(conversation=threadgen.conversations())
def test_generated_core_threads_are_not_taken_for_the_new_dialects(name: str, conversation: threadgen.Conversation) -> None:
    items = threadgen.RENDERERS[name](conversation)
    assert [dialects.get(new).sniff(items) for new in NEW] == [0] * len(NEW)
