"""Say what an existing tool output is: a result, or a failure of one kind, and what decided it.

Repair, lint and report all ask the same question of every output in a store, so there is one answer,
here. Outputs arrive in every wire's shape (a string that may hold JSON, a list of content parts, a
Gemini ``functionResponse.response``, an MCP result, an AI SDK typed output, a seed project's
structured error) and most of them are ordinary results, so the common path is a handful of cheap
checks on the first line and the last line; only outputs that already look like failures are scanned,
and never more than their first 4 KB and last 2 KB. Those checks are shortcuts in front of the full
reading (``_unframed`` for text, ``_unread`` for objects, ``_no_exit_word`` for exit codes,
``_no_stated_word`` for failures stated in words): each only
ever says "surely nothing here", never "a failure", and tests/failures/test_quick_paths.py turns them
off to hold them to the full reading. The patterns compile on first use, so importing this module is
cheap and a run over ordinary outputs compiles only the few they reach.

Precedence, highest first:

1. **The wire's verdict.** ``is_error=True`` or an error ``status`` (``error``, ``failed``,
   ``output-error``...) makes the output a failure even when nothing says why: ``unknown``, or the
   status's own kind (``output-denied``/``execution-denied`` → ``permission_denied``: a person refused
   to let the call run; ``cancelled`` → ``cancelled``; ``timeout`` → ``timeout``; ``incomplete`` /
   ``in_progress`` → ``aborted``: the output was never finished; statuses nobody listed are ignored).
   The wire saying error wins over the wire saying success. ``is_error=False`` or a success status is
   trusted for text; only a structured error object overrides it.
2. **Structure before text.** threadfix's own payload, the seed shapes (Rust ``{kind, detail,
   details}``, its wire variants and ``{subcode, message, details}``; TypeScript ``{error: {code,
   cause, fix}}``; Kotlin ``{error: true, aborted: true}``), provider error bodies, MCP ``isError``,
   and exit-code objects are read field by field. Inside an error object: a known code (a ``Kind``
   value, then a provider code such as ``insufficient_quota``) > what the message says > a numeric
   HTTP / JSON-RPC status > a vague code (``invalid_request_error``, ``INVALID_ARGUMENT``) > any other
   code (an ``invalid…`` code → ``invalid_arguments``, any other → ``custom``, keeping the code) >
   ``execution``. A rate-limit code over a message that names a finer limit (Google's
   ``RESOURCE_EXHAUSTED`` with "You exceeded your current quota", a 429 saying "too many concurrent
   requests") takes the message's kind. A tool's own refusal ``{error: {code, cause}}`` takes its kind
   from the code alone: a ``Kind`` value or known provider code, else ``custom``.
   RFC 7807 problem details (a type URI, a title and a detail, status or instance), a body that states
   its own 4xx/5xx status and why (``{"StatusCode": 429, "Description": ...}``) and a bare JSON-RPC error
   object (``{"code": -32602, "message": ...}``) are error bodies too.
3. **Unflagged text is a failure when a careful reader would call it one** (issue #24: Chat and
   Responses outputs carry no flag, and most real error outputs arrive that way). It leads with an
   error marker (``Error:``, ``ERROR``, ``API Error``, ``Traceback``, ``Exception in thread``, ``failed
   to``, an HTTP status, ``curl: (7)``, ``bash: x:``, ``(eval):1:``...); or states a non-zero exit code on
   its first or last line; or ends with an uncaught traceback or stack frames; or has an ``ERROR:`` /
   ``fatal:`` line among its first five lines (pip, pytest, compilers' ``file:line:col: error:`` and javac's
   ``file:line: error:``, the first line too; not in a fenced Markdown block); or is a short message led by
   an HTTP status and a phrase ("429 Too many tokens, please wait", "402 Insufficient Balance"); or, being a
   short message (at most 400 characters in three lines) or a line led by an HTTP status, states a failure
   in its first sentence, within 120 characters ("Tool 'x' not found", "Usage limit reached for all Pro models.",
   "You exceeded your current quota", "Rate limit exceeded", "Too many concurrent requests"). A
   sentence that describes, asks or negates is no report: a condition or a docstring ("if the request
   times out", "returns", "can", "when"; "fails", the present tense of a description), a hedged or
   concessive one ("appears to", "even though"), a question, "0 failed" / "no errors" / "no tool-style
   error", a failure noun after an article ("an error raised after...") or naming a thing ("the error
   message"), a word in quotes, a limit nobody hit ("Rate limits are per key."), Markdown, code spans, a
   grep hit (``path:12:``), JSON data, an English word in a sentence written in another script or in prose
   of a script written without spaces ("今天突然报错 Unauthorized: ..."), an issue's or a commit's title
   ("[Bug]: ...", "feat(api): ..."), an imperative whose object holds the failure words, as a docstring's
   or a commit's first line opens ("Return valid format or throw error", "Java: use error 429 for rate
   limiting"; "Cleanup failed" names its subject first), a value documented as ``None``. "Error when" or
   "Error response" before a description ("... may contain ...") is a docstring, and a traceback whose
   frames are written "..." a doctest. An exit
   code in quotes is a value, and "Uncaught" marks a failure only before an exception's name and a colon.
   A terminal UI's status mark (✖, ⚠, ❌) before a first line is stripped before it is read; a component's
   own error line ("OpenAI API error: ...") is a frame, marked or not. A short text written as a program's
   diagnostic ("expr: division by zero", "bzip2: notes.txt: bad magic number", "tr: missing operand" then
   "Try 'tr --help' ...") is that program's failure when its words name a defect (not a field of a
   listing, a title's type, a value or code, nor "Nothing to be done"); a fatal error marked as make and patch
   mark one ("make: *** No rule to make target 'x'.  Stop.", "patch: **** Only garbage ...") is one whatever
   its words, and a diagnostic that ends with GNU's "Try 'x --help' for more information." a usage error
   whatever its length. A line numbered as grep -n prints
   one ("247:  error(...)") is a listing, and a thread of people's comments ("name · comment · date") or an
   issue (a title, a blank line, a body in the first person, asking, or under Markdown headings) a
   discussion, whatever error it quotes.
   A traceback's last lines as ``tail`` keeps them (indented frames or source lines, then
   ``pkg.mod.SomeError: ...``), a module's exception followed by a database server's ``LINE``/``DETAIL``/``HINT``
   lines, Perl's die message ("... at -e line 1."), a line of http.server's error page ("<p>Error code: 504</p>")
   and a program's ``prog: error:`` line among the first few are failures too; a listing of exception names is not.
   A word such as "error" deeper in a
   file, log or grep result never flags a result; ``Exit code: 0`` on the frame line marks a success
   outright.
4. **Inside failure text, the headline first**: the first line, a Python traceback's final exception
   line, a JVM ``Caused by:``; then the scanned window. Signals are tried in a fixed order: out of
   memory, credits, usage limit, concurrency, global rate limit (a shared backend's load shed: Vertex
   AI's "Resource exhausted. Please try again later.", "No capacity available for model", a tier's
   capacity), rate limit, HTTP status, aborted (the
   seed's "Not finished: the turn ..."), truncated (cut off at max_tokens), malformed arguments ("not
   valid JSON"), render budget ("exceeds maximum allowed tokens"), an unsupported version (an MCP protocol
   version, a dated tool type a model does not take), timeout, cancellation,
   authentication, permission, network, unavailable, not implemented, unknown tool, not found, invalid
   arguments; last the general words about bad input (invalid, malformed, validation, is required),
   which an uncaught exception's message is not read for ("ValueError: invalid literal for int()" is
   the tool's crash). When the words and an HTTP status name different kinds, the kind a careful reader
   names first wins (the corpus's labelling order: cancellation and limits, network, service, timeout,
   bad keys, refusals, ..., missing things, bad input): "403 Forbidden: invalid api key" is a bad key;
   the general words about bad input never outrank a status. Then a non-zero exit code
   (``terminal_error``); then any generic marker (traceback, stack, ``Error:``) → ``execution``. A flagged text with no such marker but a word of
   failure is ``execution``; with none at all, ``unknown``. A quota that says when to retry is a rate
   quota (``rate_limited``), not an empty balance.
5. **A shell command that failed is a ``terminal_error``** (a non-zero exit code on the frame line, exit
   126, 127 and "command not found", 137 and "Killed" with "out of memory" in the evidence, 143, a
   shell's own error line such as ``bash: line 1: cd: x: No such file or directory``), refined only by
   what the environment did to the call: exit 124 or timeout text → ``timeout``, 130 or cancellation
   text → ``cancelled``. An exit status of 0 is no flag either way: a pipe's status is its last command's
   (``cmd 2>&1 | tail``), so a shell result that says it exited 0 is read by its output's words, as unflagged
   text is (Codex's ``{"output": ..., "metadata": {"exit_code": 0}}``).

HTTP statuses: 400/405/406/411-418/422 and other 4xx → ``invalid_arguments``, 401/407 →
``unauthorized``, 402 → ``usage_pool_exhausted``, 403/451 → ``permission_denied``, 404/410 →
``not_found``, 408/504/522/524 → ``timeout``, 409/500/507 → ``execution``, 429 → ``rate_limited``,
499 → ``cancelled``, 501 → ``not_implemented``, 523 → ``network_error``, 502/503/529 and other 5xx →
``service_unavailable``.
"""

from __future__ import annotations

import functools
import math
import re
import reprlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import orjson
from msgspec import Struct

from threadfix.failures.dangling import MARKER, MARKER_KEY, clip
from threadfix.failures.kinds import Kind
from threadfix.patterns import Lazy as _Lazy  # this module holds some 200 patterns: a run reaches a few

__all__ = ["Classification", "classify", "could_be_failure", "output_text", "refusal_payload"]

#: How much of a long text is read: failures announce themselves at the start or the end.
HEAD_CHARS = 4096
TAIL_CHARS = 2048
#: A JSON error object is small: a larger JSON string is parsed only when its first key is an envelope's
#: or an error's (Codex ``{"output": …, "metadata": {"exit_code": …}}``), never past MAX_PARSE.
PARSE_LIMIT = 16384
MAX_PARSE = 1 << 20
EXCERPT_CHARS = 200
CODE_CHARS = 128
CAUSE_CHARS = 1000
FIX_CHARS = 500
_MAX_DEPTH = 6
_MAX_PARTS = 64
_LINE_CHARS = 400


class Classification(Struct, frozen=True):
    """What one output is, with the evidence that decided it.

    ``excerpt`` is empty for a success: only failures are shown, and cutting one for every result of a
    large store would cost more than the classification.
    """

    kind: Kind
    is_error: bool
    evidence: str
    code: str | None = None
    retry_after: float | None = None
    tool_id: str | None = None
    excerpt: str = ""


class _Verdict(Struct, frozen=True):
    """A classification before its excerpt is cut; ``generic`` marks a kind a wire status may refine."""

    kind: Kind
    evidence: str
    code: str | None = None
    retry_after: float | None = None
    tool_id: str | None = None
    message: str = ""
    generic: bool = False


# --------------------------------------------------------------------------------------------------
# Codes: Kind values, provider codes, exception names. Compared normalised ("RESOURCE_EXHAUSTED",
# "resource-exhausted" and "ResourceExhausted" are one code).

_NON_ALNUM = _Lazy(r"[^a-z0-9]+")


def _norm(code: str) -> str:
    return _NON_ALNUM.sub("", code[:CODE_CHARS].lower())


_KIND_BY_NORM: dict[str, Kind] = {_norm(kind.value): kind for kind in Kind}

# Codes that name one cause whatever the message says (OpenAI, Anthropic, Google, AWS, Node, Python,
# Slack, JSON-RPC/MCP names).
_SPECIFIC_CODES: dict[Kind, tuple[str, ...]] = {
    Kind.RATE_LIMITED: (
        "rate_limit_exceeded", "rate_limit_error", "RateLimitError", "rate_limit", "ratelimited",
        "too_many_requests", "TooManyRequestsException", "ThrottlingException", "Throttling", "throttled",
        "RESOURCE_EXHAUSTED", "RequestLimitExceeded", "SlowDown", "quota_exceeded", "userRateLimitExceeded",
        "ProvisionedThroughputExceededException", "LimitExceededException",
    ),
    Kind.USAGE_POOL_EXHAUSTED: (
        "insufficient_quota", "insufficient_credits", "insufficient_balance", "insufficient_funds",
        "payment_required", "billing_hard_limit_reached", "billing_not_active", "credits_exhausted",
        "out_of_credits",
    ),
    Kind.USAGE_LIMIT_REACHED: ("usage_limit_exceeded", "max_uses_exceeded", "spend_limit_exceeded"),
    Kind.CONCURRENCY_LIMIT: ("concurrency_limit_exceeded", "too_many_concurrent_requests"),
    Kind.SERVICE_UNAVAILABLE: (
        "ServiceUnavailableException", "UNAVAILABLE", "overloaded_error", "overloaded", "engine_overloaded",
        "server_overloaded", "ModelNotReadyException", "bad_gateway", "ServiceUnavailableError",
    ),
    Kind.TIMEOUT: (
        "DEADLINE_EXCEEDED", "ModelTimeoutException", "timed_out", "request_timeout", "gateway_timeout",
        "TimeoutError", "ReadTimeout", "ConnectTimeout", "APITimeoutError", "ETIMEDOUT",
        "execution_time_exceeded", "RequestTimeoutException", "UND_ERR_CONNECT_TIMEOUT",
    ),
    Kind.CANCELLED: ("canceled", "CancelledError", "AbortError", "request_cancelled", "KeyboardInterrupt"),
    Kind.UNAUTHORIZED: (
        "authentication_error", "AuthenticationError", "UNAUTHENTICATED", "invalid_api_key",
        "invalid_authentication", "not_authed", "invalid_auth", "UnrecognizedClientException",
        "InvalidSignatureException", "ExpiredTokenException", "MissingAuthenticationTokenException",
        "API_KEY_INVALID", "invalid_token", "token_expired", "NotAuthorizedException",
    ),
    Kind.PERMISSION_DENIED: (
        "permission_error", "PermissionDeniedError", "forbidden", "AccessDenied", "AccessDeniedException",
        "EACCES", "EPERM", "PermissionError", "unsupported_country_region_territory",
        "insufficient_permissions", "output_denied", "execution_denied", "url_not_allowed", "missing_scope",
    ),
    Kind.NOT_FOUND: (
        "not_found_error", "NotFoundError", "ResourceNotFoundException", "NoSuchKey", "NoSuchBucket",
        "model_not_found", "ENOENT", "FileNotFoundError", "FileNotFoundException", "NoSuchFileException",
        "tool_not_found", "unknown_tool", "method_not_found", "file_not_found", "command_not_found",
    ),
    Kind.INVALID_ARGUMENTS: (
        "ValidationException", "ValidationError", "invalid_params", "invalid_parameter",
        "InvalidParameterValue", "InvalidParameterException", "context_length_exceeded",
        "string_above_max_length", "invalid_value", "missing_required_parameter", "RequestValidationError",
        "UnprocessableEntityError", "unprocessable_entity", "invalid_tool_input", "query_too_long",
        "invalid_json", "SerializationException", "invalid_arguments_error",
    ),
    Kind.NOT_IMPLEMENTED: (
        "UNIMPLEMENTED", "NotImplementedError", "UnsupportedOperationException", "unsupported_operation",
        "UnknownOperationException",
    ),
    Kind.NETWORK_ERROR: (
        "APIConnectionError", "ConnectionError", "ConnectError", "ECONNREFUSED", "ECONNRESET", "ENOTFOUND",
        "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ConnectionRefusedError",
        "ConnectionResetError", "ClientConnectorError", "ServerDisconnectedError", "RemoteDisconnected",
        "ERR_NETWORK", "url_not_accessible",
    ),
    Kind.EXECUTION: (
        "ModelErrorException", "InternalServerException", "internal_error", "InternalServerError",
        "tool_execution_error", "execution_error", "ModelStreamErrorException",
    ),
    Kind.TERMINAL_ERROR: ("CalledProcessError", "non_zero_exit", "nonzero_exit"),
}

# Codes too broad to decide alone: the message is read first (Anthropic answers a low credit balance
# with invalid_request_error, Google a bad API key with INVALID_ARGUMENT).
_VAGUE_CODES: dict[Kind, tuple[str, ...]] = {
    Kind.INVALID_ARGUMENTS: (
        "invalid_request_error", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE", "bad_request",
        "BadRequestError", "invalid_request",
    ),
    Kind.EXECUTION: ("api_error", "APIError", "server_error", "INTERNAL", "InternalError", "RuntimeError"),
    Kind.NETWORK_ERROR: ("ECONNABORTED",),
}

# Code endings that say the cause even for a code nobody listed (Slack's channel_not_found).
_CODE_SUFFIXES: tuple[tuple[str, Kind], ...] = (
    ("notfound", Kind.NOT_FOUND),
    ("timedout", Kind.TIMEOUT),
    ("timeout", Kind.TIMEOUT),
    ("ratelimited", Kind.RATE_LIMITED),
    ("ratelimitexceeded", Kind.RATE_LIMITED),
    ("quotaexceeded", Kind.RATE_LIMITED),
    ("throttled", Kind.RATE_LIMITED),
    ("unauthorized", Kind.UNAUTHORIZED),
    ("unauthenticated", Kind.UNAUTHORIZED),
    ("denied", Kind.PERMISSION_DENIED),
    ("forbidden", Kind.PERMISSION_DENIED),
    ("unavailable", Kind.SERVICE_UNAVAILABLE),
    ("overloaded", Kind.SERVICE_UNAVAILABLE),
    ("cancelled", Kind.CANCELLED),
    ("canceled", Kind.CANCELLED),
    ("notimplemented", Kind.NOT_IMPLEMENTED),
    ("unimplemented", Kind.NOT_IMPLEMENTED),
    ("invalidargument", Kind.INVALID_ARGUMENTS),
    ("invalidarguments", Kind.INVALID_ARGUMENTS),
    ("validationerror", Kind.INVALID_ARGUMENTS),
    ("validationfailed", Kind.INVALID_ARGUMENTS),
)


def _table(names: Mapping[Kind, tuple[str, ...]]) -> dict[str, Kind]:
    return {_norm(name): kind for kind, group in names.items() for name in group}


_SPECIFIC_BY_NORM = _table(_SPECIFIC_CODES)
_VAGUE_BY_NORM = _table(_VAGUE_CODES)


def _known_code(code: str) -> Kind | None:
    """The kind a code names outright: a Kind value, else a provider code listed as specific."""
    norm = _norm(code)
    return _KIND_BY_NORM.get(norm) or _SPECIFIC_BY_NORM.get(norm)


def _suffix_code(code: str) -> Kind | None:
    norm = _norm(code)
    for suffix, kind in _CODE_SUFFIXES:
        if norm.endswith(suffix):
            return kind
    return None


# Numeric statuses: HTTP first, JSON-RPC (MCP) negative codes second.
_HTTP_KINDS: dict[int, Kind] = {
    400: Kind.INVALID_ARGUMENTS,
    401: Kind.UNAUTHORIZED,
    402: Kind.USAGE_POOL_EXHAUSTED,
    403: Kind.PERMISSION_DENIED,
    404: Kind.NOT_FOUND,
    407: Kind.UNAUTHORIZED,
    408: Kind.TIMEOUT,
    409: Kind.EXECUTION,
    410: Kind.NOT_FOUND,
    429: Kind.RATE_LIMITED,
    451: Kind.PERMISSION_DENIED,
    499: Kind.CANCELLED,
    500: Kind.EXECUTION,
    501: Kind.NOT_IMPLEMENTED,
    502: Kind.SERVICE_UNAVAILABLE,
    503: Kind.SERVICE_UNAVAILABLE,
    504: Kind.TIMEOUT,
    507: Kind.EXECUTION,
    522: Kind.TIMEOUT,
    523: Kind.NETWORK_ERROR,
    524: Kind.TIMEOUT,
    529: Kind.SERVICE_UNAVAILABLE,
}
_JSONRPC_KINDS: dict[int, Kind] = {
    -32700: Kind.INVALID_ARGUMENTS,
    -32600: Kind.INVALID_ARGUMENTS,
    -32601: Kind.NOT_FOUND,
    -32602: Kind.INVALID_ARGUMENTS,
    -32603: Kind.EXECUTION,
    -32001: Kind.TIMEOUT,
}


#: The status a client gives a request that got no response at all (HTTP::Tiny's "599 Internal Exception", then
#: "Could not connect to ...: Connection refused" or "Timed out while waiting for socket ..."): no server sent it,
#: so it names no kind, and the words after it say the cause.
_NO_RESPONSE_STATUS = 599


def _status_kind(number: int) -> Kind | None:
    """The kind of an HTTP or JSON-RPC status; other 4xx are the request's fault, other 5xx the server's."""
    if number == _NO_RESPONSE_STATUS:
        return None
    kind = _HTTP_KINDS.get(number) or _JSONRPC_KINDS.get(number)
    if kind is None and 400 <= number < 500:
        return Kind.INVALID_ARGUMENTS
    if kind is None and 500 <= number < 600:
        return Kind.SERVICE_UNAVAILABLE
    return kind


# --------------------------------------------------------------------------------------------------
# Text signals, in precedence order (see the module docstring).

_REASONS = (
    r"bad request|unauthori[sz]ed|payment required|forbidden|not found|method not allowed|not acceptable"
    r"|request time-?out|conflict|gone|payload too large|request entity too large|unsupported media type"
    r"|unprocessable(?: entity| content)?|too many requests|internal server error|not implemented"
    r"|bad gateway|service unavailable|gateway time-?out|client error|server error"
)

_STATUS_NUMBER = _Lazy(r"[45][0-9][0-9]")
# A short message led by an HTTP status and a capitalised word that opens a phrase, as providers and
# proxies write them (continuedev/continue #10442, anthropics/claude-code #236, continuedev/continue #9942):
# "429 Too many tokens, please wait", "402 This request requires more credits", "401 status code (no body)".
# One word alone ("412 README.md", wc's count) or a lower-case one ("500 rows", "404 files") is no message.
# What follows the status, case-sensitive wherever it is read: in _HTTP_STATUS's last alternative and in
# _STATUS_LEAD.
_STATUS_PHRASE = r"(?-i:(?:\s*[-:]\s*|\s+)[\"']?[A-Z][a-z]+(?:'[a-z]+)?[,.]?\s+[\"']?[A-Za-z]|\s+status code\b)"
_HTTP_STATUS = _Lazy(
    r"\bHTTP(?:/\d(?:\.\d)?)?(?:Error)?[\s:=]*(?:(?:status|error|code)\s*:?\s*)?(?P<a>[1-5]\d\d)\b"
    r"|\b(?:status(?:[ _-]?code)?|error[ _-]?code|response[ _-]?code|http[ _-]?status|statusCode|returned error)"
    r"[\"']?\s*[:=]?\s*[\"']?(?P<b>[45]\d\d)\b"
    rf"|(?:^|[\s'\"(\[>:])(?P<c>[45]\d\d),?\s*(?:[-:]\s*)?(?:{_REASONS}|message=)"
    r"|\b(?:failed|error|errored)(?: with)?[:\s(]+(?P<d>[45]\d\d)\b"
    # A status that leads a message with no reason phrase: see _STATUS_PHRASE.
    r"|\A\s*(?P<e>[45]\d\d)" + _STATUS_PHRASE,
    re.IGNORECASE | re.MULTILINE,
)
_STATUS_LEAD = _Lazy(r"\s*([45]\d\d)" + _STATUS_PHRASE)


class _Signal(Struct, frozen=True):
    """One cause stated in words: alternatives searched in lowercased text, each compiled on its own."""

    kind: Kind
    #: (literal every match starts with, pattern): the literal is tested with ``in`` first
    alternatives: tuple[tuple[str, _Lazy], ...]
    #: evidence to give instead of the matched words
    label: str | None = None


_LEADING_WORD = _Lazy(r"\\b([a-z0-9_][a-z0-9_ ]*)")
_LEADING_LITERAL = _Lazy(r"[^\\.^$*+?{}\[\]()|]*")


def _alternative(source: str) -> tuple[str, _Lazy]:
    """Prepare one lowercase alternative (compiled on first use) so ``re`` can jump straight to its literal start.

    A leading ``\\b`` stops CPython's literal-prefix scan and makes a search try every position, so
    ``\\bword`` becomes ``word(?<!\\wword)``: the same match, found several times faster. The literal
    itself is returned too: ``literal in text`` is cheaper still and rules most alternatives out.
    """
    if source != source.lower():
        raise ValueError(f"signal alternatives are matched against lowercased text: {source!r}")
    match = _LEADING_WORD.match(source)
    if match is not None:
        word, rest = match.group(1), source[match.end() :]
        if rest[:1] in ("?", "*", "+", "{"):  # the word's last character is quantified
            word, rest = word[:-1], word[-1:] + rest
        if word:
            source = f"{word}(?<!\\w{word}){rest}"
    literal = _LEADING_LITERAL.match(source).group()  # type: ignore[union-attr]  # matches the empty string
    if source[len(literal) : len(literal) + 1] in ("?", "*", "{"):
        literal = literal[:-1]
    return literal, _Lazy(source, re.MULTILINE)


def _signal(kind: Kind, *alternatives: str | tuple[str, str], label: str | None = None) -> _Signal:
    """A signal; an alternative given as ``(literal, source)`` is prefiltered on that rarer literal."""
    compiled = []
    for alternative in alternatives:
        if isinstance(alternative, tuple):
            compiled.append((alternative[0], _alternative(alternative[1])[1]))
        else:
            compiled.append(_alternative(alternative))
    return _Signal(kind, tuple(compiled), label)


_OUT_OF_MEMORY = _signal(
    Kind.EXECUTION,
    r"memoryerror\b", r"outofmemory", r"out of memory\b", r"cannot allocate memory", r"\benomem\b",
    r"oom[- ]?kill", ("killed", r"^\s*killed\s*$"), r"signal: killed\b",
    r"exit(?:ed)?(?:\s+with)?\s+(?:code|status)\s*:?\s*137\b",
    label="out of memory",
)
_TIMEOUT = _signal(
    Kind.TIMEOUT,
    r"timed[ _-]?out", r"\betimedout\b", r"\besockettimedout\b", r"deadline[ _]exceeded", r"time[ _]limit[ _]exceeded",
    r"execution[ _]time[ _]exceeded", r"took too long",
    r"\btimeout (?:of \d+\s*\w*\s*)?(?:error|exceeded|expired|reached|occurred)", r"timeout(?:error|exception)\b",
    r"readtimeout\b", r"connecttimeout\b", r"writetimeout\b", r"pooltimeout\b", r"socket\.timeout\b",
    r"request timeout\b", r"gateway time-?out",
    # npm's fetch that got no answer in time: "npm error network timeout at: http://127.0.0.1:8732/left-pad".
    r"\bnetwork timeout at\b",
    # GNU timeout's own line when it stops a command (-v): "timeout: sending signal TERM to command 'perl'".
    r"^timeout: sending signal\b",
    # The limit said the other way round: jest's "Exceeded timeout of 5000 ms for a test".
    r"\bexceeded (?:the |its )?timeout\b",
    # ctest's line of a test it stopped at its limit: "1/1 Test #3: t3 ......***Timeout   1.00 sec".
    ("***timeout", r"\*\*\*timeout\b"),
    # PostgreSQL's "canceling statement due to statement timeout" (and lock_timeout's "lock timeout").
    r"\b(?:statement|lock) timeout\b",
    # Chinese tools' own "请求超时" (the request timed out), after a "错误:" (error) they lead with.
    ("超时", r"超时"),
)
_CANCELLED = _signal(
    Kind.CANCELLED,
    r"\bcancel+ed\b", r"cancel+ederror", r"cancellationexception", r"aborterror", r"\baborted by (?:the )?user\b",
    r"\boperation was aborted\b", r"\brequest (?:was )?aborted\b",
    # A server stopping the work it was asked for: PostgreSQL's "canceling statement due to user request".
    # Not "Error while cancelling the job: ...", a failure of the cancelling.
    ("cancel", r"(?<!while )(?<!when )\bcancel+ing (?:the )?(?:statement|query|request|operation|task|job)\b"),
    r"\bdue to user request\b",
    # ... or one an administrator stopped: PostgreSQL's "terminating connection due to administrator command".
    r"\bdue to administrator command\b",
    # pytest's "Interrupted: 1 error during collection" is its summary of a failed run, not a cancellation.
    r"\binterrupted\b(?!: \d+ errors? during collection)", r"keyboardinterrupt",
    # Kimi Code's "The subagent was stopped by the user." (MoonshotAI/kimi-code #236).
    r"\bstopped by (?:the )?user\b",
)

# What only a stored thread's call can suffer, said in words (the seeds' output for a call its turn never
# answered; a reply cut off at max_tokens; arguments that never parsed).
_ABORTED = _signal(
    Kind.ABORTED, r"not finished: the turn", r"before this call returned", r"\bthe turn ended before\b",
    # Codex records the bare word as the output of a call its aborted turn never answered (openai/codex #5543).
    ("aborted", r"^\s*aborted\s*$"),
)
_TRUNCATED = _signal(
    Kind.TRUNCATED,
    ("truncated", r"\btruncated\b[^.\n]{0,60}?max[_ ]?tokens"), ("cut off", r"\bcut off\b[^.\n]{0,60}?max[_ ]?tokens"),
    r"\bstop_reason[\"' :=]{1,4}max_tokens\b",
    # A reply stopped at its output limit, said in words: Claude Code's "response exceeded the 32000 output
    # token maximum" (anthropics/claude-code issues), "was cut off because it reached the token limit".
    ("output token", r"\bexceeded (?:the |its )?(?:\d+ )?output tokens? (?:maximum|limit)"),
    ("cut off", r"\bcut off\b[^.\n]{0,60}?\b(?:output )?token limit"),
    # "the response hit the max_tokens limit before this tool call finished" (jaseci-labs/jac #6766), "it hit
    # the output token limit" (aaif-goose/goose #9946).
    r"\bhit (?:the |its )?(?:max[_ ]?tokens|output[ _]tokens?) limit",
)
_MALFORMED = _signal(
    Kind.MALFORMED_ARGUMENTS,
    r"\barguments? (?:are|is|were|was) not valid json", r"\binvalid json (?:input )?(?:for|in) (?:the )?(?:mcp )?(?:tool|function)",
    r"\bmalformed (?:tool |function )?(?:call )?arguments", r"\bmalformed_function_call\b",
    r"\b(?:failed to|could not|cannot|unable to) (?:parse|decode) (?:the )?(?:tool |function )?(?:call )?arguments",
)

