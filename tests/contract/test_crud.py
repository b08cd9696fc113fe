"""Create, read, update, delete through the official client, as a real API server answers them.

Covers: 201 on create with server-set uid/creationTimestamp/resourceVersion; generateName;
404 NotFound and 409 AlreadyExists as Status objects; a stale resourceVersion on update → 409;
no-op updates keep the resourceVersion; generation bumps on spec changes only; dryRun=All stores
nothing; list resourceVersion; namespaces that do not exist.
"""

from __future__ import annotations

import json

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster


def test_create_answers_the_object_with_server_owned_metadata(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    made = core.create_namespaced_config_map(cluster.namespace, objects.configmap("one", {"a": "1"}))
    assert made.metadata.uid and made.metadata.creation_timestamp is not None
    assert int(made.metadata.resource_version) > 0
    assert core.read_namespaced_config_map("one", cluster.namespace).data == {"a": "1"}


def test_generate_name_gets_a_unique_suffix(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    body = {"metadata": {"generateName": "gen-"}, "data": {}}
    first = core.create_namespaced_config_map(cluster.namespace, body)
    second = core.create_namespaced_config_map(cluster.namespace, {"metadata": {"generateName": "gen-"}})
    assert first.metadata.name.startswith("gen-") and first.metadata.name != second.metadata.name


def test_reading_a_missing_object_is_a_404_status(cluster: Cluster) -> None:
    with pytest.raises(k8s.ApiException) as caught:
        k8s.CoreV1Api(cluster.api).read_namespaced_config_map("absent", cluster.namespace)
    assert caught.value.status == 404
    body = json.loads(caught.value.body)
    assert (body["kind"], body["reason"], body["code"]) == ("Status", "NotFound", 404)


def test_creating_a_taken_name_is_a_409_already_exists(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("dup"))
    with pytest.raises(k8s.ApiException) as caught:
        core.create_namespaced_config_map(cluster.namespace, objects.configmap("dup"))
    assert caught.value.status == 409
    assert json.loads(caught.value.body)["reason"] == "AlreadyExists"


def test_an_update_with_a_stale_resource_version_is_a_409_conflict(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    old = core.create_namespaced_config_map(cluster.namespace, objects.configmap("cas", {"v": "1"}))
    fresh = core.read_namespaced_config_map("cas", cluster.namespace)
    fresh.data = {"v": "2"}
    core.replace_namespaced_config_map("cas", cluster.namespace, fresh)
    old.data = {"v": "3"}
    with pytest.raises(k8s.ApiException) as caught:
        core.replace_namespaced_config_map("cas", cluster.namespace, old)
    assert caught.value.status == 409
    assert json.loads(caught.value.body)["reason"] == "Conflict"
    assert core.read_namespaced_config_map("cas", cluster.namespace).data == {"v": "2"}


def test_an_update_that_changes_nothing_keeps_the_resource_version(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    made = core.create_namespaced_config_map(cluster.namespace, objects.configmap("same", {"v": "1"}))
    again = core.replace_namespaced_config_map("same", cluster.namespace, made)
    assert again.metadata.resource_version == made.metadata.resource_version


def test_generation_counts_spec_changes_but_not_metadata_changes(cluster: Cluster) -> None:
    apps = k8s.AppsV1Api(cluster.api)
    body = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }
    made = apps.create_namespaced_deployment(cluster.namespace, body)
    assert made.metadata.generation == 1
    labelled = apps.patch_namespaced_deployment("web", cluster.namespace, {"metadata": {"labels": {"x": "y"}}})
    assert labelled.metadata.generation == 1
    scaled = apps.patch_namespaced_deployment("web", cluster.namespace, {"spec": {"replicas": 3}})
    assert scaled.metadata.generation == 2


def test_dry_run_validates_and_stores_nothing(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    answer = core.create_namespaced_config_map(cluster.namespace, objects.configmap("dry", {"a": "1"}), dry_run="All")
    assert answer.metadata.name == "dry"
    with pytest.raises(k8s.ApiException) as caught:
        core.read_namespaced_config_map("dry", cluster.namespace)
    assert caught.value.status == 404
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("kept", {"a": "1"}))
    core.patch_namespaced_config_map("kept", cluster.namespace, {"data": {"a": "2"}}, dry_run="All")
    core.delete_namespaced_config_map("kept", cluster.namespace, dry_run="All")
    assert core.read_namespaced_config_map("kept", cluster.namespace).data == {"a": "1"}


def test_a_list_carries_a_resource_version_and_every_item(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    for n in range(3):
        core.create_namespaced_config_map(cluster.namespace, objects.configmap(f"item-{n}"))
    listed = core.list_namespaced_config_map(cluster.namespace)
    assert int(listed.metadata.resource_version) > 0
    assert {"item-0", "item-1", "item-2"} <= {i.metadata.name for i in listed.items}


def test_creating_in_a_namespace_that_does_not_exist_is_a_404(cluster: Cluster) -> None:
    with pytest.raises(k8s.ApiException) as caught:
        k8s.CoreV1Api(cluster.api).create_namespaced_config_map("no-such-namespace-x1", objects.configmap("a"))
    assert caught.value.status == 404


def test_an_invalid_name_is_a_422(cluster: Cluster) -> None:
    with pytest.raises(k8s.ApiException) as caught:
        k8s.CoreV1Api(cluster.api).create_namespaced_config_map(cluster.namespace, objects.configmap("Bad_Name"))
    assert caught.value.status == 422
    assert json.loads(caught.value.body)["reason"] == "Invalid"


def test_secret_string_data_is_stored_base64_encoded(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_secret(cluster.namespace, {"metadata": {"name": "s"}, "stringData": {"k": "v"}})
    secret = core.read_namespaced_secret("s", cluster.namespace)
    assert secret.data == {"k": "dg=="} and secret.type == "Opaque"
