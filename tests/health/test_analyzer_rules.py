"""The analyzer's default rule set (rules/values.yaml), its operators, overrides and recoveries.

Covers: the defaults load (twelve rules, each with a recovery); Xid 31 in two bursts on one GPU
asks for DCGM diagnostics while one burst does not, and on two GPUs it is an application fault
(NONE, not fatal); Xid 13 on the same GPC/TPC versus different ones; five remediations a week
fire only when they are apart (a storm is one); the first matching rule wins; overrides disable a
rule or change its count; bad rules fail at load with one line naming the field; a quiet
condition publishes one healthy twin stamped at last event + quietFor, deterministic and never
twice, and the recovery is the rule's history boundary; a healthy event on the same entity clears
a ``healthyEvent`` rule, one on another entity does not; each default rule fires on its pattern
(NIC flaps and degradation per port, SXids per NVSwitch link, a GPU fallen off twice through an Xid
79 and then the driver's line, Xid 48, 74, five bursts of fatal Xids) and not beside it (another
port or link, outside the window, one burst, Xid 45); property tests: criteria never crash
on arbitrary events, bursts and distinct counts never exceed the events, and analysing the same
history twice gives the same events.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import errors
from shared.health import analyzer, config
from shared.health import event as hevent
from shared.health import settings as hsettings

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def defaults() -> hsettings.Analyzer:
    return config.load(None).settings.analyzer


def load(tmp_path: Path, text: str) -> hsettings.Analyzer:
    path = tmp_path / "values.yaml"
    path.write_text(text)
    return config.load(path).settings.analyzer


def ev(
    code: str,
    minutes: float,
    *,
    pci: str = "0000:a1:00",
    check: str = "SysLogsXIDError",
    fatal: bool = False,
    action: str = "NONE",
    healthy: bool = False,
    meta: dict[str, str] | None = None,
    entity: str = "PCI",
) -> hevent.HealthEvent:
    return hevent.parse(
        {
            "agent": "syslog-health-monitor",
            "checkName": check,
            "componentClass": "GPU",
            "errorCode": [code] if code else [],
            "isFatal": fatal,
            "isHealthy": healthy,
            "recommendedAction": action,
            "nodeName": "node-1",
            "entitiesImpacted": [{"entityType": entity, "entityValue": pci}],
            "metadata": meta or {},
            "generatedTimestamp": (T0 + timedelta(minutes=minutes)).isoformat(),
        }
    )


def run(rules: hsettings.Analyzer, history: list[hevent.HealthEvent], *, at: float) -> hevent.HealthEvent | None:
    return analyzer.Analyzer(rules, now=lambda: T0 + timedelta(minutes=at)).evaluate(history[-1], history)


def test_the_default_rule_set_loads_with_a_recovery_for_every_rule() -> None:
    rules = analyzer.Analyzer(defaults(), now=lambda: T0).rules
    assert len(rules) == 12
    assert {"RepeatedXid31OnSameGPU", "RepeatedNICLinkFlap", "MultipleRemediations"} <= {r.name for r in rules}
    assert all(r.spec.recovery is not None for r in rules)


def test_xid31_in_two_bursts_on_one_gpu_asks_for_diagnostics_and_one_burst_does_not() -> None:
    burst = [ev("31", 0), ev("31", 1)]  # a minute apart: one burst
    assert run(defaults(), burst, at=2) is None
    again = [*burst, ev("31", 30)]
    derived = run(defaults(), again, at=31)
    assert derived is not None and derived.checkName == "RepeatedXid31OnSameGPU"
    assert (derived.recommendedAction, derived.isFatal) == (hevent.RecommendedAction.RUN_DCGMEUD, True)
    assert derived.metadata[analyzer.META_CHECK] == "SysLogsXIDError"


def test_xid31_on_two_gpus_is_an_application_fault_not_fatal() -> None:
    derived = run(defaults(), [ev("31", 0, pci="0000:a1:00"), ev("31", 1, pci="0000:b1:00")], at=2)
    assert derived is not None and derived.checkName == "RepeatedXid31OnDifferentGPU"
    assert (derived.recommendedAction, derived.isFatal) == (hevent.RecommendedAction.NONE, False)


def test_xid13_on_the_same_gpc_and_tpc_differs_from_xid13_across_them() -> None:
    same = [ev("13", 0, meta={"gpcTpc": "7/7"}), ev("13", 5, meta={"gpcTpc": "7/7"})]
    assert (run(defaults(), same, at=6) or hevent.HealthEvent()).checkName == "RepeatedXid13OnSameGPCAndTPC"
    apart = [ev("13", 0, meta={"gpcTpc": "7/7"}), ev("13", 5, meta={"gpcTpc": "2/1"})]
    assert (run(defaults(), apart, at=6) or hevent.HealthEvent()).checkName == "RepeatedXid13OnDifferentGPCAndTPC"
    unknown = [ev("13", 0), ev("13", 5)]  # no GPC/TPC in the line: neither rule can tell
    assert run(defaults(), unknown, at=6) is None


def test_five_remediations_in_a_week_fire_only_when_they_are_apart() -> None:
    def fatal(minutes: float, pci: str) -> hevent.HealthEvent:
        return ev("94", minutes, pci=pci, fatal=True, action="COMPONENT_RESET", check="GpuXidError")

    storm = [fatal(m, f"0000:{m:02d}:00") for m in range(5)]
    assert run(defaults(), storm, at=10) is None
    days = [fatal(m * 24 * 60, f"0000:{m:02d}:00") for m in range(5)]
    derived = run(defaults(), days, at=4 * 24 * 60 + 1)
    assert derived is not None and derived.checkName == "MultipleRemediations"
    assert run(defaults(), days[:4], at=4 * 24 * 60 + 1) is None


def test_overrides_disable_a_rule_or_change_its_count(tmp_path: Path) -> None:
    two = [ev("31", 0), ev("31", 30)]
    off = load(tmp_path, "health-events-analyzer: {ruleOverrides: {RepeatedXid31OnSameGPU: {enabled: false}}}\n")
    assert run(off, two, at=31) is None
    three = load(tmp_path, "health-events-analyzer: {ruleOverrides: {RepeatedXid31OnSameGPU: {errorCount: 3}}}\n")
    assert run(three, two, at=31) is None
    assert run(three, [*two, ev("31", 60)], at=61) is not None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ruleOverrides: {Nope: {enabled: false}}", "health-events-analyzer: ruleOverrides.Nope: no rule of that name"),
        ("ruleOverrides: {MultipleRemediations: {timeWindow: 7 days}}", "invalid duration '7 days'"),
        (
            "rules: [{name: r, sequence: [{criteria: {errorCode: {startsWith: '1'}}}]}]",
            "errorCode: an operator is one of anyOf, noneOf, sameEntity",
        ),
        ("rules: [{name: r, sequence: [{criteria: {}}], recovery: {}}]", "give quietFor, healthyEvent or both"),
        ("rules: [{name: r, sequence: [{}]}, {name: r, sequence: [{}]}]", "duplicate rule 'r'"),
        ("rules: [{name: r, recommendedAction: REBOOT, sequence: [{}]}]", "unknown recommendedAction 'REBOOT'"),
    ],
)
def test_a_bad_rule_fails_at_load_with_one_line_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        load(tmp_path, f"health-events-analyzer: {{{text}}}\n")
    line = caught.value.line()
    assert message in line and "\n" not in line and "values.yaml" in line


def test_a_quiet_condition_publishes_one_healthy_twin_at_last_event_plus_quiet_for() -> None:
    history = [ev("31", 0), ev("31", 30)]
    derived = run(defaults(), history, at=31)
    assert derived is not None
    history.append(derived)
    early = analyzer.Analyzer(defaults(), now=lambda: T0 + timedelta(hours=24, minutes=29))
    assert early.recoveries(history) == []
    late = analyzer.Analyzer(defaults(), now=lambda: T0 + timedelta(hours=30))
    [healthy] = late.recoveries(history)
    assert (healthy.agent, healthy.checkName, healthy.isHealthy, healthy.isFatal) == (
        analyzer.AGENT,
        "RepeatedXid31OnSameGPU",
        True,
        False,
    )
    assert healthy.generatedTimestamp == T0 + timedelta(minutes=30, hours=24)
    assert healthy.entitiesImpacted == derived.entitiesImpacted
    assert [e.dedupe_key() for e in late.recoveries(history)] == [healthy.dedupe_key()]  # deterministic
    assert late.recoveries([*history, healthy]) == []  # never twice


def test_a_new_event_keeps_the_condition_open() -> None:
    history = [ev("31", 0), ev("31", 30)]
    derived = run(defaults(), history, at=31)
    assert derived is not None
    history += [derived, ev("31", 23 * 60)]  # still failing near the end of the quiet period
    rules = analyzer.Analyzer(defaults(), now=lambda: T0 + timedelta(hours=30))
    assert rules.recoveries(history) == []


BOUNDARY = """
health-events-analyzer:
  rules:
    - name: Twice
      timeWindow: 7d
      recommendedAction: CONTACT_SUPPORT
      sequence: [{criteria: {errorCode: "48", entitiesImpacted: {sameEntity: PCI}}, errorCount: 2}]
      recovery: {quietFor: 1h, healthyEvent: {checkName: GpuReset}}
