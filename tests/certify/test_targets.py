"""Which nodes a certification targets: selectors, and cordoned nodes left out unless opted in.

A cordoned node's pods never schedule (nothing tolerates the cordon by default), so a group holding
one would wait until its job timeout; the lifecycle's gated nodes opt in with a selector on
``node.kubernetes.io/unschedulable``.
"""

from __future__ import annotations

from typing import Any

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
