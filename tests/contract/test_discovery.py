"""Discovery: what a client learns about the server before it can do anything.

Covers: /version; the core and named groups with the kinds the issue lists; subresources
(status, eviction, log, binding, scale, token) with their kinds; a CRD's group appearing once it
is created.
"""

from __future__ import annotations

import pytest
from kubernetes import client as k8s

from tests.contract.conftest import Cluster

EXPECTED = [
    ("", "v1", {"nodes", "pods", "namespaces", "configmaps", "secrets", "events", "services", "serviceaccounts"}),
    ("apps", "v1", {"deployments", "daemonsets", "statefulsets", "replicasets"}),
    ("batch", "v1", {"jobs"}),
    ("coordination.k8s.io", "v1", {"leases"}),
    ("policy", "v1", {"poddisruptionbudgets"}),
    ("rbac.authorization.k8s.io", "v1", {"roles", "clusterroles", "rolebindings", "clusterrolebindings"}),
    ("apiextensions.k8s.io", "v1", {"customresourcedefinitions"}),
]


def test_the_server_reports_a_version(cluster: Cluster) -> None:
    info = k8s.VersionApi(cluster.api).get_code()
    assert info.major == "1" and info.git_version.startswith("v1.")


@pytest.mark.parametrize(("group", "version", "plurals"), EXPECTED, ids=[g or "core" for g, _, _ in EXPECTED])
def test_every_listed_resource_is_discoverable(cluster: Cluster, group: str, version: str, plurals: set[str]) -> None:
    if group:
        resources = k8s.CustomObjectsApi(cluster.api).get_api_resources(group, version).resources
    else:
        resources = k8s.CoreV1Api(cluster.api).get_api_resources().resources
    assert plurals <= {r.name for r in resources}


def test_pod_subresources_are_discoverable_with_their_kinds(cluster: Cluster) -> None:
    found = {r.name: r for r in k8s.CoreV1Api(cluster.api).get_api_resources().resources}
    assert found["pods/eviction"].kind == "Eviction" and found["pods/eviction"].group == "policy"
    assert {"pods/status", "pods/log", "pods/binding", "nodes/status", "serviceaccounts/token"} <= set(found)


def test_named_groups_list_their_preferred_versions(cluster: Cluster) -> None:
    groups = {g.name: g for g in k8s.ApisApi(cluster.api).get_api_versions().groups}
    assert groups["apps"].preferred_version.group_version == "apps/v1"
    assert {"batch", "policy", "coordination.k8s.io", "apiextensions.k8s.io"} <= set(groups)
