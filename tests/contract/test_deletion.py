"""Deletion as the control plane performs it.

Covers: finalizers hold an object with a deletionTimestamp until they are removed; no new
finalizer may be added to a terminating object; ownerReferences cascade (background) and
orphaning; delete preconditions; deleting a namespace removes what is in it.
"""

from __future__ import annotations

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster, eventually


def _gone(read: object) -> bool:
    try:
        read()  # type: ignore[operator]
    except k8s.ApiException as exc:
        return exc.status == 404
    return False


def test_a_finalizer_holds_the_object_until_it_is_removed(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    body = objects.configmap("held")
    body["metadata"]["finalizers"] = ["example.com/cleanup"]
    core.create_namespaced_config_map(cluster.namespace, body)
    core.delete_namespaced_config_map("held", cluster.namespace)
    held = core.read_namespaced_config_map("held", cluster.namespace)
    assert held.metadata.deletion_timestamp is not None
    with pytest.raises(k8s.ApiException) as caught:
        core.patch_namespaced_config_map(
            "held", cluster.namespace, {"metadata": {"finalizers": ["example.com/cleanup", "example.com/new"]}}
        )
    assert caught.value.status == 422
    core.patch_namespaced_config_map("held", cluster.namespace, [{"op": "remove", "path": "/metadata/finalizers"}])
    eventually(lambda: _gone(lambda: core.read_namespaced_config_map("held", cluster.namespace)))


def test_deleting_an_owner_deletes_its_dependents(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    owner = core.create_namespaced_config_map(cluster.namespace, objects.configmap("owner"))
    for name in ("dep-1", "dep-2"):
        body = objects.configmap(name)
        body["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
        ]
        core.create_namespaced_config_map(cluster.namespace, body)
    core.delete_namespaced_config_map("owner", cluster.namespace, propagation_policy="Background")
    for name in ("dep-1", "dep-2"):
        eventually(lambda n=name: _gone(lambda: core.read_namespaced_config_map(n, cluster.namespace)))


def test_orphan_deletion_keeps_dependents_and_drops_their_owner_reference(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    owner = core.create_namespaced_config_map(cluster.namespace, objects.configmap("owner2"))
    body = objects.configmap("orphan")
    body["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner2", "uid": owner.metadata.uid}
    ]
    core.create_namespaced_config_map(cluster.namespace, body)
    core.delete_namespaced_config_map("owner2", cluster.namespace, propagation_policy="Orphan")
    eventually(lambda: not core.read_namespaced_config_map("orphan", cluster.namespace).metadata.owner_references)


def test_a_delete_precondition_on_a_stale_resource_version_is_a_409(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    made = core.create_namespaced_config_map(cluster.namespace, objects.configmap("guarded"))
    core.patch_namespaced_config_map("guarded", cluster.namespace, {"data": {"x": "1"}})
    with pytest.raises(k8s.ApiException) as caught:
        core.delete_namespaced_config_map(
            "guarded",
            cluster.namespace,
            body=k8s.V1DeleteOptions(
                preconditions=k8s.V1Preconditions(resource_version=made.metadata.resource_version)
            ),
        )
    assert caught.value.status == 409


def test_deleting_a_namespace_removes_everything_in_it(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    name = cluster.name("doomed")
    core.create_namespace({"metadata": {"name": name}})
    core.create_namespaced_config_map(name, objects.configmap("inside"))
    core.create_namespaced_pod(name, objects.pod("p"))
    core.delete_namespace(name)
    eventually(lambda: _gone(lambda: core.read_namespace(name)))
    assert core.list_namespaced_config_map(name).items == []
