"""Label and field selectors: the parser and the matcher.

Covers: each operator; whitespace and set syntax; malformed selectors and invalid keys raise;
property: a selector rendered from random requirements parses back to the same requirements and
matches exactly the label sets the requirements describe; field selectors refuse unknown fields
and honour escapes and !=.
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.sim.apiserver import resources, selectors

PODS = next(r for r in resources.BUILTINS if r.plural == "pods")
NODES = next(r for r in resources.BUILTINS if r.plural == "nodes")


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("a=1", {"a": "1"}, True),
        ("a=1", {"a": "2"}, False),
        ("a==1", {"a": "1"}, True),
        ("a!=1", {}, True),
        ("a!=1", {"a": "1"}, False),
        ("a in (1, 2)", {"a": "2"}, True),
        ("a in (1,2)", {}, False),
        ("a notin (1,2)", {}, True),
        ("a notin (1,2)", {"a": "1"}, False),
        ("a", {"a": ""}, True),
        ("!a", {"a": ""}, False),
        ("!a", {"b": "1"}, True),
        ("a=1, b in (x)", {"a": "1", "b": "x"}, True),
        ("example.com/role=gpu", {"example.com/role": "gpu"}, True),
        ("n>3", {"n": "4"}, True),
        ("n<3", {"n": "4"}, False),
        ("", {}, True),
    ],
    ids=repr,
)
def test_each_operator_matches_as_kubernetes_does(text: str, labels: dict[str, str], expected: bool) -> None:
    assert selectors.match_labels(selectors.parse_labels(text), labels) is expected


@pytest.mark.parametrize("text", ["a in (1", "a=1,", "=1", "a b", "a in 1", "Bad Key=1", "a=b=c", "n>x", "a)"])
def test_malformed_selectors_are_refused(text: str) -> None:
    with pytest.raises(selectors.SelectorError):
        selectors.parse_labels(text)


_name = st.from_regex(r"[a-z0-9]([a-z0-9._-]{0,10}[a-z0-9])?", fullmatch=True)
_key = st.one_of(_name, st.builds(lambda p, n: f"{p}.io/{n}", st.from_regex(r"[a-z]{1,8}", fullmatch=True), _name))
_requirement = st.one_of(
    st.builds(lambda k, v: (k, "=", frozenset({v})), _key, _name),
    st.builds(lambda k, v: (k, "!=", frozenset({v})), _key, _name),
    st.builds(lambda k, vs: (k, "in", frozenset(vs)), _key, st.sets(_name, min_size=1, max_size=3)),
    st.builds(lambda k, vs: (k, "notin", frozenset(vs)), _key, st.sets(_name, min_size=1, max_size=3)),
    st.builds(lambda k: (k, "exists", frozenset()), _key),
    st.builds(lambda k: (k, "!exists", frozenset()), _key),
)


def _render(req: tuple[str, str, frozenset[str]]) -> str:
    key, op, values = req
    if op in ("=", "!="):
        return f"{key}{op}{next(iter(values))}"
    if op in ("in", "notin"):
        return f"{key} {op} ({', '.join(sorted(values))})"
    return key if op == "exists" else f"!{key}"


def _expected(req: tuple[str, str, frozenset[str]], labels: dict[str, str]) -> bool:
    key, op, values = req
    have = labels.get(key)
    return {
        "=": have in values,
        "in": have in values,
        "!=": have not in values,
        "notin": have not in values,
        "exists": have is not None,
        "!exists": have is None,
    }[op]


@given(st.lists(_requirement, min_size=1, max_size=4), st.dictionaries(_key, _name, max_size=5))
def test_rendered_selectors_parse_back_and_match_their_meaning(
    reqs: list[tuple[str, str, frozenset[str]]], labels: dict[str, str]
) -> None:
    parsed = selectors.parse_labels(",".join(_render(r) for r in reqs))
    assert [(p.key, p.op, p.values) for p in parsed] == reqs
    assert selectors.match_labels(parsed, labels) is all(_expected(r, labels) for r in reqs)


@given(st.text(max_size=30))
def test_the_label_parser_never_fails_other_than_with_a_selector_error(text: str) -> None:
    with contextlib.suppress(selectors.SelectorError):
        selectors.parse_labels(text)


def test_field_selectors_match_equality_and_inequality() -> None:
    terms = selectors.parse_fields("spec.nodeName=n1,status.phase!=Failed", PODS)
    assert selectors.match_fields(terms, {"spec.nodeName": "n1", "status.phase": "Running"})
    assert not selectors.match_fields(terms, {"spec.nodeName": "n1", "status.phase": "Failed"})


def test_field_selectors_refuse_fields_the_kind_does_not_index() -> None:
    with pytest.raises(selectors.SelectorError, match=r"field label not supported: spec\.nodeName"):
        selectors.parse_fields("spec.nodeName=x", NODES)


def test_field_selector_values_may_escape_commas_and_equals() -> None:
    terms = selectors.parse_fields(r"metadata.name=a\,b\=c", PODS)
    assert terms[0].value == "a,b=c"


def test_field_values_format_booleans_like_the_server() -> None:
    assert selectors.field_values(NODES, {"metadata": {"name": "n"}, "spec": {}})["spec.unschedulable"] == "false"
    values = selectors.field_values(PODS, {"metadata": {"name": "p", "namespace": "d"}, "spec": {"nodeName": "n"}})
    assert (values["metadata.namespace"], values["spec.nodeName"], values["status.phase"]) == ("d", "n", "")
