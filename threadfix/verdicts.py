"""Whether a stored output is a failure, and which: what lint's rules and report read of every output.

Report classifies every output and lint's output rules classify many, and in real stores many outputs
come back word for word (an "ok", "Plan updated", the same patch result, the same rate-limit error: a
quarter of the outputs of the sample agent sessions). :func:`threadfix.failures.classify` is a pure
function of (content, flag, status), so a short text's answer is kept and given again when the text comes
back. The cache is bounded, so memory does not grow with the store.

A text with no flag and no status that the classifier's screen rejects (the test of
:func:`threadfix.failures.could_be_failure`: a plain result, most outputs) is a success, told without classifying it.
The screen is the cheapest exact test there is: any faster one would have to copy its words, and fall out of step
when the classifier gains a rule. What can be skipped exactly is asking it twice: a short text answered at once as a
result (by the screen, or as one of the objects below) is remembered in :data:`_results` when it is no longer than
:data:`RESULT_CHARS`, bounded and apart from the cache of answers so that unique results never push a failure's
answer out, and when it comes back ("ok", "Plan updated", the same patch result, the same search result: a third of
the healthy texts of the sample agent sessions) one lookup answers it. A text the screen passes is read on from where the screen left it, its first line
not read twice.

A reply of one text part that the classifier reads exactly as its text alone
(:func:`threadfix.failures.classifier.lone_text`, the common shape of MCP and Anthropic tool results) takes
the same way as that text.

A JSON object with no flag and no status whose keys no reader of error shapes looks at (the classifier's
``plain_result_object``: ``{"results": [...]}``, ``{"location": ..., "temperature": ...}``, half the outputs of the
benchmark store) is a result: classify parses it and says so at its first test, and so is it answered here, parsed
once, without the screen, the cache or the classifier's walk down to that test. A shell tool's result that says it
exited 0 and nothing else (Codex's ``{"output": ..., "metadata": {"exit_code": 0}}``, a sixth of the benchmark store)
is read by its output's words alone, since a pipe's status is its last command's: when that output is plain text
(:func:`threadfix.failures.classifier.exited_zero_output`), it is answered as that text is, screened, cached and
remembered as that text, the object parsed once. Any other object is classified
from the object parsed here (:func:`threadfix.failures.classifier.classify_parsed`), never parsed a second time.

``FAST = False`` turns all of these off; the tests compare the two ways on generated stores and the case files.
"""

from __future__ import annotations

from typing import Any

import orjson

from threadfix.failures.classifier import (
    PARSE_LIMIT,
    Classification,
    classify,
    classify_parsed,
    classify_screened,
    exited_zero_output,
    lone_text,
    plain_result_object,
    screen,
)

#: False: every output goes through classify, uncached (the tests compare the two ways)
FAST = True
#: texts up to this many characters have their answer cached
CACHE_CHARS = 1024
#: results up to this many characters are remembered (the texts that come back are short: every repeated result of
#: the sample agent sessions is; a longer one costs more to hash than it is likely to save)
RESULT_CHARS = 256
#: answers cached at most; the cache starts again empty when full (a few MB of short texts at most)
CACHE_ENTRIES = 4096
#: by the text alone when the wire has no flag or status (most outputs), else by (text, flag, status)
_cache: dict[Any, Classification | None] = {}
#: short texts with no flag and no status answered as results at once (by the screen, or as a plain or exited-0
#: object), each asked of the classifier once; starts again empty when full, as the cache does
_results: set[str] = set()
_MISSING: Any = object()
#: what a text was parsed to when it was not parsed (None: it was, and is not JSON)
_NOT_PARSED: Any = object()


def failure_of(content: Any, is_error: bool | None = None, status: str | None = None) -> Classification | None:
    """The output's classification when it is a failure (an error output), else None."""
    if FAST and content.__class__ is list and is_error is None and status is None:
        text = lone_text(content)
        if text is not None:
            content = text  # a reply of one text part reads as its text: screened and cached as one
    if FAST and content.__class__ is str:
        screened = None
        parsed: Any = _NOT_PARSED
        if is_error is None and status is None:
            size = len(content)
            short = size <= RESULT_CHARS
            if short and content in _results:
                return None
            if content[:1] == "{" and len(content) <= PARSE_LIMIT:
                # classify parses such a text whole (the screen would only say so): parsed here, once
                parsed = _object(content)
                if parsed is not None:
                    if plain_result_object(parsed):
                        if short:
                            _remember_result(content)
                        return None
                    output = exited_zero_output(parsed)
                    if output is not None:
                        # read as its output alone: screened, cached and remembered as that text
                        found = failure_of(output)
                        if found is None and short:
                            _remember_result(content)
                        return found
            else:
                screened = screen(content)
                if screened is None:
                    if short:
                        _remember_result(content)
                    return None
            if size > CACHE_CHARS:
                return _failure(content, is_error, status, screened, parsed)
            key: Any = content
        elif len(content) > CACHE_CHARS:
            return _failure(content, is_error, status)
        elif (is_error is None or is_error is True or is_error is False) and (status is None or status.__class__ is str):
            key = (content, is_error, status)  # 1 and True hash alike: only the flag's own values are keys
        else:
            return _failure(content, is_error, status)
        found = _cache.get(key, _MISSING)
        if found is _MISSING:
            found = _failure(content, is_error, status, screened, parsed)
            if len(_cache) >= CACHE_ENTRIES:
                _cache.clear()
            _cache[key] = found
        return found
    return _failure(content, is_error, status)


def _remember_result(text: str) -> None:
    if len(_results) >= CACHE_ENTRIES:
        _results.clear()
    _results.add(text)


def _failure(content: Any, is_error: bool | None, status: str | None, screened: tuple[str, bool] | None = None,
             parsed: Any = _NOT_PARSED) -> Classification | None:
    """classify's answer when it is a failure: from what the text opening with ``{`` parsed to (``parsed``: an object,
    or None when it is not JSON), from where the screen left the text, or from the start."""
    if parsed is not _NOT_PARSED:
        found = classify_parsed(content, parsed)
    elif screened is not None:
        found = classify_screened(content, screened)
    else:
        found = classify(content, is_error=is_error, status=status)
    return found if found.is_error else None


def _object(text: str) -> dict[Any, Any] | None:
    """The object ``text`` (which opens with ``{`` and is no longer than PARSE_LIMIT) parses to, as classify (no
    flag, no status) parses it whole; None when it is not JSON, and classify reads it as text."""
    try:
        return orjson.loads(text)  # a text that opens with "{" parses to an object or not at all
    except orjson.JSONDecodeError:
        return None
