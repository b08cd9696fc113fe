"""Server-side apply and managedFields, as ``kubectl apply --server-side`` and helm 4 rely on them.

Covers: an apply creates the object and records the applier's fields (operation Apply, FieldsV1);
an Update (a patch with another manager) takes the fields it changed; applying a different value
to a field another manager owns is a 409 ``Conflict`` with one ``FieldManagerConflict`` cause and
the real message, unless ``force=true``, which moves the field; the same value is shared, not a
conflict; a field the applier stops applying is removed, unless another manager still owns it;
a repeated identical apply leaves the object (and its resourceVersion) as it was; an apply
without ``fieldManager`` is refused. Sources: apimachinery:pkg/util/managedfields/internal/
conflict.go (message and causes), structured-merge-diff (ownership and removal), Kubernetes docs
"Server-Side Apply" (conflicts, transferring ownership).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"


def _path(cluster: Cluster, name: str) -> str:
    return f"/api/v1/namespaces/{cluster.namespace}/configmaps/{name}"


def _apply(cluster: Cluster, name: str, data: dict[str, str], *, manager: str, force: bool = False) -> Any:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}
    query = [("fieldManager", manager)] + ([("force", "true")] if force else [])
    return objects.request(cluster.api, "PATCH", _path(cluster, name), body, content_type=APPLY, query=query)[1]


def _owners(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"].get("managedFields") or []}


def test_apply_creates_and_records_the_appliers_fields(cluster: Cluster) -> None:
    obj = _apply(cluster, "ssa", {"a": "1", "b": "2"}, manager="team-a")
    assert obj["data"] == {"a": "1", "b": "2"}
    owners = _owners(obj)
    assert owners[("team-a", "Apply")] == {"f:data": {"f:a": {}, "f:b": {}}}
    (entry,) = obj["metadata"]["managedFields"]
    assert entry["apiVersion"] == "v1" and entry["fieldsType"] == "FieldsV1" and entry["time"]


def test_a_different_value_on_anothers_field_is_a_conflict(cluster: Cluster) -> None:
    _apply(cluster, "clash", {"a": "1"}, manager="team-a")
    with pytest.raises(k8s.ApiException) as caught:
        _apply(cluster, "clash", {"a": "2"}, manager="team-b")
    assert caught.value.status == 409
    status = json.loads(caught.value.body)
    assert status["reason"] == "Conflict"
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "team-a" using v1: .data.a'
    assert status["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "team-a" using v1', "field": ".data.a"}
    ]


def test_force_takes_the_field_and_the_same_value_is_shared(cluster: Cluster) -> None:
    _apply(cluster, "moved", {"a": "1", "b": "1"}, manager="team-a")
    _apply(cluster, "moved", {"b": "1"}, manager="team-b")  # same value: shared, no conflict
    obj = _apply(cluster, "moved", {"a": "2", "b": "1"}, manager="team-b", force=True)
    owners = _owners(obj)
    assert obj["data"] == {"a": "2", "b": "1"}
    assert owners[("team-a", "Apply")] == {"f:data": {"f:b": {}}}
    assert owners[("team-b", "Apply")] == {"f:data": {"f:a": {}, "f:b": {}}}


def test_a_field_no_longer_applied_is_removed_unless_someone_else_owns_it(cluster: Cluster) -> None:
    _apply(cluster, "pruned", {"a": "1", "b": "2", "c": "3"}, manager="team-a")
    _apply(cluster, "pruned", {"c": "3"}, manager="team-b")
    obj = _apply(cluster, "pruned", {"a": "1"}, manager="team-a")
    assert obj["data"] == {"a": "1", "c": "3"}


def test_an_update_takes_the_fields_it_changed_from_the_applier(cluster: Cluster) -> None:
    _apply(cluster, "updated", {"a": "1", "b": "2"}, manager="team-a")
    objects.request(
        cluster.api,
        "PATCH",
        _path(cluster, "updated"),
        {"data": {"a": "9"}},
        content_type=MERGE,
        query=[("fieldManager", "hand-edit")],
    )
    obj = objects.request(cluster.api, "GET", _path(cluster, "updated"))[1]
    owners = _owners(obj)
    assert owners[("hand-edit", "Update")] == {"f:data": {"f:a": {}}}
    assert owners[("team-a", "Apply")] == {"f:data": {"f:b": {}}}
    with pytest.raises(k8s.ApiException) as caught:
        _apply(cluster, "updated", {"a": "1", "b": "2"}, manager="team-a")
    assert json.loads(caught.value.body)["message"] == (
        'Apply failed with 1 conflict: conflict with "hand-edit" using v1: .data.a'
    )


def test_a_repeated_identical_apply_changes_nothing(cluster: Cluster) -> None:
    first = _apply(cluster, "same", {"a": "1"}, manager="team-a")
    second = _apply(cluster, "same", {"a": "1"}, manager="team-a")
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_create_records_the_creating_manager_as_an_update(cluster: Cluster) -> None:
    status, obj, _ = objects.request(
        cluster.api,
        "POST",
        f"/api/v1/namespaces/{cluster.namespace}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "created"}, "data": {"k": "v"}},
        query=[("fieldManager", "creator")],
    )
    assert status == 201
    assert _owners(obj)[("creator", "Update")] == {"f:data": {"f:k": {}}}


def test_keyed_lists_are_owned_item_by_item(cluster: Cluster) -> None:
    pod = objects.pod("owned", containers=("a", "b"))
    status, obj, _ = objects.request(
        cluster.api,
        "PATCH",
        f"/api/v1/namespaces/{cluster.namespace}/pods/owned",
        pod,
        content_type=APPLY,
        query=[("fieldManager", "team-a")],
    )
    assert status in (200, 201)
    fields = _owners(obj)[("team-a", "Apply")]
    containers = fields["f:spec"]["f:containers"]
    assert set(containers) == {'k:{"name":"a"}', 'k:{"name":"b"}'}
    assert containers['k:{"name":"a"}'] == {".": {}, "f:image": {}, "f:name": {}}
