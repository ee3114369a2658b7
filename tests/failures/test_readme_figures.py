"""The README's statement of the classifier's measured accuracy is what the scoring script measures now.

The figures are recomputed here from the corpus with ``benchmarks/classify_score.py``'s own scoring, so a
change that moves them fails until the README says the new ones.
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

STATEMENT = re.compile(
    r"On ([\d,]+) real tool outputs .*? right kind for ([\d.]+) % of a held-out set of (\d+) texts .*?"
    r"\(([\d.]+) % of the development texts\), finds ([\d.]+) % of that set's unflagged errors, and\s+"
    r"reads ([\d.]+) % of its healthy look-alikes as errors",
    re.DOTALL,
)
EARLIER = re.compile(
    r"([\d.]+) % right, ([\d.]+) % found and ([\d.]+) % of healthy texts read as errors on (\d+) texts;\s+"
    r"([\d.]+) %, ([\d.]+) % and\s+([\d.]+) % on (\d+)\."
)
GROUPS = re.compile(
    r"none of the (\d+) healthy command outputs, file\s+contents and JSON bodies of the last two sets is read as "
    r"an error, while ([\d.]+) % and ([\d.]+) % of their\s+docstrings"
)


def _percent(share: float) -> str:
    return f"{share * 100:.1f}"


def _figures(split: str) -> dict:
    return classify_score.score(classify, classify_score.load(split))


def test_the_readme_states_the_measured_accuracy() -> None:
    """The latest held-out split, scored once, with the development split beside it."""
    found = STATEMENT.search(README)
    assert found is not None, "the README's accuracy statement is missing or reworded"
    total, right, size, dev_right, detected, healthy_as_error = found.groups()
    assert int(total.replace(",", "")) == len(classify_score.load("all"))
    heldout3 = _figures("heldout3")
    assert int(size) == heldout3["texts"]
    assert right == _percent(heldout3["accuracy"])
    assert detected == _percent(heldout3["unflagged_errors_detected"])
    assert healthy_as_error == _percent(heldout3["healthy_read_as_error"])
    assert dev_right == _percent(_figures("dev")["accuracy"])


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
