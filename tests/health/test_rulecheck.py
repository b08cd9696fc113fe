"""``rules check`` finds what would fail at run time, and ``nvsentinel run`` refuses to start on it.

Covers: the type checker's findings (unknown function, enum compared with its name, a string list
item compared with an int, unknown fields, the wrong variable, arity, non-boolean rules) with their
line and column in the file; durations, selectors and label keys/values; the sample evaluation;
``run`` exiting 2 with the same lines before any request reaches the simulated cluster; and the
rule engine's run-time failures that the checker accepts nothing of (each refused rule really
fails or never matches on an event).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import cel
from shared.health import event, rulecheck, ruleset, samples, settings, typecheck

RULE_SET = """\
fault-quarantine:
  ruleSets:
    - name: "{name}"
      match:
        all:
          - kind: {kind}
            expression: "{expression}"
      cordon: {{shouldCordon: true}}
"""


def _values(tmp_path: Path, expression: str, *, kind: str = "HealthEvent", name: str = "r") -> Path:
    path = tmp_path / "values.yaml"
    path.write_text(RULE_SET.format(name=name, kind=kind, expression=expression))
    return path


def _lines(path: Path) -> list[str]:
    return [p.line() for p in rulecheck.check(path)]


EXPRESSION_COLUMN = 26  # where the expression starts in RULE_SET's line 7 (after the opening quote)


@pytest.mark.parametrize(
    ("expression", "offset", "message"),
    [
        ("unknownFn(event.agent)", 0, "unknown function 'unknownFn': unknownFn(event.agent)"),
        (
            "event.recommendedAction == 'RESTART_BM'",
            24,
            "event.recommendedAction == 'RESTART_BM' is never true: RecommendedAction is a number in CEL;"
            " RESTART_BM is 24",
        ),
        ("event.errorCode[0] == 79", 19, "event.errorCode[0] == 79 compares a string with an int: never true"),
        ("event.processingStrategy == 4", 25, "event.processingStrategy == 4: ProcessingStrategy has no value 4 "
         "(UNSPECIFIED=0, EXECUTE_REMEDIATION=1, STORE_ONLY=2, STORE_AND_ANALYSE=3)"),
        ("event.isFatall", 6, "HealthEvent has no field 'isFatall' (did you mean 'isFatal'?)"),
        ("event.agent", 0, "the rule's value is a string, not a boolean: it never matches"),
        ("event.agent.startsWith(1)", 0, "startsWith(string, int) has no overload; it takes (string, string): "
         "event.agent.startsWith(1)"),
        ("size(event.errorCode, 2) > 0", 0, "size takes 1 argument(s) (receiver included), got 2"),
        ("event.errorCode.isSorted()", 0, "unknown function 'isSorted': event.errorCode.isSorted()"),
        ("79 in event.errorCode", 3, "79 in event.errorCode looks for an int among string values: never true"),
        ("node.metadata.name == 'a'", 0, "a HealthEvent rule has no variable 'node' (only 'event')"),
    ],
)  # fmt: skip
def test_a_rule_that_never_matches_is_refused_at_its_line_and_column(
    tmp_path: Path, expression: str, offset: int, message: str
) -> None:
    path = _values(tmp_path, expression)
    assert _lines(path) == [f"{path}:7:{EXPRESSION_COLUMN + offset}: rule set 'r': match.all[0]: {message}"]


@pytest.mark.parametrize(
    "expression",
    [
        "event.recommendedAction == 24",
        "event.recommendedAction in [15, 24]",
        "'79' in event.errorCode",
        "event.errorCode.exists(c, int(c) == 79)",
        "event.agent.lowerAscii().startsWith('syslog')",
        "has(event.metadata.mnemonic) && event.metadata.mnemonic.contains('BUS')",
        "event.entitiesImpacted.exists(e, e.entityType == 'GPU_UUID')",
        "event.generatedTimestamp.seconds > 0 && event.message != null",
        "event.isFatal ? event.checkName.endsWith('Error') : false",
        "size(event.agent.split('-')) == 3 && ['a', 'b'].join('-') == 'a-b'",
    ],
)
def test_well_typed_rules_pass(tmp_path: Path, expression: str) -> None:
    assert _lines(_values(tmp_path, expression)) == []


def test_node_rules_see_only_what_the_engine_keeps_of_a_node(tmp_path: Path) -> None:
    ok = _values(tmp_path, "node.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')", kind="Node")
    assert _lines(ok) == []
    # metadata.uid is a Node's, but the rule engine's node cache drops it: at run time it is absent
    path = _values(tmp_path, "node.metadata.uid != ''", kind="Node")
    (line,) = _lines(path)
    assert line.startswith(f"{path}:7:40: rule set 'r': match.all[0]: Node metadata has no field 'uid'")
    engine = ruleset.Engine(
        ruleset.compile_rule_sets(settings.model(settings.read_file(path)[0], source="x").fault_quarantine.ruleSets)
    )
    assert engine.decide(samples.EVENT.cel_value(), samples.NODE).errors == ["r: no such member in mapping: 'uid'"]


def test_a_multi_line_rule_is_placed_on_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(
        "fault-quarantine:\n  ruleSets:\n    - name: m\n      match:\n        all:\n"
        "          - kind: Node\n            expression: |\n"
        "              'a' in node.metadata.labels &&\n"
        "                node.metadata.label['a'] == 'b'\n"
    )
    (line,) = _lines(path)
    assert (
        line == f"{path}:9:31: rule set 'm': match.all[0]: Node metadata has no field 'label' (did you mean 'labels'?)"
    )


def test_durations_selectors_and_labels_are_checked_where_they_are_written(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(
        "fault-quarantine:\n"
        "  gpuNodeLabel: 'nvidia.com/gpu.present in true'\n"
        "  circuitBreaker: {duration: 5x}\n"
        "  skipNodeLabels:\n"
        "    - {key: 'bad key', value: ok}\n"
        "  ruleSets:\n"
        "    - name: t\n"
        "      match: {all: [{kind: HealthEvent, expression: 'event.isFatal'}]}\n"
        "      taint: {key: quarantined, value: 'no way'}\n"
        "nvsentinel:\n"
        "  retention: forever\n"
    )
    lines = _lines(path)
    assert [line.split(": ", 2)[:2] for line in lines] == [
        [f"{path}:3:30", "fault-quarantine.circuitBreaker.duration"],
        [f"{path}:2:17", "fault-quarantine.gpuNodeLabel"],
        [f"{path}:5:13", "fault-quarantine.skipNodeLabels[0].key"],
        [f"{path}:9:40", "rule set 't'"],
        [f"{path}:11:14", "nvsentinel.retention"],
    ]
    assert "invalid duration '5x'" in lines[0]
    assert "label selector 'nvidia.com/gpu.present in true'" in lines[1]
    assert "invalid taint value 'no way'" in lines[3]


def test_the_sample_evaluation_catches_what_the_types_allow(tmp_path: Path) -> None:
    # dyn() hides the type from the checker; the evaluation on the sample event still fails
    path = _values(tmp_path, "dyn(event.agent) + 1 == 2")
    (line,) = _lines(path)
    assert line == f"{path}:7:26: rule set 'r': match.all[0]: fails on a sample HealthEvent: no such overload"


def test_a_missing_map_key_on_the_sample_is_not_a_mistake(tmp_path: Path) -> None:
    assert _lines(_values(tmp_path, "event.metadata['resolution'] == 'RESTART_BM'")) == []


def test_every_problem_refused_by_the_checker_fails_or_never_matches_at_run_time() -> None:
    """The checker's claims hold on the engine: each refused rule errs or is false on a matching event."""
    refused = [
        "event.recommendedAction == 'RESTART_BM'",
        "event.errorCode[0] == 79",
        "unknownFn(event.agent)",
        "event.isFatall",
        "event.agent",
        "79 in event.errorCode",
    ]
    for expression in refused:
        assert typecheck.check("HealthEvent", expression), expression
        spec = settings.RuleSet(
            name="r", match=settings.Match(all=[settings.Rule(kind="HealthEvent", expression=expression)])
        )
        decision = ruleset.Engine(ruleset.compile_rule_sets([spec])).decide(samples.EVENT.cel_value(), samples.NODE)
        assert decision.matched == [], expression


