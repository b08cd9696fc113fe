"""The custom-resource envelope: reading objects and files, the CRD from the class, status writes.

Covers: apiVersion, kind and an absent status filled in; metadata kept whole (fields we do not
name included) and dumped as read; the creation document; ``Resource.of`` gives the CRD a hand-written ``Resource``
gives; the status write carries the resourceVersion read, so a stale writer gets a 409 (the
status subresource's optimistic concurrency, apiserver ``registry/generic/registry/store.go``).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from shared.kube import crds, rest
from shared.kube import errors as kube_errors
from shared.kube.customresource import CustomResource, Fields, Phase


class _Spec(BaseModel):
    size: int
    note: str | None = None
    tags: list[str] = Field(default_factory=list)


class _Status(BaseModel):
    phase: str = "Pending"
    seen: int | None = None


class Gadget(CustomResource[_Spec, _Status]):
    GROUP = "test.example.com"
    VERSION = "v1alpha1"
    KIND = "Gadget"


GADGETS = crds.Resource.of(Gadget, plural="gadgets", scope="Namespaced", short_names=("gd",))


def test_the_envelope_is_filled_from_the_class_and_an_absent_status_is_the_defaults() -> None:
    gadget = Gadget.model_validate({"metadata": {"name": "g1"}, "spec": {"size": 2}, "status": None, "extra": 1})
    assert (gadget.apiVersion, gadget.kind, gadget.name, gadget.namespace) == (
        "test.example.com/v1alpha1",
        "Gadget",
        "g1",
        "default",
    )
    assert gadget.status == _Status() and not gadget.deleting


def test_metadata_is_kept_whole_and_typed_where_we_read_it() -> None:
    raw = {
        "metadata": {
            "name": "g1",
            "namespace": "team",
            "uid": "u-1",
            "resourceVersion": "42",
            "generation": 3,
            "labels": {"a": "b"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "u-0"}],
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [{"manager": "kubectl"}],
        },
        "spec": {"size": 1},
    }
    gadget = Gadget.model_validate(raw)
    assert (gadget.namespace, gadget.metadata.generation, gadget.metadata.ownerReferences[0].name) == ("team", 3, "cm")
    assert gadget.deleting
    assert gadget.model_dump()["metadata"]["managedFields"] == [{"manager": "kubectl"}]


def test_an_object_dumps_as_it_was_read_so_get_prints_what_the_server_sent() -> None:
    metadata = {"name": "g1", "namespace": "team", "uid": "u", "resourceVersion": "7", "managedFields": [{"m": 1}]}
    gadget = Gadget.model_validate({"metadata": metadata, "spec": {"size": 1}})
    dumped = gadget.model_dump(mode="json", exclude_none=True)
    assert list(dumped) == ["apiVersion", "kind", "metadata", "spec", "status"]
    assert list(dumped["metadata"].items()) == list(metadata.items())  # no empty labels, same order
    gadget.metadata.labels = {"set": "later"}
    assert gadget.model_dump()["metadata"]["labels"] == {"set": "later"}


def test_the_creation_document_holds_what_an_author_sets_and_nothing_the_server_assigns() -> None:
    gadget = Gadget.model_validate(
        {
            "metadata": {"name": "g1", "uid": "u", "resourceVersion": "9", "annotations": {"x": "y"}},
            "spec": {"size": 1},
            "status": {"phase": "Done"},
        }
    )
    assert gadget.creation_document("team") == {
        "apiVersion": "test.example.com/v1alpha1",
        "kind": "Gadget",
        "metadata": {"name": "g1", "annotations": {"x": "y"}, "namespace": "team"},
        "spec": {"size": 1, "tags": []},
    }


def test_the_crd_from_the_class_is_the_crd_a_hand_written_resource_gives() -> None:
    by_hand = crds.Resource(
        group="test.example.com",
        version="v1alpha1",
        kind="Gadget",
        plural="gadgets",
        scope="Namespaced",
        spec=_Spec,
        status=_Status,
        short_names=("gd",),
    )
    assert crds.document(GADGETS) == crds.document(by_hand)


def test_a_resource_that_does_not_name_its_models_is_refused() -> None:
    class Bare(CustomResource):  # type: ignore[type-arg]
        KIND = "Bare"

    with pytest.raises(TypeError, match="parametrize"):
        Bare.spec_model()


def test_editors_see_the_resources_own_apiversion_and_kind() -> None:
    properties = Gadget.model_json_schema()["properties"]
    assert properties["apiVersion"]["default"] == "test.example.com/v1alpha1"
    assert properties["kind"]["default"] == "Gadget"
    assert "default" not in properties["status"]


def test_a_status_write_with_a_stale_resource_version_is_a_conflict(api_client: Any) -> None:
    crds.install(api_client, GADGETS)
    gadget = Gadget.model_validate({"metadata": {"name": "g1"}, "spec": {"size": 1}})
    created = rest.create(api_client, GADGETS.path("default"), gadget.creation_document("default"))
    version = created["metadata"]["resourceVersion"]
    GADGETS.write_status(
        api_client, name="g1", namespace="default", resource_version=version, status=_Status(phase="Running", seen=1)
    )
    stored = Gadget.model_validate(rest.get(api_client, GADGETS.path("default", "g1")))
    assert stored.status == _Status(phase="Running", seen=1) and stored.spec.size == 1
    with pytest.raises(kube_errors.Conflict):
        GADGETS.write_status(
            api_client, name="g1", namespace="default", resource_version=version, status=_Status(phase="Lost")
        )
    assert GADGETS.what("g1", "default") == "gadget default/g1"


class _RunSpec(Fields):
    maxBytes: str | None = None


class _RunStatus(Fields):
    phase: Phase | None = None


class Run(CustomResource[_RunSpec, _RunStatus]):
    GROUP, VERSION, KIND = "test.example.com", "v1alpha1", "Run"


def test_spec_and_status_fields_refuse_an_unknown_key_and_the_phase_schema_is_the_bare_enum() -> None:
    """A misspelt key is an error, not a silent default; the CRD's phase is an enum of the four
    phases with no description of ours (pydantic would copy a class docstring into it)."""
    with pytest.raises(ValidationError, match="maxbytes"):
        Run.model_validate({"metadata": {"name": "r"}, "spec": {"maxbytes": "1G"}})
    assert Run.model_validate({"metadata": {"name": "r"}, "spec": {"maxBytes": "1G"}}).spec.maxBytes == "1G"
    schema = crds.document(crds.Resource.of(Run, plural="runs", scope="Namespaced"))
    status = schema["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
    assert status["properties"]["phase"] == {
        "type": "string",
        "enum": ["Pending", "Running", "Succeeded", "Failed"],
        "nullable": True,
    }
