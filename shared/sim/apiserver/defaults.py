"""What the server does to an object before storing it: defaults, validation and size limits.

Real API servers refuse bad names, bad labels, oversized ConfigMaps and objects too large for
etcd, and they fill in a few defaults that clients rely on (a new Pod is ``Pending``, a Namespace
is ``Active``, a CRD becomes ``Established``). Only what our tools or kubectl can observe is
modelled; the full OpenAPI defaulting and schema validation are out of scope.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from shared.sim.apiserver import apierrors, resources, selectors
from shared.sim.apiserver.apierrors import ApiError

MAX_REQUEST_BYTES = 3 * 1024 * 1024
"""The API server refuses request bodies above 3 MiB with 413."""
MAX_OBJECT_BYTES = 1536 * 1024
"""etcd's default request limit (1.5 MiB): a larger object cannot be stored (413)."""
MAX_CONFIG_DATA_BYTES = 1024 * 1024
"""ConfigMap and Secret data are capped at 1 MiB (422)."""
MAX_ANNOTATION_BYTES = 256 * 1024

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_LABEL_KINDS = frozenset({"Namespace", "Service"})


def check_name(resource: resources.Resource, name: str) -> None:
    """422 for a name the real server would refuse for this kind."""
    if resource.kind in _DNS_LABEL_KINDS:
        ok = len(name) <= 63 and bool(_LABEL.match(name))
        rule = "a lowercase RFC 1123 label"
    elif resource.kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"):
        ok = bool(name) and "/" not in name and name not in (".", "..") and "%" not in name
        rule = "a valid path segment name"
    else:
        ok = len(name) <= 253 and bool(_SUBDOMAIN.match(name))
        rule = "a lowercase RFC 1123 subdomain"
    if not ok:
        raise apierrors.invalid(resource.kind, name, [("metadata.name", f"Invalid value: {name!r}: must be {rule}")])


def check_metadata(resource: resources.Resource, obj: dict[str, Any]) -> None:
    md = obj["metadata"]
    name = md.get("name", "")
    causes = []
    for key, value in (md.get("labels") or {}).items():
        if not selectors.valid_label_key(str(key)):
            causes.append(("metadata.labels", f"Invalid value: {key!r}: invalid label key"))
        elif not isinstance(value, str) or not selectors.valid_label_value(value):
            causes.append(("metadata.labels", f"Invalid value: {value!r}: invalid label value"))
    annotations = md.get("annotations") or {}
    if sum(len(str(k)) + len(str(v)) for k, v in annotations.items()) > MAX_ANNOTATION_BYTES:
        causes.append(("metadata.annotations", "Too long: must have at most 262144 bytes"))
    if any(not isinstance(v, str) for v in annotations.values()):
        causes.append(("metadata.annotations", "Invalid value: annotation values must be strings"))
    if causes:
        raise apierrors.invalid(resource.kind, name, causes)


def check_size(resource: resources.Resource, obj: dict[str, Any], raw_size: int) -> None:
    """The real limits: 1 MiB of ConfigMap/Secret data (422), 1.5 MiB per stored object (413)."""
    name = obj["metadata"].get("name", "")
    if resource.kind in ("ConfigMap", "Secret"):
        total = sum(
            len(str(k)) + len(str(v))
            for part in ("data", "binaryData", "stringData")
            for k, v in (obj.get(part) or {}).items()
        )
        if total > MAX_CONFIG_DATA_BYTES:
            raise apierrors.invalid(
                resource.kind, name, [("[]", f"Too long: must have at most {MAX_CONFIG_DATA_BYTES} bytes")]
            )
    if raw_size > MAX_OBJECT_BYTES:
        raise ApiError(
            413,
            "RequestEntityTooLarge",
            f"etcdserver: request is too large: {resource.kind} {name!r} is {raw_size} bytes",
        )


def check_spec(resource: resources.Resource, obj: dict[str, Any]) -> None:
    """The few required fields clients would otherwise trip over later."""
    name = obj["metadata"].get("name", "")
    spec = obj.get("spec") or {}
    if resource.kind == "Pod" and not spec.get("containers"):
        raise apierrors.invalid("Pod", name, [("spec.containers", "Required value")])
    if resource.kind == "CustomResourceDefinition":
        names = spec.get("names") or {}
        causes = [(f"spec.{f}", "Required value") for f in ("group", "scope") if not spec.get(f)]
        causes += [(f"spec.names.{f}", "Required value") for f in ("plural", "kind") if not names.get(f)]
        if not spec.get("versions"):
            causes.append(("spec.versions", "Required value"))
        if not causes and name != f"{names['plural']}.{spec['group']}":
            causes.append(("metadata.name", f'Invalid value: {name!r}: must be spec.names.plural+"."+spec.group'))
        if causes:
            raise apierrors.invalid("CustomResourceDefinition", name, causes)
    if resource.kind in ("Role", "ClusterRole"):
        for n, rule in enumerate(obj.get("rules") or []):
            if not rule.get("verbs"):
                raise apierrors.invalid(resource.kind, name, [(f"rules[{n}].verbs", "Required value")])


def on_create(resource: resources.Resource, obj: dict[str, Any], now: str) -> None:
    """Server-side defaults of a new object, in place."""
    kind = resource.kind
    spec = obj.setdefault("spec", {}) if kind in ("Pod", "Node", "Namespace", "Service") else obj.get("spec")
    if resource.subresources and "status" in resource.subresources and not resource.keep_status_on_create:
        obj.pop("status", None)
    if kind == "Namespace":
        assert spec is not None
        spec.setdefault("finalizers", ["kubernetes"])
        obj["status"] = {"phase": "Active"}
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    elif kind == "Pod":
        assert spec is not None
        for key, value in (
            ("restartPolicy", "Always"),
            ("schedulerName", "default-scheduler"),
            ("serviceAccountName", "default"),
            ("terminationGracePeriodSeconds", 30),
            ("dnsPolicy", "ClusterFirst"),
            ("priority", 0),
        ):
            spec.setdefault(key, value)
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
    elif kind == "Node":
        obj.setdefault("status", {})
    elif kind == "Service":
        assert spec is not None
        spec.setdefault("type", "ClusterIP")
    elif kind == "Secret":
        obj.setdefault("type", "Opaque")
    elif kind in ("Deployment", "StatefulSet", "ReplicaSet") and spec is not None:
        spec.setdefault("replicas", 1)
    elif kind == "Job" and spec is not None:
        spec.setdefault("completions", 1)
        spec.setdefault("parallelism", 1)
        spec.setdefault("backoffLimit", 6)
    elif kind == "CustomResourceDefinition":
        crd_spec = obj.get("spec") or {}
        accepted = crd_spec.get("names") or {}
        obj["status"] = {
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
    """Normalisations applied on every create and update (e.g. Secret ``stringData``)."""
    if resource.kind == "Secret" and obj.get("stringData"):
        data = obj.setdefault("data", {})
        for key, value in obj.pop("stringData").items():
            data[key] = base64.b64encode(str(value).encode()).decode()
