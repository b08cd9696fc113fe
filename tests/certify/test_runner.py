"""Certification runs on the simulated GPU cluster, in virtual time.

Covers: a slow NIC in 64 nodes found by isolation with ThresholdViolation and its bandwidth; a dead
GPU named with a hardware reason; no thresholds → pass with the low bandwidth reported; a healthy
cluster passes with measurements; a rack-to-rack link fault reported as an infrastructure fault;
a runner killed after its k-th write and resumed reaches the same verdict without re-running a
finished group; the Lease lets exactly one of two runners step a run; an object created with an
invalid nodeSelector key fails with ValidationFailed naming the key.
"""

from __future__ import annotations

from typing import Any

import pytest

from shared import clock, errors
from shared.certify import runner
from shared.kube import leases, rest
from shared.sim import SimServer
from shared.sim.gpu import fabric
from tests.certify import clusterkit as kit

LIMIT = {"busBandwidthGBps": "value >= 300"}


def _faulty(sim: SimServer, nodes: int, *faults: str, racks: int = 2) -> None:
    sim.add_gpu_nodes(nodes, racks=racks)
    if faults:
        sim.fabric.inject(fabric.parse_all(list(faults)))


def test_one_slow_nic_in_64_nodes_is_named_with_threshold_violation_and_its_bandwidth(
    gpu_sim: SimServer, api_client: Any
) -> None:
    _faulty(gpu_sim, 64, "node-037:nic[3]=0.4", racks=4)
    kit.create(api_client, kit.certification("slow-nic", thresholds=LIMIT))
    cert = kit.drive(gpu_sim, api_client, "slow-nic")
    category = cert.status.categoryStatuses[0]
    assert cert.status.phase == "Failed"
    assert [(f.name, f.reason.value, f.value) for f in category.failedNodes] == [
        ("node-037", "ThresholdViolation", 148.0)
    ]
    assert category.measurements["busBandwidthGBps"] == 148.0


def test_a_dead_gpu_is_named_with_a_hardware_reason(gpu_sim: SimServer, api_client: Any) -> None:
    _faulty(gpu_sim, 16, "node-005:gpu-dead[2]")
    kit.create(api_client, kit.certification("dead-gpu", thresholds=LIMIT))
    category = kit.drive(gpu_sim, api_client, "dead-gpu").status.categoryStatuses[0]
    assert [(f.name, f.reason.value) for f in category.failedNodes] == [("node-005", "HardwareFailureDetected")]


def test_without_thresholds_a_slow_nic_passes_and_its_bandwidth_is_reported(
    gpu_sim: SimServer, api_client: Any
) -> None:
    _faulty(gpu_sim, 16, "node-003:nic=0.4")
    kit.create(api_client, kit.certification("report-only"))
    cert = kit.drive(gpu_sim, api_client, "report-only")
    assert cert.status.phase == "Succeeded"
    assert cert.status.categoryStatuses[0].measurements["busBandwidthGBps"] == 148.0


def test_a_healthy_cluster_passes_with_measurements(gpu_sim: SimServer, api_client: Any) -> None:
    _faulty(gpu_sim, 16)
    kit.create(api_client, kit.certification("healthy", thresholds=LIMIT))
    cert = kit.drive(gpu_sim, api_client, "healthy")
    category = cert.status.categoryStatuses[0]
    assert cert.status.phase == "Succeeded"
    assert category.measurements["busBandwidthGBps"] == 370.0
    assert len(category.rounds) == 1 and not category.failedNodes


def test_a_cordoned_node_is_left_out_and_named_in_the_report_after_the_run(gpu_sim: SimServer, api_client: Any) -> None:
    from shared import nodes
    from shared.certify import report

    _faulty(gpu_sim, 8)
    nodes.update(api_client, "node-006", lambda n: not nodes.cordon(n))
    kit.create(api_client, kit.certification("with-cordon", thresholds=LIMIT))
    cert = kit.drive(gpu_sim, api_client, "with-cordon")
    assert cert.status.phase == "Succeeded" and cert.status.leftOut == ["node-006"]
    assert "node-006" not in cert.status.categoryStatuses[0].nodes
    assert report.data(cert)["leftOut"] == ["node-006"]
    assert "Left out (cordoned): node-006" in report.text(cert)


def test_a_link_fault_between_racks_is_an_infrastructure_fault_with_its_two_sides(
    gpu_sim: SimServer, api_client: Any
) -> None:
    _faulty(gpu_sim, 16, "rack-0/rack-1:link=0.3")
    kit.create(api_client, kit.certification("link", thresholds=LIMIT))
    category = kit.drive(gpu_sim, api_client, "link").status.categoryStatuses[0]
    assert not category.failedNodes
    assert [(f.sideA, f.sideB) for f in category.infrastructureFaults] == [
        ([f"node-{i:03d}" for i in range(8)], [f"node-{i:03d}" for i in range(8, 16)])
    ]