# A version of a tool's protocol or definition the other side does not support (an MCP protocol version, a
# provider's dated tool type such as text_editor_20241022 that a model does not take).
_VERSION_UNSUPPORTED = _signal(
    Kind.BEHAVIOR_VERSION_UNSUPPORTED,
    r"unsupported (?:mcp )?protocol[ _]version", r"protocol version (?:is )?not supported",
    r"protocol version is not supported", r"protocol version not supported", r"unsupportedprotocolversion",
    ("found using", r"input tag '[a-z_]+_20\d{6}' found using 'type' does not match"),
)

_RENDER_LIMITED = _signal(
    Kind.RENDER_LIMITED,
    r"exceeds? (?:the )?maximum allowed tokens", r"\boutput too large\b", r"\btoo large to (?:display|render|show|include)\b",
)

# "tool … not found" is prefiltered on the phrase: "tool" alone is in most tool outputs.
_TOOL_MISSING = ("not found", "does not exist", "not available")

# Python's JSON decoder refusing its input ("Expecting value: line 1 column 1 (char 0)", "Expecting property name
# enclosed in double quotes", "Expecting ',' delimiter"), and a file or archive not of the kind asked for ("'x' is not a
# tar archive"): stated failures (_STATED_WORDS) and bad input (the last signal) in the same words.
_JSON_DECODER_REFUSAL = r"expecting (?:value|property name|'[^'\n]{1,3}' delimiter)"
_NOT_OF_KIND = r"is not an? (?:[\w-]+ ){1,3}"

_SIGNALS: tuple[_Signal, ...] = (
    _OUT_OF_MEMORY,
    _signal(
        Kind.USAGE_POOL_EXHAUSTED,
        r"insufficient[_ ](?:quota|credits?|balance|funds)", r"credit balance is too low",
        r"exceeded your current quota", r"out of credits", r"payment required", r"billing hard limit",
        r"balance (?:is )?(?:too low|exhausted|insufficient|depleted)",
        r"credits? (?:is |are )?(?:too low|exhausted|insufficient|depleted)", r"no credits? (?:left|remaining)",
        r"usage pool", r"usage credits (?:are |is )?required",
        # OpenRouter's "This request requires more credits, or fewer max_tokens ... can only afford 3919"
        # (QwenLM/qwen-code #73), RFC 7807's "You do not have enough credit."
        r"requires more credits", r"can only afford", r"(?:not|n't) have enough credits?\b", r"not enough credits?\b",
    ),
    _signal(
        Kind.USAGE_LIMIT_REACHED,
        r"usage[ _]limits?\b", r"reached (?:your|the) (?:\w+ )?(?:usage|spend(?:ing)?) limit", r"max_uses_exceeded",
        r"hit your (?:[\w-]+ ){0,2}limit", r"\bsession limit\b", r"\bweekly limit\b", r"spending cap",
        ("5-hour limit", r"\b5-hour limit\b"),
        # A plan's monthly allowance of premium requests (microsoft/vscode-copilot-release #12785, #9300).
        r"premium request (?:allowance|limit)",
    ),
    _signal(
        Kind.CONCURRENCY_LIMIT,
        r"concurren(?:cy|t)[ _](?:limit|requests?|calls?|jobs?|executions?)",
        r"too many (?:concurrent|parallel|simultaneous|in[- ]flight)", r"max(?:imum)? concurrency",
        # A server's cap on open sessions: PostgreSQL's "sorry, too many clients already", MySQL's "Too many
        # connections".
        r"too many (?:clients|connections)\b",
        # ... and its slots kept for superusers once the others are taken: "remaining connection slots are
        # reserved for non-replication superuser connections".
        r"remaining connection slots are reserved",
        # ... or a proxy's: "Exceeded maximum of 100 connections per instance".
        r"\bmaximum of \d+ connections\b",
    ),
    # A shared backend shedding load, not the caller's own quota: Vertex AI's dynamic shared quota ("Resource
    # exhausted. Please try again later."), Gemini's MODEL_CAPACITY_EXHAUSTED, a provider's tier capacity.
    _signal(
        Kind.GLOBAL_RATE_LIMIT,
        r"global[ _]rate[ _]?limit", r"no capacity available", r"model_capacity_exhausted",
        r"capacity (?:has been )?exceeded", ("at capacity", r"(?:model|server|service) (?:is )?at capacity"),
        r"resource exhausted\. please try again later",
    ),
    _signal(
        Kind.RATE_LIMITED,
        r"rate[ _-]?limit", r"too many requests", r"too_many_requests", r"quota (?:has been )?exceeded",
        r"exceeded (?:the |your )?(?:(?:daily|hourly|monthly|request|api) ){0,2}quota", r"resource(?: has been)?[ _]exhausted", r"throttl(?:ed|ing)(?:exception)?\b",
        r"slow down", r"\b(?:currently|temporarily) limited\b",
        # A limit per unit of time, in a failure: "the maximum number of requests per hour", "Exceeded 4 calls
        # per second".
        (" per ", r"\b(?:requests?|calls?|queries) per (?:second|minute|hour|day)\b"),
    ),
    _ABORTED,
    _TRUNCATED,
    _MALFORMED,
    _RENDER_LIMITED,
    _VERSION_UNSUPPORTED,
    _TIMEOUT,
    _CANCELLED,
    _signal(
        Kind.UNAUTHORIZED,
        r"\bunauthori[sz]ed\b", r"\bunauthenticated\b", r"\bnot authenticated\b",
        r"\bauthentication (?:failed|error|required)", r"authenticationerror",
        r"\binvalid[ _](?:api[ _-]?key|x-api-key|token|credentials|authentication|bearer)", r"\bincorrect api key\b",
        # A password refused: keytool's "keystore password was incorrect", unzip's "incorrect password".
        r"\bincorrect password\b", r"\bpassword (?:was |is )?incorrect\b",
        r"\bapi[ _-]?key (?:not valid|is invalid|is missing|missing|expired)",
        r"\bmissing (?:api[ _-]?key|credentials|authorization header)", r"\btoken (?:has )?expired\b", r"expiredtoken",
        r"\bsignature (?:has )?expired\b", r"expiredsignature",
        r"unrecognizedclientexception", r"could not validate credentials",
        r"\bcredentials? (?:are |were |is )?(?:invalid|missing|expired)\b", r"\bno credentials\b",
        ("credentials", r"\b(?:unable to locate|could not find|cannot find|can't find) (?:\w+ )?credentials\b"),
        # A client started with no key at all: google-genai's "No API key was provided".
        r"\bno api[ _-]?key (?:was |is )?(?:provided|given|set|found)\b",
    ),
    _signal(
        Kind.PERMISSION_DENIED,
        r"permission denied", r"permissionerror", r"permissiondenied", r"\baccess (?:is )?denied\b", r"accessdenied",
        r"\bforbidden\b", r"\beacces\b", r"\beperm\b", r"\bnot permitted\b", r"\bnot authorized to\b",
        r"insufficient (?:permissions?|privileges?|scopes?)", r"\b(?:does|do)(?: not|n't) have (?:permission|access)\b",
        r"rejected by (?:the )?user", r"tool use was rejected", r"doesn't want to proceed", r"read-only file system",
        r"\berofs\b", r"\bnot allowed\b",
    ),
    _signal(
        Kind.NETWORK_ERROR,
        r"connection (?:refused|reset|aborted|closed|error|failed|lost)", r"\beconn(?:refused|reset|aborted)\b",
        r"\benotfound\b", r"\beai_again\b", r"\behostunreach\b", r"\benetunreach\b", r"\bepipe\b", r"broken pipe",
        r"name or service not known", r"temporary failure in name resolution", r"nodename nor servname",
        r"getaddrinfo", r"could not resolve host", r"failed to resolve", r"failed to establish a new connection",
        r"max retries exceeded", r"network is unreachable", r"no route to host",
        r"connection(?:refused|reset|aborted)?error\b", r"connecterror\b", r"clientconnector\w*error\b",
        r"serverdisconnectederror", r"remotedisconnected", r"remote end closed connection", r"socket hang up",
        r"fetch failed", r"\bempty reply from server\b", r"\bnetwork ?error\b", r"certificate verify failed", r"sslerror",
        r"connectexception", r"\bnetwork (?:is )?unavailable\b",
        r"unknownhostexception", r"noroutetohostexception", r"socketexception", r"\bunable to connect\b",
        r"\bfailed to connect\b", r"\bcould not connect\b", r"\bcouldn't connect\b", r"\bcannot connect\b",
    ),
    _signal(
        Kind.SERVICE_UNAVAILABLE,
        r"service (?:is )?(?:temporarily )?unavailable", r"serviceunavailable", r"bad gateway", r"\boverloaded\b",
        r"temporarily unavailable", r"server (?:is )?(?:busy|overloaded)", r"no healthy upstream",
        r"upstream connect error", r"at capacity", r"high demand", r"modelnotready", r"\bunavailable\b",
    ),
    _signal(
        Kind.NOT_IMPLEMENTED,
        # (rustc's "the trait `Eq` is not implemented for `Key`" is a bound a type does not meet, not a feature.)
        r"not (?:yet )?implemented(?! for `)", r"notimplemented", r"unsupportedoperationexception", r"\bunimplemented\b",
        r"operation not supported", r"unsupported operation",
        # An MCP server's tool listed but not backed by code (github/github-mcp-server #177).
        r"does not have an implementation registered",
    ),
    _signal(
        Kind.NOT_FOUND,
        r"unknown (?:tool|function)", r"is not a valid tool",
        *((phrase, rf"\btool\b[^\n]{{0,80}}?\b{phrase}") for phrase in _TOOL_MISSING),
        r"no such tool", r"no tool named",
        r"\binvalid tool\b", r"function [\w.-]+ not found", r"method not found", r"unknown method",
        label="unknown tool",
    ),
    _signal(
        Kind.NOT_FOUND,
        r"no such file or directory", r"\benoent\b", r"filenotfound(?:error|exception)\b", r"nosuchfileexception",
        r"command not found", r"\bnot found\b", r"does not exist", r"doesn't exist", r"nosuch(?:key|bucket|file)",
        r"resourcenotfound", r"notfound(?:error|exception)\b", r"cannot find (?:module|file|path)",
        # "No such customer", "No such message id": a lookup that found nothing ("no such option" is a bad command line).
        r"\bno such (?!option)\w+", r"no matching \w+ found",
        # git's "pathspec 'x' did not match any files" and "unknown revision or path", Python's "No module named x".
        r"\bdid not match any (?:files?|file\(s\))", r"\bunknown revision\b", r"\bno module named\b",
        # A search that came back empty, said as its program says it: "ERROR: Could not find a version that
        # satisfies ...", "unzip: cannot find or open x.zip", "the crate `x` could not be found", "no matching
        # tables were found", "Did not find any relation named ...", "no such command: `x`".
        # (Each literal is one an existing part of _SIGNAL_PARTS covers: a new part costs every text a search.)
        ("not find", r"\b(?:could not|cannot) find\b"), ("couldn't find", r"\bcouldn't find\b"),
        ("unable to find", r"\bunable to find\b"), ("not locate", r"\b(?:could not|cannot) locate\b"),
        ("can't locate", r"\bcan't locate\b"),
        ("not be found", r"\b(?:could not|cannot) be found\b"),
        r"\bdid not find any\b", r"\bno matching \w+ (?:were |was )?found\b", r"\bno such command\b",
        r"\bno (?:[\w-]+ ){1,2}named\b",
        # What a build or test tool was told to use and could not find, in its own words: make's "No rule to
        # make target 'x'", esbuild's 'Could not resolve "./x.js"', mocha's "No test files found", npm's "No
        # dependencies found matching x" and 'Missing script: "deploy"', unzip's "filename not matched", jest's "Can't
        # find a root directory".
        r"\bno rule to make target\b", r"\bmissing script: ", ("not resolve", r"\b(?:could not|cannot) resolve [\"'`]"),
        # ... a module a server was told to load, a model a client was told to use, a resource an MCP server was asked
        # to read: uvicorn's 'Could not import module "x"', llm's "Unknown model: x", the MCP SDK's "Unknown resource:
        # file:///x/notes.txt".
        ("not import", r"\b(?:could not|cannot|unable to) import module\b"), r"\bunknown model\b", r"\bunknown resource\b",
        # ... and a thing named in quotes that was looked for: "No 'g2.backends' driver found" (unquoted, "no element
        # found" is a parser's refusal, "no signature found" a defect).
        r"\bno [\"'`][^\"'`\n]{1,60}[\"'`] [\w-]+ found\b", r"\bno (?:[\w-]+ )?files? found\b", r"\bno [\w-]+ found matching\b", r"\bnot matched\b",
        ("can't find", r"\bcan't find\b"),
        # git's lookups that found nothing: "fatal: No names found, cannot describe anything.", "error: no note found
        # for object ...".
        r"\bno (?:names?|notes?|tags?|refs?|commits?|matches|packages?) found\b",
        # ... a package or module asked about that is not there (dpkg-query's "package 'x' is not installed and no
        # information is available", Perl's "Nosuch::Mod is not installed", apt's "Unable to locate package x"), and
        # an object git was given a name for that names none ("fatal: Not a valid object name 0123abc").
        r"\bis not installed\b", ("unable to locate", r"\bunable to locate\b"), r"\bnot a valid object name\b",
        # A thing looked for that there is none of, in the words of kubectl ('error: no context exists with the name:
        # "x"') and terraform's file() ('no file exists at "missing.txt"'), and rustc's import of a name its module
        # does not have ("error[E0432]: unresolved import `std::collections::HashMapp`").
        ("exists", r"\bno (?:[\w-]+ ){1,2}exists\b"), r"\bunresolved import\b",
    ),
    _signal(
        Kind.INVALID_ARGUMENTS,
        r"invalid[ _](?:arguments?|params?|parameters?|input|value|request|json|type|format|patch|diff)",
        r"\bvalidation (?:error|failed)", r"validation(?:error|exception)\b", r"\bmissing required", r"\bno value for required\b",
        # cobra's refusal of a command line without a flag it must have ('required flag(s) "image" not set').
        r"\brequired flag\(s\) [^\n]{1,80}? not set\b",
        r"\bfield required\b", r"\bis a required (?:property|field|parameter|argument)",
        r"\brequired (?:property|field|parameter|argument)s? (?:is |are )?missing", r"unexpected keyword argument",
        r"\bmissing \d+ required (?:positional |keyword-only )?arguments?\b", r"\bbad request\b",
        r"\bunrecognized (?:option|arguments?)\b", r"\b(?:invalid|unknown|no such) (?:option|argument)\b", r"\bbad option\b",
        r"\bunprocessable\b", r"\bis not of type\b", r"\bis not valid under\b", r"context[_ ]length[_ ]exceeded",
        # OpenAI's refusal of a request over the context window: "This model's maximum context length is 4097
        # tokens. However, you requested 4268 tokens".
        r"maximum context length is \d+ tokens",
        r"prompt is too long", r"\bexpected \w+, (?:got|received)\b",
        # Pydantic's refusal of a value of the wrong type ("Input should be a valid string"), whatever code it gives.
        r"\bshould be a valid\b",
        # A value the program cannot take, or a token where another was expected, as compilers, databases and
        # converters say it: "integer out of range", "value too long for type character varying(8)", "argument
        # for `--edition` must be one of: ...", "expected `;`, found `println`", "';' expected", "missing
        # data for column".
        ("out of range", r"out of range\b(?<!index out of range)"), r"\bvalue too (?:long|large|big|small)\b", r"\bmust be one of\b",
        r"\bexpected [`'\"][^\w\s`'\"]{1,3}[`'\"]", ("expected", r"[`'\"][^\w\s`'\"]{1,3}[`'\"] expected\b"),
        r"\bmissing data for\b",
        # ... and a row of the wrong width, as SQLite refuses an insert ("table t has 3 columns but 2 values were supplied").
        ("values were supplied", r"\bcolumns but \d+ values were supplied\b"),
        # Options that cannot go together, as docker refuses them ("conflicting options: cannot specify both --restart
        # and --rm").
        ("not specify both", r"\bcannot specify both\b"),
        # A command line the program cannot run (GNU's usage errors: "missing operand", "option requires an
        # argument -- 'f'", then "Try 'cut --help' for more information.").
        r"\b(?:missing|extra) (?:\w+ )?operand\b", r"\boption requires an argument\b",
        ("--help", r"\btry '[^'\n]{1,80}--help' for more information"),
        # A value of the wrong form, as Tcl refuses one: 'bad index "x": must be integer?[+-]integer? or end...'.
        ("bad ", r"\bbad \w+ \"[^\"\n]{0,80}\": must be\b"),
        # ... and a command called with the wrong arguments: Tcl's 'wrong # args: should be "string repeat string count"'.
        r"\bwrong # args\b",
    ),
    # Last and weakest: words about bad input in general ("Invalid URL", "script is required"). An uncaught
    # exception's message is not read for them ("ValueError: invalid literal for int()" is the tool's crash).
    _signal(
        Kind.INVALID_ARGUMENTS,
        r"\binvalid\b", r"\bmalformed\b", r"\bis not a valid\b", r"\bis required\b", r"\bvalidation\b",
        # A parser's refusal of what it was given to read (the corpus's rule settled after heldout6).
        r"\bsyntax error\b", r"\bparse error\b", r"\berror parsing\b", r"\b(?:failed to|could not|cannot|unable to) parse\b",
        rf"\b{_JSON_DECODER_REFUSAL}\b",
        # ... and a file in the wrong format or cut short ("not in gzip format", "bad magic number").
        r"\bfile format not recognized\b", r"\bnot in \w+ format\b", r"\bbad magic number\b", r"\bformat not supported\b",
        r"\bfile ends unexpectedly\b",
        # ... or not a database at all, as SQLite says of a file it opens ("file is not a database"), or a statement cut
        # short ("incomplete input").
        r"\bis not a database\b", r"\bincomplete input\b",
        # ... or cut short, as a parser says it: "unexpected end of string while parsing JSON string", YAML's "found
        # unexpected end of stream".
        r"\bunexpected end of (?:string|input|file|data|stream)\b",
        # ... or not of the kind asked for: "File is not a zip file", "'x' is not a tar archive", "x is not a public key file".
        rf"\b{_NOT_OF_KIND}(?:file|archive)\b",
        # ... or an option or a form the program has dropped: java's "Specifying an alternate JDK/JRE version is no
        # longer supported", "The use of the flag '-version:' is no longer valid".
        r"\bno longer (?:supported|valid)\b",
    ),
)
_STRONG_SIGNALS = _SIGNALS[:-1]
_WEAK_INVALID = _SIGNALS[-1]
#: the signal of a thing looked for and not found (not a tool's)
_MISSING_SIGNALS = tuple(signal for signal in _SIGNALS if signal.kind is Kind.NOT_FOUND and signal.label is None)

# The order a careful reader names a failure in when its words and its HTTP status say different things
# (the corpus's labelling rules, first match wins): the words decide over the status when they name a
# kind that comes first ("403 Forbidden: invalid api key" is a bad key, a 503 "upstream connect error or
# disconnect/reset" a network failure, "500 - Token limit ... exceeded" the limit), the status otherwise.
# The general words about bad input never outrank a status.
_PRECEDENCE: dict[Kind, int] = {
    kind: rank
    for rank, kind in enumerate((
        Kind.ABORTED, Kind.CANCELLED, Kind.USAGE_LIMIT_REACHED, Kind.USAGE_POOL_EXHAUSTED, Kind.CONCURRENCY_LIMIT,
        Kind.GLOBAL_RATE_LIMIT, Kind.RATE_LIMITED, Kind.NETWORK_ERROR, Kind.SERVICE_UNAVAILABLE, Kind.TIMEOUT,
        Kind.UNAUTHORIZED, Kind.PERMISSION_DENIED, Kind.MALFORMED_ARGUMENTS, Kind.TRUNCATED, Kind.RENDER_LIMITED,
        Kind.BEHAVIOR_VERSION_UNSUPPORTED, Kind.NOT_FOUND, Kind.NOT_IMPLEMENTED, Kind.INVALID_ARGUMENTS,
        Kind.CUSTOM, Kind.TERMINAL_ERROR, Kind.EXECUTION, Kind.UNKNOWN, Kind.SUCCESS,
    ))
}

# An HTTP status ranks below the limit signals and what only a stored call suffers, above everything else.
_HTTP_RANK = _SIGNALS.index(_TIMEOUT)

_EXIT_CODE = _Lazy(
    r"\b(?:exit(?:ed)?(?:\s+with)?\s+(?:code|status)|exit[ _]?code|exit[ _]status|return[ _]?code"
    r"|returncode|exited)\s*[:=]?\s*\(?(?P<n>-?\d{1,4})\b"
    r"|\bmake(?:\[\d+\])?: \*\*\* .*?Error (?P<m>\d{1,4})\b",
    re.IGNORECASE,
)

# Every match of _EXIT_CODE starts with one of these words (lower-cased), and _exit_code takes only a
# match starting within the first 40 characters: looking for the words first spares most lines the pattern.
_EXIT_WORDS = ("exit", "returncode", "return code", "return_code", "make")
_EXIT_REACH = 40 + max(map(len, _EXIT_WORDS))
#: what comes just before an exit code's words where the line is code that holds one (a quoted value, a property)
_CODE_BEFORE = frozenset({'"', "'", "`", "."})


def _no_exit_word(line: str) -> bool:
    """True when ``line`` surely has no exit code where _exit_code looks (a shortcut; tests turn it off)."""
    return not _has_exit_word(_folded(line[:_EXIT_REACH]))


def _has_exit_word(head: str) -> bool:
    # "return" alone is in every docstring that starts "Return ..." and in most source code: only the three
    # spellings of return code count, looked for once "return" is there.
    return "exit" in head or "make" in head or (
        "return" in head and ("return code" in head or "returncode" in head or "return_code" in head))


# Exit codes that say what happened to the process rather than what it reported.
# A shell command that failed is a terminal_error (issue #24: "command not found", killed processes and
# exit codes alike); only a timeout or an interruption says something else happened to the call.
_EXIT_KINDS: dict[int, tuple[Kind, str]] = {
    124: (Kind.TIMEOUT, "exit code 124 (timeout)"),
    126: (Kind.TERMINAL_ERROR, "exit code 126 (not executable)"),
    127: (Kind.TERMINAL_ERROR, "exit code 127 (command not found)"),
    130: (Kind.CANCELLED, "exit code 130 (interrupted)"),
    143: (Kind.TERMINAL_ERROR, "exit code 143 (terminated)"),
    137: (Kind.TERMINAL_ERROR, "exit code 137 (killed; out of memory?)"),
}

# What the environment did to a process: the only text that refines a non-zero exit code (out of memory
# stays terminal_error, said in the evidence).
_ENVIRONMENT_SIGNALS = (_OUT_OF_MEMORY, _TIMEOUT, _CANCELLED)
# What refines a shell's own error line.
_SHELL_ENVIRONMENT = (_TIMEOUT, _CANCELLED)

# --------------------------------------------------------------------------------------------------
# Framing: does untrusted text present itself as a failure?

_ERROR_START = _Lazy(
    r"""(?:
        (?i:error|err|fatal|failure|panic|critical)(?:\s*[:!\[(]|\s+(?:code|\d)|\s*$)
      | (?i:error)\s+(?:from|response|while|when|during|occurred|executing|calling|running|invoking|in)\b
      | (?i:error\s+(?!handling|reporting|logging|messag|tracking|testing|typing)[a-z]{2,20}ing\b[^:\n]{0,80}:\s+\S)
      | (?i:an?\s+(?:unexpected\s+)?error\s+(?:has\s+)?occurr?ed)\b  # and its common misspelling
      | ERROR\b
      | \[(?i:[\w ]{0,20}?(?:error|fatal|err))\]
      | <(?:tool_use_error|error)>
      | (?i:failed)(?:\s+to\b|\s+with\b|\s*[:!(]|\s*$)
      | (?i:fatal\s+error)\s*:  # "fatal error: ...", as the aws cli and compilers lead with it
      | FAIL\s+[\w@./-]+[/.][\w@./-]  # a test runner's failed file or package: jest's "FAIL src/x.test.js", go's "FAIL\tpkg/x"
      | (?i:tool|command|request|operation|task|job|call|execution)\s+(?i:failed)\b
      | (?:[A-Za-z_$][\w$.]{0,160}?)?(?:Error|Exception|Exit|Interrupt)(?:\s*[:(\[]|\s*$)
      | [A-Za-z_$][\w$.]{0,160}?Timeout\s*: | [A-Za-z_][\w.]{0,160}?\.[a-z_]{0,40}?(?:error|timeout)\s*:
      | Exception\s+(?:in\s+thread|occurred|was\s+thrown|has\s+occurred)
      | Traceback\s+\(most\s+recent\s+call\s+last\)
      | Uncaught(?=\s*:|\s+\(in\s+promise\)|\s+[\w$.]+\s*:|\s+(?i:exception|error)\b|\s*$)
      | Unhandled\s+(?i:exception|rejection|error)
      | thread\ '[^'\n]{0,80}'(?:\ \(\d+\))?\ panicked\ at\b
      | bad\ [a-z]{2,20}\ "[^"\n]{0,80}":\ must\ be\b  # Tcl's refusal of a value
      | wrong\ \#\ args:\ should\ be\b  # ... and Tcl's refusal of a call's arguments
      | Stop(?:Async)?Iteration(?:\s*:|\s*$)  # an iterator's end, uncaught
      | Oops!\ Something\ went\ wrong!  # ESLint's crash banner
      | <---\ Last\ few\ GCs\ --->  # V8's report of a heap it could not grow, before its fatal error
      | (?i:request\s+time-?out)\s*: | timeout:\ sending\ signal\b  # GNU timeout stopping a command, with -v
      | npm\s+ERR! | curl:\s*\(\d+\) | (?i:api\s+error)\b | \(eval\):\d+:
      | (?:/[\w.-]+)*/?(?:ba|z|da|fi|k)?sh(?::\s+line\s+\d+)?:\s
      | (?:HTTP(?:/[\d.]+)?\s*(?:Error\s*)?)[45]\d\d\b
      | [45]\d\d,?\s*(?:[-:]\s*)?(?:(?i:""" + _REASONS.replace(" ", r"\s") + r""")|message=)
      | (?i:client|server)\s+error\b
      | 错误\s*[:：]
      | (?i:
            connection\s+(?:refused|reset)|no\s+such\s+file|permission\s+denied|access\s+(?:is\s+)?denied
          | rate\s+limit|too\s+many\s+requests|(?:request\s+|operation\s+)?timed\s+out|timeout\s*[:!.]?\s*$
          | unauthori[sz]ed|forbidden|not\s+found|internal\s+server\s+error|service\s+(?:temporarily\s+)?unavailable
          | bad\s+gateway|gateway\s+time-?out|bad\s+request
          | (?:(?:operation|request|task|job|call|command)\s+(?:was\s+)?)?(?:cancel+ed|aborted|interrupted)
            (?=\s*[:.!(]|\s*$|\s+by\b|\s+due\b)
          | killed\s*$|segmentation\s+fault|out\s+of\s+memory|command\s+not\s+found|unknown\s+tool
          | invalid\s+(?:arguments?|params|parameters|input)|validation\s+(?:error|failed)
          | not\s+implemented|quota\s+exceeded|insufficient\s+(?:credits?|balance|funds|quota|permissions?)
          | this\ model's\ maximum\ context\ length\ is\ \d+\ tokens[.,]\s+(?:however|(?:please\s+)?reduce)
        )\b
    )""",
    re.VERBOSE,
)

# The final line of an uncaught Python traceback: ``pkg.module.SomeError: message``.
_PY_EXCEPTION_LINE = _Lazy(
    r"[A-Za-z_][\w.]{0,160}?(?:Error|Exception|Exit|Interrupt|Iteration|Timeout|Failure)\b(?::.*)?$"
)
_PY_TRACEBACK = "Traceback (most recent call last)"
# A compile error Python reports without a traceback header (SyntaxError, IndentationError): the frame
# line first, the exception line last.
_PY_FILE_FRAME = _Lazy(r'\s*File "[^"\n]{1,300}", line \d+')
# A traceback whose frames are written "..." is a doctest's or a document's example, not a crash.
_ELIDED_TRACEBACK = _Lazy(r"Traceback \(most recent call last\):[ \t]*\n[ \t]*\.\.\.[ \t]*\n")
# A writer whose reader stopped listening: a page of output, then the traceback of the write that found the pipe closed
# (``python3 -m pydoc X | head -20``: "self.output.write('\n')", then "BrokenPipeError: [Errno 32] Broken pipe"). The
# page was delivered as far as it was read; a socket's send that finds its peer gone ("sock.sendall(data)") is a
# network client's failure and is no write to its output.
_BROKEN_PIPE = "BrokenPipeError"
_OUTPUT_WRITE = _Lazy(r"\n[ \t]+(?:print\(|[\w.]*\b(?:stdout|output)\.(?:write|flush)\()[^\n]*\n" + _BROKEN_PIPE + r"\b[^\n]*\Z")
# _ERROR_START's frames of "error" and a word ("Error when ...", "Error response ..."): a first line that
# describes before any colon ("Error when requested amount exceeds what is allowed", "Error response may
# contain ...") is a docstring's, not a report.
_WORD_FRAME = _Lazy(r"(?i:error)\s+\w+$")
# A stack frame or trailer that ends an uncaught JVM or Node failure.
_FRAME_END = _Lazy(
    r"\s*at\s+\S[^\n]{0,300}?(?:\([^()\n]*:\d+(?::\d+)?\)|:\d+:\d+\)?|\((?:native|Native Method|Unknown Source)\))\s*$"
    r"|\s*\.\.\.\s+\d+\s+more\s*$|Node\.js\s+v\d+"
)
_JVM_THREAD = _Lazy(r"^Exception in thread \"[^\"]*\" ", re.MULTILINE)
_CAUSED_BY = _Lazy(r"^Caused by: [^\n]{1,300}", re.MULTILINE)
_STACK_FRAME = _Lazy(r"^[ \t]+at \S[^\n]{0,300}?(?:\([^()\n]*:\d+(?::\d+)?\)|:\d+:\d+\)?)[ \t]*$", re.MULTILINE)
# A web server's error page as a fetch returns it: an HTML document (led at most by a short label, "responseText =
# ") whose title or first heading is an HTTP status and its reason ("<title>504 Gateway Time-out</title>",
# "<h1>501 Method Not Implemented</h1>"). A page about a status has more in its title ("503 - HTTP | MDN").
_PAGE_OPEN = _Lazy(r"\s*(?:[^<\n]{0,60}[=:]\s*)?<(?:!doctype\s+html|html|\?xml|head|body)\b", re.IGNORECASE)
_PAGE_TITLE = _Lazy(r"<(title|h1)>\s*(?:error\s*)?([45]\d\d)\s*[-:]?\s*[A-Za-z][A-Za-z' -]{1,40}</\1>", re.IGNORECASE)
_PAGE_REACH = 1024


