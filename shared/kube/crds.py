"""CustomResourceDefinitions generated from pydantic models, and installing them.

The models are the source of truth for a custom resource's shape; the CRD's openAPIV3Schema is
derived from them (``$ref``s inlined, as the API server requires), so ``kubectl explain`` and server
validation agree with what the programs read and write. Installing creates or updates the CRD and
waits until it is Established. ``Resource.of`` reads a resource's group, version, kind, spec and
status from its ``CustomResource`` class; ``Resource.write_status`` is the one status write.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from shared import errors
from shared.kube import rest
from shared.kube.api import KubeApi
from shared.kube.customresource import CustomResource

CRD_PATH = rest.group_path("apiextensions.k8s.io", "v1", "customresourcedefinitions")
_DROPPED_KEYS = ("title", "$defs", "discriminator", "const")


@dataclass(frozen=True)
class PrinterColumn:
    name: str
    json_path: str
    type: str = "string"
    description: str = ""
    priority: int = 0

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.name, "jsonPath": self.json_path, "type": self.type}
        if self.description:
            doc["description"] = self.description
        if self.priority:
            doc["priority"] = self.priority
        return doc


@dataclass(frozen=True)
class Resource:
    """One custom resource kind: where it is served and what its spec and status look like."""

    group: str
    version: str
    kind: str
    plural: str
    scope: str  # "Namespaced" or "Cluster"
    spec: type[BaseModel] | None = None
    status: type[BaseModel] | None = None
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    columns: tuple[PrinterColumn, ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        return f"{self.plural}.{self.group}"

    @classmethod
    def of(
        cls,
        model: type[CustomResource[Any, Any]],
        *,
        plural: str,
        scope: str,
        short_names: tuple[str, ...] = (),
        categories: tuple[str, ...] = (),
        columns: tuple[PrinterColumn, ...] = (),
    ) -> Resource:
        """The resource ``model`` describes: its group, version and kind, its spec and status."""
        return cls(
            group=model.GROUP,
            version=model.VERSION,
            kind=model.KIND,
            plural=plural,
            scope=scope,
            spec=model.spec_model(),
            status=model.status_model(),
            short_names=short_names,
            categories=categories,
            columns=columns,
        )

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        return rest.group_path(
            self.group, self.version, self.plural, namespace if self.scope == "Namespaced" else None, name
        )

    def what(self, name: str, namespace: str | None = None) -> str:
        """How messages name one object: ``certification default/c1``, ``validationrequest vr-1``."""
        return f"{self.kind.lower()} {namespace}/{name}" if namespace else f"{self.kind.lower()} {name}"

    def write_status(
        self, api: KubeApi, *, name: str, resource_version: str, status: BaseModel, namespace: str | None = None
    ) -> dict[str, Any]:
        """PUT the status subresource with the resourceVersion read: a 409 when someone wrote since,
        so a stale writer recomputes instead of clobbering a newer step."""
        metadata = {"name": name, "namespace": namespace, "resourceVersion": resource_version}
        body = {
            "apiVersion": f"{self.group}/{self.version}",
            "kind": self.kind,
            "metadata": {k: v for k, v in metadata.items() if v is not None},
            "status": status.model_dump(mode="json", exclude_none=True),
        }
        return rest.replace(api, self.path(namespace, name) + "/status", body, what=self.what(name, namespace))


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    """Resolve ``$ref``s and drop keywords the structural-schema rules of the API server reject."""
    if isinstance(schema, list):
        return [_inline(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        target = defs[schema["$ref"].rsplit("/", 1)[-1]]
        merged = {**copy.deepcopy(target), **{k: v for k, v in schema.items() if k != "$ref"}}
        return _inline(merged, defs)
    out = {k: _inline(v, defs) for k, v in schema.items() if k not in _DROPPED_KEYS}
    any_of = out.pop("anyOf", None)
    if any_of is not None:
        # Optional[X] becomes X with nullable; other unions stay open (x-kubernetes-preserve-unknown-fields).
        non_null = [s for s in any_of if s.get("type") != "null"]
        if len(non_null) == 1:
            out = {**non_null[0], **out, "nullable": True}
        else:
            out = {**out, "x-kubernetes-preserve-unknown-fields": True}
    if out.get("type") == "object" and "properties" not in out and "additionalProperties" not in out:
        out["x-kubernetes-preserve-unknown-fields"] = True
    if "default" in out and out["default"] is None:
        del out["default"]
    if out.get("additionalProperties") is False and "properties" in out:
        # A structural schema may not have both (pydantic's extra="forbid" writes them together);
        # the server prunes undeclared fields anyway, and Strict clients get them refused.
        del out["additionalProperties"]
    return out


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The structural openAPIV3Schema of a pydantic model."""
    raw = model.model_json_schema(by_alias=True)
    defs = raw.pop("$defs", {})
    result: dict[str, Any] = _inline(raw, defs)
    return result


def document(resource: Resource) -> dict[str, Any]:
    """The CustomResourceDefinition of ``resource``."""
    properties: dict[str, Any] = {}
    if resource.spec is not None:
        properties["spec"] = model_schema(resource.spec)
    if resource.status is not None:
        properties["status"] = model_schema(resource.status)
    version: dict[str, Any] = {
        "name": resource.version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "properties": properties}},
    }
    if resource.status is not None:
        version["subresources"] = {"status": {}}
    if resource.columns:
        version["additionalPrinterColumns"] = [c.document() for c in resource.columns]
    names: dict[str, Any] = {"plural": resource.plural, "singular": resource.kind.lower(), "kind": resource.kind}
    if resource.short_names:
        names["shortNames"] = list(resource.short_names)
    if resource.categories:
        names["categories"] = list(resource.categories)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": resource.name},
        "spec": {"group": resource.group, "scope": resource.scope, "names": names, "versions": [version]},
    }


def install(
    api: KubeApi,
    resource: Resource,
    *,
    timeout: float = 30.0,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], float] = time.monotonic,
) -> None:
    """Create or update the CRD and wait until the API server serves it (Established)."""
    desired = document(resource)
    path = f"{CRD_PATH}/{resource.name}"
    try:
        current = rest.get(api, path, what=resource.name)
    except errors.NotFound:
        rest.create(api, CRD_PATH, desired, what=resource.name)
    else:
        desired["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        rest.replace(api, path, desired, what=resource.name)
    deadline = now() + timeout
    while True:
        conditions = (rest.get(api, path, what=resource.name).get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
            return
        if now() >= deadline:
            raise errors.Timeout(f"CRD {resource.name} was not Established within {timeout:.0f}s")
        sleep(0.2)
