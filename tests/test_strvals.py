"""Helm's ``--set`` syntax (shared/strvals.py): what each expression reads as, and what it refuses.

Covers: nesting, lists (``{a,b}``, ``{}``, indexes with gaps filled by null, nested indexes, maps
in lists), escapes, Helm's typing (booleans and null in any case, int64 without a leading zero,
everything else a string; ``--set-string`` keeps strings), reading into existing values (one list
item changed, a path through another type refused), helm's exact messages for bad syntax, the
index and nesting limits, and the flag and expression in every error. Properties: a value tree
written as ``--set`` expressions reads back as itself; ``--set-string`` yields only strings (and
the nulls that fill list gaps); the typing rule holds for any text; any input parses or fails with
one InvalidInput. Every expected value here was taken from helm 3.19 and 4.1 (``helm template``
with ``{{ toJson .Values }}``); tests/ship/test_helm_parity.py checks them against the binaries.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shared import errors, strvals


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("a.b=1,c[0]=x,d={p,q}", {"a": {"b": 1}, "c": ["x"], "d": ["p", "q"]}),
        ("a=1.5,b=010,c=0,d=-0,e=-01,f=+5", {"a": "1.5", "b": "010", "c": 0, "d": 0, "e": -1, "f": 5}),
        ("g=True,h=NULL,i=FALSE,j=null", {"g": True, "h": None, "i": False, "j": None}),
        ("x=9223372036854775808,y=9223372036854775807", {"x": "9223372036854775808", "y": 9223372036854775807}),
        ("z=1e3,w=0x10,v=", {"z": "1e3", "w": "0x10", "v": ""}),
        ("x={}", {"x": [""]}),
        ("x={,}", {"x": ["", ""]}),
        ("x={a,null,1}", {"x": ["a", None, 1]}),
        ("a=x=y:z", {"a": "x=y:z"}),
        ("a=x\\", {"a": "x"}),
        (r"a\.b=1,c\,d=2,e\=f=3", {"a.b": 1, "c,d": 2, "e=f": 3}),
        (r"a={x\,y,z}", {"a": ["x,y", "z"]}),
        (r"a=x\,y", {"a": "x,y"}),
        ("l[2]=x", {"l": [None, None, "x"]}),
        ("l[0][1]=x", {"l": [[None, "x"]]}),
        ("l[1].a=x,l[0]=y", {"l": ["y", {"a": "x"}]}),
        ("l[0]=x,l[0].a=2", {"l": [{"a": 2}]}),
        ("l[0]={a},l[0][1]=2", {"l": [["a", 2]]}),
        ("l[0][0]=1,l[0]=null,l[0][1]=2", {"l": [[None, 2]]}),
        (" a = 1 ", {" a ": " 1 "}),
        ("a={ x , y }", {"a": [" x ", " y "]}),
        ("a={x},b=1", {"a": ["x"], "b": 1}),
        ("=1", {}),
        ("", {}),
        ("a[0]", {"a": []}),
        # helm stores no new map when the expression ends inside it
        ("l[0].a=", {"l": []}),
        ("l[0].a=,b=1", {"l": [{"a": ""}], "b": 1}),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_expressions_read_as_helm_reads_them(expression: str, expected: dict[str, Any]) -> None:
    assert _typed(strvals.parse(expression)) == _typed(expected)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("a.c=2,d=true,e=null,f={1,2}", {"a": {"c": "2"}, "d": "true", "e": "null", "f": ["1", "2"]}),
        ("l[1]=1", {"l": [None, "1"]}),
    ],
)
def test_set_string_keeps_every_value_a_string(expression: str, expected: dict[str, Any]) -> None:
    assert _typed(strvals.parse(expression, as_string=True)) == _typed(expected)


_MAP, _LIST = "map[string]interface {}", "[]interface {}"
_ATOI_RANGE = 'error parsing index: strconv.Atoi: parsing "99999999999999999999": value out of range'


def _conversion(have: str, want: str) -> str:
    return f"unable to parse key: interface conversion: interface {{}} is {have}, not {want}"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("a", 'key "a" has no value'),
        ("a,", 'key "a" has no value (cannot end with ,)'),
        (",", 'key "" has no value (cannot end with ,)'),
        ("a=1,,b=2", 'key "" has no value (cannot end with ,)'),
        ("a.b", 'key "b" has no value'),
        ("a[x]=1", 'error parsing index: strconv.Atoi: parsing "x": invalid syntax'),
        ("a[]=1", 'error parsing index: strconv.Atoi: parsing "": invalid syntax'),
        ("a[99999999999999999999]=1", _ATOI_RANGE),
        ("a[", "error parsing index: EOF"),
        ("a[0][", "error parsing index: EOF"),
        ("a..b=1", 'key map "a" has no value'),
        ("a[-1]=1", "negative -1 index not allowed"),
        ("a[65537]=1", "index of 65537 is greater than maximum supported index of 65536"),
        ("a[0]x=1", "unexpected data at end of array index: ['x']"),
        ("a[0]xy=1", "unexpected data at end of array index: ['x' 'y']"),
        ("a={x", "list must terminate with '}'"),
        ("x={a,{b}}", 'key "}" has no value'),
        ("a={x}y", 'key "y" has no value'),
        ("a\tb", 'key "a\\tb" has no value'),
        ("a=1,a.b=2", _conversion("int64", _MAP)),
        (
            "a.b=1,a[0]=2",
            _conversion(_MAP, _LIST),
        ),
        (
            "a[0]=1,a.b=2",
            _conversion(_LIST, _MAP),
        ),
        ("a=null,a.b=1", _conversion("nil", _MAP)),
        ("l[0]=x,l[0][1]=2", _conversion("string", _LIST)),
        (".".join("a" * 32) + "=1", "value name nested level is greater than maximum supported nested level of 30"),
    ],
    ids=lambda v: v[:40] if isinstance(v, str) else None,
)
def test_bad_expressions_fail_with_helms_message_naming_the_flag(expression: str, message: str) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        strvals.parse(expression)
    assert (caught.value.message, caught.value.where) == (message, f"--set {expression!r}")
    assert caught.value.exit_code == 2 and "\n" not in caught.value.line()


def test_set_string_errors_name_their_flag() -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        strvals.parse("a=1,a.b=2", as_string=True, flag="--set-string")
    assert caught.value.line() == (
        "error: --set-string 'a=1,a.b=2': unable to parse key: "
        "interface conversion: interface {} is string, not map[string]interface {}"
    )


def test_thirty_nested_levels_are_allowed() -> None:
    assert strvals.parse(".".join("a" * 31) + "=1") == _nest(["a"] * 31, 1)


def test_reading_into_values_changes_one_list_item_and_refuses_another_type() -> None:
    values: dict[str, Any] = {"l": [1.0, {"k": "v"}], "s": "text"}
    strvals.parse_into("l[1].j=2,l[3]=x", values)
    assert values == {"l": [1.0, {"k": "v", "j": 2}, None, "x"], "s": "text"}
    # In a list helm replaces what is not a map; outside one it refuses.
    strvals.parse_into("l[0].k=1", values)
    assert values["l"][0] == {"k": 1}
    with pytest.raises(errors.InvalidInput, match=r"interface \{\} is float64, not \[\]interface"):
        strvals.parse_into("n[0]=1", {"n": 1.0})
    with pytest.raises(errors.InvalidInput, match=r"interface \{\} is string, not map"):
        strvals.parse_into("s.k=1", values)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true", True),
        ("tRuE", True),
        ("fal\u017fe", False),
        ("Null", None),
        ("0", 0),
        ("-0", 0),
        ("+0", 0),
        ("-01", -1),
        ("00", "00"),
        ("01", "01"),
        ("1_000", "1_000"),
        ("\uff11", "\uff11"),
        (" 1", " 1"),
        ("-", "-"),
        ("-9223372036854775808", -9223372036854775808),
        ("-9223372036854775809", "-9223372036854775809"),
    ],
    ids=repr,
)
def test_the_typing_rule_edges(text: str, expected: Any) -> None:
    assert _typed(strvals.typed_value(text)) == _typed(expected)


# ------------------------------------------------------------------ properties
_SPECIAL = re.compile(r"([\\,.=\[\]{}])")


def _key_text(key: str) -> str:
    return _SPECIAL.sub(r"\\\1", key)


def _value_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _SPECIAL.sub(r"\\\1", value)


def _assignments(value: Any, path: str) -> list[str]:
    """Expressions that set ``value`` at ``path``, one per leaf."""
    if isinstance(value, dict):
        return [a for key, item in value.items() for a in _assignments(item, f"{path}.{_key_text(key)}")]
    if isinstance(value, list):
        return [a for index, item in enumerate(value) for a in _assignments(item, f"{path}[{index}]")]
    return [f"{path}={_value_text(value)}"]


def _expression(tree: dict[str, Any]) -> str:
    return ",".join(a for key, item in tree.items() for a in _assignments(item, _key_text(key)))


KEYS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=6)
# Strings that --set keeps as strings (the others would be typed).
STRINGS = st.text(max_size=8).filter(lambda s: strvals.typed_value(s) == s)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1), STRINGS)
TREES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3), st.dictionaries(KEYS, inner, min_size=1, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, TREES, min_size=1, max_size=4))
def test_a_value_tree_written_as_set_expressions_reads_back_as_itself(tree: dict[str, Any]) -> None:
    expression = _expression(tree)
    # helm drops a map in a list when the expression ends with its empty value (``l[0].a=``).
    assume(not (expression.endswith("=") and "[" in expression.rpartition(",")[2]))
    assert _typed(strvals.parse(expression)) == _typed(tree)


ALPHABET = st.sampled_from([*"ab01=,.[]{}\\ -", "null", "true", "1.5", "0x1"])


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=16).map("".join))
def test_set_string_yields_strings_and_nulls_only_in_list_gaps(expression: str) -> None:
    try:
        values = strvals.parse(expression, as_string=True)
    except errors.InvalidInput as exc:
        assert exc.where == f"--set {expression!r}" and "\n" not in exc.message
        return

    def check(value: Any, in_list: bool) -> None:
        if isinstance(value, dict):
            for item in value.values():
                check(item, False)
        elif isinstance(value, list):
            for item in value:
                check(item, True)
        else:
            assert isinstance(value, str) or (value is None and in_list), (expression, values)

    check(values, False)


@given(st.text(max_size=12))
def test_typing_any_text(text: str) -> None:
    value = strvals.typed_value(text)
    if text.casefold() in ("true", "false"):
        assert value is (text.casefold() == "true")
    elif text.casefold() == "null":
        assert value is None
    elif isinstance(value, int):
        assert re.fullmatch(r"0|[+-]?[1-9][0-9]*|-0+|\+0+|[+-]0[0-9]*", text) and int(text) == value
        assert -(2**63) <= value < 2**63
    else:
        assert value == text


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=20).map("".join))
def test_any_input_parses_or_fails_with_one_invalid_input(expression: str) -> None:
    try:
        strvals.parse(expression)
    except errors.InvalidInput as exc:
        assert exc.where == f"--set {expression!r}"


# ------------------------------------------------------------------ helpers
def _typed(value: Any) -> Any:
    """The value with every scalar tagged by its type, so True and 1 compare unequal."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, value)


def _nest(path: list[str], leaf: Any) -> Any:
    return {path[0]: _nest(path[1:], leaf)} if path else leaf
