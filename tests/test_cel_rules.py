"""CustomResourceDefinition rules (``shared.cel.compile_rule``): the Kubernetes CEL library functions.

Expected values and refusals are cel-go's, as the Kubernetes docs list the library
(https://kubernetes.io/docs/reference/using-api/cel/, "CEL options, language features, and
libraries"; cel-go ``ext/strings.go`` for ``charAt``/``substring``/``indexOf`` bounds,
``k8s.io/apiserver/pkg/cel/library/lists.go`` and ``regex.go`` for the list and regex functions).
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from shared import cel


def evaluate(rule: str, value: Any = None, old: cel.OptionalValue | None = None) -> Any:
    variables: dict[str, Any] = {"self": value}
    if old is not None:
        variables["oldSelf"] = old
    return cel.compile_rule(rule).evaluate(variables)


@pytest.mark.parametrize(
    ("rule", "value", "expected"),
    [
        ("self.isSorted()", [1, 2, 2, 3], True),
        ("self.isSorted()", [3, 1], False),
        ("self.sum()", [1, 2, 3], 6),
        ("self.sum()", [], 0),
        ("self.min()", [4, 2, 9], 2),
        ("self.max()", [4, 2, 9], 9),
        ("self.indexOf(2)", [1, 2, 3, 2], 1),
        ("self.lastIndexOf(2)", [1, 2, 3, 2], 3),
        ("self.indexOf(7)", [1, 2], -1),
        ("self.indexOf('l')", "hello", 2),
        ("self.lastIndexOf('l')", "hello", 3),
        ("self.charAt(1)", "abc", "b"),
        ("self.charAt(3)", "abc", ""),  # at the length: the empty string, not an error
        ("self.substring(1, 3)", "hello", "el"),
        ("self.substring(2)", "hello", "llo"),
        ("self.reverse()", "gums", "smug"),
        ("self.find('[0-9]+')", "abc123def456", "123"),
        ("self.find('[0-9]+')", "abc", ""),
        ("self.findAll('[0-9]+')", "abc123def456", ["123", "456"]),
        ("self.findAll('[0-9]+', 1)", "abc123def456", ["123"]),
        ("self.lowerAscii() == 'ab'", "AB", True),
        ("self < 2.5", 2, True),  # int against double by value, as cel-go compares them
        ("self == 1.0", 1, True),
        ("self == 'a'", 1, False),  # heterogeneous equality: unequal, not an error
    ],
)
def test_library_functions_answer_as_cel_go(rule: str, value: Any, expected: Any) -> None:
    result = evaluate(rule, value)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("rule", "value", "message"),
    [
        ("self.charAt(4)", "abc", "index out of range: 4"),
        ("self.substring(3, 1)", "hello", "index out of range: 3"),
        ("self.indexOf('a', 9)", "abc", "index out of range: 9"),
        ("self[3]", [1], "index out of bounds"),
        ("self.missing", {"x": 1}, "no such key: missing"),
    ],
)
def test_refusals_are_evaluation_errors_with_cel_go_wording(rule: str, value: Any, message: str) -> None:
    with pytest.raises(cel.EvaluationError) as caught:
        evaluate(rule, value)
    assert str(caught.value) == message


def test_old_self_under_optional_old_self_reads_through_the_optional_accessors() -> None:
    none, some = cel.OptionalValue(), cel.OptionalValue(7, True)
    assert evaluate("oldSelf.hasValue()", 1, none) is False
    assert evaluate("oldSelf.hasValue()", 1, some) is True
    assert evaluate("oldSelf.orValue(5)", 1, none) == 5
    assert evaluate("oldSelf.value() + 1", 1, some) == 8
    with pytest.raises(cel.EvaluationError, match=r"optional\.none\(\) dereference"):
        evaluate("oldSelf.value()", 1, none)


def test_health_rules_compile_after_a_crd_rule_in_a_fresh_process() -> None:
    """celpy builds its one parser with the first Environment's tree class; the order must not matter."""
    code = (
        "from shared import cel\n"
        "cel.compile_rule('self.x > 1')\n"
        "program = cel.compile('event.a == 1', name='after')\n"
        "assert program.evaluate({'event': cel.to_cel({'a': 1})}) is True\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
