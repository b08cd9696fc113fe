"""The simulated scheduler and kubelet judge placement as kube-scheduler 1.34 and the kubelet do.

Driven over HTTP with the official client in virtual time. Messages are kube-scheduler's:
NodeResourcesFit's ``Insufficient <resource>``
(``k8s.io/kubernetes:pkg/scheduler/framework/plugins/noderesources/fit.go``), InterPodAffinity's
``node(s) didn't match pod anti-affinity rules`` / ``node(s) didn't satisfy existing pods
anti-affinity rules`` (``plugins/interpodaffinity/filtering.go``), PodTopologySpread's ``node(s)
didn't match pod topology spread constraints`` (``plugins/podtopologyspread/filtering.go``), each
counted per node and sorted into the FitError text (``pkg/scheduler/framework/types.go``), then
DefaultPreemption's verdict. The kubelet's admission fails a pod bound past its node's
allocatable ``OutOf<resource>`` and ignores an extended resource the node does not list
(``pkg/kubelet/lifecycle/predicate.go`` ``removeMissingExtendedResources``).
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from shared.sim import SimServer
from shared.sim.apiserver import podrequests

EFA = "vpc.amazonaws.com/efa"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"


def _pod(
    name: str,
    *,
    limits: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    node: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "busybox", "command": ["sleep", "3600"]}
    if limits:
        container["resources"] = {"limits": limits}
    body: dict[str, Any] = {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"restartPolicy": "Never", "containers": [container], **spec},
    }
    if node:
        body["spec"]["nodeName"] = node
    return body


def _unschedulable(core: Any, name: str) -> str:
    pod = core.read_namespaced_pod(name, "default")
    assert pod.status.phase == "Pending" and not pod.spec.node_name
    scheduled = next(c for c in pod.status.conditions if c.type == "PodScheduled")
    assert scheduled.status == "False" and scheduled.reason == "Unschedulable"
    return str(scheduled.message)


def _expected(total: int, reasons: list[str], preemption: list[str]) -> str:
    return (
        f"0/{total} nodes are available: {', '.join(sorted(reasons))}. "
        f"preemption: 0/{total} nodes are available: {', '.join(sorted(preemption))}."
    )


def _anti_affinity(key: str = "kubernetes.io/hostname") -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": "worker"}}, "topologyKey": key}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def test_a_pod_asking_for_an_extended_resource_no_node_has_stays_pending_with_an_event(
    gpu_sim: SimServer, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(2, gpu="h100")
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_pod("default", _pod("efa", limits={"nvidia.com/gpu": "8", EFA: "32"}))
    gpu_sim.advance(5)
    message = _unschedulable(core, "efa")
    assert message == _expected(2, [f"2 Insufficient {EFA}"], [f"2 {NO_VICTIMS}"])
    events = core.list_namespaced_event("default", field_selector="involvedObject.name=efa").items
    failed = [e for e in events if e.reason == "FailedScheduling"]
    assert len(failed) == 1 and failed[0].type == "Warning" and failed[0].message == message
    assert failed[0].source.component == "default-scheduler"


def test_an_extended_resource_used_up_by_other_pods_leaves_the_next_pending(
    gpu_sim: SimServer, api_client: Any
) -> None:
    names = gpu_sim.add_gpu_nodes(2, gpu="eks/h100")
    core = k8s.CoreV1Api(api_client)
    for index in range(2):
        core.create_namespaced_pod("default", _pod(f"full-{index}", limits={EFA: "32"}))
    gpu_sim.advance(5)
    placed = {core.read_namespaced_pod(f"full-{i}", "default").spec.node_name for i in range(2)}
    assert placed == set(names)
    core.create_namespaced_pod("default", _pod("one-more", limits={EFA: "1"}))
    core.create_namespaced_pod("default", _pod("cpu-hog", limits={"cpu": "193", "memory": "1Gi"}))
    gpu_sim.advance(5)
    assert _unschedulable(core, "one-more") == _expected(2, [f"2 Insufficient {EFA}"], [f"2 {NO_VICTIMS}"])
    assert _unschedulable(core, "cpu-hog") == _expected(2, ["2 Insufficient cpu"], [f"2 {NO_VICTIMS}"])
    core.delete_namespaced_pod("full-0", "default")
    gpu_sim.advance(5)
    assert core.read_namespaced_pod("one-more", "default").spec.node_name in names


def test_anti_affinity_puts_one_worker_per_node_and_leaves_the_fifth_pending(
    gpu_sim: SimServer, api_client: Any
) -> None:
    names = gpu_sim.add_gpu_nodes(4, gpu="h100")
    core = k8s.CoreV1Api(api_client)
    for index in range(5):
        body = _pod(
            f"worker-{index}", limits={"nvidia.com/gpu": "1"}, labels={"app": "worker"}, affinity=_anti_affinity()
        )
        core.create_namespaced_pod("default", body)
    gpu_sim.advance(5)
    nodes = [core.read_namespaced_pod(f"worker-{i}", "default").spec.node_name for i in range(5)]
    # Without the rule the one-GPU pods would all pack onto the first node.
    assert sorted(n for n in nodes if n) == sorted(names)
    pending = f"worker-{nodes.index(None)}"
    assert _unschedulable(core, pending) == _expected(
        4, ["4 node(s) didn't match pod anti-affinity rules"], [f"4 {NO_VICTIMS}"]
    )
    core.delete_namespaced_pod(f"worker-{nodes.index(names[2])}", "default")
    gpu_sim.advance(5)
    assert core.read_namespaced_pod(pending, "default").spec.node_name == names[2]


def test_anti_affinity_over_a_node_label_keeps_pods_apart_by_that_label(gpu_sim: SimServer, api_client: Any) -> None:
    names = gpu_sim.add_gpu_nodes(4, racks=2, gpu="h100")
    core = k8s.CoreV1Api(api_client)
    rack = "topology.kubernetes.io/rack"
    for index in range(3):
        body = _pod(f"worker-{index}", labels={"app": "worker"}, affinity=_anti_affinity(rack))
        core.create_namespaced_pod("default", body)
    gpu_sim.advance(5)
    racks = {n.metadata.name: n.metadata.labels[rack] for n in core.list_node().items if n.metadata.name in names}
    placed = [core.read_namespaced_pod(f"worker-{i}", "default").spec.node_name for i in range(3)]
    assert placed.count(None) == 1
    assert len({racks[n] for n in placed if n}) == 2
    assert _unschedulable(core, f"worker-{placed.index(None)}") == _expected(
        4, ["4 node(s) didn't match pod anti-affinity rules"], [f"4 {NO_VICTIMS}"]
    )


def test_an_existing_pods_anti_affinity_keeps_a_matching_newcomer_off_its_node(
    gpu_sim: SimServer, api_client: Any
) -> None:
    names = gpu_sim.add_gpu_nodes(1, gpu="h100")
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_pod("default", _pod("loner", node=names[0], affinity=_anti_affinity()))
    core.create_namespaced_pod("default", _pod("worker", labels={"app": "worker"}))
    gpu_sim.advance(5)
    assert _unschedulable(core, "worker") == _expected(
        1, ["1 node(s) didn't satisfy existing pods anti-affinity rules"], [f"1 {NO_VICTIMS}"]
    )


def test_topology_spread_refuses_a_node_that_would_exceed_the_skew(gpu_sim: SimServer, api_client: Any) -> None:
    names = gpu_sim.add_gpu_nodes(2, gpu="h100")
    core = k8s.CoreV1Api(api_client)
    for index in range(2):
        core.create_namespaced_pod("default", _pod(f"there-{index}", labels={"app": "s"}, node=names[0]))
    core.patch_node(names[1], {"spec": {"unschedulable": True}})
    constraint = {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "s"}},
    }
    core.create_namespaced_pod("default", _pod("spread", labels={"app": "s"}, topologySpreadConstraints=[constraint]))
    gpu_sim.advance(5)
    assert _unschedulable(core, "spread") == _expected(
        2,
        ["1 node(s) didn't match pod topology spread constraints", "1 node(s) were unschedulable"],
        [f"1 {NO_VICTIMS}", f"1 {NOT_HELPFUL}"],
    )
    core.patch_node(names[1], {"spec": {"unschedulable": False}})
    gpu_sim.advance(5)
    assert core.read_namespaced_pod("spread", "default").spec.node_name == names[1]


def test_topology_spread_over_a_label_no_node_has_is_unresolvable(gpu_sim: SimServer, api_client: Any) -> None:
    gpu_sim.add_gpu_nodes(2, gpu="h100")
    core = k8s.CoreV1Api(api_client)
    constraint = {
        "maxSkew": 1,
        "topologyKey": "example.com/block",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "s"}},
    }
    soft = {**constraint, "whenUnsatisfiable": "ScheduleAnyway"}
    core.create_namespaced_pod("default", _pod("hard", labels={"app": "s"}, topologySpreadConstraints=[constraint]))
    core.create_namespaced_pod("default", _pod("soft", labels={"app": "s"}, topologySpreadConstraints=[soft]))
    gpu_sim.advance(5)
    assert _unschedulable(core, "hard") == _expected(
        2, ["2 node(s) didn't match pod topology spread constraints (missing required label)"], [f"2 {NOT_HELPFUL}"]
    )
    assert core.read_namespaced_pod("soft", "default").spec.node_name


@pytest.mark.parametrize(
    ("profile", "efa", "phase", "reason"),
    [("eks/h100", "33", "Failed", f"OutOf{EFA}"), ("h100", "4", "Running", None)],
    ids=["listed-but-short", "not-listed"],
)
def test_the_kubelet_admits_a_bound_pod_by_what_its_node_lists(
    gpu_sim: SimServer, api_client: Any, profile: str, efa: str, phase: str, reason: str | None
) -> None:
    names = gpu_sim.add_gpu_nodes(1, gpu=profile)
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_pod("default", _pod("bound", limits={EFA: efa}, node=names[0]))
    gpu_sim.advance(30)
    pod = core.read_namespaced_pod("bound", "default")
    assert pod.status.phase == phase and pod.status.reason == reason
    if reason:
        assert pod.status.message == (
            f"Pod was rejected: Node didn't have enough resource: {EFA}, requested: 33, used: 0, capacity: 32"
        )


def test_a_pods_effective_request_counts_init_containers_sidecars_and_overhead() -> None:
    """``component-helpers:resource/helpers.go`` ``PodRequests``: containers summed, with sidecars; at least
    each init container plus the sidecars before it; overhead added; requests default to limits."""
    pod = {
        "spec": {
            "initContainers": [
                {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
                {"name": "setup", "resources": {"limits": {"cpu": "4", "memory": "1Gi"}}},
            ],
            "containers": [
                {"name": "a", "resources": {"limits": {"cpu": "1", EFA: "2"}}},
                {"name": "b", "resources": {"requests": {"cpu": "250m", "hugepages-2Mi": "10256Mi"}}},
            ],
            "overhead": {"cpu": "100m"},
        }
    }
    assert podrequests.pod_requests(pod) == {
        "cpu": 4600,
        "memory": 2**30,
        EFA: 2,
        "hugepages-2Mi": 10256 * 2**20,
    }
