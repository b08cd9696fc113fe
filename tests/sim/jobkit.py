"""Helpers for part-2 tests: workloads created and read over HTTP with the official client.

``group_job`` builds an Indexed Job, completions = parallelism = group size, each pod pinned by
required node affinity on ``kubernetes.io/hostname`` and requesting all the node's GPUs; each of
its pods runs its command on its own node (a torchrun rendezvous joins them; an NCCL test does
not). ``run`` creates it, advances virtual time and returns the Job and the log of the pod with
index 0. ``mpijob`` and ``run_mpijob`` run an NCCL test across nodes as the MPI Operator does.
"""

from __future__ import annotations

from typing import Any

from shared.sim import SimServer

INDEX = "batch.kubernetes.io/job-completion-index"


def _on(nodes: list[str]) -> dict[str, Any]:
    """Required node affinity on the nodes' hostnames."""
    terms = [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": nodes}]}]
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}


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
    affinity = {"nodeAffinity": _on(nodes)}
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


def mpijob(
    name: str,
    nodes: list[str],
    *extra: str,
    env: dict[str, str] | None = None,
    binary: str = "all_reduce_perf",
    gpus: int = 8,
) -> dict[str, Any]:
    """An nccl-tests run across ``nodes`` as the MPI Operator runs one: a GPU-less launcher whose
    mpirun reaches one sshd worker per node (pinned there, kept apart) through the operator's
    hostfile, ``-N gpus`` ranks per worker, ``env`` exported to the ranks with ``-x``."""
    exported = [a for k, v in (env or {}).items() for a in ("-x", f"{k}={v}")]
    command = ["mpirun", "-N", str(gpus), "--allow-run-as-root", *exported]
    command += [f"/usr/local/bin/{binary}_mpi", "-b", "8", "-e", "8G", "-f", "2", "-g", "1", *extra]
    labels = {"sim-test/run": name}
    worker = {
        "metadata": {"labels": labels},
        "spec": {
            "affinity": {
                "nodeAffinity": _on(nodes),
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}
                    ]
                },
            },
            "containers": [
                {
                    "name": "worker",
                    "image": "nvcr.io/nvidia/pytorch:26.01-py3",
                    "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                }
            ],
        },
    }
    launcher = {
        "spec": {"containers": [{"name": "launcher", "image": "nvcr.io/nvidia/pytorch:26.01-py3", "command": command}]}
    }
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": {
            "slotsPerWorker": gpus,
            "launcherCreationPolicy": "WaitForWorkersReady",
            "runPolicy": {"backoffLimit": 0, "cleanPodPolicy": "Running"},
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "restartPolicy": "Never", "template": launcher},
                "Worker": {"replicas": len(nodes), "restartPolicy": "Never", "template": worker},
            },
        },
    }


def run_mpijob(
    sim: SimServer, api_client: Any, body: dict[str, Any], *, seconds: float = 600, namespace: str = "default"
) -> tuple[dict[str, Any], str]:
    """Create the MPIJob, run the cluster ``seconds`` of virtual time, return (MPIJob, launcher log)."""
    from kubernetes import client as k8s

    objects, core = k8s.CustomObjectsApi(api_client), k8s.CoreV1Api(api_client)
    objects.create_namespaced_custom_object("kubeflow.org", "v2beta1", namespace, "mpijobs", body)
    sim.advance(seconds)
    name = body["metadata"]["name"]
    found = dict(objects.get_namespaced_custom_object("kubeflow.org", "v2beta1", namespace, "mpijobs", name))
    selector = f"training.kubeflow.org/job-name={name},training.kubeflow.org/job-role=launcher"
    pods = core.list_namespaced_pod(namespace, label_selector=selector).items
    log = (
        core.read_namespaced_pod_log(pods[-1].metadata.name, namespace, _preload_content=False).data.decode()
        if pods
        else ""
    )
    return found, log


def mpijob_condition(obj: dict[str, Any], kind: str) -> str | None:
    return next(
        (str(c["status"]) for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), None
    )
