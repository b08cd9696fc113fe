"""Pod placement, as kube-scheduler decides it for the cases our programs create.

Filters, in the default profile's order (``k8s.io/kubernetes:pkg/scheduler/apis/config/v1/
default_plugins.go``), each node stopping at the first that fails: NodeUnschedulable (cordoned,
unless the pod tolerates node.kubernetes.io/unschedulable), TaintToleration (untolerated
NoSchedule/NoExecute taints), NodeAffinity (nodeSelector and required terms; ``matchExpressions``
on labels, ``matchFields`` on ``metadata.name``), NodeResourcesFit (every resource the pod
requests — cpu, memory, hugepages-*, nvidia.com/gpu, vpc.amazonaws.com/efa, rdma/*, … — against
``status.allocatable`` less what the node's other pods request, :mod:`.podrequests`),
PodTopologySpread and InterPodAffinity (:mod:`.interpod`). When nothing fits, the pod stays
Pending with condition PodScheduled=False, reason Unschedulable, and the real FitError message
(``pkg/scheduler/framework/types.go``): each node's reasons counted and sorted, then what
preemption found — nodes whose failure preemption could cure (resources, anti-affinity, spread)
count as ``No preemption victims found for incoming pod`` (every pod here has the same
priority), the others as ``Preemption is not helpful for scheduling``::

    0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 3 node(s) didn't match Pod's node
    affinity/selector. preemption: 0/4 nodes are available: 1 No preemption victims found for
    incoming pod, 3 Preemption is not helpful for scheduling.

Scoring is reduced to two rules: GPU pods take the first fitting node by name, other pods the
fitting node with fewest pods (so a Deployment's replicas spread over the nodes). Left out:
priorities and actual preemption, NodePorts and volume filters, preferred terms. Pure functions
over plain dicts; the kubelet keeps the state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shared.sim.apiserver import interpod, podrequests
from shared.sim.apiserver.interpod import Placed

GPU = podrequests.GPU
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
UNSCHEDULABLE = "node(s) were unschedulable"
INSUFFICIENT = f"Insufficient {GPU}"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
PREEMPTION_NO_VICTIMS = "No preemption victims found for incoming pod"
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"

__all__ = ["Decision", "NodeView", "Placed", "gpu_request", "matches_affinity", "place", "placed_of", "tolerated"]


@dataclass
class NodeView:
    """What scheduling needs to know of a node."""

    name: str
    labels: dict[str, str]
    taints: list[dict[str, Any]]
    unschedulable: bool
    ready: bool
    allocatable: dict[str, int] = field(default_factory=dict)
    """``status.allocatable`` in :mod:`.podrequests` units (CPU in millicores)."""

    @property
    def gpus(self) -> int:
        return self.allocatable.get(GPU, 0)

    @classmethod
    def of(cls, node: dict[str, Any]) -> NodeView:
        status = node.get("status") or {}
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
        return cls(
            name=node["metadata"]["name"],
            labels=dict(node["metadata"].get("labels") or {}),
            taints=list((node.get("spec") or {}).get("taints") or []),
            unschedulable=bool((node.get("spec") or {}).get("unschedulable")),
            ready=ready,
            allocatable=podrequests.allocatable(node),
        )


@dataclass
class Decision:
    node: str | None
    message: str = ""
    reasons: Counter[str] = field(default_factory=Counter)


def gpu_request(pod: dict[str, Any]) -> int:
    """GPUs the pod asks for (its effective ``nvidia.com/gpu`` request; requests default to limits)."""
    return podrequests.gpu_request(pod)


def placed_of(pod: dict[str, Any], node: str) -> Placed:
    """What the filters need to remember of ``pod`` once it is bound to ``node``."""
    md = pod.get("metadata") or {}
    return Placed(
        uid=str(md.get("uid") or ""),
        namespace=str(md.get("namespace") or "default"),
        node=node,
        labels=dict(md.get("labels") or {}),
        requests=podrequests.pod_requests(pod),
        anti_affinity=tuple(interpod.required_terms(pod, "podAntiAffinity")),
        terminating=bool(md.get("deletionTimestamp")),
    )


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


_RESOLVABLE = frozenset({interpod.ANTI_AFFINITY, interpod.EXISTING_ANTI_AFFINITY, interpod.SPREAD})
"""Filter failures that evicting pods could cure: the nodes DefaultPreemption tries (status Unschedulable
rather than UnschedulableAndUnresolvable), besides every NodeResourcesFit shortfall."""


def place(
    pod: dict[str, Any],
    nodes: Mapping[str, NodeView],
    placed: Iterable[Placed] = (),
) -> Decision:
    """Where the pod goes, or why it cannot go anywhere (counted over all nodes).

    ``placed`` are the pods bound and not finished (their requests use up their node's
    allocatable). A pod asking for GPUs takes the first fitting node by name (packing GPU jobs
    predictably); any other pod the fitting node running fewest pods, as kube-scheduler's default
    spreading and least-allocated scores do for pods without requests.
    """
    placed = list(placed)
    own_uid = str((pod.get("metadata") or {}).get("uid") or "")
    placed = [p for p in placed if not own_uid or p.uid != own_uid]
    want = podrequests.pod_requests(pod)
    spread = GPU not in want
    used: dict[str, dict[str, int]] = {}
    load: Counter[str] = Counter()
    for p in placed:
        load[p.node] += 1
        into = used.setdefault(p.node, {})
        for name, value in p.requests.items():
            into[name] = into.get(name, 0) + value
    node_labels = {name: node.labels for name, node in nodes.items()}
    affinity = interpod.InterPodAffinity(pod, placed, node_labels.get)
    spreading = interpod.TopologySpread(pod, placed, node_labels, lambda n: matches_affinity(pod, nodes[n]))
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    best: tuple[int, str] | None = None
    hosts = pinned_hosts(pod)
    candidates = sorted(hosts & nodes.keys()) if hosts is not None else sorted(nodes)
    reasons: Counter[str] = Counter()
    resolvable = 0
    for name in candidates:
        node = nodes[name]
        failed = _filter(pod, node, tolerations, want, used.get(name, {}), load[name], affinity, spreading)
        if failed:
            reasons.update(failed)
            resolvable += bool(_RESOLVABLE.intersection(failed) or failed[0].startswith(("Insufficient ", "Too many")))
            continue
        if not spread:
            return Decision(node=name)
        score = (load[name], name)
        if best is None or score < best:
            best = score
    if best is not None:
        return Decision(node=best[1])
    if hosts is not None:
        reasons[AFFINITY] += len(nodes) - len(candidates)
    return Decision(node=None, message=message(reasons, len(nodes), resolvable=resolvable), reasons=reasons)


def _filter(
    pod: dict[str, Any],
    node: NodeView,
    tolerations: list[dict[str, Any]],
    want: Mapping[str, int],
    used: Mapping[str, int],
    pods_there: int,
    affinity: interpod.InterPodAffinity,
    spreading: interpod.TopologySpread,
) -> list[str]:
    """The reasons the first failing filter gives for ``node`` (none: it fits)."""
    if node.unschedulable and not tolerated(UNSCHEDULABLE_TAINT, tolerations):
        return [UNSCHEDULABLE]  # NodeUnschedulable: a cordon is tolerable
    taint = untolerated(pod, node)
    if taint is not None:
        return [f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value') or ''}}}"]
    if not matches_affinity(pod, node):
        return [AFFINITY]
    free = {k: node.allocatable.get(k, 0) - used.get(k, 0) for k in want}
    pods_free = node.allocatable[podrequests.PODS] - pods_there if podrequests.PODS in node.allocatable else None
    short = podrequests.shortfalls(want, free, pods_free=pods_free)
    if short:
        return [podrequests.reason(name) for name, _ in short]
    found = spreading.reason(node.labels) or affinity.reason(node.labels)
    return [found] if found else []


def message(reasons: Counter[str], total: int, *, resolvable: int) -> str:
    """kube-scheduler's FitError text, with DefaultPreemption's verdict when no pod is lower priority."""
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items() if count)
    preemption = [f"{total - resolvable} {PREEMPTION_NOT_HELPFUL}"] if total - resolvable else []
    if resolvable:
        preemption.append(f"{resolvable} {PREEMPTION_NO_VICTIMS}")
    return (
        f"0/{total} nodes are available: {', '.join(parts)}. preemption: 0/{total} nodes are available: "
        f"{', '.join(sorted(preemption))}."
    )
