"""The three patch formats, server-side apply, and optimistic concurrency through patches.

Covers: strategic merge (the client's default for dicts) merging lists by key (conditions,
containers) and replacing lists without a strategy (taints); merge patch with null deletes; JSON
patch with test/add/remove; a resourceVersion precondition in a patch → 409; strategic merge on
a custom resource → 415; server-side apply creating and then updating an object.
"""

from __future__ import annotations

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def test_strategic_merge_replaces_taints_so_a_taint_can_be_removed(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    name = cluster.name("taint")
    core.create_node(objects.node(name))
    cluster.cleanup.append(lambda: core.delete_node(name))
    taints = [{"key": "a", "value": "1", "effect": "NoSchedule"}, {"key": "b", "value": "2", "effect": "NoExecute"}]
    core.patch_node(name, {"spec": {"unschedulable": True, "taints": taints}})
    core.patch_node(name, {"spec": {"taints": [taints[1]]}})
    node = core.read_node(name)
    assert node.spec.unschedulable is True
    assert [t.key for t in node.spec.taints] == ["b"]


def test_strategic_merge_merges_containers_by_name(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_pod(cluster.namespace, objects.pod("multi", containers=("a", "b")))
    core.patch_namespaced_pod(
        "multi", cluster.namespace, {"spec": {"containers": [{"name": "b", "image": "busybox:2"}]}}
    )
    pod = core.read_namespaced_pod("multi", cluster.namespace)
    assert [(c.name, c.image) for c in pod.spec.containers] == [("a", "busybox"), ("b", "busybox:2")]


def test_strategic_merge_on_status_merges_conditions_by_type(cluster: Cluster) -> None:
    sim = cluster.require_sim("node status is owned by a kubelet on a real cluster")
    core = k8s.CoreV1Api(cluster.api)
    sim.add_nodes(1)
    core.patch_node_status(
        "node-000", {"status": {"conditions": [{"type": "GpuHealthy", "status": "False", "reason": "Xid79"}]}}
    )
    conditions = {c.type: c.status for c in core.read_node("node-000").status.conditions}
    assert conditions == {"Ready": "True", "GpuHealthy": "False"}


def test_merge_patch_sets_and_null_deletes(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("mp", {"a": "1", "b": "2"}))
    objects.raw_patch(
        cluster.api, f"/api/v1/namespaces/{cluster.namespace}/configmaps/mp", {"data": {"a": None, "c": "3"}}, MERGE
    )
    assert core.read_namespaced_config_map("mp", cluster.namespace).data == {"b": "2", "c": "3"}


def test_json_patch_applies_operations_in_order_and_a_failed_test_changes_nothing(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("jp", {"a": "1"}))
    core.patch_namespaced_config_map(
        "jp",
        cluster.namespace,
        [
            {"op": "test", "path": "/data/a", "value": "1"},
            {"op": "add", "path": "/data/b", "value": "2"},
            {"op": "remove", "path": "/data/a"},
        ],
    )
    assert core.read_namespaced_config_map("jp", cluster.namespace).data == {"b": "2"}
    with pytest.raises(k8s.ApiException) as caught:
        core.patch_namespaced_config_map(
            "jp",
            cluster.namespace,
            [{"op": "add", "path": "/data/c", "value": "3"}, {"op": "test", "path": "/data/b", "value": "wrong"}],
        )
    assert caught.value.status == 422
    assert core.read_namespaced_config_map("jp", cluster.namespace).data == {"b": "2"}


def test_a_patch_carrying_a_stale_resource_version_is_a_409(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    made = core.create_namespaced_config_map(cluster.namespace, objects.configmap("pre", {"a": "1"}))
    core.patch_namespaced_config_map("pre", cluster.namespace, {"data": {"a": "2"}})
    with pytest.raises(k8s.ApiException) as caught:
        objects.raw_patch(
            cluster.api,
            f"/api/v1/namespaces/{cluster.namespace}/configmaps/pre",
            {"metadata": {"resourceVersion": made.metadata.resource_version}, "data": {"a": "3"}},
            MERGE,
        )
    assert caught.value.status == 409
    assert core.read_namespaced_config_map("pre", cluster.namespace).data == {"a": "2"}


def test_strategic_merge_on_a_custom_resource_is_a_415(cluster: Cluster) -> None:
    from tests.contract.test_custom_resources import install_crd

    install_crd(cluster, "widgets", "Widget")
    custom = k8s.CustomObjectsApi(cluster.api)
    custom.create_namespaced_custom_object(
        objects.CRD_GROUP,
        "v1",
        cluster.namespace,
        "widgets",
        {"apiVersion": f"{objects.CRD_GROUP}/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"n": 1}},
    )
    with pytest.raises(k8s.ApiException) as caught:
        objects.raw_patch(
            cluster.api,
            f"/apis/{objects.CRD_GROUP}/v1/namespaces/{cluster.namespace}/widgets/w",
            {"spec": {"n": 2}},
            "application/strategic-merge-patch+json",
        )
    assert caught.value.status == 415


def test_server_side_apply_creates_then_updates(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    path = f"/api/v1/namespaces/{cluster.namespace}/configmaps/applied"
    for value in ("1", "2"):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"k": value}}
        objects.raw_patch(
            cluster.api, path, body, "application/apply-patch+yaml", [("fieldManager", "contract"), ("force", "true")]
        )
        assert core.read_namespaced_config_map("applied", cluster.namespace).data == {"k": value}
