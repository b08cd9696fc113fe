"""The objects ``seed`` writes for an installed component, and how it writes them.

Stub CRDs (only when absent, as Helm installs ``crds/``; our own chart's are its real CRDs), pods
pinned to nodes with the status a kubelet would have written (Running, or broken: CrashLoopBackOff,
or Pending and unschedulable), workloads labelled and annotated as Helm leaves them, with the ready status their
controllers would have written. Every pod and workload written here is static: the simulator's
kubelet and controllers leave it alone. Which objects a recipe's component gets, and its Helm
release record, are :mod:`.helmseed`'s.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from shared.sim.apiserver import patchtypes
from shared.sim.gpu import podruns, podstatus

if TYPE_CHECKING:
    from shared.sim.server import SimServer


class Seeder:
    """Writes what ``seed`` installs, through the API verbs, as an installer would."""

    def __init__(self, sim: SimServer) -> None:
        self.sim = sim
        self.now = sim.api.now()
        self.nodes = [e.name for e in sim.store.scan(("", "nodes"), None)]

    def r(self, group: str, plural: str) -> Any:
        found = self.sim.table.by_group_resource(group, plural)
        assert found is not None
        return found

    def ensure(self, group: str, plural: str, ns: str | None, obj: dict[str, Any]) -> dict[str, Any]:
        """Create, or replace what is there (seeding twice converges)."""
        r = self.r(group, plural)
        name = obj["metadata"]["name"]
        if self.sim.store.get(r.group_resource, ns or "", name) is not None:
            self.sim.api.delete(r, ns, name, {"propagationPolicy": "Background"})
        return self.sim.api.create(r, ns, obj)

    def set_status(self, group: str, plural: str, ns: str | None, name: str, status: dict[str, Any]) -> None:
        self.sim.api.patch(
            self.r(group, plural),
            ns,
            name,
            patchtypes.JSON_PATCH,
            [{"op": "add", "path": "/status", "value": status}],
            sub="status",
        )

    def namespace(self, name: str) -> None:
        if self.sim.store.get(("", "namespaces"), "", name) is None:
            self.sim.api.create(self.r("", "namespaces"), None, {"metadata": {"name": name}})

    def crd(self, name: str) -> None:
        """A stub CRD (for our own chart, its real one), unless one is there: Helm installs a chart's
        ``crds/`` only when absent and never replaces them (replacing would also delete every custom
        resource of the kind)."""
        if self.sim.store.get(("apiextensions.k8s.io", "customresourcedefinitions"), "", name) is not None:
            return
        ours = _our_crd(name)
        if ours is not None:  # our chart's own CRDs: the real ones, as its install creates them
            self.ensure("apiextensions.k8s.io", "customresourcedefinitions", None, ours)
            return
        plural, _, group = name.partition(".")
        singular = plural[:-1] if plural.endswith("s") else plural
        kind = "".join(part.capitalize() for part in singular.split("-"))
        metadata: dict[str, Any] = {"name": name}
        if group == "k8s.io" or group.endswith((".k8s.io", ".kubernetes.io")) or group == "kubernetes.io":
            # The API server refuses a CRD in a protected group without this approval (the
            # Gateway API's CRDs, for one, carry the URL of their approving pull request).
            metadata["annotations"] = {
                "api-approved.kubernetes.io": "https://github.com/kubernetes/enhancements/pull/1111"
            }
        self.ensure(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            None,
            {
                "metadata": metadata,
                "spec": {
                    "group": group,
                    "scope": "Namespaced",
                    "names": {"plural": plural, "singular": singular, "kind": kind, "listKind": f"{kind}List"},
                    "versions": [
                        {
                            "name": "v1",
                            "served": True,
                            "storage": True,
                            "schema": {
                                "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                            },
                        }
                    ],
                },
            },
        )

    def pod(
        self, owner: dict[str, Any], name: str, node: str, labels: dict[str, str], image: str, mode: str | None
    ) -> None:
        ns = owner["metadata"]["namespace"]
        self.sim.kubelet.static.add((ns, name))
        pod = self.ensure(
            "",
            "pods",
            ns,
            {
                "metadata": {
                    "name": name,
                    "labels": labels,
                    "ownerReferences": [
                        {
                            "apiVersion": owner["apiVersion"],
                            "kind": owner["kind"],
                            "name": owner["metadata"]["name"],
                            "uid": owner["metadata"]["uid"],
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": {"nodeName": node, "containers": [{"name": "main", "image": image}]},
            },
        )
        uid = pod["metadata"]["uid"]
        host, ip = podruns.addresses(self.sim.store, node, uid) if node else ("", "")
        # The pod's own creation, not the seed's start: a container never started before its pod existed.
        now = pod["metadata"]["creationTimestamp"]
        if mode == "crashloop":
            status = podstatus.crashloop(pod, host_ip=host, pod_ip=ip, now=now)
        elif mode == "unavailable":
            status = podstatus.unschedulable(
                pod,
                now=now,
                message=(
                    f"0/{len(self.nodes)} nodes are available: {len(self.nodes)} Insufficient cpu. preemption: "
                    f"0/{len(self.nodes)} nodes are available: {len(self.nodes)} No preemption victims found for "
                    "incoming pod."
                ),
            )
        else:
            status = podstatus.running(pod, host_ip=host, pod_ip=ip, now=now)
        self.set_status("", "pods", ns, name, status)


def suffix(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:5]


def workload_object(kind: str, name: str, ns: str, labels: dict[str, str], image: str, replicas: int) -> dict[str, Any]:
    selector = {k: v for k, v in labels.items() if k != "helm.sh/chart"}
    spec: dict[str, Any] = {
        "selector": {"matchLabels": selector},
        "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "main", "image": image}]}},
    }
    if kind != "DaemonSet":
        spec["replicas"] = replicas
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": labels,
            "annotations": {
                "meta.helm.sh/release-name": labels["app.kubernetes.io/instance"],
                "meta.helm.sh/release-namespace": ns,
            },
        },
        "spec": spec,
    }


def workload_status(kind: str, desired: int, ready: int) -> dict[str, Any]:
    if kind == "DaemonSet":
        return {
            "currentNumberScheduled": desired,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "numberAvailable": ready,
            "updatedNumberScheduled": desired,
            "numberMisscheduled": 0,
            "observedGeneration": 1,
            **({"numberUnavailable": desired - ready} if ready < desired else {}),
        }
    status: dict[str, Any] = {
        "observedGeneration": 1,
        "replicas": desired,
        "updatedReplicas": desired,
        "readyReplicas": ready,
        "availableReplicas": ready,
    }
    if kind == "StatefulSet":
        status["currentReplicas"] = desired
        return status
    if ready < desired:
        status["unavailableReplicas"] = desired - ready
    available = ready >= desired
    status["conditions"] = [
        {
            "type": "Available",
            "status": "True" if available else "False",
            "reason": "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
            "message": "Deployment has minimum availability."
            if available
            else "Deployment does not have minimum availability.",
        },
        {
            "type": "Progressing",
            "status": "True",
            "reason": "NewReplicaSetAvailable",
            "message": "ReplicaSet has successfully progressed.",
        },
    ]
    return status


def _our_crd(name: str) -> dict[str, Any] | None:
    """The CRD our chart installs under ``name`` (Certification, HealthEvent, ...), or None for another
    chart's: a stub of ours would carry a made-up kind (``Workloadrun``) and schema, and the real
    install after it would then fail on the immutable names."""
    import importlib

    from shared.chart import crds as chart_crds

    spec = next((t for t in chart_crds.TEMPLATES if importlib.import_module(t.module).RESOURCE.name == name), None)
    return None if spec is None else chart_crds.expected(spec)