"""


def test_a_recovery_is_the_rules_history_boundary(tmp_path: Path) -> None:
    rules = load(tmp_path, BOUNDARY)
    history = [ev("48", 0), ev("48", 10)]
    derived = run(rules, history, at=11)
    assert derived is not None
    history.append(derived)
    [healthy] = analyzer.Analyzer(rules, now=lambda: T0 + timedelta(hours=2)).recoveries(history)
    history += [healthy, ev("48", 180)]
    assert run(rules, history, at=181) is None  # the two before the recovery no longer count
    history.append(ev("48", 190))
    assert run(rules, history, at=191) is not None


def test_a_healthy_event_on_the_same_entity_clears_a_healthy_event_rule(tmp_path: Path) -> None:
    rules = load(tmp_path, BOUNDARY)
    history = [ev("48", 0), ev("48", 10)]
    derived = run(rules, history, at=11)
    assert derived is not None
    history.append(derived)
    engine = analyzer.Analyzer(rules, now=lambda: T0 + timedelta(minutes=20))
    elsewhere = ev("", 15, check="GpuReset", healthy=True, pci="0000:b1:00")
    assert engine.analyze([elsewhere], [*history, elsewhere]) == []
    reset = ev("", 15, check="GpuReset", healthy=True)
    [healthy] = engine.analyze([reset], [*history, reset])
    assert (healthy.checkName, healthy.isHealthy) == ("Twice", True)
    assert healthy.generatedTimestamp == reset.generatedTimestamp


scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 200), st.text(max_size=6))
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=4), scalars, max_size=2))
paths = st.sampled_from(["errorCode", "checkName", "isFatal", "metadata.gpcTpc", "entitiesImpacted", "x.y"])
wanted = st.one_of(
    values,
    st.builds(lambda p: f"this.{p}", paths),
    st.builds(lambda xs: {"anyOf": xs}, st.lists(scalars, max_size=3)),
    st.builds(lambda xs: {"noneOf": xs}, st.lists(scalars, max_size=3)),
    st.builds(lambda t: {"sameEntity": t}, st.sampled_from(["PCI", "GPU", "NIC_PORT"])),
)
documents = st.dictionaries(paths, values, max_size=5)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents, trigger=documents, criteria=st.dictionaries(paths, wanted, max_size=4))
def test_criteria_never_crash_on_arbitrary_events(doc: Any, trigger: Any, criteria: Any) -> None:
    assert analyzer.matches(doc, criteria, trigger) in (True, False)


@settings(max_examples=200, deadline=None)
@given(
    minutes=st.lists(st.integers(0, 600), min_size=1, max_size=12),
    pcis=st.lists(st.sampled_from(["a", "b", "c"]), min_size=12, max_size=12),
    gap=st.sampled_from(["1m", "3m", "30m"]),
)
def test_bursts_and_distinct_counts_never_exceed_the_events(minutes: list[int], pcis: list[str], gap: str) -> None:
    events = [ev("31", m, pci=p) for m, p in zip(minutes, pcis, strict=False)]
    times = [e.generatedTimestamp for e in events if e.generatedTimestamp is not None]
    docs = [e.wire() for e in events]
    bursts = analyzer._count(times, docs, hsettings.Sequence(burstGap=gap))
    distinct = analyzer._count(times, docs, hsettings.Sequence(distinct="entity:PCI"))
    assert 1 <= bursts <= len(events) and 1 <= distinct <= min(3, len(events))
    assert analyzer._count(times, docs, hsettings.Sequence()) == len(events)


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["13", "31", "48", "74", "79"]), st.integers(0, 3000), st.sampled_from("ab")),
        min_size=1,
        max_size=10,
    ),
    later=st.integers(0, 20000),
)
def test_analysing_the_same_history_twice_gives_the_same_events(steps: list[tuple[str, int, str]], later: int) -> None:
    history = [ev(c, m, pci=p, fatal=c != "31", meta={"gpcTpc": "1/1"}) for c, m, p in steps]
    engine = analyzer.Analyzer(defaults(), now=lambda: T0 + timedelta(minutes=later + 3000))
    first = engine.analyze(history, history)
    again = engine.analyze(history, history)
    assert [e.dedupe_key() for e in first] == [e.dedupe_key() for e in again]
    # what it published, stored, and the recoveries then due, stored too: nothing new after that
    closing = engine.recoveries([*history, *first])
    settled = [*history, *first, *closing]
    known = {e.dedupe_key() for e in [*first, *closing]}
    assert {e.dedupe_key() for e in engine.analyze(history, settled)} <= known


def nic(check: str, minutes: float, port: str = "mlx5_0/1") -> hevent.HealthEvent:
    return hevent.parse(
        {
            "agent": "nic-health-monitor",
            "checkName": check,
            "componentClass": "NIC",
            "isFatal": True,
            "recommendedAction": "REPLACE_VM",
            "nodeName": "node-1",
            "entitiesImpacted": [
                {"entityType": "NIC", "entityValue": port.split("/")[0]},
                {"entityType": "NIC_PORT", "entityValue": port},
            ],
            "generatedTimestamp": (T0 + timedelta(minutes=minutes)).isoformat(),
        }
    )


def sxid_event(minutes: float, link: str = "28") -> hevent.HealthEvent:
    return ev("20034", minutes, check="SysLogsSXIDError", fatal=True).model_copy(
        update={
            "entitiesImpacted": [
                hevent.Entity(entityType="NVSWITCH", entityValue="2"),
                hevent.Entity(entityType="PCI", entityValue="0000:86:00.0"),
                hevent.Entity(entityType="NVLINK", entityValue=link),
            ]
        }
    )


@pytest.mark.parametrize(
    ("history", "fires"),
    [
        ([nic("InfiniBandStateCheck", m) for m in (0, 10, 20)], "RepeatedNICLinkFlap"),
        ([nic("InfiniBandStateCheck", 0, "mlx5_1/1"), *[nic("InfiniBandStateCheck", m) for m in (10, 20)]], None),
        ([nic("InfiniBandStateCheck", m) for m in (0, 10, 70)], None),  # the first left the hour
        (
            [
                nic("InfiniBandLinkRateCheck", 0),
                nic("InfiniBandDegradationCheck", 5),
                nic("InfiniBandLinkRateCheck", 9),
            ],
            "RepeatedNICDegradation",
        ),
        ([sxid_event(m) for m in (0, 5, 10)], "RepeatedSXidOnSameNVLink"),
        ([sxid_event(0), sxid_event(5, link="29"), sxid_event(10)], None),
        (
            [
                ev("79", 0, fatal=True, action="RESTART_BM"),
                ev("GPU_FALLEN_OFF_BUS", 60 * 30, check="SysLogsGPUFallenOff", fatal=True, action="RESTART_BM"),
            ],
            "RepeatedGPUFallenOffBus",
        ),
        ([ev("48", 0, fatal=True), ev("48", 0.5, fatal=True)], None),  # one burst
        ([ev("48", 0, fatal=True), ev("48", 90, fatal=True)], "RepeatedXid48OnSameGPU"),
        ([ev("74", m, fatal=True) for m in (0, 10, 20)], "RepeatedXid74OnSameGPU"),
        ([ev("45", m, fatal=True) for m in (0, 10, 20, 30, 40)], None),  # Xid 45 is excluded (upstream #1710)
        (
            [ev(c, m, fatal=True) for c, m in zip(["94", "95", "62", "64", "94"], (0, 10, 20, 30, 40), strict=True)],
            "RepeatedXidErrorOnSameGPU",
        ),
    ],
    ids=[
        "nic-flap",
        "nic-flap-across-ports",
        "nic-flap-out-of-window",
        "nic-degradation-with-link-rate",
        "sxid-same-link",
        "sxid-across-links",
        "fallen-off-twice-xid-then-driver-line",
        "xid48-one-burst",
        "xid48-twice",
        "xid74-three-bursts",
        "xid45-excluded",
        "fatal-xids-five-bursts",
    ],
)
def test_each_default_rule_fires_on_its_pattern_and_not_beside_it(
    history: list[hevent.HealthEvent], fires: str | None
) -> None:
    last = max(e.generatedTimestamp for e in history if e.generatedTimestamp is not None)
    derived = analyzer.Analyzer(defaults(), now=lambda: last).evaluate(history[-1], history)
    assert (derived.checkName if derived else None) == fires
