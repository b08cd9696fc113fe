"""What a pod asks of a node and what a node offers, in the integer units placement compares.

The scheduler's NodeResourcesFit filter and the kubelet's admission both compare a pod's
effective request with the node's ``status.allocatable`` less what its other pods requested
(``k8s.io/kubernetes:pkg/scheduler/framework/plugins/noderesources/fit.go``,
``component-helpers:resource/helpers.go`` ``PodRequests``). The effective request is the sum
of the containers' requests, at least each init container's (plus the sidecars started before
it), with pod-level ``spec.resources.requests`` taking the place of the containers' sum and
``spec.overhead`` added. Requests default to limits (``SetDefaults_Pod``), so a container with
only ``limits: {nvidia.com/gpu: 8}`` requests 8. CPU is counted in millicores, everything else
in whole units (bytes for memory and hugepages). Left out: DRA-backed extended resources and the
scheduler's ``ignoredResources`` arguments.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from shared.sim.apiserver.validation import quantity

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL = "ephemeral-storage"
GPU = "nvidia.com/gpu"

_FIRST = (PODS, CPU, MEMORY, EPHEMERAL)
"""The order fit.go checks resources in (pods, cpu, memory, ephemeral storage, then the scalar ones)."""


def amount(name: str, value: Any) -> int:
    """``value`` of resource ``name`` in comparison units (millicores for CPU); unparsable → 0."""
    try:
        parsed = quantity.parse(value).value
    except quantity.QuantityError:
        return 0
    return math.ceil(parsed * 1000) if name == CPU else math.ceil(parsed)


def is_extended(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: a domain-prefixed name outside ``kubernetes.io/``."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def allocatable(node: Mapping[str, Any]) -> dict[str, int]:
    return {str(k): amount(str(k), v) for k, v in ((node.get("status") or {}).get("allocatable") or {}).items()}


def _container(container: Mapping[str, Any]) -> dict[str, int]:
    resources = container.get("resources") or {}
    merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return {str(k): amount(str(k), v) for k, v in merged.items()}


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], other: Mapping[str, int]) -> None:
    for k, v in other.items():
        into[k] = max(into.get(k, 0), v)


def pod_requests(pod: Mapping[str, Any]) -> dict[str, int]:
    """The pod's effective request per resource (zero requests dropped)."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for container in spec.get("containers") or []:
        _add(total, _container(container))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in spec.get("initContainers") or []:
        own = _container(container)
        if container.get("restartPolicy") == "Always":
            _add(total, own)
            _add(sidecars, own)
            _max(init_peak, sidecars)
        else:
            step = dict(own)
            _add(step, sidecars)
            _max(init_peak, step)
    _max(total, init_peak)
    pod_level = (spec.get("resources") or {}).get("requests") or {}
    for name, value in pod_level.items():
        total[str(name)] = amount(str(name), value)
    _add(total, {str(k): amount(str(k), v) for k, v in (spec.get("overhead") or {}).items()})
    return {k: v for k, v in total.items() if v}


def gpu_request(pod: Mapping[str, Any]) -> int:
    return pod_requests(pod).get(GPU, 0)


def ordered(names: Iterable[str]) -> list[str]:
    """Resource names in the order fit.go reports them."""
    found = set(names)
    return [n for n in _FIRST if n in found] + sorted(found.difference(_FIRST))


def shortfalls(
    want: Mapping[str, int], free_of: Mapping[str, int], *, pods_free: int | None = None
) -> list[tuple[str, int]]:
    """The resources ``want`` exceeds what is free, in fit.go's order, with what was free.

    ``pods_free`` is the room left under the node's ``pods`` allocatable (the pod itself counts 1).
    """
    out: list[tuple[str, int]] = []
    if pods_free is not None and pods_free < 1:
        out.append((PODS, pods_free))
    for name in ordered(want):
        if name == PODS:
            continue
        free = free_of.get(name, 0)
        if want[name] > free:
            out.append((name, free))
    return out


def reason(name: str) -> str:
    """kube-scheduler's per-node reason for one resource (``Too many pods`` for the pod count)."""
    return "Too many pods" if name == PODS else f"Insufficient {name}"
