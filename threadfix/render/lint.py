"""What ``lint`` prints: findings as grep-able lines, JSON, JSON Lines, GitHub annotations or SARIF.

Formatters are chosen by name from :data:`FORMATTERS`; each streams findings as threads are linted
(memory stays flat however many there are) and writes bytes to a binary stream (stdout's buffer).

Untrusted text (messages quote call ids, tool names, output excerpts and provider messages) reaches
the formats differently: text-like formats (text, github) pass it through ``terminal_safe``; JSON
formats carry it as it is, JSON-escaped. Secrets were masked when the finding was made, and call ids,
tool names and thread keys are masked here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import IO, Any, ClassVar
from urllib.parse import quote

from threadfix import __version__
from threadfix.batch import Problem
from threadfix.failures import clip
from threadfix.jsonio import dumps_os_strings
from threadfix.lint import LintSummary, ThreadResult
from threadfix.model import Finding, Severity
from threadfix.render.lint_summary import (JSON_END, JSON_START, JSON_SUMMARY, problem_fields, summary_fields,
                                          summary_words)
from threadfix.render.repair import item_label
from threadfix.render.safe import terminal_safe
from threadfix.rules import Rule
from threadfix.secrets import mask_secrets

#: untrusted identifiers in JSON output are cut to this many characters
ID_CHARS = 1000
MESSAGE_WIDTH = 400


def finding_address(finding: Finding) -> str:
    """``path:LINE:key#item``: where a finding is, as the text format prints it."""
    address = str(finding.address)
    return address if finding.item is None else f"{address}#{item_label(finding.item)}"


def _untrusted(value: str | None) -> str | None:
    return None if value is None else mask_secrets(clip(value, ID_CHARS))


def finding_json(finding: Finding) -> dict[str, Any]:
    """One finding as plain JSON-able data (the json, jsonl and sarif formats share it)."""
    address = finding.address
    record: dict[str, Any] = {
        "address": _untrusted(finding_address(finding)),
        "path": address.source,
        "line": address.line,
        "thread": _untrusted(address.key),
        "item": item_label(finding.item) if finding.item is not None else None,
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "call_id": _untrusted(finding.call_id),
        "tool": _untrusted(finding.tool),
        "kind": finding.kind.value if finding.kind is not None else None,
        "fixable": finding.fixable,
    }
    for key, value in finding.extra.items():
        record.setdefault(key, value.value if hasattr(value, "value") else value)
    return record


def problem_json(problem: Problem) -> dict[str, Any]:
    return problem_fields(problem.where, problem.message, int(problem.exit_code))


def summary_json(summary: LintSummary) -> dict[str, Any]:
    return summary_fields(summary.threads, summary.flagged, summary.findings, summary.fixable, summary.recent,
                          summary.waiting, _by_severity(summary), summary.by_code,
                          [problem_json(p) for p in summary.problems])


def _by_severity(summary: LintSummary) -> dict[str, int]:
    return {s.value: n for s, n in summary.by_severity.items()}


class Formatter:
    """Receives the run's rules, then each thread's result, then the summary; writes to ``out``."""

    name: ClassVar[str]
    help: ClassVar[str]

    def __init__(self, out: IO[bytes], rules: Sequence[Rule]) -> None:
        self.out = out
        self.rules = rules

    def start(self) -> None:
        """Called once before any result."""

    def thread(self, result: ThreadResult) -> None:
        for finding in result.findings:
            self.finding(finding)

    def finding(self, finding: Finding) -> None:
        raise NotImplementedError

    def finish(self, summary: LintSummary) -> None:
        """Called once after the last result."""
        self.out.flush()

    def write(self, text: str) -> None:
        self.out.write(text.encode("utf-8", "surrogateescape"))


#: SGR codes of the text format's styled parts when colour is on (the words stay the same)
SEVERITY_STYLE = {Severity.ERROR: "1;31", Severity.WARNING: "1;33", Severity.INFO: "1;36"}


class TextFormatter(Formatter):
    name = "text"
    help = "one grep-able line per finding: address#item: CODE message (rule-name)"
    #: style the code and the rule name (``--color``); the characters of the line do not change
    color = False

    def finding(self, finding: Finding) -> None:
        code, name = finding.code, f"({finding.name})"
        if self.color:
            code = f"\x1b[{SEVERITY_STYLE.get(finding.severity, '1')}m{code}\x1b[0m"
            name = f"\x1b[2m{name}\x1b[0m"
        self.write(f"{terminal_safe(finding_address(finding), 300)}: {code} "
                   f"{terminal_safe(finding.message, MESSAGE_WIDTH)} {name}\n")


class JsonLinesFormatter(Formatter):
    name = "jsonl"
    help = "one JSON object per finding and line"

    def finding(self, finding: Finding) -> None:
        self.out.write(dumps_os_strings(finding_json(finding)) + b"\n")


