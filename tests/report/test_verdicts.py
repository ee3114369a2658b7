"""Classifications cached by text change no finding and no number: the cached way against classify every time.

threadfix.verdicts keeps the answer of a short text (by text, flag and status) for lint's rules and report. The
answers must be classify's, whatever came before (the same text under another flag, a full cache), and lint's
findings and report's numbers must be those of a run that classifies every output afresh.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import benchmark_store
from tests.failures.test_classify import CASES, JSONISH
from tests.failures.test_quick_paths import HOSTILE_TEXT
from threadfix import dialects, verdicts
from threadfix.batch import scan
from threadfix.failures import classifier
from threadfix.failures.classifier import classify, classify_parsed, classify_screened, could_be_failure
from threadfix.lint import LintOptions, LintRun
from threadfix.render.report import JsonRenderer, View
from threadfix.report import build_report

LINT_CASES = Path(__file__).resolve().parents[1] / "lint" / "cases"
CORPUS = Path(__file__).resolve().parents[1] / "failures" / "corpus" / "corpus.jsonl"
WIRES = [(None, None), (True, None), (False, None), (None, "failed"), (None, "completed"), (None, "cancelled")]


def _fresh(monkeypatch) -> None:
    """Nothing remembered: no answer cached, no text known as a result."""
    monkeypatch.setattr(verdicts, "_cache", {})
    monkeypatch.setattr(verdicts, "_results", set())


def _slow(content, is_error, status):
    found = classify(content, is_error=is_error, status=status)
    return found if found.is_error else None


def _case_outputs() -> list[tuple[object, bool | None, str | None]]:
    """Every output of the lint case files (as their dialect reads it) and every classifier case."""
    found = [(case["content"], case.get("is_error"), case.get("status")) for case in CASES]
    for path in sorted(LINT_CASES.glob("*.json")):
        for case in orjson.loads(path.read_bytes())["cases"]:
            dialect = dialects.get(case["dialect"]) if "dialect" in case else dialects.sniff(case["items"])
            if dialect is not None:
                found += [(o.content, o.is_error, o.status) for o in dialect.index(case["items"]).outputs]
    return found


def test_cached_answers_are_classifys_on_the_case_files_under_every_wire(monkeypatch) -> None:
    _fresh(monkeypatch)
    outputs = _case_outputs()
    assert len(outputs) > 150
    # each text under every flag in turn: an answer cached under one flag must not be given under another
    asked = [(content, *wire) for content, *_ in outputs for wire in WIRES] + outputs
    for content, is_error, status in asked * 2:  # the second time from the cache
        assert verdicts.failure_of(content, is_error, status) == _slow(content, is_error, status), (content, is_error)
    assert verdicts._cache, "short texts are cached"


def _spy(monkeypatch, calls: list[object]) -> None:
    """Record every text verdicts has classified, by any entry: classify, classify_screened for a text the screen
    passed, or classify_parsed for a text opening with "{" (recorded as the object it parsed to, or as the text when it
    is not JSON)."""
    monkeypatch.setattr(verdicts, "classify", lambda content, **kw: calls.append(content) or classify(content, **kw))
    monkeypatch.setattr(verdicts, "classify_screened",
                        lambda content, screened: calls.append(content) or classify_screened(content, screened))
    monkeypatch.setattr(verdicts, "classify_parsed",
                        lambda text, data: calls.append(text if data is None else data) or classify_parsed(text, data))


def test_a_repeated_text_is_classified_once_and_a_long_one_every_time(monkeypatch) -> None:
    calls: list[object] = []
    _fresh(monkeypatch)
    _spy(monkeypatch, calls)
    long = "Error: " + "x" * verdicts.CACHE_CHARS
    for _ in range(3):
        assert verdicts.failure_of("Error: rate limit exceeded").kind.value == "rate_limited"
        assert verdicts.failure_of("ok") is None
        assert verdicts.failure_of("ok", True, None) is not None  # flagged: its own key
        verdicts.failure_of(long)
    assert calls.count("Error: rate limit exceeded") == 1 and calls.count(long) == 3
    # a plain result the pre-check rejects is answered without classify and kept out of the cache; flagged, once
    assert calls.count("ok") == 1 and "ok" not in verdicts._cache


def test_a_plain_result_is_answered_by_the_pre_check_alone(monkeypatch) -> None:
    """Texts could_be_failure rejects never reach classify nor the cache, whatever their length; the rest do."""
    calls: list[object] = []
    _fresh(monkeypatch)
    _spy(monkeypatch, calls)
    plain = ["Plan updated", "Success. Updated the following files:\nM src/app.py\n", "y" * (verdicts.CACHE_CHARS * 2)]
    assert not any(map(could_be_failure, plain))
    assert [verdicts.failure_of(text) for text in plain] == [None, None, None]
    assert calls == [] and not verdicts._cache
    assert verdicts.failure_of('{"error": "boom"}') is not None and calls == [{"error": "boom"}]  # parsed once


def test_a_result_that_comes_back_is_not_read_again(monkeypatch) -> None:
    """A short text answered at once as a result (by the screen, or as a plain or exited-0 object) is screened or
    parsed once however often it comes back, and kept out of the cache of answers; a long one is read every time; the
    same text under a flag or a status is still classified under it."""
    _fresh(monkeypatch)
    read: list[str] = []
    monkeypatch.setattr(verdicts, "screen", lambda text: read.append(text) or classifier.screen(text))
    monkeypatch.setattr(verdicts, "_object", lambda text: read.append(text) or orjson.loads(text))
    results = ["Plan updated", '{"results": [{"title": "a"}]}', '{"output": "x", "metadata": {"exit_code": 0}}']
    long = "y" * (verdicts.RESULT_CHARS + 1)
    for _ in range(3):
        assert [verdicts.failure_of(text) for text in (*results, long)] == [None] * 4
        assert verdicts.failure_of([{"type": "text", "text": "Plan updated"}]) is None  # read as its text alone
    # an exited-0 shell result is parsed, then its output screened as the text it is ("x"), once
    assert read == [*results, "x", long, long, long] and not verdicts._cache
    assert verdicts.failure_of("Plan updated", True, None) == _slow("Plan updated", True, None) is not None
    assert verdicts.failure_of(results[1], None, "failed") == _slow(results[1], None, "failed") is not None


def test_the_results_remembered_stay_bounded(monkeypatch) -> None:
    _fresh(monkeypatch)
    monkeypatch.setattr(verdicts, "CACHE_ENTRIES", 50)
    for n in range(175):
        assert verdicts.failure_of(f"row {n} written") is None
        assert len(verdicts._results) <= 50
    assert verdicts._results


def test_every_corpus_text_asked_again_is_answered_as_classify_answers_it(monkeypatch) -> None:
    """The whole failure corpus, each text asked with no flag, under each wire, then with no flag again (answered
    from what was remembered): classify's answer every time."""
    _fresh(monkeypatch)
    texts = [orjson.loads(line)["text"] for line in CORPUS.read_bytes().splitlines() if line.strip()]
    assert len(texts) > 4000
    remembered = 0
    for text in texts:
        plain = _slow(text, None, None)
        assert verdicts.failure_of(text) == plain, text
        for wire in WIRES[1:]:
            assert verdicts.failure_of(text, *wire) == _slow(text, *wire), (text, wire)
        remembered += text in verdicts._results
        assert verdicts.failure_of(text) == plain, text
    assert remembered > 500


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(HOSTILE_TEXT | JSONISH.map(json.dumps), min_size=1, max_size=4),
       wire=st.sampled_from(WIRES))
