"""The README's statement of the classifier's measured accuracy is what the scoring script measured.

The README states the figures of the latest held-out split as it scored when it was fresh, scored once; the
corpus README keeps that record ("What each held-out split scored when it was fresh": the split's scored-once
figures, and what the same classifier scored on the other splits then). Studying a split's misses changes what
the classifier scores on it but not what it scored unseen, so the README's figures are checked against that
record, and the record's "now" column is recomputed here from the corpus with ``benchmarks/classify_score.py``'s
own scoring: a change that moves any split's figures fails until the corpus README says the new ones.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CORPUS_README = (ROOT / "tests" / "failures" / "corpus" / "README.md").read_text(encoding="utf-8")
sys.path.insert(0, str(ROOT))

from benchmarks import classify_score  # noqa: E402
from threadfix.failures import classify  # noqa: E402

#: the latest held-out split, the one the README's first figures are for
SCORED_ONCE = classify_score.SPLITS[-1]

STATEMENT = re.compile(
    r"On ([\d,]+) real tool outputs from public sources, more than half of them healthy .*? right kind for "
    r"([\d.]+) % of a held-out set of (\d+) texts .*?\(([\d.]+) % of the development texts\), finds ([\d.]+) % "
    r"of that set's unflagged errors, and\s+reads ([\d.]+) % of its healthy look-alikes as errors: (\d+) of its "
    r"(\d+) healthy command outputs, file contents and JSON\s+bodies, and (\d+) of its (\d+) issues",
    re.DOTALL,
)
EARLIER = re.compile(r"On the (\w+) earlier held-out sets, .*? it is right on ([\d.]+) % to ([\d.]+) % of the texts",
                     re.DOTALL)
MISSED = re.compile(r"expect about one unflagged error in (\w+) to be counted as a result")
REPRODUCE = re.compile(r"Reproduce with `python benchmarks/classify_score.py --split (\w+)`")
WORDS = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18}
#: a row of the corpus README's table: split, texts (healthy), scored once, now
ROW = re.compile(
    r"^\| `(\w+)` \| (\d+) \((\d+)\) \| ([\d.]+) % / ([\d.]+) % / ([\d.]+) % \| ([\d.]+) % / ([\d.]+) % / ([\d.]+) % \|$",
    re.MULTILINE,
)
#: what the classifier that scored the split once scored beside it
RECORD = re.compile(
    r"When `(\w+)` was scored once, that classifier was right on\s+([\d.]+) % of the development texts and on "
    r"([\d.]+) % to ([\d.]+) % of the (\w+) earlier held-out splits, and read as errors\s+(\d+) of `\w+`'s (\d+) "
    r"healthy tool results and (\d+) of its (\d+) prose look-alikes",
)


def _percent(share: float) -> str:
    return f"{share * 100:.1f}"


def _figures(split: str) -> dict:
    return classify_score.score(classify, classify_score.load(split))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _statement() -> tuple[str, ...]:
    found = STATEMENT.search(_one_line(README))
    assert found is not None, "the README's accuracy statement is missing or reworded"
    return found.groups()


def _table() -> dict[str, tuple[str, ...]]:
    return {found.group(1): found.groups()[1:] for found in ROW.finditer(CORPUS_README)}


def _record() -> tuple[str, ...]:
    records = [found for found in RECORD.finditer(_one_line(CORPUS_README)) if found.group(1) == SCORED_ONCE]
    assert len(records) == 1, "the corpus README's record of the scored-once classifier is missing or reworded"
    return records[0].groups()[1:]


def test_the_readme_states_the_scored_once_figures() -> None:
    """The latest held-out split as it scored once, with the development split beside it, as recorded."""
    total, right, size, dev_right, detected, healthy_as_error, *groups = _statement()
    rows = classify_score.load("all")
    assert int(total.replace(",", "")) == len(rows)
    assert sum(row["kind"] == "success" for row in rows) > len(rows) / 2  # "more than half of them healthy"
    texts, _, once_right, once_healthy, once_detected, *_ = _table()[SCORED_ONCE]
    assert int(size) == int(texts) == len(classify_score.load(SCORED_ONCE))
    assert (right, healthy_as_error, detected) == (once_right, once_healthy, once_detected)
    record_dev, _, _, _, *record_groups = _record()
    assert dev_right == record_dev
    assert tuple(groups) == tuple(record_groups)
    assert REPRODUCE.search(README).group(1) == SCORED_ONCE


def test_the_readme_states_the_earlier_held_out_figures() -> None:
    found = EARLIER.search(_one_line(README))
    assert found is not None, "the README's figures for the earlier held-out splits are missing or reworded"
    count, low, high = found.groups()
    _, record_low, record_high, record_count, *_ = _record()
    assert (count, low, high) == (record_count, record_low, record_high)
    assert WORDS[count] == len(classify_score.SPLITS) - 2  # every held-out split but the scored-once one


def test_the_readme_says_how_many_unflagged_errors_go_unseen() -> None:
    found = MISSED.search(_one_line(README))
    assert found is not None, "the README's plain-words statement of what the classifier misses is missing"
    missed = 1 - float(_table()[SCORED_ONCE][4]) / 100
    assert WORDS[found.group(1)] == round(1 / missed)


def test_the_record_holds_the_healthy_groups_of_the_scored_once_split() -> None:
    """The group sizes the record names are the split's (the misread counts are history)."""
    *_, results, _, prose = _record()
    groups = _figures(SCORED_ONCE)["healthy_by_group"]
    assert (int(results), int(prose)) == (groups["tool_results"]["texts"], groups["prose"]["texts"])


