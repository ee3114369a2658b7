"""What ``report`` prints: one :class:`~threadfix.report.Report`, in the format chosen by name.

Every renderer prints the same rows (:mod:`threadfix.report`'s ``*_rows``) after :func:`clean_row` has
made their untrusted text (tool names, messages, addresses) terminal-safe, short and free of anything that
looks like a secret, so the formats can only differ in layout, never in numbers.

* ``rich``: tables and small bar charts, for a terminal;
* ``tsv``: the same sections as plain tab-separated text (``text`` when stdout is piped);
* ``json``: everything, as one document;
* ``csv``: the ``--by`` table alone, one row per tool, kind, stuck thread or day, for a spreadsheet;
* ``markdown``: the sections as a report to paste into an incident ticket.
"""

from __future__ import annotations

import io
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, TextIO

import orjson
from msgspec import Struct

from threadfix.jsonio import dumps_os_strings
from threadfix.render.safe import safe_excerpt
from threadfix.report import (
    Report, breakdown, day_rows, kind_rows, matrix, message_rows, thread_rows, tool_rows, totals_row, turn_rows,
)

#: how long each untrusted field may be once printed
LIMITS = {"tool": 60, "tools": 60, "pattern": 160, "text": 160, "example": 200, "address": 200}


def clean(value: Any, limit: int) -> Any:
    """Untrusted text (or the strings inside a list or the keys of a dict) made safe to print."""
    if isinstance(value, str):
        return safe_excerpt(value, limit)
    if isinstance(value, list):
        return [clean(entry, limit) for entry in value]
    if isinstance(value, dict):
        return {clean(key, limit): entry for key, entry in value.items()}
    return value


def clean_row(row: dict[str, Any]) -> dict[str, Any]:
    return {key: clean(value, LIMITS[key]) if key in LIMITS else value for key, value in row.items()}


# --------------------------------------------------------------------------- what is printed


class View(Struct, frozen=True):
    """How much of the report to show: the main table and how many rows per table."""

    by: str = "tool"
    top: int = 10
    #: style the rich view (True: colour even when the stream is not a terminal; False: not one styled byte,
    #: bold and dim included); None: as the stream and NO_COLOR say. Never changes what is shown.
    color: bool | None = None


class Column(Struct, frozen=True):
    key: str
    title: str
    #: int | rate | key (a name: never wrapped) | text | map (a dict of counts) | list
    kind: str = "int"
    #: shown by the rich renderer only when the terminal is wide
    wide: bool = False


class Section(Struct, frozen=True):
    key: str
    title: str
    columns: tuple[Column, ...]
    rows: list[dict[str, Any]]
    #: the column a bar chart is drawn from (rich only)
    bar: str | None = None
    #: rows there are in all (``--top`` shows the first ones)
    total: int = 0


def _c(key: str, title: str, kind: str = "int", wide: bool = False) -> Column:
    return Column(key, title, kind, wide)


