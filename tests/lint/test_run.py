"""LintRun as a batch job uses it: one thread's failure is reported for that thread and the rest goes on."""

from __future__ import annotations

import io

import orjson
import pytest

from threadfix import dialects
from threadfix.errors import ExitCode
from threadfix.lint import LintOptions, LintRun
from threadfix.rules import get

STUCK = [{"role": "user", "content": "hi"},
         {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]


def run(monkeypatch, broken: str) -> tuple[list, LintRun]:
    data = b"".join(orjson.dumps({"id": f"t{i}", "messages": STUCK}) + b"\n" for i in range(3))
    calls = {"n": 0}
    chat = dialects.get("openai-chat")
    original = chat.check if broken == "dialect" else get("TF001").check

    def flaky(*args):
        calls["n"] += 1
        if calls["n"] == 2:
            raise TypeError("unhashable type: 'list'")
        return original(*args)

    if broken == "dialect":
        monkeypatch.setattr(chat, "check", flaky)
    else:
        monkeypatch.setattr(get("TF001"), "check", flaky)
    lint = LintRun(["-"], LintOptions(select=("TF001", "TF008")), stdin=io.BytesIO(data))
    return list(lint.results()), lint


@pytest.mark.parametrize(("broken", "message"), [
    ("dialect", "<stdin>:2:id=t1: its items do not follow the openai-chat format (TypeError); left alone"),
    ("rule", "<stdin>:2:id=t1: internal error while linting (TypeError: unhashable type: 'list'); please report it"),
])
def test_a_failing_thread_is_a_problem_and_the_batch_goes_on(monkeypatch, broken: str, message: str) -> None:
    results, lint = run(monkeypatch, broken)
    assert [hasattr(r, "findings") for r in results] == [True, False, True]
    assert f"{results[1].where}: {results[1].message}" == message
    assert [f.code for f in results[2].findings] == ["TF001"]
    assert lint.summary.threads == 2 and lint.summary.exit_code() is ExitCode.ERROR
