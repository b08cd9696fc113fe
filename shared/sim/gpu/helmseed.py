"""``seed``: make the cluster look as if a recipe's components had been installed with Helm 3.

For each component of the recipe, in deployment order: its namespace; a Helm 3 release Secret
``sh.helm.release.v1.<name>.v1`` (type ``helm.sh/release.v1``, labels name/owner/status/version)
whose ``data.release`` is what Helm stores — base64 of gzip of the release JSON (chart metadata
name and version, the rendered manifest) — base64-encoded once more by the Secret as every Secret
value is; the workloads its healthCheckAsserts name (Deployments, DaemonSets with one pod per
node, StatefulSets) with ready status; pods labelled so every pod assert selects some; and its
CRDs, Established. The GPU operator also gets ``nvidia-driver-daemonset`` with the driver image.

Breaks (``--break COMPONENT=MODE``): ``crashloop`` (one pod Running with its container waiting in
CrashLoopBackOff, its workload one replica short), ``old-chart`` (the release records an older
chart version), ``missing-crd`` (its first CRD is not installed), ``unavailable`` (its first
workload's pods Pending, the workload unavailable). Seeded pods are static: the kubelet leaves them be.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from shared import yamlio
from shared.recipe import models
from shared.sim.apiserver import api as api_mod
from shared.sim.apiserver import apierrors
from shared.sim.gpu import podstatus

if TYPE_CHECKING:
    from shared.sim.server import SimServer

BREAKS = ("crashloop", "old-chart", "missing-crd", "unavailable")
REGISTRY = "registry.sim.local"
DRIVER_IMAGE = "nvcr.io/nvidia/driver"


def older(version: str) -> str:
    """A version below ``version`` (previous minor, or previous major): ``v1.17.2`` → ``v1.16.0``."""
    match = re.match(r"^(v?)(\d+)\.(\d+)(?:\.(\d+))?", version)
    if not match:
        return "0.0.1"
    prefix, major, minor = match[1], int(match[2]), int(match[3])
    if minor > 0:
        return f"{prefix}{major}.{minor - 1}.0"
    return f"{prefix}{max(major - 1, 0)}.0.0" if major > 0 else f"{prefix}0.0.0"


def release_data(release: dict[str, Any]) -> str:
    """Helm 3's storage encoding of a release: base64(gzip(JSON))."""
    return base64.b64encode(gzip.compress(json.dumps(release).encode(), mtime=0)).decode()


def decode_release(secret_value: str) -> dict[str, Any]:
    """The inverse, from a Secret's ``data.release`` (one more base64 layer, the Secret's own)."""
    helm = base64.b64decode(secret_value)
    value: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(helm)))
    return value


class _Seeder:
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
            api_mod.JSON_PATCH,
            [{"op": "add", "path": "/status", "value": status}],
            sub="status",
        )

    def namespace(self, name: str) -> None:
        if self.sim.store.get(("", "namespaces"), "", name) is None:
            self.sim.api.create(self.r("", "namespaces"), None, {"metadata": {"name": name}})

    def crd(self, name: str) -> None:
        """A stub CRD, unless one is there: Helm installs a chart's ``crds/`` only when absent and
        never replaces them (replacing would also delete every custom resource of the kind)."""
        if self.sim.store.get(("apiextensions.k8s.io", "customresourcedefinitions"), "", name) is not None:
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
        host, ip = self.sim.kubelet._ips(node, uid) if node else ("", "")
        if mode == "crashloop":
            status = podstatus.crashloop(pod, host_ip=host, pod_ip=ip, now=self.now)
        elif mode == "unavailable":
            status = podstatus.unschedulable(
                pod,
                now=self.now,
                message=(
                    f"0/{len(self.nodes)} nodes are available: {len(self.nodes)} Insufficient cpu. preemption: "
                    f"0/{len(self.nodes)} nodes are available: {len(self.nodes)} No preemption victims found for "
                    "incoming pod."
                ),
            )
        else:
            status = podstatus.running(pod, host_ip=host, pod_ip=ip, now=self.now)
        self.set_status("", "pods", ns, name, status)


