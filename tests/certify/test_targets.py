"""Which nodes a certification targets: selectors, and cordoned nodes left out unless opted in.

A cordoned node's pods never schedule (nothing tolerates the cordon by default), so a group holding
one would wait until its job timeout; the lifecycle's gated nodes opt in with a selector on
``node.kubernetes.io/unschedulable``. Label targets (nodeSelector, matchExpressions) match as the
scheduler matches them, for any labels (a property test); an unknown operator is refused.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import errors
from shared.certify import models, render


def node(
    name: str,
    *,
    cordoned: bool = False,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.count": "8", **(labels or {})}},
        "spec": {"unschedulable": cordoned, "taints": taints or []},
    }


NODES = [
    node("n1"),
    node("n2", cordoned=True),
    node("n3", labels={"pool": "b"}),
    node("n4", cordoned=True, labels={"pool": "b"}),
]


def names(target: models.TargetSpec) -> list[str]:
    return [t.name for t in render.target_nodes(NODES, target)]


def test_cordoned_nodes_are_left_out_and_named() -> None:
    target = models.TargetSpec()
    assert names(target) == ["n1", "n3"]
    assert render.cordoned_left_out(NODES, target) == ["n2", "n4"]


def test_a_selector_on_the_cordon_taint_opts_cordoned_nodes_in_and_only_them() -> None:
    target = models.TargetSpec(taintSelectors=[models.TaintSelector(key=render.UNSCHEDULABLE_TAINT)])
    assert names(target) == ["n2", "n4"]
    assert render.cordoned_left_out(NODES, target) == []


def test_other_selectors_still_apply_to_the_cordoned_nodes_named() -> None:
    target = models.TargetSpec(nodeSelector={"pool": "b"})
    assert names(target) == ["n3"]
    assert render.cordoned_left_out(NODES, target) == ["n4"]


OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
KEYS = st.sampled_from(["pool", "zone", "nvidia.com/gpu.product"])
VALUES = st.sampled_from(["a", "b", "c", ""])


def _scheduler_matches(labels: dict[str, str], target: models.TargetSpec) -> bool:
    """A node's labels against nodeSelector and matchExpressions as the scheduler reads them
    (k8s.io/component-helpers/scheduling/corev1/nodeaffinity: ``NodeSelectorRequirementsAsSelector``
    turns each into a label requirement; a missing label satisfies only NotIn and DoesNotExist)."""
    if any(labels.get(k) != v for k, v in target.nodeSelector.items()):
        return False
    for req in target.matchExpressions:
        present = req.key in labels
        ok = {
            "In": present and labels[req.key] in req.values,
            "NotIn": not present or labels[req.key] not in req.values,
            "Exists": present,
            "DoesNotExist": not present,
        }[req.operator]
        if not ok:
            return False
    return True


@given(
    labels=st.dictionaries(KEYS, VALUES, max_size=3),
    selector=st.dictionaries(KEYS, VALUES, max_size=2),
    expressions=st.lists(
        st.builds(
            models.NodeSelectorRequirement,
            key=KEYS,
            operator=st.sampled_from(OPERATORS),
            values=st.lists(VALUES, max_size=3),
        ),
        max_size=3,
    ),
)
def test_label_targets_match_as_the_scheduler_matches_them(
    labels: dict[str, str], selector: dict[str, str], expressions: list[models.NodeSelectorRequirement]
) -> None:
    target = models.TargetSpec(nodeSelector=selector, matchExpressions=expressions)
    expected = ["n1"] if _scheduler_matches(labels, target) else []
    assert [t.name for t in render.target_nodes([node("n1", labels=labels)], target)] == expected


def test_an_unknown_operator_is_invalid_input_once_a_node_reaches_it() -> None:
    target = models.TargetSpec(
        nodeNames=["n3"], matchExpressions=[models.NodeSelectorRequirement(key="pool", operator="Gt", values=["1"])]
    )
    with pytest.raises(errors.InvalidInput, match="unknown operator 'Gt'"):
        render.target_nodes(NODES, target)
    assert render.target_nodes(NODES, target.model_copy(update={"nodeNames": ["absent"]})) == []
