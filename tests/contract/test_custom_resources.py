"""CustomResourceDefinitions and their custom resources, served at group/version/plural.

Covers: a new CRD becomes Established and appears in discovery; namespaced and cluster-scoped
CRs; label-selected lists of CRs; the status subresource keeps status off the main endpoint and
spec off /status; a CRD without a status subresource stores status with the object; deleting a
CRD removes its resources.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster, eventually

GROUP = objects.CRD_GROUP


def install_crd(cluster: Cluster, plural: str, kind: str, **options: Any) -> None:
    ext = k8s.ApiextensionsV1Api(cluster.api)
    body = objects.crd(plural, kind, **options)
    ext.create_custom_resource_definition(body)
    cluster.cleanup.append(lambda: ext.delete_custom_resource_definition(body["metadata"]["name"]))

    def established() -> bool:
        crd = ext.read_custom_resource_definition(body["metadata"]["name"])
        return any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or [])

    eventually(established)
    eventually(
        lambda: plural in {r.name for r in k8s.CustomObjectsApi(cluster.api).get_api_resources(GROUP, "v1").resources}
    )


def _cr(kind: str, name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": {"name": name}, **fields}


def test_a_crd_is_established_and_its_resources_are_discoverable(cluster: Cluster) -> None:
    install_crd(cluster, "gadgets", "Gadget")
    found = k8s.CustomObjectsApi(cluster.api).get_api_resources(GROUP, "v1").resources
    gadgets = next(r for r in found if r.name == "gadgets")
    assert gadgets.kind == "Gadget" and gadgets.namespaced is True
    assert "gadgets/status" in {r.name for r in found}


def test_custom_resources_are_created_listed_by_label_and_deleted(cluster: Cluster) -> None:
    install_crd(cluster, "tools", "Tool")
    custom = k8s.CustomObjectsApi(cluster.api)
    for name, team in (("t1", "a"), ("t2", "b")):
        made = custom.create_namespaced_custom_object(
            GROUP,
            "v1",
            cluster.namespace,
            "tools",
            {**_cr("Tool", name, spec={"size": 1}), "metadata": {"name": name, "labels": {"team": team}}},
        )
        assert made["metadata"]["uid"] and made["metadata"]["generation"] == 1
    listed = custom.list_namespaced_custom_object(GROUP, "v1", cluster.namespace, "tools", label_selector="team=b")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["t2"]
    custom.delete_namespaced_custom_object(GROUP, "v1", cluster.namespace, "tools", "t2")
    with pytest.raises(k8s.ApiException) as caught:
        custom.get_namespaced_custom_object(GROUP, "v1", cluster.namespace, "tools", "t2")
    assert caught.value.status == 404


def test_cluster_scoped_custom_resources_have_no_namespace(cluster: Cluster) -> None:
    install_crd(cluster, "fleets", "Fleet", scope="Cluster")
    custom = k8s.CustomObjectsApi(cluster.api)
    name = cluster.name("fleet")
    made = custom.create_cluster_custom_object(GROUP, "v1", "fleets", _cr("Fleet", name, spec={"nodes": 8}))
    cluster.cleanup.append(lambda: custom.delete_cluster_custom_object(GROUP, "v1", "fleets", name))
    assert "namespace" not in made["metadata"]
    assert custom.get_cluster_custom_object(GROUP, "v1", "fleets", name)["spec"] == {"nodes": 8}


def test_the_status_subresource_keeps_spec_and_status_apart(cluster: Cluster) -> None:
    install_crd(cluster, "jobs2", "Job2")
    custom = k8s.CustomObjectsApi(cluster.api)
    made = custom.create_namespaced_custom_object(
        GROUP, "v1", cluster.namespace, "jobs2", _cr("Job2", "j", spec={"n": 1}, status={"phase": "Fake"})
    )
    assert "status" not in made
    custom.patch_namespaced_custom_object_status(
        GROUP, "v1", cluster.namespace, "jobs2", "j", {"spec": {"n": 99}, "status": {"phase": "Running"}}
    )
    custom.patch_namespaced_custom_object(
        GROUP, "v1", cluster.namespace, "jobs2", "j", {"spec": {"n": 2}, "status": {"phase": "Hacked"}}
    )
    current = custom.get_namespaced_custom_object(GROUP, "v1", cluster.namespace, "jobs2", "j")
    assert current["spec"] == {"n": 2}
    assert current["status"] == {"phase": "Running"}
    assert current["metadata"]["generation"] == 2


def test_without_a_status_subresource_status_is_part_of_the_object(cluster: Cluster) -> None:
    install_crd(cluster, "notes", "Note", status=False)
    custom = k8s.CustomObjectsApi(cluster.api)
    custom.create_namespaced_custom_object(
        GROUP, "v1", cluster.namespace, "notes", _cr("Note", "n", spec={}, status={"seen": True})
    )
    assert custom.get_namespaced_custom_object(GROUP, "v1", cluster.namespace, "notes", "n")["status"] == {"seen": True}


def test_a_custom_resource_update_needs_a_resource_version(cluster: Cluster) -> None:
    install_crd(cluster, "locks", "Lock")
    custom = k8s.CustomObjectsApi(cluster.api)
    custom.create_namespaced_custom_object(GROUP, "v1", cluster.namespace, "locks", _cr("Lock", "l", spec={}))
    with pytest.raises(k8s.ApiException) as caught:
        custom.replace_namespaced_custom_object(
            GROUP, "v1", cluster.namespace, "locks", "l", _cr("Lock", "l", spec={"x": 1})
        )
    assert caught.value.status == 422


def test_deleting_a_crd_removes_its_custom_resources(cluster: Cluster) -> None:
    sim = cluster.require_sim("CRD deletion is asynchronous on a real cluster")
    install_crd(cluster, "temps", "Temp")
    custom = k8s.CustomObjectsApi(cluster.api)
    custom.create_namespaced_custom_object(GROUP, "v1", cluster.namespace, "temps", _cr("Temp", "t", spec={}))
    k8s.ApiextensionsV1Api(cluster.api).delete_custom_resource_definition(f"temps.{GROUP}")
    assert sim.table.lookup(GROUP, "v1", "temps") is None
    assert sim.store.count((GROUP, "temps")) == 0