# ... or whose title or heading says error and whose body states the status (Python's http.server: "<title>Error
# response</title>" then "<p>Error code: 404</p>").
_PAGE_CODE = _Lazy(r"<(title|h1)>[^<\n]{0,40}\berror\b[^<\n]{0,40}</\1>.{0,400}?\berror code:?\s*([45]\d\d)\b",
                   re.IGNORECASE | re.DOTALL)


# ... or a line of such a page, cut out by grep or sed ("<p>Error code: 504</p>", "<p>Error code explanation: 503 - The
# server cannot process the request due to a high load.</p>"): its status says the kind.
_PAGE_LINE = _Lazy(r"<(p)>\s*Error code(?: explanation)?:\s*([45]\d\d)\b")
# A database driver's exception followed by its server's context lines (psycopg's "LINE 1: ..." with its caret,
# "DETAIL:  ...", "HINT:  ...", SQLAlchemy's "[SQL: ...]" and "(Background on this error at: ...)").
_DRIVER_REACH = 464  # _DRIVER_CONTEXT's first line and its indent
_DRIVER_LEADS = ("LINE ", "DETAIL:  ", "HINT:  ", "CONTEXT:  ", "[SQL: ", "(Background on this error at: ")
_DRIVER_CONTEXT = _Lazy(r"\s*[^\n]{1,400}\n(?:LINE \d+: |DETAIL:  |HINT:  |CONTEXT:  |\[SQL: |\(Background on this error at: )")
#: a traceback's last lines: at most this many indented lines before its exception line
_TAIL_FRAMES = 3
#: how a traceback's frame and a raising source line start
_TAIL_LEADS = ('File "', "raise ")
# Perl's die and croak: the message, then where it died (" at -e line 1.", " at script.pl line 12, <STDIN> line 2.").
_PERL_DIE = _Lazy(r" at (?:-e|\(eval \d+\)|\S{0,200}\.p[lm]|/\S{1,200}) line \d+(?:, <[^>\n]{1,60}> (?:line|chunk) \d+)?\.$")
_PERL_END = 80
_PERL_UNCOMPILED = _Lazy(r"Execution of \S{1,200} aborted due to compilation errors\.")


def _error_page(text: str) -> re.Match[str] | None:
    """The title of the error page ``text`` is (its status the match's second group), or None."""
    if _PAGE_OPEN.match(text) is None:
        return None
    return _PAGE_TITLE.search(text, 0, _PAGE_REACH) or _PAGE_CODE.search(text, 0, _PAGE_REACH)


_PROCESS_DEATH = _Lazy(r"(?i:segmentation fault|bus error|killed|aborted)(?: \(core dumped\))?\s*$")
_GENERIC_MARKER = _Lazy(
    r"^\s*(?:(?i:error|fatal|failure|panic|exception)\b|ERROR\b|\[(?i:error)\]"
    r"|[\w$.]{0,160}?(?:Error|Exception)\b)",
    re.MULTILINE,
)
_FIRST_LINE = _Lazy(rf"\s*([^\n]{{0,{_LINE_CHARS}}})")

# The quick test that rules framing out (``_unframed``). Each pattern above fires only with one of a few
# words on the line it reads, so an ordinary result is told apart by looking for those words in its first
# and last lines. Keep the words in step with the patterns: tests/failures/test_quick_paths.py checks the
# test against them.
#
# _ERROR_START matches at the start of the first line, which then starts (lower-cased) with one of these,
# or with "a "/"an " ("an error occurred") or an HTTP status.
_START_WORDS = (
    "err", "fatal", "fail", "panic", "critical", "[", "<", "tool", "command", "request", "operation", "task", "oops! something",
    "job", "call", "execution", "exception", "traceback", "uncaught", "unhandled", "npm", "curl", "http",
    "client", "server", "connection", "no", "permission", "access", "rate", "too", "timed", "timeout",
    "unauthori", "forbidden", "internal", "service", "bad", "gateway", "cancel", "aborted", "interrupted",
    "killed", "segmentation", "out", "unknown", "invalid", "validation", "quota", "insufficient", "api", "(eval)",
    "错误", "this model's maximum context length is", "thread '", "wrong # args",
)
# The start words by their first character: str.startswith tries a tuple's words one by one.
_START_WORDS_BY_LEAD = {
    lead: tuple(word for word in _START_WORDS if word[0] == lead) for lead in {word[0] for word in _START_WORDS}
}
# _PROCESS_DEATH: how a last line starts (lower-cased).
_DEATH_WORDS = ("segmentation", "bus", "killed", "aborted")
# Case and all, in the name a line starts with: the words _ERROR_START's identifier alternatives end
# a first line's name with (``pkg.SomeError:``, ``x.timeout:``, ``/bin/bash:``) and the exception names
# _PY_EXCEPTION_LINE ends a last line's name with.
_NAME_WORDS = ("Error", "error", "Exception", "Exit", "Interrupt", "Iteration", "Timeout", "timeout", "Failure", "sh:")
# Those alternatives' matches lie in the run of name characters (``[\w$./-]``) a line starts with (and the
# colon after), and end where the run ends: then come, past any spaces, a colon, a bracket or the end on
# a first line (``Error:``, ``Error (``, ``Error [``, ``Error`` alone, ``Timeout :``, ``bash:``), and a
# colon or the end on a last line (``ValueError: ...``). One match tells it: the run taken whole
# (possessive: a shorter run is followed by a name character, which neither a space nor an end is), the
# spaces and an end (the lookahead, which most lines fail at once), then a name word within the run ("sh:"
# ends one character past it, as the colon is no name character).
_NAME_IN_RUN = r"[\w$./-]*?(?:" + "|".join(map(re.escape, _NAME_WORDS)) + ")"
_FIRST_NAMED = _Lazy(r"(?=[\w$./-]*+\s*+(?:[:(\[]|\Z))" + _NAME_IN_RUN)
# An exception written with its module, whatever its name ends with, as the one line of a text (a traceback's last
# line kept alone, as ``tail -n 1`` keeps it: ``zipfile.BadZipFile: File is not a zip file``,
# ``stevedore.exception.NoMatches: ...``). Only alone: a line of a log or a listing can start so.
_MODULE_EXCEPTION = _Lazy(r"(?:[a-z_][a-z0-9_]{0,40}+\.){1,6}+[A-Z][A-Za-z0-9_]{0,80}+:\s")
_MODULE_LEADS = frozenset("abcdefghijklmnopqrstuvwxyz_")
_LAST_NAMED = _Lazy(r"(?=[\w$./-]*+\s*+(?::|\Z))" + _NAME_IN_RUN)

# What _ERROR_START reads at the start beyond _START_WORDS, over the whole first line (a cut head cannot
# tell "A client with...", prose, from "An error occurred"), so "a"/"an" counts only where its "an
# (unexpected) error" can follow, and an HTTP status.
_AN_ERROR = _Lazy(r"(?i:an?\s+(?:unexpected\s+)?error)|[45]\d\d")
# The characters IGNORECASE matches to an ASCII letter that .lower() does not turn into that letter.
_CASE_TWINS = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"))
# The start words by a first line's own first character, in any case (and the characters _folded turns into a lead).
_START_WORDS_BY_FIRST = {
    **{lead.upper(): words for lead, words in _START_WORDS_BY_LEAD.items()},
    **_START_WORDS_BY_LEAD,
    **{twin: _START_WORDS_BY_LEAD[letter] for twin, letter in (*_CASE_TWINS, ("\u212a", "k"))
       if letter in _START_WORDS_BY_LEAD},
}


def _folded(text: str) -> str:
    """``text`` lower-cased so that a word an IGNORECASE pattern matches in it is there in ASCII.

    Position for position: the one character .lower() makes two of is replaced first.
    """
    if not text.isascii():
        for twin, letter in _CASE_TWINS:
            if twin in text:
                text = text.replace(twin, letter)
    return text.lower()


# Marks a terminal UI puts before a status line ("✖ OpenAI API Streaming Error: 402 ...", QwenLM/qwen-code
# #73; "⚠️  API call failed (attempt 1/3): RateLimitError [HTTP 429]", anomalyco/opencode #29912): the
# line after them is read as the first line is.
_STATUS_MARKS = "\u2716\u2717\u2718\u274c\u26a0\u00d7\u26d4\u2757\U0001f6ab"
_MARK_SPACE = _STATUS_MARKS + "\ufe0f \t"


# After a mark, a status line names its failure after a few words of its own: "OpenAI API Streaming Error:",
# "API call failed (attempt 1/3)".
_MARKED_START = _Lazy(
    r"(?:[A-Z][\w.-]*\s+){1,4}(?:Error|Exception)\s*:|(?:[A-Z][\w.-]*\s+){1,3}(?:call|request|operation)\s+failed\b"
)


# A component's own error line, marked or not: a few capitalised words naming what failed, then "error:"
# and the message ("OpenAI API error: Error code: 429 - {...}", "Gemini API Error: ...").
# At most three words of twelve characters, so its error word ends within _EXIT_REACH, where _unframed
# looks for it.
_COMPONENT_ERROR = _Lazy(r"(?:[A-Z][\w.-]{0,11} ){1,3}(?:[Ee]rror|ERROR|Exception)\s*:\s+\S")


# A listing of names, one a line (a library's exception classes: "AmbiguousColumnError" / "ArgumentError" / ...), or
# drawn as a tree ("BaseException" / " ├── BaseExceptionGroup" / ..., a name's parent in brackets after it): it names
# failures, it does not report one.
_NAME_LIST = _Lazy(r"\s*(?:[ \t\u2502\u251c\u2514\u2500]*[A-Za-z_][\w.]{0,80}(?: \[[\w.]{1,80}\])?[ \t]*\n){3}")
# unittest's verbose line for a test that passed ("test_x_raises_TypeError (test.mod.Case.test_x_raises_TypeError) ...
# ok"): whatever failure its name says, it passed.
_PASSED_TEST = _Lazy(r"\w+ \([\w.]{1,300}\) \.\.\. ok$")


def _marked_start(first: str) -> re.Match[str] | None:
    """_ERROR_START's match on ``first`` once its status marks are stripped, or a marked line's own form,
    or a component's error line."""
    unmarked = _unmarked(first)
    start = _ERROR_START.match(unmarked)
    if start is None:
        start = (_COMPONENT_ERROR if unmarked is first else _MARKED_START).match(unmarked)
    return start


def _unmarked(first: str) -> str:
    """``first`` without the status marks and spaces that lead it (itself when none does)."""
    return first.lstrip(_MARK_SPACE) if first[:1] in _STATUS_MARKS else first


def _unframed(text: str, first: str | None = None) -> bool:
    """True when ``text`` surely neither presents itself as a failure nor states an exit code.

    It reads only the first and the last line, looking for a few words, so most results are told apart
    at once; False means "look closer", never "a failure". ``first`` is ``_first_line(text)`` when known.
    """
    if first is None:
        first = _first_line(text)
    lead = first[:1]
    if lead in _STATUS_MARKS:
        return False  # read once its marks are stripped (_unmarked)
    tail = text[-TAIL_CHARS:]  # _last_line, inline (str.rpartition parses no arguments, as rfind does)
    last = (tail.rstrip() if text[-1:].isspace() else tail).rpartition("\n")[2][-_LINE_CHARS:]
    stripped = last.strip()
    end = last[-1:]  # stripped's last character too (last has no trailing space): tested once for the readings below
    opening = stripped[:1]
    if opening == "a" and stripped[:2] == "at" and stripped[2:3].isspace() or end == "e" and last.endswith("more") \
            or opening == "N" and last.startswith("Node.js"):
        return False  # _FRAME_END: a stack frame, "... 12 more", "Node.js v20.1.0"
    # The start words with str methods on the head lower-cased (folded when it is not ASCII, so that the
    # words an IGNORECASE pattern matches are there in ASCII), "a"/"an" only where _ERROR_START's "an
    # (unexpected) error" can follow (see _AN_ERROR).
    head = first[:_EXIT_REACH]
    head = head.lower() if head.isascii() else _folded(head)
    words = _START_WORDS_BY_FIRST.get(lead)
    if words is not None and head.startswith(words) or (lead in "aA45" and _AN_ERROR.match(first)):
        return False
    if "A" <= lead <= "Z" and ("rror" in head or "xception" in head) and _COMPONENT_ERROR.match(first):
        return False  # a component's error line
    if len(first) <= 160 and ("exit" in head or "make" in head or "return" in head and _has_exit_word(head)):
        return False  # an exit code (_has_exit_word, its first tests inline)
    # A line without trailing spaces that holds none of a name's ends is the run alone or no name's line,
    # and a line with a space is not the run alone.
    if (":" in first or "(" in first or "[" in first or " " not in first) and _FIRST_NAMED.match(first):
        return False  # _ERROR_START's names
    # A module's exception (_MODULE_EXCEPTION), which starts with a small letter or "_", alone or with a database
    # server's context lines after it (_DRIVER_CONTEXT).
    if lead in _MODULE_LEADS and ":" in first and "." in first and (stripped == first or _driver_context(text)) \
            and _MODULE_EXCEPTION.match(first):
        return False
    # Perl's die message (_perl_die) ends with a line's number and ".", its summary of a script that does not compile
    # with "errors.": the character before the "." is tested before either is looked for.
    if end == "." and ("0" <= (before := stripped[-2:-1]) <= "9" and _perl_die(stripped) is not None
                       or before == "s" and _perl_uncompiled(stripped)):
        return False
    # ``text[:1] != lead``: text opens with a space (first, its first line, starts where the spaces end).
    # _traceback_tail tests the first line's end and lead itself; they are tested here too, as a call costs more than
    # the tests (most texts that open with a space, a file read's numbered lines, end their first line otherwise).
    if text[:1] != lead and (first[-1:] == ")" or first[-1:] == "(" or first[:6] in _TAIL_LEADS) \
            and _traceback_tail(text, first) is not None:
        return False  # a traceback's last lines
    if (end == ")" or end == '"') and _TCL_TRACE_AT in text and _tcl_trace(text) is not None:
        return False  # Tcl's error trace, whose last line is the place or the command of its outermost level
    if stripped == first:
        # A one-line text is its own last line: a name ending as a last line's ends as a first line's,
        # the death words but "bus" are start words, and the exit words were just looked for.
        return head[:3] != "bus"
    head = stripped[:_EXIT_REACH]
    head = head.lower() if head.isascii() else _folded(head)
    if head.startswith(_DEATH_WORDS) or (":" in stripped or " " not in stripped) and _LAST_NAMED.match(stripped):
        return False  # _PROCESS_DEATH, _PY_EXCEPTION_LINE
    return not (len(stripped) <= 160 and ("exit" in head or "make" in head or "return" in head and _has_exit_word(head)))


# --------------------------------------------------------------------------------------------------
# Retry hints.

_UNIT_SECONDS = (
    (("ms", "msec", "msecs", "millisecond", "milliseconds"), 0.001),
    (("s", "sec", "secs", "second", "seconds"), 1.0),
    (("m", "min", "mins", "minute", "minutes"), 60.0),
    (("h", "hr", "hrs", "hour", "hours"), 3600.0),
)
_SECONDS_PER_UNIT = {unit: factor for units, factor in _UNIT_SECONDS for unit in units}
_UNIT = r"(?:milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h)(?![a-z])"
_DURATION_PART = _Lazy(rf"(\d{{1,12}}(?:\.\d{{1,12}})?)\s*({_UNIT})", re.IGNORECASE)
_RETRY_TEXT = _Lazy(
    rf"(?:try again|retry|retrying)(?:\s+(?:in|after))?\s+(?P<d>(?:\d{{1,12}}(?:\.\d{{1,12}})?\s*{_UNIT}\s*)+)"
    r"|retry[-_ ]?after(?P<unit>[-_ ]?(?:ms|millis|milliseconds|secs?|seconds))?[\"']?\s*[:=]\s*[\"']?"
    r"(?P<n>\d{1,12}(?:\.\d{1,12})?)",
    re.IGNORECASE,
)
_NUMBER = _Lazy(r"\s*(\d{1,12}(?:\.\d{1,12})?)\s*")
_DIGIT = _Lazy(r"\d")
_INTEGER = _Lazy(r"-?[0-9]{1,6}")
_RETRY_KEYS = {
    "retryafter": 1.0,
    "retryafters": 1.0,
    "retryaftersecs": 1.0,
    "retryafterseconds": 1.0,
    "retryafterms": 0.001,
    "retryaftermillis": 0.001,
    "retryaftermilliseconds": 0.001,
    "retryin": 1.0,
}

# --------------------------------------------------------------------------------------------------
# Excerpts: one line a terminal, a CSV cell and a JSON report can all hold.

_INVISIBLE = _Lazy(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff\ud800-\udfff]"
)
_SURROGATE = _Lazy("[\ud800-\udfff]")
_REPR = reprlib.Repr()
_REPR.maxlevel = 4
_REPR.maxstring = 2000
_REPR.maxother = 200
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = 32


def _clean_line(text: str, chars: int) -> str:
    """One line with control, bidi and lone-surrogate characters gone and whitespace collapsed."""
    # Cleaning a prefix gives a prefix of the cleaned text: when twice ``chars`` already clean to more
    # than ``chars``, the cut is the same as the whole window's, read in less than half the time.
    line = " ".join(_INVISIBLE.sub(" ", text[: chars * 2]).split())
    if len(line) <= chars and len(text) > chars * 2:
        line = " ".join(_INVISIBLE.sub(" ", text[: chars * 5]).split())
    return clip(line, chars)


def _quote(text: str, chars: int = 40) -> str:
    return _clean_line(text, chars)


def _valid_text(value: object) -> str:
    """Text orjson can always serialise: a lone surrogate becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", value if isinstance(value, str) else str(value))


def _dump(value: object, limit: int) -> str:
    try:
        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, ValueError, OverflowError, RecursionError):
        text = _REPR.repr(value)
    return text[:limit]


def _window(text: str) -> str:
    """The part of a long text that is read: its head and its tail."""
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    return text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]


def _first_line(text: str) -> str:
    if text[:1].isspace():
        match = _FIRST_LINE.match(text, 0, HEAD_CHARS)
        return match.group(1).rstrip() if match else ""
    # What the pattern takes when there is no leading space to skip (str.partition parses no arguments, as
    # str.find does).
    return text[:_LINE_CHARS].partition("\n")[0].rstrip()


def _last_line(text: str) -> str:
    return text[-TAIL_CHARS:].rstrip().rpartition("\n")[2][-_LINE_CHARS:]


def _str(value: object, chars: int = CODE_CHARS) -> str | None:
    return clip(value, chars) if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        return int(value)
    return None


# --------------------------------------------------------------------------------------------------
# Reading retry hints.


def _duration(text: str) -> float | None:
    total = 0.0
    found = False
    for number, unit in _DURATION_PART.findall(text[:200]):
        total += float(number) * _SECONDS_PER_UNIT.get(unit.lower(), 1.0)
        found = True
    return total if found and math.isfinite(total) else None


def _seconds(value: object, factor: float) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            seconds = float(value) * factor
        except OverflowError:
            return None
    elif isinstance(value, str):
        number = _NUMBER.fullmatch(value[:40])
        seconds = float(number.group(1)) * factor if number else _duration(value)
    elif isinstance(value, Mapping) and isinstance(value.get("seconds"), (int, float, str)):
        return _seconds(value["seconds"], 1.0)  # protobuf Duration
    else:
        return None
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def _retry_in(value: object, depth: int = 0) -> float | None:
    """A retry hint anywhere near an error: retry_after(_ms|_secs), Retry-After, Google RetryInfo."""
    if depth > 3:
        return None
    if isinstance(value, Mapping):
        nested = []
        for index, (key, item) in enumerate(value.items()):
            if index >= 32:
                break
            if not isinstance(key, str):
                continue
            norm = _norm(key)
            if norm in _RETRY_KEYS:
                seconds = _seconds(item, _RETRY_KEYS[norm])
                if seconds is not None:
                    return seconds
            elif norm == "retrydelay":
                seconds = _seconds(item, 1.0)
                if seconds is not None:
                    return seconds
            elif isinstance(item, (Mapping, list)):
                nested.append(item)
        for item in nested:
            seconds = _retry_in(item, depth + 1)
            if seconds is not None:
                return seconds
    elif isinstance(value, list):
        for item in value[:8]:
            seconds = _retry_in(item, depth + 1)
            if seconds is not None:
                return seconds
    return None


def _retry_in_text(text: str, low: str | None = None) -> float | None:
    at = (_lowered(text) if low is None else low).find("try")
    if at < 0 or _DIGIT.search(text, at) is None:
        return None  # every match holds "try" and then a number
    match = _RETRY_TEXT.search(text)
    if match is None:
        return None
    if match.group("d"):
        return _duration(match.group("d"))
    unit = (match.group("unit") or "").strip("-_ ").lower()
    factor = 0.001 if unit.startswith("m") else 1.0
    return _seconds(match.group("n"), factor)


# --------------------------------------------------------------------------------------------------
# Text.


class _Hit(Struct, frozen=True):
    kind: Kind
    evidence: str
    code: str | None = None


def _http_hit(text: str) -> _Hit | None:
    if _STATUS_NUMBER.search(text) is None:
        return None
    for index, match in enumerate(_HTTP_STATUS.finditer(text)):
        if index >= 8:
            break
        number = int(match.group("a") or match.group("b") or match.group("c") or match.group("d") or match.group("e"))
        if number >= 400:
            kind = _status_kind(number)
            if kind is not None:
                return _Hit(kind, f"HTTP {number} in text", str(number))
    return None


def _lowered(text: str) -> str:
    """``text`` in lower case, position for position, so a match in it is a match in ``text``."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(char if len(char.lower()) != 1 else char.lower() for char in text)


#: Short parts of the alternatives' literals, rare in text, that between them cover most literals: a
#: literal is looked for only when its part is in the text (a literal no part covers is its own part).
#: Only a hint for speed, whatever the signals hold: chosen greedily over the development texts, each
#: part paying for the literals it covers by how often it is in a text.
_SIGNAL_PARTS = (
    "conn", "not", "too ", "exce", "red", "time", "ted", "no ", "mem", "perm", "net", "una", "malfor", " limit",
    "acces", "valid", "y f", "cap", "ficien", "killed", "pipe", "bad ", "ticati", "ance", "oesn't", "own",
    "socket", "reach", "terr", "usage", "rot", "cut", "before", "serv", "reso", "_re", "sing", "rre", "sslerr",
    "gh dem", "_again", "taddri", "erofs", "cessab", "rbidde", "tch fa", "deadli", "oom", "hit yo", "couldn",
    "enoent", "rloade", "global", "nosuch", "token ", "quota ", "argume", "unctio", "max", "contex", "quest ",
    "rate", "api", "exit",
)


class _SignalIndex(Struct, frozen=True):
    """One list of signals laid out for _find_signal: its alternatives in one flat run of (literal,
    pattern, signal), the HTTP status's turn marked by a ``None`` signal, and the run's positions by
    the part of their literal that must be in a text before the literal is looked for."""

    signals: Sequence[_Signal]
    flat: tuple[tuple[str, _Lazy | None, _Signal | None], ...]
    always: tuple[int, ...]
    by_part: tuple[tuple[str, tuple[int, ...]], ...]


#: By the id of the list (kept in the index, so the id stays its own).
_SIGNAL_INDEXES: dict[int, _SignalIndex] = {}


def _signal_index(signals: Sequence[_Signal]) -> _SignalIndex:
    known = _SIGNAL_INDEXES.get(id(signals))
    if known is not None and known.signals is signals:
        return known
    flat: list[tuple[str, _Lazy | None, _Signal | None]] = []
    for rank, signal in enumerate(signals):
        if rank == _HTTP_RANK and (signals is _SIGNALS or signals is _STRONG_SIGNALS):
            flat.append(("", None, None))
        flat.extend((literal, alternative, signal) for literal, alternative in signal.alternatives)
    always: list[int] = []
    by_part: dict[str, list[int]] = {}
    for at, (literal, _, _) in enumerate(flat):
        if not literal:
            always.append(at)
            continue
        part = next((part for part in _SIGNAL_PARTS if part in literal), literal)
        by_part.setdefault(part, []).append(at)
    index = _SignalIndex(signals, tuple(flat), tuple(always),
                         tuple((part, tuple(ats)) for part, ats in by_part.items()))
    _SIGNAL_INDEXES[id(signals)] = index
    return index


def _find_signal(text: str, signals: Sequence[_Signal] = _SIGNALS, low: str | None = None) -> _Hit | None:
    """The highest-ranked cause the text states, an HTTP status ranking just below the limit signals."""
    low = _lowered(text) if low is None else low
    index = _signal_index(signals)
    # Every alternative whose literal is in the text has its part there too: the others are skipped
    # unread, and the rest are read in their order, so the first match is the one a full pass finds.
    picked = list(index.always)
    for part, ats in index.by_part:
        if part in low:
            picked.extend(ats)
    picked.sort()
    flat = index.flat
    status: _Hit | None = None
    for at in picked:
        literal, alternative, signal = flat[at]
        if literal in low:
            if signal is None:
                status = _http_hit(text)
                continue
            match = alternative.search(low)  # type: ignore[union-attr]
            if match is not None:
                if status is not None and (signal is _WEAK_INVALID or _PRECEDENCE[signal.kind] >= _PRECEDENCE[status.kind]):
                    return status
                said = text[match.start() : match.end()]
                return _Hit(signal.kind, signal.label or f"text says '{_quote(said)}'")
    return status


def _exit_code(line: str) -> int | None:
    """A process's exit code stated on a frame line (``Exit code: 1``, ``exited with status 2``)."""
    if len(line) > 160 or _no_exit_word(line):
        return None
    match = _EXIT_CODE.search(line)
    if match is None or match.start() > 40 or line[match.start() - 1 : match.start()] in _CODE_BEFORE:
        # "Exit code: 3" in quotes, or a property ("process.exitCode = 1"), is a value the line holds (source code, a
        # grep hit), not its state
        return None
    return int(match.group("n") or match.group("m"))


def _exit_verdict(code: int, text: str, basis: str) -> _Verdict:
    """A non-zero exit: terminal_error, unless the exit code or the text says what ended the process."""
    window = _window(text)
    special = _EXIT_KINDS.get(code)
    if special is not None:
        return _Verdict(special[0], f"{basis}; {special[1]}" if basis else special[1], message=text)
    hit = _find_signal(window, _ENVIRONMENT_SIGNALS)
    evidence = f"exit code {code}; {hit.evidence}" if hit is not None else f"exit code {code}"
    kind = Kind.TERMINAL_ERROR if hit is None or hit.kind is Kind.EXECUTION else hit.kind
    return _Verdict(kind, f"{basis}; {evidence}" if basis else evidence, message=text)


# An uncaught exception is read by its name and its message, like any other text (the corpus's rule settled
# after heldout6): a missing key or a name that says "not found" ("NoSuchKey", "NoResultFound", configparser's
# "NoSectionError") is a missing thing; a parse, decode, syntax or validation error, or a value error (ValueError, TypeError, a module's own ``Error``) whose message complains
# of the value it was given ("month must be in 1..12", "Incorrect padding", "badly formed"), is bad input; any
# other uncaught exception ("TypeError: unsupported operand", "ValueError: oops") is the tool's crash.
_EXCEPTION_NAME = _Lazy(r"(?:[A-Za-z_]\w*\.){0,6}[A-Za-z_]\w{0,80}(?=:| \[ERR_\w{1,60}\]:|\s*$)")
# Node's error code after its class's name ("RangeError [ERR_OUT_OF_RANGE]: ..."): Node's own taxonomy, read by its
# documented meaning. A value or an argument refused, or a thing not found; any other code (ERR_ASSERTION, an
# internal error) names no cause.
_NODE_CODE = _Lazy(r" \[ERR_(\w{1,60})\]:")
_NODE_BAD_INPUT = _Lazy(r"(?:INVALID|UNKNOWN|MISSING|UNSUPPORTED|PARSE_ARGS)_|OUT_OF_RANGE$|OUT_OF_BOUNDS$")
_MISSING_NAME = _Lazy(r"(?:^|\.)KeyError$|NotFound(?:Error|Exception)?$|(?:^|\.)NoSuch[A-Z]\w*$|(?:^|\.)No[A-Z]\w*Found$"
                      r"|(?:^|\.)No(?:Section|Option)Error$")
# A parser's or decoder's refusal, or a name that calls its input bad (``gzip.BadGzipFile``,
# ``decimal.InvalidOperation``).
_PARSE_NAME = _Lazy(
    r"(?:Decode|Encode|Parse|Parser|Parsing|Scanner|Syntax|Validation|Unpickling|Invalid)\w*(?:Error|Exception)$"
    r"|(?:^|\.)(?:Bad|Invalid|Malformed)[A-Z]\w*$|(?:^|\.)Token(?:ize|izer)?Error$"
    # Python's SyntaxErrors of a script's layout ("IndentationError: expected an indented block", "TabError:
    # inconsistent use of tabs and spaces in indentation").
    r"|(?:^|\.)(?:Indentation|Tab)Error$"
    # The JVM's exceptions for a value of the wrong form or an argument a method refuses.
    r"|(?:NumberFormat|IllegalArgument|InputMismatch|UnsupportedEncoding)Exception$"
)
# Of those, a parser's, decoder's or validator's own exception: what it refuses is what it was given to read.
_PARSER_NAME = _Lazy(r"(?:Decode|Parse|Parser|Parsing|Scanner|Syntax|Validation)\w*(?:Error|Exception)$")
# ValueError, TypeError, LookupError ("unknown encoding"), EOFError and OSError (a decoder's "Invalid data
# stream"), or a library's own error (a dotted name: ``_csv.Error``, ``locale.Error``); a builtin such as
# IndexError or RuntimeError is a defect whatever its message says.
_VALUE_NAME = _Lazy(r"(?:Value|Type|Lookup|EOF|OS|Range)Error$|[\w.]+\.\w*(?:Error|error|Exception)$|[\w.]+\.[A-Z]\w*$")
# The last exception line of a traceback whose message runs on (``yaml.parser.ParserError: while parsing ...``
# then the marks), or whose name is lower case (``struct.error: ...``).
# A module's exception whose name has no such ending is written with its module (``gzip.BadGzipFile: ...``).
_TRACEBACK_EXCEPTION = _Lazy(
    r"^(?:(?:[A-Za-z_]\w*\.){0,6}\w*(?:Error|Exception|error)\b(?: \[ERR_\w{1,60}\])?|(?:[A-Za-z_]\w*\.){1,6}[A-Z]\w*):[^\n]*",
    re.MULTILINE)
