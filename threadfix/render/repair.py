"""What ``repair`` prints: one grep-able line per change (or JSON), diffs, and the summary line."""

from __future__ import annotations

import sys
from typing import Any

from threadfix.batch import Problem, RunResult, ThreadOutcome
from threadfix.jsonio import dumps_os_strings
from threadfix.model import Edit, Loc, Skip
from threadfix.repair import id_label, refusal_reason
from threadfix.render.safe import terminal_safe

_VERBS = {
    "insert_output": "add error output for",
    "insert_saved_output": "add saved output for",
    "move_output": "move output of",
    "convert_orphan": "keep as message: orphan output of",
    "drop_orphan": "drop orphan output of",
    "convert_duplicate": "keep as message: extra output of",
    "drop_duplicate": "drop threadfix output (a real one exists) of",
    "move_text": "move text ahead of call",
    "convert_call": "keep as message: call in a user message,",
}


def item_label(at: Loc) -> str:
    message, block = at
    return f"{message}" if block < 0 else f"{message}.{block}"


def edit_json(edit: Edit) -> dict[str, Any]:
    return {
        "action": edit.action.value, "call_id": edit.call_id, "tool": edit.tool, "item": item_label(edit.at),
        "kind": edit.kind.value if edit.kind else None, "cause": edit.cause, "evidence": edit.evidence,
    }


def skip_json(skip: Skip) -> dict[str, Any]:
    return {"call_id": skip.call_id, "tool": skip.tool, "item": item_label(skip.at), "reason": skip.reason}


def edit_line(address: str, edit: Edit) -> str:
    call = terminal_safe(edit.call_id if edit.call_id is not None else "(no id)", 80)
    tool = f" ({terminal_safe(edit.tool, 60)})" if edit.tool else ""
    why = f": {edit.kind.value}, {edit.evidence}" if edit.kind else (f": {edit.evidence}" if edit.evidence else "")
    return f"{terminal_safe(address, 300)}#{item_label(edit.at)}: {_VERBS[edit.action.value]} {call}{tool}{why}"


class RepairPrinter:
    """Streams results to stdout as they come: text lines, one JSON document, or JSON Lines (a record per thread
    that changed or was skipped, then ``{"summary": ...}``)."""

    def __init__(self, fmt: str, *, on_problem, diff: bool = False, quiet_stdout: bool = False) -> None:
        self.on_problem = on_problem
        self.fmt = fmt
        self.diff = diff
        self.quiet = quiet_stdout  # stdin mode: stdout carries only the repaired document
        self.out = sys.stdout
        self.first = True
        if fmt == "json" and not self.quiet:
            self.out.write('{"threads":[')

    def outcome(self, outcome: ThreadOutcome | Problem) -> None:
        if isinstance(outcome, Problem):
            self.on_problem(outcome.where, outcome.message)
            return
        if outcome.status == "left_alone":  # an input error: one line on stderr, whatever the format
            self.on_problem(outcome.address, outcome.message or "left alone")
        if self.quiet and outcome.plan.skips:  # stdout carries the document: the refusal is said on stderr
            self.on_problem(outcome.address, refusal_reason(outcome.plan))
        if outcome.status in ("healthy", "not_written") or self.quiet or (outcome.status == "left_alone" and self.fmt != "json"):
            return
        if self.fmt in ("json", "jsonl"):
            self._json(outcome)
        elif self.diff and outcome.before is not None and outcome.after is not None:
            from threadfix.render.diff import unified_diff  # only with --diff (issue #28)

            self.out.write(unified_diff(outcome.address, outcome.before, outcome.after))
        else:
            self._text(outcome)

    def _text(self, outcome: ThreadOutcome) -> None:
        address = outcome.address
        if outcome.status in ("recent", "waiting"):
            self.out.write(f"{terminal_safe(address, 300)}: skipped: {terminal_safe(outcome.message or '', 300)}\n")
        else:
            for edit in outcome.plan.edits:
                self.out.write(edit_line(address, edit) + "\n")
        # a refused call is said whatever else happened to its thread (it counts in the summary and exit code)
        for skip in outcome.plan.skips:
            call = terminal_safe(id_label(skip.call_id), 80)
            self.out.write(f"{terminal_safe(address, 300)}#{item_label(skip.at)}: not repaired {call}: {skip.reason}\n")

    def _json(self, outcome: ThreadOutcome) -> None:
        record = {
            "address": outcome.address, "dialect": outcome.dialect, "status": outcome.status,
            "message": outcome.message, "edits": [edit_json(e) for e in outcome.plan.edits],
            "skips": [skip_json(s) for s in outcome.plan.skips],
        }
        if self.fmt == "jsonl":
            self.out.write(dumps_os_strings(record).decode() + "\n")
        else:
            self.out.write(("" if self.first else ",") + dumps_os_strings(record).decode())
        self.first = False

    def finish(self, result: RunResult) -> None:
        if self.fmt in ("json", "jsonl") and not self.quiet:
            summary = {
                "threads": result.threads, "changed": result.changed, "edits": result.edits, "recent": result.recent,
                "waiting": result.waiting,
                "skipped_calls": result.skipped_calls,
                "problems": [{"where": p.where, "message": p.message, "exit_code": int(p.exit_code)} for p in result.problems],
                "journal": str(result.journal) if result.journal else None,
            }
            if self.fmt == "jsonl":
                self.out.write(dumps_os_strings({"summary": summary}).decode() + "\n")
            else:
                self.out.write('],"summary":' + dumps_os_strings(summary).decode() + "}\n")
        self.out.flush()

    @staticmethod
    def summary(result: RunResult, *, writes: bool) -> str:
        verb = "repaired" if writes else "would repair"
        edits = ", ".join(f"{count} {action.replace('_', ' ')}" for action, count in sorted(result.edits.items()))
        parts = [f"{verb} {result.changed} of {result.threads} thread{'s' if result.threads != 1 else ''}"]
        if edits:
            parts[0] += f" ({edits})"
        if result.recent:
            parts.append(f"{result.recent} skipped as recent (--min-age)")
        if result.waiting:
            parts.append(f"{result.waiting} waiting on a person or another process (--leave-tool, --answer-waiting)")
        if result.left_alone:
            parts.append(f"{result.left_alone} left alone")
        if result.skipped_calls:
            parts.append(f"{result.skipped_calls} call{'s' if result.skipped_calls != 1 else ''} left alone")
        if result.problems:
            parts.append(f"{len(result.problems)} error{'s' if len(result.problems) != 1 else ''}")
        return "; ".join(parts)