@pytest.mark.parametrize("kill_after", [2, 5, 9, 14], ids=lambda k: f"killed-after-write-{k}")
def test_a_runner_killed_after_its_kth_write_resumes_to_the_same_verdict_without_rerunning_groups(
    gpu_sim: SimServer, api_client: Any, kill_after: int
) -> None:
    _faulty(gpu_sim, 16, "node-006:nic=0.4")
    kit.create(api_client, kit.certification("resume", thresholds=LIMIT))
    gpu_sim.faults.configure(kill_after_writes=kill_after, kill_identity=None)
    with pytest.raises(errors.Unavailable):  # the API stops answering this client's writes: it has "died"
        kit.drive(gpu_sim, api_client, "resume")
    gpu_sim.faults.clear()
    cert = kit.drive(gpu_sim, api_client, "resume")
    category = cert.status.categoryStatuses[0]
    assert [(f.name, f.reason.value) for f in category.failedNodes] == [("node-006", "ThresholdViolation")]
    groups = [g.job for r in category.rounds for g in r.groups]
    trainjobs = rest.list_items(api_client, rest.group_path("trainer.kubeflow.org", "v1alpha1", "trainjobs", "default"))
    assert sorted(j["metadata"]["name"] for j in trainjobs) == sorted(groups)
    launchers = rest.list_items(
        api_client, rest.core_path("pods", "default"), label_selector="jobset.sigs.k8s.io/replicatedjob-name=launcher"
    )
    assert sorted(p["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"] for p in launchers) == sorted(groups)


def test_of_two_runners_only_the_lease_holder_steps_the_run(gpu_sim: SimServer, api_client: Any) -> None:
    _faulty(gpu_sim, 4)
    kit.create(api_client, kit.certification("contended"))
    ticker = clock.for_api_client(api_client)
    won = [
        leases.try_acquire(api_client, "default", "contended", identity=me, duration=60, now=ticker.now)
        for me in ("runner-a", "runner-b")
    ]
    assert won == [True, False]
    runner.step(api_client, namespace="default", name="contended", clock=ticker)
    gpu_sim.advance(61)
    ticker.refresh()  # the holder stopped renewing for 61 virtual seconds: its lease has expired
    assert leases.try_acquire(api_client, "default", "contended", identity="runner-b", duration=60, now=ticker.now)


def test_a_run_an_earlier_release_started_is_closed_and_asks_to_be_run_again(
    gpu_sim: SimServer, api_client: Any
) -> None:
    from shared.certify import models, resource

    _faulty(gpu_sim, 4)
    kit.create(api_client, kit.certification("old"))
    cert, metadata = resource.get(api_client, "default", "old")
    started = models.CertificationStatus.model_validate(
        {
            "phase": "Running",
            "categoryStatuses": [
                {"domain": "communication", "variant": "nccl-all-reduce", "status": "Running", "nodes": ["node-000"]}
            ],
        }
    )
    resource.write_status(api_client, "default", "old", started, metadata)
    cert = kit.drive(gpu_sim, api_client, "old")
    category = cert.status.categoryStatuses[0]
    assert cert.status.phase == "Failed" and category.status == "Failed"
    assert category.message is not None and "run it again" in category.message
    assert rest.list_items(api_client, rest.group_path("batch", "v1", "jobs", "default")) == []


def test_a_certification_created_with_an_invalid_selector_key_fails_naming_the_key(
    gpu_sim: SimServer, api_client: Any
) -> None:
    """An object that did not come through ``nvcrectl`` (kubectl) fails validation, not "no node matches"."""
    _faulty(gpu_sim, 4)
    kit.create(api_client, kit.certification("bad-key", target={"nodeSelector": {"pool name": "gpu"}}))
    cert = kit.drive(gpu_sim, api_client, "bad-key")
    assert cert.status.phase == "Failed"
    assert cert.status.message is not None
    assert cert.status.message.startswith("spec.target.nodeSelector: invalid label key 'pool name'")
    assert [c.reason for c in cert.status.conditions if c.type == "Failed"] == ["ValidationFailed"]


def test_a_run_reads_only_the_nodes_its_selector_names(
    gpu_sim: SimServer, api_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server filters by ``nodeSelector``: on a large cluster a step costs the target's nodes."""
    from shared import nodes

    _faulty(gpu_sim, 8)
    for name in ("node-002", "node-003", "node-004", "node-005"):
        nodes.update(api_client, name, lambda n: n["metadata"]["labels"].update(pool="a") is None)
    listed: list[str | None] = []
    real = rest.list_items

    def recorded(api: Any, path: str, **kwargs: Any) -> list[dict[str, Any]]:
        if path == rest.core_path("nodes"):
            listed.append(kwargs.get("label_selector"))
        return real(api, path, **kwargs)

    monkeypatch.setattr(rest, "list_items", recorded)
    kit.create(api_client, kit.certification("pool-a", thresholds=LIMIT, target={"nodeSelector": {"pool": "a"}}))
    cert = kit.drive(gpu_sim, api_client, "pool-a")
    assert cert.status.phase == "Succeeded"
    assert cert.status.categoryStatuses[0].nodes == ["node-002", "node-003", "node-004", "node-005"]
    assert len(listed) >= 2 and set(listed) == {"pool=a"}
