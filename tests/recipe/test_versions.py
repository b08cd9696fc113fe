"""Versions and constraint expressions: parsing, precision-limited comparison, pins.

Property tests: comparison is antisymmetric and reflexive; a suffix after a dash never changes the
result; ``holds`` agrees with ``compare`` for every ordering operator.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.recipe import constraints, versions

_version = st.lists(st.integers(0, 300), min_size=1, max_size=3).map(lambda p: ".".join(map(str, p)))


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("v1.33.5-eks-3025e55", (1, 33, 5)),
        ("6.8.0-1024-aws", (6, 8, 0)),
        ("24.04", (24, 4)),
        ("v25.10.1", (25, 10, 1)),
        ("1.2.3.4", (1, 2, 3)),
    ],
)
def test_versions_parse_like_kubernetes_tooling_writes_them(text: str, parts: tuple[int, ...]) -> None:
    assert versions.parse(text) == parts


@pytest.mark.parametrize("text", ["ubuntu", "", "v", "1..2", "latest"])
def test_non_versions_are_refused(text: str) -> None:
    with pytest.raises(versions.VersionError):
        versions.parse(text)


@given(a=_version, b=_version)
def test_comparison_is_antisymmetric(a: str, b: str) -> None:
    assert versions.compare(a, b) == -versions.compare(b, a)
    assert versions.compare(a, a) == 0


@given(a=_version, b=_version, suffix=st.from_regex(r"-[a-z0-9]{1,8}", fullmatch=True))
def test_build_suffixes_do_not_change_the_order(a: str, b: str, suffix: str) -> None:
    assert versions.compare(a + suffix, b) == versions.compare(a, b)


@given(a=_version, b=_version, op=st.sampled_from([">=", "<=", ">", "<"]))
def test_ordering_expressions_agree_with_compare(a: str, b: str, op: str) -> None:
    result = versions.compare(a, b)
    expected = {">=": result >= 0, "<=": result <= 0, ">": result > 0, "<": result < 0}[op]
    assert constraints.holds(f"{op} {b}", a) is expected


def test_precision_is_that_of_the_less_precise_side() -> None:
    assert constraints.holds(">= 6.8", "6.8.0-1024-aws")
    assert constraints.holds(">= 1.32.4", "v1.33.5-eks-3025e55")
    assert not constraints.holds(">= 1.32.4", "v1.31.2-eks-7f9249a")


@pytest.mark.parametrize(
    ("expression", "actual", "expected"),
    [
        ("ubuntu", "ubuntu", True),
        ("ubuntu", "rhel", False),
        ("== 24.04", "24.04", True),
        ("24.04", "22.04", False),
        ("!= rhel", "ubuntu", True),
    ],
)
def test_equality_compares_strings_or_versions(expression: str, actual: str, expected: bool) -> None:
    assert constraints.holds(expression, actual) is expected


def test_missing_measurements_and_bad_versions_fail_with_a_reason() -> None:
    assert constraints.evaluate(">= 1.30", None).error == "measurement not found in snapshot"
    outcome = constraints.evaluate(">= 1.30", "unknown")
    assert not outcome.passed and outcome.error


@pytest.mark.parametrize(
    ("version", "pinned"),
    [
        ("v25.10.1", True),
        ("0.9.0", True),
        ("82.8.0", True),
        ("1.2.3-rc.1", True),
        ("latest", False),
        ("^1.2.0", False),
        ("~1.2", False),
        (">=1.0", False),
        ("1.x", False),
        ("*", False),
        ("", False),
        ("stable", False),
        ("1.0 || 2.0", False),
    ],
)
def test_only_concrete_releases_count_as_pins(version: str, pinned: bool) -> None:
    assert versions.is_pinned(version) is pinned
