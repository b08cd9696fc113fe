"""Placement rules that depend on the pods already placed: inter-pod (anti-)affinity and topology spread.

kube-scheduler's InterPodAffinity filter
(``k8s.io/kubernetes:pkg/scheduler/framework/plugins/interpodaffinity/filtering.go``) checks, in
this order, the incoming pod's required ``podAffinity`` (``node(s) didn't match pod affinity
rules``; a pod matching its own terms may go first when no pod matches anywhere), its required
``podAntiAffinity`` (``node(s) didn't match pod anti-affinity rules``) and the required
anti-affinity of pods already placed (``node(s) didn't satisfy existing pods anti-affinity
rules``). A term's domain is the node label named by ``topologyKey``; a node without it is
outside every domain of that term. Its pods are those in ``namespaces`` (the pod's own when empty
and no ``namespaceSelector``), matching ``labelSelector`` plus ``matchLabelKeys`` /
``mismatchLabelKeys`` taken from the incoming pod's labels.

PodTopologySpread (``plugins/podtopologyspread/filtering.go``) enforces only ``whenUnsatisfiable:
DoNotSchedule`` constraints: counting, per domain, the pods of the pod's namespace that match the
constraint's selector (plus ``matchLabelKeys``) and are not terminating, over the nodes that pass
the pod's node affinity/selector (``nodeAffinityPolicy: Honor``) and carry every constraint's key;
placing the pod must keep ``count + self - min ≤ maxSkew``, where ``min`` is 0 while fewer than
``minDomains`` domains exist. A node without the key fails with ``(missing required label)``.

Left out: ``nodeTaintsPolicy: Honor`` (treated as the default Ignore), namespace selectors other
than the namespace's ``kubernetes.io/metadata.name`` label, and every preferred (scoring) term.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared.sim.apiserver import selectors

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
SPREAD = "node(s) didn't match pod topology spread constraints"
SPREAD_LABEL = SPREAD + " (missing required label)"

Labels = Mapping[str, str]


@dataclass(frozen=True)
class Placed:
    """A pod bound to a node and not finished: what the filters need of it."""

    uid: str
    namespace: str
    node: str
    labels: Labels
    requests: Mapping[str, int] = field(default_factory=dict)
    anti_affinity: tuple[Mapping[str, Any], ...] = ()
    terminating: bool = False


def required_terms(pod: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    """The pod's required ``podAffinity`` or ``podAntiAffinity`` terms (``kind`` names which)."""
    rules = ((pod.get("spec") or {}).get("affinity") or {}).get(kind) or {}
    return list(rules.get("requiredDuringSchedulingIgnoredDuringExecution") or [])


@dataclass(frozen=True)
class Term:
    """One affinity term, resolved against the pod that carries it."""

    key: str
    namespaces: frozenset[str] | None  # None: every namespace
    selector: tuple[selectors.Requirement, ...] | None  # None: selects nothing

    @classmethod
    def of(cls, term: Mapping[str, Any], owner_namespace: str, owner_labels: Labels) -> Term:
        names = frozenset(str(n) for n in term.get("namespaces") or [])
        ns_selector = term.get("namespaceSelector")
        namespaces: frozenset[str] | None
        if ns_selector is not None and not (ns_selector.get("matchLabels") or ns_selector.get("matchExpressions")):
            namespaces = None  # {} selects every namespace
        elif ns_selector is not None:
            namespaces = names | _named_namespaces(ns_selector)
        else:
            namespaces = names or frozenset({owner_namespace})
        return cls(
            key=str(term.get("topologyKey") or ""),
            namespaces=namespaces,
            selector=_selector(term, owner_labels),
        )

    def matches(self, namespace: str, labels: Labels) -> bool:
        if self.selector is None or (self.namespaces is not None and namespace not in self.namespaces):
            return False
        return selectors.match_labels(self.selector, labels)


def _named_namespaces(selector: Mapping[str, Any]) -> frozenset[str]:
    """The namespaces a selector names through ``kubernetes.io/metadata.name`` (set on every namespace)."""
    key = "kubernetes.io/metadata.name"
    found = {str(v) for k, v in (selector.get("matchLabels") or {}).items() if k == key}
    for expr in selector.get("matchExpressions") or []:
        if expr.get("key") == key and expr.get("operator") == "In":
            found.update(str(v) for v in expr.get("values") or [])
    return frozenset(found)


def _selector(spec: Mapping[str, Any], owner_labels: Labels) -> tuple[selectors.Requirement, ...] | None:
    try:
        base = selectors.labels_of_selector(spec.get("labelSelector"))
    except selectors.SelectorError:
        return None
    if base is None:
        return None
    extra = [
        selectors.Requirement(k, "in", frozenset({owner_labels[k]}))
        for k in spec.get("matchLabelKeys") or []
        if k in owner_labels
    ]
    extra += [
        selectors.Requirement(k, "notin", frozenset({owner_labels[k]}))
        for k in spec.get("mismatchLabelKeys") or []
        if k in owner_labels
    ]
    return (*base, *extra)


