"""``autoscaling/v1`` HorizontalPodAutoscalers, served over the same stored objects as ``autoscaling/v2``.

A real server keeps one set of HPA objects, stored at ``autoscaling/v2``, and converts at the edge
(``k8s.io/kubernetes:pkg/apis/autoscaling/v1/conversion.go``). Version 1 knows a single CPU target:

- ``spec.targetCPUUtilizationPercentage`` is the first ``Resource`` metric named ``cpu`` with a
  ``Utilization`` target, and back; ``status.currentCPUUtilizationPercentage`` the current CPU
  utilization;
- what v1 cannot say travels in annotations, so a v1 client that reads, edits and writes back loses
  nothing: ``autoscaling.alpha.kubernetes.io/metrics`` (the other metrics, in v1's ``MetricSpec``
  shape: ``targetAverageUtilization``, ``targetAverageValue``, ``metricName``...),
  ``.../current-metrics`` (``status.currentMetrics``, v1 ``MetricStatus``), ``.../conditions``
  (``status.conditions``) and ``.../behavior`` (``spec.behavior``, written with the Go field names of
  the internal type, as upstream marshals it, and read back case-insensitively as Go's JSON decoder
  does);
- an HPA written through v1 without any metric gets the implicit 80% CPU target.

The store holds the v2 shape: :func:`to_v2` runs when an object is written through v1 (a create,
an update, a patch applied to the v1 view), :func:`to_v1` when one is read there. Validation and
defaults therefore judge the v2 shape, as upstream judges the internal one, and name v2 paths.
Left out: managedFields recorded by a v1 writer name v1 paths without being converted.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from shared.sim.apiserver import store

GROUP = "autoscaling"
METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP = (METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR)
DEFAULT_CPU_UTILIZATION = 80
"""``autoscaling.DefaultCPUUtilization``: the target of an HPA that names no metric."""

Obj = dict[str, Any]

# Go field names of the internal HorizontalPodAutoscalerBehavior (the behavior annotation's keys).
_RULES = (
    ("StabilizationWindowSeconds", "stabilizationWindowSeconds"),
    ("SelectPolicy", "selectPolicy"),
    ("Policies", "policies"),
    ("Tolerance", "tolerance"),
)
_POLICY = (("Type", "type"), ("Value", "value"), ("PeriodSeconds", "periodSeconds"))


def _cpu_utilization(metric: Any) -> int | None:
    """The target of a ``Resource`` cpu metric with a utilization target, else None."""
    if not isinstance(metric, dict) or metric.get("type") != "Resource":
        return None
    source = metric.get("resource") or {}
    if source.get("name") != "cpu":
        return None
    value = (source.get("target") or {}).get("averageUtilization")
    return value if isinstance(value, int) else None


def _encode(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------- metric shapes
# One converter per metric source key, each way, for specs and for statuses (annotation entries).
Convert = Callable[[Obj], Obj]


def _with_selector(shown: Obj, ident: Obj, key: str = "selector") -> Obj:
    if "selector" in ident:
        shown[key] = ident["selector"]
    return shown


def _ident(name: Any, selector: Any) -> Obj:
    out: Obj = {"name": name or ""}
    if selector is not None:
        out["selector"] = selector
    return out


def _set(out: Obj, key: str, value: Any) -> Obj:
    if value is not None:
        out[key] = value
    return out


def _resource_spec_v1(source: Obj) -> Obj:
    target = source.get("target") or {}
    shown: Obj = {"name": source.get("name", "")}
    _set(shown, "targetAverageUtilization", target.get("averageUtilization"))
    _set(shown, "targetAverageValue", target.get("averageValue"))
    if "container" in source:
        shown["container"] = source["container"]
    return shown


def _resource_spec_v2(source: Obj) -> Obj:
    utilization = source.get("targetAverageUtilization")
    target: Obj = {"type": "AverageValue" if utilization is None else "Utilization"}
    _set(target, "averageUtilization", utilization)
    _set(target, "averageValue", source.get("targetAverageValue"))
    shown: Obj = {"name": source.get("name", ""), "target": target}
    if "container" in source:
        shown["container"] = source["container"]
    return shown


def _pods_spec_v1(source: Obj) -> Obj:
    ident, target = source.get("metric") or {}, source.get("target") or {}
    shown = {"metricName": ident.get("name", ""), "targetAverageValue": target.get("averageValue", "0")}
    return _with_selector(shown, ident)


def _pods_spec_v2(source: Obj) -> Obj:
    target = {"type": "AverageValue", "averageValue": source.get("targetAverageValue", "0")}
    return {"metric": _ident(source.get("metricName"), source.get("selector")), "target": target}


def _object_spec_v1(source: Obj) -> Obj:
    ident, target = source.get("metric") or {}, source.get("target") or {}
    shown = {"target": source.get("describedObject") or {}, "metricName": ident.get("name", "")}
    shown["targetValue"] = target.get("value", "0")
    _with_selector(shown, ident)
    return _set(shown, "averageValue", target.get("averageValue"))


def _object_spec_v2(source: Obj) -> Obj:
    average = source.get("averageValue")
    target = {"type": "Value" if average is None else "AverageValue", "value": source.get("targetValue", "0")}
    _set(target, "averageValue", average)
    ident = _ident(source.get("metricName"), source.get("selector"))
    return {"describedObject": source.get("target") or {}, "metric": ident, "target": target}


def _external_spec_v1(source: Obj) -> Obj:
    ident, target = source.get("metric") or {}, source.get("target") or {}
    shown = _with_selector({"metricName": ident.get("name", "")}, ident, "metricSelector")
    _set(shown, "targetValue", target.get("value"))
    return _set(shown, "targetAverageValue", target.get("averageValue"))


def _external_spec_v2(source: Obj) -> Obj:
    average = source.get("targetAverageValue")
    target: Obj = {"type": "Value" if average is None else "AverageValue"}
    _set(target, "value", source.get("targetValue"))
    _set(target, "averageValue", average)
    return {"metric": _ident(source.get("metricName"), source.get("metricSelector")), "target": target}


def _resource_status_v1(source: Obj) -> Obj:
    current = source.get("current") or {}
    shown: Obj = {"name": source.get("name", "")}
    _set(shown, "currentAverageUtilization", current.get("averageUtilization"))
    shown["currentAverageValue"] = current.get("averageValue", "0")
    if "container" in source:
        shown["container"] = source["container"]
    return shown


def _resource_status_v2(source: Obj) -> Obj:
    current: Obj = {}
    _set(current, "averageValue", source.get("currentAverageValue"))
    _set(current, "averageUtilization", source.get("currentAverageUtilization"))
    shown: Obj = {"name": source.get("name", ""), "current": current}
    if "container" in source:
        shown["container"] = source["container"]
    return shown


def _pods_status_v1(source: Obj) -> Obj:
    ident, current = source.get("metric") or {}, source.get("current") or {}
    shown = {"metricName": ident.get("name", ""), "currentAverageValue": current.get("averageValue", "0")}
    return _with_selector(shown, ident)


def _pods_status_v2(source: Obj) -> Obj:
    current = {"averageValue": source.get("currentAverageValue", "0")}
    return {"metric": _ident(source.get("metricName"), source.get("selector")), "current": current}


def _object_status_v1(source: Obj) -> Obj:
    ident, current = source.get("metric") or {}, source.get("current") or {}
    shown = {"target": source.get("describedObject") or {}, "metricName": ident.get("name", "")}
    shown["currentValue"] = current.get("value", "0")
    _with_selector(shown, ident)
    return _set(shown, "averageValue", current.get("averageValue"))


def _object_status_v2(source: Obj) -> Obj:
    current = _set({"value": source.get("currentValue", "0")}, "averageValue", source.get("averageValue"))
    ident = _ident(source.get("metricName"), source.get("selector"))
    return {"describedObject": source.get("target") or {}, "metric": ident, "current": current}


def _external_status_v1(source: Obj) -> Obj:
    ident, current = source.get("metric") or {}, source.get("current") or {}
    shown = _with_selector({"metricName": ident.get("name", "")}, ident, "metricSelector")
    shown["currentValue"] = current.get("value", "0")
    return _set(shown, "currentAverageValue", current.get("averageValue"))


def _external_status_v2(source: Obj) -> Obj:
    current = _set({"value": source.get("currentValue", "0")}, "averageValue", source.get("currentAverageValue"))
    return {"metric": _ident(source.get("metricName"), source.get("metricSelector")), "current": current}


_SPEC_TO_V1: dict[str, Convert] = {
    "resource": _resource_spec_v1,
    "containerResource": _resource_spec_v1,
    "pods": _pods_spec_v1,
    "object": _object_spec_v1,
    "external": _external_spec_v1,
}
_SPEC_TO_V2: dict[str, Convert] = {
    "resource": _resource_spec_v2,
    "containerResource": _resource_spec_v2,
    "pods": _pods_spec_v2,
    "object": _object_spec_v2,
    "external": _external_spec_v2,
}
_STATUS_TO_V1: dict[str, Convert] = {
    "resource": _resource_status_v1,
    "containerResource": _resource_status_v1,
    "pods": _pods_status_v1,
    "object": _object_status_v1,
    "external": _external_status_v1,
}
_STATUS_TO_V2: dict[str, Convert] = {
    "resource": _resource_status_v2,
    "containerResource": _resource_status_v2,
    "pods": _pods_status_v2,
    "object": _object_status_v2,
    "external": _external_status_v2,
}


def _metric(metric: Obj, converters: dict[str, Convert]) -> Obj:
    """One metric (spec or status) with each source it carries converted."""
    out: Obj = {"type": metric.get("type", "")}
    for key, convert in converters.items():
        if isinstance(metric.get(key), dict):
            out[key] = convert(metric[key])
    return out


# ---------------------------------------------------------------- behavior (Go field names)
def _behavior_to_go(behavior: Obj) -> Obj:
    """``spec.behavior`` as Go marshals the internal struct: every field, named as in Go, nil as null."""
    out: Obj = {}
    for go_name, name in (("ScaleUp", "scaleUp"), ("ScaleDown", "scaleDown")):
        rules = behavior.get(name)
        if not isinstance(rules, dict):
            out[go_name] = None
            continue
        shown: Obj = {}
        for go_key, key in _RULES:
            value = rules.get(key)
            if key == "policies":
                value = [{gk: p.get(k) for gk, k in _POLICY} for p in value or [] if isinstance(p, dict)] or None
            shown[go_key] = value
        out[go_name] = shown
    return out


def _lower_keys(value: Any) -> Any:
    return {str(k).lower(): v for k, v in value.items()} if isinstance(value, dict) else {}


def _behavior_from_go(text: str) -> Obj | None:
    """``spec.behavior`` from the annotation (keys matched case-insensitively); None when unreadable."""
    try:
        decoded = json.loads(text)
    except ValueError:
        return None
    if not isinstance(decoded, dict):
        return None
    out: Obj = {}
    for name in ("scaleUp", "scaleDown"):
        rules = _lower_keys(decoded).get(name.lower())
        if not isinstance(rules, dict):
            continue
        lowered, shown = _lower_keys(rules), {}
        for _, key in _RULES:
            value = lowered.get(key.lower())
            if key == "policies" and isinstance(value, list):
                value = [{k: v for _, k in _POLICY if (v := _lower_keys(p).get(k.lower())) is not None} for p in value]
            if value is not None:
                shown[key] = value
        out[name] = shown
    return out


# ---------------------------------------------------------------- whole objects
def _decoded_list(annotations: dict[str, Any], key: str) -> list[Obj] | None:
    text = annotations.pop(key, None)
    if not isinstance(text, str):
        return None
    try:
        decoded = json.loads(text)
    except ValueError:
        return None
    return [m for m in decoded if isinstance(m, dict)] if isinstance(decoded, list) else None


def _is_cpu(metric: Obj) -> bool:
    return metric.get("type") == "Resource" and (metric.get("resource") or {}).get("name") == "cpu"


def _spec_v1(spec: Obj, metrics: list[Obj]) -> Obj:
    shown: Obj = {"scaleTargetRef": copy.deepcopy(spec.get("scaleTargetRef") or {})}
    _set(shown, "minReplicas", spec.get("minReplicas"))
    shown["maxReplicas"] = spec.get("maxReplicas", 0)
    cpu = next((m for m in metrics if _is_cpu(m)), None)
    if cpu is not None:
        _set(shown, "targetCPUUtilizationPercentage", _cpu_utilization(cpu))
    return shown


def _status_v1(status: Obj, current: list[Obj]) -> Obj:
    shown: Obj = {k: status[k] for k in ("observedGeneration", "lastScaleTime") if status.get(k) is not None}
    shown["currentReplicas"] = status.get("currentReplicas", 0)
    shown["desiredReplicas"] = status.get("desiredReplicas", 0)
    for metric in current:
        if _is_cpu(metric):
            utilization = ((metric.get("resource") or {}).get("current") or {}).get("averageUtilization")
            _set(shown, "currentCPUUtilizationPercentage", utilization)
    return shown


def to_v1(obj: Obj) -> Obj:
    """The autoscaling/v1 view of a stored (v2) HorizontalPodAutoscaler, as a new dict."""
    out: Obj = {"kind": "HorizontalPodAutoscaler", "apiVersion": f"{GROUP}/v1"}
    metadata = copy.deepcopy(obj.get("metadata") or {})
    annotations = {k: v for k, v in (metadata.get("annotations") or {}).items() if k not in ROUND_TRIP}
    out["metadata"] = metadata
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    metrics = [m for m in spec.get("metrics") or [] if isinstance(m, dict)]
    current = [m for m in status.get("currentMetrics") or [] if isinstance(m, dict)]
    out["spec"] = _spec_v1(spec, metrics)
    others = [_metric(m, _SPEC_TO_V1) for m in metrics if _cpu_utilization(m) is None]
    if others:
        annotations[METRICS] = _encode(others)
    if current:
        annotations[CURRENT_METRICS] = _encode([_metric(m, _STATUS_TO_V1) for m in current])
    if status.get("conditions"):
        annotations[CONDITIONS] = _encode(status["conditions"])
    if isinstance(spec.get("behavior"), dict):
        annotations[BEHAVIOR] = _encode(_behavior_to_go(spec["behavior"]))
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    out["status"] = _status_v1(status, current)
    return out


def to_v2(obj: Obj) -> Obj:
    """The stored (v2) form of an HPA written through autoscaling/v1, as a new dict."""
    out: Obj = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"], out["kind"] = f"{GROUP}/v2", "HorizontalPodAutoscaler"
    metadata = out.setdefault("metadata", {})
    annotations = dict(metadata.get("annotations") or {})
    spec: Obj = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
    shown: Obj = {"scaleTargetRef": copy.deepcopy(spec.get("scaleTargetRef") or {})}
    if spec.get("minReplicas") is not None:
        shown["minReplicas"] = spec["minReplicas"]
    shown["maxReplicas"] = spec.get("maxReplicas", 0)
    metrics = [_metric(m, _SPEC_TO_V2) for m in _decoded_list(annotations, METRICS) or []]
    cpu = spec.get("targetCPUUtilizationPercentage")
    if cpu is not None:
        target = {"type": "Utilization", "averageUtilization": cpu}
        metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": target}})
    if not metrics:
        target = {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}
        metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    shown["metrics"] = metrics
    behavior_text = annotations.pop(BEHAVIOR, None)
    if isinstance(behavior_text, str):
        behavior = _behavior_from_go(behavior_text)
        if behavior is not None:
            shown["behavior"] = behavior
    out["spec"] = shown
    if "status" in obj:
        out["status"] = _status_from_v1(obj.get("status") or {}, annotations)
    else:
        for key in (CURRENT_METRICS, CONDITIONS):
            annotations.pop(key, None)
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    return out


def _status_from_v1(status: Obj, annotations: dict[str, Any]) -> Obj:
    out: Obj = {k: status[k] for k in ("observedGeneration", "lastScaleTime") if status.get(k) is not None}
    if status.get("currentReplicas"):
        out["currentReplicas"] = status["currentReplicas"]
    out["desiredReplicas"] = status.get("desiredReplicas", 0)
    current = _decoded_list(annotations, CURRENT_METRICS)
    if current is not None:
        out["currentMetrics"] = [_metric(m, _STATUS_TO_V2) for m in current]
    elif status.get("currentCPUUtilizationPercentage") is not None:
        utilization = status["currentCPUUtilizationPercentage"]
        out["currentMetrics"] = [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": utilization}}}
        ]
    conditions = _decoded_list(annotations, CONDITIONS)
    if conditions:
        out["conditions"] = conditions
    return out


class V1Conversion:
    """autoscaling/v1 over the stored v2 objects (registered in :class:`shared.sim.apiserver.readviews.Views`)."""

    def from_storage(self, obj: Obj) -> Obj:
        return to_v1(obj)

    def to_storage(self, obj: Obj) -> Obj:
        return to_v2(obj)

    def raw(self, entry: store.Entry) -> bytes:
        return store.encode(to_v1(entry.object()))
