"""could_be_failure() is sound: it never rejects a text that classify() with no flag calls a failure.

lint and report may skip every output it rejects, so a wrong "no" would hide a failure. Held to the full
classifier on every text of the corpus (and each with a leading marker or exit code line added), every
case of the table, every output of a benchmark store and text built from the words and patterns the
classifier looks for; and it must reject most ordinary results, or it would save nothing.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st

from tests.failures.test_classify import CASES, JSONISH
from tests.failures.test_quick_paths import HOSTILE_TEXT, MARKER, PIECE
from tests.failures.test_verdict_snapshot import _generated_outputs
from threadfix.failures import classify, could_be_failure
from threadfix.failures.classifier import lone_text

CORPUS = Path(__file__).parent / "corpus" / "corpus.jsonl"
TEXTS = [orjson.loads(line)["text"] for line in CORPUS.read_bytes().splitlines() if line.strip()]


def _assert_sound(content: object) -> None:
    if not could_be_failure(content):
        said = classify(content)
        assert not said.is_error, (repr(content)[:300], said.evidence)


def test_no_corpus_text_it_rejects_is_a_failure() -> None:
    for text in TEXTS:
        _assert_sound(text)
        _assert_sound(text.strip())
        _assert_sound(f"Exit code 2\n{text}")
        _assert_sound(f"{text}\nError: the last line")


def test_no_case_it_rejects_is_a_failure() -> None:
    for case in CASES:
        _assert_sound(case["content"])


def test_no_benchmark_store_output_it_rejects_is_a_failure() -> None:
    outputs = list(_generated_outputs())
    assert outputs
    for content in outputs:
        _assert_sound(content)


@given(HOSTILE_TEXT | JSONISH)
def test_no_hostile_text_it_rejects_is_a_failure(content: object) -> None:
    _assert_sound(content)


@given(st.lists(PIECE, max_size=6).map("".join), MARKER, st.lists(PIECE, max_size=6).map("".join))
def test_a_marker_anywhere_is_never_rejected_when_it_makes_a_failure(before: str, marker: str, after: str) -> None:
    for text in (before + marker + after, marker + after, before + "\n" + marker, marker):
        _assert_sound(text)


def test_it_rejects_most_healthy_texts_and_no_failure() -> None:
    """It saves work only if it rejects results; every corpus error it is shown, it lets through."""
    rows = [orjson.loads(line) for line in CORPUS.read_bytes().splitlines() if line.strip()]
    healthy = [row["text"] for row in rows if row["kind"] == "success" and row["split"] == "dev"]
    rejected = sum(not could_be_failure(text) for text in healthy)
    assert rejected / len(healthy) >= 0.5
    assert all(could_be_failure(row["text"]) for row in rows if row["split"] == "dev" and classify(row["text"]).is_error)
    assert could_be_failure({"error": {"code": 429}}) and could_be_failure(b"Error: x")


# --------------------------------------------------------------------------- a reply of one text part


def _assert_read_as_its_text(text: str, kind: str = "text") -> None:
    part = [{"type": kind, "text": text}]
    alone = lone_text(part)
    if alone is not None:
        assert alone is text
        assert classify(part) == classify(text), repr(text)[:300]


def test_a_lone_text_part_reads_as_its_text_over_the_corpus() -> None:
    taken = 0
    for text in TEXTS:
        for kind in ("text", "input_text", "output_text"):
            _assert_read_as_its_text(text, kind)
        taken += lone_text([{"type": "text", "text": text}]) is not None
    assert taken > len(TEXTS) // 2  # most replies take the shortcut, or it would save nothing


def test_a_lone_text_part_is_taken_only_where_the_list_reads_as_the_text() -> None:
    assert lone_text([{"type": "text", "text": '{"error": {"code": 429}}'}]) is None  # opens as JSON
    assert lone_text([{"type": "text", "text": "x" * 10_000}]) is None  # read by its head and tail
    assert lone_text([{"type": "text", "text": "ok"}, {"type": "text", "text": "ok"}]) is None
    assert lone_text([{"type": "image", "data": "..."}]) is None
    assert lone_text([{"type": "text", "text": "ok"}]) == "ok"


@given(HOSTILE_TEXT | st.text(max_size=300), MARKER, st.sampled_from(["text", "input_text", "output_text", "x"]))
def test_a_lone_text_part_reads_as_its_text_on_made_text(text: str, marker: str, kind: str) -> None:
    _assert_read_as_its_text(text, kind)
    _assert_read_as_its_text(f"Error: {text}", kind)
    _assert_read_as_its_text(f"{marker}{text}", kind)
    _assert_read_as_its_text(f" \n{text}\n{marker}", kind)


DIAGNOSTIC_LIKE = st.tuples(
    st.sampled_from(["tr", "expr", "bzip2", "usage", "Usage", "print(f\"{x}", "name", "x-y_1", "Tool", "a" * 31]),
    st.sampled_from([": ", ":", ": : ", ":  "]),
    st.sampled_from(["missing operand", "notes.txt: bad magic number", "division by zero", "ASCII text",
                     "error: argument --count: invalid int value", "unknown predicate `-x'", "ok"]),
    st.sampled_from(["", "\nTry 'tr --help' for more information.", "\n\ntool: error: bad", "\nversion: 2",
                     "\n" + "x " * 250, "\n" * 5 + "y", " " * 70]),
).map("".join)


@given(DIAGNOSTIC_LIKE, st.sampled_from(["", "\n", " " * 65, "z" * 390]))
def test_no_diagnostic_it_rejects_is_a_failure(text: str, pad: str) -> None:
    """The pre-check passes over a first line only where no diagnostic reading could take it."""
    for content in (text, text + pad, pad + text, f"usage: tool [-h]\n{text}"):
        _assert_sound(content)


def test_a_usage_error_whose_usage_line_has_two_spaces_is_not_rejected() -> None:
    """The usage line is told by its start alone, as the diagnostic reading tells it: with two spaces after
    "usage:" no program's line matches, and the pre-check used to reject this usage error."""
    text = "usage:  tool [-h] [--count COUNT]\ntool: error: argument --count: invalid int value: 'many'"
    assert classify(text).kind.value == "invalid_arguments"
    assert could_be_failure(text)
    _assert_sound(text)
