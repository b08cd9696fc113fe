"""CEL: compile errors name rule and position; evaluation; upstream's string extensions; conversion."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import cel, errors

EVENT = {
    "agent": "gpu-health-monitor",
    "componentClass": "GPU",
    "isFatal": True,
    "errorCode": ["79"],
    "recommendedAction": 15,
    "message": None,
}


def test_upstream_fatal_rule_matches_a_fatal_gpu_event() -> None:
    rule = cel.compile(
        "event.agent == 'gpu-health-monitor' && event.componentClass == 'GPU' && event.isFatal == true",
        name="GPU fatal error ruleset",
    )
    assert rule.evaluate_bool({"event": cel.to_cel(EVENT)}) is True
    assert rule.evaluate_bool({"event": cel.to_cel({**EVENT, "isFatal": False})}) is False


def test_a_syntax_error_names_the_rule_and_position() -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        cel.compile("event.agent == 'x' && && event.isFatal", name="broken", where="rules.yaml")
    assert caught.value.message == (
        "rule 'broken': invalid CEL at line 1, column 23: \"event.agent == 'x' && && event.isFatal\""
    )
    assert caught.value.where == "rules.yaml"


def test_a_missing_field_is_an_evaluation_error_not_a_crash() -> None:
    rule = cel.compile("event.nothing == 1", name="r")
    with pytest.raises(cel.EvaluationError, match="nothing"):
        rule.evaluate({"event": cel.to_cel(EVENT)})


def test_a_non_boolean_result_is_refused_where_a_boolean_is_needed() -> None:
    with pytest.raises(cel.EvaluationError, match="not a boolean"):
        cel.compile("event.recommendedAction", name="r").evaluate_bool({"event": cel.to_cel(EVENT)})


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("event.agent.startsWith('gpu-')", True),
        ("'GPU'.lowerAscii() == 'gpu'", True),
        ("'a,b,c'.split(',').size() == 3", True),
        ("' x '.trim() == 'x'", True),
        ("'node-007'.replace('node-', '') == '007'", True),
        ("event.errorCode.exists(e, e == '79')", True),
        ("event.message == null", True),
        ("event.recommendedAction in [15, 24]", True),
    ],
)
def test_expressions_upstream_rules_use(expression: str, expected: bool) -> None:
    assert cel.compile(expression, name="r").evaluate_bool({"event": cel.to_cel(EVENT)}) is expected


@given(value=st.floats(min_value=0, max_value=1e6, allow_nan=False), threshold=st.integers(0, 1_000_000))
def test_threshold_expressions_compare_like_python(value: float, threshold: int) -> None:
    rule = cel.compile(f"value >= {threshold}.0", name="threshold")
    assert rule.evaluate_bool({"value": cel.to_cel(value)}) is (value >= threshold)
