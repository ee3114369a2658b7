"""lint's summary from plain counts: its line on stderr, its fields in the JSON format, and that format's frame.

A run whose paths all name nothing prints the summary of a run that read nothing before the library is imported
(issue #28); the run's own formatters build theirs from here too, so that the two answers cannot drift apart.
This module imports nothing.
"""

from __future__ import annotations

#: the severities in the order the summary counts them (``threadfix.model.Severity``'s values)
SEVERITIES = ("error", "warning", "info")
#: the JSON format's one document: ``{"findings":[...],"summary":{...}}`` and a newline
JSON_START = b'{"findings":['
JSON_SUMMARY = b'],"summary":'
JSON_END = b"}\n"


def summary_words(findings: int, flagged: int, threads: int, by_severity: dict[str, int], recent: int,
                  waiting: int, fixable: int, problems: int) -> str:
    """``N findings in M threads (X errors, Y warnings)``, and what else a person should know."""
    errors, warnings, infos = (by_severity[severity] for severity in SEVERITIES)
    detail = f"{errors} error{_s(errors)}, {warnings} warning{_s(warnings)}"
    if infos:
        detail += f", {infos} info"
    line = f"{findings} finding{_s(findings)} in {flagged} of {threads} thread{_s(threads)} read ({detail})"
    if recent:
        line += f"; {recent} thread{_s(recent)} changed under --min-age ago, open calls not reported"
    if waiting:
        line += (f"; {waiting} thread{_s(waiting)} waiting on a person or another process (--leave-tool, "
                 "--answer-waiting), open calls not reported")
    if fixable:
        line += f"; {fixable} fixable with `threadfix repair`"
    if problems:
        line += f"; {problems} input error{_s(problems)}"
    return line


def summary_fields(threads: int, flagged: int, findings: int, fixable: int, recent: int, waiting: int,
                   by_severity: dict[str, int], by_code: dict[str, int], problems: list[dict[str, object]]
                   ) -> dict[str, object]:
    """The JSON format's ``summary``, its keys in the order they are printed."""
    return {"threads": threads, "threads_with_findings": flagged, "findings": findings, "fixable": fixable,
            "recent": recent, "waiting": waiting, "by_severity": by_severity, "by_code": dict(sorted(by_code.items())),
            "problems": problems}


def problem_fields(where: str | None, message: str, exit_code: int) -> dict[str, object]:
    return {"where": where, "message": message, "exit_code": exit_code}


def nothing_read(problems: list[dict[str, object]]) -> tuple[str, dict[str, object]]:
    """The summary line and the JSON summary of a run that read no thread, whose inputs gave ``problems``."""
    zeros = dict.fromkeys(SEVERITIES, 0)
    return (summary_words(0, 0, 0, zeros, 0, 0, 0, len(problems)),
            summary_fields(0, 0, 0, 0, 0, 0, zeros, {}, problems))


def _s(n: int) -> str:
    return "" if n == 1 else "s"
