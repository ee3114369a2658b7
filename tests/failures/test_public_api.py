"""The library reads as documented: ``from threadfix.failures import classify`` is the function, and
importing the package still builds none of the classifier's tables."""

from __future__ import annotations

import subprocess
import sys

README_EXAMPLE = """
from threadfix.failures import classify

verdict = classify("Error: 429 Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM)")
print(verdict.kind, verdict.is_error, verdict.evidence)
"""


def test_the_readme_example_runs_and_reads_the_rate_limit() -> None:
    result = subprocess.run([sys.executable, "-c", README_EXAMPLE], capture_output=True, text=True, check=True)
    kind, is_error, _evidence = result.stdout.split(" ", 2)
    assert (kind, is_error) == ("rate_limited", "True")


def test_importing_the_package_leaves_the_classifier_unloaded() -> None:
    probe = (
        "import sys, threadfix.failures as f\n"
        "print('threadfix.failures.classifier' in sys.modules)\n"
        "from threadfix.failures import classify, Classification, output_text, refusal_payload\n"
        "print(callable(classify), 'threadfix.failures.classifier' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True", "True"]


def test_the_top_level_name_is_the_same_function() -> None:
    import threadfix
    from threadfix.failures import classify

    assert threadfix.classify is classify


def test_an_unknown_name_is_an_attribute_error() -> None:
    import threadfix.failures

    try:
        threadfix.failures.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("expected AttributeError")
