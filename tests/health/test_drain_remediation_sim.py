"""Drain and remediation after a quarantine, on the simulated cluster in virtual time.

Covers: Immediate drain evicts exactly the quarantined node's pods and leaves DaemonSet pods and
system namespaces; a PodDisruptionBudget blocks the eviction, the drain backs off in cluster time
and finishes once the budget allows; AllowCompletion waits for the pod to finish; a partial drain
moves only the pods of the impacted GPU; monitor mode drains nothing; Xid 79 end to end: quarantine
→ drain → RebootNode → the simulated node reboots → the fault is gone, the node stays quarantined
until a healthy event; two events for one repair create one RebootNode; CONTACT_SUPPORT labels the
node remediation-failed with an Event and creates nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared import clock, nodes
from shared.health import config, controller, quarantine, resource
from shared.health import event as hevent
from shared.kube import rest
from shared.sim.gpu import fabric
from tests import waiting
from tests.health.test_offline import SEED_VALUES

IMMEDIATE = """
node-drainer:
  userNamespaces: [{name: "*", mode: Immediate}]
"""
REBOOTS = rest.group_path("janitor.dgxc.nvidia.com", "v1alpha1", "rebootnodes")


@pytest.fixture()
def cluster(gpu_sim: Any, api_client: Any) -> Iterator[tuple[Any, Any, list[str]]]:
    names = gpu_sim.add_gpu_nodes(3)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    controller.ensure_namespace(api_client, "team")
    yield gpu_sim, api_client, names


def make(
    api: Any, tmp_path: Path, extra: str = IMMEDIATE, *, enforce: bool = True, seed: bool = True
) -> controller.Controller:
    path = tmp_path / "values.yaml"
    path.write_text((SEED_VALUES if seed else "") + extra)
    clk = clock.for_api_client(api, max_age=0)
    return controller.Controller(api, config.load(path, enforce=enforce), namespace="nvsentinel", clk=clk)


def pod(
    api: Any,
    namespace: str,
    name: str,
    node: str,
    *,
    labels: dict[str, str] | None = None,
    gpu: str | None = None,
    seconds: int = 100000,
) -> None:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {"app": name}}
    if gpu:
        meta["annotations"] = {"dgxc.nvidia.com/devices": json.dumps({"devices": {"nvidia.com/gpu": [gpu]}})}
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox", "command": ["sleep", str(seconds)]}],
        },
    }
    rest.create(api, rest.core_path("pods", namespace), body)


def daemonset_pod(api: Any, namespace: str, node: str) -> str:
    """A real DaemonSet placed on ``node`` alone; the name of the pod its controller makes there."""
    labels = {"app": "exporter"}
    rest.create(
        api,
        rest.group_path("apps", "v1", "daemonsets", namespace),
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "exporter", "namespace": namespace},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "nodeSelector": {"kubernetes.io/hostname": node},
                        "containers": [{"name": "main", "image": "busybox"}],
                    },
                },
            },
        },
    )
    made = waiting.until(
        lambda: rest.list_items(api, rest.core_path("pods", namespace), label_selector="app=exporter"),
        what="the DaemonSet controller's pod",
    )
    return str(made[0]["metadata"]["name"])


def pods_on(api: Any, node: str) -> list[str]:
    items = rest.list_items(api, rest.core_path("pods"), field_selector=f"spec.nodeName={node}")
    return sorted(
        f"{p['metadata']['namespace']}/{p['metadata']['name']}"
        for p in items
        if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    )


def event(
    node: str,
    *,
    action: str = "RESTART_BM",
    uuid: str = "GPU-1",
    healthy: bool = False,
    stamp: str = "2026-01-01T00:00:00Z",
    check: str = "GpuXidError",
) -> hevent.HealthEvent:
    data: dict[str, Any] = {
        "agent": "gpu-health-monitor",
        "componentClass": "GPU",
        "checkName": check,
        "isFatal": not healthy,
        "isHealthy": healthy,
        "recommendedAction": "NONE" if healthy else action,
        "errorCode": ["79"],
        "entitiesImpacted": [{"entityType": "GPU_UUID", "entityValue": uuid}],
        "nodeName": node,
        "generatedTimestamp": stamp,
        "message": "GPU has fallen off the bus.",
    }
    return hevent.parse(data)


def publish(api: Any, *events: hevent.HealthEvent) -> None:
    resource.publish(api, list(events), now=clock.WALL.now)


def status_of(api: Any, node: str) -> list[resource.Status]:
    return [s.status for s in resource.list_events(api, node=node)]


def test_an_immediate_drain_evicts_exactly_that_nodes_pods_and_leaves_daemonsets(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    pod(api, "team", "trainer", names[0])
    exporter = daemonset_pod(api, "team", names[0])
    pod(api, "kube-system", "proxy", names[0])
    pod(api, "team", "other", names[1])
    publish(api, event(names[0]))
    result = make(api, tmp_path, IMMEDIATE + "fault-remediation: {enabled: false}\n").reconcile_once()
    assert result.followups == {"drain:Succeeded": 1}
    assert pods_on(api, names[0]) == ["kube-system/proxy", f"team/{exporter}"]
    assert pods_on(api, names[1]) == ["team/other"]
    assert nodes.labels(nodes.get(api, names[0]))[quarantine.STATE_LABEL] == "drain-succeeded"


def test_a_disruption_budget_blocks_the_eviction_and_the_drain_retries_after_backoff(
    cluster: Any, tmp_path: Path
) -> None:
    sim, api, names = cluster
    pod(api, "team", "db", names[0], labels={"app": "db"})
    rest.create(
        api,
        "/apis/policy/v1/namespaces/team/poddisruptionbudgets",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "db", "namespace": "team"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
        },
    )
    sim.advance(5)  # the pod is Running and Ready, the budget counts it
    publish(api, event(names[0]))
    ctl = make(api, tmp_path, IMMEDIATE + "fault-remediation: {enabled: false}\n")
    assert ctl.reconcile_once().followups == {"drain:InProgress": 1}
    drain = status_of(api, names[0])[0].drain
    assert drain is not None and drain.attempts == 1 and drain.pending == ["team/db"]
    assert "disruption budget" in drain.message
    assert ctl.reconcile_once().followups == {}  # inside the 10 s backoff: no new attempt
    rest.delete(api, "/apis/policy/v1/namespaces/team/poddisruptionbudgets/db")
    sim.advance(11)
    assert ctl.reconcile_once().followups == {"drain:Succeeded": 1}
    assert pods_on(api, names[0]) == []


def test_allow_completion_waits_for_the_pod_to_finish(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    pod(api, "team", "job", names[0], seconds=60)
    sim.advance(3)
    publish(api, event(names[0]))
    ctl = make(api, tmp_path, "fault-remediation: {enabled: false}\n")
    assert ctl.reconcile_once().followups == {"drain:InProgress": 1}
    assert pods_on(api, names[0]) == ["team/job"]
    sim.advance(120)
    assert ctl.reconcile_once().followups == {"drain:Succeeded": 1}


def test_a_partial_drain_moves_only_the_pods_of_the_impacted_gpu(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    pod(api, "team", "on-gpu-3", names[0], gpu="GPU-3")
    pod(api, "team", "on-gpu-4", names[0], gpu="GPU-4")
    publish(api, event(names[0], action="COMPONENT_RESET", uuid="GPU-3"))
    make(api, tmp_path, IMMEDIATE + "fault-remediation: {enabled: false}\n").reconcile_once()
    assert pods_on(api, names[0]) == ["team/on-gpu-4"]


def test_monitor_mode_drains_and_remediates_nothing(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    pod(api, "team", "trainer", names[0])
    publish(api, event(names[0]))
    assert make(api, tmp_path, enforce=False).reconcile_once().followups == {}
    assert pods_on(api, names[0]) == ["team/trainer"]
    assert rest.list_items(api, REBOOTS) == []


def test_switching_to_enforcing_never_drains_an_uncordoned_monitor_record_and_the_next_event_enforces_it(
    cluster: Any, tmp_path: Path
) -> None:
    _, api, names = cluster
    pod(api, "team", "trainer", names[0])
    publish(api, event(names[0]))
    assert make(api, tmp_path, enforce=False).reconcile_once().followups == {}
    enforcing = make(api, tmp_path)
    enforcing.reconcile_once()  # a restart with --enforce: the old record is not acted on
    node = nodes.get(api, names[0])
    assert quarantine.is_quarantined(node) and not quarantine.is_enforced(node)
    assert not nodes.is_cordoned(node)
    assert pods_on(api, names[0]) == ["team/trainer"]
    assert rest.list_items(api, REBOOTS) == []
    publish(api, event(names[0], stamp="2026-01-01T00:05:00Z"))  # the same fault, seen again
    result = enforcing.reconcile_once()
    assert result.phases.get("Quarantined") == 1
    node = nodes.get(api, names[0])
    assert nodes.is_cordoned(node) and quarantine.is_enforced(node)
    assert pods_on(api, names[0]) == []
    assert len(rest.list_items(api, REBOOTS)) == 1


def test_xid_79_end_to_end_reboots_the_node_and_the_fault_clears(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    sim.fabric.inject(fabric.parse_all([f"{names[2]}:xid=79"]))
    root = sim.noderoot.root
    from shared.health import xid

    log = (root / names[2] / "kern.log").read_text()
    publish(api, *xid.events_from_text(log, node=names[2], now=clock.WALL.now()))
    ctl = make(api, tmp_path, seed=False)  # the default values' Syslog rule set
    first = ctl.reconcile_once()
    assert first.phases == {"Quarantined": 1}
    assert first.followups == {"drain:Succeeded": 1, "remediation:InProgress": 1}
    [reboot] = rest.list_items(api, REBOOTS)
    assert reboot["spec"] == {"nodeName": names[2]}
    boot_before = nodes.get(api, names[2])["status"]["nodeInfo"]["bootID"]
    sim.advance(300)
    assert ctl.reconcile_once().followups == {"remediation:Succeeded": 1}
    node = nodes.get(api, names[2])
    assert node["status"]["nodeInfo"]["bootID"] != boot_before
    assert (
        json.loads((root / names[2] / "dcgm-health.json").read_text())["body"]["Overall Health"]["value"] == "Healthy"
    )
    assert nodes.is_cordoned(node) and node["metadata"]["labels"][quarantine.STATE_LABEL] == "remediation-succeeded"
    ev = resource.list_events(api, node=names[2])[0].event
    publish(
        api,
        ev.model_copy(
            update={
                "isHealthy": True,
                "isFatal": False,
                "generatedTimestamp": None,
                "recommendedAction": hevent.RecommendedAction.NONE,
            }
        ),
    )
    assert ctl.reconcile_once().phases == {"UnQuarantined": 1}
    assert not nodes.is_cordoned(nodes.get(api, names[2]))


def test_two_events_for_one_repair_create_one_reboot(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    publish(api, event(names[0], uuid="GPU-1"), event(names[0], uuid="GPU-2", stamp="2026-01-01T00:00:05Z"))
    result = make(api, tmp_path).reconcile_once()
    assert result.followups["remediation:InProgress"] == 2
    assert len(rest.list_items(api, REBOOTS)) == 1
    assert {s.remediation.object for s in status_of(api, names[0]) if s.remediation} == {
        rest.list_items(api, REBOOTS)[0]["metadata"]["name"]
    }


def test_contact_support_labels_the_node_remediation_failed_and_raises_an_event(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    publish(api, event(names[1], action="CONTACT_SUPPORT"))
    assert make(api, tmp_path).reconcile_once().followups == {"drain:Succeeded": 1, "remediation:Unsupported": 1}
    assert nodes.labels(nodes.get(api, names[1]))[quarantine.STATE_LABEL] == "remediation-failed"
    assert rest.list_items(api, REBOOTS) == []
    reasons = [
        e["reason"]
        for e in rest.list_items(api, rest.core_path("events", "default"))
        if e["involvedObject"]["name"] == names[1]
    ]
    assert "RemediationFailed" in reasons