def test_each_split_scores_what_the_corpus_readme_says_it_scores_now() -> None:
    table = _table()
    assert set(table) == set(classify_score.SPLITS) - {"dev"}
    for split, (texts, healthy, *_, now_right, now_healthy, now_detected) in table.items():
        rows = classify_score.load(split)
        assert (int(texts), int(healthy)) == (len(rows), sum(row["kind"] == "success" for row in rows)), split
        figures = classify_score.score(classify, rows)
        assert (now_right, now_healthy, now_detected) == (
            _percent(figures["accuracy"]), _percent(figures["healthy_read_as_error"]),
            _percent(figures["unflagged_errors_detected"])), split


#: a section of the corpus README that records a round of readings after a held-out split was scored: its ordinal, its text
ROUND_SECTION = re.compile(r"^## After the (\w+) held-out split\n(.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
#: where a later round after the same split starts, under that split's section
SUBSECTION = re.compile(r"^### ", re.MULTILINE)
#: a row of its before / after table: split (or "all"), before, after
ROUND_ROW = re.compile(
    r"^\| (?:`(\w+)`|(all)) \| ([\d.]+) % / ([\d.]+) % / ([\d.]+) % \| ([\d.]+) % / ([\d.]+) % / ([\d.]+) % \|$", re.MULTILINE)
EXIT_ZERO_CLAIM = re.compile(r"and (\d+) errors of the corpus are such results\. .*? with the readings below, (\d+) of the \1 "
                             r"are found \((\d+) of the right kind\); of the (\d+) healthy ones,")
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
            "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
            "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20}


def _split_named(number: int) -> str:
    """The held-out split a round's heading counts: the first is ``heldout``, the N-th ``heldoutN``."""
    return "heldout" if number == 1 else f"heldout{number}"


def _rounds() -> dict[int, str]:
    """The rounds the corpus README records with a before / after table, by the number of the split they followed.

    A later round after the same split is written under that split's section, as a subsection (``### ...``) with a table
    of its own: the section's last such part is the round the classifier here is held to."""
    rounds = {}
    for found in ROUND_SECTION.finditer(CORPUS_README):
        parts = [part for part in SUBSECTION.split(found.group(2)) if ROUND_ROW.search(part)]
        if parts:
            rounds[ORDINALS[found.group(1)]] = parts[-1]
    return rounds


def _round_splits(number: int) -> tuple[str, ...]:
    """The splits there were when the round after held-out split ``number`` was written: its figures are for them."""
    return classify_score.SPLITS[: classify_score.SPLITS.index(_split_named(number)) + 1]


def _round_rows(split: str, number: int) -> list[dict]:
    """The rows of ``split`` ("all": of every split the round after held-out split ``number`` knew)."""
    if split != "all":
        return classify_score.load(split)
    known = _round_splits(number)
    return [row for row in classify_score.load("all") if row["split"] in known]


def _latest_round() -> tuple[int, str]:
    """The latest round's number and section: the one whose figures the classifier here is held to (an earlier round's
    are history, as what the classifier scored then)."""
    rounds = _rounds()
    assert rounds, "the corpus README records no round with a before / after table"
    number = max(rounds)
    return number, rounds[number]


def test_the_latest_round_is_after_the_latest_seen_split() -> None:
    """The round held to the classifier here follows a split that has been scored (a split the scoring script knows)."""
    number, _ = _latest_round()
    assert _split_named(number) in classify_score.SPLITS


def test_the_latest_round_states_what_each_split_it_moved_scores_after() -> None:
    """The "after" column of the latest round's table is what the classifier here scores, split by split and on all of
    them; its "before" differs from it (only the splits that moved are listed)."""
    number, section = _latest_round()
    rows = list(ROUND_ROW.finditer(section))
    assert len(rows) >= 2 and rows[-1].group(2) == "all"
    for row in rows:
        split = row.group(1) or "all"
        figures = classify_score.score(classify, _round_rows(split, number))
        after = (_percent(figures["accuracy"]), _percent(figures["healthy_read_as_error"]),
                 _percent(figures["unflagged_errors_detected"]))
        assert row.groups()[5:] == after, split
        assert row.groups()[2:5] != after, split


def _exit_zero_round() -> tuple[int, str]:
    """The latest round that counts the corpus's shell results that exited 0 (the twelfth's claim, until a later round
    states its own)."""
    claims = {number: section for number, section in _rounds().items() if EXIT_ZERO_CLAIM.search(_one_line(section))}
    assert claims, "no round's count of shell results that exited 0 is stated"
    number = max(claims)
    return number, claims[number]


def test_the_round_counts_the_shell_results_that_exited_zero() -> None:
    """The corpus's shell results that say they exited 0, of the splits the round that counts them knew: how many are
    errors, how many of those are found and given the right kind, and that none of the healthy ones is read as an error."""
    number, section = _exit_zero_round()
    found = EXIT_ZERO_CLAIM.search(_one_line(section))
    assert found is not None, "the round's count of shell results that exited 0 is missing or reworded"
    errors, detected, right, healthy = map(int, found.groups())
    exited = []
    for row in _round_rows("all", number):
        try:
            said = orjson.loads(row["text"])
        except orjson.JSONDecodeError:
            continue
        if isinstance(said, dict) and said.keys() == {"output", "metadata"} \
                and isinstance(said["metadata"], dict) and said["metadata"].get("exit_code") == 0:
            exited.append((row, classify(row["text"])))
    failed = [(row, got) for row, got in exited if row["kind"] != "success"]
    assert (errors, healthy) == (len(failed), len(exited) - len(failed))
    assert detected == sum(got.is_error for _, got in failed)
    assert right == sum(got.kind.value == row["kind"] for row, got in failed)
    assert not any(got.is_error for row, got in exited if row["kind"] == "success")
