"""classify()'s shortcuts change no result: each is compared with the full reading it stands in for.

The shortcuts only ever answer "surely nothing here": ``_unframed`` (text that neither presents itself
as a failure nor states an exit code), ``_unread`` (an object none of whose keys an error reader looks
at), ``_no_exit_word`` (a line without the words an exit code needs) and ``_no_stated_word`` (a first line
without the words a stated failure needs). Turned off, every output takes
the full path. Both ways must give the same Classification, field for field: on the table of real
outputs, on text built from the words and patterns the shortcuts look for (in every case, with the
characters IGNORECASE folds onto ASCII, odd whitespace, at every position and past every window bound),
on nested structures, and on every output of a benchmark store.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import astuple

from tests import benchmark_store
from tests.failures.test_classify import CASES, FLAGS, JSONISH, STATUSES
from threadfix.dialects.openai_responses import OpenAIResponses
from threadfix.failures import classifier as module
from threadfix.failures.classifier import classify

SHORTCUTS = ("_unframed", "_unread", "_no_exit_word", "_no_stated_word", "_no_error_line")
WIRES = [(None, None), (None, "completed"), (False, None), (True, None), (None, "failed"), (None, "cancelled")]


def _assert_same_all(cases: list[tuple[object, bool | None, str | None]]) -> None:
    """Each (content, is_error, status) classified as it is, then with every shortcut answering "look closer"."""
    quick = [astuple(classify(content, is_error=flag, status=status)) for content, flag, status in cases]
    with pytest.MonkeyPatch.context() as patch:
        for name in SHORTCUTS:
            patch.setattr(module, name, lambda *_: False)
        full = [astuple(classify(content, is_error=flag, status=status)) for content, flag, status in cases]
    for case, fast, slow in zip(cases, quick, full):
        assert fast == slow, repr(case)[:300]


def _assert_same(content: object, is_error: bool | None = None, status: str | None = None) -> None:
    _assert_same_all([(content, is_error, status)])


# --------------------------------------------------------------------------------------------------
# Text built from what the shortcuts look for.


def _source(name: str) -> re.Pattern[str]:
    lazy = getattr(module, name)
    return re.compile(lazy.source, lazy.flags)


FRAMING_PATTERNS = ("_ERROR_START", "_PY_EXCEPTION_LINE", "_FRAME_END", "_PROCESS_DEATH", "_EXIT_CODE")
PHRASES = [
    "Error:", "ERROR", "error occurred", "An unexpected error has occurred", "Traceback (most recent call last):",
    "KeyError: 'id'", "SystemExit", "StopIteration", "pkg.mod.ReadTimeout: x", "x.timeout: y", "TimeoutError",
    "\tat com.x.Y(Y.java:12)", "    at f (/a/b.js:1:2)", "... 12 more", "Node.js v18.0.0", "Exit code: 3",
    "exit status 0", "exited with code 137", "returncode=2", "return code: 1", "make: *** [all] Error 2",
    "make[1]: *** Error 1", "HTTP/1.1 503", "HTTP 429", "404 Not Found", "500, message=", "curl: (7) x",
    "bash: foo: command not found", "/bin/sh: 1: x: not found", "/usr/bin/zsh: line 3: x", "npm ERR! x",
    "Killed", "Segmentation fault (core dumped)", "Aborted", "bus error", "<error>", "<tool_use_error>",
    "[ERROR]", "[fatal]", "fatal:", "panic:", "timed out", "timeout", "Timeout:", "Cancelled.", "aborted by user",
    "Uncaught", "Unhandled rejection", 'Exception in thread "main" ', "Caused by: java.io.IOException: x",
    "retry after 3s", "429 Too Many Requests", "permission denied", "No such file", "tool failed", "a error occurred",
    "ok", "done", "Success.", "return self", "make sure", "exit", "at", "more", "0", "137", "1",
    *module._START_WORDS, *module._NAME_WORDS, *module._DEATH_WORDS, *module._EXIT_WORDS,
    "Tool 'x' not found", "Usage limit reached", "You exceeded your current quota", "can't", "couldn't",
    "rate-limited", "time-out", "not valid JSON", "truncated because it reached max_tokens", "0 failed",
    "If the request times out", "An error raised", "API error for x", "\nERROR: x", "\nfatal: y",
    *sorted(token.decode() for token in module._STATED_TOKENS),
]
# What IGNORECASE folds onto "i", "s" and "k" besides their own cases.
TWINS = {"i": "\u0130\u0131", "s": "\u017f", "k": "\u212a"}
SPACES = [" ", "  ", "\t", "\n", "\n\n", "\r\n", "\xa0", "\u2028", "\x0b", "\x1c", "\u3000", "\x85", ""]


@st.composite
def _respelt(draw: st.DrawFn, phrase: str) -> str:
    """``phrase`` with some letters in the other case or swapped for a character IGNORECASE takes for them."""
    chars = list(phrase)
    for index in draw(st.lists(st.integers(0, max(len(chars) - 1, 0)), max_size=4)):
        if not chars:
            break
        char = chars[index]
        twins = TWINS.get(char.lower(), "")
        chars[index] = draw(st.sampled_from([char.swapcase(), *twins])) if char.isalpha() else char
    return "".join(chars)


def _pattern_matches(name: str) -> st.SearchStrategy[str]:
    return st.from_regex(_source(name), fullmatch=True)


MARKER = st.sampled_from(PHRASES).flatmap(_respelt) | st.sampled_from(FRAMING_PATTERNS).flatmap(_pattern_matches)
FILLER = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30) | st.text(
    "abcdefghijklmnopqrstuvwxyz _.:/()[]{}\"'0123456789", max_size=40
)
# Padding moves what follows past the bounds the reading has: 40, 51 and 160 characters on a line, the
# 400-character lines, the 2 KB tail and the 4 KB head.
PADDING = st.sampled_from([10, 35, 45, 150, 170, 390, 410, 2040, 2060, 4090, 4100, 6200]).map(lambda n: "x" * n)
PIECE = MARKER | FILLER | st.sampled_from(SPACES) | PADDING
HOSTILE_TEXT = st.lists(PIECE, max_size=10).map("".join)


@given(HOSTILE_TEXT, FLAGS, STATUSES)
def test_hostile_text_reads_the_same_both_ways(text: str, is_error: bool | None, status: str | None) -> None:
    _assert_same(text, is_error, status)


@given(st.lists(PIECE, max_size=6).map("".join), MARKER, st.lists(PIECE, max_size=6).map("".join))
def test_a_marker_on_either_line_reads_the_same_both_ways(before: str, marker: str, after: str) -> None:
    texts = (marker + after, before + marker, before + "\n" + marker, marker + "\n" + after,
             before + "\n" + marker + "\n" + after)
    _assert_same_all([(text, None, None) for text in texts])


def _framed(text: str) -> bool:
    """What the full reading of unflagged text looks at before calling it a plain result."""
    first = module._first_line(text[: module.HEAD_CHARS])
    last = module._last_line(text)
    stripped = last.strip()
    exit_code = module._exit_code(first)
    if exit_code is None:
        exit_code = module._exit_code(stripped)
    return bool(
        exit_code is not None
        or _source("_PY_EXCEPTION_LINE").match(stripped)
        or _source("_ERROR_START").match(first)
        or _source("_FRAME_END").match(last)
        or _source("_PROCESS_DEATH").match(stripped)
    )


def _assert_unframed_only_if_so(text: str) -> None:
    """Stronger than the results agreeing: no framing pattern fires where _unframed said none could."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "_no_exit_word", lambda *_: False)
        framed = _framed(text)
    if framed:
        assert not module._unframed(text), repr(text)[:300]


