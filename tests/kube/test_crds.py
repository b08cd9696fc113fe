"""CRDs from pydantic models: structural schemas, printer columns, install and serve on the simulator."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from shared.kube import crds, rest


class _Inner(BaseModel):
    name: str
    weight: float = 1.0


class _Spec(BaseModel):
    nodes: list[_Inner] = Field(default_factory=list)
    note: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)


class _Status(BaseModel):
    phase: str = "Pending"


WIDGET = crds.Resource(
    group="test.example.com",
    version="v1alpha1",
    kind="Widget",
    plural="widgets",
    scope="Cluster",
    spec=_Spec,
    status=_Status,
    short_names=("wd",),
    columns=(crds.PrinterColumn("Phase", ".status.phase"),),
)


def test_the_schema_is_structural_with_refs_inlined_and_optionals_nullable() -> None:
    schema = crds.model_schema(_Spec)
    assert "$ref" not in str(schema) and "$defs" not in str(schema) and "anyOf" not in str(schema)
    assert schema["properties"]["nodes"]["items"]["properties"]["name"]["type"] == "string"
    assert schema["properties"]["note"] == {"type": "string", "nullable": True}
    assert schema["properties"]["labels"]["additionalProperties"] == {"type": "string"}


def test_the_document_carries_status_subresource_and_printer_columns() -> None:
    doc = crds.document(WIDGET)
    version = doc["spec"]["versions"][0]
    assert doc["metadata"]["name"] == "widgets.test.example.com"
    assert version["subresources"] == {"status": {}}
    assert version["additionalPrinterColumns"] == [{"name": "Phase", "jsonPath": ".status.phase", "type": "string"}]
    assert doc["spec"]["names"]["shortNames"] == ["wd"]


def test_installing_twice_serves_the_resource(api_client: Any) -> None:
    crds.install(api_client, WIDGET)
    crds.install(api_client, WIDGET)
    rest.create(
        api_client,
        WIDGET.path(),
        {
            "apiVersion": "test.example.com/v1alpha1",
            "kind": "Widget",
            "metadata": {"name": "w1"},
            "spec": {"nodes": [{"name": "a"}]},
        },
    )
    assert [i["metadata"]["name"] for i in rest.list_items(api_client, WIDGET.path())] == ["w1"]
