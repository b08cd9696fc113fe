"""Identities, RBAC and the request audit.

Covers: a ServiceAccount token without rights gets a real 403 Forbidden; a Role and RoleBinding
grant exactly the verbs and resources they name (and only in their namespace); a ClusterRole
bound cluster-wide; resourceNames; subresources need their own rule; an unknown token is 401;
the audit lists who did what, so a test can prove a Role is least privilege.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client as k8s

from shared.kube import client
from tests.contract import objects
from tests.contract.conftest import Cluster

RBAC = "rbac.authorization.k8s.io"


def _as(path: Path) -> k8s.CoreV1Api:
    return k8s.CoreV1Api(client.new_client(kubeconfig=path))


def _grant(
    cluster: Cluster, name: str, rules: list[dict[str, object]], subject: str, *, cluster_wide: bool = False
) -> None:
    rbac = k8s.RbacAuthorizationV1Api(cluster.api)
    subjects = [{"kind": "ServiceAccount", "name": subject, "namespace": cluster.namespace}]
    if cluster_wide:
        rbac.create_cluster_role({"metadata": {"name": name}, "rules": rules})
        rbac.create_cluster_role_binding(
            {
                "metadata": {"name": name},
                "subjects": subjects,
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
            }
        )
    else:
        rbac.create_namespaced_role(cluster.namespace, {"metadata": {"name": name}, "rules": rules})
        rbac.create_namespaced_role_binding(
            cluster.namespace,
            {
                "metadata": {"name": name},
                "subjects": subjects,
                "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": name},
            },
        )


@pytest.fixture()
def identity(cluster: Cluster, sim_identity: Callable[[str, str], Path]) -> Callable[[str], Path]:
    cluster.require_sim("mints ServiceAccount tokens through the emulator")
    return lambda name: sim_identity(cluster.namespace, name)


def test_a_token_without_rights_is_forbidden(cluster: Cluster, identity: Callable[[str], Path]) -> None:
    core = _as(identity("nobody"))
    with pytest.raises(k8s.ApiException) as caught:
        core.list_namespaced_config_map(cluster.namespace)
    assert caught.value.status == 403
    assert 'cannot list resource "configmaps"' in json.loads(caught.value.body)["message"]


def test_a_role_grants_exactly_its_verbs_in_its_namespace(cluster: Cluster, identity: Callable[[str], Path]) -> None:
    _grant(cluster, "cm-reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}], "reader")
    k8s.CoreV1Api(cluster.api).create_namespaced_config_map(cluster.namespace, objects.configmap("c"))
    core = _as(identity("reader"))
    assert [c.metadata.name for c in core.list_namespaced_config_map(cluster.namespace).items] == ["c"]
    for attempt in (
        lambda: core.delete_namespaced_config_map("c", cluster.namespace),
        lambda: core.list_namespaced_secret(cluster.namespace),
        lambda: core.list_namespaced_config_map("default"),
    ):
        with pytest.raises(k8s.ApiException) as caught:
            attempt()
        assert caught.value.status == 403


def test_a_cluster_role_binding_grants_cluster_scoped_access(cluster: Cluster, identity: Callable[[str], Path]) -> None:
    _grant(
        cluster,
        f"{cluster.namespace}-nodes",
        [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}],
        "viewer",
        cluster_wide=True,
    )
    core = _as(identity("viewer"))
    core.list_node()
    with pytest.raises(k8s.ApiException) as caught:
        core.patch_node("node-000", {"spec": {"unschedulable": True}})
    assert caught.value.status == 403


def test_subresources_and_resource_names_need_their_own_rules(
    cluster: Cluster, identity: Callable[[str], Path]
) -> None:
    _grant(
        cluster,
        "one-pod",
        [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": ["allowed"]},
            {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
        ],
        "narrow",
    )
    admin = k8s.CoreV1Api(cluster.api)
    for name in ("allowed", "other"):
        admin.create_namespaced_pod(cluster.namespace, objects.pod(name))
    core = _as(identity("narrow"))
    core.read_namespaced_pod("allowed", cluster.namespace)
    core.read_namespaced_pod_log("allowed", cluster.namespace)
    with pytest.raises(k8s.ApiException) as caught:
        core.read_namespaced_pod("other", cluster.namespace)
    assert caught.value.status == 403
    with pytest.raises(k8s.ApiException) as caught:
        core.patch_namespaced_pod_status("allowed", cluster.namespace, {"status": {"phase": "Running"}})
    assert caught.value.status == 403


def test_an_unknown_token_is_unauthorized(cluster: Cluster, tmp_path: Path) -> None:
    sim = cluster.require_sim("writes a kubeconfig with a made-up token")
    from shared.sim.apiserver import kubeconfig

    assert sim.tls is not None
    path = tmp_path / "forged"
    kubeconfig.write(path, sim.url, "sim-not-a-real-token", ca_pem=sim.tls.cert_pem)
    with pytest.raises(k8s.ApiException) as caught:
        _as(path).list_namespace()
    assert caught.value.status == 401


def test_the_audit_records_what_each_identity_did(cluster: Cluster, identity: Callable[[str], Path]) -> None:
    sim = cluster.require_sim("reads the emulator's audit")
    _grant(
        cluster, "cm-writer", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get"]}], "writer"
    )
    core = _as(identity("writer"))
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("w"))
    core.read_namespaced_config_map("w", cluster.namespace)
    with pytest.raises(k8s.ApiException):
        core.delete_namespaced_config_map("w", cluster.namespace)
    user = f"system:serviceaccount:{cluster.namespace}:writer"
    assert sim.audit.permissions(identity=user) == [
        ("create", "", "configmaps", cluster.namespace),
        ("delete", "", "configmaps", cluster.namespace),
        ("get", "", "configmaps", cluster.namespace),
    ]
    assert [r.code for r in sim.audit.records(identity=user)] == [201, 200, 403]


def test_a_resource_not_served_is_authorized_before_it_is_looked_up(
    cluster: Cluster, identity: Callable[[str], Path]
) -> None:
    # The real server resolves group and resource from the path and authorizes them first: without the
    # grant, a CRD that is not installed is a 403 naming it; with the grant, a 404.
    group, plural = "absent.contract.example.com", "widgets"
    path = f"/apis/{group}/v1/namespaces/{cluster.namespace}/{plural}"
    _grant(cluster, "widget-reader", [{"apiGroups": [group], "resources": [plural], "verbs": ["list"]}], "widgets")
    for who, status in (("nobody", 403), ("widgets", 404)):
        api = client.new_client(kubeconfig=identity(who))
        with pytest.raises(k8s.ApiException) as caught:
            api.call_api(path, "GET", auth_settings=["BearerToken"], _preload_content=False)
        assert caught.value.status == status, who
        if status == 403:
            message = json.loads(caught.value.body)["message"]
            assert f'cannot list resource "{plural}" in API group "{group}"' in message