def test_made_texts_asked_again_are_answered_as_classify_answers_them(texts, wire) -> None:
    """Texts built from the classifier's own markers and made JSON, asked twice around the same texts under a wire:
    a text remembered as a result is one classify calls a result."""
    verdicts._cache.clear()
    verdicts._results.clear()
    for text in texts * 2:
        assert verdicts.failure_of(text) == _slow(text, None, None), text
        assert verdicts.failure_of(text, *wire) == _slow(text, *wire), (text, wire)


def test_the_cache_stays_bounded(monkeypatch) -> None:
    _fresh(monkeypatch)
    monkeypatch.setattr(verdicts, "CACHE_ENTRIES", 50)
    for n in range(175):
        verdicts.failure_of(f"line {n}")
        assert len(verdicts._cache) <= 50


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> list[Path]:
    """Benchmark threads (realistic failures, repeated outputs) in every dialect the generator writes."""
    generate = benchmark_store.generator()
    data = tmp_path_factory.mktemp("verdict-store")
    generate.generate(data, threads=300, seed=3, workers=1)
    generate.write_dialects(data, generate.DIALECTS, folder_files=0)
    return [generate.dialect_jsonl(data, name) for name in generate.DIALECTS]


def _both_ways(monkeypatch, run):
    results = []
    for fast in (True, False):
        monkeypatch.setattr(verdicts, "FAST", fast)
        _fresh(monkeypatch)
        results.append(run())
    return results


