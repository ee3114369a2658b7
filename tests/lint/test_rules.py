"""Every rule against its table of cases (tests/lint/cases/<CODE>_<name>.json), and the registry's promises.

A case file holds threads in any dialect and, for each, the exact findings of that file's rule:
``expect`` lists them in order by item and call id (``[]``: the rule must not fire), optionally with a
substring of the message, the kind and whether it is fixable. ``all`` lists the codes every rule
together must find (nothing else), ``options`` sets LintOptions fields, ``age`` makes the thread that
many seconds old. Add a case: add an entry to the file; add a rule: add its file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from threadfix import dialects
from threadfix.batch import Scanned
from threadfix.lint import LintOptions, lint_thread
from threadfix.model import Address, Thread
from threadfix.render.repair import item_label
from threadfix.rules import SECTIONS, all_rules, get, select_rules

CASES = Path(__file__).parent / "cases"
NOW = 2_000_000_000.0


def _case_files() -> dict[str, Path]:
    return {path.name.split("_", 1)[0]: path for path in sorted(CASES.glob("TF*.json"))}


def _cases():
    for code, path in _case_files().items():
        for case in orjson.loads(path.read_bytes())["cases"]:
            yield pytest.param(code, case, id=f"{code}-{case['name']}")


def run(case: dict[str, Any], rules) -> list:
    items = case["items"]
    options = LintOptions(now=NOW, **case.get("options", {}))
    thread = Thread(Address("case.json"), items, mtime=NOW - case["age"] if "age" in case else None)
    dialect = dialects.get(case["dialect"]) if "dialect" in case else dialects.sniff(items)
    scanned = Scanned(thread, dialect, dialect.index(items) if dialect else None)
    return lint_thread(scanned, rules, options).findings


@pytest.mark.parametrize(("code", "case"), list(_cases()))
def test_rule_case(code: str, case: dict[str, Any]) -> None:
    findings = run(case, [get(code)])
    got = [{"item": item_label(f.item) if f.item is not None else None, "call_id": f.call_id} for f in findings]
    assert got == [{"item": e["item"], "call_id": e["call_id"]} for e in case["expect"]], [f.message for f in findings]
    for finding, expected in zip(findings, case["expect"]):
        assert finding.code == code
        if "message" in expected:
            assert expected["message"] in finding.message
        if "kind" in expected:
            assert finding.kind is not None and finding.kind.value == expected["kind"]
        if "fixable" in expected:
            assert finding.fixable is expected["fixable"]
    if "all" in case:
        assert sorted(f.code for f in run(case, all_rules())) == sorted(case["all"])


def test_every_rule_has_cases_that_fire_and_cases_that_must_not() -> None:
    files = _case_files()
    for rule in all_rules():
        assert rule.code in files, f"{rule.code} has no tests/lint/cases/{rule.code}_{rule.name}.json"
        assert files[rule.code].name == f"{rule.code}_{rule.name}.json"
        cases = orjson.loads(files[rule.code].read_bytes())["cases"]
        assert any(c["expect"] for c in cases), f"{rule.code}: no case where it fires"
        assert any(not c["expect"] for c in cases), f"{rule.code}: no case where it must not fire"
    assert set(files) <= {r.code for r in all_rules()}, "a case file for a rule that does not exist"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_documentation_has_every_section(rule) -> None:
    doc = rule.doc()
    headings = re.findall(r"^## (.+)$", doc, re.MULTILINE)
    assert headings == list(SECTIONS), f"{rule.code}: sections {headings}, expected {list(SECTIONS)}"
    for section, body in zip(SECTIONS, re.split(r"^## .+$", doc, flags=re.MULTILINE)[1:]):
        assert body.strip(), f"{rule.code}: section {section!r} is empty"
    assert doc.split("\n", 1)[0].strip(), f"{rule.code}: no one-line title"


def test_codes_and_names_are_unique_and_well_formed() -> None:
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)
    for rule in rules:
        assert re.fullmatch(r"TF\d{3}", rule.code)
        assert re.fullmatch(r"[a-z]+(?:-[a-z]+)*", rule.name)
        assert rule.summary and not rule.summary.endswith(".")


@pytest.mark.parametrize(("select", "ignore", "expected"), [
    (("TF",), (), None),
    (("TF0",), (), {"TF001", "TF002", "TF003", "TF004", "TF005", "TF006", "TF007", "TF008"}),
    (("TF0",), ("TF00",), set()),
    (("TF001",), ("TF0",), {"TF001"}),  # the more specific selector wins
    (("TF0",), ("TF001",), {"TF002", "TF003", "TF004", "TF005", "TF006", "TF007", "TF008"}),
    (("dangling-call", "tf205"), (), {"TF001", "TF205"}),
    (("TF2",), ("secret-in-output", "TF20"), set()),
    (("TF001",), ("TF001",), set()),  # a tie ignores
])
def test_selection_by_prefix_and_name(select, ignore, expected) -> None:
    chosen = {r.code for r in select_rules(select, ignore)}
    assert chosen == (expected if expected is not None else {r.code for r in all_rules()})


@pytest.mark.parametrize("selector", ["TF999", "XX", "", "dangling"])
def test_unknown_selector_is_refused_by_name(selector: str) -> None:
    from threadfix.errors import ConfigError

    with pytest.raises(ConfigError, match=re.escape(repr(selector))):
        select_rules((selector,))


def _json_blocks(text: str) -> list:
    return [orjson.loads(block) for block in re.findall(r"```json\n(.*?)\n```", text, re.DOTALL)]


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_documented_examples_fire_and_their_fixes_do_not(rule) -> None:
    """A JSON example in a rule's documentation is a thread (or one item of one): lint must agree with it."""
    from threadfix.lint import LintOptions, lint_items

    doc = rule.doc()
    example = doc.split("## Example", 1)[1].split("## Use instead", 1)[0]
    use_instead = doc.split("## Use instead", 1)[1].split("## Fix", 1)[0]
    for block in _json_blocks(example):
        items = block if isinstance(block, list) else [block]
        assert rule.code in [f.code for f in lint_items(items, None, LintOptions(select=(rule.code,)))]
    for block in _json_blocks(use_instead):
        if isinstance(block, list):  # a whole thread; a lone item shows a shape, not a thread
            assert lint_items(block, None, LintOptions(select=(rule.code,))) == []


@pytest.mark.parametrize(("answered", "thinking", "fixable"), [(True, False, True), (False, False, True),
                                                             (True, True, False)])
def test_text_after_anthropic_tool_calls_is_reported_and_fixable_unless_thinking_is_there(answered, thinking, fixable) -> None:
    from threadfix.lint import lint_items

    first = [{"type": "thinking", "thinking": "plan", "signature": "c2ln"}] if thinking else []
    reply = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a b"}] if answered else "hello?"
    items = [{"role": "user", "content": "list files"},
             {"role": "assistant", "content": [*first, {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}},
                                               {"type": "text", "text": "Running it now."}]},
             {"role": "user", "content": reply}]
    refusals = [f for f in lint_items(items, "anthropic") if f.code == "TF008"]
    assert [(f.item, f.fixable) for f in refusals] == [((1, -1), fixable)]