# An exception line as a traceback's last lines end with one: a class's name and a message (not a tool's "error: ...").
_TRACEBACK_EXCEPTION_HEAD = _Lazy(r"(?:[A-Za-z_]\w*\.){0,6}[A-Z]\w*: \S")
# A value refused in words that say nothing else ("unknown encoding", "unsupported locale setting", "option -x not
# recognized", "7 is not a valid Color", "does not match format"), input cut short or left open ("EOF read where not
# expected", "unclosed token", "unmatched parenthesis", 'file "x" is truncated'), a value called bad in the program's
# own words ("Bad configuration option", "version 'x1' has bad syntax", "Wrong expression passed to '-k'"), or one
# outside what the operation is defined for ("Square root of a negative number", "negative time"): the words a
# program's own marked failure line (_marked_complaint) is read for.
_REFUSED_VALUE = (
    r"\bunknown\b|\bunsupported\b(?! operand)|\bnot supported\b(?! between)|\bnot an? supported\b|\b(?:not |un)?recogni[sz]ed\b|\bnot an? valid\b|\bdo(?:es)? not match\b"
    r"|\bEOF\b|\bunclosed\b|\bunbalanced\b|\bunmatched\b|\bunterminated\b|\bis truncated\b"
    r"|\bbad (?:[\w-]+ ){0,2}(?:option|syntax|format|value|argument|specification)\b"
    r"|\bwrong (?:[\w-]+ )?(?:expression|value|format|syntax|argument|name)s?\b"
    r"|\bnegative (?:\w+ )?(?:number|value|time|count|size|length|argument)s?\b"
    r"|\b(?:value|argument|number|count|size|length) is negative\b|\bis not understood\b"
)
_MARKED_REFUSAL = _Lazy(_REFUSED_VALUE, re.IGNORECASE)
# What an uncaught exception's or a diagnostic's message says when it complains about its input: those words, and
# more that a program's own line may use of its own state ("Illegal division by zero", "but expected 0000"): a value
# that must be otherwise, ill-formed, unexpected, outside what the operation is defined for ("math domain error",
# "Sample larger than population", "Missing close parenthesis").
_VALUE_COMPLAINT = _Lazy(
    _REFUSED_VALUE +
    r"|\b(?:must|has to|needs to|should) (?:be|not|have|contain|start|end|specify|provide|include|supply|refer)\b"
    r"|\b(?:invalid|incorrect|illegal|malformed|mismatched)\b|\bnot valid\b|\boverflow\b|\bcontains? no\b"
    r"|\bbadly formed\b|\bunexpected\b|\bexpected\b(?! \w+ instance)|\brequires\b|\bdo(?:es)? not appear to be\b"
    r"|\b(?:out of|not in) range\b|\bno closing\b|\bformat not (?:supported|recognized)\b"
    r"|\bcan(?:not|'t) be\b|\bdomain error\b|\b(?:larger|greater|smaller|less|more) than\b|\bmissing\b"
    # ... or of the wrong form ("non-integer argument", "too few X's", "no properly formatted checksum lines"),
    # or a parser's refusal named inside the message ("Error running jq: ParserError").
    r"|\bnon-(?:integer|numeric|negative|positive|hexadecimal)\b|\btoo (?:few|many|long|short|large|small|big)\b(?! open files)"
    r"|\b(?:no|not|im)\s*properly formatted\b|\b\w*(?:Decode|Parse|Parser|Syntax)(?:Error|Exception)\b"
    # ... or a form the input must have and lacks, in a library's or tool's own words: it does not look like or match
    # what it must ("This does not look like a tar archive", "closing tag ... doesn't match any open tag"), it is of
    # odd length or empty where it cannot be ("Odd-length string", "Empty Label", "sort: empty tab"), or it defines
    # one name twice in what it reads ("redefinition of group name"). A thing to create that already exists in the
    # state a tool keeps (a branch, a table, a unique key) is no bad input (the corpus README's rule for conflicts).
    r"|\bdo(?:es)?(?: not|n't) (?:look like|match)\b|\bodd[- ]length\b"
    r"|\bempty (?:label|tab|string|name|key|field|pattern|expression|value|file)s?\b|\bis not an? (?:[\w-]+ )?encoding\b|\bredefinition of\b"
    # ... or its parts depend on themselves, a cycle in a graph it was given to order ("nodes are in a cycle"), or it
    # does not start as its format must ("file does not start with RIFF id").
    r"|\bin a cycle\b|\bcontains a (?:cycle|loop)\b|\bdo(?:es)?(?: not|n't) start with\b"
    # ... or a range's ends in the wrong order ("range-endpoints of 'z-a' are in reverse collating sequence order",
    # "range out of order in character class").
    r"|\b(?:in reverse|out of) (?:[\w-]+ ){0,2}order\b",
    re.IGNORECASE,
)


# The JVM's exceptions for a program's own defect, whatever their message says of a value ("ArithmeticException:
# integer overflow", "ClassCastException: class java.lang.String cannot be cast to class java.lang.Integer").
_JVM_DEFECT = _Lazy(r"(?:^|\.)(?:Arithmetic|ClassCast|NullPointer)Exception$")


# Python's refusal to remove or find an item a sequence does not hold ("list.remove(x): x not in list",
# "tuple.index(x): x not in tuple", "5 is not in list"): a missing thing.
_NOT_IN_SEQUENCE = _Lazy(r"\bnot in (?:list|tuple|sequence|deque)$")


def _exception_kind(line: str, stack: str | None = None) -> _Hit | None:
    """The kind an uncaught exception's line ``pkg.SomeError: message`` names by its words, or None (a crash).

    ``stack``: the stack trace it ends (lint's TF204 reads "traceback" in the evidence).
    """
    match = _EXCEPTION_NAME.match(line)
    if match is None:
        return None
    name = match.group().rstrip()
    said = f"uncaught {_quote(name, 60)}" + (f" ({stack})" if stack else "")
    if _MISSING_NAME.search(name):
        return _Hit(Kind.NOT_FOUND, f"{said}: a missing thing")
    if _PARSE_NAME.search(name):
        return _Hit(Kind.INVALID_ARGUMENTS, f"{said}: input that does not parse")
    if line[match.end() : match.end() + 2] == " [" and (node := _NODE_CODE.match(line, match.end())) is not None:
        code = node.group(1)
        if code.endswith("NOT_FOUND"):
            return _Hit(Kind.NOT_FOUND, f"{said}: a missing thing", f"ERR_{code}")
        if _NODE_BAD_INPUT.search(code) is not None:
            return _Hit(Kind.INVALID_ARGUMENTS, f"{said}: a bad value", f"ERR_{code}")
        return None
    if name[-10:] == "ValueError" and _NOT_IN_SEQUENCE.search(line, match.end()) is not None:
        return _Hit(Kind.NOT_FOUND, f"{said}: a missing item")
    if _VALUE_NAME.search(name) and _VALUE_COMPLAINT.search(line, match.end()) is not None \
            and _JVM_DEFECT.search(name) is None:
        return _Hit(Kind.INVALID_ARGUMENTS, f"{said}: a bad value")
    return None


def _exception_hit(window: str, first: str, last: str, python_end: bool) -> _Hit | None:
    """The kind the uncaught exception that heads or ends a failure text names (:func:`_exception_kind`):
    a Python traceback's last exception line, a JVM thread's exception or its last ``Caused by:``."""
    if python_end:
        return _exception_kind(last, _stack_kind(window))
    if _PY_TRACEBACK in window:
        lines = _TRACEBACK_EXCEPTION.findall(window, window.rfind(_PY_TRACEBACK))
        return _exception_kind(lines[-1], _stack_kind(window)) if lines else None
    if (thread := _JVM_THREAD.match(first)) is not None:
        causes = _CAUSED_BY.findall(window)
        line = causes[-1].partition(": ")[2] if causes else first[thread.end() :]
        return _exception_kind(line, _stack_kind(window))
    if (frame := _STACK_FRAME.search(window)) is not None and window[frame.start()] == " ":
        # Node's uncaught error: the source line and a caret, then "SyntaxError: ..." above its "    at" frames.
        lines = _TRACEBACK_EXCEPTION.findall(window, 0, frame.start())
        return _exception_kind(lines[-1], _stack_kind(window)) if lines else None
    # An exception's line alone (a traceback's last line, kept as ``tail -n 1`` keeps it): ``struct.error: ...``.
    return _exception_kind(first) if _PY_EXCEPTION_LINE.match(first) or _TRACEBACK_EXCEPTION.match(first) else None


# HCL's diagnostic, as terraform writes one: "Error: <summary>", a blank line, then where in the configuration ("  on
# main.tf line 2:") and the detail. A function that refused the values a configuration gave it ('Call to function
# "cidrsubnet" failed: insufficient address space ...'), a name the configuration declares twice ("Duplicate resource
# ... configuration") and a run with no configuration files to read ("No configuration files") say their kind by the
# summary's form; a missing thing the detail names ('no file exists at "missing.txt"') outranks a summary's general
# "Invalid function argument".
_HCL_FUNCTION = _Lazy(r'Call to function "[\w:]{1,80}" failed: ')
_HCL_NO_FILES = _Lazy(r"No (?:[\w-]+ ){0,2}files?(?: found)?\.?$")
_HCL_REACH = 1024


def _hcl_hit(text: str, first: str) -> _Hit | None:
    """The kind an HCL diagnostic that ``first`` (``Error: <summary>``) heads says by its form, or None."""
    at = text.find(first) + len(first)
    if text[at : at + 2] != "\n\n":
        return None  # no diagnostic's blank line after its summary
    summary = first[7:]
    detail = text[at : at + _HCL_REACH]
    if summary[:10] == "Duplicate ":
        return _Hit(Kind.INVALID_ARGUMENTS, "a configuration declares a name twice")
    if summary == "Error in function call" or _HCL_FUNCTION.search(detail) is not None:
        return _Hit(Kind.INVALID_ARGUMENTS, "a function refused the values it was given")
    if summary[:3] == "No " and _HCL_NO_FILES.match(summary) is not None:
        return _Hit(Kind.NOT_FOUND, "no files to read")
    return _find_signal(detail, _MISSING_SIGNALS)


# A Rust program's panic ("thread 'main' (10271) panicked at tryfrom.rs:1:89:" then its message) or the error its main
# returned ("Error: ParseIntError { kind: InvalidDigit }"). An ``Err`` unwrapped is read by its value's type: a value
# that does not parse or convert (``ParseIntError``, ``TryFromIntError``, ``FromUtf8Error``) is bad input, an
# environment variable that is not set (``VarError::NotPresent``) a missing thing; a panic's own message by the words
# a marked failure line is read for ("cannot convert float seconds to Duration: value is negative"). Any other panic
# (an index out of bounds, an overflow, ``None`` unwrapped) is the program's defect.
_RUST_PANIC = _Lazy(r"thread '[^'\n]{1,80}'(?: \(\d{1,10}\))? panicked at [^\n]{1,300}:\n([^\n]{1,400})")
_RUST_VALUE = _Lazy(r"(?:[a-z_]\w{0,40}::){0,4}([A-Z]\w{0,60})(?: \{ | ?\(|$)")
_RUST_CONVERSION = _Lazy(r"(?:TryFrom|FromUtf8|FromUtf16|Utf8)\w*Error$")
_RUST_MISSING_VALUES = frozenset({"NotPresent"})
_RUST_ERR_VALUE = "`Err` value: "


def _rust_value_hit(value: str, said: str) -> _Hit | None:
    """The kind the Debug form of a Rust error ``value`` (``ParseIntError { kind: InvalidDigit }``) names, or None."""
    found = _RUST_VALUE.match(value)
    if found is None:
        return None
    name = found.group(1)
    if name in _RUST_MISSING_VALUES:
        return _Hit(Kind.NOT_FOUND, f"{said} {name}: a missing thing")
    if _PARSE_NAME.search(name) is not None or _RUST_CONVERSION.search(name) is not None:
        return _Hit(Kind.INVALID_ARGUMENTS, f"{said} {name}: input that does not parse or convert")
    return None


def _rust_hit(window: str, first: str) -> _Hit | None:
    """The kind a Rust program's panic or main's error that ``first`` opens states, or None (a defect)."""
    if first[:7] == "Error: ":
        return _rust_value_hit(first[7:], "main returned")
    panic = _RUST_PANIC.match(window, window.find(first))
    if panic is None:
        return None
    message = panic.group(1)
    at = message.find(_RUST_ERR_VALUE)
    if at >= 0:
        return _rust_value_hit(message[at + len(_RUST_ERR_VALUE) :], "a panic unwrapped")
    if _MARKED_REFUSAL.search(message) is not None:
        return _Hit(Kind.INVALID_ARGUMENTS, "a panic's complaint about its input")
    return None


def _parser_refusal(window: str, first: str, last: str, python_end: bool) -> _Hit | None:
    """A parser's or validator's refusal, by the name of the uncaught exception that heads or ends the text (a
    traceback's last exception line, or the first line), or None."""
    if python_end:
        line = last
    elif _PY_TRACEBACK in window:
        lines = _TRACEBACK_EXCEPTION.findall(window, window.rfind(_PY_TRACEBACK))
        line = lines[-1] if lines else ""
    else:
        line = first
    match = _EXCEPTION_NAME.match(line)
    if match is None or line[match.end() : match.end() + 1] != ":":
        return None
    if _PARSER_NAME.search(match.group()) is not None:
        return _Hit(Kind.INVALID_ARGUMENTS, f"uncaught {_quote(match.group(), 60)}: input that does not parse")
    if match.group()[-10:] == "ValueError" and match.group()[-11:-10].isalpha():
        # A library's own ValueError ("AddressValueError: Octet 256 (> 255) not permitted in '256.1.1.1'"); a bare
        # ValueError may wrap another's refusal ("ValueError: Error raised by bedrock service: ... AccessDenied").
        return _Hit(Kind.INVALID_ARGUMENTS, f"uncaught {_quote(match.group(), 60)}: a value refused")
    return None


def _traceback_tail(text: str, first: str) -> str | None:
    """The exception line of a traceback's last lines, as ``tail -n 3`` keeps them (indented frames or source lines,
    then ``pkg.mod.SomeError: ...`` at the start of a line), or None. Only a text that opens indented with a frame
    (``File "..."``) or a line of source (``raise X(``, a call) is read (``first``: its first line), and only its first
    few lines."""
    if not text[:1].isspace() or not (first[-1:] == ")" or first[-1:] == "(" or first[:6] in _TAIL_LEADS):
        return None
    at = 0
    for _ in range(_TAIL_FRAMES):
        end = text.find("\n", at, at + _LINE_CHARS)
        if end < 0:
            return None
        at = end + 1
        if not text[at : at + 1].isspace():
            break
    else:
        return None
    if not ("a" <= text[at : at + 1] <= "z" or "A" <= text[at : at + 1] <= "Z"):
        return None
    found = _TRACEBACK_EXCEPTION.match(text, at)
    if found is None or _TRACEBACK_EXCEPTION_HEAD.match(found.group()) is None:
        return None
    return found.group().strip()


def _closed_output(text: str) -> bool:
    """True when ``text`` is output then the traceback of a write to that output that found its reader gone
    (_OUTPUT_WRITE): the output before the traceback is what was delivered."""
    start = text.rfind(_PY_TRACEBACK)
    return start > 0 and not text[:start].isspace() and _OUTPUT_WRITE.search(text, start) is not None


def _driver_context(text: str) -> bool:
    """True when ``text``'s second line is a database server's context line (_DRIVER_CONTEXT): its lead tested first."""
    end = text.find("\n", 0, _DRIVER_REACH)
    return end >= 0 and text.startswith(_DRIVER_LEADS, end + 1) and _DRIVER_CONTEXT.match(text) is not None


def _perl_die(line: str) -> str | None:
    """The message of Perl's die or croak that ``line`` (a text's last line, stripped) is ("Day '32' out of range
    1..31 at -e line 1."), or None: a cheap test on its end first."""
    if line[-1:] != "." or " line " not in line[-_PERL_END:]:
        return None
    found = _PERL_DIE.search(line)
    return None if found is None else line[: found.start()]


def _perl_uncompiled(line: str) -> bool:
    """True when ``line`` (a text's last line, stripped) is Perl's summary of a script that does not compile."""
    return line[:13] == "Execution of " and _PERL_UNCOMPILED.fullmatch(line) is not None


# Tcl's uncaught error as tclsh writes it: the message, then its errorInfo trace, each level a line that says where
# ("    while executing", "    invoked from within") over the command it ran in quotes. The trace is the failure
# whatever the message's words; they give its kind, Tcl's own wordings first (_TCL_KINDS), as its command names,
# dictionary keys and channels are things looked up and its operands values checked.
_TCL_TRACE_AT = "\n    while "
_TCL_TRACE = _Lazy(r'\n    while (?:executing|compiling)\n"')
_TCL_KINDS = (
    (Kind.BEHAVIOR_VERSION_UNSUPPORTED, ("version conflict for package ",)),
    (Kind.NOT_FOUND, ('invalid command name "', " not known in dictionary", "can not find channel named ",
                      'unknown encoding "', 'unknown namespace "', "no files matched glob pattern ")),
    (Kind.INVALID_ARGUMENTS, ("can't use non-numeric string as operand", "expected integer but got ",
                              "list must have an even number of elements", "unmatched open brace in list",
                              'bad level "', "isn't a procedure", "bad value for ", "domain error: ", "data error")),
)
# The error code a script gave its error ("throw {ARITH DOMAIN} msg", "return -code error -errorcode {POSIX EACCES}
# msg"), in the command the trace quotes: Tcl's machine-readable cause, read when the message's words name none.
_TCL_ERROR_CODE = _Lazy(r'\n"(?:throw|return -code error -errorcode) \{([A-Z]+ [A-Z]+)\b')
_TCL_CODE_KINDS = {"POSIX ENOENT": Kind.NOT_FOUND, "POSIX EACCES": Kind.PERMISSION_DENIED,
                   "POSIX EPERM": Kind.PERMISSION_DENIED, "ARITH DOMAIN": Kind.INVALID_ARGUMENTS}


def _tcl_trace(text: str) -> int | None:
    """Where Tcl's errorInfo trace starts in ``text`` (the end of its message), or None when it has none."""
    if _TCL_TRACE_AT not in text:
        return None
    found = _TCL_TRACE.search(text, 0, HEAD_CHARS)
    return None if found is None else found.start()


def _tcl_error(text: str, at: int) -> _Verdict:
    """The failure of Tcl's trace whose message ends at ``at``, of the kind its message says."""
    message = text[:at].strip()
    low = message.lower()
    kind = next((kind for kind, words in _TCL_KINDS if any(word in low for word in words)), None)
    if kind is not None:
        return _Verdict(kind, f"Tcl's error trace; it says '{_quote(message, 40)}'", message=message)
    coded = _TCL_ERROR_CODE.search(text, at, at + _LINE_CHARS)
    if coded is not None and (kind := _TCL_CODE_KINDS.get(coded.group(1))) is not None:
        return _Verdict(kind, f"Tcl's error trace; error code {coded.group(1)}", code=coded.group(1), message=message)
    hit = _find_signal(message, low=low)
    if hit is not None:
        return _Verdict(hit.kind, f"Tcl's error trace; {hit.evidence}", message=message)
    return _Verdict(Kind.EXECUTION, "Tcl's error trace", message=message, generic=True)


# curl's numbered error ("curl: (37) Couldn't open file ..."): its number is curl's exit code, which its manual
# documents. The codes whose meaning is one kind: an unsupported protocol (1) and a malformed URL (3) or telnet
# option (49) are bad input; a proxy or host that does not resolve (5, 6), a refused connection (7), an SSL
# handshake (35), an empty reply (52), a send or receive that fails (55, 56) are the network's; a timeout (28); a
# remote resource access denied (9), a login denied (67); a local file curl cannot read (37) or a remote one that
# is not there (78). An HTTP error (22) gives its status, and any other code names no cause.
_CURL_ERROR = _Lazy(r"curl: \((\d{1,2})\) ")
_CURL_KINDS = {
    1: Kind.INVALID_ARGUMENTS, 3: Kind.INVALID_ARGUMENTS, 49: Kind.INVALID_ARGUMENTS,
    5: Kind.NETWORK_ERROR, 6: Kind.NETWORK_ERROR, 7: Kind.NETWORK_ERROR, 35: Kind.NETWORK_ERROR,
    52: Kind.NETWORK_ERROR, 55: Kind.NETWORK_ERROR, 56: Kind.NETWORK_ERROR,
    28: Kind.TIMEOUT, 9: Kind.PERMISSION_DENIED, 67: Kind.UNAUTHORIZED, 37: Kind.NOT_FOUND, 78: Kind.NOT_FOUND,
}


def _curl_hit(first: str) -> _Hit | None:
    """The kind curl's numbered error on ``first`` names by its exit code (_CURL_KINDS), or None."""
    found = _CURL_ERROR.match(first) if first[:7] == "curl: (" else None
    kind = None if found is None else _CURL_KINDS.get(int(found.group(1)))
    return None if kind is None else _Hit(kind, f"curl's exit code {found.group(1)}", found.group(1))


# OpenSSL's error queue, a line for each entry: "<thread>:error:<code>:<library>:<function>:<reason>:<file>:<line>:"
# ("4027A543717F0000:error:0A0000B9:SSL routines:SSL_CTX_set_cipher_list:no cipher match:../ssl/ssl_lib.c:2741:").
# The reasons say what failed: a system call's words ("No such file or directory", "Connection refused") give
# their kind, a reason that refuses what it was given ("unsupported", "no cipher match", "bad decrypt", "wrong
# tag", "key size too small") is bad input, any other names no cause.
_OPENSSL_LINE = _Lazy(r"^[0-9A-F]{8,16}:error:[0-9A-F]{8}:[^:\n]{1,80}:[^:\n]{1,120}:([^:\n]{1,200}):", re.MULTILINE)
_OPENSSL_LINES = 8
_OPENSSL_REFUSAL = _Lazy(r"\bno \w+ match\b|\bbad \w+|\bwrong \w+", re.IGNORECASE)


def _openssl_hit(window: str) -> _Hit | None:
    """The kind the reasons of OpenSSL's error lines in ``window`` name (_OPENSSL_LINE), or None."""
    if ":error:" not in window:
        return None
    reasons = _OPENSSL_LINE.findall(window)[:_OPENSSL_LINES]
    for reason in reasons:
        if (hit := _find_signal(reason)) is not None:
            return _Hit(hit.kind, f"OpenSSL's error '{_quote(reason, 40)}'; {hit.evidence}", hit.code)
    for reason in reasons:
        if _VALUE_COMPLAINT.search(reason) is not None or _OPENSSL_REFUSAL.search(reason) is not None:
            return _Hit(Kind.INVALID_ARGUMENTS, f"OpenSSL's error '{_quote(reason, 40)}': a complaint about its input")
    return None


#: how a program's own failure line starts when it marks it as one ("fatal: ...", "error: ...", "ERROR: ..."), lower-cased
_MARK_WORDS = ("fatal:", "error:", "fatal error:")


def _marked_complaint(basis: str, first: str, last: str, window: str) -> _Hit | None:
    """Bad input, when a failure a program marks as its own (a first line ``fatal: ...`` or ``error: ...``, Perl's die
    message) names no cause but complains about what it was given (_VALUE_COMPLAINT): git's "fatal: 12345: not a valid
    SHA1", Perl's "Unknown encoding 'x' at -e line 1.". A traceback's exception is read by its name instead
    (_exception_kind), so a text that holds one is not read here."""
    if basis[:5] == "Perl'":
        said = last
    elif basis[:12] == "starts with " and first[:12].lower().startswith(_MARK_WORDS):
        said = first.partition(":")[2]
    else:
        return None
    if _PY_TRACEBACK in window or _MARKED_REFUSAL.search(said) is None:
        return None
    return _Hit(Kind.INVALID_ARGUMENTS, "a complaint about its input")


def _stack_kind(window: str) -> str | None:
    """Name the uncaught-failure report in a text, if it holds one."""
    if _PY_TRACEBACK in window:
        return "Python traceback"
    if _JVM_THREAD.search(window) or ("\tat " in window and _STACK_FRAME.search(window)):
        return "JVM stack trace"
    if _STACK_FRAME.search(window):
        return "stack trace"
    return None


# What a flagged text needs to be an execution failure rather than an unknown one: any word of failure,
# an errno name leading it, Claude Code's tool-error tag.
_FAILURE_WORD = _Lazy(r"(?i:\berror\b|\bfail|\bexception\b|\bfatal\b)|^E[A-Z]{3,}:|<tool_use_error>")
# A line among the first few that states an error as compilers and package managers write one.
# A coding agent's transcript writes a tool's result under its call behind "⎿" (Claude Code: "⏺ Read(x)" then
# "  ⎿  Error: File content ... exceeds maximum allowed tokens").
_RESULT_MARK = "(?:[ \t]{0,8}\u23bf[ \t]+)?"
_ERROR_LINE = _Lazy(_RESULT_MARK + r"(?:(?:[^\s:]{1,200}:\d+(?::\d+)?|[a-z][a-z0-9_+-]{0,30}): (?:fatal )?)?(?:ERROR|Error|error|FATAL|fatal)(?:\[[\w-]{0,40}\])?:\s+(\S[^\n]{0,300})")
#: The line is looked for in the first five lines and 600 characters.
_ERROR_LINE_REACH = 5
_ERROR_LINE_PROBE = 600
# Starts with a literal newline, so the search jumps from line to line.
_ERROR_LINE_AT = _Lazy(r"\n" + _RESULT_MARK + "(?:ERROR|Error|error|FATAL|fatal)")
# A compiler's diagnostic (gcc's ``file.c:1:21: error: ...``, javac's ``Main.java:3: error: ...``), looked
# for only where "error: " is in the probe (tried at every line, its name's run would cost most texts more
# than the literal's search). It may be the first line too, as a compiler's output starts with its first
# error: that one is matched where the text starts (a search for either would try every position).
_COMPILER_LINE = r"[^\s:]{1,200}+:\d+(?::\d+)?: (?:fatal )?error:"
_COMPILER_LINE_AT = _Lazy(r"\n" + _COMPILER_LINE)
_COMPILER_FIRST_LINE = _Lazy(_COMPILER_LINE)
# A program's own error line below the first ("pgbench: error: connection to server ... failed"), looked for only where
# ": error: " is in the probe.
_PROGRAM_ERROR = r"[a-z][a-z0-9_+-]{0,30}+: (?:fatal )?error: "
_PROGRAM_ERROR_AT = _Lazy(r"\n" + _PROGRAM_ERROR)
_PROGRAM_ERROR_FIRST = _Lazy(_PROGRAM_ERROR)
#: a compiler's and a program's error lines: as a first line, on a later line, and the literal each holds
_DIAGNOSTIC_FORMS = ((_COMPILER_FIRST_LINE, _COMPILER_LINE_AT, "error: "), (_PROGRAM_ERROR_FIRST, _PROGRAM_ERROR_AT, ": error: "))
_ENVIRONMENT_KINDS = frozenset({Kind.TIMEOUT, Kind.CANCELLED})


def _error_line_at(text: str, at: int = 0) -> re.Match[str] | None:
    """The newline before the first line from ``at`` on, within the probe, that may be an error line (or,
    from the start of a text of several lines, a first line that is a compiler's diagnostic: a match that
    starts at it)."""
    found = _ERROR_LINE_AT.search(text, at, _ERROR_LINE_PROBE)
    end = _ERROR_LINE_PROBE if found is None else found.start()
    for first_line, line_at, literal in _DIAGNOSTIC_FORMS:
        if text.find(literal, at, _ERROR_LINE_PROBE) < 0:
            break  # each form's literal holds the one before it
        if at == 0 and (compiled := first_line.match(text, 0, _ERROR_LINE_PROBE)) is not None \
                and text.find("\n", 0, _ERROR_LINE_PROBE) >= 0:
            return compiled
        compiled = line_at.search(text, at, end)
        if compiled is not None:
            return compiled
    return found


def _worded_failure(said: str, basis: str) -> _Verdict:
    """A failure that ``basis`` says ``said`` is (its program marked it so), of the kind its words name (_find_signal),
    else execution: the marks settle that it failed, so only the kind is left to read."""
    hit = _find_signal(said)
    if hit is None:
        return _Verdict(Kind.EXECUTION, basis, message=said, generic=True)
    return _Verdict(hit.kind, f"{basis}; {hit.evidence}", code=hit.code, message=said)


def _error_line(text: str) -> _Verdict | None:
    """An unframed text whose first few lines include ``ERROR: ...`` (pip, pytest, compilers), or None.

    The first line was read as the frame already, but for a compiler's diagnostic, which no frame reads;
    the search jumps from newline to newline.
    """
    found = _error_line_at(text)
    if found is None and ":error:" in text[:_ERROR_LINE_PROBE] and (hit := _openssl_hit(text[:HEAD_CHARS])) is not None:
        # OpenSSL's error queue under its own first line ("Could not read key from x.bin" then "...:error:...").
        return _Verdict(hit.kind, hit.evidence, code=hit.code, message=text.strip()[:HEAD_CHARS])
    if found is None or text.startswith("```"):  # a fenced block: a document quoting output
        return None
    if text.count("\n", 0, found.start()) >= _ERROR_LINE_REACH:
        return None
    if text[:6] in _USAGE_LINE and _USAGE_ERROR.match(text, found.start() + 1) is not None:
        return None  # argparse's usage line, then "prog: error: ...": a usage error (_diagnostic)
    start = found.start()
    match = _ERROR_LINE.match(text, start + (text[start : start + 1] == "\n"), _ERROR_LINE_PROBE)
    if match is None:
        return None
    line = match.group(0)
    return _worded_failure(line, f"a line says '{_quote(line, 24)}'")


# A shell's own complaint about a command line: the call failed in the terminal, whatever it names.
_SHELL_LINE = _Lazy(
    r"(?:(?:/[\w.-]+)*/?(?:ba|z|da|fi|k)?sh|\(eval\))(?::\s*line\s+\d+|:\d+)?:\s"
    r"|[^\s:]{1,200}: line \d+: [^\n]{0,200}command not found"
)

