from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from threadfix.model import Finding, Output, Severity
from threadfix.patterns import Lazy
from threadfix.rules import marks
from threadfix.rules.base import Rule, call_label, quoted

if TYPE_CHECKING:
    from threadfix.rules.context import Context

#: Where a tool's own code lives (an installed package, a deployed app, a runtime), as opposed to a path
#: the model asked about. Matched in error outputs only, once :func:`_may_leak` lets one through.
_IMPLEMENTATION_PATH = Lazy(
    r"(?<![\w.~-])(?:"
    r"/(?:srv|opt|app|var/task|var/www|var/lib|usr/lib|usr/local/lib|workspace)/[^\s\"'<>|:]+"
    r"|(?:[A-Za-z]:\\|/)(?:[^\s\"'<>|:]*?[/\\])?"
    r"(?:site-packages|dist-packages|node_modules|\.venv|Program Files(?: \(x86\))?)[/\\][^\s\"'<>|:]*)"
)
#: What an output must hold for this rule to find anything in it: a marker of the paths above, or of every
#: stack trace shape the failure classifier recognises (a Python traceback header, a JVM thread line, a
#: frame line "  at f (file:1:2)", also inside JSON text, a JVM "... 3 more" trailer, Node's "Node.js v20").
#: Checked over all of a thread's outputs at once, far cheaper than classifying each (the tests hold a case
#: per shape). Each regex starts with one literal character, which ``re`` skips to far faster than to any
#: of a set; a frame line needs "at" and a space, which the frame regexes look for only in text that has one.
_INSTALLED = r"(?:srv/|opt/|app/|var/|usr/|workspace/|site-packages|dist-packages|node_modules|\.venv|Program Files)"
_INSTALLED_AFTER_SLASH = (re.compile("/" + _INSTALLED), re.compile(r"\\" + _INSTALLED))
_AT_SPACE = re.compile(r"at\s")
_FRAME_LINES = (re.compile(r"\n\s*at\s"), re.compile(r"\\n\s*at\s"))
_MORE = re.compile(r"\.\.\.\s+\d+\s+more")
_MARKERS = ("Traceback (most recent call last)", "Exception in thread", "Node.js")


def _frame_line(text: str) -> bool:
    return _AT_SPACE.search(text) is not None and any(frame.search(text) for frame in _FRAME_LINES)


def _marker(text: str) -> bool:
    return any(marker in text for marker in _MARKERS)


#: The tests :func:`_may_leak` makes. Each finds its mark in any text that holds a text it finds it in (no
#: lookaround, no anchor), so a test that fails on all of a thread's outputs fails on each of them: only the
#: tests that pass on the whole are made again output by output.
_TESTS: tuple[Callable[[str], object], ...] = (
    *(path.search for path in _INSTALLED_AFTER_SLASH), _frame_line, _marker, _MORE.search,
)


def _may_leak(text: str) -> bool:
    """False only when ``text`` (which starts with a newline) holds no path or trace this rule reports."""
    return any(test(text) for test in _TESTS)


#: Words in a classification's evidence that say it recognised a stack trace.
_TRACE_EVIDENCE = ("traceback", "stack trace")


class InternalsLeaked(Rule):
    """An error output that shows the model the tool's own internals.

    ## What it does
    Finds error outputs that carry a stack trace (Python, JVM, Node... as the failure classifier
    recognises them) or a path inside the tool's own installation (`site-packages`, `node_modules`,
    `/srv/...`, `/app/...`, `/var/task/...`). A path the call's own arguments name is not reported:
    echoing it back is the tool doing its job.

    ## Why is this bad?
    The model cannot act on a stack trace; it wastes context and often makes the model retry
    blindly or apologise vaguely. It also discloses the server's layout, library versions and
    sometimes data from local variables to whoever reads the chat, and to the model provider.

    ## Example
    ```json
    [{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}}]},
     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
      "content": "Traceback (most recent call last):\\n  File \\"/srv/app/tools/search.py\\", line 12, in run\\nKeyError: 'q'"}]}]
    ```

    ## Use instead
    Catch failures at the tool boundary, log the trace on the server, and give the model a short,
    structured error: `{"error": {"code": "invalid_arguments", "cause": "missing field q", "fix": "pass q"}}`.

    ## Fix
    None: the tool must stop sending them.
    """

    code = "TF204"
    name = "internals-leaked"
    severity = Severity.WARNING
    summary = "an error output shows the model a stack trace or the tool's own file paths"
    reads = "text_marks"

    def check(self, ctx: Context) -> Iterator[Finding]:
        if not ctx.text_marks & marks.LEAK:  # one pass per thread for every text rule
            return
        # Without the pass every output is held: the tests over all the text at once leave out those that fail on
        # all of it. With it, the few outputs it holds are tested alone, and all the text is never joined.
        passing = _TESTS if ctx.texts_scanned else [test for test in _TESTS if test(ctx.all_text)]
        if not passing:
            return
        outputs, texts = ctx.index.outputs, ctx.texts
        # the pass that admitted the thread says which outputs a mark may be found in, far faster than the tests
        for at in ctx.texts_holding(marks.LEAK):
            output = outputs[at]
            if output.by_threadfix:
                continue
            text = "\n" + texts[at]
            if not any(test(text) for test in passing):
                continue
            failure = ctx.failure(output)
            if failure is None:
                continue
            evidence = failure.evidence.lower()
            if any(word in evidence for word in _TRACE_EVIDENCE):
                what, shown = "a stack trace", failure.excerpt or ctx.text(output)
            elif (path := _leaked_path(ctx, output)) is not None:
                what, shown = "a path inside the tool's installation", path
            else:
                continue
            tool = ctx.tool_of(output)
            yield self.finding(ctx, f"error output of call {call_label(output.call_id, tool)} shows {what} to the model: "
                               f"{quoted(shown, 80)}", at=output.at, call_id=output.call_id, tool=tool,
                               kind=failure.kind, excerpt=shown)


def _leaked_path(ctx: Context, output: Output) -> str | None:
    """The first implementation path in the output that its call's arguments do not name."""
    call = ctx.call_of(output)
    asked = str(call.arguments) if call is not None and call.arguments is not None else ""
    for found in _IMPLEMENTATION_PATH.finditer(ctx.text(output)):
        if found.group() not in asked:
            return found.group()
    return None


RULE = InternalsLeaked()
