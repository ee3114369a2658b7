"""Lint's shortcuts change no finding: each is compared with the slow, obvious way of getting the same answer.

* Structural rules are skipped on threads the dialect's quick check accepts: compared with running them, over
  hostile items in every dialect, generated conversations and a store from the benchmark generator.
* The cheap tests in front of costly ones (arguments parsed once, and read closely only when not an object;
  the marks of a leak or a secret looked for with regexes led by one literal character; a first character
  before a regex; a length bound before encoding) are compared with what they stand in for, on text built from
  the characters and words those tests look for.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import benchmark_store
from tests.core import threadgen
from tests.lint.test_hostile import items as hostile_items
from threadfix import dialects, lint
from threadfix.batch import Scanned
from threadfix.failures import ArgumentsState, read_arguments
from threadfix.lint import Context, LintOptions, LintRun, lint_items, lint_thread
from threadfix.model import Address, Call, Output, Thread, ThreadIndex
from threadfix.rules import all_rules
from threadfix.rules import empty_output, error_output_cut_mid_json, internals_leaked, oversized_output
from threadfix.secrets import SECRET, may_hold_secret

OPTIONS = LintOptions(oversized_bytes=20, retry_storm=2, scan_chars=64)


def _with_and_without(monkeypatch: pytest.MonkeyPatch, shortcut: str, run):
    """``run()`` with lint's ``shortcut`` switched on, then off."""
    monkeypatch.setattr(lint, shortcut, True)
    fast = run()
    monkeypatch.setattr(lint, shortcut, False)
    slow = run()
    return fast, slow


def _both_ways(monkeypatch: pytest.MonkeyPatch, run):
    """``run()`` with structural rules skipped on accepted threads, then with every rule run on every thread."""
    return _with_and_without(monkeypatch, "SKIP_STRUCTURAL_WHEN_ACCEPTED", run)


# --------------------------------------------------------------------------- structural rules on accepted threads


def _lint_hostile(items, name: str) -> list | None:
    try:
        dialect = dialects.get(name)
        index = dialect.index(items)
    except (TypeError, AttributeError, ValueError):
        return None  # the dialect's own failure, not lint's
    try:
        return lint_thread(Scanned(Thread(Address("h.json"), items), dialect, index), all_rules(), OPTIONS).findings
    except Exception as exc:  # noqa: BLE001 - a thread the rules choke on must choke both ways alike
        return [repr(exc)]


@given(items=hostile_items, name=st.sampled_from(dialects.names()))
def test_skipping_structural_rules_changes_nothing_on_any_items(items, name) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = _both_ways(monkeypatch, lambda: _lint_hostile(items, name))
    assert fast == slow


def _with_and_without_views(monkeypatch: pytest.MonkeyPatch, run):
    """``run()`` with each rule skipped where the view it reads is empty, then with every rule run everywhere."""
    return _with_and_without(monkeypatch, "RUN_ONLY_WHERE_RULES_READ", run)


@given(items=hostile_items, name=st.sampled_from(dialects.names()))
def test_skipping_rules_whose_view_is_empty_changes_nothing_on_any_items(items, name) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = _with_and_without_views(monkeypatch, lambda: _lint_hostile(items, name))
    assert fast == slow


def test_skipping_rules_whose_view_is_empty_changes_nothing_on_the_rule_cases(monkeypatch) -> None:
    """Every rule's table of cases holds threads where it fires and where it must not: a rule naming a view it does
    not read all it looks at through (so skipped where it would have found something) is caught here."""
    from tests.lint.test_rules import _cases, run

    cases = [param.values[1] for param in _cases()]
    fast, slow = _with_and_without_views(monkeypatch, lambda: [run(case, all_rules()) for case in cases])
    assert fast == slow
    fired = {f.code for findings in fast for f in findings}
    assert {rule.code for rule in all_rules() if rule.reads} <= fired


