"""Subresources with behaviour of their own: pod eviction (PodDisruptionBudgets), binding, log,
scale, and ServiceAccount tokens.

Eviction is what ``kubectl drain`` and our own drain use, so it follows the real rules: a pod
that is already terminal or terminating goes at once; otherwise the one PodDisruptionBudget
selecting it must allow a disruption (healthy pods above the desired count), else 429; two
budgets on one pod are a 500, as upstream. The budget's status is updated the way the disruption
controller would, so ``kubectl get pdb`` shows what the emulator decided.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from shared.sim.apiserver import api as api_mod
from shared.sim.apiserver import apierrors, patches, patchtypes, podlogs, resources, selectors
from shared.sim.apiserver.apierrors import ApiError
from shared.sim.apiserver.identities import Identities

_PDB = ("policy", "poddisruptionbudgets")
DISRUPTION_WINDOW = 120
"""Seconds an evicted pod stays in a budget's disruptedPods (the real controller's timeout)."""
_PODS = ("", "pods")


def _success(code: int = 201) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}


def is_ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") != "Running":
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def _scaled(value: Any, total: int, *, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        fraction = int(value[:-1]) * total / 100
        return math.ceil(fraction) if round_up else math.floor(fraction)
    return int(value)


def evict(
    api: api_mod.Api, pods: resources.Resource, namespace: str, name: str, body: Any, *, dry_run: bool
) -> dict[str, Any]:
    """Evict one pod, honouring its PodDisruptionBudget; raises 429 when the budget forbids it."""
    options = (body or {}).get("deleteOptions") if isinstance(body, dict) else None
    with api.store.lock:
        pod = api.entry(pods, namespace, name).object()
        phase = (pod.get("status") or {}).get("phase")
        if not pod["metadata"].get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
            _check_budget(api, namespace, pod, dry_run=dry_run)
        if not dry_run:
            api.delete(pods, namespace, name, options or {})
        return _success()


def _check_budget(api: api_mod.Api, namespace: str, pod: dict[str, Any], *, dry_run: bool) -> None:
    labels = pod["metadata"].get("labels") or {}
    budgets = []
    for entry in api.store.scan(_PDB, namespace):
        pdb = entry.object()
        reqs = selectors.labels_of_selector((pdb.get("spec") or {}).get("selector"))
        if reqs is not None and selectors.match_labels(reqs, labels):
            budgets.append(pdb)
    if not budgets:
        return
    if len(budgets) > 1:
        raise ApiError(
            500,
            "InternalError",
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        )
    pdb = budgets[0]
    spec = pdb.get("spec") or {}
    reqs = selectors.labels_of_selector(spec.get("selector")) or ()
    members = [e.object() for e in api.store.scan(_PODS, namespace) if selectors.match_labels(reqs, e.labels)]
    members = [p for p in members if not p["metadata"].get("deletionTimestamp")]
    # Pods evicted within the last two minutes still count as expected (their controller will
    # replace them) but not as healthy, as the disruption controller counts them.
    cutoff = api_mod.rfc3339(api.clock() - timedelta(seconds=DISRUPTION_WINDOW))
    disrupted = {k: v for k, v in ((pdb.get("status") or {}).get("disruptedPods") or {}).items() if v >= cutoff}
    live = {p["metadata"]["name"] for p in members}
    expected = len(members) + sum(1 for name in disrupted if name not in live)
    healthy = sum(1 for p in members if is_ready(p) and p["metadata"]["name"] not in disrupted)
    if spec.get("minAvailable") is not None:
        desired = _scaled(spec["minAvailable"], expected, round_up=True)
    elif spec.get("maxUnavailable") is not None:
        desired = max(0, expected - _scaled(spec["maxUnavailable"], expected, round_up=True))
    else:
        desired = expected
    allowed = max(0, healthy - desired)
    name = pdb["metadata"]["name"]
    pod_ready = is_ready(pod)
    if not pod_ready and (spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow" or healthy >= desired):
        return
    if allowed <= 0:
        raise ApiError(
            429,
            "TooManyRequests",
            "Cannot evict pod as it would violate the pod's disruption budget.",
            details={
                "causes": [
                    {
                        "reason": "DisruptionBudget",
                        "message": f"The disruption budget {name} needs {desired} healthy pods and has "
                        f"{healthy} currently",
                    }
                ]
            },
        )
    if dry_run:
        return
    pdb_resource = api.table.by_group_resource(*_PDB)
    assert pdb_resource is not None
    pdb["status"] = {
        "observedGeneration": pdb["metadata"].get("generation", 1),
        "disruptionsAllowed": allowed - 1,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "disruptedPods": {**disrupted, pod["metadata"]["name"]: api.now()},
    }
    api.store.put(pdb_resource, pdb)


def bind(
    api: api_mod.Api, pods: resources.Resource, namespace: str, name: str, body: Any, *, dry_run: bool
) -> dict[str, Any]:
    """Assign a pod to a node, once (the scheduler's write)."""
    target = (body or {}).get("target") or {} if isinstance(body, dict) else {}
    node = target.get("name")
    if not node:
        raise apierrors.invalid("Binding", name, [("target.name", "Required value")])
    with api.store.lock:
        pod = api.entry(pods, namespace, name).object()
        if pod["spec"].get("nodeName"):
            raise apierrors.conflict(
                "pods", "", name, f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"'
            )
        pod["spec"]["nodeName"] = node
        conditions = [c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") != "PodScheduled"]
        conditions.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": api.now()})
        pod.setdefault("status", {})["conditions"] = conditions
        if not dry_run:
            api.store.put(pods, pod)
        return _success()


def log_container(pod: dict[str, Any], container: str | None) -> str:
    """The container whose log is asked for, with the server's errors when it is ambiguous."""
    spec = pod.get("spec") or {}
    names = [str(c.get("name", "")) for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]]
    pod_name = pod["metadata"]["name"]
    if container is None:
        if len(names) != 1:
            raise apierrors.bad_request(
                f"a container name must be specified for pod {pod_name}, choose one of: [{' '.join(names)}]"
            )
        return names[0]
    if container not in names:
        raise apierrors.bad_request(f"container {container} is not valid for pod {pod_name}")
    return container


def read_log(
    api: api_mod.Api, logs: podlogs.PodLogs, pods: resources.Resource, namespace: str, name: str, query: dict[str, str]
) -> str:
    pod = api.entry(pods, namespace, name).object()
    container = log_container(pod, query.get("container"))
    try:
        tail = int(query["tailLines"]) if "tailLines" in query else None
        limit = int(query["limitBytes"]) if "limitBytes" in query else None
    except ValueError as exc:
        raise apierrors.bad_request(f"invalid log options: {exc}") from exc
    text: str = logs.read(namespace, name, container, tail_lines=tail, limit_bytes=limit)
    return text


def scale_of(api: api_mod.Api, r: resources.Resource, namespace: str, name: str) -> dict[str, Any]:
    obj = api.entry(r, namespace, name).object()
    md = obj["metadata"]
    selector = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in md},
        "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 0)},
        "status": {
            "replicas": (obj.get("status") or {}).get("replicas", 0),
            "selector": ",".join(f"{k}={v}" for k, v in sorted(selector.items())),
        },
    }