@given(HOSTILE_TEXT)
def test_unframed_never_passes_a_framed_text(text: str) -> None:
    _assert_unframed_only_if_so(text)


def _syntax(source: str):
    """(index, character, depth) of each ``(``, ``)`` and ``|`` of a pattern outside escapes and classes."""
    depth, index, in_class = 0, 0, False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += 1 if source[index + 1 : index + 2] == "]" else 2 if source[index + 1 : index + 3] == "^]" else 0
        elif char in "()|":
            depth -= char == ")"
            yield index, char, depth
            depth += char == "("
        index += 1


def _top_level(source: str) -> list[str]:
    """``source`` cut at each ``|`` outside groups and classes."""
    cuts = [index for index, char, depth in _syntax(source) if char == "|" and depth == 0]
    return [source[start + 1 : end] for start, end in zip([-1, *cuts], [*cuts, len(source)])]


def _alternatives(source: str) -> list[str]:
    r"""Each alternative of a pattern on its own, a group that holds a whole alternative opened up (``(?:a|b)``
    gives ``(?:a)`` and ``(?:b)``, ``(?i:a|b)\b`` gives ``(?i:a)\b`` and ``(?i:b)\b``)."""
    found = []
    for part in _top_level(source):
        group = re.fullmatch(r"(\s*)\(\?(i?):(.*)\)(\\b)?\s*", part, re.DOTALL)
        if group is not None:
            closes = [index for index, char, depth in _syntax(part) if char == ")" and depth == 0]
            whole = closes == [group.end(3)]  # the group opened first closes last
            inner = group.group(3)
            if whole and len(_top_level(inner)) > 1:
                found += [f"(?{group.group(2)}:{piece}){group.group(4) or ''}" for piece in _alternatives(inner)]
                continue
        found.append(part)
    return found


