"""The one pass over a thread's output text (threadfix/rules/marks.py) admits every text the text rules' own tests
pass: each group is a superset of the tests it stands in front of, over generated text and its JSON encodings."""

from __future__ import annotations

import json
import sys

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from threadfix.rules import internals_leaked, marks
from threadfix.secrets import may_hold_secret

_scan_bytes = marks.scanner()


def scan(text: str) -> int:
    """The scanner's groups for a text, as the marks read it (UTF-8, lone surrogates passed through)."""
    assert _scan_bytes is not None
    return _scan_bytes(text.encode("utf-8", "surrogatepass"))


pytestmark = pytest.mark.skipif(_scan_bytes is None, reason="no Hyperscan wheel for this platform: the rules "
                                "test every thread themselves")

SECRET_PIECES = ("sk-", "proj-", "ant-", "AKIA", "AIza", "eyJ", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "ghx_",
                 "xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxz-", "-----BEGIN ", "----BEGIN", "PRIVATE KEY-----",
                 "Bearer ", "bearer", "BEARER", "BEAREr", "earer")
LEAK_PIECES = ("/srv/", "srv/", "\\opt/", "/app/", "/var/", "\\usr/", "workspace/", "site-packages", "/dist-packages",
               "node_modules", "\\.venv", "/Program Files", "Program Files", "at", " at ", "at\t", "\\n", "\n", "\\",
               "...", "..", " 3 ", "\u0663", "\uff19", "more", "Traceback (most recent call last)", "Traceback (most",
               "Exception in thread", "Node.js", "Node")
#: every kind of character \s matches in a str regex, and some it does not
SPACES = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000\u200b\u180e"
OTHER = "aZ09_-./\\:\"'{}é€😀\ud800\udfff"


def _texts() -> st.SearchStrategy[str]:
    space = st.text(alphabet=SPACES, max_size=2)
    # the shapes the frame and "more" tests look for, with any of the characters \s matches (and some it does not)
    frame = st.tuples(st.sampled_from(("\n", "\\n", "n", "")), space, st.sampled_from(("at", "a")), space).map("".join)
    more = st.tuples(st.just("..."), space, st.sampled_from("3\u0663\uff19x"), space, st.just("more")).map("".join)
    piece = st.one_of(st.sampled_from(SECRET_PIECES + LEAK_PIECES), st.text(alphabet=SPACES + OTHER, max_size=4),
                      st.text(max_size=3), frame, more)
    return st.lists(piece, max_size=10).map("".join)


def _leaks(text: str) -> bool:
    return any(test(text) for test in internals_leaked._TESTS)


def _encodings(text: str) -> list[str]:
    """The text, and the text of each JSON encoding of it the stores meet (an output that is itself JSON text)."""
    found = [text, json.dumps(text), json.dumps(text, ensure_ascii=False), json.dumps({"error": text})]
    try:
        found.append(orjson.dumps(text).decode())
    except TypeError:  # orjson refuses lone surrogates
        pass
    return found


@given(text=_texts())
def test_each_group_admits_every_text_its_tests_pass(text: str) -> None:
    for form in _encodings(text):
        found = scan(form)
        if may_hold_secret(form):
            assert found & marks.SECRET, form
        if _leaks(form):
            assert found & marks.LEAK, form


@given(texts=st.lists(_texts(), max_size=4))
def test_a_thread_the_pass_settles_is_one_the_rules_tests_settle(texts: list[str]) -> None:
    """Over all of a thread's output text at once, as the context scans it."""
    whole = "\n".join(["", *texts])
    found = scan(whole)
    assert bool(found & marks.SECRET) >= may_hold_secret(whole)
    assert bool(found & marks.LEAK) >= _leaks(whole)


@pytest.mark.parametrize(("text", "group"), [
    ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz", marks.SECRET),
    ("Authorization: Bearer abcdefghijklmnopqrstu", marks.SECRET),
    ("-----BEGIN RSA PRIVATE KEY-----", marks.SECRET),
    ('Traceback (most recent call last):\n  File "/srv/app/x.py", line 1', marks.LEAK),
    ("Error: boom\n    at run (/app/index.js:1:2)", marks.LEAK),
    ('{"error": "boom\\n    at Foo.bar(Foo.java:1)"}', marks.LEAK),
    ("java.lang.Error\n\u3000at x\n... 12 more", marks.LEAK),
    ("C:\\Program Files\\tool\\x.dll", marks.LEAK),
    ("a secret sk-x and /usr/lib/python3/site-packages/x.py", marks.SECRET | marks.LEAK),
    ("the weather in Paris at noon: 18 C... fine", 0),
    ("", 0),
])
def test_marks_of_typical_texts(text: str, group: int) -> None:
    assert scan(text) == group


def test_the_byte_classes_hold_every_ascii_space_and_digit_python_knows() -> None:
    """Every other character \\s or \\d matches is non-ASCII, and so starts with a byte the classes hold."""
    spaces = {c for c in range(128) if chr(c).isspace()}
    assert spaces == set(range(0x09, 0x0E)) | set(range(0x1C, 0x21))
    assert {c for c in range(128) if chr(c).isdecimal()} == set(range(0x30, 0x3A))
    assert sum(chr(c).isspace() for c in range(128, sys.maxunicode + 1)) > 10  # what the non-ASCII bytes stand for


