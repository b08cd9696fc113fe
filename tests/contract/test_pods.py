"""Pod subresources: eviction (honouring PodDisruptionBudgets), binding, log, status.

Covers: evicting a pod without a budget deletes it; a budget that allows no disruption answers
429 and keeps the pod; a budget with room lets exactly that many pods go; two budgets on one pod
are a 500; binding assigns a node once (409 the second time); the log of a pod, by container,
with tailLines; pod status written through /status only.
"""

from __future__ import annotations

import json

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster


def _eviction(name: str, namespace: str) -> dict[str, object]:
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}


def _running(core: k8s.CoreV1Api, name: str, namespace: str) -> None:
    core.patch_namespaced_pod_status(
        name, namespace, {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    )


def _budget(cluster: Cluster, name: str, labels: dict[str, str], **spec: object) -> None:
    k8s.PolicyV1Api(cluster.api).create_namespaced_pod_disruption_budget(
        cluster.namespace, {"metadata": {"name": name}, "spec": {"selector": {"matchLabels": labels}, **spec}}
    )


def test_evicting_a_pod_without_a_budget_deletes_it(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_pod(cluster.namespace, objects.pod("free"))
    core.create_namespaced_pod_eviction("free", cluster.namespace, _eviction("free", cluster.namespace))
    assert [
        p.metadata.name for p in core.list_namespaced_pod(cluster.namespace).items if not p.metadata.deletion_timestamp
    ] == []


def test_a_budget_without_room_refuses_the_eviction_with_429(cluster: Cluster) -> None:
    cluster.require_sim("pods must be Running and Ready, which a real kubelet decides")
    core = k8s.CoreV1Api(cluster.api)
    for name in ("db-0", "db-1"):
        core.create_namespaced_pod(cluster.namespace, objects.pod(name, labels={"app": "db"}))
        _running(core, name, cluster.namespace)
    _budget(cluster, "db", {"app": "db"}, minAvailable=2)
    with pytest.raises(k8s.ApiException) as caught:
        core.create_namespaced_pod_eviction("db-0", cluster.namespace, _eviction("db-0", cluster.namespace))
    assert caught.value.status == 429
    assert json.loads(caught.value.body)["details"]["causes"][0]["reason"] == "DisruptionBudget"
    assert core.read_namespaced_pod("db-0", cluster.namespace).metadata.deletion_timestamp is None


def test_a_budget_with_room_allows_exactly_that_many_evictions(cluster: Cluster) -> None:
    cluster.require_sim("pods must be Running and Ready, which a real kubelet decides")
    core = k8s.CoreV1Api(cluster.api)
    for n in range(3):
        core.create_namespaced_pod(cluster.namespace, objects.pod(f"web-{n}", labels={"app": "web"}))
        _running(core, f"web-{n}", cluster.namespace)
    _budget(cluster, "web", {"app": "web"}, maxUnavailable=1)
    core.create_namespaced_pod_eviction("web-0", cluster.namespace, _eviction("web-0", cluster.namespace))
    with pytest.raises(k8s.ApiException) as caught:
        core.create_namespaced_pod_eviction("web-1", cluster.namespace, _eviction("web-1", cluster.namespace))
    assert caught.value.status == 429
    assert sorted(p.metadata.name for p in core.list_namespaced_pod(cluster.namespace).items) == ["web-1", "web-2"]
    status = k8s.PolicyV1Api(cluster.api).read_namespaced_pod_disruption_budget("web", cluster.namespace).status
    assert status.disruptions_allowed == 0 and status.expected_pods == 3


def test_two_budgets_on_one_pod_are_a_500(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_pod(cluster.namespace, objects.pod("twice", labels={"a": "1", "b": "1"}))
    _running(core, "twice", cluster.namespace)
    _budget(cluster, "first", {"a": "1"}, minAvailable=0)
    _budget(cluster, "second", {"b": "1"}, minAvailable=0)
    with pytest.raises(k8s.ApiException) as caught:
        core.create_namespaced_pod_eviction("twice", cluster.namespace, _eviction("twice", cluster.namespace))
    assert caught.value.status == 500


def test_binding_assigns_a_node_once(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_pod(cluster.namespace, objects.pod("unbound"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "unbound"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-x"},
    }
    cluster.api.call_api(
        f"/api/v1/namespaces/{cluster.namespace}/pods/unbound/binding",
        "POST",
        body=binding,
        header_params={"Content-Type": "application/json", "Accept": "application/json"},
        auth_settings=["BearerToken"],
        _return_http_data_only=True,
    )
    assert core.read_namespaced_pod("unbound", cluster.namespace).spec.node_name == "node-x"
    with pytest.raises(k8s.ApiException) as caught:
        cluster.api.call_api(
            f"/api/v1/namespaces/{cluster.namespace}/pods/unbound/binding",
            "POST",
            body=binding,
            header_params={"Content-Type": "application/json", "Accept": "application/json"},
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
        )
    assert caught.value.status == 409


def test_the_pod_log_is_read_per_container_with_tail_lines(cluster: Cluster) -> None:
    sim = cluster.require_sim("log lines are written by the emulator's kubelet hook")
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_pod(cluster.namespace, objects.pod("talky", containers=("main", "side")))
    sim.logs.append(cluster.namespace, "talky", "main", "one\ntwo\nthree\n")
    assert core.read_namespaced_pod_log("talky", cluster.namespace, container="main") == "one\ntwo\nthree\n"
    assert core.read_namespaced_pod_log("talky", cluster.namespace, container="main", tail_lines=1) == "three\n"
    with pytest.raises(k8s.ApiException) as caught:
        core.read_namespaced_pod_log("talky", cluster.namespace)
    assert caught.value.status == 400


def test_pod_status_changes_only_through_the_status_subresource(cluster: Cluster) -> None:
    cluster.require_sim("a real kubelet owns pod status")
    core = k8s.CoreV1Api(cluster.api)
    made = core.create_namespaced_pod(cluster.namespace, objects.pod("phased"))
    assert made.status.phase == "Pending"
    core.patch_namespaced_pod("phased", cluster.namespace, {"status": {"phase": "Failed"}})
    assert core.read_namespaced_pod("phased", cluster.namespace).status.phase == "Pending"
    core.patch_namespaced_pod_status("phased", cluster.namespace, {"status": {"phase": "Succeeded"}})
    assert core.read_namespaced_pod("phased", cluster.namespace).status.phase == "Succeeded"
