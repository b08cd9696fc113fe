"""ValidationRequest objects in the cluster: the CRD (generated from the models) and raw-JSON access.

Status goes through the status subresource with the resourceVersion just read, so a stale
controller gets a 409 and recomputes instead of clobbering a newer step. The finalizer keeps a
deleted request visible until the controller has released its nodes.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from shared import errors
from shared.kube import crds, listing, rest
from shared.kube.api import KubeApi
from shared.lifecycle import models

RESOURCE = crds.Resource.of(
    models.ValidationRequest,
    plural=models.PLURAL,
    scope="Cluster",
    short_names=("vr",),
    categories=("nvsentinel",),
    columns=(
        crds.PrinterColumn("Phase", ".status.phase"),
        crds.PrinterColumn("Nodes", ".spec.nodes[*].name"),
        crds.PrinterColumn("Tests", ".spec.tests[*]"),
        crds.PrinterColumn("Message", ".status.message", priority=1),
        crds.PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
    ),
)


def install(api: KubeApi) -> None:
    crds.install(api, RESOURCE)


def parse(raw: dict[str, Any]) -> models.ValidationRequest | None:
    """The object, or None for one someone wrote malformed (it cannot be run; listing skips it)."""
    try:
        return models.ValidationRequest.model_validate(raw)
    except ValidationError:
        return None


def get(api: KubeApi, name: str) -> tuple[models.ValidationRequest, dict[str, Any]]:
    """The parsed request and its raw metadata; NotFound when absent, InvalidInput when malformed."""
    raw = rest.get(api, RESOURCE.path(name=name), what=RESOURCE.what(name))
    parsed = parse(raw)
    if parsed is None:
        raise errors.InvalidInput("malformed ValidationRequest", where=RESOURCE.what(name))
    return parsed, raw["metadata"]


def list_all(api: KubeApi) -> list[models.ValidationRequest]:
    found = [parse(item) for item in rest.list_items(api, RESOURCE.path())]
    return sorted((vr for vr in found if vr is not None), key=lambda vr: (vr.metadata.creationTimestamp or "", vr.name))


def list_readable(api: KubeApi) -> listing.Listing[models.ValidationRequest]:
    """``list_all`` for a person: the malformed requests it leaves out are named, not dropped silently."""
    found = listing.parse(rest.list_items(api, RESOURCE.path()), models.ValidationRequest, what=RESOURCE.what)
    found.items.sort(key=lambda vr: (vr.metadata.creationTimestamp or "", vr.name))
    return found


def create(api: KubeApi, name: str, nodes: list[str], tests: list[str], *, source: str) -> dict[str, Any]:
    body = {
        "apiVersion": models.API_VERSION,
        "kind": models.KIND,
        "metadata": {"name": name, "labels": {models.SOURCE_LABEL: source}},
        "spec": {"nodes": [{"name": n} for n in nodes], "tests": list(tests)},
    }
    return rest.create(api, RESOURCE.path(), body, what=RESOURCE.what(name))


def write_status(api: KubeApi, name: str, status: models.Status, metadata: dict[str, Any]) -> dict[str, Any]:
    """PUT the status with the resourceVersion read (409 when someone wrote since)."""
    return RESOURCE.write_status(api, name=name, resource_version=metadata["resourceVersion"], status=status)


def set_finalizer(api: KubeApi, name: str, *, present: bool) -> dict[str, Any]:
    """Add or drop our finalizer (one PUT of the object with the resourceVersion read)."""
    raw = rest.get(api, RESOURCE.path(name=name), what=RESOURCE.what(name))
    finalizers = [f for f in raw["metadata"].get("finalizers") or [] if f != models.FINALIZER]
    if present:
        finalizers.append(models.FINALIZER)
    if finalizers == (raw["metadata"].get("finalizers") or []):
        return raw
    raw["metadata"]["finalizers"] = finalizers
    return rest.replace(api, RESOURCE.path(name=name), raw, what=RESOURCE.what(name))


def delete(api: KubeApi, name: str) -> bool:
    return rest.delete(api, RESOURCE.path(name=name), what=RESOURCE.what(name))
