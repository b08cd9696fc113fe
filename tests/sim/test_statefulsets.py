"""StatefulSets, run by the simulated controller manager, over HTTP in virtual time.

Covers: OrderedReady makes ``<sts>-0`` … one at a time, each after the previous is Ready, with
the pod-name / pod-index / controller-revision-hash labels, hostname and subdomain, and the
status fields (revisions included); Parallel makes them all at once; scaling down removes the
highest ordinal first; a template change replaces pods from the highest ordinal onto the new
revision until ``currentRevision`` catches up, and a partition stops it there; ``kubectl
rollout status statefulset/x`` finishes. Reference:
kubernetes:pkg/controller/statefulset/stateful_set_control.go, stateful_set_utils.go.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from kubernetes import client as k8s

from shared.sim import SimServer
from tests.sim import workloadkit as kit
from tests.sim.workloadkit import cluster_nodes_fixture  # noqa: F401 - the fixture

REVISION = "controller-revision-hash"


def _create(api: Any, body: dict[str, Any]) -> Any:
    return k8s.AppsV1Api(api).create_namespaced_stateful_set("default", body)


def _read(api: Any, name: str) -> Any:
    return k8s.AppsV1Api(api).read_namespaced_stateful_set(name, "default")


def _names(api: Any, app: str) -> list[str]:
    return [p.metadata.name for p in kit.pods(api, f"app={app}")]


def test_ordered_ready_makes_one_pod_at_a_time(sim: SimServer, api_client: Any, cluster_nodes: list[str]) -> None:
    _create(api_client, kit.statefulset("web"))
    sim.kubelet.settle()
    assert _names(api_client, "web") == ["web-0"]
    sim.advance(kit.POD_START)
    assert _names(api_client, "web") == ["web-0", "web-1"]  # web-0 Ready: web-1 may start
    sim.advance(kit.POD_START)
    sim.advance(kit.POD_START)
    pods = kit.pods(api_client, "app=web")
    assert [p.metadata.name for p in pods] == ["web-0", "web-1", "web-2"] and all(kit.ready(p) for p in pods)
    sts = _read(api_client, "web")
    (revision,) = k8s.AppsV1Api(api_client).list_namespaced_controller_revision("default").items
    assert revision.metadata.name.startswith("web-") and revision.metadata.labels["controller.kubernetes.io/hash"]
    for index, pod in enumerate(pods):
        assert pod.metadata.labels["statefulset.kubernetes.io/pod-name"] == f"web-{index}"
        assert pod.metadata.labels["apps.kubernetes.io/pod-index"] == str(index)
        assert pod.metadata.labels[REVISION] == revision.metadata.name
        assert (pod.spec.hostname, pod.spec.subdomain) == (f"web-{index}", "web")
        assert pod.metadata.owner_references[0].kind == "StatefulSet"
    status = sts.status
    assert (status.observed_generation, status.replicas, status.ready_replicas, status.available_replicas) == (
        1,
        3,
        3,
        3,
    )
    assert (status.current_replicas, status.updated_replicas) == (3, 3)
    assert status.current_revision == status.update_revision == revision.metadata.name
    assert status.collision_count == 0
    messages = [e.message for e in kit.events(api_client, kind="StatefulSet", name="web")]
    assert messages[0] == "create Pod web-0 in StatefulSet web successful"


def test_parallel_makes_all_pods_at_once_and_scaling_down_removes_the_highest(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    _create(api_client, kit.statefulset("db", replicas=4, podManagementPolicy="Parallel"))
    sim.kubelet.settle()
    assert _names(api_client, "db") == ["db-0", "db-1", "db-2", "db-3"]
    sim.advance(kit.POD_START + 1)
    k8s.AppsV1Api(api_client).patch_namespaced_stateful_set_scale("db", "default", {"spec": {"replicas": 2}})
    sim.advance(1)
    assert _names(api_client, "db") == ["db-0", "db-1"]
    assert _read(api_client, "db").status.replicas == 2


def test_ordered_scale_down_goes_one_pod_at_a_time_from_the_top(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    _create(api_client, kit.statefulset("web"))
    for _ in range(4):
        sim.advance(kit.POD_START)
    k8s.AppsV1Api(api_client).patch_namespaced_stateful_set("web", "default", {"spec": {"replicas": 1}})
    sim.advance(1)
    assert _names(api_client, "web") == ["web-0"]
    deleted = [
        e.message for e in kit.events(api_client, kind="StatefulSet", name="web") if e.reason == "SuccessfulDelete"
    ]
    assert deleted == [
        "delete Pod web-2 in StatefulSet web successful",
        "delete Pod web-1 in StatefulSet web successful",
    ]


def test_a_template_change_rolls_from_the_highest_ordinal_and_a_partition_holds_it(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    apps = k8s.AppsV1Api(api_client)
    _create(api_client, kit.statefulset("web"))
    for _ in range(4):
        sim.advance(kit.POD_START)
    before = _read(api_client, "web").status.current_revision
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.28"}]}}}}
    apps.patch_namespaced_stateful_set("web", "default", patch)
    sim.kubelet.settle()
    sts = _read(api_client, "web")
    assert sts.status.current_revision == before and sts.status.update_revision != before
    pods = kit.pods(api_client, "app=web")  # web-2 went first and is starting again at the new revision
    assert [p.metadata.labels[REVISION] == sts.status.update_revision for p in pods] == [False, False, True]
    assert not kit.ready(pods[2])
    for _ in range(6):
        sim.advance(kit.POD_START)
    sts = _read(api_client, "web")
    pods = kit.pods(api_client, "app=web")
    assert all(p.metadata.labels[REVISION] == sts.status.update_revision for p in pods)
    assert sts.status.current_revision == sts.status.update_revision and sts.status.current_replicas == 3
    containers = [{"name": "main", "image": "nginx:1.29"}]
    partitioned: dict[str, Any] = {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}}
    patch = {"spec": {**partitioned, "template": {"spec": {"containers": containers}}}}
    apps.patch_namespaced_stateful_set("web", "default", patch)
    for _ in range(6):
        sim.advance(kit.POD_START)
    images = [p.spec.containers[0].image for p in kit.pods(api_client, "app=web")]
    assert images == ["nginx:1.28", "nginx:1.28", "nginx:1.29"]
    sts = _read(api_client, "web")
    assert sts.status.updated_replicas == 1 and sts.status.current_revision != sts.status.update_revision


def test_kubectl_rollout_status_finishes(
    sim: SimServer, kubectl: Any, cluster_nodes: list[str], tmp_path: Path
) -> None:
    body = kit.statefulset("web", updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    kubectl("apply", "-f", str(kit.manifest(tmp_path, body)))
    done: list[Any] = []
    watcher = threading.Thread(
        target=lambda: done.append(kubectl("rollout", "status", "statefulset/web", "--timeout=120s", check=False))
    )
    watcher.start()
    for _ in range(20):
        if done:
            break
        sim.advance(1)
        watcher.join(timeout=0.5)
    watcher.join(timeout=150)  # kubectl's own --timeout ends it first
    (result,) = done
    assert result.returncode == 0, result.stderr
    assert "partitioned roll out complete: 3 new pods have been updated" in result.stdout
