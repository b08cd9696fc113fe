"""What the server does to an object before storing it: defaults, validation and size limits.

The entry points :mod:`shared.sim.apiserver.api` calls on every write. Built-in kinds get the
defaults a 1.34 server writes and the checks it applies, with its 422 texts (both live in
:mod:`shared.sim.apiserver.validation`); custom resources get the ObjectMeta checks here (their
schema is :mod:`shared.sim.apiserver.admission`'s business); CustomResourceDefinitions get the
few checks on their names. The size limits (413) apply to every object.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from typing import Any

from shared.sim.apiserver import apierrors, resources
from shared.sim.apiserver.apierrors import ApiError
from shared.sim.apiserver.validation import defaulting, formats, kinds, meta

MAX_REQUEST_BYTES = 3 * 1024 * 1024
"""The API server refuses request bodies above 3 MiB with 413."""
MAX_OBJECT_BYTES = 1536 * 1024
"""etcd's default request limit (1.5 MiB): a larger object cannot be stored (413)."""
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
"""Namespaces the NamespaceLifecycle admission plugin refuses to delete."""


def check_name(resource: resources.Resource, name: str) -> None:
    """Kept for its call site: names are judged with the rest of the object in :func:`check_spec`
    and :func:`check_metadata`, so one 422 lists every cause as the real server's does."""


def check_metadata(resource: resources.Resource, obj: dict[str, Any]) -> None:
    """ObjectMeta of a custom resource (built-in kinds are judged whole by :func:`check_spec`)."""
    if not resource.crd:
        return
    md = obj.get("metadata") or {}
    errors = meta.object_meta(md, formats.name_is_dns_subdomain, kube=False)
    if errors:
        raise apierrors.invalid(resource.kind, str(md.get("name") or ""), errors, group=resource.group)


def check_spec(resource: resources.Resource, obj: dict[str, Any], old: dict[str, Any] | None = None) -> None:
    """422 for a built-in object the real server would refuse; ``old`` is the stored object on update.

    A write that changes nothing but status (a status subresource write) is not judged again:
    the real server validates only the status there, which is not modelled.
    """
    if resource.crd:
        return
    name = str((obj.get("metadata") or {}).get("name") or "")
    if resource.kind == "CustomResourceDefinition":
        return  # judged whole by admission.validate (crdcheck)
    checks = kinds.checks(resource.group, resource.kind)
    if old is None:
        errors = checks.create(obj)
    else:
        before = copy.deepcopy(old)
        defaulting.scheme(resource.kind, before, version=resource.version)
        defaulting.on_update(resource.kind, obj, before)
        if _without_status(obj) == _without_status(before):
            return
        errors = checks.update(obj, before)
    if errors:
        raise apierrors.invalid(resource.kind, name, errors, group=resource.group)


def _without_status(obj: dict[str, Any]) -> Any:
    shown = {k: v for k, v in obj.items() if k != "status"}
    shown["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return meta.semantic(shown)


def check_size(resource: resources.Resource, obj: dict[str, Any], raw_size: int) -> None:
    """An object above the storage limit (1.5 MiB) cannot be stored: 413."""
    name = obj["metadata"].get("name", "")
    if raw_size > MAX_OBJECT_BYTES:
        raise ApiError(
            413,
            "RequestEntityTooLarge",
            f"etcdserver: request is too large: {resource.kind} {name!r} is {raw_size} bytes",
        )


def check_delete(resource: resources.Resource, name: str) -> None:
    """403 for deleting ``default``, ``kube-system`` or ``kube-public`` (NamespaceLifecycle)."""
    if resource.group_resource == ("", "namespaces") and name in IMMORTAL_NAMESPACES:
        raise ApiError(
            403,
            "Forbidden",
            f'namespaces "{name}" is forbidden: this namespace may not be deleted',
            details={"name": name, "group": "", "kind": "namespaces"},
        )


def on_create(
    resource: resources.Resource,
    obj: dict[str, Any],
    now: str,
    *,
    priorities: Mapping[str, tuple[int, str]] | None = None,
) -> None:
    """Server-side defaults of a new object, in place (``priorities``: the PriorityClasses, by name)."""
    kind = resource.kind
    if resource.subresources and "status" in resource.subresources and not resource.keep_status_on_create:
        obj.pop("status", None)
    if not resource.crd:
        defaulting.on_create(kind, obj, version=resource.version, priorities=priorities)
    if kind == "Namespace":
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj["status"] = {"phase": "Active"}
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    elif kind == "Node":
        obj.setdefault("spec", {})
        obj.setdefault("status", {})
    elif kind == "CustomResourceDefinition":
        obj["status"] = _crd_status(obj.get("spec") or {}, now)


def _crd_status(crd_spec: dict[str, Any], now: str) -> dict[str, Any]:
    accepted = crd_spec.get("names") or {}
    return {
        "conditions": [
            {
                "type": "NamesAccepted",
                "status": "True",
                "reason": "NoConflicts",
                "message": "no conflicts found",
                "lastTransitionTime": now,
            },
            {
                "type": "Established",
                "status": "True",
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
                "lastTransitionTime": now,
            },
        ],
        "acceptedNames": {
            "plural": accepted.get("plural"),
            "kind": accepted.get("kind"),
            "singular": accepted.get("singular") or str(accepted.get("kind", "")).lower(),
            "listKind": accepted.get("listKind") or f"{accepted.get('kind')}List",
            **({"shortNames": accepted["shortNames"]} if accepted.get("shortNames") else {}),
        },
        "storedVersions": [v["name"] for v in crd_spec.get("versions", []) if v.get("storage")],
    }


def on_write(resource: resources.Resource, obj: dict[str, Any]) -> None:
    """What every create and update does to a body: ``stringData`` folded into a Secret's
    ``data``, and the scheme defaults of a built-in kind."""
    if resource.kind == "Secret" and not resource.crd and "stringData" in obj:
        folded = obj.pop("stringData") or {}
        if folded:
            data = obj.setdefault("data", {})
            for key, value in folded.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
    if not resource.crd:
        defaulting.scheme(resource.kind, obj, version=resource.version)
