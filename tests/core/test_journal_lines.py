"""A journal entry is one JSON line that reads back as the entry, whatever its before-image, written a piece at a
time (a large thread is never copied whole to be journaled)."""

from __future__ import annotations

import base64
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from threadfix import journal as journal_module
from threadfix.journal import Entry, Journal, read_journal


@pytest.fixture(scope="module")
def monkeypatch_slices():
    """Set the journal's base64 slice for a whole hypothesis test (function-scoped monkeypatch cannot), then put it
    back."""
    original = journal_module.BASE64_SLICE

    def set_slice(size: int) -> None:
        journal_module.BASE64_SLICE = size

    yield set_slice
    journal_module.BASE64_SLICE = original


entries = st.builds(
    Entry, st.sampled_from(["file", "sqlite"]), st.text(max_size=20), st.text(max_size=20), st.binary(max_size=40),
    st.text(alphabet="0123456789abcdef", max_size=64),
    # (a locator holds line numbers and SQLite row ids and keys: 64-bit integers at most)
    st.dictionaries(st.text(max_size=5), st.one_of(st.integers(-2**63, 2**63 - 1), st.text(max_size=5), st.none()),
                    max_size=3))


@settings(max_examples=300, deadline=None)
@given(entries, st.integers(1, 5))
def test_an_entry_in_pieces_is_one_line_that_reads_back_as_itself(monkeypatch_slices, entry: Entry, slices: int) -> None:
    monkeypatch_slices(3 * slices)  # slices of 3 to 15 bytes: before-images of several slices and of part of one
    line = b"".join(entry.json_parts())
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    value = orjson.loads(line)
    assert base64.b64decode(value["before"], validate=True) == entry.before
    assert Entry.from_json(value) == entry


def test_a_journal_of_large_before_images_reads_back_whole(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(journal_module, "BASE64_SLICE", 3 * 1000)
    big = [Entry("file", "/a", f"a:{n}", bytes(range(256)) * (40 + n), "h", {"line": n}) for n in range(5)]
    # a slice at a time: the line of a large before-image is never built whole
    assert all(len(piece) <= 4000 for entry in big for piece in entry.json_parts())
    journal = Journal(tmp_path / "j", ["repair", "x"])
    journal.record(big[:2])
    journal.record(big[2:])
    journal.close()
    assert list(read_journal(journal.path)) == big
    assert len(journal.path.read_bytes().splitlines()) == 6


def test_a_digest_is_sha256_whichever_implementation_hashes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first MiB a process hashes go through the interpreter's own SHA-256 (no OpenSSL to load), the rest through
    hashlib's: both give the same hex digest, across the switch."""
    import hashlib
    import os

    monkeypatch.setattr(journal_module, "_builtin_digested", 0)
    monkeypatch.setattr(journal_module, "BUILTIN_DIGEST_BYTES", 100_000)
    assert journal_module._builtin_sha256() is not None  # (this interpreter has its own: both branches are tested)
    for size in (0, 1, 64, 65, 4096, 99_999, 100_001, 300_000, 7):
        data = os.urandom(size)
        assert journal_module.digest(data) == hashlib.sha256(data).hexdigest()
    assert journal_module._builtin_digested >= 100_000
