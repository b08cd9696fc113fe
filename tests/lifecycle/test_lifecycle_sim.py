"""The validation lifecycle end to end on the simulated cluster, in virtual time.

Covers: request → gate (cordon owned by validation) → tests (Job and Certification providers) → pass
→ gate lifted, with the validation-state label at each step; a failing GPU keeps its node gated
(validation-failed) while the healthy node of the same request returns to service, and deleting the
failed request releases it without a re-run, and the failure is told to the notification sinks once;
a later passing request for the same tests clears an earlier failure; two requests holding one node
run one after the other and only the last lifts the gate; a cordon someone else set is never lifted,
a drift cordon is taken over and lifted; retries per provider; a request for a deleted node, and a
node deleted while its test runs; a node that joins cordoned gets one request of its own; an unknown
test name; the duration metric.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from shared import nodes
from shared.kube import rest
from shared.lifecycle import controller as lifecycle
from shared.lifecycle import models, sessions
from shared.lifecycle import resource as vresource
from shared.operate import validation as vservice
from shared.sim.gpu import fabric
from tests.lifecycle import kit

Phase = models.Phase
ONE_ATTEMPT = """
lifecycle-manager:
  config:
    defaultTests: ["dcgm-diag-test"]
    providers:
      k8s-job-provider: {kind: Job, retries: 0, timeoutSeconds: 1800}
      nvcre-provider: {kind: Certification, supportsTestBatching: true, retries: 0, timeoutSeconds: 5400}
