"""The README's statement of the classifier's measured accuracy is what the scoring script measures.

The figures are recomputed here from the corpus with ``benchmarks/classify_score.py``'s own scoring, so a
change that moves them fails until the README says the new ones. The held-out split the README names was
scored once, with the classifier as it is here; a classifier change that moves its figures makes it a split
that has been seen, and the README must then say so (and a fresh split be gathered, as the corpus README
describes).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
sys.path.insert(0, str(ROOT))

from benchmarks import classify_score  # noqa: E402
from threadfix.failures import classify  # noqa: E402

#: the latest held-out split, the one the README's first figures are for
SCORED_ONCE = "heldout5"
#: the held-out splits before it, each scored once and studied since
EARLIER_SPLITS = ("heldout", "heldout2", "heldout3", "heldout4")

STATEMENT = re.compile(
    r"On ([\d,]+) real tool outputs from public sources, more than half of them healthy .*? right kind for "
    r"([\d.]+) % of a held-out set of (\d+) texts .*?\(([\d.]+) % of the development texts\), finds ([\d.]+) % "
    r"of that set's unflagged errors, and\s+reads ([\d.]+) % of its healthy look-alikes as errors: (\d+) of its "
    r"(\d+) healthy command outputs, file contents and JSON\s+bodies, and (\d+) of its (\d+) issues",
    re.DOTALL,
)
EARLIER = re.compile(r"On the four earlier held-out sets, .*? it is right on ([\d.]+) % to ([\d.]+) % of the texts",
                     re.DOTALL)
MISSED = re.compile(r"expect about one unflagged error in (\w+) to be counted as a result")
REPRODUCE = re.compile(r"Reproduce with `python benchmarks/classify_score.py --split (\w+)`")
WORDS = {"four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "ten": 10}


def _percent(share: float) -> str:
    return f"{share * 100:.1f}"


def _figures(split: str) -> dict:
    return classify_score.score(classify, classify_score.load(split))


def _statement() -> tuple[str, ...]:
    found = STATEMENT.search(README.replace("\n", " ").replace("  ", " "))
    assert found is not None, "the README's accuracy statement is missing or reworded"
    return found.groups()


def test_the_readme_states_the_measured_accuracy() -> None:
    """The latest held-out split, scored once, with the development split beside it."""
    total, right, size, dev_right, detected, healthy_as_error, *_ = _statement()
    rows = classify_score.load("all")
    assert int(total.replace(",", "")) == len(rows)
    assert sum(row["kind"] == "success" for row in rows) > len(rows) / 2  # "more than half of them healthy"
    scored = _figures(SCORED_ONCE)
    assert int(size) == scored["texts"]
    assert right == _percent(scored["accuracy"])
    assert detected == _percent(scored["unflagged_errors_detected"])
    assert healthy_as_error == _percent(scored["healthy_read_as_error"])
    assert dev_right == _percent(_figures("dev")["accuracy"])
    assert REPRODUCE.search(README).group(1) == SCORED_ONCE


def test_the_readme_states_where_healthy_texts_are_misread() -> None:
    """Real tool results apart from prose look-alikes, on the split scored once."""
    *_, results_misread, results, prose_misread, prose = _statement()
    groups = _figures(SCORED_ONCE)["healthy_by_group"]
    assert (int(results_misread), int(results)) == (groups["tool_results"]["read_as_error"],
                                                    groups["tool_results"]["texts"])
    assert (int(prose_misread), int(prose)) == (groups["prose"]["read_as_error"], groups["prose"]["texts"])


def test_the_readme_states_the_earlier_held_out_figures() -> None:
    found = EARLIER.search(README.replace("\n", " "))
    assert found is not None, "the README's figures for the earlier held-out splits are missing or reworded"
    rights = [_figures(split)["accuracy"] for split in EARLIER_SPLITS]
    assert found.groups() == (_percent(min(rights)), _percent(max(rights)))


def test_the_readme_says_how_many_unflagged_errors_go_unseen() -> None:
    found = MISSED.search(README.replace("\n", " "))
    assert found is not None, "the README's plain-words statement of what the classifier misses is missing"
    missed = 1 - _figures(SCORED_ONCE)["unflagged_errors_detected"]
    assert WORDS[found.group(1)] == round(1 / missed)
