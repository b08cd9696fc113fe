"""autoscaling HorizontalPodAutoscaler: its scheme defaults and the rules it carries, on the stored
(v2) shape whichever version wrote it (:mod:`shared.sim.apiserver.hpaversions`).

Defaults (``k8s.io/kubernetes:pkg/apis/autoscaling/v2/defaults.go``): ``minReplicas`` 1, an 80%
CPU utilization target when no metric is named, and the scaling rules filled in where a
``behavior`` is given (scale up: no stabilization window, ``Max`` policy, 4 pods or 100% per 15 s;
scale down: ``Max``, 100% per 15 s, the window left to the controller). The status a new object
reads with is Go's zero status: ``desiredReplicas: 0`` and ``currentMetrics: null`` (neither is
``omitempty`` in the v2 types).

Validation (``pkg/apis/autoscaling/validation``): a named scale target, ``minReplicas`` at least 1
(scale to zero is an alpha feature), ``maxReplicas`` positive and not below ``minReplicas``, and each
metric's type, source and target. Left out: quantity signs, the behavior's policy bounds, and the
alpha ``tolerance`` field (kept, where a 1.34 server with the gate off drops it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import formats, meta
from shared.sim.apiserver.validation.poddefaults import child, default

DEFAULT_CPU_UTILIZATION = 80
METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
_SOURCES = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "External": "external",
}
_TARGET_TYPES = ("Utilization", "Value", "AverageValue")
_SPEC_ORDER = ("scaleTargetRef", "minReplicas", "maxReplicas", "metrics", "behavior")


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is an object, else an empty one (a body may hold anything)."""
    return value if isinstance(value, Mapping) else {}


def _scale_up_rules() -> dict[str, Any]:
    return {
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15},
        ],
    }


