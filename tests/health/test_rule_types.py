"""The type checker's tables match what the rule engine really hands a rule, so they cannot drift.

Covers: every HealthEvent field's declared CEL type against the value ``cel_value`` builds for a
sample with every field set (enums as ints, errorCode a list of strings, the timestamp a
{seconds, nanos} map); the Node table against what the engine's node cache keeps and against the
kubernetes client's models (NodeSpec, Taint, NodeCondition); every declared function bound at run
time, and every function bound at run time declared. Property tests: expressions built from the
table's well-typed fields are accepted and evaluate without error on the sample event; a field
compared with a literal of another kind is refused and never matches; the checker never crashes on
an expression that compiles.
"""

from __future__ import annotations

import itertools
from typing import Any

import celpy.celtypes as ct
import celpy.evaluation
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes import client as k8s

from shared import cel
from shared.health import ruleset, ruletypes, samples, typecheck
from shared.health import settings as hsettings

KINDS = {
    ct.StringType: "string",
    ct.IntType: "int",
    ct.BoolType: "bool",
    ct.ListType: "list",
    ct.MapType: "map",
    ct.DoubleType: "double",
}


def _kind(value: Any) -> str:
    return next(k for t, k in KINDS.items() if isinstance(value, t))


def _holds(declared: ruletypes.CelType, value: Any, path: str) -> None:
    """``value`` (a CEL value the engine built) is of ``declared``, all the way down."""
    if declared.kind == "dyn":
        return
    assert _kind(value) == declared.kind, path
    if isinstance(declared, ruletypes.ObjectType):
        assert set(value) == set(declared.fields), path
        for key, inner in declared.fields.items():
            _holds(inner, value[key], f"{path}.{key}")
    elif isinstance(declared, ruletypes.ListType):
        assert value, f"{path}: the sample must fill every list"
        for item in value:
            _holds(declared.element, item, f"{path}[]")
    elif isinstance(declared, ruletypes.MapType):
        for key, item in value.items():
            _holds(declared.key, key, f"{path} key")
            _holds(declared.value, item, f"{path}[{key}]")


def test_the_health_event_table_is_what_cel_value_gives() -> None:
    value = samples.EVENT.cel_value()
    assert all(v is not None for v in value.values()), "the sample must set every field"
    _holds(ruletypes.HEALTH_EVENT, value, "event")
    assert isinstance(ruletypes.HEALTH_EVENT.fields["recommendedAction"], ruletypes.EnumType)
    assert ruletypes.HEALTH_EVENT.fields["errorCode"] == ruletypes.list_of(ruletypes.STRING)


def test_the_node_table_is_what_the_node_cache_keeps() -> None:
    _holds(ruletypes.NODE, ruleset.NodeCache().entry(samples.NODE).value, "node")


def _json_names(model: Any) -> set[str]:
    return set(model.attribute_map.values())


def test_the_node_table_follows_the_kubernetes_models() -> None:
    fields = ruletypes.NODE.fields
    spec = fields["spec"]
    status = fields["status"]
    assert isinstance(spec, ruletypes.ObjectType) and isinstance(status, ruletypes.ObjectType)
    assert set(spec.fields) == _json_names(k8s.V1NodeSpec)
    taint = spec.fields["taints"]
    condition = status.fields["conditions"]
    assert isinstance(taint, ruletypes.ListType) and isinstance(condition, ruletypes.ListType)
    assert set(taint.element.fields) == _json_names(k8s.V1Taint)  # type: ignore[attr-defined]
    assert set(condition.element.fields) == _json_names(k8s.V1NodeCondition)  # type: ignore[attr-defined]
    assert set(status.fields) <= _json_names(k8s.V1NodeStatus)


_SAMPLE_ARGUMENT = {
    "string": "'a'",
    "int": "1",
    "uint": "1u",
    "double": "1.0",
    "bool": "true",
    "bytes": "b'a'",
    "list": "['a']",
    "map": "{'a': 'b'}",
    "timestamp": "timestamp('2026-01-01T00:00:00Z')",
    "duration": "duration('1s')",
    "any": "1",
}


@pytest.mark.parametrize("name", sorted(ruletypes.FUNCTIONS))
def test_every_declared_function_is_bound_at_run_time(name: str) -> None:
    for overload in ruletypes.FUNCTIONS[name]:
        args = ", ".join(_SAMPLE_ARGUMENT[p.split("|")[0]] for p in overload.params)
        program = cel.compile(f"{name}({args})", name="f")
        try:
            program.evaluate({})
        except cel.EvaluationError as exc:
            assert "unbound function" not in str(exc), name


def test_every_function_bound_at_run_time_is_declared() -> None:
    bound = {n for n in celpy.evaluation.base_functions if n[0].isalpha()} | set(cel.STRING_EXTENSIONS)
    bound -= {"list", "map", "null_type"}  # type names celpy keeps beside its functions
    assert bound - {"dyn"} <= set(ruletypes.FUNCTIONS)
    assert set(ruletypes.FUNCTIONS) - {"dyn"} <= bound


def test_a_kubernetes_library_function_is_not_bound_to_health_rules() -> None:
    program = cel.compile("['a'].isSorted()", name="f")
    with pytest.raises(cel.EvaluationError, match="unbound function"):
        program.evaluate({})
    assert typecheck.check("HealthEvent", "event.errorCode.isSorted()")


# --- property tests -----------------------------------------------------------------------------