_SECTIONS: dict[str, tuple[str, tuple[Column, ...], Callable[[Report, int], list[dict[str, Any]]], str | None]] = {
    "tool": ("Failures by tool", (
        _c("tool", "tool", "key"), _c("calls", "calls"), _c("failures", "failed"), _c("error_rate", "rate", "rate"),
        _c("error_outputs", "errors", wide=True), _c("dangling_calls", "dangling", wide=True),
        _c("kinds", "commonest kinds", "map"),
    ), tool_rows, "failures"),
    "kind": ("Failures by kind", (
        _c("kind", "kind", "key"), _c("failures", "failed"), _c("error_outputs", "errors"),
        _c("dangling_calls", "dangling"), _c("retryable", "retry", "key", wide=True), _c("tools", "tools hit", "map"),
    ), kind_rows, "failures"),
    "messages": ("Top error messages (ids, numbers, paths, quoted text masked)", (
        _c("count", "count"), _c("kind", "kind", "key"), _c("pattern", "message", "text"),
        _c("tool", "tool", "key", wide=True), _c("example", "example", "text"),
    ), message_rows, None),
    "thread": ("Stuck threads, worst first", (
        _c("address", "thread", "key"), _c("later_user_turns", "turns since"), _c("dangling_calls", "dangling"),
        _c("first", "first at", "key", wide=True), _c("kind", "kind", "key"), _c("cause", "cause", "key", wide=True),
        _c("tools", "tools", "list"), _c("day", "day", "key", wide=True),
    ), thread_rows, None),
    "turns": ("Stuck threads by user turns since their first dangling call", (
        _c("later_user_turns", "turns since", "key"), _c("stuck_threads", "stuck threads"),
    ), lambda report, top: turn_rows(report), "stuck_threads"),
    "day": ("By day (UTC)", (
        _c("day", "day", "key"), _c("threads", "threads"), _c("stuck_threads", "stuck"), _c("calls", "calls"),
        _c("error_outputs", "errors"), _c("dangling_calls", "dangling"), _c("failures", "failed"),
    ), day_rows, "failures"),
}
#: the order of the sections after the main one
ORDER = ("tool", "kind", "matrix", "messages", "thread", "turns", "day")

TOTALS: tuple[tuple[str, str], ...] = (
    ("threads", "threads"), ("calls", "calls"), ("outputs", "outputs"), ("error_outputs", "error outputs"),
    ("dangling_calls", "dangling calls"), ("stuck_threads", "stuck threads"),
    ("refused_threads", "refused by the provider now"), ("repaired_threads", "repaired by threadfix"),
    ("threadfix_outputs", "outputs threadfix wrote"), ("calls_left_alone", "calls repair leaves alone"),
    ("unrecognised_threads", "threads in no known format"), ("undated_threads", "threads with no date"),
    ("unreadable", "unreadable inputs"),
    ("recent_threads", "threads too recent to judge (--min-age)"),
    ("waiting_threads", "threads waiting on a tool left to others (--leave-tool)"),
)
#: totals the markdown and terminal views show only when there are some (they count what --min-age and --leave-tool set aside)
WHEN_ANY = frozenset(("recent_threads", "waiting_threads"))


#: how many rows each table has before ``--top`` cuts it
_TOTAL_ROWS: dict[str, Callable[[Report], int]] = {
    "tool": lambda report: len(report.tools), "kind": lambda report: len(report.kinds()),
    "messages": lambda report: len(report.clusters), "thread": lambda report: report.totals.stuck_threads,
    "turns": lambda report: len(report.stuck_by_turns), "day": lambda report: len(report.days),
}


def section(report: Report, key: str, top: int) -> Section:
    title, columns, rows, bar = _SECTIONS[key]
    return Section(key, title, columns, [clean_row(row) for row in rows(report, top)], bar, _TOTAL_ROWS[key](report))


def more(shown: int, total: int, what: str = "") -> str | None:
    """``… 12 more (raise --top to see them)`` when a table was cut, else None."""
    return f"… {total - shown:,} more{what} (raise --top to see them)" if total > shown else None


def order(view: View) -> list[str]:
    return [view.by] + [key for key in ORDER if key != view.by]


def kind_tool_matrix(report: Report, tools: int, kinds: int) -> tuple[list[str], list[str], dict[tuple[str, str], int]]:
    """Failures by kind × tool (the commonest kinds and tools), tool names made safe."""
    kind_names, tool_names, cells = matrix(report, kinds, tools)
    safe = {tool: clean(tool, LIMITS["tool"]) for tool in tool_names}
    merged: dict[tuple[str, str], int] = {}
    for (kind, tool), count in cells.items():  # two names may look the same once made safe
        merged[(kind, safe[tool])] = merged.get((kind, safe[tool]), 0) + count
    return kind_names, list(dict.fromkeys(safe.values())), merged


