"""What a cluster must run for each certification category, and whether it does: ``nvcrectl setup check``.

A run that starts on a cluster missing Kubeflow Trainer fails at its first step; this says so
before anything is created, and for every category at once. It reads discovery for the
resources certification creates (:data:`.workloads.backends.OPERATORS`), the GPU Operator's
ClusterPolicy kind, the GPU nodes (``nvidia.com/gpu`` allocatable, and their platform: GB200
needs ComputeDomains) and the DCGM hostengine Service DCGM tests reach. Each category is then
judged with the same choice the runner makes (:func:`.workloads.backends.pick`), so "ready" here
means the run will not fail for want of an operator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shared import errors
from shared.certify import catalog
from shared.certify.workloads import backends, launch, platforms
from shared.kube import rest
from shared.kube.api import KubeApi

GPU = "nvidia.com/gpu"
CLUSTER_POLICY = "nvidia.com/v1/clusterpolicies"
DCGM_SERVICE, DCGM_NAMESPACE = backends.DCGM_HOST.split(".")[0], backends.DCGM_HOST.split(".")[1]


@dataclass(frozen=True)
class Component:
    name: str
    installed: bool
    detail: str


@dataclass(frozen=True)
class CategoryCheck:
    category: str
    ready: bool
    backend: str | None
    needs: str
    message: str


@dataclass(frozen=True)
class Report:
    platform: str
    gpu: str
    gpu_nodes: int
    components: list[Component]
    categories: list[CategoryCheck] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return all(c.ready for c in self.categories)


def _dcgm(api: KubeApi) -> Component:
    name = "DCGM hostengine Service"
    try:
        found = rest.list_items(api, rest.core_path("services"), field_selector=f"metadata.name={DCGM_SERVICE}")
    except errors.Unauthorized:
        return Component(name, False, "cannot list Services cluster-wide (forbidden)")
    where = sorted(str(s["metadata"]["namespace"]) for s in found)
    if DCGM_NAMESPACE in where:
        return Component(name, True, f"{DCGM_SERVICE}.{DCGM_NAMESPACE} (port 5555): what DCGM tests reach")
    if where:
        return Component(
            name, False, f"{DCGM_SERVICE} found in {', '.join(where)}; DCGM tests reach {backends.DCGM_HOST}"
        )
    return Component(name, False, "no nvidia-dcgm Service: the GPU Operator's standalone DCGM (dcgm.enabled)")


def _components(served: set[str], policy: bool, gpu_nodes: int, dcgm: Component) -> list[Component]:
    out = [
        Component(what, resource in served, resource.rsplit("/", 1)[0] + (" served" if resource in served else ""))
        for resource, what in backends.OPERATORS.items()
    ]
    operator = "ClusterPolicy (nvidia.com/v1) served" if policy else "no ClusterPolicy kind (nvidia.com/v1)"
    out.append(Component("NVIDIA GPU Operator", policy, f"{operator}; {gpu_nodes} node(s) advertise {GPU}"))
    out.append(dcgm)
    return out


def _gpu_nodes(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [n for n in nodes if str(((n.get("status") or {}).get("allocatable") or {}).get(GPU, "0")) not in ("0", "")]


def _platform(gpu_nodes: list[dict[str, Any]]) -> platforms.Platform:
    try:
        return platforms.detect(gpu_nodes)
    except errors.InvalidInput as exc:  # nodes of several platforms: no override applies to all
        return platforms.Platform(f"mixed ({exc.message.rsplit(': ', 1)[-1]})", "unknown", ())


def _needs(entry: catalog.Entry, where: platforms.Platform) -> str:
    if entry.parser is catalog.Parser.DCGM:
        return "DCGM hostengine Service; Trainer or batch/v1"
    if not backends.multi_node(entry):
        return "Trainer or batch/v1"
    needs = "Trainer + JobSet" + (" or MPI Operator" if entry.parser is catalog.Parser.NCCL else "")
    return needs + (" + ComputeDomain" if where.compute_domain else "")


def _category(
    entry: catalog.Entry, served: set[str], where: platforms.Platform, dcgm: Component, gpu_nodes: int
) -> CategoryCheck:
    needs = _needs(entry, where)
    try:
        chosen = backends.pick(entry, served, compute_domain=where.compute_domain)
    except backends.BackendMissing as exc:
        return CategoryCheck(entry.key, False, None, needs, exc.message)
    if gpu_nodes == 0:
        return CategoryCheck(entry.key, False, chosen, needs, f"no node advertises {GPU}")
    if entry.parser is catalog.Parser.DCGM and not dcgm.installed:
        return CategoryCheck(entry.key, False, chosen, needs, dcgm.detail)
    return CategoryCheck(entry.key, True, chosen, needs, f"runs as {chosen}")


def check(api: KubeApi, *, categories: list[str] | None = None) -> Report:
    """The cluster's readiness for ``categories`` (``domain/variant``; default every catalog entry).
    An unknown category is InvalidInput."""
    entries = catalog.load()
    wanted = [e.key for e in entries.entries] if categories is None else categories
    chosen = []
    for key in wanted:
        domain, _, variant = key.partition("/")
        chosen.append(entries.find(domain, variant, where="--category"))
    served = launch.served(api)
    policy = CLUSTER_POLICY in _served_policy(api)
    gpu_nodes = _gpu_nodes(rest.list_items(api, rest.core_path("nodes")))
    where = _platform(gpu_nodes)
    dcgm = _dcgm(api)
    components = _components(served, policy, len(gpu_nodes), dcgm)
    return Report(
        platform=where.name,
        gpu=where.gpu,
        gpu_nodes=len(gpu_nodes),
        components=components,
        categories=[_category(e, served, where, dcgm, len(gpu_nodes)) for e in chosen],
    )


def _served_policy(api: KubeApi) -> set[str]:
    try:
        listing = rest.get(api, "/apis/nvidia.com/v1")
    except errors.ToolError:
        return set()
    return {f"nvidia.com/v1/{r.get('name')}" for r in listing.get("resources") or []}
