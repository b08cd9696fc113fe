"""The optimised rule evaluation decides exactly as a plain per-rule evaluation does.

The reference below is the straightforward algorithm: every rule set in order, ``match.all`` with
HealthEvent rules first and stopping at the first false, then ``match.any``; each rule evaluated on
its own with celpy's own runner (no shared activation, no memo, no Node cache, no direct call).
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import cel
from shared.health import event as hevent
from shared.health import ruleset
from shared.health import settings as hsettings

cel.compile("true", name="warm-up")  # celpy raises the recursion limit on its first parser; not inside @given

EVENT_EXPRESSIONS = [
    "event.agent == 'gpu-health-monitor' && event.componentClass == 'GPU' && event.isFatal == true",
    "event.agent == 'syslog-health-monitor'",
    "event.isFatal",
    "event.errorCode.exists(e, e == '79')",
    "event.errorCode.exists(e, e in ['48', '79'])",
    "size(event.entitiesImpacted) > 0 && event.entitiesImpacted[0].entityType == 'GPU'",
    "event.componentClass.lowerAscii() == 'gpu'",
    "event.checkName.startsWith('Gpu')",
    "event.recommendedAction in [15, 24]",
    "event.nothing == 1",  # evaluation error: missing field
    "event.agent",  # not a boolean
    "event.errorCode[3] == '1'",  # index out of range on most events
]
NODE_EXPRESSIONS = [
    "!('k8saas.nvidia.com/ManagedByNVSentinel' in node.metadata.labels && "
    "node.metadata.labels['k8saas.nvidia.com/ManagedByNVSentinel'] == \"false\")",
    "node.metadata.labels['team'] == 'a'",  # missing key on some nodes
    "'gpu' in node.metadata.labels",
    "node.metadata.name.startsWith('node-1')",
    "node.spec.unschedulable == true",  # missing field on most nodes
]

rules = st.one_of(
    st.sampled_from(EVENT_EXPRESSIONS).map(lambda e: hsettings.Rule(kind="HealthEvent", expression=e)),
    st.sampled_from(NODE_EXPRESSIONS).map(lambda e: hsettings.Rule(kind="Node", expression=e)),
)
rule_sets = st.lists(
    st.builds(
        lambda name, priority, all_, any_, cordon, taint, label: hsettings.RuleSet(
            name=name,
            priority=priority,
            match=hsettings.Match(all=all_, any=any_),
            cordon=hsettings.Cordon(shouldCordon=cordon),
            taint=hsettings.Taint(key=f"t{taint}", value="v", effect="NoSchedule") if taint is not None else None,
            label=hsettings.Label(key=f"l{label % 2}", value=str(label)) if label is not None else None,
        ),
        st.sampled_from(["a", "b", "c", "d"]),
        st.integers(0, 3),
        st.lists(rules, max_size=3),
        st.lists(rules, max_size=3),
        st.booleans(),
        st.none() | st.integers(0, 2),
        st.none() | st.integers(0, 3),
    ),
    min_size=1,
    max_size=6,
)
events = st.builds(
    lambda agent, component, fatal, codes, entities, node: hevent.parse(
        {
            "agent": agent,
            "componentClass": component,
            "checkName": "GpuXidError",
            "isFatal": fatal,
            "recommendedAction": "RESTART_BM",
            "errorCode": codes,
            "nodeName": node,
            "entitiesImpacted": [{"entityType": "GPU", "entityValue": str(i)} for i in range(entities)],
            "generatedTimestamp": "2026-01-01T00:00:00Z",
        }
    ),
    st.sampled_from(["gpu-health-monitor", "syslog-health-monitor", "other"]),
    st.sampled_from(["GPU", "NIC"]),
    st.booleans(),
    st.lists(st.sampled_from(["48", "79", "13"]), max_size=3),
    st.integers(0, 2),
    st.sampled_from(["node-1", "node-2"]),
)
_versions = itertools.count(1)
node_objects = st.none() | st.builds(
    lambda name, labels, versioned: {
        "metadata": {
            "name": name,
            "labels": labels,
            **({"resourceVersion": str(next(_versions))} if versioned else {}),
        },
        "spec": {},
    },
    st.sampled_from(["node-1", "node-2", "node-10"]),
    st.dictionaries(
        st.sampled_from(["k8saas.nvidia.com/ManagedByNVSentinel", "team", "gpu"]),
        st.sampled_from(["false", "true", "a", "b"]),
    ),
    st.booleans(),
)


def _plain(rule: hsettings.Rule, name: str, event_value: Any, node: dict[str, Any] | None, problems: list[str]) -> bool:
    compiled = cel.compile(rule.expression, name=name)
    reference = cel.Program(name=compiled.name, expression=compiled.expression, runner=compiled.runner)
    if rule.kind == "HealthEvent":
        variables = {"event": event_value}
    elif node is None:
        problems.append(f"{name}: node not found")
        return False
    else:
        variables = {"node": ruleset.NodeCache().get(node)}
    try:
        return reference.evaluate_bool(variables)
    except cel.EvaluationError as exc:
        problems.append(f"{name}: {exc}")
        return False


def _reference(specs: list[hsettings.RuleSet], event_value: Any, node: dict[str, Any] | None) -> ruleset.Decision:
    decision = ruleset.Decision()
    winners: dict[tuple[str, str], tuple[int, str]] = {}
    label_winners: dict[str, tuple[int, str]] = {}
    for spec in specs:
        if not spec.match.all and not spec.match.any:
            continue
        first = sorted(spec.match.all, key=lambda r: r.kind != "HealthEvent")
        if not all(_plain(r, spec.name, event_value, node, decision.errors) for r in first):
            continue
        if spec.match.any and not any(
            _plain(r, spec.name, event_value, node, decision.errors)
            for r in sorted(spec.match.any, key=lambda r: r.kind != "HealthEvent")
        ):
            continue
        decision.matched.append(spec.name)
        decision.cordon = decision.cordon or spec.cordon.shouldCordon
        if spec.taint is not None:
            key = (spec.taint.key, spec.taint.value)
            if key not in winners or spec.priority > winners[key][0]:
                winners[key] = (spec.priority, spec.taint.effect)
        if spec.label is not None and (
            spec.label.key not in label_winners or spec.priority >= label_winners[spec.label.key][0]
        ):
            label_winners[spec.label.key] = (spec.priority, spec.label.value)
    decision.taints = [ruleset.TaintSpec(k, v, w[1]) for (k, v), w in winners.items()]
    decision.labels = {k: w[1] for k, w in label_winners.items()}
    return decision


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=rule_sets, evs=st.lists(events, min_size=1, max_size=3), node=node_objects)
def test_the_optimised_engine_decides_as_plain_per_rule_evaluation(
    specs: list[hsettings.RuleSet], evs: list[hevent.HealthEvent], node: dict[str, Any] | None
) -> None:
    engine = ruleset.Engine(ruleset.compile_rule_sets(specs))
    for ev in evs:
        event_value = cel.to_cel(ev.activation())
        expected = _reference(specs, event_value, node)
        for _ in range(2):  # the second time from the Node cache; the event as the controller converts it
            assert engine.decide(ev.cel_value(), node) == expected


def test_a_shared_expression_failing_is_reported_for_each_rule_set() -> None:
    broken = hsettings.Rule(kind="HealthEvent", expression="event.nothing == 1")
    specs = [hsettings.RuleSet(name=n, match=hsettings.Match(all=[broken])) for n in ("first", "second")]
    ev = hevent.parse(
        {
            "agent": "a",
            "componentClass": "GPU",
            "checkName": "c",
            "nodeName": "n",
            "generatedTimestamp": "2026-01-01T00:00:00Z",
        }
    )
    decision = ruleset.Engine(ruleset.compile_rule_sets(specs)).decide(cel.to_cel(ev.activation()), None)
    assert decision.matched == []
    assert [e.split(":")[0] for e in decision.errors] == ["first", "second"]
    assert decision == _reference(specs, cel.to_cel(ev.activation()), None)


def test_a_program_without_the_direct_call_gives_the_same_results() -> None:
    compiled = cel.compile("event.errorCode.exists(e, e == '79') && event.agent.lowerAscii() == 'x'", name="r")
    assert compiled.direct is not None
    fallback = cel.Program(name="r", expression=compiled.expression, runner=compiled.runner)
    for doc in ({"agent": "X", "errorCode": ["79"]}, {"agent": "y", "errorCode": []}, {"agent": "X"}):
        value = cel.to_cel(doc)
        outcomes = []
        for program in (compiled, fallback):
            try:
                outcomes.append(program.evaluate(cel.activation({"event": value})))
            except cel.EvaluationError as exc:
                outcomes.append(str(exc))
        assert outcomes[0] == outcomes[1]


def _dump_activation(ev: hevent.HealthEvent) -> dict[str, Any]:
    """The activation as first written (from ``model_dump``): the field-by-field one must equal it."""
    data = ev.model_dump(mode="python")
    data["recommendedAction"] = int(ev.recommendedAction)
    data["processingStrategy"] = int(ev.processingStrategy)
    stamp = ev.generatedTimestamp
    data["generatedTimestamp"] = (
        None if stamp is None else {"seconds": int(stamp.timestamp()), "nanos": stamp.microsecond * 1000}
    )
    for key in (
        "errorCode",
        "entitiesImpacted",
        "message",
        "id",
        "customRecommendedAction",
        "componentClass",
        "metadata",
    ):
        if not data[key]:
            data[key] = None
    return data


def _typed(value: Any) -> Any:
    """A CEL value with every type spelled out, so ``IntType(1)`` and ``BoolType(True)`` differ."""
    if isinstance(value, dict):
        return (type(value).__name__, [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return (type(value).__name__, [_typed(v) for v in value])
    return (type(value).__name__, value)


text = st.text(max_size=4)
overrides = st.none() | st.builds(lambda f, s: {"force": f, "skip": s}, st.booleans(), st.booleans())


def _rich_event(
    version: int,
    agent: str,
    component: str,
    message: str,
    action: str,
    codes: list[str],
    entities: list[dict[str, str]],
    metadata: dict[str, str],
    stamp: datetime | None,
    q: dict[str, bool] | None,
    d: dict[str, bool] | None,
    strategy: str,
    ident: str,
    custom: str,
    fatal: bool,
    healthy: bool,
) -> hevent.HealthEvent:
    return hevent.parse(
        {
            "version": version,
            "agent": agent,
            "componentClass": component,
            "checkName": "c",
            "message": message,
            "recommendedAction": action,
            "errorCode": codes,
            "entitiesImpacted": entities,
            "metadata": metadata,
            "generatedTimestamp": stamp,
            "quarantineOverrides": q,
            "drainOverrides": d,
            "processingStrategy": strategy,
            "id": ident,
            "customRecommendedAction": custom,
            "isFatal": fatal,
            "isHealthy": healthy,
            "nodeName": "n",
        }
    )


rich_events = st.builds(
    _rich_event,
    st.integers(0, 2**40),
    text,
    text,
    text,
    st.sampled_from(list(hevent.RecommendedAction.__members__)),
    st.lists(text, max_size=3),
    st.lists(st.builds(lambda t, v: {"entityType": t, "entityValue": v}, text, text), max_size=3),
    st.dictionaries(text, text, max_size=3),
    st.none()
    | st.integers(0, 10**9).map(lambda us: datetime(2026, 1, 1, tzinfo=UTC) + timedelta(microseconds=us * 997)),
    overrides,
    overrides,
    st.sampled_from(list(hevent.ProcessingStrategy.__members__)),
    text,
    text,
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(ev=rich_events)
def test_cel_value_is_to_cel_of_the_activation_and_the_activation_is_unchanged(ev: hevent.HealthEvent) -> None:
    activation = ev.activation()
    assert list(activation.items()) == list(_dump_activation(ev).items())
    assert _typed(ev.cel_value()) == _typed(cel.to_cel(activation))