# Unflagged text that states a failure without leading with a marker ("Tool 'x' not found", "Usage
# limit reached for all Pro models.", "You exceeded your current quota"), as a careful reader takes it:
# only a short message (a result is rarely a line or two) or a first line that starts with an HTTP status,
# only words that say something failed, and never where the clause around them describes, asks or
# negates ("if the request times out", "0 failed", a grep hit, a Markdown line).
STATED_CHARS = 400
_STATED_LINES = 3
# Every match of _STATED contains one of these whole words (a word as \b sees it, apostrophes and hyphens
# splitting words too): _no_stated_word looks for them before the pattern runs, and
# tests/failures/test_quick_paths.py holds it to the pattern.
_STATED_TOKENS = frozenset(
    token.encode()
    for token in {
        "found", "exist", "such", "failed", "failure", "denied", "forbidden", "unauthorized",
        "unauthorised", "authorized", "allowed", "timed", "timeout", "timedout", "deadline", "limit", "limited",
        "limits", "ratelimit", "ratelimited", "ratelimits", "many", "quota", "credit", "overloaded",
        "unavailable", "exhausted", "cannot", "can", "could", "couldn", "unable", "invalid", "malformed",
        "required", "exceeded", "exceeds", "error", "exception", "interrupted", "canceled", "cancelled",
        "aborted", "refused", "rejected", "eacces", "enoent", "eperm", "eisdir", "enotdir", "econnrefused",
        "econnreset", "etimedout", "enotfound", "valid", "truncated", "hit", "implemented", "blocked", "capacity",
        "supported", "unsupported", "insufficient_quota", "unrecognized", "insufficient", "stopped", "implementation", "recognized",
        "illegal", "unterminated", "unmatched", "match", "revision", "module", "expecting", "archive",
    }
)
# ASCII bytes that are not word characters become spaces and capitals small letters, so split() gives
# \b's words lower-cased (bytes.translate is several times faster than str.translate and .lower()).
_NON_WORD = bytes(
    c + 32 if 65 <= c <= 90 else c if c >= 128 or chr(c).isalnum() or c == 0x5F else 0x20 for c in range(256)
)


# \b's words in text that is not ASCII: the runs of \w.
_WORD_RUN = _Lazy(r"\w+")


def _words(text: str) -> list[bytes]:
    """The words ``\\b`` sees in ``text``, as bytes (ASCII capitals made small): _NON_WORD's split of ASCII
    text, the runs of ``\\w`` of any other, which is read as it is."""
    if text.isascii():
        return text.encode().translate(_NON_WORD).split()
    return " ".join(_WORD_RUN.findall(text)).encode().split()


def _no_stated_word(line: str, words: list[bytes] | None = None) -> bool:
    """True when ``line`` surely holds no match of _STATED, in any case (a shortcut; tests turn it off).

    _stated_failure reads the line folded (``_folded``): ``words`` are its words, when known."""
    if words is None:
        words = _words(line if line.isascii() else _folded(line))
    return _STATED_TOKENS.isdisjoint(words)


_STATED_WORDS = (
    r"not found|could not be found|cannot be found|does not exist|doesn't exist|no such \w+"
    r"|e(?:acces|noent|perm|isdir|notdir|connrefused|connreset|timedout|notfound)\b"
    r"|failed|failure|permission denied|access denied|forbidden|unauthori[sz]ed|not authorized|not allowed"
    r"|timed out|time(?:d)?out (?:error|exceeded|expired)|deadline exceeded"
    # A limit is a failure when something hit it, not when a text speaks of limits ("Rate limits are per key").
    r"|rate[ -]?limited|rate[ -]?limit (?:exceeded|reached|hit|error)|too many requests|hit (?:\w+ ){0,3}rate limits?"
    r"|hit (?:the |its )?(?:max[_ ]?tokens|output[ _]tokens?) limit"
    r"|too many (?:concurrent|parallel|simultaneous)|not (?:yet )?implemented|blocked by"
    r"|quota (?:exceeded|exhausted|reached)|exceeded (?:\w+ ){0,3}quota|out of quota|insufficient[_ ]quota"
    r"|usage limit (?:has been )?(?:reached|exceeded|hit)|hit your (?:[\w-]+ ){0,2}limit"
    r"|credit balance (?:is )?(?:too low|insufficient|exhausted)"
    r"|insufficient (?:balance|credits?|funds)"
    r"|at capacity|no capacity available|capacity exceeded|version (?:is )?not supported|unsupported (?:protocol )?version"
    r"|overloaded|unavailable|exhausted|cannot|can't|could not|couldn't|unable to"
    r"|invalid|malformed|missing required|missing \d+ required|is (?:a )?required(?= (?:property|field|parameter|argument)\b)|is required|unrecognized (?:option|arguments?)|exceeded|exceeds|error|exception|interrupted"
    r"|cancell?ed|aborted|refused|rejected|not valid json|truncated(?=[^.\n]{0,60}?max[_ ]?tokens)"
    r"|stopped by (?:the )?user|does not have an implementation registered"
    # A tool's own words for input it cannot read: xz's "File format not recognized", iconv's "illegal
    # input sequence at position 3", Windows' "is not recognized as an internal or external command".
    r"|not recognized|illegal (?:input|byte|option|instruction|argument|character|sequence)s?\b"
    # Parsers' words for input cut short (sed's "unterminated `s' command", json's "Unterminated string",
    # grep's "Unmatched ( or \\("), and the lookups of git and Python that found nothing.
    r"|unterminated|unmatched|did not match any|unknown revision|no module named"
    # An archive not of the kind the program was asked to read (tarfile's "'x' is not a tar archive."; "is not a
    # ... file" is left to a text framed as a failure: "file" alone is in most outputs), and Python's JSON decoder
    # refusing its input ("Expecting value: line 1 column 1"): the words the bad-input signal reads them by.
    rf"|{_NOT_OF_KIND}archive|{_JSON_DECODER_REFUSAL}"
)


def _alternatives(source: str) -> list[str]:
    """The top-level alternatives of a pattern's ``source`` (escapes, groups and classes kept whole)."""
    found, depth, start, at, in_class = [], 0, 0, 0, False
    while at < len(source):
        char = source[at]
        if char == "\\":
            at += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            found.append(source[start:at])
            start = at + 1
        at += 1
    found.append(source[start:])
    return found


def _by_lead(source: str) -> str:
    """``source``'s alternatives grouped by the letter each starts with, in their order within a group: the
    same matches, found without trying every alternative at every word (re skips an alternative whose
    first letter is not the text's, so a word meets one group, not sixty alternatives)."""
    groups: dict[str, list[str]] = {}
    for alternative in _alternatives(source):
        if not alternative[:1].isalpha() or alternative[1:2] in ("?", "*", "+", "{"):
            raise ValueError(f"an alternative must start with a letter of its own: {alternative!r}")
        groups.setdefault(alternative[0], []).append(alternative[1:])
    return "|".join(lead + (f"(?:{'|'.join(rests)})" if len(rests) > 1 else rests[0]) for lead, rests in groups.items())


_STATED = _Lazy(rf"\b(?:{_by_lead(_STATED_WORDS)})\b")
# Words that make a sentence a description, a condition or a question rather than a report.
_DESCRIBES = _Lazy(
    r"\b(?:if|when|whenever|whether|unless|should|would|will|may|might|must|how|what|which|returns|raises"
    r"|throws|handles|handling|such as|for example|avoid|prevents?|retries|in case|instead|successfully"
    r"|appears to|seems to|even though|although"
    r"|passed|succeeded|that|whose|propagates|surfaces|causes|causing|according to|can(?!['\u2019]t|not))\b"
)
# _DESCRIBES read by words on ASCII text (where \b's words are what _NON_WORD splits): a one-word
# alternative matches exactly when its word is there; the others need one of _DESCRIBING_LEADS, and only
# then does the pattern run. tests/failures/test_quick_paths.py holds _describes to the pattern.
_DESCRIBING_WORDS = frozenset(
    token.encode()
    for token in {
        "if", "when", "whenever", "whether", "unless", "should", "would", "will", "may", "might", "must", "how",
        "what", "which", "returns", "raises", "throws", "handles", "handling", "avoid", "prevent", "prevents",
        "retries", "instead", "successfully", "although", "passed", "succeeded", "that", "whose", "propagates",
        "surfaces", "causes", "causing",
    }
)
# "such as", "for example", "in case", "appears to", "seems to", "even though", "according to", and "can"
# (not "can't").
_DESCRIBING_LEADS = frozenset(
    token.encode() for token in {"such", "example", "case", "appears", "seems", "though", "according", "can"}
)


def _describes(sentence: str, words: list[bytes] | None = None) -> bool:
    """``_DESCRIBES.search(sentence) is not None`` for a folded sentence, told by words where it can be
    (``words``: ``_words(sentence)``, when known)."""
    if words is None:
        words = _words(sentence)
    if not _DESCRIBING_WORDS.isdisjoint(words):
        return True
    if _DESCRIBING_LEADS.isdisjoint(words):
        return False
    return _DESCRIBES.search(sentence) is not None


# A failure named as a thing with an article before it is talked about ("an error raised after...",
# "a JSON-RPC error in a non-2xx body"); a report says "Error ...", "Test error", "API error for...".
_FAILURE_NOUNS = frozenset({"error", "exception", "failure"})
# A failure noun that qualifies another is a thing talked about: "the error message", "error handling".
_NAMED_THING = _Lazy(
    r"\s+(?:messages?|handling|handlers?|codes?|types?|class(?:es)?|responses?|cases?|paths?|counters?|pages?)\b"
)
# Failure words that name a state or a value rather than say what befell a subject.
_NOMINAL_WORDS = frozenset({"invalid", "malformed", "rate-limited", "rate limited", "ratelimited", "cancelled",
                            "canceled", "aborted", "interrupted", "errors"})
# A value documented as Python's None ("...; None when scheduled.", "the error, or None if it passed"): an
# attribute's or a function's docstring.
_NONE_WHEN = _Lazy(r"[;,]\s+(?:or\s+)?None\s+(?:when|if|unless|otherwise|for|on)\b|\bor\s+None\b")
# Issue trackers' tags and commit titles' types, lower-cased: "[bug]: ...", "feat(api): ...", "fix: ...".
_TITLE_TAG = _Lazy(
    r"\[(?:bug|bug report|feature|feature request|feat|question|help|docs?|enhancement|fix|proposal|rfc"
    r"|discussion|improvement)\]|(?:feat|fix|chore|docs|refactor|perf|style|revert)(?:\([^)\n]{0,60}\))?!?:\s"
)
# A component a title names before its text: "java: ", "ast/call: ", "executor(call): ".
_SCOPE = _Lazy(r"[\w./-]{1,30}(?:\([^)\n]{0,60}\))?!?:\s+")
# Verbs a docstring's or a commit's first line opens with, as an instruction (lower-cased). Words that
# are as often a noun naming what failed ("update", "install", "run", "test", "build") are left out.
_IMPERATIVES = frozenset(
    {
        "return", "returns", "raise", "make", "include", "fix", "fixes", "add", "adds", "print", "pause",
        "handle", "use", "catch", "manage", "called", "get", "gets", "set", "ensure", "create", "show", "log",
        "remove", "support", "allow", "implement", "improve", "avoid", "prevent", "wrap", "convert", "emit",
        "propagate", "translate", "display", "bump", "refactor", "rename", "move", "reword", "clarify", "document",
        "retry", "update", "explain", "describe", "detect", "surface", "expose", "mention", "fixing",
    }
)
# Of those, the verbs that never name what failed ("fix call can't return right error message").
_ONLY_IMPERATIVES = frozenset({"fix", "fixes", "add", "adds", "make", "include", "ensure", "avoid", "prevent", "improve", "bump", "refactor",
                               "reword", "clarify", "fixing"})
_ARTICLE = _Lazy(r"\b(?:a|an|the|this|its|their|every|any)\b")
# A negation just before the failure word: "no errors", "0 failed", "not an error", "without failures".
_NEGATED = _Lazy(r"(?:\bno|\b0|\bzero|\bnot|\bnever|\bwithout|\bnothing)\s+(?:[\w-]+\s+){0,2}$"
                  # ... or a count of some among many: "2 of 4 requests failed" is a summary, as "0 failed" is.
                  r"|\b\d+\s+(?:of|out of)\s+\d+\s+(?:[\w-]+\s+){0,2}$")
# Text laid out as a document or a listing: Markdown, code, a grep hit, a numbered line, a commit listed by
# its abbreviated hash (``git log --oneline``: "5f0082a fix: ... lint error (#267)", groq/groq-python).
# (Bold and a second code span anywhere are found by _described with ``in`` and a count, not a scan.)
# A line numbered as grep -n prints one of a single file ("247:        error(g_(...", "956:error. For
# example ...") is a listing too; a status and its phrase ("429: Too Many Requests") has one space between.
_DESCRIBED_TEXT = _Lazy(
    r"[#>|*`]|-(?!\d)|[\w./-]+:\d+[:-]|\d+\.\s|(?=[0-9]*[a-f])(?=[a-f]*[0-9])[0-9a-f]{7,40}\s|\d{1,7}[:-](?=[^\d\s]|\s\s)"
)
# A text that opens as JSON data is read by structure; a word quoted in a line is a value, not a report.
_JSON_STARTS = frozenset({'{"', "{'", "{}", '[{', '["', "[[", "[]"})
_QUOTES = frozenset({'"', "'", "`"})
# Where a sentence ends: a stop before a space or the end, or a newline (only its start is used). One
# character class first, so re scans for it rather than trying two alternatives at every position.
_SENTENCE_END = _Lazy(r"[.!?;\n](?:(?<=\n)|(?=\s|\Z))")
_LEADING_STATUS = _Lazy(r"\s*[45]\d\d\b\s*[-:]?\s*[\"'{\[]?[A-Za-z{]")
#: A report states its failure early; a word further in belongs to prose.
_STATED_REACH = 120
# A question a program asks after its report, as a hint about the system: Docker's "Cannot connect to the
# Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?", psql's "Is the server running
# on that host and accepting TCP/IP connections?". Someone asking about a failure asks otherwise ("Any ideas?").
_HINT = _Lazy(r"[.:]\s+(?:Is|Are) the [^.?\n]{1,80}\?$|[.:]\s+Did you mean\b[^.?\n]{0,80}\?$")
_EDGE = 64


def _described(said: str) -> bool:
    """True when ``said`` is laid out as a document or a listing (see _DESCRIBED_TEXT)."""
    # make's "make: *** No rule to make target" is its error marker, not Markdown's bold.
    return _DESCRIBED_TEXT.match(said) is not None or "**" in said and "*** " not in said or said.count("`") >= 3 \
        or said.count("*") >= 2 and _EMPHASIS.search(said) is not None


# A phrase set in emphasis, as Markdown and reStructuredText write one (pylint's ``--help-msg``: ":import-error
# (E0401): *Unable to import %s*" then what it means): a document's words. A glob ("*.py") opens no span.
_EMPHASIS = _Lazy(r"(?<![\w*])\*(?=[^\s*])[^*\n]{1,200}(?<=[^\s*])\*(?![\w*])")


# Letters of scripts written without spaces between words (Han, kana, Hangul).
_UNSPACED_SCRIPT = _Lazy("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{2,}")


def _quotes_in_prose(sentence: str) -> bool:
    """True when ``sentence`` is prose in a script written without spaces that quotes an English failure
    ("今天突然报错 Unauthorized: API key is invalid", "ChatGPT error 429判断"): the words are the writer's
    account of an error, not a tool's own output. A run of such letters in a path (a file name,
    "版本需求说明.md") is not prose."""
    for run in _UNSPACED_SCRIPT.finditer(sentence):
        before = sentence[run.start() - 1 : run.start()]
        after = sentence[run.end() : run.end() + 1]
        if before not in ("/", "\\", ".", "-", "_") and after not in ("/", "\\", ".", "-", "_"):
            return True
    return False


_NOT_ASCII = _Lazy(r"[^\x00-\x7f]")
_NOT_ASCII_LETTER = bytes(c for c in range(128) if not chr(c).isalpha())


def _foreign(sentence: str) -> bool:
    """True when most letters of ``sentence`` are not ASCII: prose in another script, where an English
    failure word is a loanword ("इस page की हर heading ... error में लिखता है"), not a report."""
    words = sentence.split()
    if (len(words) - sum(map(str.isascii, words))) * 2 > len(words):
        return True  # most words are written in another script (Hindi, Russian...)
    # Scripts without spaces between words (Chinese, Japanese): most letters are not ASCII. The ASCII
    # letters are counted as bytes, the others one by one.
    other = sum(map(str.isalpha, _NOT_ASCII.findall(sentence)))
    return other * 2 > other + len(sentence.encode("ascii", "ignore").translate(None, _NOT_ASCII_LETTER))


def _mentioned(sentence: str, start: int, end: int) -> bool:
    """True when the words at ``sentence[start:end]`` are a value the line holds rather than what it says:
    in quotes (``f("error", 674)``, ``{"error": "too many ..."}``), inside a string a line of code left
    open before them (``print(f"{name}: \\"error\\" -> ...")``), assigned in code (``state = error``), or
    part of a path (``C:\\Users\\error``)."""
    before = sentence[start - 1 : start]
    if before in _QUOTES and sentence[end : end + 1] in _QUOTES:
        return True
    if before == "-" and sentence[end : end + 1] == "-":
        return True  # part of a name joined by hyphens: a package's "libgpg-error-dev"
    if before == "\\" or before == "/" or sentence[end : end + 1] in ("\\", "/"):
        return True
    if sentence[start - 3 : start] == " = ":
        return True  # a value assigned in code: "retry_state = error"
    # An odd number of unescaped double quotes before the words, the last one opening a string in code
    # (after "(", "=", "[" or ",", an f/r/b prefix aside): they stand inside a string literal. A message
    # quoted whole after a status (429 "too many concurrent requests") is still said.
    if (sentence.count('"', 0, start) - sentence.count('\\"', 0, start)) % 2 == 0:
        return False
    at = sentence.rfind('"', 0, start)
    while at > 0 and sentence[at - 1] == "\\":  # the opening quote is the last unescaped one
        at = sentence.rfind('"', 0, at - 1)
    if at > 0 and sentence[at - 1] in "frbu" and not (sentence[at - 2 : at - 1].isalnum() or sentence[at - 2 : at - 1] == "_"):
        at -= 1
    return sentence[:at].rstrip()[-1:] in ("(", "=", "[", ",")


def _past_message(text: str) -> bool:
    """True when ``text`` is too long to be a message once stripped, and no status leads it: told without
    copying the text (a run of whitespace longer than _EDGE at either end is left to strip())."""
    size = len(text)
    if size <= STATED_CHARS:
        return False
    if size > STATED_CHARS + 2 * _EDGE:
        # Whatever is stripped within _EDGE of each end, more than STATED_CHARS are left: read its ends only.
        if not (text[0].isspace() or text[-1].isspace()):
            return text[0] not in "45"  # nothing to strip: the lead is the first character
        lead = text[:_EDGE].lstrip()[:1]
        return lead != "" and lead not in "45" and not text[-_EDGE:].isspace()
    start, end = 0, size
    while start < _EDGE and start < end and text[start].isspace():
        start += 1
    while end > size - _EDGE and end > start and text[end - 1].isspace():
        end -= 1
    return start < _EDGE and end > size - _EDGE and end - start > STATED_CHARS and text[start] not in "45"


# A tally: a few lines, each a label and at most one value beside it (a count, a status), as ``uniq -c``, a
# query's rows or a count by log level print ("ERROR 1" / "INFO 2", "failed|2" / "ok|1", "lint: failure" / "test:
# success"). It names what was counted, and says nothing failed; a report is a sentence.
_TALLY = _Lazy(r"(?:[ \t]*[\w.%-]+(?:(?:[ \t]+|[ \t]*[|=,][ \t]*|:[ \t]+)[\w.%-]+)?[ \t]*(?:\n|\Z)){2,}")


def _tally(stripped: str, fields: bool = True) -> bool:
    """True when ``stripped`` (a text stripped) is a tally of a few lines (``_TALLY``); ``fields``: a line may
    give its value after a colon ("lint: failure"), which an error's own fields ("Error: ENOENT" / "code: 1")
    also do, so a text framed as a failure is a tally only without one."""
    return len(stripped) <= STATED_CHARS and "\n" in stripped and (fields or ":" not in stripped) \
        and _TALLY.fullmatch(stripped) is not None


# A message a server sends at a level below a warning (PostgreSQL's NOTICE, INFO and LOG): what it did or
# skipped, told beside the command's own result, not a failure.
_NOTICE_LEAD = _Lazy(r"(?:NOTICE|INFO|LOG):  ")


# A note that opens by greeting its reader ("Hi Sam, ...", "Hello there! ..."), lower-cased: a program talking to a
# person about its state, not a report of a failed call.
_SALUTATION = _Lazy(r"(?:hi|hello|hey|dear)\b[^,.!?\n]{0,40}[,!]\s")
# Three errno names in a row, as a listing of them prints ("E2BIG EACCES EADDRINUSE ..."): codes named, not raised.
_ERRNO_RUN = _Lazy(r"\bE[A-Z0-9]{2,15}[ \t,]+E[A-Z0-9]{2,15}[ \t,]+E[A-Z0-9]{2,15}\b")
# A system call strace traced and the errno it answered ('access("/etc/ld.so.preload", R_OK) = -1 ENOENT (No such file
# or directory)'): what the traced program asked and was told, which it may well expect, not the trace's own failure.
_TRACED_CALL = _Lazy(r"(?:\d{1,10} +)?[a-z_][a-z0-9_]{0,30}\([^\n]{0,300}\)\s+= -1 E[A-Z0-9]{2,15} \(")


def _stated_failure(text: str, first: str, words: list[bytes], stripped: str) -> _Verdict | None:
    """A failure an unflagged, unframed text states in words, or None (see _STATED).

    _unframed_reading calls it only for a text that is not past a message (``stripped`` is
    ``text.strip()``) and holds a word of _STATED_TOKENS in the reach of its first line ``first``
    (``words``: ``_words`` of that reach folded).
    """
    # The failure word must stand in the first sentence, within _STATED_REACH characters: the first line's.
    reach = first[:_STATED_REACH]
    if len(stripped) <= STATED_CHARS and stripped.count("\n") < _STATED_LINES:
        said = stripped
    elif _LEADING_STATUS.match(text) and not _entry_listing(text, first):
        said = first
    else:
        return None
    low = reach.lower() if reach.isascii() else _folded(reach)  # _folded, its common case inline
    # Only one of _SENTENCE_END's characters can end the sentence: a line without any is one sentence.
    end = _SENTENCE_END.search(low) if ("." in low or "!" in low or "?" in low or ";" in low or "\n" in low) else None
    if end is None:
        sentence = low  # its words are the reach's, at hand
    else:
        sentence = low[: end.start()]
        words = sentence.encode().translate(_NON_WORD).split() if sentence.isascii() else _words(sentence)
    # Each test below only rules out, so the one that rules out most healthy texts comes first.
    if _describes(sentence, words):
        return None  # a description, a condition or a question (before _STATED: it rules out as surely)
    if said[:2] in _JSON_STARTS or _described(said) or ("None" in said and _NONE_WHEN.search(said)) \
            or ("\n" in said and _tally(said)):
        return None
    if said.endswith("?") and "\n" not in said and not _HINT.search(said) or (end is not None and low[end.start()] == "?"):
        return None  # it asks ("Why do I get ...?"); a hint asked on a line after a report does not
    if end is not None and _STATED_TOKENS.isdisjoint(words):
        return None  # the failure word was past the first sentence (_no_stated_word, on words at hand)
    if not sentence.isascii() and (_foreign(sentence) or _quotes_in_prose(sentence)):
        return None
    if (sentence[:1] == "[" or ":" in sentence) and _TITLE_TAG.match(sentence):
        return None  # an issue's or a commit's title: "[Bug]: Getting Unauthorized error", "feat(api): ..."
    if said[:1] in "NIL" and _NOTICE_LEAD.match(said):
        return None  # a server's notice: "NOTICE:  table "x" does not exist, skipping" then "DROP TABLE"
    if sentence[:1] in "hd" and _SALUTATION.match(sentence):
        return None  # a note to a person: redis's MEMORY DOCTOR, "Hi Sam, ... my issues detector can't be used ..."
    # A word in quotes is mentioned, not said: f("error", 674), {"error": "too many ..."} reads on.
    match = next((found for found in _STATED.finditer(sentence, 0, _STATED_REACH)
                  if not _mentioned(sentence, found.start(), found.end())
                  and not (found.group() in _FAILURE_NOUNS and _NAMED_THING.match(sentence, found.end()))), None)
    if match is None or _NEGATED.search(sentence, 0, match.start()):
        return None
    if match.group()[:1] == "e" and _ERRNO_RUN.search(said) is not None:
        return None  # a listing of errno names ("E2BIG EACCES EADDRINUSE ..."), not one error's code
    if match.group()[:1] == "e" and " = -1 E" in said and _TRACED_CALL.match(said) is not None:
        return None  # a traced call's answer
    noun = match.group().rpartition(" ")[2] in _FAILURE_NOUNS
    if noun and _ARTICLE.search(sentence, 0, match.start()) and not _LEADING_STATUS.match(said):
        return None  # "an error raised after ...", "429 is a rate limit error"
    if _instructs(sentence, match, noun or match.group() in _NOMINAL_WORDS):
        return None
    basis = f"says '{_quote(said[match.start() : match.end()], 40)}'"
    if _SHELL_LINE.match(said):
        hit = _find_signal(said, _SHELL_ENVIRONMENT)
        kind = hit.kind if hit is not None else Kind.TERMINAL_ERROR
        return _Verdict(kind, f"{basis}; a shell's own error line", message=said)
    hit = _find_signal(said)
    if hit is None and _MARKED_REFUSAL.fullmatch(match.group()) is not None:
        # The failure stated is itself a value refused ("xargs: unmatched single quote", "Unterminated IPv6 numeric
        # address"): bad input, as on a program's marked failure line.
        return _Verdict(Kind.INVALID_ARGUMENTS, f"{basis}: a complaint about its input", message=said)
    if (hit is None or hit.kind is Kind.PERMISSION_DENIED) and _NAMED_PARSER.search(said) is not None:
        # A parser's refusal named in the message ("yq: Error running jq: ScannerError: mapping values are not allowed
        # in this context"): input that does not parse, whatever its words forbid.
        return _Verdict(Kind.INVALID_ARGUMENTS, f"{basis}: input that does not parse", message=said)
    if hit is None:
        return _program_error(said, basis) or _Verdict(Kind.EXECUTION, basis, message=said, generic=True)
    code = hit.code
    if code is None and (http := _http_hit(said)) is not None:
        code = http.code
    said_words = said[match.start() : match.end()]
    evidence = hit.evidence if _lowered(said_words) in _lowered(hit.evidence) else f"{basis}; {hit.evidence}"
    return _Verdict(hit.kind, evidence, code=code, retry_after=_retry_in_text(said), message=said)


# A program's own error line, its name then "error:" ("ninja: error: unknown target 'x'"). A target it was asked to
# build and has no rule for is a missing thing; a message placed at a line of the file it reads ("build.ninja:3:
# duplicate rule 'cp'"), a value refused (_MARKED_REFUSAL: "unknown debug setting 'x'") and a dependency cycle in what
# it was given to build are bad input.
_MISSING_TARGET = _Lazy(r"\bunknown target\b|\bno known rule to make\b")
_NAMED_PARSER = _Lazy(r"\b\w*(?:Decode|Parse|Parser|Scanner|Syntax)(?:Error|Exception): ")
_AT_FILE_LINE = _Lazy(r"[^\s:]{1,200}:\d{1,9}: ")
_DEPENDENCY_CYCLE = "dependency cycle"


def _program_error(said: str, basis: str) -> _Verdict | None:
    """The kind a program's own error line that opens ``said`` says by its message, or None."""
    found = _PROGRAM_ERROR_FIRST.match(said)
    if found is None:
        return None
    message = said[found.end() :]
    if _MISSING_TARGET.search(message) is not None:
        return _Verdict(Kind.NOT_FOUND, f"{basis}: a target it has no rule for", message=said)
    if _AT_FILE_LINE.match(message) or _MARKED_REFUSAL.search(message) is not None or _DEPENDENCY_CYCLE in message:
        return _Verdict(Kind.INVALID_ARGUMENTS, f"{basis}: a complaint about its input", message=said)
    return None


def _instructs(sentence: str, match: re.Match[str], nominal: bool) -> bool:
    """True when ``sentence`` opens with an imperative, as a docstring's or a commit's first line does
    ("Return valid format or throw error", "Java: use error 429 for rate limiting", "Raise on invalid
    nested CLI annotations"), and its failure words belong to the object. ``nominal``: the words
    ``match`` found name a thing (an error, an invalid value) rather than say what befell a subject.

    A report names its subject first and says what happened to it within a word or two ("Cleanup
    failed", "Update action not found", "Check error: ..."): failure words that state what happened
    there, or a failure noun before a colon, keep it a report.
    """
    start = 0
    scope = _SCOPE.match(sentence)
    if scope is not None:
        start = scope.end()
    space = sentence.find(" ", start)
    if space < 0 or sentence[start:space] not in _IMPERATIVES or match.start() < space:
        return False
    if sentence[start:space] in _ONLY_IMPERATIVES:
        return True
    if sentence[match.end() : match.end() + 1] == ":":
        return False
    return nominal or len(sentence[space : match.start()].split()) > 2


def _clear(text: str, first: str) -> bool:
    """True when an unframed ``text`` surely states no failure (``_unframed_reading`` would say None, told
    with its cheap tests only): too long to be a message, or no failure word where _stated_failure reads,
    or neither a message nor led by a status; no error line where _error_line looks; no
    program's diagnostic line first, unless the text is too long to be one (_unframed_reading reads a
    diagnostic only in a text that is not past a message); and no native program's run-time failure first. A program's
    report that the first line's lead picks (_LEAD_READINGS) is read as _unframed_reading reads it (_lead_verdict)."""
    lead = _lead_verdict(text, first)
    if lead is not None:
        return lead is _NO_SIGNAL
    past = _past_message(text)
    if not (past or _no_stated_word(first[:_STATED_REACH])) and _message(text):
        return False
    if not _no_error_line(text):
        return False
    # _diagnostic is asked only where _may_be_diagnostic holds, and reads a usage line or a program's line.
    if _may_be_diagnostic(first):
        if not past and (first[:6] in _USAGE_LINE or _PROGRAM_LINE.match(first)
                         or "*** " in first and _FATAL_LINE.match(first)):
            return False
        return _native_failure(first, diagnostic=True) is None  # read whatever the text's length
    return first[:1] not in _NATIVE_LEADS or _native_failure(first) is None