FRAMING_ALTERNATIVES = [
    (name, alternative) for name in FRAMING_PATTERNS for alternative in _alternatives(getattr(module, name).source)
]


def _twinned(text: str) -> list[str]:
    """``text`` with every i, s or k that has one replaced by a character IGNORECASE takes for it."""
    spellings = (re.sub(letter, twin, text, flags=re.IGNORECASE) for letter, twins in TWINS.items() for twin in twins)
    return [text, *spellings]


@pytest.mark.parametrize(("name", "alternative"), FRAMING_ALTERNATIVES,
                         ids=[f"{name}-{i}" for i, (name, _) in enumerate(FRAMING_ALTERNATIVES)])
@settings(max_examples=20, suppress_health_check=[HealthCheck.filter_too_much])  # "$" then "\b" filters
@given(data=st.data(), filler=FILLER)
def test_every_alternative_of_a_framing_pattern_reaches_the_full_path(
    name: str, alternative: str, data: st.DataObject, filler: str
) -> None:
    """Each alternative on its own, so every one is drawn, in every spelling IGNORECASE accepts."""
    match = data.draw(st.from_regex(re.compile(alternative, getattr(module, name).flags), fullmatch=True))
    # On its own line, after a first line, before a last one, then on lines too long for an exit code with
    # what it starts with pushed past where exit codes are looked for (a name keeps matching).
    placed = (("", ""), (filler + "\n  ", ""), ("", "\n" + filler), ("", " " + "y" * 200), ("x" * 60, " " + "y" * 200))
    texts = [before + spelt + after for spelt in _twinned(match) for before, after in placed]
    for text in texts:
        _assert_unframed_only_if_so(text)
    _assert_same_all([(text, None, None) for text in texts])


@given(st.lists(PIECE, max_size=4).map("".join), st.sampled_from(["", *SPACES]), _pattern_matches("_EXIT_CODE"))
def test_no_exit_word_hides_no_exit_code(prefix: str, space: str, match: str) -> None:
    line = (prefix + space + match)[: module._LINE_CHARS]
    quick = module._exit_code(line)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "_no_exit_word", lambda *_: False)
        assert module._exit_code(line) == quick


@given(HOSTILE_TEXT | st.sampled_from(SPACES).flatmap(lambda space: HOSTILE_TEXT.map(lambda t: space * 50 + t)))
def test_first_line_is_what_its_pattern_takes(text: str) -> None:
    match = _source("_FIRST_LINE").match(text, 0, module.HEAD_CHARS)
    assert module._first_line(text) == (match.group(1).rstrip() if match else "")


# --------------------------------------------------------------------------------------------------
# Structures.

