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


def _percent(share: float) -> str:
    return f"{share * 100:.1f}"


def test_the_readme_states_the_measured_accuracy() -> None:
    found = STATEMENT.search(README)
    assert found is not None, "the README's accuracy statement is missing or reworded"
    total, right, size, dev_right, detected, healthy_as_error = found.groups()
    assert int(total.replace(",", "")) == len(classify_score.load("all"))
    heldout2 = classify_score.score(classify, classify_score.load("heldout2"))
    dev = classify_score.score(classify, classify_score.load("dev"))
    assert int(size) == heldout2["texts"]
    assert right == _percent(heldout2["accuracy"])
    assert detected == _percent(heldout2["unflagged_errors_detected"])
    assert healthy_as_error == _percent(heldout2["healthy_read_as_error"])
    assert dev_right == _percent(dev["accuracy"])
