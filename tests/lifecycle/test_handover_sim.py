"""Quarantine and validation on one node: ownership hand-over, on the simulated cluster.

Covers: Xid 79 → quarantine → drain → RebootNode → the repaired node gets a ValidationRequest and
quarantine hands its cordon over (one cordon, owner fault-quarantine → validation) → the test passes →
the node is schedulable, and a late healthy event changes nothing; a GPU that starts overheating
while its validation test runs is quarantined, rebooted, handed back and the test retried, and once
both controllers are done the node carries no cordon, owner annotation, session or quarantine state;
a fault that clears by itself during validation is released by quarantine without lifting the
cordon validation holds, and the retried test then lifts it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared import clock, nodes
from shared.health import event as hevent
from shared.health import quarantine, resource, xid
from shared.lifecycle import models, sessions
from shared.lifecycle import resource as vresource
from shared.sim.gpu import fabric
from tests.lifecycle import kit

Phase = models.Phase
VALUES = """
node-drainer:
  userNamespaces: [{name: "*", mode: Immediate}]
lifecycle-manager:
  config:
    defaultTests: ["dcgm-diag-test"]
    postRemediation: {tests: ["dcgm-diag-test"]}
"""


def clean(api: Any, node: str) -> None:
    """Neither controller holds anything on the node any more."""
    n = nodes.get(api, node)
    anns = (n.get("metadata") or {}).get("annotations") or {}
    labels = (n.get("metadata") or {}).get("labels") or {}
    assert not nodes.is_cordoned(n)
    assert [
        k
        for k in anns
        if k
        in (*quarantine.OWNED_ANNOTATIONS, nodes.CORDON_OWNER, nodes.TAINT_OWNERS, sessions.SESSION, sessions.ACTIVE)
    ] == []
    assert sessions.STATE_LABEL not in labels and labels.get(quarantine.STATE_LABEL) is None


def test_a_repaired_node_is_handed_to_validation_and_returns_to_service_after_a_pass(
    gpu_sim: Any, api_client: Any, tmp_path: Path
) -> None:
    sim, api = gpu_sim, api_client
    [node] = sim.add_gpu_nodes(1)
    life = kit.make(api, tmp_path, VALUES)
    fq = kit.health(api, tmp_path)
    sim.fabric.inject(fabric.parse_all([f"{node}:xid=79"]))
    log = (sim.noderoot.root / node / "kern.log").read_text()
    resource.publish(api, xid.events_from_text(log, node=node, now=clock.WALL.now()), now=clock.WALL.now)
    assert fq.reconcile_once().phases == {"Quarantined": 1}
    assert nodes.cordon_owner(nodes.get(api, node)) == quarantine.CORDON_OWNER
    assert life.reconcile_once() == []  # still being repaired: nothing to validate
    sim.advance(300)
    assert fq.reconcile_once().followups == {"remediation:Succeeded": 1}
    notes = life.reconcile_once()
    [vr] = vresource.list_all(api)
    assert f"created {vr.name}" in notes and vr.name.startswith(f"{node}-validation-")
    after = nodes.get(api, node)
    assert nodes.is_cordoned(after) and nodes.cordon_owner(after) == sessions.OWNER  # one cordon, new owner
    assert not quarantine.is_quarantined(after)
    assert kit.drive(sim, life, vr.name).status.phase is Phase.SUCCEEDED
    clean(api, node)
    ev = resource.list_events(api, node=node)[0].event  # the monitor later sees the GPU healthy
    resource.publish(
        api,
        [
            ev.model_copy(
                update={
                    "isHealthy": True,
                    "isFatal": False,
                    "generatedTimestamp": None,
                    "recommendedAction": hevent.RecommendedAction.NONE,
                }
            )
        ],
        now=clock.WALL.now,
    )
    fq.reconcile_once()
    clean(api, node)


def thermal(node: str) -> hevent.HealthEvent:
    return hevent.parse(
        {
            "agent": "gpu-health-monitor",
            "componentClass": "GPU",
            "checkName": "GpuThermalWatch",
            "isFatal": True,
            "recommendedAction": "RESTART_BM",
            "errorCode": ["DCGM_FR_TEMP_VIOLATION"],
            "entitiesImpacted": [{"entityType": "GPU", "entityValue": "2"}],
            "nodeName": node,
            "message": "GPU 2 over its temperature limit",
            "generatedTimestamp": "2026-01-01T00:00:00Z",
        }
    )


def test_a_gpu_overheating_during_its_validation_test_is_quarantined_repaired_and_retried(
    gpu_sim: Any, api_client: Any, tmp_path: Path
) -> None:
    sim, api = gpu_sim, api_client
    [node] = sim.add_gpu_nodes(1)
    life = kit.make(api, tmp_path, VALUES)
    fq = kit.health(api, tmp_path)
    vresource.create(api, "vr-hot", [node], [], source="test")
    kit.drive(sim, life, "vr-hot", until=(Phase.RUNNING,))
    sim.advance(30)  # the dcgmi diag pod is running
    sim.fabric.inject(fabric.parse_all([f"{node}:thermal[2]"]))
    resource.publish(api, [thermal(node)], now=clock.WALL.now)
    result = fq.reconcile_once()
    assert result.phases == {"Quarantined": 1}
    held = nodes.get(api, node)
    assert nodes.cordon_owner(held) == sessions.OWNER  # quarantine found validation's cordon: no second one
    assert held["metadata"]["annotations"][quarantine.ANN_CORDON_PRE] == "True"
    life.reconcile_once()
    vr, _ = vresource.get(api, "vr-hot")
    first = vr.status.testGroups[0].attempts[0]
    assert (first.phase, first.failureReason) == (Phase.FAILED, models.FailureReason.NODE_READINESS_VIOLATION)
    for _ in range(60):  # reboot, hand-over, retry, post-repair validation
        sim.advance(15)
        fq.reconcile_once()
        life.reconcile_once()
        listed = vresource.list_all(api)
        if len(listed) == 2 and all(v.status.phase in models.TERMINAL for v in listed):
            break
    requests = {v.name: v for v in vresource.list_all(api)}
    assert requests["vr-hot"].status.phase is Phase.SUCCEEDED
    assert [a.phase for a in requests["vr-hot"].status.testGroups[0].attempts] == [Phase.FAILED, Phase.SUCCEEDED]
    [repair] = [v for n, v in requests.items() if n != "vr-hot"]
    assert repair.status.phase is Phase.SUCCEEDED and repair.metadata.labels[models.SOURCE_LABEL] == "post-remediation"
    assert [str(f) for f in sim.fabric.faults] == []  # the reboot cleared the thermal fault
    life.reconcile_once()
    fq.reconcile_once()
    clean(api, node)


def test_a_fault_that_clears_by_itself_during_validation_never_lifts_validations_cordon(
    gpu_sim: Any, api_client: Any, tmp_path: Path
) -> None:
    sim, api = gpu_sim, api_client
    [node] = sim.add_gpu_nodes(1)
    life = kit.make(api, tmp_path, VALUES + "fault-remediation: {enabled: false}\n")
    fq = kit.health(api, tmp_path)
    vresource.create(api, "vr-blip", [node], [], source="test")
    kit.drive(sim, life, "vr-blip", until=(Phase.RUNNING,))
    resource.publish(api, [thermal(node)], now=clock.WALL.now)
    assert fq.reconcile_once().phases == {"Quarantined": 1}
    life.reconcile_once()  # the attempt fails: the node is under quarantine
    ev = resource.list_events(api, node=node)[0].event
    resource.publish(
        api,
        [
            ev.model_copy(
                update={
                    "isHealthy": True,
                    "isFatal": False,
                    "generatedTimestamp": None,
                    "recommendedAction": hevent.RecommendedAction.NONE,
                }
            )
        ],
        now=clock.WALL.now,
    )
    assert fq.reconcile_once().phases == {"UnQuarantined": 1}
    held = nodes.get(api, node)
    assert nodes.is_cordoned(held) and nodes.cordon_owner(held) == sessions.OWNER  # quarantine left it alone
    vr = kit.drive(sim, life, "vr-blip")
    assert [(a.phase, a.failureReason) for a in vr.status.testGroups[0].attempts] == [
        (Phase.FAILED, models.FailureReason.NODE_READINESS_VIOLATION),
        (Phase.SUCCEEDED, None),
    ]
    fq.reconcile_once()
    clean(api, node)
