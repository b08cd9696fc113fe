"""Certification runs on EKS-like nodes end to end: TrainJobs with the aws platform's EFA settings.

Covers (research/workloads.md §4.6, AICR issue 2683): on ``serve --service eks``-shaped nodes the
run detects the aws platform and runs nccl-all-reduce as TrainJobs whose launchers cross nodes over
EFA, so a healthy 16-node cluster passes ``busBandwidthGBps >= 300``; with one node's NICs at 40 %
exactly that node is named; with the platform overrides left out (``spec.platform: none``) the same
cluster fails the threshold at socket speed, so the override is what makes the run pass; run as
MPIJobs (``spec.backend: mpijob``) the healthy cluster passes as well.
"""

from __future__ import annotations

from typing import Any

import pytest

from shared.certify.isolate import hard
from shared.sim import SimServer
from shared.sim.gpu import fabric, stages
from tests.certify import clusterkit as kit

LIMIT = {"busBandwidthGBps": "value >= 300"}


def _eks(sim: SimServer, *faults: str) -> None:
    sim.add_gpu_nodes(16, racks=2, gpu="eks/h100")
    if faults:
        sim.fabric.inject(fabric.parse_all(list(faults)))


def test_a_healthy_eks_cluster_passes_over_efa(gpu_sim: SimServer, api_client: Any) -> None:
    _eks(gpu_sim)
    kit.create(api_client, kit.certification("eks-healthy", thresholds=LIMIT))
    cert = kit.drive(gpu_sim, api_client, "eks-healthy")
    category = cert.status.categoryStatuses[0]
    assert (cert.status.platform, cert.status.gpu, category.backend) == ("aws", "h100", "trainjob")
    assert cert.status.phase == "Succeeded", category.message
    assert category.measurements["busBandwidthGBps"] == pytest.approx(
        stages.profile("eks/h100").bandwidth.networkBusGBps, abs=0.01
    )


def test_a_slow_nic_on_eks_names_exactly_its_node(gpu_sim: SimServer, api_client: Any) -> None:
    _eks(gpu_sim, "node-011:nic=0.4")
    kit.create(api_client, kit.certification("eks-slow", thresholds=LIMIT))
    category = kit.drive(gpu_sim, api_client, "eks-slow").status.categoryStatuses[0]
    assert [(f.name, f.reason.value) for f in category.failedNodes] == [("node-011", "ThresholdViolation")]
    assert category.failedNodes[0].value == pytest.approx(
        0.4 * stages.profile("eks/h100").bandwidth.networkBusGBps, abs=0.01
    )


def test_without_the_efa_override_the_same_cluster_fails_at_socket_speed(gpu_sim: SimServer, api_client: Any) -> None:
    _eks(gpu_sim)
    kit.create(api_client, kit.certification("eks-generic", thresholds=LIMIT, platform="none"))
    cert = kit.drive(gpu_sim, api_client, "eks-generic")
    category = cert.status.categoryStatuses[0]
    machine = stages.profile("eks/h100").machine
    assert machine is not None
    assert cert.status.platform == "none" and cert.status.phase == "Failed"
    assert category.measurements["busBandwidthGBps"] == pytest.approx(machine.network.socketBusGBps, abs=0.01)
    first = category.rounds[0].groups[0]
    assert first.reason is not None and first.reason.value == "ThresholdViolation"
    assert first.message is not None and "Using network Socket" in first.message  # the log says why
    # every pair fails alike: all nodes stay blamed, the message points at what they share, and
    # isolation ends once every node failed beside two partners (not after max_rounds runs)
    assert len({f.name for f in category.failedNodes}) == 16
    assert category.message is not None and hard.SHARED_CAUSE in category.message
    assert [r.stage for r in category.rounds] == ["full-scale", "screening", "screening"]


def test_as_mpijobs_the_healthy_eks_cluster_passes_too(gpu_sim: SimServer, api_client: Any) -> None:
    """The MPI Operator's launcher lands on a node its workers hold: their anti-affinity selects
    workers only (selecting the launcher too would leave it nowhere to run when a group spans every node)."""
    _eks(gpu_sim)
    kit.create(api_client, kit.certification("eks-mpi", thresholds=LIMIT, backend="mpijob"))
    cert = kit.drive(gpu_sim, api_client, "eks-mpi")
    category = cert.status.categoryStatuses[0]
    assert (category.backend, cert.status.phase) == ("mpijob", "Succeeded"), category.message
    assert category.measurements["busBandwidthGBps"] == pytest.approx(
        stages.profile("eks/h100").bandwidth.networkBusGBps, abs=0.01
    )
