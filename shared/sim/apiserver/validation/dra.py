"""resource.k8s.io/v1 (dynamic resource allocation): the defaults and the main rules of DeviceClass,
ResourceClaim, ResourceClaimTemplate and ResourceSlice.

Defaults (``k8s.io/kubernetes:pkg/apis/resource/v1/defaults.go``): a request's ``allocationMode``
is ``ExactCount`` and its ``count`` 1 (in ``exactly`` and in each ``firstAvailable`` entry), a
toleration's ``operator`` is ``Equal``. Go always writes the structs a kind embeds by value, so
a claim reads with ``spec.devices: {}`` and ``status: {}``, a class with ``spec: {}``, and a
slice's ``pool`` with ``generation`` and ``resourceSliceCount``.

Validation (``pkg/apis/resource/validation``): request names are DNS labels and unique, each
request says ``exactly`` or ``firstAvailable``, an exact request names its DeviceClass and a count
that fits its allocation mode; a claim's spec is immutable; a slice names its driver and pool,
counts its pool's slices, and says exactly one of ``nodeName``, ``nodeSelector``, ``allNodes`` and
``perDeviceNodeSelection``; its driver and node are immutable. Left out: CEL selector
compilation, device attribute and capacity rules, and dropping the fields of 1.34's alpha features
(device taints, partitionable devices, consumable capacity, binding conditions), which a 1.34 server
with default gates clears. An immutable-spec error shows the new spec as JSON, where the real
server prints the internal Go struct, and the wording of a slice naming several node choices is
approximate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import formats, meta
from shared.sim.apiserver.validation.poddefaults import child, default

ALLOCATION_MODES = ("All", "ExactCount")
_NODE_CHOICES = ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")
_ONE_NODE_CHOICE = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is an object, else an empty one (a body may hold anything)."""
    return value if isinstance(value, Mapping) else {}


# ------------------------------------------------------------ defaults
def _request_defaults(request: Any) -> None:
    if not isinstance(request, dict):
        return
    default(request, "allocationMode", "ExactCount")
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1
    for toleration in request.get("tolerations") or []:
        if isinstance(toleration, dict):
            default(toleration, "operator", "Equal")


def _claim_spec_defaults(spec: dict[str, Any]) -> None:
    devices = child(spec, "devices")
    for request in devices.get("requests") or []:
        if not isinstance(request, dict):
            continue
        _request_defaults(request.get("exactly"))
        for sub in request.get("firstAvailable") or []:
            _request_defaults(sub)


def resource_claim_defaults(obj: dict[str, Any], version: str) -> None:
    _claim_spec_defaults(child(obj, "spec"))


def resource_claim_template_defaults(obj: dict[str, Any], version: str) -> None:
    _claim_spec_defaults(child(child(obj, "spec"), "spec"))


def device_class_defaults(obj: dict[str, Any], version: str) -> None:
    child(obj, "spec")


def resource_slice_defaults(obj: dict[str, Any], version: str) -> None:
    pool = child(child(obj, "spec"), "pool")
    pool.setdefault("generation", 0)
    pool.setdefault("resourceSliceCount", 0)


# ------------------------------------------------------------ validation
def _class_name(value: Any, field: str) -> list[FieldError]:
    if not value:
        return [apierrors.required(field, "")]
    return [apierrors.invalid_value(field, value, m) for m in formats.dns1123_subdomain(str(value))]


def _exact(request: Mapping[str, Any], field: str) -> list[FieldError]:
    errors = _class_name(request.get("deviceClassName"), f"{field}.deviceClassName")
    mode, count = request.get("allocationMode"), request.get("count", 0)
    if mode == "ExactCount":
        if not isinstance(count, int) or count <= 0:
            errors.append(apierrors.invalid_value(f"{field}.count", count, "must be greater than zero"))
    elif mode == "All":
        if count:
            errors.append(
                apierrors.invalid_value(f"{field}.count", count, "must not be specified when allocationMode is 'All'")
            )
    else:
        errors.append(apierrors.not_supported(f"{field}.allocationMode", mode, ALLOCATION_MODES))
    return errors


