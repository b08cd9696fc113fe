"""Helpers for part-2 tests: Jobs in the workload contract's shape, created and read over HTTP.

``group_job`` builds what the certification engine renders (docs/formats.md): an Indexed Job,
completions = parallelism = group size, each pod pinned by required node affinity on
``kubernetes.io/hostname``, requesting all the node's GPUs. ``run`` creates it with the official
client, advances virtual time and returns the Job and the log of the pod with index 0.
"""

from __future__ import annotations

from typing import Any

from shared.sim import SimServer

INDEX = "batch.kubernetes.io/job-completion-index"


def group_job(
    name: str,
    nodes: list[str],
    command: list[str],
    *,
    gpus: int = 8,
    env: dict[str, str] | None = None,
    backoff_limit: int = 0,
    image: str = "nvcr.io/nvidia/pytorch:26.01-py3",
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "main",
        "image": image,
        "command": command,
        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
    }
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": nodes}]}
                ]
            }
        }
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "completionMode": "Indexed",
            "completions": len(nodes),
            "parallelism": len(nodes),
            "backoffLimit": backoff_limit,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "affinity": affinity,
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                    "containers": [container],
                }
            },
        },
    }


def allreduce(
    name: str,
    nodes: list[str],
    *extra: str,
    env: dict[str, str] | None = None,
    binary: str = "all_reduce_perf",
    gpus: int = 8,
) -> dict[str, Any]:
    return group_job(name, nodes, [binary, "-b", "8", "-e", "8G", "-f", "2", "-g", "1", *extra], env=env, gpus=gpus)


def condition(obj: Any, kind: str) -> str | None:
    for c in (obj.status.conditions or []) if obj.status else []:
        if c.type == kind:
            return str(c.status)
    return None


def run(
    sim: SimServer, api_client: Any, job: dict[str, Any], *, seconds: float = 600, namespace: str = "default"
) -> tuple[Any, str]:
    """Create ``job``, run the cluster ``seconds`` of virtual time, return (Job, index-0 pod log)."""
    from kubernetes import client as k8s

    batch, core = k8s.BatchV1Api(api_client), k8s.CoreV1Api(api_client)
    batch.create_namespaced_job(namespace, job)
    sim.advance(seconds)
    name = job["metadata"]["name"]
    found = batch.read_namespaced_job(name, namespace)
    pods = core.list_namespaced_pod(namespace, label_selector=f"batch.kubernetes.io/job-name={name}").items
    first = [p for p in pods if (p.metadata.annotations or {}).get(INDEX) == "0"]
    # _preload_content=False: the client otherwise turns a log that is valid JSON into a Python repr.
    log = (
        core.read_namespaced_pod_log(first[-1].metadata.name, namespace, _preload_content=False).data.decode()
        if first
        else ""
    )
    return found, log


def pods_of(api_client: Any, job: str, namespace: str = "default") -> list[Any]:
    from kubernetes import client as k8s

    return list(
        k8s.CoreV1Api(api_client)
        .list_namespaced_pod(namespace, label_selector=f"batch.kubernetes.io/job-name={job}")
        .items
    )
