"""Garbage collection by ownerReference, over HTTP with the official client.

Covers: the collector's background sweep deletes an object whose owner (matched by uid) does not
exist — created with a dangling reference, or naming an owner of the right name but another uid,
or a namespaced owner of a cluster-scoped object — and drops only the dangling references of an
object that has a live owner too, leaving references to kinds the server does not serve; a
Foreground deletion keeps the owner, with ``foregroundDeletion``, while a blocking dependent is
held by a finalizer, and finishes when it goes; an Orphan deletion strips the references at once
even while a finalizer holds the owner. Reference: kubernetes:pkg/controller/garbagecollector/
garbagecollector.go (``attemptToDeleteItem``), docs "Garbage Collection" and "Use Cascading
Deletion".
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from shared.sim import SimServer
from tests.sim.workloadkit import cluster_nodes_fixture  # noqa: F401 - the fixture


def _ref(owner: Any, kind: str = "ConfigMap", api_version: str = "v1", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": owner.metadata.name, "uid": owner.metadata.uid, **extra}


def _configmap(
    api: Any, name: str, *, refs: list[dict[str, Any]] | None = None, finalizers: list[str] | None = None
) -> Any:
    meta: dict[str, Any] = {"name": name}
    if refs:
        meta["ownerReferences"] = refs
    if finalizers:
        meta["finalizers"] = finalizers
    return k8s.CoreV1Api(api).create_namespaced_config_map("default", {"metadata": meta})


def _exists(api: Any, name: str) -> bool:
    try:
        k8s.CoreV1Api(api).read_namespaced_config_map(name, "default")
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def test_an_object_whose_owner_never_existed_is_collected(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    owner = _configmap(api_client, "owner")
    dangling = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "0b1c6d2e-0000-4000-8000-000000000000"}
    _configmap(api_client, "orphaned", refs=[dangling])
    _configmap(api_client, "wrong-uid", refs=[{**_ref(owner), "uid": "0b1c6d2e-0000-4000-8000-000000000001"}])
    _configmap(api_client, "kept", refs=[_ref(owner)])
    sim.kubelet.settle()
    assert not _exists(api_client, "orphaned") and not _exists(api_client, "wrong-uid")
    assert _exists(api_client, "kept")


def test_only_the_dangling_references_of_an_object_with_a_live_owner_go(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    owner = _configmap(api_client, "owner")
    unserved = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "u-widget"}
    dangling = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "u-ghost"}
    _configmap(api_client, "shared", refs=[_ref(owner), dangling, unserved])
    _configmap(api_client, "widget-only", refs=[unserved])
    sim.kubelet.settle()
    kept = k8s.CoreV1Api(api_client).read_namespaced_config_map("shared", "default")
    assert [r.uid for r in kept.metadata.owner_references] == [owner.metadata.uid, "u-widget"]
    assert _exists(api_client, "widget-only")  # the owner's existence cannot be told: left alone


def test_a_cluster_scoped_object_with_a_namespaced_owner_is_collected(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    owner = _configmap(api_client, "owner")
    body = {"metadata": {"name": "viewer", "ownerReferences": [_ref(owner)]}, "rules": []}
    k8s.RbacAuthorizationV1Api(api_client).create_cluster_role(body)
    sim.kubelet.settle()
    with pytest.raises(ApiException) as caught:
        k8s.RbacAuthorizationV1Api(api_client).read_cluster_role("viewer")
    assert caught.value.status == 404


def test_foreground_deletion_waits_for_a_blocking_dependent(sim: SimServer, api_client: Any) -> None:
    core = k8s.CoreV1Api(api_client)
    owner = _configmap(api_client, "owner")
    _configmap(api_client, "held", refs=[_ref(owner, blockOwnerDeletion=True)], finalizers=["example.com/keep"])
    _configmap(api_client, "free", refs=[_ref(owner)])
    core.delete_namespaced_config_map("owner", "default", propagation_policy="Foreground")
    waiting = core.read_namespaced_config_map("owner", "default")
    assert waiting.metadata.deletion_timestamp is not None
    assert waiting.metadata.finalizers == ["foregroundDeletion"]
    assert not _exists(api_client, "free")
    assert core.read_namespaced_config_map("held", "default").metadata.deletion_timestamp is not None
    core.patch_namespaced_config_map("held", "default", [{"op": "remove", "path": "/metadata/finalizers"}])
    assert not _exists(api_client, "held") and not _exists(api_client, "owner")


def test_a_non_blocking_dependent_does_not_hold_a_foreground_deletion(sim: SimServer, api_client: Any) -> None:
    owner = _configmap(api_client, "owner")
    _configmap(api_client, "held", refs=[_ref(owner)], finalizers=["example.com/keep"])
    k8s.CoreV1Api(api_client).delete_namespaced_config_map("owner", "default", propagation_policy="Foreground")
    assert not _exists(api_client, "owner")
    assert _exists(api_client, "held")  # terminating, waiting for its own finalizer


def test_orphan_deletion_strips_references_while_a_finalizer_holds_the_owner(sim: SimServer, api_client: Any) -> None:
    core = k8s.CoreV1Api(api_client)
    owner = _configmap(api_client, "owner", finalizers=["example.com/keep"])
    _configmap(api_client, "child", refs=[_ref(owner, blockOwnerDeletion=True)])
    core.delete_namespaced_config_map("owner", "default", propagation_policy="Orphan")
    assert core.read_namespaced_config_map("child", "default").metadata.owner_references is None
    held = core.read_namespaced_config_map("owner", "default")
    assert held.metadata.deletion_timestamp is not None and held.metadata.finalizers == ["example.com/keep"]
    core.patch_namespaced_config_map("owner", "default", [{"op": "remove", "path": "/metadata/finalizers"}])
    assert not _exists(api_client, "owner") and _exists(api_client, "child")


def test_an_orphan_finalizer_set_beforehand_decides_the_policy(sim: SimServer, api_client: Any) -> None:
    owner = _configmap(api_client, "owner", finalizers=["orphan"])
    _configmap(api_client, "child", refs=[_ref(owner)])
    k8s.CoreV1Api(api_client).delete_namespaced_config_map("owner", "default")
    assert not _exists(api_client, "owner") and _exists(api_client, "child")