# celpy raises the recursion limit when it builds its parsers; done here, before hypothesis watches it
cel.compile("true", name="warm-up")
cel.parse_rule("true")


def _scalar_paths(of: ruletypes.CelType, path: str) -> list[tuple[str, ruletypes.CelType]]:
    """Every field path of a scalar type (through objects and list items) in the table."""
    if isinstance(of, ruletypes.ObjectType):
        return [p for key, inner in of.fields.items() for p in _scalar_paths(inner, f"{path}.{key}")]
    if isinstance(of, ruletypes.ListType):
        return [(f"size({path})", ruletypes.INT), *_scalar_paths(of.element, f"{path}[0]")]
    if isinstance(of, ruletypes.MapType):
        return [(f"size({path})", ruletypes.INT)]
    return [(path, of)]


EVENT_PATHS = _scalar_paths(ruletypes.HEALTH_EVENT, "event")
LITERALS: dict[str, st.SearchStrategy[str]] = {
    "int": st.integers(-1000, 1000).map(str),
    "string": st.text("abcXYZ_-/. 0123", max_size=8).map(lambda s: "'" + s + "'"),
    "bool": st.sampled_from(["true", "false"]),
}
COMPARISONS = {"int": ["==", "!=", "<", "<=", ">", ">="], "string": ["==", "!=", "<", ">="], "bool": ["==", "!="]}


@st.composite
def _comparison(draw: st.DrawFn) -> str:
    path, kind = draw(st.sampled_from(EVENT_PATHS))
    op = draw(st.sampled_from(COMPARISONS[kind.kind]))
    if isinstance(kind, ruletypes.EnumType) and op in ("==", "!="):  # an enum is compared with its members
        return f"{path} {op} {draw(st.sampled_from(sorted(kind.members.values())))}"
    return f"{path} {op} {draw(LITERALS[kind.kind])}"


@st.composite
def _rule(draw: st.DrawFn) -> str:
    parts = draw(st.lists(_comparison(), min_size=1, max_size=4))
    joins = draw(st.lists(st.sampled_from([" && ", " || "]), min_size=len(parts) - 1, max_size=len(parts) - 1))
    text = parts[0]
    for join, part in zip(joins, parts[1:], strict=True):
        text = f"{text}{join}{'!' if len(part) % 2 else ''}({part})"
    return text


def _on_sample(expression: str) -> ruleset.Decision:
    spec = hsettings.RuleSet(
        name="p", match=hsettings.Match(all=[hsettings.Rule(kind="HealthEvent", expression=expression)])
    )
    return ruleset.Engine(ruleset.compile_rule_sets([spec])).decide(samples.EVENT.cel_value(), samples.NODE)


@settings(max_examples=150, deadline=None)
@given(_rule())
def test_well_typed_rules_from_the_table_pass_and_evaluate_without_error(expression: str) -> None:
    assert typecheck.check("HealthEvent", expression) == []
    assert _on_sample(expression).errors == []


OTHER_KIND = {"int": "'1'", "string": "1", "bool": "'true'"}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(EVENT_PATHS))
def test_a_field_compared_with_another_kind_is_refused_and_never_matches(field: tuple[str, Any]) -> None:
    path, kind = field
    expression = f"{path} == {OTHER_KIND[kind.kind]}"
    assert typecheck.check("HealthEvent", expression), expression
    assert _on_sample(expression).matched == []


_ATOMS = st.sampled_from(
    ["event", "event.agent", "event.errorCode", "event.metadata", "1", "'a'", "true", "null", "[1]", "{'a': 1}", "x"]
)
_TEXT = st.recursive(
    _ATOMS,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from([" == ", " + ", " in ", " && ", " < "]), inner).map("".join),
        st.tuples(inner, st.sampled_from([".size()", "[0]", ".agent", ".exists(c, c)", ".startsWith('a')"])).map(
            "".join
        ),
        st.tuples(st.sampled_from(["size(", "int(", "!(", "-(", "has(", "dyn("]), inner).map(
            lambda p: f"{p[0]}{p[1]})"
        ),
    ),
    max_leaves=6,
)


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.sampled_from(["HealthEvent", "Node"]))
def test_the_checker_never_crashes_on_an_expression_that_compiles(expression: str, kind: str) -> None:
    try:
        cel.compile(expression, name="x")
    except Exception:
        return
    for problem in typecheck.check(kind, expression):
        assert problem.line >= 1 and problem.column >= 1 and problem.message


_LITERAL_GRID = [
    "2", "2u", "2.0", "'a'", "true", "b'a'", "null", "[2]", "{'a': 2}", "duration('2s')",
    "timestamp('2026-01-01T00:00:00Z')",
]  # fmt: skip
_OPERATORS = ["==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "in"]


def test_what_the_checker_accepts_celpy_evaluates_without_error() -> None:
    """Every operator on every pair of literal kinds: an accepted expression never fails at run time.

    (The converse does not hold, on purpose: celpy answers ``'a' == true`` with false and
    ``2 + true`` with 3; the checker refuses both, as they never mean what they say.)"""
    accepted_but_failing = []
    for left, op, right in itertools.product(_LITERAL_GRID, _OPERATORS, _LITERAL_GRID):
        expression = f"[{left} {op} {right}].size() == 1"
        if typecheck.check("HealthEvent", expression):
            continue
        try:
            cel.compile(expression, name="grid").evaluate({})
        except cel.EvaluationError as exc:
            accepted_but_failing.append(f"{left} {op} {right}: {exc}")
    assert accepted_but_failing == []
