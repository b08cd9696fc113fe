"""Make a simulated cluster look as if a small recipe were installed, then break one thing."""

from __future__ import annotations

from typing import Any

from shared.kube import rest
from tests.snapshot.test_helm import secret

CRD_NAME = "widgets.example.com"


def recipe_document(*, version: str = "v1.2.3") -> dict[str, Any]:
    return {
        "kind": "RecipeResult",
        "apiVersion": "aicr.run/v1alpha2",
        "metadata": {"version": "test"},
        "criteria": {"service": "kind"},
        "constraints": [{"name": "K8s.server.version", "value": ">= 1.30"}],
        "componentRefs": [
            {
                "name": "widget-operator",
                "namespace": "widgets",
                "chart": "widget-operator",
                "type": "Helm",
                "source": "https://charts.example.com",
                "version": version,
                "healthCheckAsserts": {
                    "workloads": [{"kind": "Deployment", "name": "widget-operator"}],
                    "pods": [{"selector": {"app": "widget-operator"}}],
                    "crds": [CRD_NAME],
                },
            }
        ],
        "deploymentOrder": ["widget-operator"],
    }


def _status(api: Any, path: str, status: dict[str, Any]) -> None:
    current = rest.get(api, path)
    current["status"] = status
    rest.replace(api, path + "/status", current)


def install(
    api: Any, *, chart_version: str = "v1.2.3", crashloop: bool = False, crd: bool = True, ready: bool = True
) -> None:
    rest.create(api, rest.core_path("namespaces"), {"metadata": {"name": "widgets"}})
    rest.create(api, rest.core_path("secrets", "widgets"), secret("widget-operator", "widgets", 1, chart_version))
    labels = {"app": "widget-operator"}
    container = {"name": "manager", "image": "example.com/widget-operator:1.2.3"}
    rest.create(
        api,
        rest.group_path("apps", "v1", "deployments", "widgets"),
        {
            "metadata": {"name": "widget-operator", "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
            },
        },
    )
    _status(
        api,
        rest.group_path("apps", "v1", "deployments", "widgets", "widget-operator"),
        {"replicas": 1, "readyReplicas": int(ready), "availableReplicas": int(ready)},
    )
    rest.create(
        api,
        rest.core_path("pods", "widgets"),
        {
            "metadata": {"name": "widget-operator-7d9f8-abcde", "labels": labels},
            "spec": {"nodeName": "node-000", "containers": [container]},
        },
    )
    state = {"waiting": {"reason": "CrashLoopBackOff"}} if crashloop else {"running": {}}
    _status(
        api,
        rest.core_path("pods", "widgets", "widget-operator-7d9f8-abcde"),
        {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": "manager",
                    "ready": not crashloop,
                    "state": state,
                    "image": container["image"],
                    "restartCount": 3 * crashloop,
                }
            ],
        },
    )
    if crd:
        rest.create(
            api,
            rest.group_path("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
            {
                "metadata": {"name": CRD_NAME},
                "spec": {
                    "group": "example.com",
                    "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [
                        {
                            "name": "v1",
                            "served": True,
                            "storage": True,
                            "schema": {"openAPIV3Schema": {"type": "object"}},
                        }
                    ],
                },
            },
        )