def _suffix(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:5]


def _workload_object(
    kind: str, name: str, ns: str, labels: dict[str, str], image: str, replicas: int
) -> dict[str, Any]:
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


def _workload_status(kind: str, desired: int, ready: int) -> dict[str, Any]:
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


def _install(seeder: _Seeder, comp: models.ComponentRef, mode: str | None, driver: str) -> dict[str, Any]:
    ns = comp.namespace or "default"
    chart = (comp.chart or comp.name).rsplit("/", 1)[-1]
    pinned = comp.version or "0.0.0"
    version = older(pinned) if mode == "old-chart" else pinned
    asserts = comp.healthCheckAsserts
    seeder.namespace(ns)
    base = {
        "app.kubernetes.io/instance": comp.name,
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/name": comp.name,
        "helm.sh/chart": f"{chart}-{version}",
    }
    # A workload asserted by selector gets a name of its own (the selector's first value), so two
    # DaemonSets of one component (device plugin, validator) do not collapse into one object.
    wanted = [
        (
            w.kind.value,
            w.name or next(iter((w.selector or {}).values()), comp.name),
            w.namespace or ns,
            dict(w.selector or {}),
            max(1, w.minReady or 1),
        )
        for w in (asserts.workloads if asserts else [])
    ] or [("Deployment", comp.name, ns, {}, 1)]
    selectors = [(p.namespace or ns, dict(p.selector or {})) for p in (asserts.pods if asserts else [])]
    for j in range(len(wanted), len(selectors)):
        wanted.append(("Deployment", f"{comp.name}-{j}", selectors[j][0], {}, 1))
    manifest = []
    for i, (kind, name, wns, own_labels, replicas) in enumerate(wanted):
        seeder.namespace(wns)
        labels = {**base, **own_labels}
        if selectors:
            labels.update(selectors[i % len(selectors)][1])
        image = f"{REGISTRY}/{chart}:{version}"
        # Seeded workloads are installed as they are: their controllers must leave them alone.
        seeder.sim.kubelet.static_workloads.add((f"{kind.lower()}s", wns, name))
        obj = seeder.ensure("apps", f"{kind.lower()}s", wns, _workload_object(kind, name, wns, labels, image, replicas))
        manifest.append({k: v for k, v in obj.items() if k != "status"})
        nodes = (
            seeder.nodes
            if kind == "DaemonSet"
            else [seeder.nodes[n % len(seeder.nodes)] if seeder.nodes else "" for n in range(replicas)]
        )
        broken = mode if i == 0 and mode in ("crashloop", "unavailable") else None
        for n, node in enumerate(nodes):
            pod_name = f"{name}-{n}" if kind == "StatefulSet" else f"{name}-{_suffix(name, node, str(n))}"
            pod_mode = broken if broken == "unavailable" or n == 0 else None
            seeder.pod(obj, pod_name, "" if pod_mode == "unavailable" else node, labels, image, pod_mode)
        ready = 0 if broken == "unavailable" else len(nodes) - (1 if broken == "crashloop" else 0)
        seeder.set_status("apps", f"{kind.lower()}s", wns, name, _workload_status(kind, len(nodes), ready))
    if chart == "gpu-operator" or comp.name == "gpu-operator":
        image = f"{DRIVER_IMAGE}:{driver}-ubuntu24.04"
        labels = {**base, "app": "nvidia-driver-daemonset"}
        seeder.sim.kubelet.static_workloads.add(("daemonsets", ns, "nvidia-driver-daemonset"))
        obj = seeder.ensure(
            "apps", "daemonsets", ns, _workload_object("DaemonSet", "nvidia-driver-daemonset", ns, labels, image, 1)
        )
        manifest.append({k: v for k, v in obj.items() if k != "status"})
        for node in seeder.nodes:
            seeder.pod(obj, f"nvidia-driver-daemonset-{_suffix(node)}", node, labels, image, None)
        seeder.set_status(
            "apps",
            "daemonsets",
            ns,
            "nvidia-driver-daemonset",
            _workload_status("DaemonSet", len(seeder.nodes), len(seeder.nodes)),
        )
    crds = list(asserts.crds if asserts else [])
    for n, crd in enumerate(crds):
        if not (mode == "missing-crd" and n == 0):
            seeder.crd(crd)
    release = {
        "name": comp.name,
        "namespace": ns,
        "version": 1,
        "info": {
            "first_deployed": seeder.now,
            "last_deployed": seeder.now,
            "deleted": "",
            "description": "Install complete",
            "status": "deployed",
        },
        "chart": {
            "metadata": {
                "apiVersion": "v2",
                "name": chart,
                "version": version,
                "appVersion": version,
                "type": "application",
            },
            "templates": [],
            "values": {},
        },
        "config": comp.overrides or {},
        "manifest": yamlio.dumps_all(manifest),
        "hooks": [],
    }
    secret_name = f"sh.helm.release.v1.{comp.name}.v1"
    seeder.ensure(
        "",
        "secrets",
        ns,
        {
            "metadata": {
                "name": secret_name,
                "labels": {"name": comp.name, "owner": "helm", "status": "deployed", "version": "1"},
            },
            "type": "helm.sh/release.v1",
            "data": {"release": base64.b64encode(release_data(release).encode()).decode()},
        },
    )
    return {"name": comp.name, "namespace": ns, "chart": chart, "version": version, "break": mode}


