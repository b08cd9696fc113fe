"""Fault quarantine against the simulated cluster, in virtual time.

Covers: the seed's rule set on Xid 79 cordons and taints; monitor mode only writes conditions and
annotations; an opted-out node is untouched; a storm with the breaker at 50 % cordons at most half
and the breaker stays TRIPPED for a new controller — also on several workers, where a failed node
write gives its slot back and the window names exactly the cordoned nodes, and two breakers racing
on many threads admit exactly the threshold; a healthy event clears exactly its own cause;
a pass redone after a crash changes nothing; injected 409s and 500s converge; replay decides as the
live run did; `nodes release` removes only what nvsentinel set; credentials never reach the logs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared import clock, nodes
from shared.health import breaker, config, controller, quarantine, replay, resource
from shared.health import event as hevent
from tests import waiting
from tests.health.test_offline import SEED_VALUES

XID79 = {
    "agent": "gpu-health-monitor",
    "componentClass": "GPU",
    "checkName": "GpuXidError",
    "isFatal": True,
    "recommendedAction": "RESTART_BM",
    "errorCode": ["79"],
    "message": "GPU has fallen off the bus.",
}


def xid79(node: str, gpu: str = "0", *, healthy: bool = False, stamp: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    data = {
        **XID79,
        "nodeName": node,
        "entitiesImpacted": [{"entityType": "GPU", "entityValue": gpu}],
        "generatedTimestamp": stamp,
    }
    if healthy:
        data.update(isFatal=False, isHealthy=True, recommendedAction="NONE", message="recovered")
    return data


@pytest.fixture()
def cluster(gpu_sim: Any, api_client: Any) -> Iterator[tuple[Any, Any, list[str]]]:
    names = gpu_sim.add_gpu_nodes(4)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    yield gpu_sim, api_client, names


def make(api: Any, tmp_path: Path, *, enforce: bool = True, extra: str = "") -> controller.Controller:
    path = tmp_path / "settings.yaml"
    path.write_text(SEED_VALUES + extra)
    return controller.Controller(
        api, config.load(path, enforce=enforce), namespace="nvsentinel", clk=clock.for_api_client(api)
    )


def publish(api: Any, *events: dict[str, Any]) -> None:
    resource.publish(api, [hevent.parse(e) for e in events], now=clock.WALL.now)


def test_the_seed_rule_set_on_xid_79_cordons_and_taints(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    publish(api, xid79(names[1]))
    assert make(api, tmp_path).reconcile_once().phases == {"Quarantined": 1}
    node = nodes.get(api, names[1])
    assert node["spec"]["unschedulable"] is True
    assert {"key": "nvidia.com/gpu-error", "value": "fatal", "effect": "NoSchedule"} in node["spec"]["taints"]
    assert node["metadata"]["labels"]["k8saas.nvidia.com/cordon-reason"] == "GPU-fatal-error-ruleset"
    condition = next(c for c in node["status"]["conditions"] if c["type"] == "GpuXidError")
    assert (condition["status"], condition["reason"]) == ("True", "GpuXidErrorIsNotHealthy")
    assert condition["message"] == "ErrorCode:79 GPU:0 GPU has fallen off the bus. Recommended Action=RESTART_BM;"


def test_monitor_mode_only_publishes_conditions_and_annotations(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    publish(api, xid79(names[0]))
    make(api, tmp_path, enforce=False).reconcile_once()
    node = nodes.get(api, names[0])
    assert not node["spec"].get("unschedulable") and not node["spec"].get("taints")
    assert quarantine.ANN_CAUSES in node["metadata"]["annotations"]
    assert any(c["type"] == "GpuXidError" for c in node["status"]["conditions"])


def test_a_node_opted_out_by_label_is_untouched(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    nodes.update(
        api, names[2], lambda n: nodes.set_map(nodes.labels(n), {"k8saas.nvidia.com/ManagedByNVSentinel": "false"})
    )
    publish(api, xid79(names[2]))
    assert make(api, tmp_path).reconcile_once().phases == {"NotMatched": 1}
    node = nodes.get(api, names[2])
    assert not node["spec"].get("unschedulable") and quarantine.ANN_CAUSES not in node["metadata"].get(
        "annotations", {}
    )


def test_a_storm_trips_the_breaker_at_half_the_fleet_and_it_stays_tripped(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    publish(api, *(xid79(n) for n in names))
    result = make(api, tmp_path).reconcile_once()
    cordoned = [n for n in nodes.list_nodes(api) if nodes.is_cordoned(n)]
    assert len(cordoned) == 2 and result.phases == {"Quarantined": 2, "Blocked": 2}
    fresh = make(api, tmp_path)
    assert fresh.breaker.status().state == breaker.TRIPPED
    publish(api, xid79(names[0], gpu="5"))
    fresh.reconcile_once()
    assert len([n for n in nodes.list_nodes(api) if nodes.is_cordoned(n)]) == 2


def test_a_parallel_storm_keeps_the_breakers_count_exact(cluster: Any, tmp_path: Path) -> None:
    """Eight nodes on four workers, the breaker at 50 %: exactly four slots, the first node's write
    fails for good so its slot goes back and the fifth node takes it; the outcome is the one replay
    predicts, the window names exactly the cordoned nodes, and a new controller stays TRIPPED."""
    sim, api, names = cluster
    names = names + sim.add_gpu_nodes(4)
    events = [xid79(n, stamp=f"2026-01-01T00:00:{i:02d}Z") for i, n in enumerate(names)]
    publish(api, *events)
    sim.faults.inject(422, verb="update", resource="nodes", name=names[0], count=1)
    extra = "nvsentinel:\n  workers: 4\n"
    result = make(api, tmp_path, extra=extra).reconcile_once()
    cordoned = sorted(n["metadata"]["name"] for n in nodes.list_nodes(api) if nodes.is_cordoned(n))
    assert cordoned == sorted(names[1:5])
    assert result.phases == {"Quarantined": 4, "Blocked": 3}
    fresh = make(api, tmp_path, extra=extra)
    status = fresh.breaker.status()
    assert status.state == breaker.TRIPPED and sorted(status.recent) == cordoned
    assert fresh.reconcile_once().phases == {"Blocked": 1}  # the first node's event, redone
    assert sorted(n["metadata"]["name"] for n in nodes.list_nodes(api) if nodes.is_cordoned(n)) == cordoned
    replayed = replay.run(fresh.cfg, [hevent.parse(e) for e in events[1:]], node_objects=None)
    assert sorted(replayed.quarantined()) == cordoned


def test_a_healthy_event_clears_exactly_its_own_cause(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    ctl = make(api, tmp_path)
    publish(api, xid79(names[0], "0"), xid79(names[0], "1", stamp="2026-01-01T00:00:01Z"))
    ctl.reconcile_once()
    publish(api, xid79(names[0], "0", healthy=True, stamp="2026-01-01T00:01:00Z"))
    assert ctl.reconcile_once().phases == {"Recovered": 1}
    assert nodes.is_cordoned(nodes.get(api, names[0]))
    publish(api, xid79(names[0], "1", healthy=True, stamp="2026-01-01T00:02:00Z"))
    assert ctl.reconcile_once().phases == {"UnQuarantined": 1}
    node = nodes.get(api, names[0])
    assert not nodes.is_cordoned(node) and node["spec"].get("taints") in (None, [])
    assert quarantine.ANN_CAUSES not in (node["metadata"].get("annotations") or {})


def test_a_pass_redone_after_a_crash_acts_on_nothing_twice(cluster: Any, tmp_path: Path) -> None:
    _sim, api, names = cluster
    publish(api, xid79(names[0]), xid79(names[1]))
    make(api, tmp_path, extra="  circuitBreaker: {enabled: false}\n").reconcile_once()
    versions = {n: nodes.get(api, n)["metadata"]["resourceVersion"] for n in names}
    for stored in resource.list_events(api):  # the crash: node writes done, statuses lost
        resource.set_status(api, stored.name, resource.Status())
    again = make(api, tmp_path, extra="  circuitBreaker: {enabled: false}\n").reconcile_once()
    assert again.phases == {"Quarantined": 2}  # the outcome each had, found stored, nothing rewritten
    assert {n: nodes.get(api, n)["metadata"]["resourceVersion"] for n in names} == versions


def test_injected_conflicts_and_server_errors_converge(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    sim.faults.inject(409, verb="update", resource="nodes", count=3)
    sim.faults.inject(500, verb="update", resource="nodes", count=2)
    publish(api, xid79(names[3]))
    assert make(api, tmp_path).reconcile_once().phases == {"Quarantined": 1}
    assert nodes.is_cordoned(nodes.get(api, names[3]))


def test_replay_decides_as_the_live_run_did(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    events = [xid79(n, stamp=f"2026-01-01T00:00:0{i}Z") for i, n in enumerate(names)]
    publish(api, *events)
    ctl = make(api, tmp_path)
    ctl.reconcile_once()
    live = sorted(n["metadata"]["name"] for n in nodes.list_nodes(api) if nodes.is_cordoned(n))
    replayed = replay.run(ctl.cfg, [hevent.parse(e) for e in events], node_objects=None)
    assert sorted(replayed.quarantined()) == live


def test_replay_over_nodes_monitor_mode_recorded_cordons_them_as_enforcing_would(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    events = [xid79(names[0])]
    publish(api, *events)
    make(api, tmp_path, enforce=False).reconcile_once()
    recorded = nodes.list_nodes(api)
    assert quarantine.is_quarantined(next(n for n in recorded if n["metadata"]["name"] == names[0]))
    replayed = replay.run(make(api, tmp_path).cfg, [hevent.parse(e) for e in events], node_objects=recorded)
    assert replayed.document()["quarantined"] == [
        {"node": names[0], "ruleSets": ["GPU fatal error ruleset"], "cordoned": True}
    ]


def test_release_removes_only_what_nvsentinel_set(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    nodes.update(api, names[1], lambda n: not nodes.add_taint(n, "team/hold", "x", "NoSchedule"))
    publish(api, xid79(names[1]))
    make(api, tmp_path).reconcile_once()
    node = nodes.update(
        api,
        names[1],
        lambda n: quarantine.release(n, label_prefix="k8saas.nvidia.com/", stamp="2026-01-01T00:00:00.000000Z"),
    )
    assert node["spec"]["taints"] == [{"key": "team/hold", "value": "x", "effect": "NoSchedule"}]
    assert not nodes.is_cordoned(node)


def test_the_controller_loop_stops_cleanly_and_credentials_stay_out_of_logs(
    cluster: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import threading

    sim, api, names = cluster
    for name in ("shared.health", "shared.kube", "shared.nodes"):  # not the simulator's request log
        caplog.set_level(logging.DEBUG, logger=name)
    ctl = make(api, tmp_path)
    stop = threading.Event()
    worker = threading.Thread(target=ctl.run, args=(stop,))
    worker.start()
    try:
        publish(api, xid79(names[0]))
        waiting.until(lambda: nodes.is_cordoned(nodes.get(api, names[0])), what=f"{names[0]}'s cordon")
    finally:
        stop.set()
        worker.join(timeout=waiting.REAL_SECONDS)
    assert not worker.is_alive()
    assert nodes.is_cordoned(nodes.get(api, names[0]))
    assert sim.identities.admin_token not in caplog.text


def test_two_breakers_on_many_threads_admit_exactly_the_threshold(cluster: Any) -> None:
    """Two breaker objects (two processes, as far as the ConfigMap knows) and 12 threads race for
    slots: exactly the threshold of distinct nodes is admitted, the next trips it, and a released
    slot leaves the window."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from shared.health import settings

    sim, api, _ = cluster
    sim.add_gpu_nodes(4)  # 8 GPU nodes, 50 % → 4 slots
    settings = settings.CircuitBreaker(percentage=50)
    pair = [
        breaker.ConfigMapBreaker(
            api, namespace="nvsentinel", settings=settings, gpu_node_label="", now=clock.for_api_client(api).now
        )
        for _ in range(2)
    ]
    start = threading.Barrier(12)

    def race(i: int) -> bool:
        start.wait()
        return pair[i % 2].reserve(f"racer-{i:02d}").admitted

    with ThreadPoolExecutor(12) as pool:
        admitted = sum(pool.map(race, range(12)))
    status = pair[0].status()
    assert admitted == 4 == len(status.recent) and status.state == breaker.TRIPPED
    pair[1].release(sorted(status.recent)[0])
    assert len(pair[0].status().recent) == 3