def test_the_output_rules_name_the_view_they_read() -> None:
    views = {rule.code: rule.reads for rule in all_rules() if rule.reads}
    assert {"TF101", "TF102", "TF103", "TF201", "TF202", "TF203", "TF204", "TF205", "TF207", "TF902"} <= set(views)
    assert all(hasattr(Context, view) for view in views.values())


@pytest.mark.parametrize("name", list(threadgen.RENDERERS))
@given(conversation=threadgen.conversations())
def test_skipping_structural_rules_changes_nothing_on_conversations(name: str, conversation) -> None:
    items = threadgen.RENDERERS[name](conversation)
    dialect = dialects.get(name)
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = _both_ways(monkeypatch, lambda: lint_items(items, dialect, OPTIONS))
    assert fast == slow


def test_skipping_structural_rules_changes_nothing_on_the_rule_cases(monkeypatch) -> None:
    """Every rule's table of cases: the threads where each content rule fires include accepted ones, so a rule
    marked structural by mistake is caught here (TF201 needs a wire error flag, which no dialect with a quick
    accept check has)."""
    from tests.lint.test_rules import _cases, run

    cases = [param.values[1] for param in _cases()]
    fast, slow = _both_ways(monkeypatch, lambda: [run(case, all_rules()) for case in cases])
    assert fast == slow
    accepted_with_findings = {f.code for case, findings in zip(cases, fast) if _accepted(case) for f in findings}
    content_rules = {rule.code for rule in all_rules() if not rule.structural and not rule.on_unknown_format}
    assert content_rules - {"TF201"} <= accepted_with_findings


def _accepted(case: dict) -> bool:
    dialect = dialects.get(case["dialect"]) if "dialect" in case else dialects.sniff(case["items"])
    return dialect is not None and dialect.quick_accepted(case["items"])


def test_skipping_structural_rules_changes_nothing_on_a_benchmark_store(monkeypatch, tmp_path: Path) -> None:
    """A few MB of the benchmark's threads (dangling calls, parallel calls, realistic failures), as a JSONL store."""
    generate = benchmark_store.generator()
    batch = generate.make_batch(generate.DEFAULT_SEED, 0, 250)
    store = tmp_path / "threads.jsonl"
    store.write_bytes(batch.jsonl)

    def run() -> list:
        results = list(LintRun([str(store)], LintOptions(now=2_000_000_000.0), jobs=1).results())
        return [(str(r.address), r.findings) for r in results]

    fast, slow = _both_ways(monkeypatch, run)
    assert len(fast) == 250 and fast == slow
    assert any(f.code == "TF001" for _, findings in fast for f in findings)  # structural rules did fire


# --------------------------------------------------------------------------- arguments


ARGUMENT_TEXT = st.one_of(
    st.sampled_from(['{"path": "a.txt"}', "{}", "", "  ", "\t\n", '{"q": "x"', "[1, 2]", "null", "1", '"s"', " {} ",
                     '{"a": 1} {"b": 2}', '{"n": 18446744073709551615}', "{'a': 1}", "\ufeff{}", "NaN"]),
    st.text(alphabet='{}[]":, \t\n1ab\\', max_size=12),
)
ARGUMENTS = st.one_of(ARGUMENT_TEXT, st.none(), st.dictionaries(st.sampled_from("ab"), st.integers(), max_size=2),
                      st.lists(st.integers(), max_size=2), st.integers(), st.booleans())


@given(arguments=st.lists(ARGUMENTS, max_size=6))
def test_unusual_arguments_are_those_read_arguments_finds_unusual(arguments) -> None:
    calls = tuple(Call(f"c{i}", "tool", "function_call", (i, -1), value) for i, value in enumerate(arguments))
    ctx = Context(Thread(Address("t"), []), None, ThreadIndex(calls, ()), LintOptions(), 0.0)
    expected = [(call, read_arguments(call.arguments)) for call in calls]
    assert ctx.unusual_arguments == [(call, found) for call, found in expected if found.state is not ArgumentsState.OK]


# --------------------------------------------------------------------------- text tests


