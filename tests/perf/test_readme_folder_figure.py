"""The README's instruction figure for a folder repair is the one ``benchmarks/README.md`` records.

The benchmarks README keeps the per-dialect table (callgrind, whole processes, the stdlib script beside threadfix);
the README states the range of its latest "after" column. A new round that records other counts fails here until
the README says the new range, and a README figure that no table holds fails too.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BENCHMARKS = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")

#: the section whose table is the record, and the README's statement of it
SECTION = "### A folder of small files: where the instructions go"
STATED = re.compile(r"a folder of 1,000 small files, each format .*?\(([\d.]+)–([\d.]+)× fewer instructions\)")
ROW = re.compile(r"^\| ([a-z-]+) \| [\d,]+ M \| [\d,]+ M \| [\d,]+ M \| [\d.]+× \| ([\d.]+)× \|$", re.MULTILINE)
DIALECTS = {"openai-responses", "openai-chat", "anthropic", "langchain", "pydantic-ai", "gemini", "bedrock", "ai-sdk"}


def recorded() -> dict[str, float]:
    """The script ÷ threadfix instruction ratios, after the round, of the latest recorded section, by dialect."""
    at = BENCHMARKS.rindex(SECTION)
    end = BENCHMARKS.find("\n### ", at + 1)
    section = BENCHMARKS[at:end if end != -1 else None]
    return {dialect: float(ratio) for dialect, ratio in ROW.findall(section)}


def test_the_record_covers_every_dialect_of_the_runner() -> None:
    assert set(recorded()) == DIALECTS


def test_readme_states_the_recorded_range() -> None:
    stated = STATED.search(README)
    assert stated is not None, "README.md's performance table no longer states the folder's instruction figure"
    ratios = recorded().values()
    assert (float(stated[1]), float(stated[2])) == (min(ratios), max(ratios))