READ_KEYS = sorted(module._READ_KEYS | {"type", "Timeout", "custom", "Custom", "loc", "msg", "code", "exit_code"})
LEAVES = (
    st.none() | st.booleans() | st.sampled_from([0, 1, 2, 137, 429, 503, -32601, "0", "1", "error", "fail", "failed",
                                                 "rate_limited", "timeout", "text", "json", "error-text",
                                                 "execution-denied", "tool_error", "ok", "threadfix"])
    | HOSTILE_TEXT
)
STRUCTURES = st.recursive(
    LEAVES,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(READ_KEYS) | st.text(max_size=8), children, max_size=5),
    max_leaves=20,
)


def _shapes(content: Any) -> list[object]:
    """The content as stored directly, as a JSON string, and as a text content part."""
    shapes = [content]
    try:
        text = orjson.dumps(content).decode()
    except (TypeError, orjson.JSONEncodeError):
        return shapes
    return [*shapes, text, [{"type": "text", "text": text}], [{"type": "input_text", "text": text}, "more"]]


@given(STRUCTURES | JSONISH, FLAGS, STATUSES)
def test_structures_read_the_same_both_ways(content: Any, is_error: bool | None, status: str | None) -> None:
    _assert_same_all([(shape, is_error, status) for shape in _shapes(content)])


@given(st.dictionaries(st.sampled_from(READ_KEYS), LEAVES, min_size=1, max_size=3), HOSTILE_TEXT)
def test_an_envelope_around_hostile_text_reads_the_same_both_ways(fields: dict, text: str) -> None:
    contents = ({**fields, "output": text}, {"output": text, "metadata": fields}, {"content": [text]})
    _assert_same_all([(shape, None, None) for content in contents for shape in _shapes(content)])


def _module_words() -> list[str]:
    """Every short name-like string the module's source holds: a superset of the keys its readers look up,
    found without trusting the list the shortcut keeps."""
    tree = ast.parse(Path(module.__file__).read_text("utf-8"))
    words = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    return sorted(word for word in words if re.fullmatch(r"[A-Za-z_$][\w$-]{0,30}", word))


KEY_VALUES = [True, False, None, 1, 429, "error", "fail", "text", "execution-denied", "threadfix", {"exit_code": 2},
              {"timed_out": True}, {"code": "x", "message": "slow down"}, [{"message": "m", "loc": ["a"]}],
              "Error: connection refused"]


@pytest.mark.parametrize("key", _module_words())
def test_every_key_the_module_names_reads_the_same_both_ways(key: str) -> None:
    """Each name alone, beside a plain key, and beside the keys that make a shape: a key a reader looks up but
    the shortcut does not know fails here whatever the shortcut's own list says."""
    contents = [content for value in KEY_VALUES
                for content in ({key: value}, {key: value, "rows": 1}, {key: value, "kind": "timeout", "detail": "d"},
                                {"metadata": {key: value}, "rows": 1})]
    _assert_same_all([(content, flag, None) for content in contents for flag in (None, False)])


# --------------------------------------------------------------------------------------------------
# Real outputs.


@pytest.mark.parametrize("case", CASES, ids=[f"{i:03}" for i in range(len(CASES))])
def test_table_reads_the_same_both_ways(case: dict[str, Any]) -> None:
    _assert_same_all([(case["content"], flag, status) for flag, status in [(case["is_error"], case["status"]), *WIRES]])


def test_benchmark_store_reads_the_same_both_ways() -> None:
    """Every output of ~6 MB of benchmark threads (results that mention errors, realistic failures), as the
    Responses dialect hands them to classify, and under other wire verdicts."""
    generator = benchmark_store.generator()
    batch = generator.make_batch(generator.DEFAULT_SEED, 0, 250)
    dialect = OpenAIResponses()
    outputs = [output for line in batch.jsonl.splitlines()
               for output in dialect.index(orjson.loads(line)["items"]).outputs]
    assert len(outputs) > 2000
    _assert_same_all([(output.content, output.is_error, output.status) for output in outputs])
    _assert_same_all([(output.content, flag, status) for output in outputs for flag, status in WIRES[1:4]])
    kinds = {classify(output.content, is_error=output.is_error, status=output.status).kind for output in outputs}
    assert len(kinds) >= 8  # the store holds many kinds of failure, not just results


