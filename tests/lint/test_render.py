"""Lint output formats: grep-able text, JSON, JSON Lines, GitHub annotations and SARIF 2.1.0."""

from __future__ import annotations

import io
import json
import re

import pytest

from threadfix.batch import Problem
from threadfix.lint import LintOptions, LintSummary, ThreadResult, lint_items
from threadfix.model import Address
from threadfix.render.lint import FORMATTERS, github_data, github_property, summary_line
from threadfix.rules import all_rules, select_rules

KEY = "sk-proj-Zq81rT0pLw9xXcV3bN7mK2jH4gF6dS5a"
HOSTILE_ID = "call_\x1b]0;pwned\x07\nforged: TF000"
THREAD = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": HOSTILE_ID, "type": "function", "function": {"name": "shell", "arguments": "{}"}},
        {"id": "call_env", "type": "function", "function": {"name": "shell", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_env", "content": f"OPENAI_API_KEY={KEY} 100% done"},
]
ADDRESS = Address("logs/chats,1.jsonl", line=7, key="id=t1")


def render(name: str, problems: list[Problem] | None = None) -> tuple[str, list]:
    rules = select_rules(("TF",))
    findings = lint_items(THREAD, "openai-chat", LintOptions(), address=ADDRESS)
    summary = LintSummary()
    result = ThreadResult(ADDRESS, "openai-chat", findings)
    summary.add(result)
    summary.problems.extend(problems or [])
    out = io.BytesIO()
    formatter = FORMATTERS[name](out, rules)
    formatter.start()
    formatter.thread(result)
    formatter.finish(summary)
    return out.getvalue().decode("utf-8"), findings


def test_findings_under_test() -> None:
    _, findings = render("text")
    assert [f.code for f in findings] == ["TF001", "TF205"]


def test_text_is_one_greppable_line_per_finding_with_untrusted_text_made_safe() -> None:
    text, _ = render("text")
    lines = text.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("logs/chats,1.jsonl:7:id=t1#1: TF001 call call_\\x1b]0;pwned\\x07\\x0aforged: TF000 (shell) has no output")
    assert lines[0].endswith(" (dangling-call)")
    assert lines[1] == ("logs/chats,1.jsonl:7:id=t1#2: TF205 output of call call_env (shell) holds a secret-looking "
                        "token (sk-p…[redacted]); rotate it (secret-in-output)")
    assert "\x1b" not in text and KEY not in text


@pytest.mark.parametrize("name", ["json", "jsonl", "sarif"])
def test_json_formats_carry_text_unescaped_but_masked(name: str) -> None:
    text, _ = render(name)
    assert KEY not in text
    assert HOSTILE_ID in text.replace("\\u001b", "\x1b").replace("\\u0007", "\x07").replace("\\n", "\n")


def test_json_document() -> None:
    text, _ = render("json")
    document = json.loads(text)
    first = document["findings"][0]
    assert first | {"message": None} == {
        "address": f"logs/chats,1.jsonl:7:id=t1#1", "path": "logs/chats,1.jsonl", "line": 7, "thread": "id=t1",
        "item": "1", "code": "TF001", "name": "dangling-call", "severity": "error", "message": None,
        "call_id": HOSTILE_ID, "tool": "shell", "kind": "aborted", "fixable": True, "cause": "thread_ended",
    }
    assert document["summary"]["findings"] == 2
    assert document["summary"]["by_severity"] == {"error": 2, "warning": 0, "info": 0}
    assert document["summary"]["by_code"] == {"TF001": 1, "TF205": 1}


def test_jsonl_is_one_object_per_line() -> None:
    text, _ = render("jsonl")
    records = [json.loads(line) for line in text.splitlines()]
    assert [r["code"] for r in records] == ["TF001", "TF205"]


def test_github_annotations_escape_percent_newlines_and_property_separators() -> None:
    text, _ = render("github")
    lines = text.splitlines()
    assert len(lines) == 2  # a newline in a call id cannot start a second command
    assert lines[0].startswith("::error file=logs/chats%2C1.jsonl,line=7,title=TF001 dangling-call::logs/chats,1.jsonl:7:id=t1#1: call ")
    assert "%0Aforged" in lines[0] and "\x1b" not in lines[0]
    assert github_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert github_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_github_levels() -> None:
    from threadfix.render.lint import GithubFormatter  # noqa: F401 - the registry holds it

    findings = lint_items([{"speaker": "x"}], None, LintOptions(), address=Address("a.json"))
    out = io.BytesIO()
    FORMATTERS["github"](out, all_rules()).thread(ThreadResult(Address("a.json"), None, findings))
    assert out.getvalue().decode().startswith("::notice file=a.json,title=TF901 unrecognised-format::a.json: ")


def test_sarif_structure() -> None:
    text, findings = render("sarif", [Problem("broken.jsonl:3", "not valid JSON")])
    log = json.loads(text)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "threadfix" and re.fullmatch(r"\d+\.\d+\.\d+.*", driver["version"])
    ids = [rule["id"] for rule in driver["rules"]]
    assert ids == [r.code for r in all_rules()] and len(set(ids)) == len(ids)
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["help"]["markdown"].count("## ") == 5
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert len(run["results"]) == len(findings)
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note", "none")
        assert isinstance(result["message"]["text"], str) and result["message"]["text"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "logs/chats%2C1.jsonl"
        assert physical["region"]["startLine"] == 7
        assert location["logicalLocations"][0]["fullyQualifiedName"].startswith("logs/chats,1.jsonl:7:id=t1#")
        assert re.fullmatch(r"[0-9a-f]{32}", result["partialFingerprints"]["threadfix/v1"])
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["message"]["text"] == "not valid JSON"


def test_sarif_uri_of_an_absolute_path() -> None:
    from threadfix.render.lint import artifact_uri

    assert artifact_uri("/data/my chats.jsonl") == "file:///data/my%20chats.jsonl"
    assert artifact_uri("rel/my chats.jsonl") == "rel/my%20chats.jsonl"


def test_summary_line() -> None:
    summary = LintSummary()
    assert summary_line(summary) == "0 findings in 0 of 0 threads read (0 errors, 0 warnings)"
    findings = lint_items(THREAD, "openai-chat", LintOptions())
    summary.add(ThreadResult(ADDRESS, "openai-chat", findings, recent=True))
    summary.add(ThreadResult(ADDRESS, "openai-chat", []))  # a clean thread is read, not one with findings
    summary.problems.append(Problem("x", "y"))
    assert summary_line(summary) == ("2 findings in 1 of 2 threads read (2 errors, 0 warnings); 1 thread changed under --min-age "
                                     "ago, open calls not reported; 1 fixable with `threadfix repair`; 1 input error")
