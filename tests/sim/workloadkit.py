"""Helpers for the controller tests: workload manifests, and reads through the official client.

The manifests are what a user applies (selector, template, nothing the server defaults), as
plain dicts so the same body serves the Python client and ``kubectl apply -f``. ``cluster``
prepares the per-test server as a small cluster with its kubelets (and controllers) running and
the clock paused, so a test moves time with ``sim.advance(seconds)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from shared.sim import SimServer

POD_START = 2.0
"""Virtual seconds from a pod's binding to Running (stages/workloads.yaml ``podStartSeconds``)."""


@pytest.fixture(name="cluster_nodes")
def cluster_nodes_fixture(sim: SimServer) -> Iterator[list[str]]:
    """``cluster_nodes``: three plain nodes, the clock paused, the kubelets and controllers
    running; import ``cluster_nodes_fixture`` into a test module to use it."""
    sim.vclock.set_speed(0)
    names = sim.add_nodes(3)
    sim.kubelet.start()
    try:
        yield names
    finally:
        sim.kubelet.stop()


def template(app: str, *, image: str = "nginx:1.27", command: list[str] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": image}
    if command:
        container["command"] = command
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [container]}}


def deployment(name: str, replicas: int = 3, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template(name), **spec},
    }


def daemonset(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": template(name), **spec},
    }


def statefulset(name: str, replicas: int = 3, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name),
            **spec,
        },
    }


def manifest(tmp_path: Path, *objects: dict[str, Any]) -> Path:
    """A file ``kubectl apply -f`` reads: one YAML document (written as JSON) per object."""
    path = tmp_path / "manifest.yaml"
    path.write_text("\n---\n".join(json.dumps(o) for o in objects) + "\n")
    return path


def pods(api: Any, selector: str, namespace: str = "default") -> list[Any]:
    found = k8s.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=selector).items
    return sorted(found, key=lambda p: p.metadata.name)


def condition(obj: Any, kind: str) -> Any:
    return next((c for c in obj.status.conditions or [] if c.type == kind), None)


def ready(pod: Any) -> bool:
    found = condition(pod, "Ready")
    return pod.status.phase == "Running" and found is not None and found.status == "True"


def events(api: Any, *, kind: str, name: str, namespace: str = "default") -> list[Any]:
    selector = f"involvedObject.kind={kind},involvedObject.name={name}"
    found = k8s.CoreV1Api(api).list_namespaced_event(namespace, field_selector=selector).items
    return sorted(found, key=lambda e: e.metadata.name)
