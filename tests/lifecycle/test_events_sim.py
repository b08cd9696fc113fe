"""Events of the validation lifecycle on the simulated cluster, in virtual time.

Covers: a request that passes records ``ValidationStarted`` (nodes, tests, groups) and
``ValidationPassed`` on the ValidationRequest (cluster-scoped: its Events are in ``default``, with its
real uid) and ``ValidationPassed`` on each node whose gate is lifted; a request that fails on one GPU
records a Warning ``ValidationFailed`` on the request and on the failed node (which stays gated),
``ValidationPassed`` only on the healthy one, and deleting the request returns the failed node with a
``NodeReturned`` saying so; redone passes record nothing twice; a node a person cordoned is told
its cordon stays when the gate's own taint is lifted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import nodes
from shared.kube import rest
from shared.lifecycle import resource as vresource
from shared.sim.gpu import fabric
from tests.lifecycle import kit
from tests.lifecycle.test_lifecycle_sim import ONE_ATTEMPT


@pytest.fixture()
def cluster(gpu_sim: Any, api_client: Any) -> tuple[Any, Any, list[str]]:
    return gpu_sim, api_client, gpu_sim.add_gpu_nodes(2)


def about(api: Any, kind: str, name: str) -> list[tuple[str, str, str]]:
    """(type, reason, message) of the Events about one object, oldest first."""
    found = sorted(
        (
            e
            for e in rest.list_items(api, rest.core_path("events", "default"))
            if e["involvedObject"]["kind"] == kind and e["involvedObject"]["name"] == name
        ),
        key=lambda e: e["metadata"]["name"],
    )
    return [(e["type"], e["reason"], e["message"]) for e in found]


def test_a_passing_request_records_its_start_its_verdict_and_each_node_returned(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    ctl = kit.make(api, tmp_path)
    vresource.create(api, "vr-pass", names, [], source="test")
    kit.drive(sim, ctl, "vr-pass")
    ctl.reconcile_once()  # a redone pass records nothing again
    assert about(api, "ValidationRequest", "vr-pass") == [
        ("Normal", "ValidationStarted", f"validating {names[0]}, {names[1]} with dcgm-diag-test in 2 group(s)"),
        ("Normal", "ValidationPassed", f"every test passed on {names[0]}, {names[1]}"),
    ]
    for name in names:
        assert about(api, "Node", name) == [
            ("Normal", "ValidationPassed", "validation vr-pass passed: scheduling gate lifted")
        ]
    uid = vresource.get(api, "vr-pass")[1]["uid"]
    references = [
        e["involvedObject"]
        for e in rest.list_items(api, rest.core_path("events", "default"))
        if e["involvedObject"]["kind"] == "ValidationRequest"
    ]
    assert {(r["uid"], r["apiVersion"], r.get("namespace")) for r in references} == {
        (uid, "nvsentinel.nvidia.com/v1alpha1", None)
    }


def test_a_failed_node_gets_a_warning_and_stays_gated_until_the_request_is_deleted(
    cluster: Any, tmp_path: Path
) -> None:
    sim, api, names = cluster
    sim.fabric.inject(fabric.parse_all([f"{names[1]}:gpu-dead[3]"]))
    ctl = kit.make(api, tmp_path, ONE_ATTEMPT)
    vresource.create(api, "vr-fail", names, [], source="test")
    kit.drive(sim, ctl, "vr-fail")
    ctl.reconcile_once()
    [started, verdict] = about(api, "ValidationRequest", "vr-fail")
    assert started[1] == "ValidationStarted"
    assert verdict[:2] == ("Warning", "ValidationFailed")
    assert verdict[2].startswith("failed: ") and names[1] in verdict[2]
    assert about(api, "Node", names[0]) == [
        ("Normal", "ValidationPassed", "validation vr-fail passed: scheduling gate lifted")
    ]
    assert about(api, "Node", names[1]) == [
        ("Warning", "ValidationFailed", "validation vr-fail failed: the node stays gated")
    ]
    assert nodes.is_cordoned(nodes.get(api, names[1]))
    vresource.delete(api, "vr-fail")
    ctl.reconcile_once()
    assert about(api, "Node", names[1])[-1] == (
        "Normal",
        "NodeReturned",
        "validation vr-fail was deleted: scheduling gate lifted",
    )


TAINT_GATE = kit.FAST + (
    "    newNodeValidation:\n      enabled: false\n"
    "    schedulingGate:\n      taints: [{key: nvsentinel.nvidia.com/validating, value: 'true'}]\n"
)
"""The gate taints as well as cordons, so it holds something of its own on a node a person cordoned.
New-node validation is off: a new node's cordon is its join cordon, which the lifecycle takes over
(``triggers.new_nodes``); without it a cordon a person set stays a person's."""


def test_a_node_a_person_cordoned_passes_and_its_event_says_the_cordon_stays(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    nodes.update(api, names[0], lambda node: not nodes.cordon(node))  # a person: kubectl cordon
    ctl = kit.make(api, tmp_path, TAINT_GATE)
    vresource.create(api, "vr-held", names, [], source="test")
    kit.drive(sim, ctl, "vr-held")
    assert about(api, "Node", names[0]) == [
        (
            "Normal",
            "ValidationPassed",
            "validation vr-held passed: scheduling gate lifted; the node stays cordoned (not by nvsentinel)",
        )
    ]
    assert nodes.is_cordoned(nodes.get(api, names[0])) and nodes.cordon_owner(nodes.get(api, names[0])) is None
    assert about(api, "Node", names[1]) == [
        ("Normal", "ValidationPassed", "validation vr-held passed: scheduling gate lifted")
    ]
    assert not nodes.is_cordoned(nodes.get(api, names[1]))
