"""A recipe's node pins, checked node by node over a snapshot's per-node lists.

Covers: node ranges fold consecutive numbers only (same prefix and width) and sort numerically;
the driver pin comes from the GPU Operator's merged values and is absent when the operator does
not manage the driver; an exact driver pin names the nodes of each wrong value; a version
constraint on the kernel names only the nodes below it, and a kernel that is no version fails with
the reason; OS.release.ID/VERSION_ID are read off each node's OS image; GPU-only facts ignore CPU
nodes; a snapshot without per-node lists gives no verdict (the aggregate check applies).
"""

from __future__ import annotations

from typing import Any

import pytest

from shared.recipe import catalog, models
from shared.recipe.snapshot import Measurement, Snapshot, Subtype
from shared.snapshot import pins


def _snapshot(**subtypes: dict[str, str]) -> Snapshot:
    return Snapshot(
        measurements=[
            Measurement(
                type="NodeTopology",
                subtypes=[Subtype(subtype=name.replace("_", "-"), data=dict(data)) for name, data in subtypes.items()],
            )
        ]
    )


GPU_LABEL = {"nvidia.com/gpu.present=true": "gpu-01,gpu-02,gpu-03"}


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ([f"node-{i:03d}" for i in range(1, 17)], "node-001..node-016"),
        (["node-007", "node-003", "node-008", "node-009"], "node-003, node-007..node-009"),
        (["node-9", "node-10", "node-11"], "node-9..node-11"),
        (["node-09", "node-10", "a"], "a, node-09..node-10"),
        (["cpu-1", "gpu-2"], "cpu-1, gpu-2"),
    ],
    ids=["run", "gap", "numeric-sort", "mixed", "prefixes"],
)
def test_node_ranges_fold_only_consecutive_numbers(names: list[str], expected: str) -> None:
    assert pins.node_range(names) == expected


def _recipe(**gpu_operator: Any) -> models.RecipeResult:
    return models.RecipeResult.model_validate(
        {
            "metadata": {"version": "t"},
            "componentRefs": [{"name": "gpu-operator", "namespace": "gpu-operator", **gpu_operator}],
        }
    )


def test_the_driver_pin_is_the_gpu_operators_merged_driver_version() -> None:
    cat = catalog.embedded()
    assert pins.pinned_driver(_recipe(valuesFile="components/gpu-operator/values.yaml"), cat) == "580.105.08"
    assert pins.pinned_driver(_recipe(overrides={"driver": {"version": "575.51.03"}}), cat) == "575.51.03"
    assert pins.pinned_driver(_recipe(overrides={"driver": {"enabled": False, "version": "575.51.03"}}), cat) is None
    assert pins.pinned_driver(models.RecipeResult(metadata=models.ResultMetadata(version="t")), cat) is None


def test_an_exact_driver_pin_names_the_nodes_of_each_wrong_value() -> None:
    snap = _snapshot(driver={"570.158.01": "gpu-01,gpu-03", "580.105.08": "gpu-02", "575.51.03": "gpu-04"})
    verdict = pins.evaluate(pins.Pin(pins.DRIVER_PATH, "580.105.08", exact=True), snap)
    assert verdict is not None and not verdict.passed and verdict.checked == 4
    assert verdict.nodes == ["gpu-01", "gpu-03", "gpu-04"]
    assert verdict.message() == (
        "driver 570.158.01 on gpu-01, gpu-03 does not match the recipe's 580.105.08; "
        "driver 575.51.03 on gpu-04 does not match the recipe's 580.105.08"
    )


def test_a_kernel_constraint_names_only_the_nodes_below_it_and_says_why_a_value_is_no_version() -> None:
    snap = _snapshot(kernel={"6.8.0-60-generic": "gpu-01,gpu-02", "6.5.0-1019-aws": "gpu-03", "custom": "gpu-04"})
    verdict = pins.evaluate(pins.Pin("K8s.node.kernel-version", ">= 6.8"), snap)
    assert verdict is not None and verdict.nodes == ["gpu-03", "gpu-04"]
    assert [(m.value, m.nodes, m.error is not None) for m in verdict.misses] == [
        ("6.5.0-1019-aws", ["gpu-03"], False),
        ("custom", ["gpu-04"], True),
    ]
    assert verdict.message().startswith(
        "kernel 6.5.0-1019-aws on gpu-03 does not satisfy the recipe's K8s.node.kernel-version >= 6.8; "
        "kernel custom on gpu-04: "
    )


def test_os_release_is_read_off_each_gpu_nodes_os_image() -> None:
    snap = _snapshot(
        label=GPU_LABEL,
        os_image={"Ubuntu 24.04.2 LTS": "gpu-01,gpu-02", "Ubuntu 22.04.5 LTS": "gpu-03,cpu-01"},
    )
    version = pins.evaluate(pins.Pin("OS.release.VERSION_ID", "24.04"), snap)
    assert version is not None and version.nodes == ["gpu-03"] and version.checked == 3  # cpu-01 does not count
    same_id = pins.evaluate(pins.Pin("OS.release.ID", "ubuntu"), snap)
    assert same_id is not None and same_id.passed
    image = pins.evaluate(pins.Pin("K8s.node.os-image", "Ubuntu 24.04.2 LTS"), snap)
    assert image is not None and image.nodes == ["cpu-01", "gpu-03"]  # K8s.node.* counts every node


def test_a_snapshot_without_per_node_lists_gives_no_verdict() -> None:
    assert pins.evaluate(pins.Pin(pins.DRIVER_PATH, "580.105.08", exact=True), _snapshot(kernel={"6.8": "a"})) is None
    empty = pins.evaluate(pins.Pin(pins.DRIVER_PATH, "580.105.08", exact=True), _snapshot(driver={}))
    assert empty is not None and not empty.passed and empty.message() == "no node reports its driver"
