"""The conformance phase: the checks a recipe's ``validation.conformance`` block lists, against the API.

Upstream runs each as a validator container mapped to a CNCF AI conformance requirement; here each
is a read of what the API server already says — nodes Ready, API groups served, CRDs Established,
the recipe's own components healthy (their ``healthCheckAsserts``), operand DaemonSets ready on
their nodes. A check that cannot be judged from the API alone (scaling a cloud node group, a
tenant's access to a GPU it was not given) is reported skipped with the reason, never passed.
"""

from __future__ import annotations

from collections.abc import Callable

from shared.recipe import models
from shared.validate import checks
from shared.validate.cluster import ClusterView

PHASE = "conformance"
Requirement = Callable[[models.RecipeResult, ClusterView], str | None]
"""Returns None when met, else why not (one sentence naming the object)."""


def _nodes_ready(_recipe: models.RecipeResult, view: ClusterView) -> str | None:
    not_ready = sorted(name for name, ready in view.node_readiness().items() if not ready)
    if not view.node_readiness():
        return "the cluster has no nodes"
    return f"nodes not Ready: {', '.join(not_ready)}" if not_ready else None


def _served(group: str, version: str) -> Requirement:
    def requirement(_recipe: models.RecipeResult, view: ClusterView) -> str | None:
        return None if view.serves(group, version) else f"the API server does not serve {group}/{version}"

    return requirement


def _crds(*names: str) -> Requirement:
    def requirement(_recipe: models.RecipeResult, view: ClusterView) -> str | None:
        failed = [c.message for c in (checks.crd_check(PHASE, n, view.crd(n)) for n in names) if not c.passed]
        return "; ".join(failed) or None

    return requirement


def _components(*names: str) -> Requirement:
    """The named components are in the recipe and every one of their deployment checks passes."""

    def requirement(recipe: models.RecipeResult, view: ClusterView) -> str | None:
        from shared.validate import run

        missing = [n for n in names if recipe.component(n) is None]
        if missing:
            return f"the recipe installs no {', '.join(missing)}"
        subset = recipe.model_copy(
            update={"componentRefs": [r for r in recipe.componentRefs if r.name in names], "deploymentOrder": []}
        )
        failed = [f"{c.component}: {c.name}: {c.message}" for c in run.component_checks(subset, view) if not c.passed]
        return "; ".join(failed) or None

    return requirement


def _daemonset_ready(namespace_of: str, name: str) -> Requirement:
    """A DaemonSet an operator creates (not Helm), in the namespace of component ``namespace_of``."""

    def requirement(recipe: models.RecipeResult, view: ClusterView) -> str | None:
        ref = recipe.component(namespace_of)
        namespace = (ref.namespace if ref is not None else None) or namespace_of
        found = [d for d in view.workloads("DaemonSet", namespace) if (d.get("metadata") or {}).get("name") == name]
        if not found:
            return f"no DaemonSet {namespace}/{name}"
        status = found[0].get("status") or {}
        ready, desired = int(status.get("numberReady") or 0), int(status.get("desiredNumberScheduled") or 0)
        return None if desired > 0 and ready >= desired else f"DaemonSet {namespace}/{name}: {ready} of {desired} ready"

    return requirement


CHECKS: dict[str, list[Requirement]] = {
    "platform-health": [_nodes_ready],
    "gpu-operator-health": [
        _crds("clusterpolicies.nvidia.com"),
        _components("gpu-operator"),
        _daemonset_ready("gpu-operator", "nvidia-driver-daemonset"),
    ],
    "dra-support": [_served("resource.k8s.io", "v1"), _components("nvidia-dra-driver-gpu")],
    "accelerator-metrics": [_components("gpu-operator"), _daemonset_ready("gpu-operator", "nvidia-dcgm-exporter")],
    "ai-service-metrics": [
        _crds("servicemonitors.monitoring.coreos.com", "podmonitors.monitoring.coreos.com"),
        _components("kube-prometheus-stack"),
    ],
    "gang-scheduling": [_crds("podgroups.scheduling.run.ai", "queues.scheduling.run.ai"), _components("kai-scheduler")],
    "pod-autoscaling": [_served("autoscaling", "v2"), _components("prometheus-adapter")],
    "inference-gateway": [
        _crds("gateways.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io"),
    ],
}
"""Upstream's conformance validators we judge from the API, each a list of requirements."""

NOT_FROM_THE_API: dict[str, str] = {
    "cluster-autoscaling": "needs a cloud node group to scale up and down; not judged from the API",
    "robust-controller": "needs an operator's controller killed and watched recovering; not judged from the API",
    "secure-accelerator-access": "needs a pod denied a GPU it was not allocated; not judged from the API",
}


def plan(block: models.ValidationPhase | None) -> list[checks.Check]:
    """What the phase would check, every check skipped (``--no-cluster``)."""
    return [
        checks.Check(PHASE, name, checks.SKIPPED, "not run (--no-cluster)")
        for name in (block.checks if block is not None and block.checks else [])
    ]


def run(block: models.ValidationPhase, recipe: models.RecipeResult, view: ClusterView) -> list[checks.Check]:
    """Every listed check, in the block's order; unknown names fail (a typo must not pass)."""
    out = []
    for name in block.checks or []:
        if name in NOT_FROM_THE_API:
            out.append(checks.Check(PHASE, name, checks.SKIPPED, NOT_FROM_THE_API[name]))
            continue
        requirements = CHECKS.get(name)
        if requirements is None:
            known = ", ".join(sorted([*CHECKS, *NOT_FROM_THE_API]))
            out.append(checks.Check(PHASE, name, checks.FAILED, f"unknown conformance check; known: {known}"))
            continue
        problems = [p for p in (req(recipe, view) for req in requirements) if p]
        out.append(checks.Check(PHASE, name, checks.FAILED if problems else checks.PASSED, "; ".join(problems)))
    return out