def _scale_down_rules() -> dict[str, Any]:
    return {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _fill_rules(rules: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    """``GenerateHPAScaleUpRules``/``GenerateHPAScaleDownRules``: the nil parts of ``rules`` from ``defaults``."""
    if not isinstance(rules, dict):
        return defaults
    for key, value in defaults.items():
        default(rules, key, value)
    return rules


def defaults(obj: dict[str, Any], version: str) -> None:
    """Scheme defaults of a stored-shape (v2) HPA, in place (idempotent)."""
    spec = child(obj, "spec")
    default(spec, "minReplicas", 1)
    if not spec.get("metrics"):
        target = {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _fill_rules(behavior.get("scaleUp"), _scale_up_rules())
        behavior["scaleDown"] = _fill_rules(behavior.get("scaleDown"), _scale_down_rules())
    # Go's field order, as the real server writes the object.
    ordered = {k: spec.pop(k) for k in _SPEC_ORDER if k in spec}
    ordered.update(spec)
    spec.clear()
    spec.update(ordered)
    status = obj.get("status")
    if isinstance(status, dict):
        zero_status(status)


def zero_status(status: dict[str, Any]) -> None:
    """The fields Go always writes in a v2 status; ``currentReplicas`` is omitted at zero."""
    status.setdefault("desiredReplicas", 0)
    status.setdefault("currentMetrics", None)
    if status.get("currentReplicas") == 0:
        del status["currentReplicas"]


def _reference(ref: Any, field: str) -> list[FieldError]:
    """``ValidateCrossVersionObjectReference``: kind and name set, each a valid path segment."""
    ref = _mapping(ref)
    errors: list[FieldError] = []
    for key in ("kind", "name"):
        value = str(ref.get(key) or "")
        if not value:
            errors.append(apierrors.required(f"{field}.{key}", ""))
        else:
            errors += [
                apierrors.invalid_value(f"{field}.{key}", value, m) for m in formats.path_segment_name(value, False)
            ]
    return errors


def _target(target: Any, field: str) -> list[FieldError]:
    """``validateMetricTarget``."""
    target = _mapping(target)
    errors: list[FieldError] = []
    kind = str(target.get("type") or "")
    if not kind:
        errors.append(apierrors.required(f"{field}.type", "must specify a metric target type"))
    if kind not in _TARGET_TYPES:
        errors.append(
            apierrors.invalid_value(f"{field}.type", kind, "must be either Utilization, Value, or AverageValue")
        )
    utilization = target.get("averageUtilization")
    if isinstance(utilization, int) and utilization < 1:
        errors.append(apierrors.invalid_value(f"{field}.averageUtilization", utilization, "must be greater than 0"))
    return errors


def _resource_source(source: Mapping[str, Any], field: str, *, container: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    if not source.get("name"):
        errors.append(apierrors.required(f"{field}.name", "must specify a resource name"))
    if container and not source.get("container"):
        errors.append(apierrors.required(f"{field}.container", "must specify a container"))
    target = _mapping(source.get("target"))
    errors += _target(target, f"{field}.target")
    has_utilization = target.get("averageUtilization") is not None
    has_value = target.get("averageValue") is not None
    if not has_utilization and not has_value:
        errors.append(
            apierrors.required(
                f"{field}.target.averageUtilization", "must set either a target raw value or a target utilization"
            )
        )
    if has_utilization and has_value:
        errors.append(
            apierrors.forbidden(
                f"{field}.target.averageValue", "may not set both a target raw value and a target utilization"
            )
        )
    return errors


def _metric_source(source: Mapping[str, Any], field: str, key: str) -> list[FieldError]:
    if key in ("resource", "containerResource"):
        return _resource_source(source, field, container=key == "containerResource")
    errors: list[FieldError] = []
    if key == "object":
        errors += _reference(source.get("describedObject"), f"{field}.describedObject")
    metric = _mapping(source.get("metric"))
    if not metric.get("name"):
        errors.append(apierrors.required(f"{field}.metric.name", "must specify a metric name"))
    return errors + _target(source.get("target"), f"{field}.target")


def _metric(metric: Any, field: str) -> list[FieldError]:
    """``validateMetricSpec``: a known type, whose source (and only it) is filled in."""
    metric = _mapping(metric)
    errors: list[FieldError] = []
    kind = str(metric.get("type") or "")
    if not kind:
        errors.append(apierrors.required(f"{field}.type", "must specify a metric source type"))
    if kind not in METRIC_TYPES:
        errors.append(apierrors.not_supported(f"{field}.type", kind, METRIC_TYPES))
    present = [key for key in _SOURCES.values() if isinstance(metric.get(key), Mapping)]
    if present:
        errors += _metric_source(metric[present[0]], f"{field}.{present[0]}", present[0])
    expected = _SOURCES.get(kind)
    if expected is not None and expected not in present:
        errors.append(
            apierrors.required(f"{field}.{expected}", "must populate information for the given metric source")
        )
    if len(present) > 1:
        errors += [
            apierrors.forbidden(f"{field}.{key}", "must populate the given metric source only")
            for key in present
            if key != expected
        ]
    return errors


def _spec(spec: Mapping[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    low, high = spec.get("minReplicas"), spec.get("maxReplicas", 0)
    if isinstance(low, int) and low < 1:
        errors.append(apierrors.invalid_value("spec.minReplicas", low, "must be greater than or equal to 1"))
    if isinstance(high, int) and high < 1:
        errors.append(apierrors.invalid_value("spec.maxReplicas", high, "must be greater than 0"))
    if isinstance(low, int) and isinstance(high, int) and high < low:
        errors.append(
            apierrors.invalid_value("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`")
        )
    errors += _reference(spec.get("scaleTargetRef"), "spec.scaleTargetRef")
    for i, metric in enumerate(spec.get("metrics") or []):
        errors += _metric(metric, f"spec.metrics[{i}]")
    return errors


def horizontal_pod_autoscaler(obj: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain)
    return errors + _spec(obj.get("spec") or {})


def horizontal_pod_autoscaler_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta_update(obj.get("metadata") or {}) + horizontal_pod_autoscaler(obj)
