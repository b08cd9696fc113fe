"""The analyzer judges a node on its history: counts inside a window of the clock's time.

Covers: the same Xid three times in 24 hours emits one derived event, twice does not, and the
window slides with virtual time; "any fatal event twice in 7 days" counts across checks; the
analyzer's own events never trigger; through the controller on the simulated cluster the derived
event is published once and quarantines like any other; a GPU quiet for the rule's
``quietFor`` gets a healthy derived event that releases the node, published once.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import kubernetes
import pytest

from shared import clock, errors
from shared.health import analyzer, config, controller, resource
from shared.health import event as hevent
from shared.health import settings as hsettings

RULES = """
health-events-analyzer:
  rules:
    - name: RepeatedXid
      timeWindow: 24h
      recommendedAction: CONTACT_SUPPORT
      message: the same Xid three times in a day
      sequence:
        - criteria: {checkName: SysLogsXIDError, errorCode: this.errorCode}
          errorCount: 3
    - name: RepeatedFatal
      timeWindow: 7d
      recommendedAction: RESTART_BM
      sequence:
        - criteria: {isFatal: true}
          errorCount: 2
"""
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def settings(tmp_path: Path, text: str = RULES) -> hsettings.Analyzer:
    path = tmp_path / "hsettings.yaml"
    path.write_text(text)
    return config.load(path).settings.analyzer


def xid(code: str, hours: float, *, fatal: bool = False, check: str = "SysLogsXIDError") -> hevent.HealthEvent:
    return hevent.parse(
        {
            "agent": "syslog-health-monitor",
            "checkName": check,
            "componentClass": "GPU",
            "errorCode": [code],
            "isFatal": fatal,
            "nodeName": "node-1",
            "generatedTimestamp": (T0 + timedelta(hours=hours)).isoformat(),
        }
    )


def test_the_same_xid_three_times_in_a_day_emits_a_derived_event(tmp_path: Path) -> None:
    now = [T0 + timedelta(hours=5)]
    rules = analyzer.Analyzer(settings(tmp_path), now=lambda: now[0])
    history = [xid("13", 1), xid("13", 2), xid("31", 3)]
    assert rules.evaluate(history[1], history) is None
    history.append(xid("13", 4))
    derived = rules.evaluate(history[-1], history)
    assert derived is not None and (derived.agent, derived.checkName) == (analyzer.AGENT, "RepeatedXid")
    assert derived.recommendedAction == hevent.RecommendedAction.CONTACT_SUPPORT and derived.isFatal
    now[0] = T0 + timedelta(hours=25.5)  # the first Xid 13 has left the window
    assert rules.evaluate(history[-1], history) is None


def test_any_fatal_event_twice_in_seven_days_counts_across_checks(tmp_path: Path) -> None:
    rules = analyzer.Analyzer(settings(tmp_path), now=lambda: T0 + timedelta(days=6))
    history = [xid("79", 0, fatal=True, check="GpuXidError"), xid("48", 100, fatal=True)]
    derived = rules.evaluate(history[-1], history)
    assert derived is not None and derived.checkName == "RepeatedFatal"
    assert rules.evaluate(history[0], history[:1]) is None


def test_the_analyzers_own_events_never_trigger_a_rule(tmp_path: Path) -> None:
    rules = analyzer.Analyzer(settings(tmp_path), now=lambda: T0 + timedelta(days=1))
    own = xid("79", 1, fatal=True).model_copy(update={"agent": analyzer.AGENT})
    assert rules.evaluate(own, [own, own, own]) is None


def test_an_unknown_action_in_a_rule_fails_at_load(tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInput, match="REBOOT_PLEASE"):
        analyzer.Analyzer(settings(tmp_path, RULES.replace("CONTACT_SUPPORT", "REBOOT_PLEASE")), now=lambda: T0)


def test_the_controller_publishes_the_derived_event_once_and_quarantines_on_it(
    gpu_sim: Any, api_client: Any, tmp_path: Path
) -> None:
    [node] = gpu_sim.add_gpu_nodes(1)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    path = tmp_path / "hsettings.yaml"
    path.write_text(
        RULES + "node-drainer: {enabled: false}\nfault-remediation: {enabled: false}\n"
        "fault-quarantine: {circuitBreaker: {enabled: false}}\n"
    )
    clk = clock.for_api_client(api_client, max_age=0)
    ctl = controller.Controller(api_client, config.load(path, enforce=True), namespace="nvsentinel", clk=clk)
    now = clk.now()
    events = [
        hevent.parse(
            {
                "agent": "syslog-health-monitor",
                "checkName": "SysLogsXIDError",
                "componentClass": "NIC",
                "errorCode": ["13"],
                "nodeName": node,
                "generatedTimestamp": hevent.format_time(now - timedelta(minutes=m)),
            }
        )
        for m in (3, 2, 1)
    ]
    resource.publish(api_client, events, now=clk.now)
    ctl.reconcile_once()
    ctl.reconcile_once()
    derived = [s for s in resource.list_events(api_client) if s.event.agent == analyzer.AGENT]
    assert [(s.event.checkName, s.phase) for s in derived] == [("RepeatedXid", "Quarantined")]


QUIET = """
health-events-analyzer:
  rules:
    - name: RepeatedXid
      timeWindow: 24h
      recommendedAction: CONTACT_SUPPORT
      sequence:
        - criteria: {checkName: SysLogsXIDError, errorCode: this.errorCode, entitiesImpacted: {sameEntity: PCI}}
          errorCount: 3
      recovery: {quietFor: 10m}
node-drainer: {enabled: false}
fault-remediation: {enabled: false}
fault-quarantine: {circuitBreaker: {enabled: false}}
"""


def test_a_quiet_gpu_releases_the_quarantine_its_derived_event_made(
    gpu_sim: Any, api_client: Any, tmp_path: Path
) -> None:
    [node] = gpu_sim.add_gpu_nodes(1)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    path = tmp_path / "hsettings.yaml"
    path.write_text(QUIET)
    clk = clock.for_api_client(api_client, max_age=0)
    ctl = controller.Controller(api_client, config.load(path, enforce=True), namespace="nvsentinel", clk=clk)
    now = clk.now()
    resource.publish(
        api_client,
        [
            hevent.parse(
                {
                    "agent": "syslog-health-monitor",
                    "checkName": "SysLogsXIDError",
                    "componentClass": "GPU",
                    "errorCode": ["13"],
                    "nodeName": node,
                    "entitiesImpacted": [{"entityType": "PCI", "entityValue": "0000:a1:00"}],
                    "generatedTimestamp": hevent.format_time(now - timedelta(minutes=m)),
                }
            )
            for m in (3, 2, 1)
        ],
        now=clk.now,
    )
    ctl.reconcile_once()
    ctl.reconcile_once()
    core = kubernetes.client.CoreV1Api(api_client)
    assert core.read_node(node).spec.unschedulable is True
    ctl.reconcile_once()  # still failing recently: nothing recovers
    assert [s.event.isHealthy for s in resource.list_events(api_client) if s.event.agent == analyzer.AGENT] == [False]
    gpu_sim.advance(11 * 60)
    ctl.reconcile_once()
    ctl.reconcile_once()
    stored = resource.list_events(api_client)
    derived = [(s.event.isHealthy, s.phase) for s in stored if s.event.agent == analyzer.AGENT]
    assert derived == [(False, "Quarantined"), (True, "UnQuarantined")]
    assert not core.read_node(node).spec.unschedulable
    ctl.reconcile_once()  # a further pass (or a restart) publishes nothing new
    assert len([s for s in resource.list_events(api_client) if s.event.agent == analyzer.AGENT]) == 2