# A program's own diagnostic, written as the GNU coding standards have a program write one: its name, a
# colon, then the message, an operand first when there is one (bzip2's "notes.txt: bad magic number",
# expr's "division by zero", tr's "missing operand" with "Try 'tr --help' for more information." after it).
# The name is a command's (lower case, no dot or space); a field of a listing ("name: ...", "version: ...")
# or a title's type ("fix: ...") is not one, nor is a line of a listing whose other lines name other keys.
_PROGRAM_LINE = _Lazy(r"([a-z][a-z0-9_+-]{0,30}): (?=[^\s:])")
_KEY_LINE = _Lazy(r"\s*([A-Za-z][\w.+-]{0,30}):(?:\s|$)")
_NOT_PROGRAMS = frozenset(
    {
        "usage", "warning", "warn", "note", "hint", "info", "debug", "notice", "tip", "todo", "fixme", "feat",
        "fix", "chore", "docs", "doc", "refactor", "perf", "style", "revert", "test", "tests", "build", "ci",
        "deps", "release", "message", "msg", "status", "code", "type", "title", "name", "version", "description",
        "summary", "reason", "detail", "details", "result", "output", "answer", "question", "example", "see",
        "source", "date", "author", "subject", "from", "to", "step", "task", "goal", "context", "input", "prompt",
        "response", "request", "user", "assistant", "system", "model", "tool", "function", "path", "file", "url",
        "id", "key", "value", "label", "tags", "category", "action", "comment", "reply", "q", "a",
        # unzip's progress on each member ("    testing: notes.txt   OK", "  inflating: src/app.py").
        "testing", "inflating", "extracting",
    }
)
# What programs say in the same form when nothing failed: make's "Nothing to be done for 'all'." and "'x' is
# up to date.", tar's "Removing leading `/' from member names", make -w's directory changes.
_INFORMATIONAL = _Lazy(r"\b(?:nothing to be done|is up to date|removing leading|entering directory|leaving directory)\b")
# The words a complaint is made of, one of which a diagnostic holds (as \b splits words, lower-cased): what
# is wrong, missing, not what was expected, or refused; and GNU's "Try 'x --help'" after a usage error.
_DEFECT_WORDS = frozenset(
    token.encode()
    for token in {
        "not", "no", "non", "bad", "missing", "unknown", "unexpected", "unexpectedly", "too", "invalid", "cannot",
        "can", "couldn", "failed", "failure", "fail", "error", "errors", "ignored", "illegal", "unrecognized",
        "unsupported", "refused", "denied", "zero", "empty", "wrong", "corrupt", "corrupted", "truncated",
        "premature", "prematurely", "expected", "requires", "required", "overflow", "exceeded", "exceeds", "unable",
        "mismatch", "unmatched", "unterminated", "garbage", "nonexistent", "exists", "already", "help", "only",
        "undefined", "unterminated", "incomplete", "range", "incompatible", "ambiguous", "conflict", "conflicting",
    }
)
#: how a diagnostic's message opens when it marks a failure or refuses a value, lower-cased
_MARKED_MESSAGES = ("error: ", "fatal error: ", "invalid ", "unknown ", "unrecognized ", "unsupported ")
_CODE_IN_LINE = _Lazy(r"\w\[|\s#\s")
# A diagnostic's message that opens with the option it blames (sed's "-e expression #1, char 7: unknown option to
# `s'"), not a Markdown list's dash.
_OPTION_LEAD = _Lazy(r"--?[A-Za-z]")
#: A diagnostic is a few lines: the message, a hint or two after a blank line.
_DIAGNOSTIC_LINES = 5


def _may_be_diagnostic(first: str) -> bool:
    """False when ``first`` surely is no program's diagnostic line (a shortcut for _diagnostic)."""
    return ": " in first[1:34] and ("a" <= first[:1] <= "z" or first[:6] in _USAGE_LINE or ": ***" in first)


#: how a usage line starts ("usage: tool [-h] ..."), which a usage error starts with: ``first[:6] in _USAGE_LINE``
_USAGE_LINE = ("usage:", "Usage:")


# A usage error as argparse and optparse print one: the usage line, then "prog: error: ..." ("usage: tool [-h]
# [--count COUNT]" then "tool: error: argument --count: invalid int value: 'many'"). A usage text alone is help.
_USAGE_ERROR = _Lazy(r"^(?:[^\n:]{1,60}: )?error: \S[^\n]{0,300}", re.MULTILINE)
_USAGE_REACH = 1024
_OPENED_FILE_KINDS = frozenset({Kind.NOT_FOUND, Kind.PERMISSION_DENIED})


# A program's fatal error, marked as make and patch mark one: make's "*** ... Stop." ("make: *** No rule to make
# target 'x'.  Stop.", "build.mk:2: *** missing separator.  Stop."), patch's "****" ("patch: **** Only garbage was
# found in the patch input."). The marks say it failed, whatever its words.
_FATAL_LINE = _Lazy(r"([^\s:]{1,200})(?::\d+)?: (?:\*{3} [^\n]{0,300}?\bStop\.[ \t]*$|\*{4} (?=\S))", re.MULTILINE)
# GNU's line after a usage error ("Try 'xargs --help' for more information.", tar's "Try `tar --help' or `tar
# --usage' for more information.") or docker's ("Run 'docker tag --help' for more information"): only a refused
# command line ends with it.
_TRY_HELP = _Lazy(r"\n(?:Try|Run) [`'\u2018][^\n]{1,80}--help['\u2019][^\n]{0,80} for more information\.?\Z")


def _diagnostic(stripped: str, first: str) -> _Verdict | None:
    """A failure a program reports in its own diagnostic form (``_PROGRAM_LINE``), or None: a short text
    (``stripped``, whose first line is ``first``) whose message is words, not a value, or that a program
    marks as a fatal error (``_FATAL_LINE``) or as a usage error (``_TRY_HELP``). _unframed_reading
    calls it only where ``_may_be_diagnostic(first)`` holds."""
    fatal = _FATAL_LINE.match(first) if "*** " in first else None
    if fatal is not None:
        basis = f"a fatal error of '{_quote(fatal.group(1), 32)}'"
        verdict = _diagnosed(basis, first[fatal.end(1) :], stripped)
        if verdict.generic and first[fatal.end(1) + 1 : fatal.end(1) + 2].isdigit():
            # Placed at a line of the file the program read ("recur.mk:1: *** Recursive variable 'X' references itself
            # (eventually).  Stop."): that file is what it refuses, as a parser refuses its input.
            return _Verdict(Kind.INVALID_ARGUMENTS, f"{basis}: at a line of the file it reads", message=stripped)
        return verdict
    found = _PROGRAM_LINE.match(first)
    if found is None or found.group(1) in _NOT_PROGRAMS:
        if first[:6] not in _USAGE_LINE:
            return _native_failure(first, diagnostic=True) if found is None else None
        if (error := _USAGE_ERROR.search(stripped, 0, _USAGE_REACH)) is None:
            return None
        basis = f"a usage error: '{_quote(error.group(), 40)}'"
        if "[Errno " in error.group() and (hit := _find_signal(error.group())) is not None \
                and hit.kind in _OPENED_FILE_KINDS:
            # argparse's file argument it could not open ("argument files: can't open 'x.yaml': [Errno 2] No such file
            # or directory"): the file's own failure, not the command line's form.
            return _Verdict(hit.kind, f"{basis}; {hit.evidence}", message=stripped)
        return _Verdict(Kind.INVALID_ARGUMENTS, basis, message=stripped)
    tail = max(0, len(stripped) - _LINE_CHARS)
    if stripped.find("--help", tail) >= 0 and _TRY_HELP.search(stripped, tail):
        return _Verdict(Kind.INVALID_ARGUMENTS, f"a usage error of '{_quote(found.group(1), 32)}'", message=stripped)
    if len(stripped) > STATED_CHARS or stripped.count("\n") >= _DIAGNOSTIC_LINES:
        return None
    name, message = found.group(1), first[found.end() :]
    if " " not in message or message[:1].isdigit() or message.endswith(":") or _CODE_IN_LINE.search(message):
        return None  # a value, a heading, a line of code ("my_list: Annotated[list[int], ...]  # Valid: ...")
    for line in stripped.splitlines()[1:]:
        key = _KEY_LINE.match(line)
        if key is not None and key.group(1) != name and not _another_diagnostic(line):
            return None  # a listing of fields ("name: x" then "version: 2")
    folded = _folded(message)
    if _DEFECT_WORDS.isdisjoint(_words(_folded(stripped))):
        return None  # it names no defect: file's "notes: ASCII text" is a result in the same form
    # A message the program marks as an error ("cc1: error: argument to '-O' should be ...") reports one, whatever
    # words it describes with, and so does one that opens by calling a value bad ("numfmt: invalid format '%d',
    # directive must be ...").
    marked = folded.startswith(_MARKED_MESSAGES)
    if _INFORMATIONAL.search(folded) or not marked and _describes(folded) \
            or (_described(message) and not _OPTION_LEAD.match(message)) \
            or _quotes_in_prose(message) or _TITLE_TAG.match(_folded(first)):
        return None
    return _diagnosed(f"a diagnostic of '{_quote(name, 32)}'", message, stripped)


def _another_diagnostic(line: str) -> bool:
    """True when ``line`` is written as another program's message, as a pipeline's programs each write theirs
    (tar's "tar: Child returned status 1" after gzip's "gzip: stdin: not in gzip format"): a sentence after a
    program's name, not a listing's field and its value."""
    found = _PROGRAM_LINE.match(line)
    return found is not None and found.group(1) not in _NOT_PROGRAMS and " " in line[found.end() :].strip()


def _diagnosed(basis: str, message: str, stripped: str) -> _Verdict:
    """The kind of a program's diagnostic ``stripped`` whose message (on its first line) is ``message``."""
    hit = _find_signal(stripped)
    if hit is None and _VALUE_COMPLAINT.search(message) is not None:
        # The complaint is about what the program was given, as an uncaught exception's would be ("find:
        # unknown predicate", "expand: tab size cannot be 0", "zstd: x: unsupported format").
        return _Verdict(Kind.INVALID_ARGUMENTS, f"{basis}: a complaint about its input", message=stripped)
    if hit is None:
        return _Verdict(Kind.EXECUTION, basis, message=stripped, generic=True)
    return _Verdict(hit.kind, f"{basis}; {hit.evidence}", code=hit.code, retry_after=_retry_in_text(stripped),
                    message=stripped)


# A program's one-line refusal of a value it quotes, with no name before it (ssh's "Bad port '99999'", "Unsupported
# query "x"", ssh-keygen's "Unsupported conversion format "PKCS99""): a few words naming what the value was for.
_REFUSED_LINE = _Lazy(r"(?:Bad|Unsupported|Unknown|Invalid|Unrecognized|Illegal) (?:[\w-]+ ){0,3}[\w-]+:? "
                      "[\"'\u2018`][^\"'\u2019`\n]{1,120}[\"'\u2019`]\\.?")


# A C or C++ program's run-time failure as its runtime or a checker reports it, on the text's first line: glibc's
# heap checks ("free(): double free detected in tcache 2", "malloc(): corrupted top size"), its stack protector
# ("*** stack smashing detected ***: terminated"), libstdc++'s uncaught exception ("terminate called after throwing an
# instance of 'std::out_of_range'"), UBSan's "file.c:3:54: runtime error: ..." and valgrind's "==10180== Invalid write of
# size 4". The program failed as it ran: execution, but where the exception it threw says its input was bad.
_NATIVE_FAILURE = _Lazy(
    r"[a-z_]\w{0,40}\(\): (?:[\w -]{1,60} )?(?:detected|corrupted|invalid)\b[^\n]{0,200}$"
    r"|\*\*\* [a-z][\w -]{1,60} detected \*\*\*: terminated$"
    r"|terminate called after throwing an instance of '(?P<thrown>[\w:<>, ]{1,120})'$"
    r"|[\w./-]{1,200}\.(?:c|cc|cpp|cxx|h|hpp):\d+:\d+: runtime error: \S"
    r"|==\d{1,10}== Invalid (?:read|write|free\(\)) of size \d"
)
#: the exceptions of the C++ standard library that say a program's input was bad
_BAD_INPUT_THROWN = frozenset({"std::invalid_argument"})


#: how a line _NATIVE_FAILURE reads starts where it is no program's diagnostic (_may_be_diagnostic): "*** ",
#: "terminate called", "==PID==", a klog error line's severity (_KLOG_ERROR) and apt's "E: " (_apt_error)
_NATIVE_LEADS = "*t=EF"
# A Go program's error line as klog writes it (kubectl's: `E1203 16:47:15.840714    8309 memcache.go:265] "Unhandled
# Error" err="..."`): severity E (error) or F (fatal), the date, the time, the thread, the file and line. The kind is
# what its words say (a refused connection, a timeout, "the server could not find the requested resource").
_KLOG_ERROR = _Lazy(r"[EF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d{1,10} [\w.-]{1,80}:\d{1,6}\] \S")


def _klog_failure(first: str) -> _Verdict | None:
    """A klog error line's failure (_KLOG_ERROR) that ``first`` is, or None."""
    if not first[1:5].isdigit() or _KLOG_ERROR.match(first) is None:
        return None
    return _worded_failure(first, f"a klog error line '{_quote(first[first.find(']') + 2 :], 40)}'")


def _marked_message_verdict(message: str, basis: str) -> _Verdict:
    """The failure a line that its program marks as an error says, by its words: the kind a signal names, else the
    kind an exception it quotes names ("java.lang.Exception: Keystore password must be at least 6 characters"), else
    bad input where the words refuse a value (_MARKED_REFUSAL), else execution. A marked line is a failure whatever
    it says, so only its kind is left to read."""
    hit = _find_signal(message) or _exception_kind(message)
    if hit is not None:
        return _Verdict(hit.kind, f"{basis}; {hit.evidence}", code=hit.code, message=message)
    if _MARKED_REFUSAL.search(message) is not None:
        return _Verdict(Kind.INVALID_ARGUMENTS, f"{basis}: a complaint about its input", message=message)
    return _Verdict(Kind.EXECUTION, basis, message=message, generic=True)


def _apt_error(first: str) -> _Verdict | None:
    """The failure an apt error line ``first`` reports ("E: No packages found", "E: Command line option --frobnicate is
    not understood ..."), of the kind its words say, or None when ``first`` is none. apt marks its errors so, with
    nothing else around them."""
    if first[:3] != "E: ":
        return None
    return _marked_message_verdict(first, f"an apt error line '{_quote(first[3:], 40)}'")


# A program's own error line, its name then "error" (keytool's "keytool error: java.lang.Exception: ...", npm's block of
# "npm error code E404", "npm error 404 ..." lines). Only the colon form, or a prefix that the second line repeats, is
# read, so that a sentence that opens with "<word> error" stays prose; words that name a kind of error, not a program
# ("syntax error: ", "fatal error: "), are other readings' to make.
_TOOL_ERROR = _Lazy(r"([a-z][\w-]{1,30}) error(?:: | (?=\S))")
_NOT_TOOLS = frozenset({"fatal", "syntax", "parse", "internal", "runtime", "type", "compile", "unknown", "an", "no",
                        "the", "critical", "linker", "build", "network", "connection", "server", "client", "http"})
_TOOL_ERROR_LINES = 8


def _tool_error(text: str, first: str) -> _Verdict | None:
    """The failure a program's own error lines (_TOOL_ERROR) at the head of ``text`` report, or None."""
    if " error" not in first[:40]:
        return None
    found = _TOOL_ERROR.match(first)
    if found is None or found.group(1) in _NOT_TOOLS:
        return None
    prefix = found.group(1) + " error"
    lines = text.strip().split("\n", _TOOL_ERROR_LINES)[:_TOOL_ERROR_LINES]
    if first[len(prefix) : len(prefix) + 2] != ": " and (len(lines) < 2 or lines[1][: len(prefix)] != prefix):
        return None
    said = [line[len(prefix) :].lstrip(": ").rstrip() for line in lines if line[: len(prefix)] == prefix]
    if " " not in said[0] and ":" not in said[0] or _tally(text.strip(), fields=False):
        return None  # a count or a status word after the prefix ("lint error 3") is a tally's row
    message = "\n".join(line for line in said if line)
    basis = f"{found.group(1)}'s error line '{_quote(said[0], 40)}'"
    # npm's "code E404" is the HTTP status its registry answered: it outranks the advice below it ("... or you do not
    # have permission to access it").
    if said[0][:6] == "code E" and said[0][6:9].isdigit() and len(said[0]) == 9:
        kind = _status_kind(int(said[0][6:9]))
        if kind is not None:
            return _Verdict(kind, f"{basis}: HTTP {said[0][6:9]}", code=said[0][6:9], message=message)
    return _marked_message_verdict(message, basis)


def _refused_option(text: str, first: str) -> _Verdict | None:
    """A program's refusal of an option, then the usage it was shown against ("objdump: unrecognized option '--x'" then
    "Usage: objdump <option(s)> <file(s)>" and its options): a usage error, however long the usage."""
    if " option" not in first:
        return None
    found = _PROGRAM_LINE.match(first)
    if found is None or found.group(1) in _NOT_PROGRAMS or _MARKED_REFUSAL.search(first, found.end()) is None:
        return None
    at = text.find("\n", text.find(first) + len(first))
    if at < 0 or text[at + 1 : at + 7] not in _USAGE_LINE:
        return None
    return _Verdict(Kind.INVALID_ARGUMENTS, f"a usage error of '{_quote(found.group(1), 32)}'", message=text.strip())


def _lower_lead(text: str, first: str) -> _Verdict | None:
    """A program's own error lines, or its refusal of an option above its usage."""
    return _tool_error(text, first) or _refused_option(text, first)


# jshell's transcript: its prompts, then what a snippet gave. An exception it threw is "|  Exception java.lang.X: msg"
# with "|        at" frames (read as the same exception outside jshell would be), a snippet that does not compile
# "|  Error:" and the compiler's reason (execution, the snippet's defect); a value ("$1 ==> ...") is a result, whatever
# words it holds.
_JSHELL_PROMPT = "jshell> "
_JSHELL_EXCEPTION = "|  Exception "
_JSHELL_OUTCOME = _Lazy(r"jshell> \|  (?:Exception |Error:)")
_JSHELL_FRAME = _Lazy(r"^\|  (?:(      )(?=at )|(?=Caused by: ))", re.MULTILINE)


def _jshell_unframed(frame: re.Match[str]) -> str:
    """What replaces jshell's margin on a frame line (a tab, as the JVM indents "at") or on a cause (nothing)."""
    return "\t" if frame.group(1) else ""


def _jshell_reading(text: str) -> _Verdict | None:
    """What a jshell transcript ``text`` (its first line opens with the prompt) shows: the first snippet that threw or
    did not compile, else a result when a value or a message of jshell's follows the prompts, else None."""
    outcome = _JSHELL_OUTCOME.search(text)
    rest = text[outcome.start() + 8 :] if outcome is not None else text
    while rest[:8] == _JSHELL_PROMPT:
        rest = rest[8:]
    if rest[:13] == _JSHELL_EXCEPTION:
        thrown = _JSHELL_FRAME.sub(_jshell_unframed, rest[13:])
        inner = _from_text(thrown, _NO_WIRE)
        basis = f"jshell's exception '{_quote(_first_line(thrown), 40)}'"
        if inner.kind is Kind.SUCCESS:
            return _Verdict(Kind.EXECUTION, basis, message=thrown, generic=True)
        return _Verdict(inner.kind, f"{basis}; {inner.evidence}", code=inner.code, message=thrown, generic=inner.generic)
    if rest[:9] == "|  Error:":
        return _Verdict(Kind.EXECUTION, "jshell's snippet does not compile", message=rest.strip())
    if rest[:1] == "$" or rest[:3] == "|  ":
        return _NO_SIGNAL
    return None


# unzip's report on the archive it was given ("Archive:  enc.zip") when a member or the archive failed: the kind its
# words say on the lines below ("skipping: notes.txt   incorrect password", "checkdir:  cannot create extraction
# directory ... Permission denied"), and a file that is no zip archive ("Either this file is not\n  a zipfile") is one in
# the wrong format. Members tested or extracted ("testing: notes.txt   OK") are a result.
_UNZIP_ARCHIVE = "Archive:  "
_NOT_A_ZIPFILE = _Lazy(r"\bthis file is not\s+a zipfile\b")
#: unzip -t's summary when every member tested sound, and the head of unzip -l's listing
_UNZIP_CLEAN = "\nNo errors detected in compressed data of "
_UNZIP_LISTING = "  Length  "


def _unzip_failure(text: str) -> _Verdict | None:
    """The failure unzip's report ``text`` (its first line names the archive) states below that line, or None."""
    rest = text[text.find("\n") + 1 :] if "\n" in text else ""
    if _UNZIP_CLEAN in rest or rest[:10] == _UNZIP_LISTING:
        return None  # its test found every member sound, or it lists them
    if _NOT_A_ZIPFILE.search(rest, 0, HEAD_CHARS) is not None:
        return _Verdict(Kind.INVALID_ARGUMENTS, "unzip: the file is not a zip archive", message=rest.strip())
    hit = _find_signal(rest[:HEAD_CHARS]) if rest else None
    if hit is None:
        return None
    return _Verdict(hit.kind, f"unzip's report; {hit.evidence}", code=hit.code, message=rest.strip())


# gdb's error sentences, each alone on its line where a command failed: a symbol, function, source file or command
# that is not there, an expression that does not parse, a division by zero it was asked to evaluate; and the stop of a
# program it ran on a fatal signal ("Program received signal SIGSEGV, Segmentation fault.").
_GDB_ERROR = _Lazy(
    r'(?P<missing>No symbol "[^"\n]{1,200}" in current context\.|Function "[^"\n]{1,200}" not defined\.'
    r'|No source file named [^\n]{1,200}\.|Undefined (?:[\w-]{1,30} )?command: "[^"\n]{1,80}"\.  Try "help"\.)$'
    r"|(?P<syntax>A syntax error in expression, near `[^\n]{0,200}'\.)$"
    r"|Division by zero$"
)
#: how the lines _GDB_ERROR and _GDB_SIGNAL read start, tested before either pattern is tried
_GDB_STARTS = ('No symbol "', 'Function "', "No source file named ", "Undefined ", "A syntax error in expression",
               "Division by zero", "Program received signal ")
_GDB_THREADS = "[Thread debugging using libthread_db enabled]"
_GDB_SIGNAL = _Lazy(r"^Program received signal (SIG[A-Z0-9]{2,8}), [^\n]{1,80}\.$", re.MULTILINE)


def _gdb_error(text: str, first: str) -> _Verdict | None:
    """The failure gdb's own error sentence ``first`` states, or the fatal signal that stopped the program it ran."""
    if not first.startswith(_GDB_STARTS) and first != _GDB_THREADS:
        return None
    if first == _GDB_THREADS or first[:8] == "Program ":
        stop = _GDB_SIGNAL.search(text, 0, HEAD_CHARS)
        if stop is None:
            return None
        return _Verdict(Kind.EXECUTION, f"gdb: the program received {stop.group(1)}", message=stop.group())
    found = _GDB_ERROR.match(first)
    if found is None:
        return None
    basis = f"gdb's error '{_quote(first, 40)}'"
    kind = Kind.NOT_FOUND if found.group("missing") else Kind.INVALID_ARGUMENTS if found.group("syntax") else Kind.EXECUTION
    return _Verdict(kind, basis, message=first)


# CMake's error, as its scripts and projects meet one: "CMake Error at x.cmake:3 (file):" names where, the indented lines
# under it say what ("  file failed to open for reading (No such file or directory):"). Their words say the kind, and
# some of CMake's own: a newer CMake required is a version refused; a command it does not know, a file it "cannot"
# read, missing things; an expression it cannot evaluate or parse, a regex it cannot compile, JSON it fails parsing or
# the arguments of an `if` bad input. A configure run's status lines ("-- Configuring done") may come first.
_CMAKE_ERROR = "CMake Error at "
_CMAKE_HEADER = _Lazy(r"CMake Error at [^\n]{1,300}:[ \t]*\n((?:[ \t]+\S[^\n]*\n|[ \t]*\n){1,24})")
_CMAKE_MESSAGE = _Lazy(
    r"(?P<version>\bCMake \d{1,3}(?:\.\d{1,6}){0,3} or higher is required\b)"
    r"|(?P<missing>\bUnknown CMake command\b|\bcannot be read\b)"
    r"|(?P<bad>\bcannot (?:evaluate|parse) the expression\b|\bfailed to compile regex\b|\bfailed parsing\b"
    r"|\bUnknown arguments? specified\b)"
)
_CMAKE_KINDS = {"version": Kind.BEHAVIOR_VERSION_UNSUPPORTED, "missing": Kind.NOT_FOUND, "bad": Kind.INVALID_ARGUMENTS}


def _cmake_error(text: str, at: int) -> _Verdict | None:
    """The kind of the CMake error whose header starts at ``at`` in ``text``, by its message's words, or None."""
    found = _CMAKE_HEADER.match(text + "\n", at)
    if found is None:
        return None
    message = found.group(1).strip()
    basis = f"CMake's error '{_quote(message, 40)}'"
    said = _CMAKE_MESSAGE.search(message)
    if said is not None and said.lastgroup != "bad":
        return _Verdict(_CMAKE_KINDS[said.lastgroup], f"{basis}: {_quote(said.group(), 40)}", message=message)
    hit = _find_signal(message)
    if hit is not None:
        return _Verdict(hit.kind, f"{basis}; {hit.evidence}", code=hit.code, message=message)
    if said is not None or _VALUE_COMPLAINT.search(message) is not None:
        return _Verdict(Kind.INVALID_ARGUMENTS, f"{basis}: a complaint about its input", message=message)
    return _Verdict(Kind.EXECUTION, basis, message=message, generic=True)


def _c_lead(text: str, first: str) -> _Verdict | None:
    """CMake's error that opens ``text``."""
    return _cmake_error(text, text.find(_CMAKE_ERROR)) if first[:15] == _CMAKE_ERROR else None


def _dash_lead(text: str, first: str) -> _Verdict | None:
    """CMake's error after a configure run's status lines ("-- Detecting C compiler ABI info")."""
    if first[:3] != "-- ":
        return None
    at = text.find("\n" + _CMAKE_ERROR, 0, HEAD_CHARS)
    return None if at < 0 else _cmake_error(text, at + 1)


# ctest's run ("Test project /x/build"), which ends "Errors while running CTest" when a test failed: the kind its lines
# say (a test stopped at its time limit, "***Timeout", outranks a missing file another test's output names).
_CTEST_RUN = "Test project "
_CTEST_FAILED = "\nErrors while running CTest"


def _t_lead(text: str, first: str) -> _Verdict | None:
    """ctest's run that ``first`` opens, when a test failed, or None."""
    if first[:13] != _CTEST_RUN or _CTEST_FAILED not in text:
        return None
    return _worded_failure(_window(text), "ctest's run with a failed test")


# CMake's status list of a download or upload (``file(DOWNLOAD ... STATUS s)`` then ``message("${s}")``): curl's code,
# then its message in quotes ('28;"Timeout was reached"'); a code that is not 0 is the transfer's failure, whatever
# the script's own exit, of the kind curl's code says (_CURL_KINDS) or its words.
_TRANSFER_STATUS = _Lazy(r'([1-9]\d{0,1});"([^"\n]{1,200})"')


def _digit_lead(text: str, first: str) -> _Verdict | None:
    """CMake's status list of a failed transfer, alone in ``text``, or None."""
    if first[-1:] != '"' or ';"' not in first[:4] or (found := _TRANSFER_STATUS.fullmatch(first)) is None \
            or text.strip() != first:
        return None
    basis = f"a transfer's status '{_quote(first, 40)}'"
    kind = _CURL_KINDS.get(int(found.group(1)))
    if kind is None and (hit := _find_signal(found.group(2))) is not None:
        kind = hit.kind
    return _Verdict(kind or Kind.EXECUTION, basis, code=found.group(1), message=first)


# ed's answer to a command that failed: a bare "?", and with its help mode on (``H``) the reason on the next line
# ("Invalid address", "No match", "Cannot open output file" and the system's reason below it).
_ED_NO_MATCH = "No match"


def _question_lead(text: str, first: str) -> _Verdict | None:
    """ed's "?" and the reason below it, or None."""
    if first != "?":
        return None
    reason = text.strip()[2:]
    if not reason or reason[:1].isspace():
        return None
    basis = f"ed's '?': '{_quote(reason, 40)}'"
    if reason == _ED_NO_MATCH:
        return _Verdict(Kind.NOT_FOUND, basis, message=reason)
    return _worded_failure(reason, basis)


# ninja's build that a command of it failed ("[1/2] CC main.o", "FAILED: main.o", the command's own output, then "ninja:
# build stopped: subcommand failed."): the kind that output says ("Fatal error: can't create main.o: Permission denied").
_NINJA_STOPPED = "ninja: build stopped: subcommand failed."


def _bracket_lead(text: str, first: str) -> _Verdict | None:
    """ninja's build stopped by a failed command, or gdb's reading of a line that opens with "["."""
    if text[-80:].rstrip().endswith(_NINJA_STOPPED):
        return _worded_failure(_window(text), "ninja's build stopped by a failed command")
    return _gdb_error(text, first)


# cmake's help of a name it does not know ('Argument "x" to --help-command is not a CMake command.'): a missing thing.
_CMAKE_HELP_UNKNOWN = _Lazy(r'Argument "[^"\n]{1,200}" to --help-[a-z-]{1,30} is not a ')


def _native_failure(first: str, diagnostic: bool = False) -> _Verdict | None:
    """A C or C++ program's run-time failure that ``first`` reports (_NATIVE_FAILURE), or None. Only a line that
    opens with "*** ", "terminate " or "==", or one that may be a diagnostic (``diagnostic``: _may_be_diagnostic
    holds) and holds "(): " or ": runtime error: ", is matched; a line that opens with E or F is read as klog's
    (_klog_failure) or apt's (_apt_error)."""
    if diagnostic:
        if "(): " not in first and ": runtime error: " not in first:
            return None
    elif first[:1] in "EF":
        return _klog_failure(first) or _apt_error(first)
    elif first[:4] != "*** " and first[:10] != "terminate " and first[:2] != "==":
        return None
    found = _NATIVE_FAILURE.match(first)
    if found is None:
        return None
    basis = f"a native program's run-time failure '{_quote(first, 40)}'"
    kind = Kind.INVALID_ARGUMENTS if found.group("thrown") in _BAD_INPUT_THROWN else Kind.EXECUTION
    return _Verdict(kind, basis, message=first)