def _text(words: tuple[str, ...], alphabet: str) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(st.sampled_from(words), st.text(alphabet=alphabet, max_size=4)), max_size=8).map("".join)


_OLD_PATH_OR_FRAME = re.compile(
    r"[/\\\n](?:(?<=[/\\])(?:srv/|opt/|app/|var/|usr/|workspace/|site-packages|dist-packages|node_modules|\.venv"
    r"|Program Files)|(?<=\n)\s*at\s|(?<=\\)n\s*at\s)"
)
_OLD_MORE = re.compile(r"\.\.\.\s+\d+\s+more")
LEAK_WORDS = ("srv/", "opt/", "app/", "var/", "usr/", "workspace/", "site-packages", "dist-packages", "node_modules",
              ".venv", "Program Files", "at", " at ", "\\n", "...", " 3 ", "more", "Traceback (most recent call last)",
              "Exception in thread", "Node.js")


@given(text=_text(LEAK_WORDS, "/\\\n \t\u2003\x0bnat.3e"))
def test_may_leak_is_the_single_regex_it_replaced(text: str) -> None:
    text = "\n" + text
    single = (_OLD_PATH_OR_FRAME.search(text) is not None
              or any(marker in text for marker in ("Traceback (most recent call last)", "Exception in thread", "Node.js"))
              or ("more" in text and _OLD_MORE.search(text) is not None))
    assert internals_leaked._may_leak(text) is single


@given(texts=st.lists(_text(LEAK_WORDS, "/\\\n \t\u2003nat.3e"), max_size=4))
def test_a_leak_test_that_fails_on_a_whole_thread_fails_on_each_output(texts: list[str]) -> None:
    """Why the rule retries, output by output, only the tests that passed on all of a thread's text."""
    whole = "\n".join(["", *texts])
    for test in internals_leaked._TESTS:
        if not test(whole):
            assert not any(test("\n" + text) for text in texts)


SECRET_PIECES = ("sk-", "proj-", "ant-", "AKIA", "ghp_", "gho_", "ghx_", "xoxb-", "xoxz-", "AIza", "eyJ", ".",
                 "-----BEGIN ", "RSA ", "PRIVATE KEY-----", "Bearer ", "bearer ", "BEARER ", "BEAREr ", "\t", "-", "_")


@given(text=st.lists(st.one_of(st.sampled_from(SECRET_PIECES), st.text(alphabet="AIKza0Z9_-", min_size=8, max_size=36)),
                     max_size=6).map("".join))
def test_may_hold_secret_misses_no_secret(text: str) -> None:
    if SECRET.search(text):
        assert may_hold_secret(text)


@pytest.mark.parametrize("secret", [
    "sk-proj-" + "a" * 20, "sk-" + "A" * 16, "AKIA" + "Z" * 16, "ghs_" + "a" * 20, "xoxp-" + "1" * 10, "AIza" + "_" * 30,
    "eyJ" + "a" * 8 + "." + "b" * 8 + "." + "c" * 8, "-----BEGIN EC PRIVATE KEY-----", "Bearer " + "t" * 16,
    "bearer\n" + "t" * 16, "BEARER " + "t" * 16,
])
def test_may_hold_secret_sees_every_kind_of_secret(secret: str) -> None:
    assert SECRET.search(secret) and may_hold_secret(f"x {secret} y")


@given(text=_text(("{", "[", '{"error":', '{"err"', '{"errors" :', '{"kind":', '{"is_error"', '"', ":", " ", "\n", "\u2003",
                   "x"), " \t\n\u2003\x1c{[x:\""))
def test_json_start_and_error_key_tests_are_the_regexes(text: str) -> None:
    rule = error_output_cut_mid_json
    named = rule._named(text)
    assert (named is not None) is (rule._JSON_START.match(text) is not None)
    if named is not None:
        assert named is (rule._ERROR_OBJECT.match(text) is not None)