def change_scale(
    api: api_mod.Api, r: resources.Resource, namespace: str, name: str, body: Any, patch_type: str, *, dry_run: bool
) -> dict[str, Any]:
    """PUT (no ``patch_type``) or PATCH of the Scale subresource."""
    scale = body
    if patch_type:
        current = scale_of(api, r, namespace, name)
        try:
            scale = (
                patches.json_patch(current, body)
                if patch_type == patchtypes.JSON_PATCH
                else patches.merge_patch(current, body)
            )
        except patches.PatchError as exc:
            raise ApiError(422, "Invalid", str(exc)) from exc
    if not isinstance(scale, dict):
        raise apierrors.bad_request("a Scale must be an object")
    return write_scale(api, r, namespace, name, scale, dry_run=dry_run)


def write_scale(
    api: api_mod.Api, r: resources.Resource, namespace: str, name: str, scale: dict[str, Any], *, dry_run: bool
) -> dict[str, Any]:
    with api.store.lock:
        current = api.entry(r, namespace, name)
        wanted = (scale.get("metadata") or {}).get("resourceVersion")
        if wanted and wanted != str(current.rv):
            raise apierrors.conflict(r.plural, r.group, name)
        replicas = (scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise apierrors.invalid("Scale", name, [("spec.replicas", "Invalid value: must be a non-negative integer")])
        obj = current.object()
        obj.setdefault("spec", {})["replicas"] = replicas
        api.update(r, namespace, name, obj, dry_run=dry_run)
        return scale_of(api, r, namespace, name)


def request_token(
    api: api_mod.Api, identities: Identities, r: resources.Resource, namespace: str, name: str, body: Any
) -> dict[str, Any]:
    """TokenRequest: a bearer token for an existing ServiceAccount (``kubectl create token``)."""
    api.entry(r, namespace, name)
    spec = (body or {}).get("spec") or {} if isinstance(body, dict) else {}
    seconds = int(spec.get("expirationSeconds") or 3600)
    token = identities.for_service_account(namespace, name)
    expires = api_mod.rfc3339(api.clock() + timedelta(seconds=seconds))
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
        "spec": {
            "audiences": spec.get("audiences") or ["https://kubernetes.default.svc"],
            "expirationSeconds": seconds,
        },
        "status": {"token": token, "expirationTimestamp": expires},
    }