def flat(value: Any, kind: str) -> str:
    """A cell as plain text: counts maps as ``name=3; other=1``, lists joined by ``; ``."""
    if value is None:
        return ""
    if kind == "map":
        return "; ".join(f"{name}={count}" for name, count in value.items())
    if kind == "list":
        return "; ".join(value)
    if kind == "rate":
        return f"{value * 100:.1f}%"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


# --------------------------------------------------------------------------- renderers


class Renderer(ABC):
    name: ClassVar[str]

    def __init__(self, view: View = View()) -> None:
        self.view = view

    @abstractmethod
    def write(self, report: Report, out: TextIO) -> None:
        """Print ``report`` to ``out``."""

    def render(self, report: Report) -> str:
        out = io.StringIO()
        self.write(report, out)
        return out.getvalue()


class JsonRenderer(Renderer):
    """Everything as one document; written as orjson bytes when ``out`` has a binary buffer."""

    name = "json"

    def document(self, report: Report) -> dict[str, Any]:
        view = self.view
        document: dict[str, Any] = {
            "by": view.by, "top": view.top, "approximate": report.approximate, "totals": totals_row(report),
            "breakdown": [clean_row(row) for row in breakdown(report, view.by, view.top)],
        }
        for key, name in (("tool", "tools"), ("kind", "kinds"), ("messages", "messages"),
                          ("thread", "stuck_threads"), ("turns", "stuck_by_turns"), ("day", "days")):
            document[name] = section(report, key, view.top).rows
        kinds, tools, cells = kind_tool_matrix(report, view.top, view.top)
        document["kind_tool"] = [{"kind": kind, "tool": tool, "failures": cells[(kind, tool)]}
                                 for kind in kinds for tool in tools if cells.get((kind, tool))]
        return document

    def write(self, report: Report, out: TextIO) -> None:
        data = dumps_os_strings(self.document(report), option=orjson.OPT_APPEND_NEWLINE)
        buffer = getattr(out, "buffer", None)
        if buffer is not None:
            out.flush()
            buffer.write(data)
            buffer.flush()
        else:
            out.write(data.decode())


class CsvRenderer(Renderer):
    """The ``--by`` table, one row per tool, kind, stuck thread or day."""

    name = "csv"

    def write(self, report: Report, out: TextIO) -> None:
        import csv  # this format alone needs it: kept out of the others' start-up

        columns = _SECTIONS[self.view.by][1]
        rows = section(report, self.view.by, self.view.top).rows
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([column.key for column in columns])
        for row in rows:
            writer.writerow([_csv_cell(row[c.key], c) for c in columns])


def _csv_cell(value: Any, column: Column) -> Any:
    if column.kind == "rate":
        return "" if value is None else value
    text = flat(value, column.kind)
    # a spreadsheet runs a cell that starts with one of these as a formula
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


class TsvRenderer(Renderer):
    """Plain tab-separated sections, for a pipe: ``# title``, a header row, rows, a blank line."""

    name = "tsv"

    def write(self, report: Report, out: TextIO) -> None:
        out.write("# totals\n")
        for key, value in totals_row(report).items():
            out.write(f"{key}\t{value}\n")
        for key in order(self.view):
            if key == "matrix":
                kinds, tools, cells = kind_tool_matrix(report, self.view.top, self.view.top)
                if cells:
                    out.write("\n# failures by kind and tool\nkind\ttool\tfailures\n")
                    for kind in kinds:
                        for tool in tools:
                            if cells.get((kind, tool)):
                                out.write(f"{kind}\t{tool}\t{cells[(kind, tool)]}\n")
                continue
            found = section(report, key, self.view.top)
            if not found.rows:
                continue
            out.write(f"\n# {found.title.lower()}\n")
            out.write("\t".join(c.key for c in found.columns) + "\n")
            for row in found.rows:
                out.write("\t".join(flat(row[c.key], c.kind) for c in found.columns) + "\n")