"""


@pytest.fixture()
def cluster(gpu_sim: Any, api_client: Any) -> tuple[Any, Any, list[str]]:
    return gpu_sim, api_client, gpu_sim.add_gpu_nodes(2)


def test_a_request_gates_its_nodes_runs_the_tests_and_lifts_the_gate_on_a_pass(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    ctl = kit.make(api, tmp_path)
    assert kit.state(api, names[0]) == (None, False, None, [])
    vresource.create(api, "vr-pass", names, [], source="test")
    ctl.reconcile_once()
    assert kit.state(api, names[0]) == ("validating", True, "validation", ["vr-pass"])
    vr = kit.drive(sim, ctl, "vr-pass")
    assert vr.status.phase is Phase.SUCCEEDED
    assert [(g.tests, g.nodes, g.phase) for g in vr.status.testGroups] == [
        (["dcgm-diag-test"], [names[0]], Phase.SUCCEEDED),
        (["dcgm-diag-test"], [names[1]], Phase.SUCCEEDED),
    ]
    assert vr.status.startTime is not None and vr.status.completionTime is not None
    for name in names:
        assert kit.state(api, name) == (None, False, None, [])
    assert rest.list_items(api, rest.group_path("batch", "v1", "jobs", "nvsentinel")) == []  # attempts deleted
    assert lifecycle.DURATION.count(phase="Succeeded") >= 1


def test_the_certification_provider_runs_a_certification_through_the_in_process_engine(
    cluster: Any, tmp_path: Path
) -> None:
    sim, api, names = cluster
    ctl = kit.make(api, tmp_path, "")  # shipped defaults: dcgm-diag → diagnostics/dcgm-l2
    vresource.create(api, "vr-cert", names, ["dcgm-diag"], source="test")
    ctl.reconcile_once()
    certs = rest.list_items(api, rest.group_path("nvcre.nvidia.com", "v1alpha1", "certifications", "nvsentinel"))
    assert [c["spec"]["target"]["nodeNames"] for c in certs] == [names]
    assert certs[0]["spec"]["target"]["taintSelectors"] == [
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    ]
    vr = kit.drive(sim, ctl, "vr-cert", seconds=20)
    assert vr.status.phase is Phase.SUCCEEDED, vr.status.message
    assert [g.provider for g in vr.status.testGroups] == ["nvcre-provider"]
    assert all(kit.state(api, n) == (None, False, None, []) for n in names)


def test_a_failed_node_stays_gated_and_deleting_the_failed_request_releases_it(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    sim.fabric.inject(fabric.parse_all([f"{names[1]}:gpu-dead[3]"]))
    ctl = kit.make(api, tmp_path, ONE_ATTEMPT)
    told: list[tuple[str, str, str]] = []
    ctl.ctx = dataclasses.replace(ctl.ctx, notify=lambda *notice: told.append(notice))
    vresource.create(api, "vr-fail", names, [], source="test")
    vr = kit.drive(sim, ctl, "vr-fail")
    assert vr.status.phase is Phase.FAILED
    assert told == [("validationFailed", names[1], "validation vr-fail failed: the node stays gated")]  # once
    failed = [g for g in vr.status.testGroups if g.phase is Phase.FAILED]
    assert [(g.nodes, g.attempts[-1].failureReason) for g in failed] == [([names[1]], models.FailureReason.TEST_FAILED)]
    assert kit.state(api, names[0]) == (None, False, None, [])  # the healthy node is back
    assert kit.state(api, names[1]) == ("validation-failed", True, "validation", ["vr-fail"])
    selected = nodes.list_nodes(api, label_selector=f"{sessions.STATE_LABEL}=validation-failed")
    assert [n["metadata"]["name"] for n in selected] == [names[1]]
    vresource.delete(api, "vr-fail")
    ctl.reconcile_once()
    assert kit.state(api, names[1]) == (None, False, None, [])
    with pytest.raises(Exception, match="not found"):
        vresource.get(api, "vr-fail")


def test_a_later_passing_request_for_the_same_tests_clears_the_earlier_failure(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    sim.fabric.inject(fabric.parse_all([f"{names[0]}:gpu-dead"]))
    ctl = kit.make(api, tmp_path, ONE_ATTEMPT)
    vresource.create(api, "vr-first", [names[0]], ["dcgm-diag-test"], source="test")
    assert kit.drive(sim, ctl, "vr-first").status.phase is Phase.FAILED
    sim.fabric.clear_for_repair(names[0], ["gpu-dead"])
    vresource.create(api, "vr-again", [names[0]], ["dcgm-diag-test"], source="test")
    assert kit.drive(sim, ctl, "vr-again").status.phase is Phase.SUCCEEDED
    assert kit.state(api, names[0]) == (None, False, None, [])
    ctl.reconcile_once()  # the failed request, still there, does not gate the node again
    assert kit.state(api, names[0]) == (None, False, None, [])


def test_two_requests_holding_one_node_run_in_turn_and_only_the_last_lifts_the_gate(
    cluster: Any, tmp_path: Path
) -> None:
    sim, api, names = cluster
    ctl = kit.make(api, tmp_path)
    vresource.create(api, "vr-a", [names[0]], [], source="test")
    ctl.reconcile_once()
    vresource.create(api, "vr-b", names, [], source="test")
    ctl.reconcile_once()
    b, _ = vresource.get(api, "vr-b")
    assert b.status.phase is Phase.PENDING and f"{names[0]} runs vr-a" in str(b.status.message)
    assert kit.state(api, names[0]) == ("validating", True, "validation", ["vr-a", "vr-b"])
    assert kit.state(api, names[1]) == ("validation-pending", True, "validation", ["vr-b"])
    assert kit.drive(sim, ctl, "vr-a").status.phase is Phase.SUCCEEDED
    assert kit.state(api, names[0])[1:] == (True, "validation", ["vr-b"])  # vr-b still holds it
    assert kit.drive(sim, ctl, "vr-b").status.phase is Phase.SUCCEEDED
    assert [kit.state(api, n) for n in names] == [(None, False, None, [])] * 2


def test_a_cordon_someone_else_set_stays_and_a_drift_cordon_is_taken_over_and_lifted(
    cluster: Any, tmp_path: Path
) -> None:
    sim, api, names = cluster
    nodes.update(api, names[0], lambda n: not nodes.cordon(n))  # a person's cordon: no owner
    assert vservice.cordon(api, [names[1]], owner="drift") == [names[1]]
    assert kit.state(api, names[1]) == (None, True, "drift", [])
    ctl = kit.make(api, tmp_path, kit.FAST + "    newNodeValidation: {enabled: false}\n")  # else: a join cordon
    vresource.create(api, "vr-own", names, [], source="test")
    ctl.reconcile_once()
    assert kit.state(api, names[0])[1:3] == (True, None)
    assert kit.state(api, names[1])[1:3] == (True, "validation")
    assert kit.drive(sim, ctl, "vr-own").status.phase is Phase.SUCCEEDED
    assert kit.state(api, names[0]) == (None, True, None, [])  # still the person's
    assert kit.state(api, names[1]) == (None, False, None, [])


def test_a_failed_attempt_is_retried_within_the_providers_budget(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    sim.fabric.inject(fabric.parse_all([f"{names[0]}:gpu-dead"]))
    ctl = kit.make(
        api, tmp_path, ONE_ATTEMPT.replace("retries: 0, timeoutSeconds: 1800", "retries: 1, timeoutSeconds: 1800")
    )
    vresource.create(api, "vr-retry", [names[0]], [], source="test")
    vr = kit.drive(sim, ctl, "vr-retry", until=(Phase.RUNNING,))
    for _ in range(40):
        if len(vr.status.testGroups[0].attempts) == 2:
            break
        sim.advance(15)
        ctl.reconcile_once()
        vr, _ = vresource.get(api, "vr-retry")
    sim.fabric.clear_for_repair(names[0], ["gpu-dead"])  # repaired while the second attempt runs
    vr = kit.drive(sim, ctl, "vr-retry")
    attempts = vr.status.testGroups[0].attempts
    assert [(a.objectName, a.phase) for a in attempts] == [
        ("vr-retry-g0-a1", Phase.FAILED),
        ("vr-retry-g0-a2", Phase.SUCCEEDED),
    ]
    assert vr.status.phase is Phase.SUCCEEDED


def test_a_request_for_nodes_that_do_not_exist_succeeds_with_them_skipped(cluster: Any, tmp_path: Path) -> None:
    sim, api, _ = cluster
    ctl = kit.make(api, tmp_path)
    vresource.create(api, "vr-ghost", ["gone-1"], [], source="test")
    vr = kit.drive(sim, ctl, "vr-ghost")
    assert (vr.status.phase, vr.status.skipped.nodes) == (Phase.SUCCEEDED, ["gone-1"])


def test_an_unknown_test_name_fails_the_request_with_a_message_naming_it(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    ctl = kit.make(api, tmp_path)
    vresource.create(api, "vr-typo", names, ["nccl-all-reduse"], source="test")
    vr = kit.drive(sim, ctl, "vr-typo")
    assert vr.status.phase is Phase.FAILED and "unknown test 'nccl-all-reduse'" in str(vr.status.message)
    assert [kit.state(api, n) for n in names] == [(None, False, None, [])] * 2


def test_a_node_that_joins_cordoned_is_validated_and_its_join_cordon_lifted(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    nodes.update(api, names[1], lambda n: not nodes.cordon(n))  # provisioning joins it cordoned
    ctl = kit.make(api, tmp_path, kit.FAST + "    newNodeValidation: {tests: [dcgm-diag-test]}\n")
    notes = ctl.reconcile_once()
    [vr] = vresource.list_all(api)
    assert f"created {vr.name}" in notes and vr.name.startswith("validation-new-")
    assert (vr.spec.node_names(), vr.spec.tests, vr.metadata.labels[models.SOURCE_LABEL]) == (
        [names[1]],
        ["dcgm-diag-test"],
        "new-node",
    )
    assert kit.drive(sim, ctl, vr.name).status.phase is Phase.SUCCEEDED
    assert kit.state(api, names[1]) == (None, False, None, [])
    ctl.reconcile_once()
    assert len(vresource.list_all(api)) == 1  # marked: never asked twice


def test_a_new_node_opted_out_of_nvsentinel_keeps_its_cordon_and_gets_no_request(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster

    def cordon_by_hand(n: nodes.Node) -> bool:
        nodes.labels(n)["nvsentinel.dgxc.nvidia.com/managed"] = "false"
        return nodes.cordon(n) or True

    nodes.update(api, names[1], cordon_by_hand)
    ctl = kit.make(api, tmp_path, kit.FAST)
    assert ctl.reconcile_once() == []
    assert vresource.list_all(api) == []
    node = nodes.get(api, names[1])
    assert nodes.is_cordoned(node) and nodes.cordon_owner(node) is None


def test_a_node_deleted_while_its_test_runs_is_skipped_and_the_rest_passes(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    ctl = kit.make(api, tmp_path)
    vresource.create(api, "vr-gone", names, [], source="test")
    kit.drive(sim, ctl, "vr-gone", until=(Phase.RUNNING,))
    rest.delete(api, nodes.path(names[1]))
    vr = kit.drive(sim, ctl, "vr-gone")
    assert (vr.status.phase, vr.status.skipped.nodes) == (Phase.SUCCEEDED, [names[1]])
    gone = vr.status.testGroups[1]
    assert (gone.attempts[0].failureReason, gone.nodes) == (models.FailureReason.NODE_DELETED, [])
    assert kit.state(api, names[0]) == (None, False, None, [])
