"""The README's statement of the classifier's measured accuracy is what the scoring script measures.

The figures are recomputed here from the corpus with ``benchmarks/classify_score.py``'s own scoring, so a
change that moves them fails until the README says the new ones. The figures of the held-out split scored
once are the classifier's as it stood when it was scored: they are recomputed with that revision's
classifier (read from git, as the scoring script's ``--baseline`` reads one), the later ones with this one.
"""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
sys.path.insert(0, str(ROOT))

from benchmarks import classify_score  # noqa: E402
from threadfix.failures import classify  # noqa: E402

STATEMENT = re.compile(
    r"On ([\d,]+) real tool outputs .*? right kind for ([\d.]+) % of a held-out set of (\d+) texts .*?"
    r"\(([\d.]+) % of the development texts\), finds ([\d.]+) % of that set's unflagged errors, and\s+"
    r"reads ([\d.]+) % of its healthy look-alikes as errors",
    re.DOTALL,
)
EARLIER = re.compile(
    (r"([\d.]+) % right, ([\d.]+) % found and ([\d.]+) % of healthy texts read as errors on (\d+) texts; "
     r"([\d.]+) %, ([\d.]+) % and ([\d.]+) % on (\d+)\.").replace(" ", r"\s+")
)
SEEN = re.compile(
    r"that set is seen now too; .*?: ([\d.]+) % right, ([\d.]+) %\s+found and ([\d.]+) % of healthy texts read as "
    r"errors on it, and ([\d.]+) %, ([\d.]+) % and ([\d.]+) % on the ([\d,]+)\s+development texts",
    re.DOTALL,
)
#: The split the README's first figures are for, and the revision whose classifier scored it once.
SCORED_ONCE = ("heldout3", "060043efa700dfdab4f0fcec56edb7858010fc7c")
GROUPS = re.compile(
    (r"none of the (\d+) healthy command outputs, file contents and JSON bodies of the last two sets is read as "
     r"an error, while ([\d.]+) % and ([\d.]+) % of their docstrings").replace(" ", r"\s+")
)


def _percent(share: float) -> str:
    return f"{share * 100:.1f}"


def _figures(split: str, classifier=classify) -> dict:
    return classify_score.score(classifier, classify_score.load(split))


@functools.lru_cache(maxsize=1)
def _scoring_classifier():
    scorer = classify_score.baseline(SCORED_ONCE[1])
    if scorer is None:
        pytest.skip(f"revision {SCORED_ONCE[1][:12]} (the classifier that scored {SCORED_ONCE[0]}) is not in this clone")
    return scorer


def test_the_readme_states_the_measured_accuracy() -> None:
    """The latest held-out split, scored once, with the development split beside it, as they were then."""
    found = STATEMENT.search(README)
    assert found is not None, "the README's accuracy statement is missing or reworded"
    total, right, size, dev_right, detected, healthy_as_error = found.groups()
    assert int(total.replace(",", "")) == len(classify_score.load("all"))
    scorer = _scoring_classifier()
    scored = _figures(SCORED_ONCE[0], scorer)
    assert int(size) == scored["texts"]
    assert right == _percent(scored["accuracy"])
    assert detected == _percent(scored["unflagged_errors_detected"])
    assert healthy_as_error == _percent(scored["healthy_read_as_error"])
    assert dev_right == _percent(_figures("dev", scorer)["accuracy"])


def test_the_readme_states_the_figures_since_on_the_split_scored_once() -> None:
    found = SEEN.search(README)
    assert found is not None, "the README's figures since the held-out split was scored are missing or reworded"
    right, detected, healthy_as_error, dev_right, dev_detected, dev_healthy, dev_size = found.groups()
    seen, dev = _figures(SCORED_ONCE[0]), _figures("dev")
    assert (right, detected, healthy_as_error) == (
        _percent(seen["accuracy"]), _percent(seen["unflagged_errors_detected"]), _percent(seen["healthy_read_as_error"]))
    assert (dev_right, dev_detected, dev_healthy, int(dev_size.replace(",", ""))) == (
        _percent(dev["accuracy"]), _percent(dev["unflagged_errors_detected"]), _percent(dev["healthy_read_as_error"]),
        dev["texts"])


def test_the_readme_states_the_earlier_held_out_figures() -> None:
    found = EARLIER.search(README)
    assert found is not None, "the README's figures for the earlier held-out splits are missing or reworded"
    for split, (right, detected, healthy_as_error, size) in (("heldout2", found.groups()[:4]),
                                                             ("heldout", found.groups()[4:])):
        figures = _figures(split)
        assert (right, detected, healthy_as_error, int(size)) == (
            _percent(figures["accuracy"]), _percent(figures["unflagged_errors_detected"]),
            _percent(figures["healthy_read_as_error"]), figures["texts"]), split


def test_the_readme_states_where_healthy_texts_are_misread() -> None:
    """Real tool results against prose look-alikes, over the two latest held-out splits."""
    found = GROUPS.search(README)
    assert found is not None, "the README's statement on real tool results is missing or reworded"
    results, prose3, prose2 = found.groups()
    groups = {split: _figures(split)["healthy_by_group"] for split in ("heldout3", "heldout2")}
    assert int(results) == sum(group["tool_results"]["texts"] for group in groups.values())
    assert all(group["tool_results"]["read_as_error"] == 0 for group in groups.values())
    for split, said in (("heldout3", prose3), ("heldout2", prose2)):
        prose = groups[split]["prose"]
        assert said == _percent(prose["read_as_error"] / prose["texts"]), split