def test_lint_finds_the_same_with_and_without_the_cache(monkeypatch, stores) -> None:
    for store in stores:
        def run() -> list:
            return [(str(r.address), r.findings) for r in LintRun([str(store)], LintOptions(now=2e9), jobs=1).results()]

        fast, slow = _both_ways(monkeypatch, run)
        assert fast == slow and len(fast) == 300
        if store.name != "ai-sdk.jsonl":  # (its tool parts say output-available: the tool's own verdict, success)
            assert any(f.code in ("TF201", "TF204", "TF206") for _, found in fast for f in found), store.name


def test_report_counts_the_same_with_and_without_the_cache(monkeypatch, stores) -> None:
    for store in stores:
        def run() -> bytes:
            return JsonRenderer(View(top=1000)).render(build_report(scan([str(store)]), keep=1000))

        fast, slow = _both_ways(monkeypatch, run)
        assert fast == slow
        assert orjson.loads(fast)["totals"]["error_outputs"] > 0


# --------------------------------------------------------------------------- JSON objects answered at once


#: keys a reader of error shapes looks at, keys none does, and the values that make an object one of theirs
OBJECT_KEYS = st.sampled_from(sorted(classifier._READ_KEYS) + ["results", "location", "title", "object", "type", "rows",
                                                                "instance", "items", "a"])
TYPE_VALUES = st.sampled_from(["rate_limit_error", "error", "execution-denied", "about:blank", "https://x.io/p", "text",
                               "output_text", "json", "error-text", "result"])
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-3, 600), st.floats(allow_nan=False, allow_infinity=False),
                   TYPE_VALUES, st.sampled_from(["Error: boom", "rate limit exceeded", "ok", "404 Not Found", "", "x" * 40]))
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(OBJECT_KEYS, inner, max_size=3),
                      max_leaves=8)


def _written(value: object, how: str) -> str:
    if how == "orjson":
        return orjson.dumps(value).decode()
    if how == "indented":
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    if how == "long":  # past the length the classifier parses whole without looking at its head
        return orjson.dumps({"pad": "p" * classifier.PARSE_LIMIT, **value}).decode()
    return orjson.dumps(value).decode()[:-1]  # cut: not JSON


@settings(max_examples=400, deadline=None)
@given(value=st.dictionaries(OBJECT_KEYS, VALUES, max_size=4), how=st.sampled_from(["orjson", "indented", "long", "cut"]),
       wire=st.sampled_from(WIRES))
