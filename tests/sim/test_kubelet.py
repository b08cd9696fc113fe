"""The simulated kubelet, driven over HTTP with the official client in virtual time.

Covers: an Indexed all-reduce Job completes with Complete/SuccessCriteriaMet conditions,
completedIndexes and terminated container statuses, each pod a single-node run on its own node (no
hostfile: NVLink only); an MPIJob all-reduce is one sweep across its workers' nodes; pods that
cannot fit stay Pending with the real scheduler message (cordoned, no free GPUs, untolerated taint)
and run once the cause is gone; a nodeName pod beyond the node's GPUs is rejected as the kubelet
does; a dead GPU crashes the run and fails the MPIJob, its log naming the worker on that node; a
flaky node fails as often as its seeded dice say; other images succeed after the configured time and
sleep sleeps; a long-running service stays Running; a reboot aborts a running group.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from shared.certify.parsers import nccl_log
from shared.sim import SimServer
from shared.sim.gpu import fabric, stages
from tests.sim import jobkit


def _nodes(sim: SimServer, count: int, *, racks: int = 1, gpu: str = "h100") -> list[str]:
    return sim.add_gpu_nodes(count, racks=racks, gpu=gpu)


def _pod(
    name: str,
    *,
    node: str | None = None,
    gpus: int = 8,
    command: list[str] | None = None,
    restart: str = "Never",
    **spec: Any,
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "main",
        "image": "busybox",
        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
    }
    if command:
        container["command"] = command
    body: dict[str, Any] = {
        "metadata": {"name": name},
        "spec": {"restartPolicy": restart, "containers": [container], **spec},
    }
    if node:
        body["spec"]["nodeName"] = node
    return body


def test_each_pod_of_an_indexed_all_reduce_job_runs_alone_on_its_node(gpu_sim: SimServer, api_client: Any) -> None:
    """The shape certification once rendered: pods of one Job each running the test without a
    hostfile are independent single-node runs (NVLink only), as on a real cluster."""
    names = _nodes(gpu_sim, 4)
    job, log = jobkit.run(gpu_sim, api_client, jobkit.allreduce("ar", names[1:3]))
    assert jobkit.condition(job, "Complete") == "True" and jobkit.condition(job, "SuccessCriteriaMet") == "True"
    assert job.status.succeeded == 2 and job.status.completed_indexes == "0-1"
    pods = jobkit.pods_of(api_client, "ar")
    assert sorted(p.spec.node_name for p in pods) == names[1:3]
    for pod in pods:
        assert pod.status.phase == "Succeeded"
        assert pod.status.container_statuses[0].state.terminated.exit_code == 0
        assert pod.status.container_statuses[0].state.terminated.reason == "Completed"
    result = nccl_log.parse(log)
    assert result.verdict == "pass" and result.ranks == 8
    first = next(p for p in pods if (p.metadata.annotations or {}).get(jobkit.INDEX) == "0")
    assert f"on {first.spec.node_name} device" in log
    assert not any(f"on {n} device" in log for n in names if n != first.spec.node_name)
    assert result.largest_busbw_gbps == stages.profile("h100").bandwidth.nvlinkBusGBps


def test_an_mpijob_all_reduce_runs_one_sweep_across_its_workers_nodes(gpu_sim: SimServer, api_client: Any) -> None:
    names = _nodes(gpu_sim, 4)
    job, log = jobkit.run_mpijob(gpu_sim, api_client, jobkit.mpijob("ar", names[1:3]))
    assert jobkit.mpijob_condition(job, "Succeeded") == "True"
    result = nccl_log.parse(log)
    assert result.verdict == "pass" and result.ranks == 16
    assert "ar-worker-0 device" in log and "ar-worker-1 device" in log
    assert result.largest_busbw_gbps == stages.profile("h100").bandwidth.networkBusGBps


def test_a_job_takes_the_virtual_time_its_workload_needs(gpu_sim: SimServer, api_client: Any) -> None:
    names = _nodes(gpu_sim, 2)
    k8s.BatchV1Api(api_client).create_namespaced_job("default", jobkit.allreduce("slow", names))
    gpu_sim.advance(5)
    job = k8s.BatchV1Api(api_client).read_namespaced_job("slow", "default")
    assert job.status.active == 2 and jobkit.condition(job, "Complete") is None
    gpu_sim.advance(120)
    assert jobkit.condition(k8s.BatchV1Api(api_client).read_namespaced_job("slow", "default"), "Complete") == "True"


@pytest.mark.parametrize(
    ("cause", "expected"),
    [
        ("cordon", "1 node(s) were unschedulable"),
        ("taint", "1 node(s) had untolerated taint {nvidia.com/gpu-error: fatal}"),
        ("busy", "1 Insufficient nvidia.com/gpu"),
    ],
    ids=["cordoned", "tainted", "no-free-gpus"],
)
def test_a_pod_that_cannot_fit_stays_pending_with_the_scheduler_reason(
    gpu_sim: SimServer, api_client: Any, cause: str, expected: str
) -> None:
    names = _nodes(gpu_sim, 2)
    core = k8s.CoreV1Api(api_client)
    if cause == "cordon":
        core.patch_node(names[0], {"spec": {"unschedulable": True}})
    elif cause == "taint":
        core.patch_node(
            names[0], {"spec": {"taints": [{"key": "nvidia.com/gpu-error", "value": "fatal", "effect": "NoSchedule"}]}}
        )
    else:
        core.create_namespaced_pod("default", _pod("hog", node=names[0], command=["sleep", "3600"]))
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [names[0]]}]}
                ]
            }
        }
    }
    core.create_namespaced_pod("default", _pod("want", affinity=affinity, command=["sleep", "10"]))
    gpu_sim.advance(5)
    pod = core.read_namespaced_pod("want", "default")
    scheduled = next(c for c in pod.status.conditions if c.type == "PodScheduled")
    assert pod.status.phase == "Pending" and scheduled.reason == "Unschedulable"
    reasons = ", ".join(sorted([expected, "1 node(s) didn't match Pod's node affinity/selector"]))
    assert scheduled.message.startswith(f"0/2 nodes are available: {reasons}. preemption: 0/2 nodes are available:")
    if cause == "cordon":
        core.patch_node(names[0], {"spec": {"unschedulable": False}})
    elif cause == "taint":
        core.patch_node(names[0], {"spec": {"taints": None}})
    else:
        core.delete_namespaced_pod("hog", "default")
    gpu_sim.advance(30)
    pod = core.read_namespaced_pod("want", "default")
    assert pod.spec.node_name == names[0] and pod.status.phase == "Succeeded"


def test_a_node_name_pod_beyond_the_free_gpus_is_rejected_by_the_kubelet(gpu_sim: SimServer, api_client: Any) -> None:
    names = _nodes(gpu_sim, 1)
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_pod("default", _pod("first", node=names[0], command=["sleep", "3600"]))
    core.create_namespaced_pod("default", _pod("second", node=names[0], gpus=1))
    gpu_sim.advance(5)
    second = core.read_namespaced_pod("second", "default")
    assert second.status.phase == "Failed" and second.status.reason == "OutOfnvidia.com/gpu"
    assert core.read_namespaced_pod("first", "default").status.phase == "Running"


def test_a_dead_gpu_crashes_the_run_and_fails_the_job(gpu_sim: SimServer, api_client: Any) -> None:
    names = _nodes(gpu_sim, 3)
    gpu_sim.fabric.inject(fabric.parse_all([f"{names[1]}:gpu-dead[5]"]))
    job, log = jobkit.run_mpijob(gpu_sim, api_client, jobkit.mpijob("dead", names))
    assert jobkit.mpijob_condition(job, "Failed") == "True"
    result = nccl_log.parse(log)
    assert result.verdict == "error" and result.rows == []
    events = k8s.CoreV1Api(api_client).list_namespaced_event("default", field_selector="reason=Scheduled").items
    placed = dict(e.message.removeprefix("Successfully assigned default/").split(" to ") for e in events)
    workers = {
        pod: node for pod, node in placed.items() if pod.startswith("dead-worker-")
    }  # gone by now: cleanPodPolicy
    blamed = [line.split(":")[0] for line in result.errors if "CUDA failure" in line]
    assert blamed and all(workers.get(host.split(".")[0], host) == names[1] for host in blamed), (blamed, workers)


def test_a_flaky_node_fails_runs_as_often_as_its_seeded_dice_say(gpu_sim: SimServer, api_client: Any) -> None:
    names = _nodes(gpu_sim, 2)
    gpu_sim.fabric.inject(fabric.parse_all([f"{names[0]}:flaky=0.5"]))
    gpu_sim.fabric.rng.seed(7)
    outcomes = []
    for n in range(8):
        job, _ = jobkit.run(gpu_sim, api_client, jobkit.allreduce(f"flaky-{n}", names), seconds=120)
        outcomes.append(jobkit.condition(job, "Complete") == "True")
    gpu_sim.fabric.rng.seed(7)
    expected = [gpu_sim.fabric.rng.random() >= 0.5 for _ in range(8)]
    assert outcomes == expected and True in outcomes and False in outcomes


def test_other_images_succeed_after_the_configured_time_and_sleep_sleeps(gpu_sim: SimServer, api_client: Any) -> None:
    names = _nodes(gpu_sim, 1)
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_pod("default", _pod("plain", node=names[0], gpus=0))
    core.create_namespaced_pod("default", _pod("nap", node=names[0], gpus=0, command=["sleep", "100"]))
    core.create_namespaced_pod("default", _pod("service", node=names[0], gpus=0, restart="Always"))
    start = stages.workloads().podStartSeconds
    gpu_sim.advance(start + stages.workloads().otherSeconds - 1)
    assert core.read_namespaced_pod("plain", "default").status.phase == "Running"
    gpu_sim.advance(1)
    assert core.read_namespaced_pod("plain", "default").status.phase == "Succeeded"
    assert core.read_namespaced_pod("nap", "default").status.phase == "Running"
    gpu_sim.advance(100)
    assert core.read_namespaced_pod("nap", "default").status.phase == "Succeeded"
    assert core.read_namespaced_pod("service", "default").status.phase == "Running"


def test_a_reboot_aborts_the_group_run_on_that_node(gpu_sim: SimServer, api_client: Any) -> None:
    names = _nodes(gpu_sim, 2)
    batch = k8s.BatchV1Api(api_client)
    batch.create_namespaced_job("default", jobkit.group_job("long", names, ["train-bench", "--steps", "500"]))
    gpu_sim.advance(30)
    k8s.CustomObjectsApi(api_client).create_cluster_custom_object(
        "janitor.dgxc.nvidia.com",
        "v1alpha1",
        "rebootnodes",
        {
            "apiVersion": "janitor.dgxc.nvidia.com/v1alpha1",
            "kind": "RebootNode",
            "metadata": {"name": "r1"},
            "spec": {"nodeName": names[1]},
        },
    )
    gpu_sim.advance(30)
    job = batch.read_namespaced_job("long", "default")
    assert jobkit.condition(job, "Failed") == "True"
    reasons = {p.spec.node_name: p.status.reason for p in jobkit.pods_of(api_client, "long")}
    assert reasons[names[1]] == "Terminated"


def _index0_log(api_client: Any, job: str) -> str:
    pods = jobkit.pods_of(api_client, job)
    first = next(p for p in pods if (p.metadata.annotations or {}).get(jobkit.INDEX) == "0")
    core = k8s.CoreV1Api(api_client)
    return str(core.read_namespaced_pod_log(first.metadata.name, "default", _preload_content=False).data.decode())


def test_a_training_log_grows_step_by_step_while_the_run_goes(gpu_sim: SimServer, api_client: Any) -> None:
    from shared.certify.parsers import training_log
    from shared.sim.gpu import training_output

    names = _nodes(gpu_sim, 2)
    args = training_output.parse_args(["--steps", "20"])
    step, _ = training_output.step_seconds(gpu_sim.fabric, names, args)
    batch = k8s.BatchV1Api(api_client)
    batch.create_namespaced_job("default", jobkit.group_job("grow", names, ["train-bench", "--steps", "20"]))
    gpu_sim.advance(stages.workloads().podStartSeconds + stages.workloads().training.startupSeconds + step * 7.5)
    partial = training_log.parse(_index0_log(api_client, "grow"))
    assert 1 <= len(partial.steps) < 20 and partial.verdict != "pass"
    gpu_sim.advance(step * 30)
    assert jobkit.condition(batch.read_namespaced_job("grow", "default"), "Complete") == "True"
    done = training_log.parse(_index0_log(api_client, "grow"))
    assert done.verdict == "pass" and len(done.steps) == 20


def test_a_stalled_training_run_stops_logging_and_never_exits(gpu_sim: SimServer, api_client: Any) -> None:
    from shared.certify.parsers import training_log

    names = _nodes(gpu_sim, 2)
    gpu_sim.fabric.inject(fabric.parse_all([f"{names[1]}:stall"]))
    batch = k8s.BatchV1Api(api_client)
    batch.create_namespaced_job("default", jobkit.group_job("hang", names, ["train-bench", "--steps", "20"]))
    gpu_sim.advance(6 * 3600)
    assert jobkit.condition(batch.read_namespaced_job("hang", "default"), "Complete") is None
    assert {p.status.phase for p in jobkit.pods_of(api_client, "hang")} == {"Running"}
    stopped = training_log.parse(_index0_log(api_client, "hang"))
    assert len(stopped.steps) == 10 and stopped.verdict != "pass"