@given(text=st.text(alphabet=" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2003\u200b\u3000\ufeffa", max_size=6))
def test_blank_text_is_what_strip_leaves_empty(text: str) -> None:
    assert empty_output._blank(text) is (not text.strip())


@given(text=st.text(alphabet="a\xe9\u20ac\U0001f600", max_size=12), limit=st.integers(1, 60))
def test_length_bound_settles_only_outputs_within_the_limit(text: str, limit: int) -> None:
    if 4 * len(text) <= limit:  # what the rule skips without measuring
        assert len(text.encode("utf-8")) <= limit
    assert (oversized_output.utf8_size(text, limit) > limit) is (len(text.encode("utf-8")) > limit)



PART = st.one_of(
    st.fixed_dictionaries({"type": st.one_of(st.sampled_from(["text", "input_text", "output_text", "refusal", "image"]),
                                             st.lists(st.just("text"), max_size=1)),
                           "text": st.one_of(st.text(alphabet="ab \n{[\u00e9\u20ac", max_size=12), st.none(), st.integers())},
                          optional={"annotations": st.just([]), "cache": st.sampled_from(["x", "ephemeral"])}),
    st.just({"type": "input_image", "image_url": "x"}), st.text(max_size=3), st.none(),
)


@given(content=st.lists(PART, max_size=5), limit=st.integers(0, 40))
def test_text_parts_read_as_the_general_walks_read_them(content, limit: int) -> None:
    """The text is output_text's, and the characters bound the UTF-8 size the oversized rule measures."""
    from threadfix.failures.classifier import output_text
    from threadfix.rules.context import _parts_read

    found = _parts_read(content)
    if found is not None:
        text, chars = found
        if len(text) <= limit:
            assert text == output_text(content, limit)
        if 4 * chars <= limit:
            assert oversized_output.utf8_size(content, limit) <= limit
            assert chars == oversized_output._strings(content, len)


def test_text_parts_read_the_common_shape() -> None:
    from threadfix.rules.context import _parts_read

    assert _parts_read([{"type": "input_text", "text": "a"}, {"type": "input_text", "text": ""},
                        {"type": "output_text", "text": "b"}]) == ("a\nb", 33)


OUTPUT_TEXT = st.one_of(st.text(alphabet=" \t\n\x1c\x85\u2003\u3000{[ab\u00e9", max_size=6), st.text(max_size=3),
                        st.lists(st.sampled_from(['{"', '{"err', '{"error"', '{ "', '{"rows', '{"kind":', '"', "}", " x"]),
                                 max_size=3).map("".join))


@given(outputs=st.lists(st.tuples(OUTPUT_TEXT, st.sampled_from([None, True, False]), st.sampled_from([None, "failed"]),
                                  st.booleans()), max_size=8),
       other=st.sampled_from([None, [{"type": "text", "text": " x"}], [{"type": "text", "text": "{" * 70}],
                              [{"type": "text", "text": "a", "cache": "x"}], {"a": 1}, "long", 7, "nothing"]))