_MARKDOWN_SPECIAL = str.maketrans({char: "\\" + char for char in "\\`*_[]<>|#!~"})


def markdown_text(text: str) -> str:
    """Text that shows as itself in a markdown table: no links, no emphasis, no cell breaks."""
    return text.translate(_MARKDOWN_SPECIAL)


class MarkdownRenderer(Renderer):
    """A report to paste into an incident ticket."""

    name = "markdown"

    def write(self, report: Report, out: TextIO) -> None:
        totals = totals_row(report)
        out.write("## threadfix report\n\n")
        out.write(f"{_n(totals['threads'])} threads, {_n(totals['stuck_threads'])} stuck "
                  f"({_n(totals['dangling_calls'])} dangling calls), {_n(totals['error_outputs'])} error outputs "
                  f"of {_n(totals['outputs'])}.\n\n")
        out.write("| total | count |\n|---|---:|\n")
        for key, label in TOTALS:
            if totals[key] or key not in WHEN_ANY:
                out.write(f"| {label} | {_n(totals[key])} |\n")
        for key in order(self.view):
            if key == "matrix":
                self._matrix(report, out)
                continue
            found = section(report, key, self.view.top)
            if not found.rows:
                continue
            out.write(f"\n### {found.title}\n\n")
            out.write("| " + " | ".join(c.title for c in found.columns) + " |\n")
            out.write("|" + "|".join("---:" if c.kind in ("int", "rate") else "---" for c in found.columns) + "|\n")
            for row in found.rows:
                out.write("| " + " | ".join(self._cell(row[c.key], c) for c in found.columns) + " |\n")
            if note := more(len(found.rows), found.total):
                out.write(f"\n_{note}_\n")
        if report.approximate:
            out.write("\n_Some counts are folded: very many distinct tools, messages or days._\n")

    @staticmethod
    def _cell(value: Any, column: Column) -> str:
        if column.kind == "int":
            return _n(value)
        return markdown_text(flat(value, column.kind))

    def _matrix(self, report: Report, out: TextIO) -> None:
        kinds, tools, cells = kind_tool_matrix(report, self.view.top, self.view.top)
        if not cells:
            return
        out.write("\n### Failures by kind and tool\n\n")
        out.write("| kind | " + " | ".join(markdown_text(t) for t in tools) + " |\n")
        out.write("|---|" + "---:|" * len(tools) + "\n")
        for kind in kinds:
            out.write(f"| {markdown_text(kind)} | " + " | ".join(_n(cells[(kind, t)]) if cells.get((kind, t)) else "·"
                                                          for t in tools) + " |\n")