def _native_lead(text: str, first: str) -> _Verdict | None:
    """A klog or apt error line ``first`` opens ``text`` with (_native_failure's reading of a lead E)."""
    return _klog_failure(first) or _apt_error(first)


def _f_lead(text: str, first: str) -> _Verdict | None:
    """A klog fatal line, or gdb's 'Function "x" not defined.'."""
    return _klog_failure(first) or _gdb_error(text, first)


def _a_lead(text: str, first: str) -> _Verdict | None:
    """unzip's report on an archive ("Archive:  x.zip": a result unless a line below it fails), cmake's help of a name
    it does not know, or gdb's syntax error."""
    if first[:10] == _UNZIP_ARCHIVE:
        return _unzip_failure(text) or _NO_SIGNAL
    if first[:10] == 'Argument "' and _CMAKE_HELP_UNKNOWN.match(first) is not None:
        return _Verdict(Kind.NOT_FOUND, f"cmake's help of a name it does not know '{_quote(first, 40)}'", message=first)
    return _gdb_error(text, first)


def _j_lead(text: str, first: str) -> _Verdict | None:
    """jshell's transcript (a result unless a snippet failed), or a program's own error line."""
    if first[:8] == _JSHELL_PROMPT:
        return _jshell_reading(text) or _NO_SIGNAL
    return _tool_error(text, first)


# pkg-config's answer for a package it has no .pc file of, and podchecker's count of the errors it found in a page.
_PKG_CONFIG_MISSING = _Lazy(r"Package \S{1,200} was not found in the pkg-config search path\.")
_POD_ERROR = "*** ERROR: "
_POD_ERRORS = _Lazy(r"\S{1,200} has \d{1,9} pod syntax errors?\.")


def _p_lead(text: str, first: str) -> _Verdict | None:
    """pkg-config's missing package, or gdb's "Program received signal"."""
    if first[:8] == "Package " and _PKG_CONFIG_MISSING.match(first) is not None:
        return _Verdict(Kind.NOT_FOUND, "pkg-config finds no such package", message=first)
    return _gdb_error(text, first)


def _star_lead(text: str, first: str) -> _Verdict | None:
    """podchecker's errors in a page ("*** ERROR: ... at line 9 in file bad.pod", then "bad.pod has 1 pod syntax
    error."): the page it was given does not parse."""
    if first[:11] != _POD_ERROR or _POD_ERRORS.fullmatch(last := _last_line(text).strip()) is None:
        return None
    return _Verdict(Kind.INVALID_ARGUMENTS, f"podchecker says '{_quote(last, 40)}'", message=first)


# A message catalogue's entry as msgunfmt or a PO file writes it ('msgid "Operation was cancelled"' then 'msgstr "..."',
# its translation): what a program may one day say, not what this call said.
_PO_MSGID = 'msgid "'
_PO_MSGSTR = _Lazy(r'[^\n]{0,400}\n(?:#[^\n]{0,400}\n){0,3}msg(?:str|id_plural)[\[ ]')


def _m_lead(text: str, first: str) -> _Verdict | None:
    """A message catalogue's entries (a result, whatever their messages say), or a program's own error line."""
    if first[:7] == _PO_MSGID and _PO_MSGSTR.match(text, text.find(_PO_MSGID)) is not None:
        return _NO_SIGNAL
    return _lower_lead(text, first)


#: the readings of a first line that its lead character picks, tried before any other reading of unframed text (a
#: reading returns _NO_SIGNAL for a text it knows to be a result)
_LEAD_READINGS: dict[str, Callable[[str, str], _Verdict | None]] = {
    **dict.fromkeys("abcdefghiklmnopqrstuvwxyz", _lower_lead),
    "j": _j_lead,
    "m": _m_lead,
    "E": _native_lead,
    "F": _f_lead,
    "A": _a_lead,
    **dict.fromkeys("NUD", _gdb_error),
    "[": _bracket_lead,
    "C": _c_lead,
    "-": _dash_lead,
    "T": _t_lead,
    **dict.fromkeys("123456789", _digit_lead),
    "?": _question_lead,
    "P": _p_lead,
    "*": _star_lead,
}


# gettext's last word on a catalogue it could not parse ("msgcat: found 1 fatal error", "msggrep: too many errors,
# aborting"), below the lines that say where: the file it was given is not a catalogue, bad input.
_GETTEXT_TAIL = 48
_GETTEXT_GIVES_UP = _Lazy(r"[^\n]*\n(msg\w{1,12}): (?:found \d{1,9} fatal errors?|too many errors, aborting)\s*\Z")


def _gettext_refusal(text: str) -> _Verdict | None:
    """gettext's refusal of a malformed catalogue (_GETTEXT_GIVES_UP). Callers test its literals ("errors, a", "fatal
    err") in the text's last _GETTEXT_TAIL characters inline first, as nearly every text has neither."""
    found = _GETTEXT_GIVES_UP.search(text[-_GETTEXT_TAIL:])
    if found is None:
        return None
    return _Verdict(Kind.INVALID_ARGUMENTS, f"{found.group(1)} cannot parse the catalogue it was given",
                    message=text.strip())


def _lead_verdict(text: str, first: str) -> _Verdict | None:
    """What the reading that ``first``'s lead picks (_LEAD_READINGS) says of ``text``, else gettext's refusal of a
    catalogue (its literals tested inline first), else None; _NO_SIGNAL for a text a reading knows to be a result."""
    reading = _LEAD_READINGS.get(first[:1])
    verdict = None if reading is None else reading(text, first)
    if verdict is None and ("errors, a" in (tail := text[-_GETTEXT_TAIL:]) or "fatal err" in tail):
        verdict = _gettext_refusal(text)
    return verdict


def _unframed_reading(text: str, first: str) -> _Verdict | None:
    """What an unframed ``text`` states, or None when it states nothing (a result): a failure in its first
    sentence (_stated_failure), an error line among its first few (_error_line), a program's diagnostic
    (_diagnostic). ``first`` is ``_first_line(text)``.

    The one reading of such text, for classify's common path and _from_text alike; each test is made once
    (_stated_failure reads only a short message or a text a status leads, and then only when a word of
    _STATED_TOKENS is in its reach: both are told here, before it is called).
    """
    # A klog or apt error line is read first: its own words ("command failed", "Unhandled Error") frame the failure
    # that its err="..." names, as a stated failure would read them.
    # So is a program's own report that its first line's lead picks (_LEAD_READINGS): one look-up for every text.
    verdict = _lead_verdict(text, first)
    if verdict is _NO_SIGNAL:
        return None
    stripped = "" if len(text) > STATED_CHARS and _past_message(text) else text.strip()  # a short text is no call
    if verdict is None and stripped and (stripped[0] in "45" or (len(stripped) <= STATED_CHARS and stripped.count("\n") < _STATED_LINES)):
        reach = first[:_STATED_REACH]
        words = _words(reach if reach.isascii() else _folded(reach))
        if not _no_stated_word(reach, words):
            verdict = _stated_failure(text, first, words, stripped)
    if verdict is None and not _no_error_line(text):
        verdict = _error_line(text)
    if verdict is None and stripped and _may_be_diagnostic(first):
        verdict = _diagnostic(stripped, first)
    elif verdict is None and first[:1] in _NATIVE_LEADS and first[:1] not in "EF":
        verdict = _native_failure(first)  # (a klog or apt line, led by E or F, was read above by its lead reading)
    if verdict is None and first[:1] in "BUI" and stripped == first and _REFUSED_LINE.fullmatch(stripped) is not None:
        verdict = _Verdict(Kind.INVALID_ARGUMENTS, f"refuses '{_quote(stripped, 40)}'", message=stripped)
    if verdict is not None and _discussion(text):
        return _DISCUSSION
    return verdict


# A thread of people's comments, as an issue tool returns one: a line naming an author, what they wrote
# and when ("formulahendry · comment · 2018-02-12"). An error quoted in it is what someone reported, not
# what the call returned.
_COMMENT_LINE = _Lazy(r"^[\w.@-]{1,60} · (?:comment|review|reply|answer)\w* · \d{4}-\d\d-\d\d\b", re.MULTILINE)


# An issue as an issue tool returns it: its title, a blank line, then a body a person wrote, in the first
# person, asking, or under Markdown headings ("Insufficient Balance" then "How can I resolve ...", "503 error
# cause" then "### MDN URL"). The title may be an error message; the body says it was reported, not returned.
_ISSUE_TITLE_CHARS = 200
_ISSUE_BODY_CHARS = 600
_PERSON_WRITES = _Lazy(
    r"\b(?:I|I'm|I've|I'd|I'll|my|we're|we've)(?=[\s,.!?])|^#{1,4} "
    r"|^(?:[Hh]ow|[Ww]hy|[Ww]hat|[Ii]s|[Aa]re|[Cc]an|[Cc]ould|[Dd]oes|[Dd]o|[Aa]ny|[Hh]as|[Hh]ave)\b[^\n?]{0,200}\?",
    re.MULTILINE,
)


def _discussion(text: str) -> bool:
    """True when ``text`` is a thread of comments (``_COMMENT_LINE`` within what is read of it) or an issue
    with its body (``_PERSON_WRITES`` in the body under a one-line title)."""
    window = _window(text)
    if " · " in window and _COMMENT_LINE.search(window) is not None:
        return True
    title, blank, body = text[: _ISSUE_TITLE_CHARS + 2 + _ISSUE_BODY_CHARS].partition("\n\n")
    return bool(blank) and "\n" not in title and len(title) <= _ISSUE_TITLE_CHARS \
        and _PERSON_WRITES.search(body, 0, _ISSUE_BODY_CHARS) is not None


def _no_error_line(text: str) -> bool:
    """``_error_line_at(text) is None``, with the fewest calls: an error line starts at a newline (a
    one-line text has none; a compiler's may be the first line, but a compiler shows the source line under
    it), and a compiler's needs "error: " in the probe; OpenSSL's error queue (_openssl_hit) is told by ":error:".
    The probe is read as a copy: ``in`` parses no arguments, as ``str.find`` does, and a pattern searches it as it would the text up to
    the probe's end."""
    probe = text[:_ERROR_LINE_PROBE]
    if "\n" not in probe:
        return True
    return _ERROR_LINE_AT.search(probe) is None and ":error:" not in probe and ("error: " not in probe or (
        _COMPILER_FIRST_LINE.match(probe) is None and _COMPILER_LINE_AT.search(probe) is None
        and (": error: " not in probe or _PROGRAM_ERROR_FIRST.match(probe) is None and _PROGRAM_ERROR_AT.search(probe) is None)))


def _message(text: str) -> bool:
    """False when ``text`` is surely neither a short message nor led by an HTTP status, the two texts
    _stated_failure reads, or a message laid out as a document or data (which it passes over)."""
    stripped = text.strip()
    if stripped[:1] in ("4", "5", ""):
        return True
    return len(stripped) <= STATED_CHARS and stripped.count("\n") < _STATED_LINES \
        and stripped[:2] not in _JSON_STARTS and not _described(stripped)


def could_be_failure(content: object) -> bool:
    """False only when ``classify(content)`` (no flag, no status) surely says success; True means "read it".

    A few literal tests on the first and last lines of a text, no pattern over the whole (:func:`screen`):
    a caller that classifies many outputs (lint, report) may skip every output this rejects. Anything but
    a string that cannot open as JSON is left to classify (True). tests/failures/test_could_be_failure.py
    holds it to classify over the corpus and generated text.
    """
    return type(content) is not str or screen(content) is not None


#: a line of a numbered listing, as ``grep -n`` and ``cat -n`` number them ("4074:   As an approximation, ...")
_NUMBERED_LINE = _Lazy(r"[ \t]*\d{1,9}[:-]")


def _numbered(text: str) -> bool:
    """True when the second line of ``text`` is numbered as its first is (``grep -n``'s "574:  The overloads ..." then
    "4074: ..."): a listing's line numbers, not a status that leads a message."""
    end = text.find("\n", 0, HEAD_CHARS)
    return end >= 0 and _NUMBERED_LINE.match(text, end + 1) is not None


# A listing's entry as a manual's index (whatis, apropos) or a table of HTTP statuses writes one: a name and its section
# then " - " and a summary ("Error (3pm)          - Error/exception handling"), or a status and its phrase ("400 Bad
# Request"), or a table's row of a status's name, its number and its class ("FAILURE      1 libc", systemd-analyze
# exit-status). Two such lines in a row open a listing, not a report.
_ENTRY_LINE = _Lazy(r"[\w:.-]{1,80} \(\d\w{0,8}\)\s{1,40}- \S[^\n]*\n[\w:.-]{1,80} \(\d\w{0,8}\)\s{1,40}- \S"
                    r"|[45]\d\d [A-Z][\w' -]{1,60}\n[45]\d\d [A-Z][\w' -]{1,60}(?:\n|\Z)"
                    r"|(?:[A-Z][A-Z0-9_]{1,40} {2,40}\d{1,3} \w{1,20}[ \t]*\n[ \t]*){2}")


# A manual page's header line, its name and section at both ends ("err(3)   Library Functions Manual   err(3)"): the
# page err(3) documents, not a failure that its name starts.
_MANUAL_HEADER = _Lazy(r"([\w:.-]{1,80}\(\d\w{0,8}\))\s[^\n]{0,200}\s\1")


def _entry_listing(text: str, first: str) -> bool:
    """True when ``text`` opens with two entries of a listing (_ENTRY_LINE): a manual's index or a table of HTTP
    statuses or of exit statuses. Only a first line that opens with a status's digit or holds " (" or a column's
    two spaces is read further."""
    if first[:1] not in "45" and " (" not in first and "  " not in first:
        return False
    return _ENTRY_LINE.match(text.lstrip()) is not None


def _underlined(text: str, first: str) -> bool:
    """True when ``first``, the first line of ``text``, is a heading underlined by the line below it, as a manual's
    page of a name opens ("TIMEOUT" then "-------", cmake's help of that test property): a name, not a report."""
    at = text.find(first) + len(first)
    rule = text[at + 1 : at + 1 + len(first)]
    return text[at : at + 1] == "\n" and len(rule) == len(first) and rule[:1] in "-=" and not rule.strip(rule[:1])


def _short_message(text: str) -> bool:
    """True when ``text`` stripped is a message: at most STATED_CHARS characters in fewer than _STATED_LINES lines."""
    if len(text) > STATED_CHARS + 2 * _EDGE:
        return False
    stripped = text.strip()
    return len(stripped) <= STATED_CHARS and stripped.count("\n") < _STATED_LINES


def _from_text(text: str, wire: _Wire, first: str | None = None, unframed: bool | None = None) -> _Verdict:
    """Classify plain text: framed as a failure, or flagged by the wire, or a result.

    ``first`` is ``_first_line(text)`` and ``unframed`` ``_unframed(text, first)`` when the caller knows them.
    """
    if wire.flag is False:
        return _success(wire.basis)
    if first is None:
        first = _first_line(text)
    if wire.flag is None and (unframed if unframed is not None else _unframed(text, first)):
        return _unframed_reading(text, first) or _NO_SIGNAL
    head = text[:HEAD_CHARS]
    last = _last_line(text)
    last_stripped = last.strip()
    exit_code = _exit_code(first)
    if exit_code is None and last_stripped != first:  # a one-line text is its own last line
        exit_code = _exit_code(last_stripped)
    window = _window(text)
    python_end = bool(_PY_EXCEPTION_LINE.match(last_stripped)) and (
        _PY_TRACEBACK in window and _ELIDED_TRACEBACK.search(window) is None or _PY_FILE_FRAME.match(text) is not None)
    page_status = None
    if wire.flag is None:
        if exit_code == 0:
            return _EXIT_ZERO
        if exit_code is not None:
            basis = ""
        elif python_end:
            if last_stripped[:15] == _BROKEN_PIPE and _closed_output(text):
                return _success("a page of output whose reader closed the pipe")
            basis = "traceback ends the output"
        elif text[:1].isspace() and (tail := _traceback_tail(text, first)) is not None:
            # The last lines of a traceback kept by ``tail``: read from its exception line, as that line alone is.
            first = tail
            basis = f"a traceback's last lines end with '{_quote(tail, 24)}'"
        elif (trace := _tcl_trace(text)) is not None:
            return _tcl_error(text, trace)
        elif (start := _marked_start(first)) is not None and not (
                _WORD_FRAME.match(start.group()) and _describes(_folded(first.partition(":")[0]))) \
                and not _tally(text.strip(), fields=False) and _NAME_LIST.match(text) is None \
                and not (first[-7:] == " ... ok" and _PASSED_TEST.match(first)) and not _entry_listing(text, first) \
                and not (first[-1:] == ")" and _MANUAL_HEADER.fullmatch(first)) and not _underlined(text, first):
            basis = f"starts with '{_quote(start.group(), 24)}'"
        elif _FRAME_END.match(last) and _GENERIC_MARKER.search(window):
            basis = "stack trace ends the output"
        elif _PROCESS_DEATH.match(last_stripped):
            basis = f"ends with '{_quote(last_stripped, 24)}'"
        elif (lead := _STATUS_LEAD.match(first)) is not None and _short_message(text) and not _numbered(text):
            basis = f"starts with HTTP status {lead.group(1)}"
        elif "<" in first and (page := _error_page(text) or _PAGE_LINE.match(first)) is not None:
            page_status = int(page.group(2))
            basis = f"an error page titled HTTP {page_status}" if page.group(1) != "p" \
                else f"a line of an error page giving HTTP {page_status}"
        elif first[:1] in _MODULE_LEADS and (named := _MODULE_EXCEPTION.match(first)) is not None \
                and (last_stripped == first or _driver_context(text)):
            basis = f"an uncaught '{_quote(named.group().rstrip(': '), 24)}'"
        elif last_stripped[-1:] == "." and (die := _perl_die(last_stripped)) is not None:
            basis = f"Perl's die message '{_quote(die, 24)}'"
        elif _perl_uncompiled(last_stripped):
            # Perl's summary when the script it was given does not compile: bad input, whatever the first error says.
            return _Verdict(Kind.INVALID_ARGUMENTS, "Perl's script does not compile", message=text.strip())
        else:
            return _unframed_reading(text, first) or _NO_SIGNAL
    else:
        basis = wire.basis
    if wire.flag is None and _discussion(text):
        return _DISCUSSION
    if exit_code:
        return _exit_verdict(exit_code, text, basis)
    message = last_stripped if python_end else head
    headlines = [last_stripped] if python_end else []
    headlines.extend(_CAUSED_BY.findall(window)[-1:])
    headlines.append(first)
    signals = _STRONG_SIGNALS if python_end else _SIGNALS
    hit = _hcl_hit(text, first) if first[:7] == "Error: " and not python_end else None
    if hit is None:
        hit = next((h for h in (_find_signal(line, signals) for line in headlines) if h is not None), None)
    low = _lowered(window)
    if hit is None and not python_end and window not in headlines:  # a one-line text was its own headline
        hit = _find_signal(window, low=low)
    if hit is None:
        hit = _exception_hit(window, first, last_stripped, python_end)
    elif hit.kind is Kind.PERMISSION_DENIED:
        # A parser or a validator refuses what it was given to read, whatever it calls the refusal ("trailing comma
        # is not allowed", "mapping values are not allowed here", "Extra inputs are not permitted").
        hit = _parser_refusal(window, first, last_stripped, python_end) or hit
    if hit is None and (first[:7] == "thread " or first[:7] == "Error: "):
        hit = _rust_hit(window, first)
    if hit is None:
        hit = _curl_hit(first) or _openssl_hit(window)
    if hit is None and page_status is not None:
        hit = _Hit(_status_kind(page_status) or Kind.EXECUTION, f"HTTP {page_status} in text", str(page_status))
    if hit is None and basis[:5] == "Perl'" and first[:7] == "Usage: ":
        hit = _Hit(Kind.INVALID_ARGUMENTS, "a call's usage")  # Perl's croak on a function's arguments
    if hit is None and (complaint := _marked_complaint(basis, first, last_stripped, window)) is not None:
        hit = complaint
    retry = _retry_in_text(window, low)
    shell = _SHELL_LINE.match(first) is not None
    if hit is not None and not (shell and hit.kind not in _ENVIRONMENT_KINDS):
        code = hit.code
        if code is None and (http := _http_hit(window)) is not None:
            code = http.code
        return _Verdict(hit.kind, f"{basis}; {hit.evidence}", code=code, retry_after=retry, message=message)
    if shell:
        return _Verdict(Kind.TERMINAL_ERROR, f"{basis}; a shell's own error line", retry_after=retry, message=message)
    # An exit status inside an uncaught exception's message ("CalledProcessError: Command '['false']' returned
    # non-zero exit status 1.") is the status of a process it ran: the exception is the failure, not that exit.
    uncaught = python_end or last_stripped == first and _MODULE_EXCEPTION.match(first) is not None
    match = _EXIT_CODE.search(window) if not uncaught and _has_exit_word(low) else None
    if match is not None and int(match.group("n") or match.group("m")) != 0:
        return _exit_verdict(int(match.group("n") or match.group("m")), text, basis)
    stack = _stack_kind(window)
    if stack is not None:
        if python_end:
            what = f"uncaught {_quote(last_stripped.split(':', 1)[0], 60)} ({stack})"
            evidence = what if wire.flag is None else f"{basis}; {what}"
        else:
            evidence = basis if stack in basis else f"{basis}; {stack}"
        return _Verdict(Kind.EXECUTION, evidence, retry_after=retry, message=message, generic=True)
    if wire.flag is None or _GENERIC_MARKER.search(head) is not None or _FAILURE_WORD.search(head) is not None:
        evidence = basis if wire.flag is None else f"{basis}; error text"
        return _Verdict(Kind.EXECUTION, evidence, retry_after=retry, message=message, generic=True)
    return _Verdict(Kind.UNKNOWN, f"{basis}; cause not recognised", retry_after=retry, message=message,
                    generic=True)


# --------------------------------------------------------------------------------------------------
# The wire's own verdict.


class _Wire(Struct, frozen=True):
    """What the wire said: ``flag`` True (error), False (success) or None, why, and a status's kind."""

    flag: bool | None
    basis: str
    fallback: Kind | None = None


_ERROR_STATUSES = frozenset({"error", "errored", "failed", "failure", "fail", "outputerror"})
_SUCCESS_STATUSES = frozenset(
    {"success", "succeeded", "ok", "completed", "complete", "done", "outputavailable", "fulfilled"}
)
_STATUS_KINDS: dict[str, Kind] = {
    "outputdenied": Kind.PERMISSION_DENIED,
    "executiondenied": Kind.PERMISSION_DENIED,
    "denied": Kind.PERMISSION_DENIED,
    "rejected": Kind.PERMISSION_DENIED,
    "cancelled": Kind.CANCELLED,
    "canceled": Kind.CANCELLED,
    "interrupted": Kind.CANCELLED,
    "timeout": Kind.TIMEOUT,
    "timedout": Kind.TIMEOUT,
    "incomplete": Kind.ABORTED,
    "inprogress": Kind.ABORTED,
    "aborted": Kind.ABORTED,
}


def _wire(is_error: bool | None, status: str | None) -> _Wire:
    """Read the wire's flag and status; an error from either wins over a success from the other."""
    if is_error is None and status is None:
        return _NO_WIRE
    if (is_error is None or isinstance(is_error, bool)) and (status is None or type(status) is str):
        return _common_wire(is_error, status)  # a store repeats a few statuses over and over
    return _read_wire(is_error, status)


def _read_wire(is_error: bool | None, status: str | None) -> _Wire:
    norm = _norm(status) if isinstance(status, str) else ""
    said = f"status '{_quote(status, 32)}'" if norm else ""
    if norm in _STATUS_KINDS:
        return _Wire(True, said, _STATUS_KINDS[norm])
    if is_error:
        return _Wire(True, "is_error flag")
    if norm in _ERROR_STATUSES:
        return _Wire(True, said)
    if is_error is not None:
        return _Wire(False, "is_error false")
    if norm in _SUCCESS_STATUSES:
        return _Wire(False, said)
    return _NO_WIRE


_NO_WIRE = _Wire(None, "")
_common_wire = functools.lru_cache(maxsize=256)(_read_wire)


_NO_SIGNAL = _Verdict(Kind.SUCCESS, "no error signal")
_EXIT_ZERO = _Verdict(Kind.SUCCESS, "exit code 0")
_DISCUSSION = _Verdict(Kind.SUCCESS, "an issue or a thread of comments")
_NO_SIGNAL_RESULT = Classification(Kind.SUCCESS, False, _NO_SIGNAL.evidence)


def _success(evidence: str) -> _Verdict:
    return _Verdict(Kind.SUCCESS, evidence) if evidence else _NO_SIGNAL


# --------------------------------------------------------------------------------------------------
# Structured errors.

_MESSAGE_KEYS = ("message", "Message", "msg", "detail", "description", "reason", "errorMessage", "error_message")
_CODE_LIKE = _Lazy(r"[A-Za-z][\w.:#-]{0,63}")
_RUST_ERROR_KEYS = frozenset({"kind", "detail", "details", "source"})
_WIRE_FIELDS = frozenset({"subcode", "message", "details", "tool_id", "elapsed_ms", "reason", "requested", "card_id"})
_FLAT_SUBCODE_KEYS = _WIRE_FIELDS | {"type"}
_WIRE_VARIANTS: dict[str, Kind] = {**_KIND_BY_NORM, "toolnotfound": Kind.NOT_FOUND}
_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code", "exit_status", "exitStatus")
_OUTPUT_KEYS = ("stderr", "output", "stdout", "message")
_VERDICT_KEYS = frozenset(
    {"success", "ok", "status", "message", "msg", "error", "errors", "code", "detail", "details", "data", "reason"}
)
_GITHUB_ERROR_KEYS = frozenset({"message", "documentation_url", "status", "errors"})
_WRAPPER_KEYS = ("output", "result", "content", "text", "value", "response")
_AI_SDK_VALUE_TYPES = frozenset({"text", "json", "content"})
_AI_SDK_ERROR_TYPES = frozenset({"error-text", "error-json"})


def _type_of(data: Mapping[Any, Any]) -> str:
    """A block's ``type``, or "" when it has none or it is not a string (a list there is not hashable)."""
    kind = data.get("type")
    return kind if isinstance(kind, str) else ""


def _message_of(*objects: object) -> str:
    """The first human-written message among the usual fields of the given objects."""
    for obj in objects:
        if isinstance(obj, str) and obj:
            return obj
        if isinstance(obj, Mapping):
            for key in _MESSAGE_KEYS:
                value = obj.get(key)
                if isinstance(value, str) and value:
                    return value
    return ""


#: Limits more precise than a rate limit, which a message may name under a rate-limit code.
_FINER_LIMITS = frozenset(
    {Kind.USAGE_POOL_EXHAUSTED, Kind.USAGE_LIMIT_REACHED, Kind.CONCURRENCY_LIMIT, Kind.GLOBAL_RATE_LIMIT}
)


def _decide(
    codes: Sequence[object],
    numbers: Sequence[object],
    message: str,
    basis: str,
    *,
    retry_after: float | None = None,
    tool_id: str | None = None,
) -> _Verdict:
    """Decide an error object's kind from its codes, message and status, most specific first."""
    words = [code.strip() for code in codes if isinstance(code, str) and code.strip()][:8]
    statuses = [n for n in (_int(item) for item in (*numbers, *words)) if n is not None]
    words = [word for word in words if _INTEGER.fullmatch(word) is None]
    window = _window(message)
    retry = retry_after if retry_after is not None else _retry_in_text(window) if message else None

    def verdict(kind: Kind, evidence: str, code: str | None, generic: bool = False) -> _Verdict:
        return _Verdict(kind, evidence, code=_str(code), retry_after=retry, tool_id=tool_id, message=message,
                        generic=generic)

    hit = _find_signal(window) if message else None
    for lookup in (_known_code, _suffix_code):
        for word in words:
            kind = lookup(word)
            if kind is not None:
                if kind is Kind.RATE_LIMITED and hit is not None and hit.kind in _FINER_LIMITS:
                    # A 429 code over a message that names the limit: Google's RESOURCE_EXHAUSTED with
                    # "You exceeded your current quota", a 429 saying "too many concurrent requests".
                    return verdict(hit.kind, f"structured code '{_quote(word)}'; {hit.evidence}", word)
                return verdict(kind, f"structured code '{_quote(word)}'", word)
    fallback_code = words[0] if words else str(statuses[0]) if statuses else None
    if hit is not None:
        return verdict(hit.kind, f"{basis}; {hit.evidence}", fallback_code or hit.code)
    for number in statuses:
        kind = _status_kind(number)
        if kind is not None:
            return verdict(kind, f"structured status {number}", str(number))
    for word in words:
        kind = _VAGUE_BY_NORM.get(_norm(word))
        if kind is not None:
            return verdict(kind, f"structured code '{_quote(word)}'", word)
    for word in words:
        if _norm(word).startswith("invalid"):  # OAuth's invalid_grant, invalid_client_metadata...
            return verdict(Kind.INVALID_ARGUMENTS, f"structured code '{_quote(word)}'", word)
    if words:
        return verdict(Kind.CUSTOM, f"structured code '{_quote(words[0])}'", words[0])
    return verdict(Kind.EXECUTION, basis, fallback_code, generic=True)


def _aws_type(value: object) -> object:
    """``com.amazon.coral.validate#ValidationException`` → ``ValidationException``."""
    if isinstance(value, str):
        return value.rsplit("#", 1)[-1].rsplit(".", 1)[-1].split(":", 1)[0]
    return value


def _error_object(container: Mapping[Any, Any], error: object, basis: str) -> _Verdict | None:
    """Read ``container["error"]`` (or AWS's ``Error``): a message, a code, a flag or a provider body."""
    # The retry hint is looked for only once there is an error to give it to: most results say
    # "error": null or "".
    numbers = [container.get(key) for key in ("status", "statusCode", "status_code")]
    if isinstance(error, str):
        text = error.strip()
        if not text:
            return None
        codes = [text] if _CODE_LIKE.fullmatch(text) else []
        said = _message_of(container)
        return _decide(codes, numbers, f"{text}: {said}" if said else text, basis, retry_after=_retry_in(container))
    if isinstance(error, list):
        return _error_object(container, error[0], basis) if error else None
    if not isinstance(error, Mapping):
        if not error:
            return None
        return _decide([container.get("code")], numbers, _message_of(container), basis,
                       retry_after=_retry_in(container))
    if not error:
        return None
    code, cause = error.get("code"), error.get("cause")
    tool_id = _str(error.get("tool_id") or error.get("tool"))
    if isinstance(code, str) and isinstance(cause, str):
        # A tool's own refusal: its code is the whole verdict (the cause is prose for the model).
        kind = _known_code(code) or Kind.CUSTOM
        own_retry = _retry_in(error)
        return _Verdict(kind, f"structured code '{_quote(code)}'", code=clip(code, CODE_CHARS),
                        retry_after=_retry_in(container) if own_retry is None else own_retry, tool_id=tool_id,
                        message=cause)
    reasons = []
    details = error.get("details")
    if isinstance(details, list):
        reasons = [item.get("reason") for item in details[:4] if isinstance(item, Mapping)]
    codes = [error.get("kind"), code, error.get("Code"), *reasons, error.get("type"), error.get("status"),
             _aws_type(error.get("__type")), error.get("name"), error.get("errorType"), error.get("error")]
    numbers = [code, error.get("status"), error.get("http_status"), *numbers]
    message = _message_of(error, error.get("error"))
    retry = _retry_in(container)
    if retry is None:
        retry = _retry_in(error)
    return _decide(codes, numbers, message, basis, retry_after=retry, tool_id=tool_id)