class JsonFormatter(Formatter):
    """One document: ``{"findings": [...], "summary": {...}}``, streamed so memory stays flat."""

    name = "json"
    help = 'one JSON document: {"findings": [...], "summary": {...}}'

    def start(self) -> None:
        self.first = True
        self.out.write(JSON_START)

    def finding(self, finding: Finding) -> None:
        self.out.write((b"" if self.first else b",") + dumps_os_strings(finding_json(finding)))
        self.first = False

    def finish(self, summary: LintSummary) -> None:
        self.out.write(JSON_SUMMARY + dumps_os_strings(summary_json(summary)) + JSON_END)
        super().finish(summary)


# --------------------------------------------------------------------------- GitHub workflow commands

_GITHUB_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def github_data(text: str) -> str:
    """Escape a workflow command's message: ``%``, CR and LF (then the rest is made terminal-safe)."""
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return terminal_safe(escaped, None)


def github_property(text: str) -> str:
    """Escape a workflow command's property value: the message escapes plus ``:`` and ``,``."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubFormatter(Formatter):
    """``::error file=…,line=…,title=…::message`` lines, which GitHub Actions shows as annotations."""

    name = "github"
    help = "GitHub Actions workflow commands (annotations on the files)"

    def finding(self, finding: Finding) -> None:
        address = finding.address
        props = [f"file={github_property(address.source)}"]
        if address.line is not None:
            props.append(f"line={address.line}")
        props.append(f"title={github_property(f'{finding.code} {finding.name}')}")
        message = f"{finding_address(finding)}: {finding.message}"
        self.write(f"::{_GITHUB_LEVELS[finding.severity]} {','.join(props)}::{github_data(clip(message, 2000))}\n")


# --------------------------------------------------------------------------- SARIF 2.1.0

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def artifact_uri(source: str) -> str:
    """A SARIF artifact URI: a relative reference with ``/`` separators, or a file URI when absolute."""
    path = PurePath(source)
    if path.is_absolute():
        try:
            return path.as_uri()
        except ValueError:
            pass
    return quote(source.replace("\\", "/"), errors="surrogateescape")  # a path's undecodable bytes, %-escaped


def sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.doc().split("\n", 1)[0]},
        "help": {"text": rule.doc(), "markdown": rule.doc()},
        "defaultConfiguration": {"level": _SARIF_LEVELS[rule.severity]},
        "properties": {"fix": rule.fix.value},
    }


class SarifFormatter(Formatter):
    """A SARIF 2.1.0 log with one run. Results are streamed; the driver follows them in the same object."""

    name = "sarif"
    help = "SARIF 2.1.0 (code scanning tools, IDEs)"

    def start(self) -> None:
        self.first = True
        self.index = {rule.code: i for i, rule in enumerate(self.rules)}
        self.out.write(b'{"$schema":' + dumps_os_strings(SARIF_SCHEMA) + b',"version":"2.1.0","runs":[{"results":[')

    def finding(self, finding: Finding) -> None:
        record = finding_json(finding)
        physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(finding.address.source)}}
        if finding.address.line is not None:
            physical["region"] = {"startLine": finding.address.line}
        result = {
            "ruleId": finding.code,
            "ruleIndex": self.index[finding.code],
            "level": _SARIF_LEVELS[finding.severity],
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": physical,
                           "logicalLocations": [{"fullyQualifiedName": record["address"]}]}],
            "partialFingerprints": {"threadfix/v1": _fingerprint(finding)},
            "properties": {k: record[k] for k in ("thread", "item", "call_id", "tool", "kind", "fixable")},
        }
        self.out.write((b"" if self.first else b",") + dumps_os_strings(result))
        self.first = False

    def finish(self, summary: LintSummary) -> None:
        driver = {"name": "threadfix", "version": __version__, "rules": [sarif_rule(r) for r in self.rules]}
        invocation = {
            "executionSuccessful": not summary.problems,
            "toolExecutionNotifications": [
                {"level": "error", "message": {"text": p.message},
                 "locations": [{"physicalLocation": {"artifactLocation": {"uri": artifact_uri(p.where)}}}]}
                for p in summary.problems
            ],
        }
        self.out.write(b'],"tool":{"driver":' + dumps_os_strings(driver) + b'},"invocations":['
                       + dumps_os_strings(invocation) + b"]}]}\n")
        super().finish(summary)


def _fingerprint(finding: Finding) -> str:
    """Stable across runs while the finding stands at the same call of the same thread."""
    import hashlib  # SARIF alone needs it: kept out of the start-up of the other formats

    parts = (finding.code, str(finding.address), finding.call_id or "", item_label(finding.item) if finding.item else "")
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


FORMATTERS: dict[str, type[Formatter]] = {
    cls.name: cls for cls in (TextFormatter, JsonFormatter, JsonLinesFormatter, GithubFormatter, SarifFormatter)
}


def summary_line(summary: LintSummary) -> str:
    """``N findings in M threads (X errors, Y warnings)``, and what else a person should know."""
    return summary_words(summary.findings, summary.flagged, summary.threads, _by_severity(summary), summary.recent,
                         summary.waiting, summary.fixable, len(summary.problems))
