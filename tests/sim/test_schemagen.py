"""The generated 1.34 schema file: it matches its source, and it is OpenAPI v3 as kube-openapi writes it.

The source is ``kubernetes-validate`` (a test dependency); when it is missing the comparison skips
and says so. The shape checks follow the published 1.34 documents (``api/openapi-spec/v3`` in the
Kubernetes repository): no ``"null"`` type alternatives, references under
``#/components/schemas/`` and never beside other keys, ``x-kubernetes-*`` extensions kept, top-level
kinds tagged with their group/version/kind and their ``apiVersion``/``kind`` plain strings.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from shared.sim.apiserver import kinds, schemagen


def test_the_data_file_is_what_the_generator_writes_from_its_source() -> None:
    try:
        text, version = schemagen.source_text()
    except ImportError:
        pytest.skip("kubernetes-validate is not installed (pip install -e '.[test]')")
    assert schemagen.OUTPUT.read_text(encoding="utf-8") == schemagen.generate(text, version), (
        "shared/sim/apiserver/data/openapi-1.34.json is stale: run python -m shared.sim.apiserver.schemagen"
    )


def test_the_header_names_the_source_package_and_file() -> None:
    header = kinds.definitions()["header"]
    assert header["kubernetes"] == "1.34"
    assert header["source"].startswith("kubernetes-validate ")
    assert header["source"].endswith("kubernetes_validate/kubernetes-json-schema/v1.34.0-local/_definitions.json")


def walk(node: Any, visit: Any) -> None:
    """Call ``visit`` on every schema node (property names are not schema keys)."""
    if isinstance(node, dict):
        visit(node)
        for key, value in node.items():
            if key == "properties":
                for sub in value.values():
                    walk(sub, visit)
            elif key in ("items", "additionalProperties", "allOf", "oneOf", "anyOf"):
                walk(value, visit)
    elif isinstance(node, list):
        for item in node:
            walk(item, visit)


def test_schemas_are_openapi_v3_with_resolvable_references() -> None:
    schemas = kinds.definitions()["schemas"]
    problems: list[str] = []

    def visit(node: dict[str, Any]) -> None:
        if "type" in node and not isinstance(node["type"], str):
            problems.append(f"type {node['type']!r}")
        if "$ref" in node:
            ref = node["$ref"]
            if len(node) != 1:
                problems.append(f"$ref with siblings {sorted(node)}")
            if not ref.startswith("#/components/schemas/") or ref.split("/")[-1] not in schemas:
                problems.append(f"dangling {ref}")

    for schema in schemas.values():
        walk(schema, visit)
    assert problems == []


def test_kinds_carry_their_gvk_and_plain_api_version_and_kind() -> None:
    deployment = kinds.definitions()["schemas"]["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert "enum" not in deployment["properties"]["apiVersion"]
    assert "enum" not in deployment["properties"]["kind"]
    assert deployment["properties"]["spec"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}],
        "description": "Specification of the desired behavior of the Deployment.",
    }


def test_list_and_map_extensions_are_kept() -> None:
    spec = kinds.definitions()["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]
    assert spec["containers"]["x-kubernetes-list-type"] == "map"
    assert spec["containers"]["x-kubernetes-list-map-keys"] == ["name"]
    assert spec["containers"]["x-kubernetes-patch-merge-key"] == "name"
    assert spec["containers"]["x-kubernetes-patch-strategy"] == "merge"
    assert spec["nodeSelector"]["x-kubernetes-map-type"] == "atomic"


def test_only_served_kinds_and_what_they_reference_are_kept() -> None:
    schemas = kinds.definitions()["schemas"]
    assert "io.k8s.api.storage.v1.StorageClass" not in schemas
    assert "io.k8s.api.core.v1.PodList" in schemas
    assert len(json.dumps(schemas)) < 1_000_000
