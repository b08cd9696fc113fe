"""Jobs as our workloads build and read them: pinned to named nodes, Indexed, the first pod's log.

Covers: one node is pinned by a nodeSelector, several by required node affinity on their hostnames
(both the scheduler's meaning of ``kubernetes.io/hostname``, kubernetes.io/docs "Assigning Pods to
Nodes"); an Indexed Job runs its pods at once, never retried, and its pods carry its labels; on the
simulated cluster the log read is that of the pod with completion index 0 (the Job controller's
``batch.kubernetes.io/job-completion-index`` annotation, pkg/controller/job/indexed_job_utils.go),
not another pod's, and "" before any pod exists.
"""

from __future__ import annotations

from typing import Any

from shared.kube import jobs, podlogs, rest
from shared.sim import SimServer


def test_one_node_is_pinned_by_a_node_selector_and_several_by_hostname_affinity() -> None:
    assert jobs.placement(["n1"]) == {"nodeSelector": {"kubernetes.io/hostname": "n1"}}
    several = jobs.placement(("n1", "n2"))
    terms = several["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1", "n2"]}]}
    ]
    assert "nodeSelector" not in several


def test_an_indexed_job_runs_every_pod_at_once_never_retried_and_its_pods_carry_its_labels() -> None:
    metadata = {"name": "j", "namespace": "ns", "labels": {"a": "b"}}
    job = jobs.indexed(metadata=metadata, pod={"containers": []}, pods=3, deadline_seconds=60)
    spec = job["spec"]
    assert (job["apiVersion"], job["kind"], job["metadata"]) == ("batch/v1", "Job", metadata)
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 3, 3)
    assert (spec["backoffLimit"], spec["activeDeadlineSeconds"]) == (0, 60)
    assert spec["template"] == {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}}


def test_the_log_read_is_the_first_pods_and_empty_before_any_pod(gpu_sim: SimServer, api_client: Any) -> None:
    assert jobs.first_pod_log(api_client, "default", "nccl") == ""
    names = gpu_sim.add_gpu_nodes(2, racks=1)
    container = {"name": "main", "image": "nccl-tests", "command": ["all_reduce_perf", "-b", "8", "-e", "1G"]}
    pod = {"restartPolicy": "Never", "containers": [container], **jobs.placement(names)}
    job = jobs.indexed(
        metadata={"name": "nccl", "namespace": "default", "labels": {"app": "nccl"}},
        pod=pod,
        pods=2,
        deadline_seconds=3600,
    )
    rest.create(api_client, rest.group_path("batch", "v1", "jobs", "default"), job, what="job nccl")
    path = rest.group_path("batch", "v1", "jobs", "default", "nccl")
    for _ in range(200):
        if jobs.status_of(rest.get(api_client, path, what="job nccl")) is not None:
            break
        gpu_sim.advance(20)
    assert jobs.status_of(rest.get(api_client, path, what="job nccl")) == "Complete"
    pods = rest.list_items(
        api_client, rest.core_path("pods", "default"), label_selector="batch.kubernetes.io/job-name=nccl"
    )
    by_index = {p["metadata"]["annotations"][jobs.INDEX_ANNOTATION]: p["metadata"]["name"] for p in pods}
    first, second = (podlogs.read(api_client, "default", by_index[i]) for i in ("0", "1"))
    assert "Avg bus bandwidth" in first and first != second
    assert jobs.first_pod_log(api_client, "default", "nccl") == first