# --------------------------------------------------------------------------------------------------
# Import.


def test_import_compiles_none_of_the_pattern_tables() -> None:
    """The patterns compile on first use: importing the module compiles only the few it needs to build its
    tables (a spy on re.compile counts the module's own calls, and those of the lazy patterns it holds)."""
    probe = """
import re, sys
calls = []
compile_ = re.compile
def spy(pattern, flags=0):
    if sys._getframe(1).f_globals.get("__name__") in ("threadfix.failures.classifier", "threadfix.patterns"):
        calls.append(pattern)
    return compile_(pattern, flags)
re.compile = spy
import threadfix.failures.classifier as module
print(len(calls))
module.classify("Traceback (most recent call last):\\nValueError: x")
print(len(calls))
"""
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    at_import, after_use = map(int, result.stdout.split())
    assert at_import <= 3  # the code normaliser and the two patterns that take literals out of signals
    assert after_use > at_import  # and the spy does see them when they are used


# --------------------------------------------------------------------------------------------------
# The stated-failure gate.

STATED_WORDS = st.sampled_from(sorted(token.decode() for token in module._STATED_TOKENS)).flatmap(_respelt)
STATED_TEXT = st.lists(
    STATED_WORDS | _pattern_matches("_STATED") | FILLER | st.sampled_from(SPACES) | st.sampled_from("-'_./:\u2019\xe9"),
    max_size=8,
).map("".join)


@given(STATED_TEXT)
def test_the_stated_gate_never_hides_a_stated_word(line: str) -> None:
    """Where _STATED finds a word in a line (as _stated_failure folds it), the gate must look closer."""
    if _source("_STATED").search(module._folded(line)) is not None:
        assert not module._no_stated_word(line), repr(line)


@given(STATED_TEXT, st.sampled_from(["", " ", "\n", "  \n\t", " " * 70, "x" * 395, "y" * 410]))
def test_stated_text_reads_the_same_both_ways(text: str, pad: str) -> None:
    _assert_same_all([(text, None, None), (pad + text, None, None), (text + pad, None, None),
                      (pad + text + pad, None, None)])


DESCRIBING_WORDS = st.sampled_from(
    sorted(token.decode() for token in module._DESCRIBING_WORDS | module._DESCRIBING_LEADS)
    + ["such as", "for example", "in case", "appears to", "seems to", "even though", "can't", "can\u2019t", "cannot"]
).flatmap(_respelt)
DESCRIBED_TEXT = st.lists(
    DESCRIBING_WORDS | STATED_WORDS | _pattern_matches("_DESCRIBES") | FILLER | st.sampled_from(SPACES)
    | st.sampled_from("-'_./:\u2019\xe9"),
    max_size=8,
).map("".join)


@given(DESCRIBED_TEXT)
def test_describes_by_words_is_the_pattern(line: str) -> None:
    """_describes reads _DESCRIBES by words where it can: it must say what the pattern says (folded, as
    _stated_failure reads a sentence)."""
    sentence = module._folded(line)
    assert module._describes(sentence) == (_source("_DESCRIBES").search(sentence) is not None), repr(sentence)


SENTENCE_TEXT = st.text(st.sampled_from(list("ab .!?;\n\t\r\x0b\x1c\u2028\xa0\x85")), max_size=16)


@given(SENTENCE_TEXT)
def test_the_sentence_end_is_a_stop_before_a_space_or_the_end_or_a_newline(text: str) -> None:
    """_SENTENCE_END is written for speed; it starts where the plain reading of its rule does."""
    plain = re.compile(r"[.!?;](?:\s|$)|\n").search(text)
    fast = module._SENTENCE_END.search(text)
    assert (plain and plain.start()) == (fast and fast.start())


