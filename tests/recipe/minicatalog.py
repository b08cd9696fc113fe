"""A small catalog in our format, written by tests so each can bend one thing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared import yamlio

API = "aicr.run/v1alpha2"


def registry() -> dict[str, Any]:
    def helm(name: str, version: str) -> dict[str, Any]:
        return {
            "name": name,
            "displayName": name.title(),
            "valueOverrideKeys": [name.replace("-", "")],
            "helm": {
                "defaultRepository": f"https://charts.example.com/{name}",
                "defaultChart": f"ex/{name}",
                "defaultVersion": version,
                "defaultNamespace": f"ns-{name}",
            },
            "healthCheckAsserts": {"workloads": [{"kind": "Deployment", "name": name}]},
        }

    return {
        "apiVersion": API,
        "kind": "ComponentRegistry",
        "components": [helm("alpha", "1.0.0"), helm("beta", "v2.0.0"), helm("gamma", "3.1.4")],
    }


def overlay(
    name: str,
    *,
    base: str | None = None,
    criteria: dict[str, Any] | None = None,
    refs: list[dict[str, Any]] | None = None,
    constraints: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if base:
        body["base"] = base
    if criteria is not None:
        body["criteria"] = criteria
    if constraints:
        body["constraints"] = constraints
    if refs:
        body["componentRefs"] = refs
    body.update(spec)
    return {"apiVersion": API, "kind": "RecipeMetadata", "metadata": {"name": name}, "spec": body}


def default_documents() -> dict[str, Any]:
    return {
        "registry.yaml": registry(),
        "overlays/base.yaml": overlay(
            "base",
            refs=[
                {"name": "alpha", "valuesFile": "components/alpha/values.yaml", "overrides": {"a": 1, "b": {"x": 1}}},
                {"name": "beta", "dependencyRefs": ["alpha"]},
            ],
            constraints=[{"name": "K8s.server.version", "value": ">= 1.28"}],
        ),
        "overlays/eks.yaml": overlay(
            "eks",
            criteria={"service": "eks"},
            refs=[
                {"name": "alpha", "version": "1.1.0", "overrides": {"b": {"y": 2}}},
                {"name": "gamma", "dependencyRefs": ["beta"]},
            ],
        ),
        "overlays/eks-training.yaml": overlay(
            "eks-training",
            base="eks",
            criteria={"service": "eks", "intent": "training"},
            refs=[{"name": "alpha", "valuesFile": "components/alpha/values-train.yaml"}],
            constraints=[{"name": "K8s.server.version", "value": ">= 1.30"}],
        ),
        "components/alpha/values.yaml": {"image": {"tag": "v1"}, "replicas": 1, "list": [1, 2]},
        "components/alpha/values-train.yaml": {"replicas": 3, "list": [9]},
    }


def write(root: Path, documents: dict[str, Any]) -> Path:
    for rel, data in documents.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else yamlio.dumps(data))
    return root
