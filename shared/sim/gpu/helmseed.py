"""``seed``: make the cluster look as if a recipe's components had been installed with Helm 3.

For each component of the recipe, in deployment order: its namespace; a Helm 3 release Secret
``sh.helm.release.v1.<name>.v1`` (type ``helm.sh/release.v1``, labels name/owner/status/version)
whose ``data.release`` is what Helm stores — base64 of gzip of the release JSON (chart metadata
name and version, the rendered manifest) — base64-encoded once more by the Secret as every Secret
value is; the workloads its healthCheckAsserts name (Deployments, DaemonSets with one pod per
node, StatefulSets) with ready status; pods labelled so every pod assert selects some; and its
CRDs, Established. The GPU operator also gets ``nvidia-driver-daemonset`` with the driver image,
``nvidia-dcgm-exporter`` unless its values turn the exporter off, and, unless they turn standalone
DCGM off, the ``nvidia-dcgm`` hostengine Service. The GPU
nodes load the driver the GPU operator's values pin (``driver.version``), or the one ``seed`` is
told to install instead, so a cluster that does not run its recipe's driver is made on purpose.

Breaks (``--break COMPONENT=MODE``): ``crashloop`` (one pod Running with its container waiting in
CrashLoopBackOff, its workload one replica short), ``old-chart`` (the release records an older
chart version), ``missing-crd`` (its first CRD is not installed), ``unavailable`` (its first
workload's pods Pending, the workload unavailable). Seeded pods are static: the kubelet leaves them be.
How each object is written is :mod:`.seeder`'s.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from typing import TYPE_CHECKING, Any

from shared import yamlio
from shared.recipe import models
from shared.sim.apiserver import apierrors, patchtypes
from shared.sim.gpu import fabric, gpunodes, seeder

if TYPE_CHECKING:
    from shared.sim.server import SimServer

BREAKS = ("crashloop", "old-chart", "missing-crd", "unavailable")
REGISTRY = "registry.sim.local"
DRIVER_IMAGE = "nvcr.io/nvidia/driver"
DCGM_EXPORTER_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04"


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


Wanted = tuple[str, str, str, dict[str, str], int]
"""A workload to install: kind, name, namespace, its own labels, replicas."""


def _wanted(comp: models.ComponentRef, ns: str) -> tuple[list[Wanted], list[tuple[str, dict[str, str]]]]:
    """The workloads the component's asserts name (one Deployment when none), one more per pod
    assert beyond them, and the pod asserts' (namespace, selector)."""
    asserts = comp.healthCheckAsserts
    # A workload asserted by selector gets a name of its own (the selector's first value), so two
    # DaemonSets of one component (device plugin, validator) do not collapse into one object.
    wanted: list[Wanted] = [
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
    return wanted, selectors


def _workload(
    into: seeder.Seeder, wanted: Wanted, labels: dict[str, str], image: str, broken: str | None
) -> dict[str, Any]:
    """One workload, its pods (the first one broken as asked) and its status; what Helm's manifest holds."""
    kind, name, wns, _, replicas = wanted
    plural = f"{kind.lower()}s"
    # Seeded workloads are installed as they are: their controllers must leave them alone.
    into.sim.kubelet.static_workloads.add((plural, wns, name))
    obj = into.ensure("apps", plural, wns, seeder.workload_object(kind, name, wns, labels, image, replicas))
    nodes = (
        into.nodes
        if kind == "DaemonSet"
        else [into.nodes[n % len(into.nodes)] if into.nodes else "" for n in range(replicas)]
    )
    for n, node in enumerate(nodes):
        pod_name = f"{name}-{n}" if kind == "StatefulSet" else f"{name}-{seeder.suffix(name, node, str(n))}"
        pod_mode = broken if broken == "unavailable" or n == 0 else None
        into.pod(obj, pod_name, "" if pod_mode == "unavailable" else node, labels, image, pod_mode)
    ready = 0 if broken == "unavailable" else len(nodes) - (1 if broken == "crashloop" else 0)
    into.set_status("apps", plural, wns, name, seeder.workload_status(kind, len(nodes), ready))
    return {k: v for k, v in obj.items() if k != "status"}


def _driver_daemonset(into: seeder.Seeder, ns: str, base: dict[str, str], driver: str) -> dict[str, Any]:
    """The GPU operator's driver DaemonSet, one ready pod per node, running ``driver``."""
    return _operand_daemonset(into, ns, base, "nvidia-driver-daemonset", f"{DRIVER_IMAGE}:{driver}-ubuntu24.04")


def _operand_daemonset(into: seeder.Seeder, ns: str, base: dict[str, str], name: str, image: str) -> dict[str, Any]:
    """A DaemonSet the GPU operator's ClusterPolicy creates (driver, DCGM exporter), one ready pod per node."""
    labels = {**base, "app": name}
    into.sim.kubelet.static_workloads.add(("daemonsets", ns, name))
    obj = into.ensure("apps", "daemonsets", ns, seeder.workload_object("DaemonSet", name, ns, labels, image, 1))
    for node in into.nodes:
        into.pod(obj, f"{name}-{seeder.suffix(node)}", node, labels, image, None)
    into.set_status(
        "apps", "daemonsets", ns, name, seeder.workload_status("DaemonSet", len(into.nodes), len(into.nodes))
    )
    return {k: v for k, v in obj.items() if k != "status"}


def dcgm_service(sim: SimServer, namespace: str = "gpu-operator") -> None:
    """The GPU Operator's ``nvidia-dcgm`` Service (and its namespace) on a cluster seeded without
    the chart: what ``dcgmi diag --host nvidia-dcgm.gpu-operator.svc:5555`` needs to resolve."""
    into = seeder.Seeder(sim)
    into.namespace(namespace)
    _dcgm_service(into, namespace)


def _dcgm_service(into: seeder.Seeder, ns: str) -> None:
    """The standalone hostengine's Service that the operator's ClusterPolicy creates (not Helm):
    ``dcgmi diag --host nvidia-dcgm.<ns>.svc:5555`` reaches each node's own hostengine through it
    (``NVIDIA/gpu-operator:assets/state-dcgm/0500_service.yaml``, internalTrafficPolicy Local)."""
    into.ensure(
        "",
        "services",
        ns,
        {
            "metadata": {"name": "nvidia-dcgm", "labels": {"app": "nvidia-dcgm"}},
            "spec": {
                "type": "ClusterIP",
                "internalTrafficPolicy": "Local",
                "selector": {"app": "nvidia-dcgm"},
                "ports": [{"name": "dcgm", "port": 5555, "protocol": "TCP"}],
            },
        },
    )


def _install(
    into: seeder.Seeder, comp: models.ComponentRef, mode: str | None, driver: str, config: dict[str, Any]
) -> dict[str, Any]:
    ns = comp.namespace or "default"
    chart = (comp.chart or comp.name).rsplit("/", 1)[-1]
    pinned = comp.version or "0.0.0"
    version = older(pinned) if mode == "old-chart" else pinned
    asserts = comp.healthCheckAsserts
    into.namespace(ns)
    base = {
        "app.kubernetes.io/instance": comp.name,
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/name": comp.name,
        "helm.sh/chart": f"{chart}-{version}",
    }
    wanted, selectors = _wanted(comp, ns)
    manifest = []
    for i, workload in enumerate(wanted):
        into.namespace(workload[2])
        labels = {**base, **workload[3]}
        if selectors:
            labels.update(selectors[i % len(selectors)][1])
        broken = mode if i == 0 and mode in ("crashloop", "unavailable") else None
        manifest.append(_workload(into, workload, labels, f"{REGISTRY}/{chart}:{version}", broken))
    if chart == "gpu-operator" or comp.name == "gpu-operator":
        manifest.append(_driver_daemonset(into, ns, base, driver))
        if (config.get("dcgmExporter") or {}).get("enabled", True) is not False:
            manifest.append(_operand_daemonset(into, ns, base, "nvidia-dcgm-exporter", DCGM_EXPORTER_IMAGE))
        if (config.get("dcgm") or {}).get("enabled", True) is not False:
            _dcgm_service(into, ns)
    crds = list(asserts.crds if asserts else [])
    for n, crd in enumerate(crds):
        if not (mode == "missing-crd" and n == 0):
            into.crd(crd)
    _release_secret(into, comp, ns, chart=chart, version=version, manifest=manifest, config=config)
    return {"name": comp.name, "namespace": ns, "chart": chart, "version": version, "break": mode}


def _release_secret(
    into: seeder.Seeder,
    comp: models.ComponentRef,
    ns: str,
    *,
    chart: str,
    version: str,
    manifest: list[dict[str, Any]],
    config: dict[str, Any],
) -> None:
    """The Helm 3 release Secret ``sh.helm.release.v1.<name>.v1``, revision 1, deployed."""
    release = {
        "name": comp.name,
        "namespace": ns,
        "version": 1,
        "info": {
            "first_deployed": into.now,
            "last_deployed": into.now,
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
        "config": config,
        "manifest": yamlio.dumps_all(manifest),
        "hooks": [],
    }
    into.ensure(
        "",
        "secrets",
        ns,
        {
            "metadata": {
                "name": f"sh.helm.release.v1.{comp.name}.v1",
                "labels": {"name": comp.name, "owner": "helm", "status": "deployed", "version": "1"},
            },
            "type": "helm.sh/release.v1",
            "data": {"release": base64.b64encode(release_data(release).encode()).decode()},
        },
    )


def _driver_to_install(
    sim: SimServer, result: models.RecipeResult, values: dict[str, dict[str, Any]], driver: str | None
) -> str:
    """``driver`` when given; else what the GPU Operator's values pin (``driver.version``, unless
    ``driver.enabled`` is false); else what the nodes run."""
    if driver:
        return driver
    gpu_operator = values.get("gpu-operator")
    if gpu_operator is None:
        ref = result.component("gpu-operator")
        gpu_operator = (ref.overrides or {}) if ref is not None else {}
    pinned = gpu_operator.get("driver") if isinstance(gpu_operator, dict) else None
    if isinstance(pinned, dict) and pinned.get("enabled", True) is not False and pinned.get("version"):
        return str(pinned["version"])
    return next(iter(sim.fabric.nodes.values())).driver if sim.fabric.nodes else fabric.DEFAULT_DRIVER


def _install_driver(sim: SimServer, version: str) -> list[str]:
    """Every GPU node loads ``version``: its feature-discovery labels and the kernel module's banner
    (the driver DaemonSet the seed writes runs the same version)."""
    if not all(part.isdigit() for part in version.split(".")):
        raise ValueError(f"driver version must look like 570.158.01, got {version!r}")
    nodes_r = sim.table.by_group_resource("", "nodes")
    assert nodes_r is not None
    changed = []
    for name, hw in sorted(sim.fabric.nodes.items()):
        if hw.driver == version:
            continue
        hw.driver = version
        sim.api.patch(nodes_r, None, name, patchtypes.MERGE, {"metadata": {"labels": gpunodes.driver_labels(version)}})
        sim.noderoot.driver_loaded(hw)
        changed.append(name)
    return changed


def seed(
    sim: SimServer,
    recipe: dict[str, Any],
    *,
    breaks: dict[str, str],
    kernels: dict[str, str],
    values: dict[str, dict[str, Any]] | None = None,
    driver: str | None = None,
) -> dict[str, Any]:
    """Install ``recipe`` (a RecipeResult document) as Helm would have; ValueError on bad input.

    ``values`` are the merged values of each component (``shared.sim.recipevalues``), recorded as
    its release's config; the GPU nodes get the driver they pin, or ``driver`` when given (a cluster
    that does not run what its recipe pins)."""
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
    given = values or {}
    installing = _driver_to_install(sim, result, given, driver)
    _install_driver(sim, installing)
    into = seeder.Seeder(sim)
    order = result.deploymentOrder or [c.name for c in result.componentRefs]
    by_name = {c.name: c for c in result.componentRefs}
    installed = [
        _install(into, by_name[n], breaks.get(n), installing, given.get(n, by_name[n].overrides or {}))
        for n in order
        if n in by_name
    ]
    for node, version in kernels.items():
        found = sim.store.get(("", "nodes"), "", node)
        assert found is not None
        status = found.object().get("status") or {}
        status.setdefault("nodeInfo", {})["kernelVersion"] = version
        try:
            sim.api.patch(into.r("", "nodes"), None, node, patchtypes.MERGE, {"status": status}, sub="status")
        except apierrors.ApiError as exc:
            raise ValueError(f"--kernel {node}: {exc}") from None
    return {"releases": installed, "kernels": kernels, "driver": installing}


def set_pod_images(sim: SimServer, pods: Any, ns: str, name: str, containers: list[dict[str, str]]) -> None:
    """A DaemonSet rollout, simplified: the pods get the new images in place."""
    try:
        sim.api.patch(pods, ns, name, patchtypes.STRATEGIC, {"spec": {"containers": containers}})
    except apierrors.ApiError:
        return
