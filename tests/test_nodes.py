"""shared.nodes: idempotent, conflict-safe node actions that report what was already there.

Covers: a no-op mutation writes nothing; a cordon or taint someone else set is reported as
pre-existing; removing a taint removes exactly that taint; a write retries through 409s.
"""

from __future__ import annotations

from typing import Any

from shared import nodes


def test_a_mutation_that_changes_nothing_writes_nothing(sim: Any, api_client: Any) -> None:
    (name,) = sim.add_nodes(1)
    before = nodes.get(api_client, name)["metadata"]["resourceVersion"]
    after = nodes.update(api_client, name, lambda n: nodes.set_map(nodes.labels(n), {}))
    assert after["metadata"]["resourceVersion"] == before


def test_existing_cordons_and_taints_are_reported_as_pre_existing() -> None:
    node: dict[str, Any] = {
        "metadata": {"name": "n"},
        "spec": {"unschedulable": True, "taints": [{"key": "a", "effect": "NoSchedule"}]},
    }
    assert nodes.cordon(node) is True
    assert nodes.add_taint(node, "a", "", "NoSchedule") is True
    assert nodes.add_taint(node, "b", "x", "NoExecute", added="t") is False


def test_removing_a_taint_removes_only_that_key_value_and_effect() -> None:
    node: dict[str, Any] = {
        "spec": {
            "taints": [
                {"key": "a", "value": "1", "effect": "NoSchedule"},
                {"key": "a", "value": "2", "effect": "NoSchedule"},
            ]
        }
    }
    assert nodes.remove_taint(node, "a", "1", "NoSchedule") is True
    assert node["spec"]["taints"] == [{"key": "a", "value": "2", "effect": "NoSchedule"}]


def test_a_cordon_goes_through_conflicts(sim: Any, api_client: Any) -> None:
    (name,) = sim.add_nodes(1)
    sim.faults.inject(409, verb="update", resource="nodes", count=3)
    node = nodes.update(api_client, name, lambda n: not nodes.cordon(n))
    assert node["spec"]["unschedulable"] is True
