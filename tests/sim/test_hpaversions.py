"""autoscaling/v1 ↔ v2 conversion of HorizontalPodAutoscalers (shared/sim/apiserver/hpaversions.py).

The property upstream's conversion keeps: a v2 object read through v1 and written back unchanged is
the same v2 object, whatever metrics, status and behavior it has; and what v1 shows is its own shape.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from shared.sim.apiserver import hpaversions

_SELECTOR = {"matchLabels": {"app": "web"}}
METRICS: list[dict[str, Any]] = [
    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}},
    {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}},
    {
        "type": "ContainerResource",
        "containerResource": {
            "name": "cpu",
            "container": "app",
            "target": {"type": "Utilization", "averageUtilization": 50},
        },
    },
    {
        "type": "Pods",
        "pods": {
            "metric": {"name": "qps", "selector": _SELECTOR},
            "target": {"type": "AverageValue", "averageValue": "10"},
        },
    },
    {
        "type": "Object",
        "object": {
            "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"},
            "metric": {"name": "requests"},
            "target": {"type": "Value", "value": "2k"},
        },
    },
    {
        "type": "External",
        "external": {
            "metric": {"name": "queue", "selector": _SELECTOR},
            "target": {"type": "AverageValue", "averageValue": "30"},
        },
    },
]
STATUS: dict[str, Any] = {
    "observedGeneration": 3,
    "currentReplicas": 2,
    "desiredReplicas": 4,
    "currentMetrics": [
        {
            "type": "Resource",
            "resource": {"name": "cpu", "current": {"averageValue": "250m", "averageUtilization": 65}},
        },
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "12"}}},
    ],
    "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}],
}
BEHAVIOR = {
    "scaleUp": {
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}],
    },
    "scaleDown": {"selectPolicy": "Min", "policies": [{"type": "Percent", "value": 50, "periodSeconds": 60}]},
}


def _stored(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default", "annotations": {"team": "ml"}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 10,
            **spec,
        },
        "status": copy.deepcopy(STATUS),
    }


def _by_type(metrics: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(m, sort_keys=True) for m in metrics)


def test_a_v1_round_trip_keeps_every_metric_status_and_behavior() -> None:
    stored = _stored(metrics=copy.deepcopy(METRICS), behavior=copy.deepcopy(BEHAVIOR))
    back = hpaversions.to_v2(hpaversions.to_v1(stored))
    assert _by_type(back["spec"]["metrics"]) == _by_type(METRICS)
    assert back["spec"]["behavior"] == BEHAVIOR
    assert back["status"]["currentMetrics"] == STATUS["currentMetrics"]
    assert back["status"]["conditions"] == STATUS["conditions"]
    assert back["metadata"]["annotations"] == {"team": "ml"}
    assert {k: back["status"][k] for k in ("observedGeneration", "currentReplicas", "desiredReplicas")} == {
        "observedGeneration": 3,
        "currentReplicas": 2,
        "desiredReplicas": 4,
    }


def test_v1_shows_the_cpu_target_and_carries_the_rest_in_annotations() -> None:
    shown = hpaversions.to_v1(_stored(metrics=copy.deepcopy(METRICS), behavior=copy.deepcopy(BEHAVIOR)))
    assert shown["apiVersion"] == "autoscaling/v1"
    assert shown["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1,
        "maxReplicas": 10,
        "targetCPUUtilizationPercentage": 70,
    }
    assert shown["status"]["currentCPUUtilizationPercentage"] == 65
    annotations = shown["metadata"]["annotations"]
    others = json.loads(annotations[hpaversions.METRICS])
    assert len(others) == len(METRICS) - 1
    assert others[0] == {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "1Gi"}}
    assert others[2]["pods"] == {"metricName": "qps", "targetAverageValue": "10", "selector": _SELECTOR}
    behavior = json.loads(annotations[hpaversions.BEHAVIOR])
    assert behavior["ScaleDown"] == {
        "StabilizationWindowSeconds": None,
        "SelectPolicy": "Min",
        "Policies": [{"Type": "Percent", "Value": 50, "PeriodSeconds": 60}],
        "Tolerance": None,
    }
    assert json.loads(annotations[hpaversions.CONDITIONS]) == STATUS["conditions"]


def test_a_v1_object_without_metrics_gets_the_implicit_cpu_target() -> None:
    written = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "old"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    }
    stored = hpaversions.to_v2(written)
    target = {"type": "Utilization", "averageUtilization": hpaversions.DEFAULT_CPU_UTILIZATION}
    assert stored["spec"]["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    assert "annotations" not in stored["metadata"] and "status" not in stored


def test_the_behavior_annotation_is_read_case_insensitively() -> None:
    written = {
        "metadata": {"name": "x", "annotations": {hpaversions.BEHAVIOR: '{"scaleup":{"selectpolicy":"Disabled"}}'}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    }
    assert hpaversions.to_v2(written)["spec"]["behavior"] == {"scaleUp": {"selectPolicy": "Disabled"}}