@given(st.lists(PIECE, max_size=8).map("".join), st.sampled_from([1, 2, 24, 40, 60, 200]))
def test_a_clean_line_is_the_whole_window_cleaned_and_cut(text: str, chars: int) -> None:
    """_clean_line cleans a shorter prefix first; it gives what cleaning its whole window gives."""
    whole = " ".join(module._INVISIBLE.sub(" ", text[: chars * 5]).split())
    assert module._clean_line(text, chars) == module.clip(whole, chars)


@pytest.mark.parametrize("brk", ["\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"])
@pytest.mark.parametrize("shape", ["INSUFFICIENT_QUOTA\n  too{b}many{b}requests", "INSUFFICIENT_QUOTA\ntoo{b}many{b}requests",
                                   "Error: 429{b}rate limit", "ok{b}Traceback (most recent call last):"])
def test_characters_str_splits_lines_at_read_alike_on_both_paths(shape: str, brk: str) -> None:
    """A character ``str.splitlines`` breaks at but ``\\n`` splits do not (hypothesis once found NEL) gives the quick
    path and the full path the same verdict."""
    text = shape.format(b=brk)
    _assert_unframed_only_if_so(text)
    _assert_same_all([(text, None, None)])


ERROR_LINE_TEXT = st.lists(
    PIECE | st.sampled_from(["\n", "\nERROR: x", "\nerror[E0308]: y", "\n  \u23bf  Error: z", "\nfatal: w", "\nFATAL",
                             "\nsrc/a.c:1:2: error: x", "\na.c:3:4: fatal error: y", "error: ", "\n\n\n\n\n"])
    | st.sampled_from(SPACES) | st.sampled_from(["x" * 150, "y" * 590]),
    max_size=10,
).map("".join)


@given(ERROR_LINE_TEXT)
def test_no_error_line_hides_no_error_line(text: str) -> None:
    """_no_error_line reads a copy of the probe; where it says "none", _error_line_at finds none either."""
    if module._no_error_line(text):
        assert module._error_line_at(text) is None, repr(text)


@given(HOSTILE_TEXT | st.sampled_from(SPACES).flatmap(lambda space: HOSTILE_TEXT.map(lambda t: t + space * 30)))
def test_last_line_is_the_tails_last_line(text: str) -> None:
    """_last_line and _unframed find the last line with rpartition; it is the tail's text after its last newline."""
    tail = text[-module.TAIL_CHARS :].rstrip()
    assert module._last_line(text) == tail[tail.rfind("\n") + 1 :][-module._LINE_CHARS :]


PADDED_TEXT = st.tuples(
    st.sampled_from(["", " ", "\n", "\t\n", " " * 63, " " * 64, " " * 65, "\u3000" * 70]),
    st.sampled_from(["4", "5", "x", "\u00e9"]),
    st.sampled_from([300, 398, 400, 460, 530, 700]),
    st.sampled_from(["", " ", "\n", " \n" * 31, " " * 64, "\n" * 65]),
    HOSTILE_TEXT,
).map(lambda parts: parts[0] + parts[1] + parts[4] + "a " * (parts[2] // 2) + parts[3])


@given(PADDED_TEXT)
def test_past_message_is_the_stripped_texts_length(text: str) -> None:
    """_past_message reads a long text's ends only; it says what stripping the text says."""
    stripped = text.strip()
    expected = len(stripped) > module.STATED_CHARS and stripped[:1] not in ("4", "5")
    if len(text) - len(text.lstrip()) < module._EDGE and len(text) - len(text.rstrip()) < module._EDGE:
        assert module._past_message(text) == expected, repr(text[:100])
    elif module._past_message(text):
        assert expected, repr(text[:100])


def test_start_words_by_first_character_are_the_folded_leads() -> None:
    """_unframed looks the start words up by a first line's raw first character: for every character, the
    words its folded form leads."""
    for point in (*range(0xD800), *range(0xE000, 0x110000)):
        char = chr(point)
        assert module._START_WORDS_BY_FIRST.get(char, ()) == module._START_WORDS_BY_LEAD.get(module._folded(char)[:1], ()), hex(point)
