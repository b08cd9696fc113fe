"""Measure a live cluster into a Snapshot, reading only what the API server already knows.

No agent runs on the nodes: the kubelet's ``nodeInfo``, GPU feature discovery's labels, Helm's
release Secrets, workload specs and CRDs say what a platform team needs to hold the cluster to its
recipe. Reads are paged raw JSON (``shared.kube.rest``), so a thousand nodes take well under a
second to fetch and parse. Workload images come from Deployments, DaemonSets and StatefulSets, never
from pods, whose names carry generated suffixes.
"""

from __future__ import annotations

import logging
from typing import Any

from shared import __version__
from shared.kube import rest
from shared.kube.api import KubeApi
from shared.recipe.snapshot import MEASUREMENT_TYPES, Measurement, Snapshot, Subtype
from shared.snapshot import helm, nodes

logger = logging.getLogger(__name__)

WORKLOADS = (
    ("apps", "v1", "deployments", "Deployment"),
    ("apps", "v1", "daemonsets", "DaemonSet"),
    ("apps", "v1", "statefulsets", "StatefulSet"),
)
_DRIVER_DAEMONSET = "nvidia-driver"


def _images(kind: str, workload: dict[str, Any]) -> dict[str, str]:
    meta = workload.get("metadata") or {}
    spec = ((workload.get("spec") or {}).get("template") or {}).get("spec") or {}
    prefix = f"{meta.get('namespace')}/{kind}/{meta.get('name')}"
    out = {}
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            out[f"{prefix}/{container.get('name')}"] = str(container.get("image", ""))
    return out


def _crd_state(crd: dict[str, Any]) -> dict[str, str]:
    name = (crd.get("metadata") or {}).get("name", "")
    conditions = (crd.get("status") or {}).get("conditions") or []
    established = any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)
    served = [v.get("name", "") for v in (crd.get("spec") or {}).get("versions") or [] if v.get("served", True)]
    return {name: "established" if established else "not-established", f"{name}.versions": ",".join(served)}


def measure(
    *,
    version: dict[str, Any],
    node_list: list[dict[str, Any]],
    secrets: list[dict[str, Any]],
    workloads: dict[str, list[dict[str, Any]]],
    crds: list[dict[str, Any]],
) -> Snapshot:
    """The snapshot of already-fetched objects (pure, so it is tested without a cluster)."""
    data: dict[tuple[str, str], dict[str, str]] = {
        ("K8s", "server"): {
            "version": str(version.get("gitVersion", "")),
            "platform": str(version.get("platform", "")),
        },
    }
    releases: dict[str, str] = {}
    for release in helm.current(secrets):
        key = f"{release.namespace}/{release.name}"
        releases.update(
            {
                f"{key}.chart": release.chart,
                f"{key}.version": release.version,
                f"{key}.app-version": release.app_version,
                f"{key}.status": release.status,
            }
        )
    data[("K8s", "helm")] = releases
    images: dict[str, str] = {}
    driver_images: list[str] = []
    for kind, items in sorted(workloads.items()):
        for workload in items:
            found = _images(kind, workload)
            images.update(found)
            if kind == "DaemonSet" and _DRIVER_DAEMONSET in str((workload.get("metadata") or {}).get("name", "")):
                driver_images.extend(found.values())
    data[("K8s", "image")] = images
    crd_data: dict[str, str] = {}
    for crd in crds:
        crd_data.update(_crd_state(crd))
    data[("K8s", "crd")] = crd_data
    pools, aggregates, topology = nodes.measure(node_list)
    data[("K8s", "nodepool")] = pools
    data.update(aggregates)
    if driver_images:
        data[("GPU", "driver")] = {"daemonset.image": nodes.MULTI.join(sorted(set(driver_images)))}
    for subtype, values in topology.items():
        data[("NodeTopology", subtype)] = values
    return _assemble(data)


def _assemble(data: dict[tuple[str, str], dict[str, str]]) -> Snapshot:
    measurements = []
    for kind in MEASUREMENT_TYPES:
        subtypes = [
            Subtype(subtype=sub, data=dict(sorted(values.items())))
            for (k, sub), values in sorted(data.items())
            if k == kind and values
        ]
        if subtypes:
            measurements.append(Measurement(type=kind, subtypes=subtypes))
    return Snapshot(metadata={"version": __version__}, measurements=measurements)


def collect(api: KubeApi) -> Snapshot:
    """Read the cluster behind ``api`` and measure it.

    The collector is paused meanwhile: the Nodes alone are millions of objects at 10,000 nodes, all
    alive until measured, and measuring them makes no reference cycles for it to find."""
    with rest.collector_paused():
        workloads = {
            kind: rest.list_items(api, rest.group_path(group, ver, plural)) for group, ver, plural, kind in WORKLOADS
        }
        snapshot = measure(
            version=rest.get(api, "/version"),
            node_list=rest.list_items(api, rest.core_path("nodes")),
            secrets=rest.list_items(api, rest.core_path("secrets"), label_selector=helm.LABEL_SELECTOR),
            workloads=workloads,
            crds=rest.list_items(api, rest.group_path("apiextensions.k8s.io", "v1", "customresourcedefinitions")),
        )
    logger.debug("cluster measured", extra={"measurements": len(snapshot.measurements)})
    return snapshot
