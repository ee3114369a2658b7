"""One store rendered in every format shows the same numbers; hostile text never reaches the terminal raw."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from tests.report import storegen
from threadfix.batch import scan
from threadfix.render.report import (
    RENDERERS, CsvRenderer, JsonRenderer, MarkdownRenderer, RichRenderer, TsvRenderer, View, markdown_text,
)
from threadfix.report import BREAKDOWNS, Report, Totals, build_report

TOP = 8
#: the JSON key, the TSV/markdown section title of each table
SECTIONS = {
    "tools": "Failures by tool",
    "kinds": "Failures by kind",
    "messages": "Top error messages (ids, numbers, paths, quoted text masked)",
    "stuck_threads": "Stuck threads, worst first",
    "stuck_by_turns": "Stuck threads by user turns since their first dangling call",
    "days": "By day (UTC)",
}
BY_SECTION = {"tool": "tools", "kind": "kinds", "thread": "stuck_threads", "day": "days"}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    folder = tmp_path_factory.mktemp("render")
    storegen.write_store(folder, 150, seed=3, hostile=True)
    return build_report(scan([str(folder)]), keep=TOP)


def as_json(report: Report, by: str = "tool") -> dict:
    return orjson.loads(JsonRenderer(View(by=by, top=TOP)).render(report))


def number(text: str) -> int:
    return int(text.replace(",", ""))


def plain(row: dict, key: str) -> object:
    """A JSON cell as the text formats print it."""
    value = row[key]
    if isinstance(value, dict):
        return "; ".join(f"{name}={count}" for name, count in value.items())
    if isinstance(value, list):
        return "; ".join(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else value


def same_row(printed: dict[str, str], row: dict) -> None:
    """Every printed cell equals the JSON cell: numbers as numbers, rates to the printed precision."""
    for key, text in printed.items():
        if key == "error_rate":
            assert (text == "" and row[key] is None) or abs(float(text.rstrip("%")) - row[key] * 100) <= 0.05
        elif isinstance(row[key], int) and not isinstance(row[key], bool):
            assert number(text) == row[key], key
        else:
            assert text == plain(row, key), key


# --------------------------------------------------------------------------- plain formats


def tsv_sections(text: str) -> dict[str, list[dict[str, str]]]:
    sections = {}
    for block in text.strip("\n").split("\n\n"):
        title, header, *rows = block.split("\n")
        if title == "# totals":
            sections["totals"] = [dict(line.split("\t") for line in [header, *rows])]
            continue
        columns = header.split("\t")
        sections[title[2:]] = [dict(zip(columns, line.split("\t"), strict=True)) for line in rows]
    return sections


@pytest.mark.parametrize("by", BREAKDOWNS)
def test_tsv_shows_the_json_numbers(report: Report, by: str) -> None:
    document = as_json(report, by)
    sections = tsv_sections(TsvRenderer(View(by=by, top=TOP)).render(report))
    assert {key: number(value) for key, value in sections["totals"][0].items()} == document["totals"]
    assert list(sections)[1] == SECTIONS[BY_SECTION[by]].lower()  # the --by table comes first
    for key, title in SECTIONS.items():
        rows = sections[title.lower()]
        assert len(rows) == len(document[key])
        for printed, row in zip(rows, document[key]):
            same_row(printed, row)
    cells = [(r["kind"], r["tool"], number(r["failures"])) for r in sections["failures by kind and tool"]]
    assert cells == [(c["kind"], c["tool"], c["failures"]) for c in document["kind_tool"]]


@pytest.mark.parametrize("by", BREAKDOWNS)
def test_csv_is_the_by_table_of_the_json(report: Report, by: str) -> None:
    document = as_json(report, by)
    rows = list(csv.DictReader(io.StringIO(CsvRenderer(View(by=by, top=TOP)).render(report))))
    assert len(rows) == len(document["breakdown"]) > 0
    for printed, row in zip(rows, document["breakdown"]):
        if "error_rate" in printed:
            printed["error_rate"] = "" if printed["error_rate"] == "" else f"{float(printed['error_rate']) * 100}%"
        same_row(printed, row)


def markdown_tables(text: str) -> dict[str, list[list[str]]]:
    tables: dict[str, list[list[str]]] = {}
    title = "totals"
    for line in text.splitlines():
        if line.startswith("### "):
            title = line[4:]
        elif line.startswith("|") and not line.startswith("|---"):
            cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
            tables.setdefault(title, []).append(cells)
    return tables


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


@pytest.mark.parametrize("by", BREAKDOWNS)
def test_markdown_shows_the_json_numbers(report: Report, by: str) -> None:
    document = as_json(report, by)
    text = MarkdownRenderer(View(by=by, top=TOP)).render(report)
    tables = markdown_tables(text)
    assert [number(count) for _, count in tables["totals"][1:]] == [
        document["totals"][key] for key in ("threads", "calls", "outputs", "error_outputs", "dangling_calls",
                                            "stuck_threads", "refused_threads", "repaired_threads",
                                            "threadfix_outputs", "calls_left_alone", "unrecognised_threads",
                                            "undated_threads", "unreadable")]
    assert list(tables)[1] == SECTIONS[BY_SECTION[by]]
    columns = {
        "tools": ("tool", "calls", "failures", "error_rate", "error_outputs", "dangling_calls", "kinds"),
        "kinds": ("kind", "failures", "error_outputs", "dangling_calls", "retryable", "tools"),
        "messages": ("count", "kind", "pattern", "tool", "example"),
        "stuck_threads": ("address", "later_user_turns", "dangling_calls", "first", "kind", "cause", "tools", "day"),
        "stuck_by_turns": ("later_user_turns", "stuck_threads"),
        "days": ("day", "threads", "stuck_threads", "calls", "error_outputs", "dangling_calls", "failures"),
    }
    for key, title in SECTIONS.items():
        rows = tables[title][1:]
        assert len(rows) == len(document[key])
        for cells, row in zip(rows, document[key]):
            same_row({name: unescape(cell) for name, cell in zip(columns[key], cells, strict=True)}, row)


def test_markdown_plants_no_link_markup_or_html(report: Report) -> None:
    text = MarkdownRenderer(View(top=50)).render(report)
    assert re.search(r"(?<!\\)[\[<]", text) is None  # markdown itself uses neither
    assert r"\[click\](" in text and r"\<b\>" in text and r"\[link=" in text
    assert markdown_text("a|b*c_[d](e)<f>") == r"a\|b\*c\_\[d\](e)\<f\>"


def test_csv_cells_never_start_a_formula() -> None:
    report = Report()
    report._tool("=HYPERLINK(\"http://evil\")").calls = 3
    report._tool("@SUM(A1)").calls = 2
    rows = list(csv.reader(io.StringIO(CsvRenderer(View()).render(report))))
    assert [row[0] for row in rows[1:]] == ["'=HYPERLINK(\"http://evil\")", "'@SUM(A1)"]


def test_json_is_one_document_with_every_section(report: Report) -> None:
    document = as_json(report)
    assert set(document) == {"by", "top", "approximate", "totals", "breakdown", "tools", "kinds", "messages",
                             "stuck_threads", "stuck_by_turns", "days", "kind_tool"}
    assert document["approximate"] is False


def test_every_renderer_is_registered_by_name() -> None:
    assert set(RENDERERS) == {"rich", "tsv", "json", "csv", "markdown"}
    assert all(cls.name == name for name, cls in RENDERERS.items())


def test_an_empty_report_renders_in_every_format() -> None:
    empty = Report()
    assert CsvRenderer(View()).render(empty) == "tool,calls,failures,error_rate,error_outputs,dangling_calls,kinds\n"
    assert as_json(empty)["totals"]["threads"] == 0 and as_json(empty)["tools"] == []
    assert TsvRenderer(View()).render(empty).startswith("# totals\nthreads\t0\n")
    assert "## threadfix report\n\n0 threads, 0 stuck" in MarkdownRenderer(View()).render(empty)
    assert _rich(empty, 80, "tool")[1].startswith("threadfix report  0 threads · 0 stuck · 0 error outputs\n")


# --------------------------------------------------------------------------- the terminal


def _rich(report: Report, width: int, by: str, top: int = TOP) -> tuple[str, str]:
    """(what the terminal receives, the same as plain text)."""
    out = io.StringIO()
    console = Console(file=out, record=True, width=width, force_terminal=True, color_system="truecolor")
    RichRenderer(View(by=by, top=top), console=console).write(report, out)
    return out.getvalue(), console.export_text()


def ints(line: str) -> list[int]:
    return [number(token) for token in line.split() if re.fullmatch(r"\d[\d,]*", token)]


def line_of(text: str, start: str) -> str:
    found = [line for line in text.splitlines() if line.startswith(start + " ")]
    assert len(found) >= 1, start
    return found[0]


@pytest.mark.parametrize("width", [80, 160])
@pytest.mark.parametrize("by", BREAKDOWNS)
def test_the_terminal_view_shows_the_json_numbers(report: Report, width: int, by: str) -> None:
    document = as_json(report, by)
    raw, text = _rich(report, width, by)
    print(f"\n--- rich, {width} columns, --by {by} ---\n{text}")
    assert all(len(line) <= width for line in text.splitlines())
    totals = document["totals"]
    assert text.splitlines()[0] == (f"threadfix report  {totals['threads']:,} threads · {totals['stuck_threads']:,} stuck"
                                    f" · {totals['error_outputs']:,} error outputs · {totals['unreadable']} unreadable")
    for key, label in (("threads", "threads"), ("dangling_calls", "dangling calls"),
                       ("refused_threads", "refused by the provider now"), ("repaired_threads", "repaired by threadfix")):
        assert re.search(rf"\b{totals[key]:,} {label}\b", text), key
    wide = width >= 120
    for row in document["tools"]:
        if len(row["tool"]) < 14:
            expected = [row["calls"], row["failures"]] + ([row["error_outputs"], row["dangling_calls"]] if wide else [])
            assert ints(line_of(text, row["tool"]))[:len(expected)] == expected
    for row in document["kinds"]:
        expected = [row["failures"], row["error_outputs"], row["dangling_calls"]]
        assert ints(line_of(text, row["kind"]))[:3] == expected
    for row in document["days"]:
        assert ints(line_of(text, row["day"])) == [row["threads"], row["stuck_threads"], row["calls"],
                                                         row["error_outputs"], row["dangling_calls"], row["failures"]]
    hidden = totals["stuck_threads"] - len(document["stuck_threads"])
    assert f"… {hidden} more (raise --top to see them)" in text
    stuck = [line for line in text.splitlines() if re.search(r"id=t\d+ ", line)]
    for line, row in zip(stuck, document["stuck_threads"], strict=True):
        assert row["address"].rsplit("id=", 1)[1] in line.split()[0]
        assert [row["later_user_turns"], row["dangling_calls"]] == ints(line)[:2]


@pytest.mark.parametrize("width", [80, 160])
def test_hostile_text_never_reaches_the_terminal_raw(report: Report, width: int) -> None:
    raw, text = _rich(report, width, "tool", top=50)
    # the only escapes are rich's own colours: no OSC (title, hyperlink), no screen clearing
    assert re.findall(r"\x1b(?!\[[0-9;]*m)", raw) == []
    assert "\x07" not in raw
    assert "evil\\x1b]8;;" in text  # the hostile tool name is there, made visible
    assert storegen.SECRET not in raw and storegen.SECRET[8:] not in raw
    assert "[link=" in text  # shown as text, never taken as markup


@pytest.mark.parametrize("name", ["json", "csv", "tsv", "markdown"])
def test_no_format_prints_a_secret_or_a_control_character(report: Report, name: str) -> None:
    for by in BREAKDOWNS:
        out = RENDERERS[name](View(by=by, top=50)).render(report)
        assert storegen.SECRET[8:] not in out
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out.replace("\r\n", "\n"))
        if name == "json":
            assert "\\u001b" not in out and "\\u0007" not in out


HOSTILE = st.lists(st.sampled_from(["\x1b", "\x07", "\x9b", "\u202e", "\n", "\t", "[", "]", "link=", "bold", "/", "|",
                                    "<", ">", "`", "*", "_", "=", "@", "x", "é", "漢", "\ufeff", "\x00", " "]),
                   max_size=30).map("".join)


@settings(max_examples=60)
@given(tool=HOSTILE, message=HOSTILE, address=HOSTILE)
def test_any_untrusted_text_stays_inert_in_every_format(tool: str, message: str, address: str) -> None:
    report = Report()
    stats = report._tool(tool)
    stats.calls, stats.error_outputs = 2, 1
    stats.error_kinds["timeout"] += 1
    report._cluster("timeout", message, address, tool)
    for width in (80, 160):
        raw, _ = _rich(report, width, "tool")
        assert re.findall(r"\x1b(?!\[[0-9;]*m)", raw) == []
        assert not re.search(r"[\x00-\x09\x0b-\x1a\x1c-\x1f\x7f-\x9f\u202e\ufeff]", raw)
    for name in ("tsv", "csv", "markdown", "json"):
        out = RENDERERS[name](View()).render(report)
        assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e\ufeff]", out.replace("\t", "")), name
    # a tab or newline in a tool name or message never adds a TSV column or row
    sections = tsv_sections(TsvRenderer(View()).render(report))  # a row with another column count raises
    assert len(sections["totals"][0]) == len(Totals.__struct_fields__)
    assert [len(sections[title.lower()]) for title in (SECTIONS["tools"], SECTIONS["kinds"], SECTIONS["messages"])] == [1, 1, 1]
    assert markdown_tables(MarkdownRenderer(View()).render(report))["Failures by tool"][1][1:4] == ["2", "1", "50.0%"]
