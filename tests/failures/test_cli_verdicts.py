"""Unflagged failure text reaches the user: ``threadfix report`` and ``threadfix lint`` on Chat and Responses
stores whose outputs carry no error flag (neither wire has one) count them as the failures they are.

The outputs are real texts (tests/failures/classification_cases.json names their sources); before the
classifier read unflagged text, report counted none of the bare ones and lint saw no retry storm.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]

RATE_LIMIT = (
    "429 Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, "
    "Requested 1500."
)
FRAMED_RATE_LIMIT = "Error: " + RATE_LIMIT
USAGE_LIMIT = (
    "You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try "
    "again at 3:28 PM."
)
OVERLOADED = 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
QUOTA = "You exceeded your current quota, please check your plan and billing details."
# Healthy results that speak of failures: a documentation paragraph and a grep.
DOCS = (
    "This error indicates that you have exceeded your API request limit. The Gemini\n"
    "API has rate limits to prevent abuse and ensure fair usage."
)
GREP = (
    "src/anthropic/_base_client.py:864:        # Retry on rate limits.\n"
    "src/anthropic/types/beta/beta_managed_agents_session_rate_limited_run_error.py:11:    \"\"\"Session creation "
    "was rejected due to rate limiting."
)


def threadfix(*args: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "COLUMNS", "FORCE_COLOR")}
    return subprocess.run([sys.executable, "-m", "threadfix", *args], capture_output=True, cwd=ROOT,
                          env=environment, timeout=60)


def _chat_thread(thread_id: str, tool: str, outputs: list[str]) -> dict:
    messages: list[dict] = [{"role": "user", "content": "Go."}]
    for number, output in enumerate(outputs):
        call_id = f"call_{thread_id}_{number}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": tool, "arguments": "{\"q\":\"x\"}"}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
    messages.append({"role": "assistant", "content": "Done."})
    return {"id": thread_id, "messages": messages}


def _responses_thread(thread_id: str, pairs: list[tuple[str, str]]) -> dict:
    items: list[dict] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go."}]}]
    for number, (tool, output) in enumerate(pairs):
        call_id = f"call_{thread_id}_{number}"
        items.append({"type": "function_call", "call_id": call_id, "name": tool, "arguments": "{}",
                      "status": "completed"})
        items.append({"type": "function_call_output", "call_id": call_id, "output": output})
    return {"id": thread_id, "items": items}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("verdicts")
    chat = folder / "chat.jsonl"
    chat.write_bytes(b"".join(orjson.dumps(thread) + b"\n" for thread in (
        _chat_thread("c_storm", "search_docs", [RATE_LIMIT, RATE_LIMIT, FRAMED_RATE_LIMIT]),
        _chat_thread("c_docs", "read_file", [DOCS, GREP]),
    )))
    responses = folder / "responses.jsonl"
    responses.write_bytes(b"".join(orjson.dumps(thread) + b"\n" for thread in (
        _responses_thread("r_limits", [("codex_exec", USAGE_LIMIT), ("ask_claude", OVERLOADED), ("embed", QUOTA)]),
        _responses_thread("r_docs", [("read_file", DOCS)]),
    )))
    return chat, responses


def _report(path: Path) -> dict:
    result = threadfix("report", "--format", "json", str(path))
    assert (result.returncode, result.stderr) == (0, b""), result.stderr
    return orjson.loads(result.stdout)


def test_report_counts_a_chat_stores_unflagged_rate_limits(stores) -> None:
    document = _report(stores[0])
    assert document["totals"]["outputs"] == 5
    assert document["totals"]["error_outputs"] == 3  # the docs paragraph and the grep are results
    assert {row["kind"]: row["error_outputs"] for row in document["kinds"]} == {"rate_limited": 3}
    tools = {row["tool"]: row["kinds"] for row in document["tools"]}
    assert tools["search_docs"] == {"rate_limited": 3}
    assert tools["read_file"] == {}


def test_report_names_a_responses_stores_limits_by_kind(stores) -> None:
    document = _report(stores[1])
    assert document["totals"]["error_outputs"] == 3
    kinds = {row["kind"]: (row["error_outputs"], row["retryable"]) for row in document["kinds"]}
    assert kinds == {
        "usage_limit_reached": (1, False),
        "service_unavailable": (1, True),
        "usage_pool_exhausted": (1, False),
    }


def test_lint_sees_the_retry_storm_of_unflagged_rate_limits(stores) -> None:
    chat = stores[0]
    result = threadfix("lint", str(chat))
    assert result.returncode == 1
    lines = result.stdout.decode().splitlines()
    assert lines == [
        f"{chat}:1:id=c_storm#1: TF206 tool search_docs failed 3 times in a row, from call call_c_storm_0 "
        "(last: rate_limited) (retry-storm)"
    ]
    assert "1 finding in 1 of 2 threads read" in result.stderr.decode()
