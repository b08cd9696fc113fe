"""Small builders for the operators' CRD schemas, so each CRD module reads as the Go types it models.

Every helper returns a new structural-schema node (research/apiserver.md §4.6: every node typed, no
``additionalProperties`` beside ``properties``). Keyword arguments become schema keywords
(``default``, ``enum``, ``minimum``, ``maxLength`` …); ``rules`` become ``x-kubernetes-validations``.
Also here: the pieces several CRDs share, such as ``metav1.Condition`` and the CRD envelope.
"""

from __future__ import annotations

from typing import Any

IMMUTABLE = "Value is immutable"


def _node(kind: str, extra: dict[str, Any]) -> dict[str, Any]:
    node: dict[str, Any] = {"type": kind}
    rules = extra.pop("rules", None)
    for key, value in extra.items():
        node[_KEYWORDS.get(key, key)] = value
    if rules:
        node["x-kubernetes-validations"] = [dict(r) for r in rules]
    return node


_KEYWORDS = {
    "list_type": "x-kubernetes-list-type",
    "map_keys": "x-kubernetes-list-map-keys",
    "map_type": "x-kubernetes-map-type",
    "min_items": "minItems",
    "max_items": "maxItems",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_properties": "minProperties",
}


def string(**extra: Any) -> dict[str, Any]:
    return _node("string", extra)


def integer(*, fmt: str = "int32", **extra: Any) -> dict[str, Any]:
    return _node("integer", {"format": fmt, **extra})


def boolean(**extra: Any) -> dict[str, Any]:
    return _node("boolean", extra)


def date_time(**extra: Any) -> dict[str, Any]:
    return _node("string", {"format": "date-time", **extra})


def obj(properties: dict[str, Any] | None = None, *, required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """An object with these properties (none: it keeps no field at all, as an empty Go struct)."""
    node = _node("object", extra)
    if properties is not None:
        node["properties"] = properties
    if required:
        node["required"] = sorted(required)
    return node


def array(items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    node = _node("array", extra)
    node["items"] = items
    return node


def string_map(**extra: Any) -> dict[str, Any]:
    node = _node("object", extra)
    node["additionalProperties"] = {"type": "string"}
    return node


def immutable(message: str = IMMUTABLE) -> dict[str, str]:
    return {"rule": "self == oldSelf", "message": message}


def condition() -> dict[str, Any]:
    """``metav1.Condition``, as controller-gen writes it."""
    return obj(
        {
            "lastTransitionTime": date_time(),
            "message": string(max_length=32768),
            "observedGeneration": integer(fmt="int64", minimum=0),
            "reason": string(max_length=1024, min_length=1, pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"),
            "status": string(enum=["True", "False", "Unknown"]),
            "type": string(
                max_length=316,
                pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
            ),
        },
        required=["lastTransitionTime", "message", "reason", "status", "type"],
    )


def crd(
    *,
    group: str,
    kind: str,
    plural: str,
    version: str,
    schema: dict[str, Any],
    namespaced: bool = True,
    status: bool = True,
    columns: list[dict[str, Any]] | None = None,
    short_names: list[str] | None = None,
) -> dict[str, Any]:
    """The CustomResourceDefinition object that serves ``schema`` at ``group/version``."""
    names: dict[str, Any] = {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()}
    if short_names:
        names["shortNames"] = list(short_names)
    served: dict[str, Any] = {
        "name": version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
    }
    if status:
        served["subresources"] = {"status": {}}
    if columns:
        served["additionalPrinterColumns"] = columns
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": names,
            "scope": "Namespaced" if namespaced else "Cluster",
            "versions": [served],
        },
    }


def root(spec: dict[str, Any], status: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of a kind: apiVersion, kind, metadata, spec and (optionally) status."""
    properties: dict[str, Any] = {
        "apiVersion": string(),
        "kind": string(),
        "metadata": obj(),
        "spec": spec,
    }
    if status is not None:
        properties["status"] = status
    return obj(properties, **extra)
