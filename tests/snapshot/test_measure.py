"""Measuring fetched objects: aggregates for constraints, pools, value → nodes, and determinism.

Covers: OS release parsed from the kubelet's osImage; driver and CUDA versions from GPU feature
discovery labels; mixed values joined so a constraint must hold for each; timestamps and hostnames
left out; Helm releases, workload images and CRD states; no volatile data, so the same objects in
another order give the same snapshot.
"""

from __future__ import annotations

import random

import pytest

from shared.recipe import constraints
from shared.snapshot import collect, nodes
from tests.snapshot import nodes_fixture as fx
from tests.snapshot.test_helm import secret


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("Ubuntu 24.04.1 LTS", ("ubuntu", "24.04")),
        ("Ubuntu 22.04.5 LTS", ("ubuntu", "22.04")),
        ("Red Hat Enterprise Linux 9.4 (Plow)", ("rhel", "9.4")),
        ("Amazon Linux 2023.6.20250101", ("amzn", "2023")),
        ("Container-Optimized OS from Google", ("cos", "")),
    ],
)
def test_os_release_is_read_from_the_os_image(image: str, expected: tuple[str, str]) -> None:
    assert nodes.os_release(image) == expected


DRIVER_DAEMONSET = {
    "metadata": {"name": "nvidia-driver-daemonset", "namespace": "gpu-operator"},
    "spec": {"template": {"spec": {"containers": [{"name": "driver", "image": "nvcr.io/nvidia/driver:580"}]}}},
}


def _measure(node_list: list[dict]) -> dict[str, str]:  # type: ignore[type-arg]
    from shared.snapshot import diff

    snap = collect.measure(
        version={"gitVersion": "v1.33.5-eks-3025e55", "platform": "linux/amd64"},
        node_list=node_list,
        secrets=[secret("gpu-operator", "gpu-operator", 2, "v25.10.1")],
        workloads={"DaemonSet": [DRIVER_DAEMONSET]},
        crds=[
            {
                "metadata": {"name": "clusterpolicies.nvidia.com"},
                "spec": {"versions": [{"name": "v1", "served": True}]},
                "status": {"conditions": [{"type": "Established", "status": "True"}]},
            }
        ],
    )
    return diff.flatten(snap)


def test_gpu_nodes_give_the_values_recipes_constrain() -> None:
    flat = _measure([fx.gpu_node("node-000"), fx.gpu_node("node-001"), fx.cpu_node("sys-0")])
    assert flat["OS.release.ID"] == "ubuntu"
    assert flat["OS.release.VERSION_ID"] == "24.04"
    assert flat["OS.sysctl./proc/sys/kernel/osrelease"] == "6.8.0-1024-aws"
    assert flat["GPU.smi.driver"] == "580.105.08"
    assert flat["GPU.smi.cuda-version"] == "13.0"
    assert flat["GPU.smi.gpu.model"] == "NVIDIA-H100-80GB-HBM3"
    assert flat["GPU.topology.gpus"] == "16"
    assert flat["K8s.server.version"] == "v1.33.5-eks-3025e55"
    assert flat["K8s.helm.gpu-operator/gpu-operator.version"] == "v25.10.1"
    assert flat["K8s.image.gpu-operator/DaemonSet/nvidia-driver-daemonset/driver"] == "nvcr.io/nvidia/driver:580"
    assert flat["GPU.driver.daemonset.image"] == "nvcr.io/nvidia/driver:580"
    assert flat["K8s.crd.clusterpolicies.nvidia.com"] == "established"
    assert flat["K8s.nodepool.gpu-a/nodes"] == "2"
    assert flat["K8s.nodepool.sys/os-image"] == "Amazon Linux 2023.6.20250101"
    assert flat["NodeTopology.kernel.6.8.0-1024-aws"] == "node-000,node-001"


def test_a_node_with_another_kernel_is_named_and_fails_the_constraint() -> None:
    flat = _measure([fx.gpu_node("node-000"), fx.gpu_node("node-001", kernel="6.5.0-1019-aws")])
    kernel = flat["OS.sysctl./proc/sys/kernel/osrelease"]
    assert kernel == "6.5.0-1019-aws | 6.8.0-1024-aws"
    assert not constraints.evaluate(">= 6.8", kernel).passed
    assert flat["NodeTopology.kernel.6.5.0-1019-aws"] == "node-001"


def test_volatile_labels_and_hostnames_are_not_measured() -> None:
    flat = _measure([fx.gpu_node("node-000")])
    assert not any("timestamp" in path or "hostname" in path or "resourceVersion" in path for path in flat)


def test_taints_are_grouped_with_their_nodes() -> None:
    taint = {"key": "nvidia.com/gpu-unhealthy", "value": "xid-79", "effect": "NoSchedule"}
    flat = _measure([fx.gpu_node("node-000", taints=[taint]), fx.gpu_node("node-001")])
    assert flat["NodeTopology.taint.nvidia.com/gpu-unhealthy=xid-79:NoSchedule"] == "node-000"


def test_the_same_objects_in_any_order_give_the_same_snapshot() -> None:
    node_list = [fx.gpu_node(f"node-{i:03d}", clique=f"rack-{i % 3}") for i in range(12)] + [fx.cpu_node("sys-0")]
    first = _measure(node_list)
    shuffled = list(node_list)
    random.Random(7).shuffle(shuffled)
    assert _measure(shuffled) == first