def seed(sim: SimServer, recipe: dict[str, Any], *, breaks: dict[str, str], kernels: dict[str, str]) -> dict[str, Any]:
    """Install ``recipe`` (a RecipeResult document) as Helm would have; ValueError on bad input."""
    try:
        result = models.RecipeResult.model_validate(recipe)
    except Exception as exc:
        raise ValueError(f"not a resolved recipe (RecipeResult): {exc}") from None
    names = {c.name for c in result.componentRefs}
    for component, mode in breaks.items():
        if component not in names:
            raise ValueError(f"--break {component}={mode}: the recipe has no component {component!r}")
        if mode not in BREAKS:
            raise ValueError(f"--break {component}={mode}: mode must be one of {', '.join(BREAKS)}")
    for node in kernels:
        if sim.store.get(("", "nodes"), "", node) is None:
            raise ValueError(f"--kernel {node}=…: no node {node!r}")
    seeder = _Seeder(sim)
    driver = next(iter(sim.fabric.nodes.values())).driver if sim.fabric.nodes else "570.158.01"
    order = result.deploymentOrder or [c.name for c in result.componentRefs]
    by_name = {c.name: c for c in result.componentRefs}
    installed = [_install(seeder, by_name[n], breaks.get(n), driver) for n in order if n in by_name]
    for node, version in kernels.items():
        found = sim.store.get(("", "nodes"), "", node)
        assert found is not None
        status = found.object().get("status") or {}
        status.setdefault("nodeInfo", {})["kernelVersion"] = version
        try:
            sim.api.patch(seeder.r("", "nodes"), None, node, api_mod.MERGE, {"status": status}, sub="status")
        except apierrors.ApiError as exc:
            raise ValueError(f"--kernel {node}: {exc}") from None
    return {"releases": installed, "kernels": kernels}


def set_pod_images(sim: SimServer, pods: Any, ns: str, name: str, containers: list[dict[str, str]]) -> None:
    """A DaemonSet rollout, simplified: the pods get the new images in place."""
    try:
        sim.api.patch(pods, ns, name, api_mod.STRATEGIC, {"spec": {"containers": containers}})
    except apierrors.ApiError:
        return
