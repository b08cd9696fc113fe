"""The Kubernetes Events nvsentinel records while it quarantines, drains and remediates (simulated cluster).

Covers: an Xid 79 end to end leaves, on the node, ``NodeQuarantined`` (rule set and taint named),
``DrainStarted``, ``PodEvicted``, ``DrainCompleted``, ``RemediationCreated`` (naming the RebootNode) and, after the
reboot, ``RemediationSucceeded``, each with the node's real uid, and ``Evicted`` on the pod in its own
namespace naming the node; ``kubectl describe node`` lists them in its Events section; a healthy event
gives ``NodeUnquarantined``; the breaker's refusal is a Warning ``QuarantineSkipped`` with its reason
and monitor mode a Normal one; a drain waiting on a pod counts upstream's ``AwaitingPodCompletion``
up across passes instead of writing new Events; an eviction held by a PodDisruptionBudget is one
Warning ``EvictionBlocked`` naming the budget, counted up over a long hold (one object, count =
attempts), then ``PodEvicted`` once the budget goes; a drain past ``deleteAfterTimeoutMinutes`` says
``DrainTimedOut`` before it deletes; CONTACT_SUPPORT and exhausted attempts are Warnings; a
controller whose identity may not write Events still quarantines and drains, and logs one warning.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shared import nodes
from shared.health import controller, resource
from shared.kube import client, rest
from tests.health.test_drain_remediation_sim import IMMEDIATE, REBOOTS, event, make, pod, publish
from tests.simfixtures import Kubectl


@pytest.fixture()
def cluster(gpu_sim: Any, api_client: Any) -> Iterator[tuple[Any, Any, list[str]]]:
    names = gpu_sim.add_gpu_nodes(3)
    resource.install(api_client)
    for namespace in ("nvsentinel", "team"):
        controller.ensure_namespace(api_client, namespace)
    yield gpu_sim, api_client, names


def node_events(api: Any, node: str) -> list[dict[str, Any]]:
    return sorted(
        (
            e
            for e in rest.list_items(api, rest.core_path("events", "default"))
            if e["involvedObject"]["kind"] == "Node" and e["involvedObject"]["name"] == node
        ),
        key=lambda e: e["metadata"]["name"],
    )


def reasons(api: Any, node: str) -> list[str]:
    return [e["reason"] for e in node_events(api, node)]


def one(api: Any, node: str, reason: str) -> dict[str, Any]:
    [found] = [e for e in node_events(api, node) if e["reason"] == reason]
    return found


def test_an_xid_79_leaves_a_trail_of_events_on_the_node_with_its_real_uid(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    pod(api, "team", "trainer", names[0])
    publish(api, event(names[0]))
    ctl = make(api, tmp_path, IMMEDIATE)
    ctl.reconcile_once()
    sim.advance(300)  # the RebootNode is carried out
    ctl.reconcile_once()
    assert reasons(api, names[0]) == [
        "NodeQuarantined",
        "DrainStarted",
        "PodEvicted",
        "DrainCompleted",
        "RemediationCreated",
        "RemediationSucceeded",
    ]
    uid = nodes.get(api, names[0])["metadata"]["uid"]
    assert {e["involvedObject"]["uid"] for e in node_events(api, names[0])} == {uid}
    quarantined = one(api, names[0], "NodeQuarantined")
    assert quarantined["type"] == "Normal"
    assert quarantined["source"]["component"] == "nvsentinel-fault-quarantine"
    assert quarantined["message"].startswith("GpuXidError (error 79, GPU_UUID GPU-1): rule set ")
    assert "cordoned, tainted " in quarantined["message"]
    assert one(api, names[0], "DrainStarted")["message"].endswith("moving 1 pod(s): team/trainer")
    assert (
        one(api, names[0], "PodEvicted")["message"] == "Evicted team/trainer for GpuXidError (error 79, GPU_UUID GPU-1)"
    )
    [reboot] = rest.list_items(api, REBOOTS)
    created = one(api, names[0], "RemediationCreated")
    assert f"created RebootNode {reboot['metadata']['name']} for RESTART_BM (attempt 1 of " in created["message"]
    assert created["source"]["component"] == "nvsentinel-fault-remediation"
    [evicted] = [e for e in rest.list_items(api, rest.core_path("events", "team")) if e["reason"] == "Evicted"]
    assert evicted["involvedObject"]["kind"] == "Pod" and evicted["involvedObject"]["name"] == "trainer"
    assert evicted["message"] == f"Evicted from node {names[0]} by its drain for GpuXidError (error 79, GPU_UUID GPU-1)"


def test_kubectl_describe_node_lists_the_quarantine_and_drain_events(
    cluster: Any, tmp_path: Path, kubectl: Kubectl
) -> None:
    _, api, names = cluster
    pod(api, "team", "trainer", names[1])
    publish(api, event(names[1]))
    make(api, tmp_path, IMMEDIATE + "fault-remediation: {enabled: false}\n").reconcile_once()
    described = kubectl("describe", "node", names[1]).stdout
    section = described.split("\nEvents:\n", 1)[1]
    header, *rows = [line.split() for line in section.splitlines() if line.strip()]
    assert header == ["Type", "Reason", "Age", "From", "Message"]
    listed = {(row[0], row[1], row[3].rstrip(",")) for row in rows[1:]}  # rows[0] is the dashes
    assert {
        ("Normal", "NodeQuarantined", "nvsentinel-fault-quarantine"),
        ("Normal", "DrainStarted", "nvsentinel-node-drainer"),
        ("Normal", "DrainCompleted", "nvsentinel-node-drainer"),
    } <= listed


def test_a_healthy_event_releases_the_node_with_an_event(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    publish(api, event(names[2]))
    ctl = make(api, tmp_path, "node-drainer: {enabled: false}\nfault-remediation: {enabled: false}\n")
    ctl.reconcile_once()
    publish(api, event(names[2], healthy=True, stamp="2026-01-01T00:10:00Z"))
    assert ctl.reconcile_once().phases == {"UnQuarantined": 1}
    released = one(api, names[2], "NodeUnquarantined")
    assert released["message"] == (
        "healthy GpuXidError (error 79, GPU_UUID GPU-1) from gpu-health-monitor cleared the last cause: released"
    )


def test_the_breakers_refusal_is_a_warning_naming_its_reason(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster  # three nodes, the seed's breaker at 50 %: two quarantines
    publish(api, *(event(n, stamp=f"2026-01-01T00:00:0{i}Z") for i, n in enumerate(names)))
    result = make(api, tmp_path, "node-drainer: {enabled: false}\nfault-remediation: {enabled: false}\n")
    assert result.reconcile_once().phases == {"Quarantined": 2, "Blocked": 1}
    skipped = one(api, names[2], "QuarantineSkipped")
    assert skipped["type"] == "Warning"
    assert "matched, but the circuit breaker is TRIPPED (2 quarantine(s) per 5m); not cordoned" in skipped["message"]
    assert reasons(api, names[0]) == ["NodeQuarantined"]


def test_monitor_mode_says_what_it_would_have_done(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    publish(api, event(names[0]))
    make(api, tmp_path, enforce=False).reconcile_once()
    skipped = one(api, names[0], "QuarantineSkipped")
    assert (skipped["type"], skipped["message"].endswith("matched; monitor mode, not cordoned")) == ("Normal", True)
    assert not nodes.is_cordoned(nodes.get(api, names[0]))


def test_a_drain_waiting_on_a_pod_counts_one_event_up_across_passes(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    pod(api, "team", "job", names[0], seconds=600)
    sim.advance(3)
    publish(api, event(names[0]))
    ctl = make(api, tmp_path, "fault-remediation: {enabled: false}\n")  # the default mode: AllowCompletion
    for _ in range(3):
        ctl.reconcile_once()
        sim.advance(20)
    waiting = one(api, names[0], "AwaitingPodCompletion")
    assert waiting["message"] == "Waiting for following pods to finish: [team/job]"
    assert waiting["count"] == 3
    assert waiting["lastTimestamp"] > waiting["firstTimestamp"]


def budget(api: Any, name: str = "db") -> None:
    rest.create(
        api,
        "/apis/policy/v1/namespaces/team/poddisruptionbudgets",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "team"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
        },
    )


def test_an_eviction_held_by_a_budget_is_one_warning_counted_up_over_a_long_hold(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    pod(api, "team", "db", names[0], labels={"app": "db"})
    budget(api, "db-quorum")
    sim.advance(5)
    publish(api, event(names[0]))
    ctl = make(api, tmp_path, IMMEDIATE + "fault-remediation: {enabled: false}\n")
    passes = 0
    for _ in range(12):  # backoff 10 s doubling to 2 min: each advance passes the next attempt
        ctl.reconcile_once()
        passes += 1
        sim.advance(121)
    held = one(api, names[0], "EvictionBlocked")
    assert held["type"] == "Warning"
    assert held["message"] == "Eviction of team/db held by PodDisruptionBudget db-quorum; retrying"
    assert held["count"] == passes  # one attempt per pass, one object for all of them
    assert held["source"]["component"] == "nvsentinel-node-drainer"
    assert reasons(api, names[0]).count("EvictionBlocked") == 1
    drain = resource.list_events(api, node=names[0])[0].status.drain
    assert drain is not None and drain.attempts == passes and drain.state == "InProgress"
    rest.delete(api, "/apis/policy/v1/namespaces/team/poddisruptionbudgets/db-quorum")
    ctl.reconcile_once()
    assert reasons(api, names[0])[-2:] == ["PodEvicted", "DrainCompleted"]


def test_a_drain_past_its_timeout_says_so_on_the_node_before_deleting(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    pod(api, "team", "job", names[1], seconds=100000)
    sim.advance(3)
    publish(api, event(names[1]))
    values = (
        "node-drainer:\n  deleteAfterTimeoutMinutes: 1\n  userNamespaces: [{name: team, mode: DeleteAfterTimeout}]\n"
    )
    ctl = make(api, tmp_path, values + "fault-remediation: {enabled: false}\n")
    ctl.reconcile_once()
    assert "DrainTimedOut" not in reasons(api, names[1])
    sim.advance(61)
    ctl.reconcile_once()
    timed_out = one(api, names[1], "DrainTimedOut")
    assert timed_out["type"] == "Warning"
    assert timed_out["message"] == (
        "GpuXidError (error 79, GPU_UUID GPU-1): deleteAfterTimeoutMinutes (1) passed, deleting 1 pod(s): team/job"
    )
    assert reasons(api, names[1])[-1] == "DrainCompleted"


def test_remediation_for_people_and_exhausted_attempts_are_warnings(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    publish(api, event(names[1], action="CONTACT_SUPPORT"))
    publish(api, event(names[2]))
    ctl = make(api, tmp_path, "fault-remediation: {maxRemediationAttempts: 1}\n")
    ctl.reconcile_once()
    support = one(api, names[1], "RemediationFailed")
    assert (support["type"], support["message"]) == (
        "Warning",
        "no automatic remediation for CONTACT_SUPPORT: GPU has fallen off the bus.",
    )
    sim.advance(300)  # the first reboot completes; the fault comes back on another GPU
    ctl.reconcile_once()
    publish(api, event(names[2], uuid="GPU-2", stamp="2026-01-01T00:20:00Z"))
    ctl.reconcile_once()
    exhausted = one(api, names[2], "RemediationAttemptsExhausted")
    assert exhausted["type"] == "Warning"
    assert exhausted["message"] == "1 remediation attempt(s) of group restart did not clear the fault"
    assert len(rest.list_items(api, REBOOTS)) == 1


CONTROLLER_RULES_WITHOUT_EVENTS = [
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "update"]},
    {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["update"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "delete"]},
    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create", "update"]},
    {"apiGroups": ["nvsentinel.nvidia.com"], "resources": ["healthevents"], "verbs": ["get", "list"]},
    {"apiGroups": ["nvsentinel.nvidia.com"], "resources": ["healthevents/status"], "verbs": ["update"]},
    {"apiGroups": ["janitor.dgxc.nvidia.com"], "resources": ["rebootnodes"], "verbs": ["get", "create"]},
]


def test_a_controller_that_may_not_write_events_still_does_its_work(
    cluster: Any,
    tmp_path: Path,
    sim_identity: Callable[[str, str], Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    sim, admin, names = cluster
    pod(admin, "team", "trainer", names[0])
    publish(admin, event(names[0]))
    config = sim_identity("nvsentinel", "no-events")
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    meta = {"name": "no-events"}
    role = {"kind": "ClusterRole", "metadata": meta, "rules": CONTROLLER_RULES_WITHOUT_EVENTS}
    rest.create(admin, f"{rbac}/clusterroles", role)
    rest.create(
        admin,
        f"{rbac}/clusterrolebindings",
        {
            "kind": "ClusterRoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "no-events"},
            "subjects": [{"kind": "ServiceAccount", "name": "no-events", "namespace": "nvsentinel"}],
        },
    )
    api = client.new_client(kubeconfig=config)
    try:
        with caplog.at_level(logging.WARNING, logger="shared.kube.events"):
            result = make(api, tmp_path, IMMEDIATE).reconcile_once()
    finally:
        client.close(api)
    assert result.phases == {"Quarantined": 1}
    assert result.followups == {"drain:Succeeded": 1, "remediation:InProgress": 1}
    assert nodes.is_cordoned(nodes.get(admin, names[0]))
    assert len(rest.list_items(admin, REBOOTS)) == 1
    assert node_events(admin, names[0]) == []
    who = "system:serviceaccount:nvsentinel:no-events"
    expected = {("create", "events", "default"), ("create", "events", "team")}
    deadline = time.monotonic() + 60  # the audit line of the last request may follow its answer (generous)
    while True:
        denied = {(r.verb, r.resource, r.namespace) for r in sim.audit.records(identity=who) if r.code == 403}
        if denied == expected or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert denied == expected
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2  # once per namespace for all of the controller's recorders, then quiet
    assert all("not recorded" in line and "forbidden" in line for line in warned)