def _seed_error(data: Mapping[Any, Any]) -> _Verdict | None:
    """The seed projects' shapes and threadfix's own payload."""
    error = data.get("error")
    if data.get(MARKER_KEY) == MARKER and isinstance(error, Mapping):
        name, cause = error.get("kind"), error.get("cause")
        kind = _KIND_BY_NORM.get(_norm(name)) if isinstance(name, str) else None
        what = ", ".join(_quote(part) for part in (name, cause) if isinstance(part, str))
        return _Verdict(kind or Kind.UNKNOWN, f"written by threadfix ({what})" if what else "written by threadfix",
                        code=_str(cause), tool_id=_str(error.get("tool")), message=_message_of(error))
    if error is True and data.get("aborted") is True:
        return _Verdict(Kind.ABORTED, "aborted flag: the turn ended before the call returned",
                        tool_id=_str(data.get("tool")), message=_message_of(data))
    name, detail = data.get("kind"), data.get("detail")
    if isinstance(name, str) and isinstance(detail, str) and data.keys() <= _RUST_ERROR_KEYS:
        kind = _KIND_BY_NORM.get(_norm(name))
        if kind is not None:
            details = data.get("details")
            details = details if isinstance(details, Mapping) else {}
            return _Verdict(kind, f"structured kind '{_quote(name)}'", code=_str(details.get("code")),
                            retry_after=_retry_in(details), tool_id=_str(details.get("tool_id")), message=detail)
    if len(data) == 1:
        ((variant, body),) = data.items()
        if isinstance(variant, str) and isinstance(body, Mapping) and body and body.keys() <= _WIRE_FIELDS:
            norm = _norm(variant)
            if norm == "custom":
                return _subcode_error(body)
            kind = _WIRE_VARIANTS.get(norm)
            if kind is not None:
                details = body.get("details")
                details = details if isinstance(details, Mapping) else {}
                return _Verdict(kind, f"structured variant '{_quote(variant)}'", code=_str(details.get("code")),
                                retry_after=_retry_in(details), tool_id=_str(body.get("tool_id")),
                                message=_message_of(body))
    if isinstance(data.get("subcode"), str) and data.keys() <= _FLAT_SUBCODE_KEYS:
        return _subcode_error(data)
    return None


def _subcode_error(body: Mapping[Any, Any]) -> _Verdict:
    """The Rust wire's ``Custom {subcode, message, details}``: details.code, when present, is the code."""
    subcode = body.get("subcode")
    details = body.get("details")
    details = details if isinstance(details, Mapping) else {}
    code = _str(details.get("code")) or _str(subcode)
    kind = (_known_code(subcode) if isinstance(subcode, str) else None) or Kind.CUSTOM
    evidence = f"structured subcode '{_quote(subcode)}'" if isinstance(subcode, str) else "structured custom error"
    return _Verdict(kind, evidence, code=code, retry_after=_retry_in(details), tool_id=_str(details.get("tool_id")),
                    message=_message_of(body))


def _exit_object(data: Mapping[Any, Any], wire: _Wire) -> _Verdict | None:
    """Shell-tool results that carry an exit code (Codex metadata, subprocess-style dicts)."""
    holders = [data]
    metadata = data.get("metadata")
    if metadata is not None and isinstance(metadata, Mapping):
        holders.append(metadata)
    for holder in holders:
        if _timed_out(holder):
            return _Verdict(Kind.TIMEOUT, "timed_out flag", message=_message_of(*(data.get(k) for k in _OUTPUT_KEYS)))
        for key in _EXIT_KEYS:
            if key not in holder:
                continue
            code = _int(holder[key])
            if code is None:
                continue
            if code == 0:
                # No flag either way: a pipeline's status is its last command's (``cmd 2>&1 | tail`` exits 0 when
                # cmd failed), so the output's own words decide, as for unflagged text.
                return None
            text = next((v for v in (data.get(k) for k in _OUTPUT_KEYS) if isinstance(v, str) and v.strip()), "")
            return _exit_verdict(code, text, "")
    return None


def _timed_out(holder: Mapping[Any, Any]) -> bool:
    """The shell result (or its metadata) says it timed out: what _exit_object reads before any exit code."""
    return holder.get("timed_out") is True or holder.get("timedOut") is True


#: the keys of a shell tool's result that states its exit code and nothing else (Codex's ``{"output": ...,
#: "metadata": {"exit_code": 0, ...}}``)
_EXIT_RESULT_KEYS = frozenset({"output", "metadata"})


def shell_result_exited_zero(data: dict[Any, Any]) -> bool:
    """True when ``data``, an object a text parses to, is a shell tool's result that says it exited 0:
    ``{"output": ..., "metadata": {...}}`` whose metadata's ``exit_code`` is the integer 0 and which does not say it
    timed out.

    classify (no flag) reads such an object by its output alone: no key of it names an error, and an exit status of 0
    says nothing either way (a pipe's status is its last command's), so :func:`_exit_object` finds nothing and the
    output is unwrapped and read as unflagged text (``tests/report/test_verdicts.py`` holds this to classify over the
    failure corpus and made objects).
    """
    if data.keys() != _EXIT_RESULT_KEYS:
        return False
    metadata = data["metadata"]
    if metadata.__class__ is not dict:
        return False
    code = metadata.get(_EXIT_KEYS[0], 1)
    return code == 0 and code.__class__ is int and not _timed_out(metadata)


def exited_zero_output(data: dict[Any, Any]) -> str | None:
    """The output of a shell result that says it exited 0 (:func:`shell_result_exited_zero`) when classify reads the
    object exactly as that text alone: a string that cannot open as JSON, read as plain text; else None (what
    :mod:`threadfix.verdicts` screens and caches as the text it is, without classifying the object)."""
    if not shell_result_exited_zero(data):
        return None
    output = data["output"]
    return output if output.__class__ is str and _plain(output) else None


def _exited_zero_reading(data: dict[Any, Any], wire: _Wire) -> _Verdict | None:
    """The reading of a shell result that exited 0 (:func:`exited_zero_output`) by its output alone, or None.

    No reader of an object finds anything else in it, so this is what the walk would reach by unwrapping it, without the
    walk: classify's reading of a text that opens with ``{`` and _from_mapping's both ask it, and threadfix.verdicts asks
    exited_zero_output for the same output, to screen and cache it as the text it is."""
    output = exited_zero_output(data)
    return None if output is None else _from_text(output, wire)


def _other_error(data: Mapping[Any, Any]) -> _Verdict | None:
    """AWS, GraphQL, Anthropic server-tool, FastAPI and success-flag error bodies."""
    if "__type" in data or "$fault" in data or "errorType" in data or "errorMessage" in data:
        metadata = data.get("$metadata")
        status = metadata.get("httpStatusCode") if isinstance(metadata, Mapping) else None
        codes = [_aws_type(data.get("__type")), data.get("name"), data.get("code"), data.get("errorType")]
        return _decide(codes, [status], _message_of(data), "AWS error", retry_after=_retry_in(data))
    errors = data.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], Mapping) and data.get("data") is None:
        first = errors[0]
        extensions = first.get("extensions")
        ext_code = extensions.get("code") if isinstance(extensions, Mapping) else None
        return _decide([ext_code, first.get("code"), first.get("type")], [], _message_of(first), "errors list")
    kind = _type_of(data)
    if (kind == "error" or data.get("object") == "error") and isinstance(data.get("message"), str):
        # Anthropic's and Claude Code's {"type": "error", "message": ...}; Mistral's {"object": "error",
        # "message": ..., "type": "invalid_request_error", "code": null}.
        return _decide([data.get("code"), None if kind == "error" else kind], [data.get("status")], data["message"],
                       "error body", retry_after=_retry_in(data))
    if kind.endswith("_error") and isinstance(data.get("error_code"), str):
        return _decide([data["error_code"]], [], _message_of(data), f"{_quote(kind)}")
    if kind.endswith("_error") and (named := _known_code(kind)) is not None:
        return _Verdict(named, f"structured type '{_quote(kind)}'", code=_str(kind), message=_message_of(data))
    if kind == "execution-denied":
        return _Verdict(Kind.PERMISSION_DENIED, "output type 'execution-denied'", message=_message_of(data))
    if "documentation_url" in data and data.keys() <= _GITHUB_ERROR_KEYS and isinstance(data.get("message"), str):
        return _decide([], [data.get("status")], data["message"], "GitHub error body")
    if data.keys() <= _VERDICT_KEYS:
        said = (
            "success false" if data.get("success") is False
            else "ok false" if data.get("ok") is False
            else f"status '{data.get('status')}'" if data.get("status") in ("error", "fail") and "success" not in data
            else None
        )
        if said is not None:
            return _decide([data.get("code")], [], _message_of(data, data.get("errors")), said,
                           retry_after=_retry_in(data))
    code = data.get("code")
    if type(code) is int and -32768 <= code <= -32000 and isinstance(data.get("message"), str):
        # A JSON-RPC error object on its own, as an MCP client quotes it ({"code": -32602, "message":
        # "Unsupported protocol version", "data": {...}}, sickn33/agentic-awesome-skills #1003).
        return _decide([], [code], data["message"], "JSON-RPC error", retry_after=_retry_in(data))
    status = next((data[key] for key in _STATUS_KEYS if key in data), None)
    if type(status) is int and 400 <= status < 600:
        # A response body that gives its own HTTP status and says why: {"StatusCode": 429, "DateTime": ...,
        # "Description": "Concurrent request limit exceeded. ..."} (reapit/foundations #4414).
        said = next((data[key] for key in _SAID_KEYS if isinstance(data.get(key), str) and data[key].strip()), None)
        if said is not None:
            return _decide([], [status], said, f"status {status} body", retry_after=_retry_in(data))
    if _problem_type(data) is not None:
        # RFC 7807 / 9457 problem details (``application/problem+json``): a problem's type URI, its title
        # and a detail, status or instance (DigitalExcellence/dex-backend #80, optuna/optuna-dashboard #67).
        # The type's last segment ("out-of-credit", "validation-error") is its code.
        code = data["type"].rstrip("/").rpartition("/")[2]
        message = " ".join(v for v in (data.get("title"), data.get("detail")) if isinstance(v, str))
        return _decide([code] if code and code != "about:blank" else [], [data.get("status")], message,
                       "problem details", retry_after=_retry_in(data))
    if data.keys() == {"detail"}:
        detail = data["detail"]
        if isinstance(detail, list) and detail and isinstance(detail[0], Mapping) and "loc" in detail[0]:
            return _Verdict(Kind.INVALID_ARGUMENTS, "validation error list", code=_str(detail[0].get("type")),
                            message=_message_of(detail[0], {"msg": detail[0].get("msg")}))
        if isinstance(detail, str) and (hit := _find_signal(detail[:HEAD_CHARS])) is not None:
            return _Verdict(hit.kind, f"detail object; {hit.evidence}", code=hit.code, message=detail)
    return None


#: The keys a response body states its own HTTP status under, and those it says why under.
_STATUS_KEYS = ("statusCode", "StatusCode", "status_code", "httpStatus", "status")
_SAID_KEYS = ("message", "Message", "description", "Description", "error_description", "detail", "title")


def _problem_type(data: Mapping[Any, Any]) -> str | None:
    """The type URI of an RFC 7807 problem details object, or None when ``data`` is not one."""
    kind = data.get("type")
    if not isinstance(kind, str) or not isinstance(data.get("title"), str):
        return None
    if not (kind.startswith(("https://", "http://")) or kind == "about:blank"):
        return None
    return kind if ("detail" in data or "status" in data or "instance" in data) else None


def _structured(data: Mapping[Any, Any], wire: _Wire) -> _Verdict | None:
    """An error (or an explicit success) stated by an object's fields, or None when it states neither."""
    verdict = _seed_error(data)
    if verdict is not None:
        return verdict
    for key in ("error", "Error", "err"):
        if key in data:
            verdict = _error_object(data, data[key], "error object")
            if verdict is not None:
                return verdict
    return _exit_object(data, wire) or _other_error(data)


def _unwrap(data: Mapping[Any, Any], wire: _Wire) -> tuple[object, _Wire] | None:
    """The content an envelope carries (Gemini, MCP, AI SDK, ``{"output": …}``), with its own flag."""
    response = data.get("functionResponse")
    if isinstance(response, Mapping):
        return response.get("response", response), wire
    kind = _type_of(data)
    if "value" in data:
        if kind in _AI_SDK_ERROR_TYPES:
            return data["value"], _Wire(True, f"output type '{kind}'", wire.fallback)
        if kind in _AI_SDK_VALUE_TYPES:
            return data["value"], wire
    for flag_key in ("isError", "is_error"):
        if flag_key in data and ("content" in data or "structuredContent" in data):
            flagged = data[flag_key]
            inner = data.get("content") or data.get("structuredContent")
            if flagged is True:
                return inner, _Wire(True, f"{flag_key} flag", wire.fallback)
            if wire.flag is None and flagged is False:
                return inner, _Wire(False, f"{flag_key} false")
            return inner, wire
    for key in _WRAPPER_KEYS:
        inner = data.get(key)
        if isinstance(inner, (str, list, Mapping)):
            return inner, wire
    return None


# Every key the readers above (_seed_error, _error_object, _exit_object, _other_error, _unwrap) look up.
# A dict with none of them is a plain result whatever its values say; keep this in step with the readers
# (tests/failures/test_quick_paths.py compares the shortcut with the full reading).
_READ_KEYS = frozenset(
    {
        "error", "Error", "err", MARKER_KEY, "aborted", "kind", "detail", "subcode", "metadata", "timed_out", "timedOut",
        *_EXIT_KEYS, "__type", "$fault", "errorType", "errorMessage", "errors", "documentation_url", "success",
        "ok", "status", "code", "statusCode", "StatusCode", "status_code", "httpStatus", "functionResponse", "value", "isError", "is_error", "structuredContent", *_WRAPPER_KEYS,
    }
)


def plain_result_object(data: Mapping[Any, Any]) -> bool:
    """True when ``data``, an object a text parses to, is a result whatever wire it came on: no reader of error
    shapes finds anything in it (:func:`_unread`, looked up at each call so a test that turns the shortcut off
    turns it off here too); what :mod:`threadfix.verdicts` answers without classifying."""
    return _unread(data)


def _unread(data: Mapping[Any, Any]) -> bool:
    """True when no reader of error shapes can find anything in ``data``: it is then a plain result.

    ``type`` is read only for the values below, and a single key only as a Rust wire variant around an
    object (``{"Timeout": {...}}``).
    """
    if type(data) is not dict or not data.keys().isdisjoint(_READ_KEYS):
        return False
    if len(data) == 1 and isinstance(next(iter(data.values())), Mapping):
        return False
    kind = data.get("type")
    if isinstance(kind, str) and (kind.endswith("_error") or kind == "execution-denied" or kind == "error"):
        return False
    if kind is not None and "title" in data and _problem_type(data) is not None:
        return False
    return data.get("object") != "error"


# --------------------------------------------------------------------------------------------------
# Walking any wire's content.

_ENVELOPE_HEAD = _Lazy(
    r'\s*(?:\[\s*)?\{\s*"(?:error|Error|errors|output|result|content|functionResponse|response|isError|is_error|stdout'
    r'|stderr|exit_code|returncode|type|value|text|kind|subcode)"'
)
_TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text", "refusal"})
_MEDIA_PARTS = {
    "image": "[image]", "input_image": "[image]", "image_url": "[image]", "document": "[document]",
    "file": "[file]", "input_file": "[file]", "audio": "[audio]", "input_audio": "[audio]",
    "resource_link": "[resource]",
}


def _is_content_part(part: object) -> bool:
    if type(part) is not dict and not isinstance(part, Mapping):
        return False
    kind = _type_of(part)
    return kind in _TEXT_PART_TYPES or kind in _MEDIA_PARTS or "json" in part or isinstance(part.get("text"), str)


def _opening(text: str) -> str:
    """The character a text opens with once its indent is skipped ("" when there is none in the head)."""
    head = text[:1]
    if head.isspace():
        # Skip the indent in place; only a long run of whitespace is left to lstrip().
        at = 1
        while at < _EDGE and text[at : at + 1].isspace():
            at += 1
        head = text[at : at + 1] if at < _EDGE else text[:HEAD_CHARS].lstrip()[:1]
    return head


def _parsed(text: str) -> object:
    """``text`` as JSON when it looks like a JSON error or envelope, else None (it is then read as text)."""
    head = _opening(text)
    if head not in ("{", "[") or len(text) > MAX_PARSE:
        return None
    if len(text) > PARSE_LIMIT and _ENVELOPE_HEAD.match(text) is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _decoded(data: bytes | bytearray | memoryview) -> str:
    """Bytes as text: all of them when they could be parsed, else the head and tail that are read."""
    raw = bytes(data)
    if len(raw) <= MAX_PARSE:
        return raw.decode("utf-8", "replace")
    return raw[: HEAD_CHARS * 4].decode("utf-8", "replace") + "\n" + raw[-TAIL_CHARS * 4 :].decode("utf-8", "replace")


def _classify(content: object, wire: _Wire, depth: int) -> _Verdict:
    if depth > _MAX_DEPTH:
        return _from_text(_dump(content, HEAD_CHARS + TAIL_CHARS), wire)
    if content is None:
        return _from_text("", wire)
    if type(content) is dict:  # the common cases, ahead of the slower abstract checks
        return _from_mapping(content, wire, depth)
    if type(content) is list:
        return _from_parts(content, wire, depth)
    if isinstance(content, str):
        parsed = _parsed(content)
        if parsed is not None and isinstance(parsed, (Mapping, list)):
            return _classify(parsed, wire, depth + 1)
        return _from_text(content, wire)
    if isinstance(content, (bytes, bytearray, memoryview)):
        return _classify(_decoded(content), wire, depth + 1)
    if isinstance(content, Mapping):
        return _from_mapping(content, wire, depth)
    if isinstance(content, (list, tuple)):
        return _from_parts(content, wire, depth)
    return _from_text(_dump(content, 200), wire)


def _from_mapping(data: Mapping[Any, Any], wire: _Wire, depth: int) -> _Verdict:
    if wire.flag is not True and _unread(data):
        return _success(wire.basis)
    if depth < _MAX_DEPTH and type(data) is dict and (verdict := _exited_zero_reading(data, wire)) is not None:
        return verdict
    verdict = _structured(data, wire)
    if verdict is not None:
        return verdict
    unwrapped = _unwrap(data, wire)
    if unwrapped is not None:
        return _classify(unwrapped[0], unwrapped[1], depth + 1)
    if wire.flag:
        return _from_text(_dump(data, HEAD_CHARS + TAIL_CHARS), wire)
    return _success(wire.basis)


def _bounded(parts: Sequence[Any]) -> Iterator[Any]:
    if len(parts) <= _MAX_PARTS:
        yield from parts
    else:
        yield from parts[: _MAX_PARTS // 2]
        yield from parts[-(_MAX_PARTS // 2) :]


def _from_parts(parts: Sequence[Any], wire: _Wire, depth: int) -> _Verdict:
    """Content blocks: the first that is a structured error decides, else their text together does."""
    if len(parts) == 1 and not _is_content_part(parts[0]):
        return _classify(parts[0], wire, depth + 1)
    pieces: list[str] = []
    for part in _bounded(parts):
        if isinstance(part, str):
            pieces.append(_window(part))
            continue
        if not _is_content_part(part):
            continue
        structured: object = part.get("json")
        text = part.get("text")
        if isinstance(text, str):
            structured = _parsed(text)
            pieces.append(_window(text))
        if isinstance(structured, Mapping) and not _unread(structured):
            verdict = _structured(structured, wire)
            if verdict is not None and verdict.kind is not Kind.SUCCESS:
                return verdict
    return _from_text("\n".join(pieces), wire)


def _flatten(content: object, budget: int, depth: int) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content[:budget]
    if isinstance(content, (bytes, bytearray, memoryview)):
        return bytes(content[: budget * 4]).decode("utf-8", "replace")[:budget]
    if depth > _MAX_DEPTH or not isinstance(content, (Mapping, list, tuple)):
        return _dump(content, budget)
    if isinstance(content, Mapping):
        return _flatten_mapping(content, budget, depth)
    pieces: list[str] = []
    used = 0
    for part in content:
        if used >= budget:
            break
        piece = _flatten_part(part, budget - used, depth + 1)
        if piece:
            pieces.append(piece)
            used += len(piece) + 1
    return "\n".join(pieces)[:budget]


def _flatten_part(part: object, budget: int, depth: int) -> str:
    if isinstance(part, Mapping):
        kind = _type_of(part)
        if kind in _MEDIA_PARTS:
            return _MEDIA_PARTS[kind]
        if isinstance(part.get("text"), str):
            return part["text"][:budget]
        if "json" in part:
            return _dump(part["json"], budget)
        resource = part.get("resource")
        if isinstance(resource, Mapping) and isinstance(resource.get("text"), str):
            return resource["text"][:budget]
    return _flatten(part, budget, depth)


def _flatten_mapping(data: Mapping[Any, Any], budget: int, depth: int) -> str:
    response = data.get("functionResponse")
    if isinstance(response, Mapping):
        return _flatten(response.get("response", response), budget, depth + 1)
    kind = _type_of(data)
    if "value" in data and (kind in _AI_SDK_VALUE_TYPES or kind in _AI_SDK_ERROR_TYPES):
        return _flatten(data["value"], budget, depth + 1)
    if kind == "execution-denied":
        return _flatten(data.get("reason"), budget, depth + 1)
    if ("isError" in data or "structuredContent" in data) and isinstance(data.get("content"), list):
        return _flatten(data["content"], budget, depth + 1)
    if kind in _TEXT_PART_TYPES and isinstance(data.get("text"), str):
        return data["text"][:budget]
    return _dump(data, budget)


# --------------------------------------------------------------------------------------------------
# Public API.


def classify(content: object, *, is_error: bool | None = None, status: str | None = None) -> Classification:
    """Classify one stored tool output, whatever wire format it came from.

    ``is_error`` is the wire's own error flag and ``status`` any other status it stores; the module
    docstring gives the precedence between them and the content. Never raises on content that JSON,
    a store or a dialect can produce.
    """
    if type(content) is str and is_error is None and status is None:
        lead = content[:1]
        indented = lead.isspace()
        if lead not in "{[" and (not indented or _plain(content)):  # ("" is in every string)
            # Most outputs: plain text with no flag, read as text at once (_parsed would say None); _plain's
            # test, its common case inline.
            if indented:
                first = _first_line(content)
            else:  # _first_line's common case, inline
                first = content[:_LINE_CHARS].partition("\n")[0].rstrip()
            if _unframed(content, first):  # _plain_text, its common case inline
                verdict = _unframed_reading(content, first)
                return _NO_SIGNAL_RESULT if verdict is None else _classification(verdict, _NO_WIRE)
            return _classification(_from_text(content, _NO_WIRE, first, False), _NO_WIRE)
        if lead == "{" and len(content) <= PARSE_LIMIT:
            # _parsed's reading of such a text, inline: parsed whole, then read as the object or, when it is not JSON,
            # as text; a shell result that exited 0 is read at once as its output (_exited_zero_reading, as
            # _from_mapping reads it).
            try:
                data = orjson.loads(content)
            except orjson.JSONDecodeError:
                data = None
            if data is not None and (verdict := _exited_zero_reading(data, _NO_WIRE)) is not None:
                return _classification(verdict, _NO_WIRE)
            return classify_parsed(content, data)
        wire = _NO_WIRE
    else:
        wire = _wire(is_error, status)
        if is_error is False and status is None and type(content) is str and _plain(content):
            # Text the wire calls a result: _classify would find no JSON to read and _from_text trust the flag.
            return _classification(_success(wire.basis), wire)
    return _classification(_classify(content, wire, 0), wire)


def _plain(content: str) -> bool:
    """True when a text cannot open as JSON (what _parsed would parse): it is read as text at once."""
    lead = content[:1]
    return lead != "{" and lead != "[" and lead != "" and (not lead.isspace() or _opening(content) not in ("{", "[", ""))


def _plain_text(content: str, first: str, unframed: bool) -> Classification:
    """classify() of plain text with no flag, from its first line ``first`` and ``_unframed`` on."""
    if unframed:
        verdict = _unframed_reading(content, first)
        if verdict is None:
            return _NO_SIGNAL_RESULT
    else:
        verdict = _from_text(content, _NO_WIRE, first, False)
    return _classification(verdict, _NO_WIRE)


def screen(content: str) -> tuple[str, bool] | None:
    """None when ``classify(content)`` (a string, no flag, no status) surely says success; else what the
    reading goes on from, for :func:`classify_screened`: the first line and whether the text is unframed
    (("", False) for a text that may open as JSON, read whole).

    could_be_failure's test, for a caller that classifies what it does not reject without reading the
    first line again (threadfix.verdicts, which looks in its cache in between).
    """
    if not _plain(content):
        return _READ_WHOLE
    first = _first_line(content)
    unframed = _unframed(content, first)
    if unframed and _clear(content, first):
        return None
    return first, unframed


def classify_screened(content: str, screened: tuple[str, bool]) -> Classification:
    """``classify(content)`` for a text :func:`screen` passed as ``screened``."""
    if screened is _READ_WHOLE:
        return _classification(_classify(content, _NO_WIRE, 0), _NO_WIRE)
    return _plain_text(content, *screened)


_READ_WHOLE = ("", False)


def classify_parsed(text: str, data: dict[Any, Any] | None) -> Classification:
    """``classify(text)`` (no flag, no status) for a text that opens with ``{`` and is no longer than PARSE_LIMIT, given
    what ``orjson.loads`` made of it: the object ``data``, or None when it is not JSON. classify parses such a text whole
    and reads the object, or reads the text as text when it does not parse, so a caller that has parsed it already
    (threadfix.verdicts, to ask :func:`plain_result_object`) need not have it parsed a second time."""
    return _classification(_from_text(text, _NO_WIRE) if data is None else _classify(data, _NO_WIRE, 1), _NO_WIRE)


def lone_text(content: list[Any]) -> str | None:
    """The text of a list of one text part (``[{"type": "text", "text": T}]``, as MCP and the Responses and
    Anthropic wires store a tool's reply) when ``classify`` reads the list exactly as ``T`` alone, else None.

    That is when ``T`` cannot open as JSON and is read whole (no head-and-tail window): the list's reading
    then joins one piece and reads it as text, as a string's does. A caller can then screen and cache
    ``T`` as the text it is.
    """
    if len(content) != 1:
        return None
    part = content[0]
    if part.__class__ is not dict:
        return None
    text = part.get("text")
    if text.__class__ is not str or len(text) > HEAD_CHARS + TAIL_CHARS or not _plain(text):
        return None
    return text


def _classification(verdict: _Verdict, wire: _Wire) -> Classification:
    """The Classification a verdict read under ``wire`` gives (a status may name a generic failure's kind)."""
    if verdict.kind is Kind.SUCCESS:
        if wire.flag:
            verdict = _Verdict(Kind.UNKNOWN, f"{wire.basis}; cause not recognised", generic=True)
        elif verdict is _NO_SIGNAL:
            return _NO_SIGNAL_RESULT
        elif verdict.code is None:
            return _success_result(verdict.evidence)
        else:
            return Classification(Kind.SUCCESS, False, verdict.evidence, code=verdict.code)
    kind, evidence = verdict.kind, verdict.evidence
    if kind is Kind.USAGE_POOL_EXHAUSTED and verdict.retry_after is not None and "quota" in evidence:
        # A quota that says when to retry resets by itself: Gemini's free-tier "You exceeded your current
        # quota ... Please retry in 54s" is a per-minute rate quota, not an empty balance.
        kind, evidence = Kind.RATE_LIMITED, f"{evidence}; retry in {verdict.retry_after:g}s: a rate quota"
    if verdict.generic and wire.fallback is not None:
        # The status names the kind; the content only said "some error".
        kind = wire.fallback
        evidence = wire.basis if verdict.kind is Kind.UNKNOWN else (
            evidence if evidence.startswith(wire.basis) else f"{wire.basis}; {evidence}")
    return Classification(
        kind=kind,
        is_error=True,
        evidence=evidence,
        code=verdict.code,
        retry_after=verdict.retry_after,
        tool_id=verdict.tool_id,
        excerpt=_clean_line(verdict.message, EXCERPT_CHARS) if verdict.message else "",
    )


@functools.lru_cache(maxsize=256)
def _success_result(evidence: str) -> Classification:
    """Results are most outputs and say one of a few things: one frozen instance for each."""
    return Classification(Kind.SUCCESS, False, evidence)


def output_text(content: object, limit: int = 8192) -> str:
    """Flatten any dialect's output content to the text a person would read, cut to ``limit`` characters.

    Text parts are joined by newlines, media become placeholders (``[image]``), envelopes (Gemini,
    MCP, AI SDK) give their content, and any other structure is its compact JSON.
    """
    if limit <= 0:
        return ""
    return clip(_flatten(content, limit + 1, 0), limit)


def refusal_payload(code: str, cause: str, fix: str | None = None) -> str:
    """A tool's own refusal as ``{"error": {"code", "cause", "fix"}}`` JSON, bounded before serialising.

    Fields are clipped before ``orjson.dumps``, never the serialised text, because a later cut through
    the middle of the JSON leaves a string the model (and :func:`classify`) cannot read.
    """
    error = {"code": clip(_valid_text(code), CODE_CHARS), "cause": clip(_valid_text(cause), CAUSE_CHARS)}
    if fix is not None:
        error["fix"] = clip(_valid_text(fix), FIX_CHARS)
    return orjson.dumps({"error": error}).decode()
