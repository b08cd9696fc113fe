"""Typing and writing ``--set`` values.

Covers: the value typed by Helm's rules, the same typer as ``nvsentinel manifests --set`` (true,
false and null in any case, int64 integers without a leading zero; decimals, leading zeros,
versions stay strings); the value keeps everything after the first ``=``; set_path creating maps
on the way and refusing scalars and lists.
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
        ("False", False),
        ("TRUE", True),
        ("null", None),
        ("Null", None),
        ("42", 42),
        ("-7", -7),
        ("0", 0),
        ("01", "01"),
        ("1.5", "1.5"),
        ("1e3", "1e3"),
        ("v1.2.3", "v1.2.3"),
        ("580.82.07", "580.82.07"),
        ("a=b", "a=b"),
        ("a,b", "a,b"),
        ("{a,b}", "{a,b}"),
    ],
    ids=repr,
)
def test_set_values_are_typed_by_helms_rules(text: str, expected: Any) -> None:
    value = overrides.parse(f"c:k={text}").value
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
