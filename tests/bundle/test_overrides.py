"""Typing and writing ``--set`` values.

Covers: true/false, integers, decimals and everything else (leading zeros, versions, empty-ish
text) typed as documented; set_path creating maps on the way and refusing scalars and lists.
"""

from __future__ import annotations

from typing import Any

import pytest

from shared import errors
from shared.bundle import overrides


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true", True),
        ("false", False),
        ("True", "True"),
        ("42", 42),
        ("-7", -7),
        ("01", "01"),
        ("1.5", 1.5),
        ("1e3", "1e3"),
        ("2.0e3", 2000.0),
        ("v1.2.3", "v1.2.3"),
        ("580.82.07", "580.82.07"),
        ("null", "null"),
        ("a=b", "a=b"),
    ],
    ids=repr,
)
def test_set_values_are_typed_as_documented(text: str, expected: Any) -> None:
    value = overrides.typed_value(text)
    assert value == expected and type(value) is type(expected)


def test_the_value_keeps_everything_after_the_first_equals_sign() -> None:
    parsed = overrides.parse("c:env.OPTS=a=b:c")
    assert (parsed.key, parsed.path, parsed.value) == ("c", ("env", "OPTS"), "a=b:c")


def test_set_path_creates_maps_and_refuses_to_go_through_a_scalar() -> None:
    values: dict[str, Any] = {"a": {"b": 1}, "n": None}
    overrides.set_path(values, ("a", "c", "d"), 2, where="w")
    overrides.set_path(values, ("n", "x"), 3, where="w")
    assert values == {"a": {"b": 1, "c": {"d": 2}}, "n": {"x": 3}}
    with pytest.raises(errors.InvalidInput, match=r"a\.b is a scalar"):
        overrides.set_path(values, ("a", "b", "c"), 1, where="w")
