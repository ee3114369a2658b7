"""Every lint rule, by code. One module per rule; its class docstring is its documentation.

Codes are ``TF`` + 3 digits and are never reused: a removed rule's code stays retired. The hundreds
group rules by what they read:

* ``TF0xx`` the thread's structure: calls, outputs and where they stand (what the provider refuses);
* ``TF1xx`` a call's own arguments;
* ``TF2xx`` what the outputs say (errors, size, leaks);
* ``TF9xx`` notes about the thread as a whole.

To add a rule: write ``threadfix/rules/<name>.py`` with one :class:`Rule` subclass bound to ``RULE``,
list the module below, and add ``tests/lint/cases/<CODE>_<name>.json`` with cases that fire and
cases that must not.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from functools import cache

from threadfix.errors import ConfigError
from threadfix.rules.base import SECTIONS, Fix, Rule

_MODULES = (
    "dangling_call",
    "orphan_output",
    "misplaced_output",
    "duplicate_output",
    "duplicate_call_id",
    "call_without_id",
    "stuck_thread",
    "provider_refusal",
    "malformed_arguments",
    "non_object_arguments",
    "truncated_call",
    "unknown_error_output",
    "error_output_cut_mid_json",
    "oversized_output",
    "internals_leaked",
    "secret_in_output",
    "retry_storm",
    "empty_output",
    "unrecognised_format",
    "repaired_by_threadfix",
)
#: a selector naming a rule outranks any code prefix
_NAME_SPECIFICITY = 100


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, in code order."""
    rules = [importlib.import_module(f"threadfix.rules.{module}").RULE for module in _MODULES]
    return tuple(sorted(rules, key=lambda rule: rule.code))


def get(code_or_name: str) -> Rule:
    """One rule by its code (``TF001``, any case) or name (``dangling-call``)."""
    wanted = code_or_name.strip()
    for rule in all_rules():
        if rule.code == wanted.upper() or rule.name == wanted.lower():
            return rule
    raise ConfigError(f"unknown rule {code_or_name!r}; `threadfix rules` lists them")


def _specificity(selector: str, rule: Rule) -> int:
    """How closely ``selector`` names ``rule``: the length of a matching code prefix, 0 when it does not."""
    if selector.lower() == rule.name:
        return _NAME_SPECIFICITY
    return len(selector) if rule.code.startswith(selector.upper()) else 0


def check_selectors(selectors: Iterable[str], origin: str) -> tuple[str, ...]:
    """The selectors, each naming at least one rule; a ConfigError names the first that does not."""
    selectors = tuple(s.strip() for s in selectors)
    for selector in selectors:
        if not selector or not any(_specificity(selector, rule) for rule in all_rules()):
            raise ConfigError(f"{origin}: {selector!r} matches no rule code or name; `threadfix rules` lists them")
    return selectors


def select_rules(select: Iterable[str], ignore: Iterable[str] = ()) -> list[Rule]:
    """The rules ``select`` names and ``ignore`` does not; the more specific selector wins, a tie ignores."""
    select = check_selectors(select, "--select")
    ignore = check_selectors(ignore, "--ignore")
    chosen = []
    for rule in all_rules():
        wanted = max((_specificity(s, rule) for s in select), default=0)
        unwanted = max((_specificity(s, rule) for s in ignore), default=0)
        if wanted and wanted > unwanted:
            chosen.append(rule)
    return chosen


__all__ = ["Fix", "Rule", "SECTIONS", "all_rules", "check_selectors", "get", "select_rules"]
