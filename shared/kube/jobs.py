"""batch/v1 Jobs as our workloads use them: built Indexed and pinned to named nodes, deleted with
their pods, their final state, and the log of their first pod.

The documents built here are plain data for ``rest.create``; what runs in the pod (image, command,
GPUs, tolerations) and how the outcome is judged belong to the package that runs the Job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shared.kube import podlogs, rest
from shared.kube.api import KubeApi

HOSTNAME = "kubernetes.io/hostname"
"""The well-known node label a pod is pinned by."""
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
"""Set by the Job controller on every pod of a Job."""
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
"""Set by the Job controller on every pod of an Indexed Job: the pod's completion index."""


def node_affinity(names: Sequence[str]) -> dict[str, Any]:
    """Required node affinity on the named nodes' hostnames: a pod so bound runs on one of them only."""
    terms = [{"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": list(names)}]}]
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}


def placement(names: Sequence[str]) -> dict[str, Any]:
    """The pod spec fields that pin a pod to the named nodes: a nodeSelector for one node, required
    node affinity for several (each pod of the Job then lands on one of them)."""
    if len(names) == 1:
        return {"nodeSelector": {HOSTNAME: names[0]}}
    return {"affinity": {"nodeAffinity": node_affinity(names)}}


def indexed(*, metadata: dict[str, Any], pod: dict[str, Any], pods: int, deadline_seconds: int) -> dict[str, Any]:
    """An Indexed Job of ``pods`` pods, all at once, never retried (``backoffLimit: 0``: a failed run
    is a result) and stopped after ``deadline_seconds``; its pods carry the Job's labels
    (``metadata["labels"]``, the same mapping)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": pods,
            "backoffLimit": 0,
            "activeDeadlineSeconds": deadline_seconds,
            "template": {"metadata": {"labels": metadata["labels"]}, "spec": pod},
        },
    }


def delete(api: KubeApi, path: str, *, propagation: str = "Background", what: str | None = None) -> bool:
    """DELETE ``path``; True when it existed (see ``rest.delete``)."""
    return rest.delete(api, path, propagation=propagation, what=what)


def status_of(job: dict[str, Any]) -> str | None:
    """``Complete`` or ``Failed`` once the Job controller has decided, else None."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("status") == "True" and condition.get("type") in ("Complete", "Failed"):
            return str(condition["type"])
    return None


def first_pod_log(api: KubeApi, namespace: str, job: str) -> str:
    """The log of the Job's pod with completion index 0 (the last listed, should there be several),
    or "" while there is none."""
    pods = rest.list_items(api, rest.core_path("pods", namespace), label_selector=f"{JOB_NAME_LABEL}={job}")
    first = [p for p in pods if (p["metadata"].get("annotations") or {}).get(INDEX_ANNOTATION) == "0"]
    return podlogs.read(api, namespace, first[-1]["metadata"]["name"]) if first else ""
