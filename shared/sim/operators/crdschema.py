"""Structural CRD schemas for the Kubernetes types an operator's CRD embeds, generated as controller-gen does.

An operator's CRD that holds a Job or pod template (JobSet's ``replicatedJobs[].template``, MPIJob's
``mpiReplicaSpecs.*.template``) carries the whole Kubernetes type inline, because a CRD schema
cannot refer to another. controller-gen writes it from the Go types; this module writes the same
thing from the Kubernetes 1.34 OpenAPI definitions the emulator already serves
(``apiserver/data/openapi-1.34.json``): every ``$ref`` inlined; descriptions, enums, patch
strategies and unions dropped (controller-gen emits none of those for core types); an embedded
``ObjectMeta`` reduced to ``annotations``, ``finalizers``, ``labels``, ``name``, ``namespace``
(``crd:generateEmbeddedObjectMeta=true``, which all three operators use); ``IntOrString`` and
``Quantity`` as ``x-kubernetes-int-or-string`` (a quantity with its pattern); ``Time`` as a
``date-time`` string; and the defaults the core types declare with ``+default`` markers (a port's
``protocol: TCP``, a LocalObjectReference's ``name: ""``, …), which the real CRDs carry and a
list-map key needs. The result is structural (research/apiserver.md §4.6), so the emulator prunes and
validates a template exactly as far as the real CRD does — no further.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from shared.sim.apiserver import kinds

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_SPECIAL: dict[str, dict[str, Any]] = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
    },
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": _QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": True,
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {"type": "string", "format": "date-time"},
}
# The ``+default`` markers of k8s.io/api/core/v1 types.go, by (schema, property).
_DEFAULTS: dict[tuple[str, str], Any] = {
    ("LocalObjectReference", "name"): "",
    ("ConfigMapKeySelector", "name"): "",
    ("SecretKeySelector", "name"): "",
    ("ConfigMapEnvSource", "name"): "",
    ("SecretEnvSource", "name"): "",
    ("ConfigMapVolumeSource", "name"): "",
    ("ConfigMapProjection", "name"): "",
    ("SecretProjection", "name"): "",
    ("FileKeySelector", "optional"): False,
    ("ContainerPort", "protocol"): "TCP",
    ("GRPCAction", "service"): "",
    ("AzureDiskVolumeSource", "fsType"): "ext4",
    ("AzureDiskVolumeSource", "readOnly"): False,
    ("ISCSIVolumeSource", "iscsiInterface"): "default",
    ("RBDVolumeSource", "keyring"): "/etc/ceph/keyring",
    ("RBDVolumeSource", "pool"): "rbd",
    ("RBDVolumeSource", "user"): "admin",
    ("ScaleIOVolumeSource", "fsType"): "xfs",
    ("ScaleIOVolumeSource", "storageMode"): "ThinProvisioned",
}
_KEPT = ("type", "format", "required", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type")


def embedded_meta() -> dict[str, Any]:
    """The ObjectMeta of a template, as ``generateEmbeddedObjectMeta`` writes it."""
    strings = {"type": "object", "additionalProperties": {"type": "string"}}
    return {
        "type": "object",
        "properties": {
            "annotations": copy.deepcopy(strings),
            "finalizers": {"type": "array", "items": {"type": "string"}},
            "labels": copy.deepcopy(strings),
            "name": {"type": "string"},
            "namespace": {"type": "string"},
        },
    }


@functools.cache
def _inline(name: str) -> dict[str, Any]:
    if name == _OBJECT_META:
        return embedded_meta()
    if name in _SPECIAL:
        return copy.deepcopy(_SPECIAL[name])
    schema = kinds.definitions()["schemas"][name]
    return _convert(schema, owner=name.rsplit(".", 1)[-1])


def _ref_of(node: dict[str, Any]) -> str | None:
    ref = node.get("$ref")
    if ref is None and len(node.get("allOf") or []) == 1:
        ref = node["allOf"][0].get("$ref")
    return str(ref).rsplit("/", 1)[-1] if ref else None


def _convert(node: dict[str, Any], *, owner: str = "") -> dict[str, Any]:
    ref = _ref_of(node)
    if ref is not None:
        return copy.deepcopy(_inline(ref))
    out: dict[str, Any] = {k: copy.deepcopy(node[k]) for k in _KEPT if k in node}
    if "properties" in node:
        out.setdefault("type", "object")
        props: dict[str, Any] = {}
        for key, sub in node["properties"].items():
            child = _convert(sub)
            default = _DEFAULTS.get((owner, key))
            if default is not None:
                child["default"] = default
            props[key] = child
        out["properties"] = props
    if "items" in node:
        out["items"] = _convert(node["items"])
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = _convert(node["additionalProperties"])
    if out.get("type") == "object" and "properties" not in out and "additionalProperties" not in out:
        # A free-form object in a core type (none in a pod template, but never prune what we cannot describe).
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out


def k8s(name: str) -> dict[str, Any]:
    """The structural schema of the Kubernetes type ``name`` (``batch.v1.JobTemplateSpec`` or the full
    ``io.k8s.api.batch.v1.JobTemplateSpec``), as a new object the caller may change."""
    full = name if name.startswith("io.k8s.") else f"io.k8s.api.{name}"
    return copy.deepcopy(_inline(full))
