"""Pod placement, as kube-scheduler decides it for the cases our programs create.

Filters, in the real scheduler's order of concern: node affinity / nodeSelector (required terms
only; ``matchExpressions`` on labels, ``matchFields`` on ``metadata.name``), unschedulable
(cordoned, unless the pod tolerates node.kubernetes.io/unschedulable), untolerated NoSchedule/NoExecute
taints, and free ``nvidia.com/gpu``. When nothing
fits, the pod stays Pending with condition PodScheduled=False, reason Unschedulable, and the
real message: ``0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 3 node(s) didn't match
Pod's node affinity/selector. preemption: …``. Scoring is reduced to two rules: GPU pods take
the first fitting node by name, other pods the fitting node with fewest pods (so a Deployment's
replicas spread over the nodes). Pure functions over plain dicts; the kubelet keeps the state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

GPU = "nvidia.com/gpu"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
UNSCHEDULABLE = "node(s) were unschedulable"
INSUFFICIENT = f"Insufficient {GPU}"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


@dataclass
class NodeView:
    """What scheduling needs to know of a node."""

    name: str
    labels: dict[str, str]
    taints: list[dict[str, Any]]
    unschedulable: bool
    ready: bool
    gpus: int

    @classmethod
    def of(cls, node: dict[str, Any]) -> NodeView:
        status = node.get("status") or {}
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
        alloc = (status.get("allocatable") or {}).get(GPU, "0")
        return cls(
            name=node["metadata"]["name"],
            labels=dict(node["metadata"].get("labels") or {}),
            taints=list((node.get("spec") or {}).get("taints") or []),
            unschedulable=bool((node.get("spec") or {}).get("unschedulable")),
            ready=ready,
            gpus=_quantity(alloc),
        )


@dataclass
class Decision:
    node: str | None
    message: str = ""
    reasons: Counter[str] = field(default_factory=Counter)


def _quantity(value: Any) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


def gpu_request(pod: dict[str, Any]) -> int:
    """GPUs the pod asks for: limits win over requests for extended resources, as in Kubernetes."""
    total = 0
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        value = (resources.get("limits") or {}).get(GPU, (resources.get("requests") or {}).get(GPU, 0))
        total += _quantity(value)
    return total


_SET_OPERATORS = {
    "In": lambda value, values: value in values,
    "NotIn": lambda value, values: value not in values,
    "Exists": lambda value, values: value is not None,
    "DoesNotExist": lambda value, values: value is None,
}


def _expression(expr: dict[str, Any], value: str | None) -> bool:
    op, values = expr.get("operator"), [str(v) for v in expr.get("values") or []]
    by_set = _SET_OPERATORS.get(str(op))
    if by_set is not None:
        return bool(by_set(value, values))
    if op in ("Gt", "Lt") and value is not None and values:
        try:
            return int(value) > int(values[0]) if op == "Gt" else int(value) < int(values[0])
        except ValueError:
            return False
    return False


def _term(term: dict[str, Any], node: NodeView) -> bool:
    labels_ok = all(_expression(e, node.labels.get(e.get("key", ""))) for e in term.get("matchExpressions") or [])
    fields_ok = all(
        _expression(e, node.name if e.get("key") == "metadata.name" else None) for e in term.get("matchFields") or []
    )
    return labels_ok and fields_ok


def matches_affinity(pod: dict[str, Any], node: NodeView) -> bool:
    spec = pod.get("spec") or {}
    selector = spec.get("nodeSelector") or {}
    if any(node.labels.get(k) != v for k, v in selector.items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms") or []
    return not terms or any(_term(t, node) for t in terms)


def pinned_hosts(pod: dict[str, Any]) -> set[str] | None:
    """Host names the pod is restricted to, when that can be read off cheaply (None: any node)."""
    spec = pod.get("spec") or {}
    host = (spec.get("nodeSelector") or {}).get("kubernetes.io/hostname")
    if host:
        return {host}
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    found: set[str] = set()
    for term in required.get("nodeSelectorTerms") or []:
        names = [
            e
            for e in [*(term.get("matchExpressions") or []), *(term.get("matchFields") or [])]
            if e.get("key") in ("kubernetes.io/hostname", "metadata.name") and e.get("operator") == "In"
        ]
        if not names:
            return None
        found.update(str(v) for e in names for v in e.get("values") or [])
    return found or None


def tolerated(taint: dict[str, Any], tolerations: list[dict[str, Any]]) -> bool:
    for tol in tolerations:
        if tol.get("effect") and tol.get("effect") != taint.get("effect"):
            continue
        if tol.get("operator") == "Exists":
            if not tol.get("key") or tol.get("key") == taint.get("key"):
                return True
        elif tol.get("key") == taint.get("key") and (tol.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def untolerated(pod: dict[str, Any], node: NodeView) -> dict[str, Any] | None:
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in node.taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerated(taint, tolerations):
            return taint
    return None


def place(
    pod: dict[str, Any],
    nodes: dict[str, NodeView],
    used: dict[str, int],
    total: int,
    *,
    load: Mapping[str, int] | None = None,
) -> Decision:
    """Where the pod goes, or why it cannot go anywhere (counted over all ``total`` nodes).

    A pod asking for GPUs takes the first fitting node by name (packing GPU jobs predictably); any
    other pod, when ``load`` (pods per node) is given, the fitting node running fewest pods, as
    kube-scheduler's default spreading and least-allocated scores do for pods without requests.
    """
    want = gpu_request(pod)
    spread = load is not None and not want
    best: tuple[int, str] | None = None
    hosts = pinned_hosts(pod)
    candidates = sorted(hosts & nodes.keys()) if hosts is not None else sorted(nodes)
    reasons: Counter[str] = Counter()
    for name in candidates:
        node = nodes[name]
        if not matches_affinity(pod, node):
            reasons[AFFINITY] += 1
            continue
        if node.unschedulable and not tolerated(UNSCHEDULABLE_TAINT, (pod.get("spec") or {}).get("tolerations") or []):
            reasons[UNSCHEDULABLE] += 1  # kube-scheduler's NodeUnschedulable: a cordon is tolerable
            continue
        taint = untolerated(pod, node)
        if taint is not None:
            reasons[f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value') or ''}}}"] += 1
            continue
        if want and node.gpus - used.get(name, 0) < want:
            reasons[INSUFFICIENT] += 1
            continue
        if not spread:
            return Decision(node=name)
        score = (load.get(name, 0) if load is not None else 0, name)
        if best is None or score < best:
            best = score
    if best is not None:
        return Decision(node=best[1])
    if hosts is not None:
        reasons[AFFINITY] += total - len(candidates)
    return Decision(node=None, message=message(reasons, total), reasons=reasons)


def message(reasons: Counter[str], total: int) -> str:
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items() if count)
    helpful = reasons.get(INSUFFICIENT, 0)
    preemption = [f"{total - helpful} Preemption is not helpful for scheduling"] if total - helpful else []
    if helpful:
        preemption.append(f"{helpful} No preemption victims found for incoming pod")
    return (
        f"0/{total} nodes are available: {', '.join(parts)}. preemption: 0/{total} nodes are available: "
        f"{', '.join(sorted(preemption))}."
    )