def test_the_shared_output_views_are_what_they_say(outputs, other) -> None:
    """Each view the context's one pass over the outputs builds is the set of outputs its docstring says."""
    made = [Output(f"c{i}", "function_call_output", (i, -1), [{"type": "text", "text": text}] if i % 3 == 1 else text,
                   flag, status, mine) for i, (text, flag, status, mine) in enumerate(outputs)]
    if other is not None:  # an output that sends the thread down the loop
        content = {"long": "y" * 100, "nothing": None}.get(other, other) if isinstance(other, str) else other
        made.append(Output("x", "function_call_output", (99, -1), content))
    options = LintOptions(oversized_bytes=12, scan_chars=64)
    ctx = Context(Thread(Address("t"), []), dialects.get("openai-responses"), ThreadIndex((), tuple(made)), options, 0.0)
    from threadfix.failures.classifier import output_text
    from threadfix.rules.context import _parts_read

    texts = [output_text(output.content, options.scan_chars) for output in made]
    assert ctx.texts == texts
    assert [ctx.text(output) for output in made] == texts

    # an output neither one string nor text parts is read closely by both rules
    lead = [text[:1] if isinstance(o.content, str) or _parts_read(o.content) else " " for o, text in zip(made, texts)]
    # an unflagged object led by a key that names no error is no error object: the cut-JSON rule skips it
    result = [(isinstance(o.content, str) or _parts_read(o.content) is not None) and o.is_error is None
              and o.status is None and t.startswith('{"')
              and not t.startswith(error_output_cut_mid_json.ERROR_KEYS, 2) for o, t in zip(made, texts)]
    assert ctx.closer == [o for o, c, r in zip(made, lead, result) if (c in ("", "{", "[") or c.isspace()) and not r]
    assert ctx.blank_led == [o for o, c in zip(made, lead) if c == "" or c.isspace()]
    assert ctx.marked == [o for o in made if o.by_threadfix or o.is_error is not None or o.status is not None]
    def chars(content) -> float:  # as the oversized rule's bound counts them; anything else is measured
        return len(content) if isinstance(content, str) else (_parts_read(content) or (None, float("inf")))[1]

    assert ctx.unsized == [o for o in made if chars(o.content) > options.oversized_bytes // 4]


def test_no_character_past_u3000_is_whitespace() -> None:
    """What the empty rule's set of leading characters rests on."""
    import sys

    assert not any(chr(c).isspace() for c in range(0x3001, sys.maxunicode + 1))


# --------------------------------------------------------------------------- retry storms


TOOL_NAMES = st.one_of(st.sampled_from(["search", "shell", "", None]), st.lists(st.integers(0, 1), max_size=1))


@given(names=st.lists(TOOL_NAMES, max_size=12), wanted=st.integers(1, 5))
def test_the_runs_of_one_tool_are_the_long_groups_groupby_finds(names, wanted: int) -> None:
    from itertools import groupby

    from threadfix.rules.retry_storm import _runs

    calls = tuple(Call(f"c{i}", name, "function_call", (i, -1)) for i, name in enumerate(names))
    groups = [list(group) for _, group in groupby(calls, key=lambda call: call.name)]
    found = _runs(calls, wanted)
    if found is None:  # told only by walking every group
        assert wanted <= 1
    else:
        assert [list(run) for run in found] == [group for group in groups if len(group) >= wanted]


_STORM_OUTPUTS = ('{"error": "rate limited"}', "Error: timed out", "ok", '{"rows": 3}', "Traceback (most recent call "
                  "last):\n  File \"x.py\", line 1\nKeyError: 'q'", "")


@given(calls=st.lists(st.tuples(st.sampled_from(["search", "shell", "read"]), st.sampled_from(_STORM_OUTPUTS)),
                      max_size=10),
       wanted=st.integers(2, 4))
def test_the_retry_storm_check_finds_what_walking_every_group_finds(calls, wanted: int) -> None:
    """Threads of a few tools, failing or not, as Responses items: the same storms with the run check and without."""
    assert _storms(calls, wanted, fast=True) == _storms(calls, wanted, fast=False)


def test_the_retry_storm_check_lets_a_storm_through() -> None:
    calls = [("read", "ok"), *[("search", '{"error": "rate limited"}')] * 3, ("shell", "ok")]
    assert len(_storms(calls, 3, fast=True)) == 1 and _storms(calls, 4, fast=True) == []


def _storms(calls: list[tuple[str, str]], wanted: int, fast: bool) -> list:
    from threadfix.rules import context, retry_storm

    items: list[dict] = [{"type": "message", "role": "user", "content": "go"}]
    for i, (name, text) in enumerate(calls):
        items.append({"type": "function_call", "call_id": f"c{i}", "name": name, "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"c{i}", "output": text})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(context, "FAST", fast)
        found = lint_items(items, "openai-responses", LintOptions(retry_storm=wanted))
    return [f for f in found if f.code == retry_storm.RULE.code]
