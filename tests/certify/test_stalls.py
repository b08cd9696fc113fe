"""Stalled training runs on the simulated cluster: found from the log's progress, not the deadline.

Covers: a training certification whose node hangs its runs (the simulator's ``stall`` fault: steps
stop half-way, the processes never exit) fails each such group with ``WorkloadStalled`` a few
average steps after the last one — long before ``timeoutPerJob`` — deletes its TrainJob so the GPUs
are free for the next round, and isolation names that node alone; a healthy run is never called
stalled however slowly the runner looks; a run that logs no step within
``startupStallTimeoutSeconds`` is stalled too.
"""

from __future__ import annotations

from typing import Any

from shared.certify import stalls
from shared.kube import rest
from shared.sim import SimServer
from shared.sim.gpu import fabric
from tests.certify import clusterkit as kit

TRAINING = {"domain": "training", "variant": "nemotron5-8b"}


def _training(name: str, **options: Any) -> Any:
    return kit.certification(name, maxSteps=20, timeoutPerJob="6h", **TRAINING, **options)


def _trainjobs(api: Any) -> list[dict[str, Any]]:
    return rest.list_items(api, rest.group_path("trainer.kubeflow.org", "v1alpha1", "trainjobs", "default"))


def test_a_hung_training_run_is_stalled_long_before_its_deadline_and_its_node_named(
    gpu_sim: SimServer, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(8, racks=2)
    gpu_sim.fabric.inject(fabric.parse_all(["node-005:stall"]))
    kit.create(api_client, _training("hang"))
    cert = kit.drive(gpu_sim, api_client, "hang", seconds=60)
    category = cert.status.categoryStatuses[0]
    assert cert.status.phase == "Failed"
    assert [f.name for f in category.failedNodes] == ["node-005"]
    first = category.rounds[0].groups[0]
    assert first.reason is not None and first.reason.value == "WorkloadStalled"
    assert first.message is not None and "no new training step" in first.message and "after step 10" in first.message
    assert first.startTime and first.endTime
    assert 0 < stalls._seconds(first.startTime, first.endTime) < 3600  # far inside timeoutPerJob (6 h)
    stalled = {g.job for r in category.rounds for g in r.groups if g.reason and g.reason.value == "WorkloadStalled"}
    assert stalled and not stalled & {j["metadata"]["name"] for j in _trainjobs(api_client)}


def test_a_healthy_training_run_is_not_stalled_however_slowly_the_runner_looks(
    gpu_sim: SimServer, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(4)
    kit.create(api_client, _training("ok"))
    cert = kit.drive(gpu_sim, api_client, "ok", seconds=300)
    assert cert.status.phase == "Succeeded", cert.status.categoryStatuses[0].message
    assert cert.status.categoryStatuses[0].measurements["goodputRatio"] > 0


def test_no_step_within_the_startup_window_is_a_stall(gpu_sim: SimServer, api_client: Any) -> None:
    gpu_sim.add_gpu_nodes(2)
    kit.create(api_client, _training("slow-start", startupStallTimeoutSeconds=30))
    cert = kit.drive(gpu_sim, api_client, "slow-start", seconds=60, steps=6)
    group = cert.status.categoryStatuses[0].rounds[0].groups[0]
    assert group.reason is not None and group.reason.value == "WorkloadStalled", group
    assert group.message is not None and "no training step logged" in group.message