def test_a_json_object_answered_at_once_is_answered_as_classify_answers_it(value, how, wire) -> None:
    """Objects of keys the readers of error shapes look at and keys none does, nested, whole, indented, cut or past
    the parse limit, under every wire: failure_of's answer is classify's."""
    verdicts._cache.clear()
    verdicts._results.clear()
    text = _written(value, how)
    assert verdicts.failure_of(text, *wire) == _slow(text, *wire)


def test_a_plain_json_object_is_answered_without_the_classifier(monkeypatch) -> None:
    calls: list[object] = []
    _fresh(monkeypatch)
    _spy(monkeypatch, calls)
    plain = ['{"results": [{"title": "a", "url": "https://x.io"}]}', '{"location": "Zürich", "temperature": 21.5}']
    assert all(map(could_be_failure, plain))  # the screen passes them: classify must parse them to tell
    assert [verdicts.failure_of(text) for text in plain] == [None, None]
    assert calls == [] and not verdicts._cache
    wrapped = '{"output": "Traceback (most recent call last):\\nValueError: bad"}'
    assert verdicts.failure_of(wrapped) is not None and calls == [orjson.loads(wrapped)]
    cut = '{"output": "Traceback (most recent call last):\\nValueError: bad"'  # not JSON: read as text, parsed once
    assert verdicts.failure_of(cut) == _slow(cut, None, None) and calls[1:] == [cut]


# --------------------------------------------------------------------------- shell results that exited 0



def test_the_exit_zero_pre_check_answers_every_text_of_the_corpus_as_classify(monkeypatch) -> None:
    """Every corpus text is answered by failure_of as classify answers it; the pre-check reads many of its shell
    results by their output alone, and of those some are failures (a pipe whose last command exited 0)."""
    _fresh(monkeypatch)
    texts = [orjson.loads(line)["text"] for line in CORPUS.read_bytes().splitlines() if line.strip()]
    assert len(texts) > 4000
    taken = taken_failures = failures = 0
    for text in texts:
        found = classify(text)
        failures += found.is_error
        parsed = verdicts._object(text) if text[:1] == "{" and len(text) <= classifier.PARSE_LIMIT else None
        if parsed is not None and (output := classifier.exited_zero_output(parsed)) is not None:
            assert classify(output) == found, text
            taken += 1
            taken_failures += found.is_error
        assert verdicts.failure_of(text) == (found if found.is_error else None), text
    assert taken > 100 and taken_failures > 10 and failures > 1000


EXIT_VALUES = st.sampled_from([0, 1, 2, 127, -1, "0", "1", True, False, None, 0.0, [], {}])
METADATA_KEYS = st.sampled_from(["exit_code", "exitCode", "returncode", "exit_status", "timed_out", "timedOut",
                                 "duration_seconds", "error", "status"])
#: metadata that gives an exit code (0 half the time), before or after other keys
METADATA = st.tuples(st.just(0) | EXIT_VALUES, st.dictionaries(METADATA_KEYS, EXIT_VALUES | st.booleans(), max_size=3),
                     st.booleans()).map(lambda m: {"exit_code": m[0], **m[1]} if m[2] else {**m[1], "exit_code": m[0]})
SHELL_OUTPUTS = st.sampled_from(["", "ok", "Traceback (most recent call last):\nValueError: bad", "Error: rate limit exceeded",
                                 "exit code 1", "Killed", {"error": "boom"}, ["Error: x"], None, 3])
#: a further top-level key: one that names an error or an exit most of the time
EXTRA_KEYS = st.sampled_from(["error", "timed_out", "exit_code", "aborted", "success", "kind", "results"]) | OBJECT_KEYS


@settings(max_examples=400, deadline=None)
@given(metadata=METADATA | st.dictionaries(METADATA_KEYS, EXIT_VALUES, max_size=4), output=SHELL_OUTPUTS,
       extra=st.dictionaries(EXTRA_KEYS, LEAVES | SHELL_OUTPUTS, max_size=1), how=st.sampled_from(["orjson", "indented", "cut"]),
       wire=st.sampled_from(WIRES))
