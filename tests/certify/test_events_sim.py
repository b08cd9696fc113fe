"""Events on Certifications: what ``kubectl describe certification`` shows (simulated cluster, virtual time).

Covers: a run with a slow NIC on node-002, stepped by the controller, records ``CertificationStarted``
(nodes and category), ``IsolationRoundStarted`` for each round after the first, ``IsolationFinished``
naming the suspect and a Warning ``CertificationFailed`` naming node-002 and its reason, all on the
Certification (its namespace, its uid) from ``nvcrectl-controller``, and never patches one (so its Role
grants events ``create`` only); ``kubectl describe certification`` lists them; a passing run stepped by
``run --wait``'s runner records ``CertificationPassed`` from ``nvcrectl``; a Certification no node
matches fails at once with a Warning saying so.
"""

from __future__ import annotations

from typing import Any

from shared import clock
from shared.certify import controller, models, resource
from shared.kube import rest
from shared.sim import SimServer
from shared.sim.gpu import fabric
from tests.certify import clusterkit as kit
from tests.simfixtures import Kubectl

LIMIT = {"busBandwidthGBps": "value >= 300"}


def cert_events(api: Any, name: str) -> list[dict[str, Any]]:
    found = [
        e
        for e in rest.list_items(api, rest.core_path("events", "default"))
        if e["involvedObject"]["kind"] == "Certification" and e["involvedObject"]["name"] == name
    ]
    return sorted(found, key=lambda e: e["metadata"]["name"])


def run_with_controller(sim: SimServer, api: Any, name: str, *, passes: int = 200) -> models.Certification:
    replica = controller.Controller(api, "default", "replica-a", clock.for_api_client(api, max_age=0))
    for _ in range(passes):
        replica.reconcile()
        cert, _ = resource.get(api, "default", name)
        if cert.status.phase in (models.Phase.SUCCEEDED, models.Phase.FAILED):
            return cert
        sim.advance(20)
    raise AssertionError(f"{name} did not finish in {passes} passes")


def test_an_isolation_run_records_its_start_rounds_and_suspects_on_the_certification(
    gpu_sim: SimServer, api_client: Any, kubectl: Kubectl
) -> None:
    gpu_sim.add_gpu_nodes(8, racks=2)
    gpu_sim.fabric.inject(fabric.parse_all(["node-002:nic=0.4"]))
    kit.create(api_client, kit.certification("isolate", thresholds=LIMIT))
    cert = run_with_controller(gpu_sim, api_client, "isolate")
    assert [f.name for f in cert.status.categoryStatuses[0].failedNodes] == ["node-002"]
    found = cert_events(api_client, "isolate")
    reasons = [e["reason"] for e in found]
    rounds = len(cert.status.categoryStatuses[0].rounds)
    assert rounds > 1
    assert reasons == [
        "CertificationStarted",
        *["IsolationRoundStarted"] * (rounds - 1),
        "IsolationFinished",
        "CertificationFailed",
    ]
    uid = resource.get(api_client, "default", "isolate")[1]["uid"]
    assert {(e["involvedObject"]["uid"], e["involvedObject"]["namespace"]) for e in found} == {(uid, "default")}
    assert {e["source"]["component"] for e in found} == {"nvcrectl-controller"}
    started, failed = found[0], found[-1]
    assert started["message"] == (
        "certifying 8 node(s) (node-000, node-001, node-002, node-003, node-004 and 3 more) "
        "in communication/nccl-all-reduce"
    )
    assert found[-2]["message"] == "communication/nccl-all-reduce: suspects node-002"
    assert failed["type"] == "Warning"
    assert failed["message"].startswith("categories failed: communication/nccl-all-reduce; suspect nodes: node-002 (")
    assert [r.verb for r in gpu_sim.audit.records() if r.resource == "events" and r.verb == "patch"] == []
    described = kubectl("describe", "certification", "isolate").stdout
    events_section = described.split("\nEvents:\n", 1)[1]
    for reason in ("CertificationStarted", "IsolationFinished", "CertificationFailed"):
        assert reason in events_section


def test_a_passing_run_stepped_by_the_cli_runner_records_its_verdict(gpu_sim: SimServer, api_client: Any) -> None:
    gpu_sim.add_gpu_nodes(4, racks=2)
    kit.create(api_client, kit.certification("clean", thresholds=LIMIT))
    assert kit.drive(gpu_sim, api_client, "clean").status.phase == "Succeeded"
    found = cert_events(api_client, "clean")
    assert [(e["type"], e["reason"]) for e in found] == [
        ("Normal", "CertificationStarted"),
        ("Normal", "CertificationPassed"),
    ]
    assert found[-1]["message"] == "all certification categories completed successfully"
    assert {e["source"]["component"] for e in found} == {"nvcrectl"}


def test_a_certification_no_node_matches_fails_at_once_with_a_warning(gpu_sim: SimServer, api_client: Any) -> None:
    gpu_sim.add_gpu_nodes(2)
    kit.create(api_client, kit.certification("nowhere", target={"nodeSelector": {"pool": "absent"}}))
    assert kit.drive(gpu_sim, api_client, "nowhere").status.phase == "Failed"
    [failed] = cert_events(api_client, "nowhere")
    assert (failed["type"], failed["reason"], failed["message"]) == (
        "Warning",
        "CertificationFailed",
        "no node matches spec.target",
    )
