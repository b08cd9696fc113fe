"""Node objects shaped like a GPU cluster's, for snapshot tests."""

from __future__ import annotations

from typing import Any


def gpu_node(
    name: str,
    *,
    kernel: str = "6.8.0-1024-aws",
    driver: tuple[str, str, str] = ("580", "105", "08"),
    pool: str = "gpu-a",
    product: str = "NVIDIA-H100-80GB-HBM3",
    clique: str = "rack-0",
    taints: list[dict[str, str]] | None = None,
    os_image: str = "Ubuntu 24.04.1 LTS",
) -> dict[str, Any]:
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/arch": "amd64",
        "eks.amazonaws.com/nodegroup": pool,
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.clique": clique,
        "nvidia.com/cuda.driver.major": driver[0],
        "nvidia.com/cuda.driver.minor": driver[1],
        "nvidia.com/cuda.driver.rev": driver[2],
        "nvidia.com/cuda.runtime.major": "13",
        "nvidia.com/cuda.runtime.minor": "0",
        "nvidia.com/gfd.timestamp": "1764400000",
    }
    return {
        "metadata": {"name": name, "labels": labels, "resourceVersion": "17"},
        "spec": {"taints": taints or []},
        "status": {
            "capacity": {"nvidia.com/gpu": "8"},
            "nodeInfo": {
                "kernelVersion": kernel,
                "osImage": os_image,
                "containerRuntimeVersion": "containerd://1.7.27",
                "kubeletVersion": "v1.33.5-eks-3025e55",
            },
        },
    }


def cpu_node(name: str) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "eks.amazonaws.com/nodegroup": "sys"}
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {
            "nodeInfo": {
                "kernelVersion": "6.1.0-amzn",
                "osImage": "Amazon Linux 2023.6.20250101",
                "containerRuntimeVersion": "containerd://1.7.27",
                "kubeletVersion": "v1.33.5-eks-3025e55",
            }
        },
    }