def test_hyperscan_is_installed_where_the_project_asks_for_it() -> None:
    """pyproject.toml asks for it on the machines it names: there the pass must be running, not silently absent."""
    import platform

    if platform.machine() in ("x86_64", "AMD64", "aarch64", "arm64"):
        assert marks.scanner() is not None


@given(texts=st.lists(st.text(alphabet="ab\n /srv/sk-at\u00e9\u20ac\U0001f600\ud800\udfff"), max_size=5))
def test_a_threads_lines_are_marked_as_their_joined_text(texts: list[str]) -> None:
    """Each text encoded alone and the bytes joined: the groups of the one string the thread's texts join to."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(marks, "_read", marks.COMPILE_AFTER)
        assert marks.marks_of_lines(texts) == marks.marks("\n".join(["", *texts])) == scan("\n".join(["", *texts]))


def test_without_the_pass_every_group_may_match(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(marks, "_read", marks.COMPILE_AFTER)
    assert marks.marks("nothing here") == 0
    monkeypatch.setattr(marks, "FAST", False)
    assert marks.marks("nothing here") == marks.EVERY


def test_a_small_run_leaves_the_text_to_the_rules_own_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until a run has read COMPILE_AFTER characters nothing is compiled, and every group may match."""
    monkeypatch.setattr(marks, "_read", 0)
    assert marks.marks("x" * (marks.COMPILE_AFTER - 1)) == marks.EVERY
    assert marks.marks("nothing here") == marks.EVERY
    assert marks.marks("nothing here") == 0


def test_scans_from_several_threads_each_keep_their_own_groups() -> None:
    """A library caller may lint from threads: no scan reports fewer groups than its own text holds."""
    from concurrent.futures import ThreadPoolExecutor

    texts = ["x" * 20_000 + " sk-", "y" * 20_000 + "\n  at f", "z" * 20_000, "/srv/ sk-" + "w" * 20_000] * 50
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(scan, texts))
    expected = [scan(text) for text in texts]
    assert all(got & want == want for got, want in zip(found, expected))
    assert expected[:4] == [marks.SECRET, marks.LEAK, 0, marks.EVERY]


def test_a_processor_hyperscan_cannot_run_on_leaves_the_work_to_the_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    import hyperscan

    class Refusing:
        def compile(self, **_: object) -> None:
            raise hyperscan.ArchitectureError("this processor lacks SSSE3")

    monkeypatch.setattr(hyperscan, "Database", Refusing)
    monkeypatch.setattr(marks, "_read", marks.COMPILE_AFTER)
    marks._scanner.cache_clear()
    try:
        assert marks.scanner() is None
        assert marks.marks("nothing here") == marks.EVERY
    finally:
        monkeypatch.undo()
        marks._scanner.cache_clear()
    assert marks.scanner() is not None


@given(texts=st.lists(_texts(), max_size=6))
def test_the_texts_a_thread_holds_are_every_text_a_scan_of_it_alone_marks(texts: list[str]) -> None:
    """The outputs the rules read closely, told by the thread's one pass: every text that a scan of it alone (after its
    newline) marks with a group is held for that group, in order; and a text the rule's own tests pass is one of them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(marks, "_read", marks.COMPILE_AFTER)
        lines = marks.Lines(texts)
        for group in (marks.SECRET, marks.LEAK):
            held = list(lines.holding(group))
            assert held == sorted(set(held)) and all(0 <= at < len(texts) for at in held)
            alone = [at for at, text in enumerate(texts) if scan("\n" + text) & group]
            assert set(alone) <= set(held), (alone, held)
        assert {at for at, text in enumerate(texts) if _leaks("\n" + text)} <= set(lines.holding(marks.LEAK))
        assert {at for at, text in enumerate(texts) if may_hold_secret(text)} <= set(lines.holding(marks.SECRET))


def test_a_thread_holds_only_the_texts_its_marks_are_in() -> None:
    texts = ["ok", "Traceback (most recent call last):\n  File \"/srv/app/x.py\"", "fine", "key sk-abc", ""]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(marks, "_read", marks.COMPILE_AFTER)
        lines = marks.Lines(texts)
        assert list(lines.holding(marks.LEAK)) == [1] and list(lines.holding(marks.SECRET)) == [3]
        patch.setattr(marks, "FAST", False)
        assert list(marks.Lines(texts).holding(marks.LEAK)) == [0, 1, 2, 3, 4]  # not scanned: every text may


def test_an_input_known_to_be_large_has_the_pass_from_its_first_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A small input leaves its text to the rules' own tests (nothing compiled); one of at least
    TEXT_PASS_AT_ONCE_BYTES starts the pass at once, with the same findings."""
    from pathlib import Path

    from threadfix import lint

    store = Path(__file__).resolve().parents[2] / "sample_threads" / "openai-responses" / "sessions.jsonl"
    size = store.stat().st_size
    monkeypatch.setattr(marks, "_read", 0)
    monkeypatch.setattr(lint, "TEXT_PASS_AT_ONCE_BYTES", size + 1)
    small = [r.findings for r in lint.LintRun(str(store)).results()]
    assert 0 < marks._read < marks.COMPILE_AFTER
    monkeypatch.setattr(marks, "_read", 0)
    monkeypatch.setattr(lint, "TEXT_PASS_AT_ONCE_BYTES", size)
    large = [r.findings for r in lint.LintRun([str(store), "no-such-file.jsonl"]).results() if hasattr(r, "findings")]
    assert marks._read >= marks.COMPILE_AFTER
    assert large == small
