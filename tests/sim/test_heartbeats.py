"""Node heartbeats and the node lifecycle controller, over HTTP in virtual time.

Covers: a node Lease's ``renewTime`` advances in 10 s steps and Ready's ``lastHeartbeatTime`` in
5 min steps, computed on read — the resourceVersion stays, nothing is written, a watch sees no
event, and a client that updates the Lease it read gets no conflict; conditions other than the
kubelet's are left alone; with the kubelets off nodes read as written; a node whose kubelet
stops goes ``Unknown`` (``NodeStatusUnknown``, ``Kubelet stopped posting node status.``) with the
unreachable taints after the 50 s grace period — a real write a watch sees — and comes back
Ready without them; a reboot goes NotReady, then Unknown, then Ready. Reference:
kubernetes:pkg/kubelet/nodelease, pkg/kubelet/kubelet_node_status.go,
pkg/controller/nodelifecycle/node_lifecycle_controller.go.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

from kubernetes import client as k8s
from kubernetes import watch

from shared.sim import SimServer
from shared.sim.apiserver.controllers import heartbeats
from shared.sim.gpu import stages
from tests.sim.workloadkit import cluster_nodes_fixture  # noqa: F401 - the fixture

LEASES = "kube-node-lease"
UNREACHABLE = {("node.kubernetes.io/unreachable", "NoSchedule"), ("node.kubernetes.io/unreachable", "NoExecute")}


def _lease(api: Any, node: str) -> Any:
    return k8s.CoordinationV1Api(api).read_namespaced_lease(node, LEASES)


def _ready(api: Any, node: str) -> Any:
    found = k8s.CoreV1Api(api).read_node(node)
    return next(c for c in found.status.conditions if c.type == "Ready")


def _taints(api: Any, node: str) -> set[tuple[str, str]]:
    return {(t.key, t.effect) for t in k8s.CoreV1Api(api).read_node(node).spec.taints or []}


def test_a_node_lease_renews_every_ten_seconds_without_a_write(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    before = _lease(api_client, cluster_nodes[0])
    assert (before.spec.holder_identity, before.spec.lease_duration_seconds) == (cluster_nodes[0], 40)
    written = sim.store.resource_version
    sim.advance(25)
    after = _lease(api_client, cluster_nodes[0])
    assert after.spec.renew_time - before.spec.renew_time == timedelta(seconds=20)
    assert after.metadata.resource_version == before.metadata.resource_version
    assert sim.store.resource_version == written  # computed on read: 10,000 nodes cost no writes
    listed = k8s.CoordinationV1Api(api_client).list_namespaced_lease(LEASES).items
    assert {lease.spec.renew_time for lease in listed} == {after.spec.renew_time}
    raw = api_client.call_api(
        f"/apis/coordination.k8s.io/v1/namespaces/{LEASES}/leases/{cluster_nodes[0]}",
        "GET",
        auth_settings=["BearerToken"],
        _preload_content=False,
    )[0].data.decode()
    assert after.spec.renew_time.strftime('"renewTime":"%Y-%m-%dT%H:%M:%S.%fZ"') in raw  # MicroTime


def test_a_client_updates_the_lease_it_read_without_a_conflict(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    leases = k8s.CoordinationV1Api(api_client)
    sim.advance(35)
    lease = _lease(api_client, cluster_nodes[1])
    lease.metadata.labels = {"seen": "yes"}
    updated = leases.replace_namespaced_lease(cluster_nodes[1], LEASES, lease)
    assert updated.metadata.resource_version != lease.metadata.resource_version
    assert updated.spec.renew_time == lease.spec.renew_time
    sim.advance(10)
    assert _lease(api_client, cluster_nodes[1]).spec.renew_time == lease.spec.renew_time + timedelta(seconds=10)


def test_ready_heartbeats_move_every_five_minutes_and_other_conditions_stay(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    core = k8s.CoreV1Api(api_client)
    node = cluster_nodes[0]
    custom = {
        "type": "GpuHealthy",
        "status": "True",
        "reason": "Fine",
        "lastHeartbeatTime": "2026-01-01T00:00:00Z",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    core.patch_node_status(node, {"status": {"conditions": [custom]}})
    first = _ready(api_client, node)
    sim.advance(299)
    assert _ready(api_client, node).last_heartbeat_time == first.last_heartbeat_time
    sim.advance(2)
    later = _ready(api_client, node)
    assert later.last_heartbeat_time - first.last_heartbeat_time == timedelta(minutes=5)
    assert later.last_transition_time == first.last_transition_time
    gpu = next(c for c in core.read_node(node).status.conditions if c.type == "GpuHealthy")
    assert gpu.last_heartbeat_time.isoformat() == "2026-01-01T00:00:00+00:00"
    listed = next(n for n in core.list_node().items if n.metadata.name == node)
    assert (
        next(c for c in listed.status.conditions if c.type == "Ready").last_heartbeat_time == later.last_heartbeat_time
    )


def test_a_stopped_kubelet_makes_the_node_unknown_and_unreachable_after_the_grace_period(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    node = cluster_nodes[2]
    sim.advance(17)
    sim.kubelet.stop_node(node)
    last_renewal = _lease(api_client, node).spec.renew_time
    stopped_at = datetime.fromtimestamp(sim.vclock.time(), last_renewal.tzinfo)
    grace = (last_renewal + timedelta(seconds=heartbeats.GRACE_PERIOD) - stopped_at).total_seconds()
    sim.advance(grace - 0.5)
    assert _ready(api_client, node).status == "True" and not _taints(api_client, node)
    sim.advance(1)
    ready = _ready(api_client, node)
    assert (ready.status, ready.reason, ready.message) == (
        "Unknown",
        "NodeStatusUnknown",
        "Kubelet stopped posting node status.",
    )
    assert _taints(api_client, node) == UNREACHABLE
    sim.advance(600)
    assert _lease(api_client, node).spec.renew_time == last_renewal  # no more renewals
    events = k8s.CoreV1Api(api_client).list_namespaced_event("default", field_selector=f"involvedObject.name={node}")
    assert [(e.reason, e.message, e.source.component) for e in events.items] == [
        ("NodeNotReady", f"Node {node} status is now: NodeNotReady", "node-controller")
    ]
    sim.kubelet.start_node(node)
    sim.kubelet.settle()
    ready = _ready(api_client, node)
    assert (ready.status, ready.reason) == ("True", "KubeletReady") and not _taints(api_client, node)
    now = datetime.fromtimestamp(sim.vclock.time(), last_renewal.tzinfo)
    assert abs((_lease(api_client, node).spec.renew_time - now).total_seconds()) < 1


def test_a_watch_sees_the_node_change_state_and_no_heartbeat(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    core = k8s.CoreV1Api(api_client)
    version = core.list_node().metadata.resource_version
    seen: list[tuple[str, str, str]] = []

    def follow() -> None:
        for event in watch.Watch().stream(core.list_node, resource_version=version, timeout_seconds=4):
            ready = next(c for c in event["object"].status.conditions if c.type == "Ready")
            seen.append((event["type"], event["object"].metadata.name, ready.status))

    watcher = threading.Thread(target=follow)
    watcher.start()
    sim.advance(900)  # three status reports and 90 lease renewals: none is an event
    sim.kubelet.stop_node(cluster_nodes[0])
    sim.advance(60)
    watcher.join(timeout=60)  # the server ends the watch after 4 s; generous for a busy machine
    assert not watcher.is_alive()
    assert seen and all(e == ("MODIFIED", cluster_nodes[0], "Unknown") for e in seen)


def test_with_the_kubelets_off_nodes_and_leases_read_as_written(sim: SimServer, api_client: Any) -> None:
    (node,) = sim.add_nodes(1)
    before = _lease(api_client, node).spec.renew_time
    sim.vclock.advance(3600)
    assert _lease(api_client, node).spec.renew_time == before
    assert _ready(api_client, node).status == "True"


def test_a_reboot_goes_not_ready_then_unknown_then_ready(gpu_sim: SimServer, api_client: Any) -> None:
    (node,) = gpu_sim.add_gpu_nodes(1)
    body = {
        "apiVersion": "janitor.dgxc.nvidia.com/v1alpha1",
        "kind": "RebootNode",
        "metadata": {"name": "fix"},
        "spec": {"nodeName": node},
    }
    k8s.CustomObjectsApi(api_client).create_cluster_custom_object(
        "janitor.dgxc.nvidia.com", "v1alpha1", "rebootnodes", body
    )
    timings = stages.repair().reboot
    gpu_sim.advance(timings.signalSeconds + 1)
    assert _ready(api_client, node).status == "False"
    assert _taints(api_client, node) == {
        ("node.kubernetes.io/not-ready", "NoSchedule"),
        ("node.kubernetes.io/not-ready", "NoExecute"),
    }
    gpu_sim.advance(heartbeats.GRACE_PERIOD + 1)
    assert _ready(api_client, node).reason == "NodeStatusUnknown"
    pressure = next(
        c for c in k8s.CoreV1Api(api_client).read_node(node).status.conditions if c.type == "MemoryPressure"
    )
    assert pressure.status == "Unknown"
    assert _taints(api_client, node) == UNREACHABLE  # swapped for the not-ready ones
    gpu_sim.advance(timings.downSeconds)
    assert _ready(api_client, node).status == "True" and not _taints(api_client, node)
    pressure = next(
        c for c in k8s.CoreV1Api(api_client).read_node(node).status.conditions if c.type == "MemoryPressure"
    )
    assert (pressure.status, pressure.reason) == ("False", "KubeletHasSufficientMemory")
