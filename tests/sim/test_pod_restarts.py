"""What the simulated kubelet does when a container ends, by restart policy, in virtual time.

Covers: a ``restartPolicy: Always`` pod whose image is not a workload binary stays Running and
Ready indefinitely; one whose command ends is restarted — at once the first time, then after
the kubelet's back-off (10 s, doubling) waiting in ``CrashLoopBackOff`` and not Ready — with
``restartCount`` and ``lastState`` recording each end, and never becomes Succeeded; ``Never`` and
``OnFailure`` pods run to completion (what Job pods rely on). Reference:
kubernetes:pkg/kubelet/kuberuntime (container restart back-off), docs "Pod Lifecycle".
"""

from __future__ import annotations

from typing import Any

from kubernetes import client as k8s

from shared.sim import SimServer
from tests.sim import workloadkit as kit
from tests.sim.workloadkit import cluster_nodes_fixture  # noqa: F401 - the fixture


def _pod(name: str, *, command: list[str] | None = None, restart: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "busybox:1.36"}]}
    if command:
        spec["containers"][0]["command"] = command
    if restart:
        spec["restartPolicy"] = restart
    return {"metadata": {"name": name, "labels": {"app": name}}, "spec": spec}


def _read(api: Any, name: str) -> Any:
    return k8s.CoreV1Api(api).read_namespaced_pod(name, "default")


def test_a_service_pod_stays_running_and_ready(sim: SimServer, api_client: Any, cluster_nodes: list[str]) -> None:
    k8s.CoreV1Api(api_client).create_namespaced_pod("default", _pod("web"))
    sim.advance(kit.POD_START)
    sim.advance(7 * 24 * 3600)
    pod = _read(api_client, "web")
    assert kit.ready(pod) and pod.status.container_statuses[0].restart_count == 0
    assert pod.status.container_statuses[0].state.running is not None


def test_an_always_container_that_ends_is_restarted_with_back_off(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    k8s.CoreV1Api(api_client).create_namespaced_pod("default", _pod("loop", command=["sleep", "30"]))
    sim.advance(kit.POD_START)
    sim.advance(30)  # the first end: restarted at once
    pod = _read(api_client, "loop")
    status = pod.status.container_statuses[0]
    assert kit.ready(pod) and status.restart_count == 1 and status.state.running is not None
    assert (status.last_state.terminated.exit_code, status.last_state.terminated.reason) == (0, "Completed")
    sim.advance(30)  # the second end: 10 s of back-off
    pod = _read(api_client, "loop")
    status = pod.status.container_statuses[0]
    assert pod.status.phase == "Running" and not kit.ready(pod) and status.restart_count == 2
    assert status.state.waiting.reason == "CrashLoopBackOff"
    assert status.state.waiting.message.startswith("back-off 10s restarting failed container=main pod=loop_default(")
    sim.advance(10)
    pod = _read(api_client, "loop")
    assert kit.ready(pod) and pod.status.container_statuses[0].restart_count == 2
    sim.advance(30 + 20)  # third end, 20 s back-off
    assert _read(api_client, "loop").status.container_statuses[0].restart_count == 3
    assert _read(api_client, "loop").status.phase == "Running"


def test_never_and_on_failure_pods_run_to_completion(sim: SimServer, api_client: Any, cluster_nodes: list[str]) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_pod("default", _pod("once", command=["sleep", "5"], restart="Never"))
    core.create_namespaced_pod("default", _pod("retry", command=["sleep", "5"], restart="OnFailure"))
    core.create_namespaced_pod("default", _pod("tool", restart="Never"))
    sim.advance(kit.POD_START + 5)
    assert _read(api_client, "once").status.phase == "Succeeded"
    assert _read(api_client, "retry").status.phase == "Succeeded"
    sim.advance(60)  # any other image runs its configured time, then succeeds
    tool = _read(api_client, "tool")
    assert tool.status.phase == "Succeeded" and tool.status.container_statuses[0].restart_count == 0