def _pod_identity(pod: Mapping[str, Any]) -> tuple[str, Labels]:
    md = pod.get("metadata") or {}
    return str(md.get("namespace") or "default"), dict(md.get("labels") or {})


class InterPodAffinity:
    """The InterPodAffinity filter for one pod over a snapshot of placed pods.

    As the real PreFilter does, the topology domains each term reaches are computed once per pod.
    """

    def __init__(
        self, pod: Mapping[str, Any], placed: Sequence[Placed], node_labels: Callable[[str], Labels | None]
    ) -> None:
        namespace, labels = _pod_identity(pod)
        affinity = [Term.of(t, namespace, labels) for t in required_terms(pod, "podAffinity")]
        anti = [Term.of(t, namespace, labels) for t in required_terms(pod, "podAntiAffinity")]
        self.active = bool(affinity or anti or any(p.anti_affinity for p in placed))
        # Affinity counts only the pods that match every term (podMatchesAllAffinityTerms); with none
        # anywhere, a pod matching its own terms may start the group (satisfiesSelfAffinityCheck).
        partners = [p for p in placed if affinity and all(t.matches(p.namespace, p.labels) for t in affinity)]
        self.lone_start = not partners and all(t.matches(namespace, labels) for t in affinity)
        self.affinity = [(t.key, _domains(t.key, partners, node_labels)) for t in affinity]
        self.anti = [
            (t.key, _domains(t.key, [p for p in placed if t.matches(p.namespace, p.labels)], node_labels)) for t in anti
        ]
        self.existing: set[tuple[str, str]] = set()
        for other in placed:
            for raw in other.anti_affinity:
                term = Term.of(raw, other.namespace, other.labels)
                where = node_labels(other.node)
                if where is not None and term.key in where and term.matches(namespace, labels):
                    self.existing.add((term.key, where[term.key]))

    def reason(self, node: Labels) -> str | None:
        if not self.active:
            return None
        if any(key not in node for key, _ in self.affinity):
            return AFFINITY  # every topology label must exist on the node, self-affinity included
        if not all(node[key] in domains for key, domains in self.affinity) and not self.lone_start:
            return AFFINITY
        if any(key in node and node[key] in domains for key, domains in self.anti):
            return ANTI_AFFINITY
        if any((key, value) in self.existing for key, value in node.items()):
            return EXISTING_ANTI_AFFINITY
        return None


def _domains(key: str, pods: Iterable[Placed], node_labels: Callable[[str], Labels | None]) -> set[str]:
    found: set[str] = set()
    for p in pods:
        labels = node_labels(p.node)
        if labels is not None and key in labels:
            found.add(labels[key])
    return found


@dataclass(frozen=True)
class _Constraint:
    key: str
    max_skew: int
    min_domains: int
    selector: tuple[selectors.Requirement, ...] | None


class TopologySpread:
    """The PodTopologySpread filter (hard constraints only) for one pod over a snapshot."""

    def __init__(
        self,
        pod: Mapping[str, Any],
        placed: Sequence[Placed],
        nodes: Mapping[str, Labels],
        eligible: Callable[[str], bool],
    ) -> None:
        namespace, labels = _pod_identity(pod)
        raw = [
            c
            for c in (pod.get("spec") or {}).get("topologySpreadConstraints") or []
            if c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
        ]
        self.constraints = [
            _Constraint(
                key=str(c.get("topologyKey") or ""),
                max_skew=int(c.get("maxSkew") or 1),
                min_domains=int(c.get("minDomains") or 1),
                selector=_selector(c, labels),
            )
            for c in raw
        ]
        self.labels = labels
        self.counts: list[dict[str, int]] = []
        if not self.constraints:
            return
        keys = {c.key for c in self.constraints}
        counted = {name for name, node in nodes.items() if keys <= node.keys() and eligible(name)}
        for c in self.constraints:
            per_domain = {nodes[name][c.key]: 0 for name in counted}
            for other in placed:
                if (
                    other.node in counted
                    and not other.terminating
                    and other.namespace == namespace
                    and c.selector is not None
                    and selectors.match_labels(c.selector, other.labels)
                ):
                    per_domain[nodes[other.node][c.key]] += 1
            self.counts.append(per_domain)

    def reason(self, node: Labels) -> str | None:
        for c, per_domain in zip(self.constraints, self.counts, strict=True):
            value = node.get(c.key)
            if value is None:
                return SPREAD_LABEL
            lowest = min(per_domain.values()) if per_domain else 0
            if len(per_domain) < c.min_domains:
                lowest = 0
            own = 1 if c.selector is not None and selectors.match_labels(c.selector, self.labels) else 0
            if per_domain.get(value, 0) + own - lowest > c.max_skew:
                return SPREAD
        return None
