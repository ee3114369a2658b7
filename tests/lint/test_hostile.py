"""Lint never crashes, whatever a stored thread holds: every rule, every dialect, hostile shapes.

Threads a dialect itself cannot index are left out here (that is the dialect's own test's business);
everything lint adds on top of the index must survive whatever the index lets through.
"""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from threadfix import dialects
from threadfix.batch import Scanned
from threadfix.lint import LintOptions, lint_thread
from threadfix.model import Address, Thread
from threadfix.rules import all_rules

KEYS = ("type", "role", "content", "call_id", "id", "tool_calls", "name", "arguments", "output", "tool_use_id",
        "is_error", "status", "input", "stop_reason", "finish_reason", "function", "parts", "text", "tool_call_id",
        "functionCall", "functionResponse", "toolUse", "toolResult", "kind", "part_kind", "args", "response")
WORDS = ("function_call", "function_call_output", "tool_use", "tool_result", "message", "user", "assistant", "tool",
         "model", "max_tokens", "length", "incomplete", "error", "call_1", "call_2", "{", "[1]", '{"a": 1}',
         "Traceback (most recent call last)", "\n  at f (/app/x.js:1:2)", "sk-proj-abcdefghijklmnopqrstuv",
         '{"error": {"code": "x"', "\x1b[31m", "")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(WORDS), st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)), max_leaves=12)
items = st.lists(st.one_of(st.dictionaries(st.sampled_from(KEYS), values, max_size=6), values), max_size=6)

OPTIONS = LintOptions(oversized_bytes=20, retry_storm=2, scan_chars=64)


def lint(items, name: str | None) -> list:
    try:
        dialect = dialects.get(name) if name else dialects.sniff(items)
        index = dialect.index(items) if dialect else None
    except (TypeError, AttributeError, ValueError):
        assume(False)  # the dialect's own failure, not lint's
    return lint_thread(Scanned(Thread(Address("h.json"), items), dialect, index), all_rules(), OPTIONS).findings


@given(items=items, name=st.sampled_from(dialects.names()))
def test_every_rule_survives_any_items(items, name) -> None:
    for finding in lint(items, name):
        assert finding.message and finding.code.startswith("TF")


@given(items=items)
def test_sniffed_or_unrecognised(items) -> None:
    lint(items, None)
