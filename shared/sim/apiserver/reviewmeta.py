"""The metadata a review answers with, and the one managedFields entry its create records.

The create handler wipes the system fields of what it is sent and takes the namespace from the URL
(apiserver:pkg/endpoints/handlers/create.go, ``WipeObjectMetaSystemFields``), then records an Update
by the request's field manager: every field the object sets against the kind's zero value, as
FieldsV1. :mod:`shared.sim.apiserver.reviews` answers with these; ``ordered`` is also how an invalid
review's metadata is printed in its 422.
"""

from __future__ import annotations

import json
from typing import Any

from shared.sim.apiserver import apierrors, resources, reviewtypes

_WIPED = ("selfLink", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")
_META_ORDER = (
    "name",
    "generateName",
    "namespace",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)
_UNOWNED = ("name", "namespace", "resourceVersion", "generation", "managedFields")


def metadata(meta: dict[str, Any], namespace: str) -> dict[str, Any]:
    """Metadata as the create handler leaves it: system fields wiped, the namespace the URL's
    (apiserver:pkg/endpoints/handlers/create.go, ``WipeObjectMetaSystemFields``)."""
    if meta.get("namespace") and namespace and meta["namespace"] != namespace:
        raise apierrors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    out = {k: v for k, v in meta.items() if k not in _WIPED and k != "managedFields"}
    out.pop("namespace", None)
    if namespace:
        out["namespace"] = namespace
    return out


def ordered(meta: dict[str, Any], managed: list[dict[str, Any]]) -> dict[str, Any]:
    """ObjectMeta in Go's field order, ``creationTimestamp: null`` included, as json.Marshal writes it."""
    full = {**meta, "creationTimestamp": None}
    if managed:
        full["managedFields"] = managed
    return {k: full[k] for k in _META_ORDER if k in full}


def _fields_v1(new: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    """What an Update from ``live`` to ``new`` owns, as FieldsV1: a field absent before is owned
    with everything under it (``.`` marks the map itself), a changed leaf alone."""
    out: dict[str, Any] = {}
    for key in sorted(new):
        value = new[key]
        if key not in live:
            out[f"f:{key}"] = _whole(value, key)
        elif isinstance(value, dict) and isinstance(live[key], dict):
            inner = _fields_v1(value, live[key])
            if inner:
                out[f"f:{key}"] = inner
        elif value != live[key]:
            out[f"f:{key}"] = {}
    return out


def _whole(value: Any, key: str) -> dict[str, Any]:
    if isinstance(value, dict) and value:
        return {".": {}, **{f"f:{k}": _whole(v, k) for k, v in sorted(value.items())}}
    if key == "finalizers" and isinstance(value, list):  # a set: one ``v:`` per item
        return {".": {}, **{f"v:{json.dumps(v)}": {} for v in sorted(value)}}
    return {}


def managed(
    obj: dict[str, Any], meta: dict[str, Any], *, kind: str, r: resources.Resource, manager: str, now: str
) -> list[dict[str, Any]]:
    """The one managedFields entry the create handler adds before the registry sees the object."""
    owned_meta = {k: v for k, v in meta.items() if k not in _UNOWNED}
    new = {"metadata": {**owned_meta, "creationTimestamp": None}, **{k: obj[k] for k in ("spec", "status") if k in obj}}
    live = {**reviewtypes.zero(kind), "metadata": {"creationTimestamp": None}}
    fields = _fields_v1(new, live)
    if not fields:
        return []
    entry: dict[str, Any] = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": r.group_version,
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if not manager:
        del entry["manager"]
    return [entry]