def _named(name: Any, field: str, seen: set[str]) -> list[FieldError]:
    if not name:
        return [apierrors.required(field, "")]
    errors = [apierrors.invalid_value(field, name, m) for m in formats.dns1123_label(str(name))]
    if name in seen:
        errors.append(apierrors.duplicate(field, name))
    seen.add(str(name))
    return errors


def _claim_spec(spec: Mapping[str, Any], field: str) -> list[FieldError]:
    devices = _mapping(spec.get("devices"))
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, request in enumerate(devices.get("requests") or []):
        path = f"{field}.devices.requests[{i}]"
        request = _mapping(request)
        errors += _named(request.get("name"), f"{path}.name", names)
        exact, first = request.get("exactly"), request.get("firstAvailable") or []
        if exact is None and not first:
            errors.append(apierrors.required(path, "exactly one of `exactly` or `firstAvailable` is required"))
        if isinstance(exact, Mapping):
            errors += _exact(exact, f"{path}.exactly")
        sub_names: set[str] = set()
        for j, sub in enumerate(first):
            sub = _mapping(sub)
            errors += _named(sub.get("name"), f"{path}.firstAvailable[{j}].name", sub_names)
            errors += _exact(sub, f"{path}.firstAvailable[{j}]")
    return errors


def _meta(obj: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain)


def device_class(obj: Mapping[str, Any]) -> list[FieldError]:
    return _meta(obj)


def device_class_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta_update(obj.get("metadata") or {}) + device_class(obj)


def resource_claim(obj: Mapping[str, Any]) -> list[FieldError]:
    return _meta(obj) + _claim_spec(obj.get("spec") or {}, "spec")


def resource_claim_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta_update(obj.get("metadata") or {}) + meta.immutable(
        "spec", obj.get("spec"), old.get("spec")
    )
    return errors + resource_claim(obj)


def resource_claim_template(obj: Mapping[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    return _meta(obj) + _claim_spec(spec.get("spec") or {}, "spec.spec")


def resource_claim_template_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta_update(obj.get("metadata") or {}) + meta.immutable(
        "spec", obj.get("spec"), old.get("spec")
    )
    return errors + resource_claim_template(obj)


def resource_slice(obj: Mapping[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errors = _meta(obj)
    driver = spec.get("driver")
    if not driver:
        errors.append(apierrors.required("spec.driver", ""))
    pool = _mapping(spec.get("pool"))
    if not pool.get("name"):
        errors.append(apierrors.required("spec.pool.name", ""))
    count = pool.get("resourceSliceCount", 0)
    if isinstance(count, int) and count <= 0:
        errors.append(apierrors.invalid_value("spec.pool.resourceSliceCount", count, "must be greater than zero"))
    generation = pool.get("generation", 0)
    if isinstance(generation, int) and generation < 0:
        errors.append(
            apierrors.invalid_value("spec.pool.generation", generation, "must be greater than or equal to zero")
        )
    chosen = [key for key in _NODE_CHOICES if spec.get(key) not in (None, "", False)]
    if not chosen:
        errors.append(apierrors.required("spec", _ONE_NODE_CHOICE))
    elif len(chosen) > 1:
        why = f"{_ONE_NODE_CHOICE}, but multiple fields are set"
        errors.append(apierrors.invalid_value("spec", chosen, why))
    return errors


def resource_slice_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    errors = meta.object_meta_update(obj.get("metadata") or {}) + resource_slice(obj)
    errors += meta.immutable("spec.nodeName", spec.get("nodeName"), old_spec.get("nodeName"))
    return errors + meta.immutable("spec.driver", spec.get("driver"), old_spec.get("driver"))