@pytest.mark.parametrize(
    ("expression", "column"), [("event.recommendedAction == 'RESTART_BM'", 50), ("event.isFatal &&", 40)]
)
def test_run_refuses_a_values_file_with_problems_before_touching_the_cluster(
    run_cli: Any, sim: Any, sim_kubeconfig: Path, tmp_path: Path, expression: str, column: int
) -> None:
    path = _values(tmp_path, expression)
    checked = run_cli("nvsentinel", "rules", "check", "-f", str(path))
    sim.audit.clear()
    result = run_cli("nvsentinel", "run", "--values", str(path), "--kubeconfig", str(sim_kubeconfig))
    assert (checked.code, result.code) == (1, 2)
    assert result.stderr == checked.stderr
    assert result.stderr.startswith(f"error: {path}:7:{column}: rule set 'r': match.all[0]: ")
    assert sim.audit.records() == []


def test_the_samples_convert_like_real_input() -> None:
    assert cel.to_cel(samples.EVENT.activation()) == samples.EVENT.cel_value()
    assert event.parse(samples.EVENT.wire()) == samples.EVENT


def test_a_failing_rule_is_logged_once_per_rule_not_once_per_event(caplog: pytest.LogCaptureFixture) -> None:
    failing = settings.Rule(kind="HealthEvent", expression="event.metadata['absent'] == 'x'")
    specs = [
        settings.RuleSet(name="first", match=settings.Match(all=[failing])),
        settings.RuleSet(name="second", match=settings.Match(all=[failing])),
    ]
    engine = ruleset.Engine(ruleset.compile_rule_sets(specs))
    with caplog.at_level("WARNING", logger="shared.health.ruleset"):
        decisions = [engine.decide(samples.EVENT.cel_value(), samples.NODE) for _ in range(5)]
    assert all(len(d.errors) == 2 for d in decisions)  # every event still reports (and counts) both
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["rule set 'first'", "rule set 'second'"]
    assert "event.metadata['absent'] == 'x'" in caplog.records[0].getMessage()


@pytest.mark.parametrize(
    "expression", ["event.errorCode[3] == '79'", "int(event.message) > 0", "1 / (size(event.errorCode) - 1) > 0"]
)
def test_an_error_that_depends_on_the_data_is_forgiven(tmp_path: Path, expression: str) -> None:
    assert samples.evaluation_problem("HealthEvent", expression) is None
    assert _lines(_values(tmp_path, expression)) == []
