"""Label selectors as the API server reads them: round trips, the grammar's refusals, matching.

Source of the grammar and of every message below: apimachinery ``pkg/labels/selector.go``
(``Lexer``, ``Parser``, ``NewRequirement``, ``Requirement.Matches`` and ``String``) and
``pkg/util/validation`` (``IsQualifiedName``, ``IsValidLabelValue``), Kubernetes 1.34.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.kube import labelselector as ls
from shared.kube.labelselector import Requirement

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_NAME_CHARS = _ALNUM + "-_."
_DNS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _name(max_size: int = 63) -> st.SearchStrategy[str]:
    """``([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]``, at most ``max_size`` characters."""
    ends = st.sampled_from(_ALNUM)
    inner = st.text(_NAME_CHARS, max_size=max_size - 2)
    return st.one_of(ends, st.builds(lambda a, m, b: a + m + b, ends, inner, ends))


_LABEL = st.builds(
    lambda a, m, b: a + m + b, st.sampled_from(_DNS), st.text(_DNS + "-", max_size=8), st.sampled_from(_DNS)
)
_PREFIX = st.lists(_LABEL, min_size=1, max_size=3).map(".".join)
KEYS = st.one_of(_name(), st.builds(lambda p, n: f"{p}/{n}", _PREFIX, _name()))
VALUES = st.one_of(st.just(""), _name())
INTEGERS = st.integers(min_value=0, max_value=2**63 - 1).map(str)


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    key = draw(KEYS)
    op = draw(st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt"]))
    if op in ("exists", "!"):
        values: list[str] = []
    elif op in ("gt", "lt"):
        values = [draw(INTEGERS)]
    elif op in ("in", "notin"):
        values = draw(st.lists(VALUES, min_size=1, max_size=4))
    else:
        values = [draw(VALUES)]
    return Requirement(key, op, tuple(sorted(set(values))))


@given(st.lists(requirements(), max_size=6))
def test_parse_reads_back_what_format_wrote_sorted_by_key(reqs: list[Requirement]) -> None:
    assert ls.parse(ls.format(reqs)) == tuple(sorted(reqs, key=lambda r: r.key))


_SYMBOL = {"=": "=", "==": "==", "!=": "!=", "gt": ">", "lt": "<"}


def _spaced(r: Requirement, gap: str) -> str:
    """``r`` with whitespace wherever the lexer skips it."""
    if r.op == "exists":
        return r.key
    if r.op == "!":
        return f"!{gap}{r.key}"
    if r.op in ("in", "notin"):
        return f"{r.key} {gap}{r.op}{gap}({gap}{f'{gap},{gap}'.join(r.values)}{gap})"
    return f"{r.key}{gap}{_SYMBOL[r.op]}{gap}{r.values[0]}"


@given(st.lists(requirements(), min_size=1, max_size=4), st.text(" \t\r\n", max_size=3))
def test_whitespace_between_tokens_changes_nothing(reqs: list[Requirement], gap: str) -> None:
    text = f"{gap},{gap}".join(_spaced(r, gap) for r in reqs)
    assert ls.parse(f"{gap}{text}{gap}") == ls.parse(ls.format(reqs))


@given(st.text(alphabet=_ALNUM[:6] + "=!(),<> \t-_./", max_size=30))
def test_any_text_is_read_or_refused_with_the_servers_reason_and_what_is_read_is_a_fixed_point(text: str) -> None:
    try:
        parsed = ls.parse(text)
    except ls.SelectorError as exc:
        assert exc.selector == text and exc.reason and exc.reason in str(exc)
        return
    assert ls.parse(ls.format(parsed)) == parsed


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("x in y", "unable to parse requirement: found 'y' expected: '('"),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a in", "unable to parse requirement: found '' expected: '('"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a=b)", "found ')', expected: ',' or 'end of string'"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        ("a,,b", "found ',', expected: identifier after ','"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
        ("/a", 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'),
        (
            "a>x",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, "
            "the value must be an integer",
        ),
    ],
)
def test_the_grammar_refuses_with_the_servers_words(text: str, reason: str) -> None:
    with pytest.raises(ls.SelectorError) as caught:
        ls.parse(text)
    assert caught.value.reason == reason


def test_bad_keys_and_values_name_the_rule_they_break() -> None:
    with pytest.raises(ls.SelectorError) as key:
        ls.parse("a_")
    assert key.value.reason.startswith(
        'unable to parse requirement: <nil>: Invalid value: "a_": name part must consist'
    )
    with pytest.raises(ls.SelectorError) as value:
        ls.parse("a=-b")
    assert value.value.reason.startswith(
        'unable to parse requirement: values[0][a]: Invalid value: "-b": a valid label'
    )
    with pytest.raises(ls.SelectorError) as long:
        ls.parse("k=" + "v" * 64)
    assert "must be no more than 63 characters" in long.value.reason
    with pytest.raises(ls.SelectorError) as negative:  # an integer, but not a label value
        ls.parse("a>-1")
    assert 'values[0][a]: Invalid value: "-1"' in negative.value.reason


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"),  # selector.go's own example
        ("in in (in,notin)", "in in (in,notin)"),  # keywords are identifiers as keys and values
        ("b=,a", "a,b="),  # an empty value; requirements sorted by key
        ("a in (b,)", "a in (,b)"),
        ("", ""),
        ("  \t", ""),
        ("a\x00=b", "a"),  # the Go lexer reads byte 0 as the end of the input
    ],
)
def test_what_the_server_accepts_reads_the_same(text: str, read: str) -> None:
    assert ls.format(ls.parse(text)) == read


LABELS = {"app": "web", "tier": "front", "gpus": "8", "odd": "x8"}


@pytest.mark.parametrize(
    ("text", "matched"),
    [
        ("", True),
        ("app=web", True),
        ("app==web,tier=back", False),
        ("app!=db", True),
        ("missing!=x", True),  # a missing label satisfies != and notin
        ("missing notin (x)", True),
        ("missing in (x)", False),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("tier in (front,back)", True),
        ("tier notin (front)", False),
        ("gpus>4", True),
        ("gpus<4", False),
        ("odd>4", False),  # not an integer: no match, as the server logs and skips it
        ("missing>4", False),
    ],
)
def test_matching_follows_requirement_matches(text: str, matched: bool) -> None:
    assert ls.matches(ls.parse(text), LABELS) is matched