def _n(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


class RichRenderer(Renderer):
    """Tables and small bar charts for a terminal; narrow terminals get fewer columns.

    Untrusted text only ever reaches rich as ``Text`` (never as markup), already made safe.
    """

    name = "rich"
    #: from this many columns on, every column is shown
    WIDE = 120

    def __init__(self, view: View = View(), console: Any = None) -> None:
        super().__init__(view)
        self.console = console

    def write(self, report: Report, out: TextIO) -> None:
        console = self.console
        if console is None:
            from rich.console import Console

            color = self.view.color
            console = Console(file=out, highlight=False, emoji=False, markup=False, force_terminal=color,
                              **({"color_system": None} if color is False else {}))
        self.print(console, report)

    def print(self, console: Any, report: Report) -> None:
        from rich.text import Text

        width = console.width
        console.print(self._header(report), no_wrap=True, overflow="ellipsis")
        console.print(self._totals(report, width >= self.WIDE))
        for key in order(self.view):
            if key == "matrix":
                title, (table, note) = "Failures by kind and tool", self._matrix(report, width)
            else:
                found = section(report, key, self.view.top)
                title, table = found.title, self._table(found, width) if found.rows else None
                note = more(len(found.rows), found.total)
            if table is not None:
                console.print()
                console.print(Text(title, style="bold"))
                console.print(table)
                if note:
                    console.print(Text(note, style="dim"))
        if report.approximate:
            console.print(Text("\nSome counts are folded: very many distinct tools, messages or days.", style="dim"))

    @staticmethod
    def _header(report: Report) -> Any:
        from rich.text import Text

        totals = report.totals
        text = Text("threadfix report", style="bold")
        text.append(f"  {_n(totals.threads)} threads", style="bold")
        text.append(f" · {_n(totals.stuck_threads)} stuck", style="bold red" if totals.stuck_threads else "green")
        text.append(f" · {_n(totals.error_outputs)} error outputs", style="yellow" if totals.error_outputs else "green")
        if totals.unreadable:
            text.append(f" · {_n(totals.unreadable)} unreadable", style="bold red")
        return text

    @staticmethod
    def _totals(report: Report, wide: bool) -> Any:
        from rich.table import Table
        from rich.text import Text

        totals = totals_row(report)
        alarming = {"stuck_threads", "dangling_calls", "refused_threads", "unreadable"}
        always = {"threads", "calls", "outputs", "error_outputs", "dangling_calls", "stuck_threads", "refused_threads"}
        pairs = [(label, totals[key], key) for key, label in TOTALS if totals[key] or key in always]
        per_row = 3 if wide else 2
        grid = Table.grid(padding=(0, 1), pad_edge=True)
        for _ in range(per_row):
            grid.add_column(justify="right", no_wrap=True)
            grid.add_column(style="dim", no_wrap=True)
        for start in range(0, len(pairs), per_row):
            cells: list[Any] = []
            for label, value, key in pairs[start:start + per_row]:
                cells += [Text(_n(value), style="bold red" if key in alarming and value else "bold"), Text(label + "  ")]
            grid.add_row(*cells)
        return grid

    def _table(self, found: Section, width: int) -> Any:
        """Numbers and names get the width they need (names within a cap); free text gets the rest."""
        from rich import box
        from rich.table import Table

        wide = width >= self.WIDE
        columns = [c for c in found.columns if (wide or not c.wide) and c.key != "example"]
        bar_width = (20 if wide else 8) if found.bar else 0
        widths = {c.key: self._width(found, c, width) for c in columns if c.kind in ("int", "rate", "key")}
        free_columns = [c for c in columns if c.key not in widths]
        gaps = 2 * (len(columns) - 1 + (1 if found.bar else 0))  # a divider and a pad between columns
        room = width - sum(widths.values()) - gaps - bar_width
        free = room // len(free_columns) if free_columns else 0
        if free_columns and free < 10:  # too narrow for a list of names: leave it out
            columns = [c for c in columns if c.key in widths or c.key == "pattern"]
            free_columns = [c for c in columns if c.key not in widths]
            free = max(10, room + 2) if free_columns else 0
        table = Table(box=box.SIMPLE_HEAD, header_style="dim", pad_edge=False, show_edge=False, padding=(0, 0, 0, 1))
        peak = max((row[found.bar] or 0 for row in found.rows), default=0) if found.bar else 0
        for column in columns:
            numeric = column.kind in ("int", "rate")
            size = widths.get(column.key, free)
            table.add_column(column.title, justify="right" if numeric else "left", width=size, no_wrap=column.key != "pattern",
                             overflow="fold" if column.key == "pattern" else "ellipsis",
                             style="magenta" if column.key == "kind" else None)
            if column.key == found.bar:
                table.add_column("", no_wrap=True, width=bar_width)
        for row in found.rows:
            cells: list[Any] = []
            for column in columns:
                cells.append(self._cell(row, column, widths.get(column.key, free)))
                if column.key == found.bar:
                    cells.append(_bar(row[column.key] or 0, peak, bar_width))
            table.add_row(*cells)
        return table

    @staticmethod
    def _width(found: Section, column: Column, width: int) -> int:
        """Numbers as wide as their header or widest value; names as their longest value, within a cap."""
        values = [flat(row[column.key], column.kind) for row in found.rows]
        if column.kind == "int":
            values = [_n(row[column.key]) for row in found.rows]
        longest = max([len(column.title)] + [len(value) for value in values])
        if column.kind in ("int", "rate"):
            return longest
        cap = max(16, width * 45 // 100) if column.key == "address" else max(14, width // 4)
        return min(cap, longest)

    @staticmethod
    def _cell(row: dict[str, Any], column: Column, size: int) -> Any:
        from rich.text import Text

        value = row[column.key]
        if column.kind == "int":
            return Text(_n(value))
        if column.kind == "rate":
            if value is None:
                return Text("–", style="dim")
            return Text(flat(value, "rate"), style="red" if value >= 0.2 else "yellow" if value >= 0.05 else "green")
        if column.kind == "map":
            text = Text()
            for i, (name, count) in enumerate(value.items()):
                if i:
                    text.append(" · ", style="dim")
                text.append(name)
                text.append(f" {_n(count)}", style="dim")
            return text
        if column.key == "pattern":
            text = Text(value)
            text.append("\ne.g. ", style="dim")
            text.append(_left_cut(row["example"], size - 5), style="dim")
            return text
        if column.key == "address":
            return Text(_left_cut(value, size))
        if column.key == "first":
            return Text(f"#{value}")
        return Text(flat(value, column.kind))

    def _matrix(self, report: Report, width: int) -> tuple[Any, str | None]:
        """The commonest kinds × as many of the most failing tools as the width holds."""
        from rich import box
        from rich.table import Table
        from rich.text import Text

        room = max(1, (width - 22) // 13)
        kinds, tools, cells = kind_tool_matrix(report, min(room, self.view.top), self.view.top)
        if not cells:
            return None, None
        failing = sum(1 for stats in report.tools.values() if stats.failures)
        note = None
        if failing > len(tools):
            note = (more(len(tools), failing, " tools") if len(tools) == self.view.top else
                    f"… {failing - len(tools):,} more tools (a wider terminal shows more)")
        table = Table(box=box.SIMPLE_HEAD, header_style="dim", pad_edge=False, show_edge=False)
        table.add_column("kind", no_wrap=True, style="magenta")
        for tool in tools:
            table.add_column(Text(tool), justify="right", no_wrap=True, overflow="ellipsis", max_width=12)
        peak = max(cells.values())
        for kind in kinds:
            row: list[Any] = [Text(kind)]
            for tool in tools:
                count = cells.get((kind, tool), 0)
                style = "bold red" if count == peak else "red" if count * 2 >= peak else ""
                row.append(Text(_n(count), style=style) if count else Text("·", style="dim"))
            table.add_row(*row)
        return table, note


def _left_cut(text: str, width: int) -> str:
    """Keep the end of a long address (the line, id and item are what tell threads apart)."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


_EIGHTHS = " ▏▎▍▌▋▊▉"


def _bar(value: int, peak: int, width: int) -> Any:
    """A horizontal bar, ``width`` cells for ``peak``, in eighths of a cell."""
    from rich.text import Text

    if peak <= 0 or value <= 0:
        return Text("")
    eighths = max(1, round(value / peak * width * 8))
    full, part = divmod(eighths, 8)
    return Text("█" * full + (_EIGHTHS[part] if part else ""), style="red")


RENDERERS: dict[str, type[Renderer]] = {
    cls.name: cls for cls in (RichRenderer, TsvRenderer, JsonRenderer, CsvRenderer, MarkdownRenderer)
}


def get(name: str) -> type[Renderer]:
    return RENDERERS[name]


__all__ = ["RENDERERS", "Column", "Renderer", "Section", "View", "clean", "clean_row", "flat", "get", "section"]