def test_a_shell_result_answered_at_once_is_answered_as_classify_answers_it(metadata, output, extra, how, wire) -> None:
    """Shell results shaped as Codex writes them, with every exit value, a timeout flag, other exit keys, an output
    that reads as a failure, a further key, written whole, indented or cut, under every wire: classify's answer."""
    verdicts._cache.clear()
    verdicts._results.clear()
    text = _written({"output": output, "metadata": metadata, **extra}, how)
    assert verdicts.failure_of(text, *wire) == _slow(text, *wire)


#: metadata around an exit code of 0 and beside it, outputs, and further top-level keys, every one with every other
EXIT_METADATA = [{"exit_code": 0}, {"exit_code": 0, "duration_seconds": 0.5}, {"duration_seconds": 0.5, "exit_code": 0},
                 {"exit_code": 0, "timed_out": True}, {"timedOut": True, "exit_code": 0}, {"exit_code": 0, "timed_out": False},
                 {"exit_code": "0"}, {"exit_code": False}, {"exit_code": 0.0}, {"exit_code": 1}, {"exitCode": 0},
                 {"returncode": 3, "exit_code": 0}, {"exit_code": 0, "error": "boom"}, {}, None, "exit_code: 0"]
EXIT_OUTPUTS = ["", "ok", "Traceback (most recent call last):\nValueError: bad", "Error: rate limit exceeded", None,
                {"error": {"code": 429}}]
EXIT_EXTRAS = [{}, {"error": "boom"}, {"error": 1}, {"error": None}, {"timed_out": True}, {"exit_code": 2},
               {"aborted": True}, {"success": False}, {"kind": "timeout"}, {"results": []}]


def test_every_shell_result_shape_is_answered_as_classify_answers_it(monkeypatch) -> None:
    """The pre-check reads an exit code of 0 as its output alone only where classify does: each metadata, output
    and further key above, with each of the others, with no flag and no status (where the pre-check is asked)."""
    _fresh(monkeypatch)
    taken = 0
    for metadata in EXIT_METADATA:
        for output in EXIT_OUTPUTS:
            for extra in EXIT_EXTRAS:
                text = orjson.dumps({"output": output, "metadata": metadata, **extra}).decode()
                assert verdicts.failure_of(text) == _slow(text, None, None), text
                taken += classifier.shell_result_exited_zero(orjson.loads(text))
    assert taken >= 3 * len(EXIT_OUTPUTS)


def test_a_shell_result_that_exited_0_is_answered_as_its_output_alone(monkeypatch) -> None:
    """Exit 0 says nothing either way (a pipe's status is its last command's): the output's words decide, screened
    and cached as that text, the object never classified; a result that comes back is answered at once."""
    calls: list[object] = []
    _fresh(monkeypatch)
    _spy(monkeypatch, calls)
    output = "Traceback (most recent call last):\nValueError: bad"
    exited_0 = orjson.dumps({"output": output, "metadata": {"exit_code": 0}}).decode()
    assert verdicts.failure_of(exited_0) == _slow(exited_0, None, None) == _slow(output, None, None) is not None
    assert calls == [output] and output in verdicts._cache  # the output classified as text, not the object
    assert verdicts.failure_of(orjson.dumps({"output": output, "metadata": {"exit_code": 0, "duration_seconds": 1}})
                               .decode()) is not None and calls == [output]  # the same output: from the cache
    healthy = '{"output": "3 files changed", "metadata": {"exit_code": 0}}'
    assert verdicts.failure_of(healthy) is None and calls == [output] and healthy in verdicts._results
    timed_out = '{"output": "", "metadata": {"exit_code": 0, "timed_out": true}}'
    assert verdicts.failure_of(timed_out).kind.value == "timeout" and calls == [output, orjson.loads(timed_out)]
