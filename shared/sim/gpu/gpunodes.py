"""GPU node objects as a kubelet, the GPU operator's feature discovery and a cloud would label them.

The label names are a contract with the programs (certification reads product, count and clique;
snapshot reads driver, kernel and instance type; isolation reads the rack):

- ``nvidia.com/gpu.present``, ``.product``, ``.count``, ``.memory``, ``.family``, ``.clique``,
  ``nvidia.com/cuda.driver.major|minor|rev`` and ``nvidia.com/cuda.runtime.major|minor``;
- ``topology.kubernetes.io/zone``, ``topology.kubernetes.io/region``, and the rack in
  ``topology.kubernetes.io/rack`` (no upstream standard exists; this one is ours);
- ``kubernetes.io/hostname``, ``node.kubernetes.io/instance-type``.

A node of a profile run on a managed service (``eks/h100``, :mod:`.providers`) carries that
service's providerID, labels, zone and region, instance type and NIC device resources instead of
the generic ones; GPU feature discovery labels ``nvidia.com/gpu.clique`` only where NVLink spans
nodes (GB200), as ``<cluster UUID>.<clique id>``.
"""

from __future__ import annotations

from typing import Any

from shared.sim.apiserver import discovery
from shared.sim.gpu import fabric, providers

RACK_LABEL = "topology.kubernetes.io/rack"
CLIQUE_LABEL = "nvidia.com/gpu.clique"
GPU_RESOURCE = "nvidia.com/gpu"
ZONE = "zone-a"
REGION = "region-1"
KERNEL = "6.8.0-60-generic"
OS_IMAGE = "Ubuntu 24.04.2 LTS"
RUNTIME = "containerd://1.7.27"


def driver_labels(driver: str, cuda: str = fabric.DEFAULT_CUDA) -> dict[str, str]:
    """GPU feature discovery's driver and CUDA labels for driver version ``570.158.01``."""
    parts = ([*driver.split("."), "", "", ""])[:3]
    cuda_major, _, cuda_minor = cuda.partition(".")
    return {
        "nvidia.com/cuda.driver.major": parts[0],
        "nvidia.com/cuda.driver.minor": parts[1],
        "nvidia.com/cuda.driver.rev": parts[2],
        "nvidia.com/cuda.runtime.major": cuda_major,
        "nvidia.com/cuda.runtime.minor": cuda_minor or "0",
    }


def labels(node: fabric.Node) -> dict[str, str]:
    provider, machine = node.profile.provider, node.profile.machine
    if provider is not None and machine is not None:
        return _service_labels(node, provider, machine)
    gpu = node.profile.gpu
    return {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": node.profile.instanceType,
        "topology.kubernetes.io/zone": ZONE,
        "topology.kubernetes.io/region": REGION,
        RACK_LABEL: node.rack,
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": gpu.product,
        "nvidia.com/gpu.count": str(gpu.count),
        "nvidia.com/gpu.memory": str(gpu.memoryMiB),
        "nvidia.com/gpu.family": gpu.family,
        "nvidia.com/gpu.machine": node.profile.instanceType,
        CLIQUE_LABEL: node.clique,
        **driver_labels(node.driver),
    }


def _gfd_labels(node: fabric.Node, machine: str | None) -> dict[str, str]:
    gpu = node.profile.gpu
    found = {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": gpu.product,
        "nvidia.com/gpu.count": str(gpu.count),
        "nvidia.com/gpu.memory": str(gpu.memoryMiB),
        "nvidia.com/gpu.family": gpu.family,
        **driver_labels(node.driver),
    }
    if machine:
        found["nvidia.com/gpu.machine"] = machine
    return found


def _service_labels(node: fabric.Node, provider: providers.Provider, machine: providers.Machine) -> dict[str, str]:
    cloud = providers.identity(provider, machine, name=node.name, index=node.index, rack=node.rack)
    found = {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "arm64" if node.profile.cliquePerRack else "amd64",
        **cloud.labels,
        RACK_LABEL: node.rack,
        **_gfd_labels(node, machine.gpuMachine),
    }
    if node.profile.cliquePerRack:
        found[CLIQUE_LABEL] = providers.clique_id(provider.service, node.rack)
    return found


def provider_id(node: fabric.Node) -> str:
    provider, machine = node.profile.provider, node.profile.machine
    if provider is None or machine is None:
        return f"sim://{ZONE}/{node.name}"
    return providers.identity(provider, machine, name=node.name, index=node.index, rack=node.rack).provider_id


def ready_condition(now: str, *, ready: bool) -> dict[str, str]:
    if ready:
        return {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
    return {
        "type": "Ready",
        "status": "False",
        "reason": "KubeletNotReady",
        "message": "node is rebooting",
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }


def conditions(now: str) -> list[dict[str, str]]:
    quiet = [
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ]
    found = [
        {"type": t, "status": "False", "reason": r, "message": m, "lastHeartbeatTime": now, "lastTransitionTime": now}
        for t, r, m in quiet
    ]
    return [*found, ready_condition(now, ready=True)]


def node_object(node: fabric.Node, now: str) -> dict[str, Any]:
    """The Node a kubelet with the NVIDIA device plugin registers."""
    machine = node.profile.machine
    devices = machine.resources if machine is not None else {}
    capacity = {**node.profile.capacity, **devices, GPU_RESOURCE: str(node.profile.gpu.count)}
    allocatable = dict(capacity)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": node.name,
            "labels": labels(node),
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {"providerID": provider_id(node)},
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": conditions(now),
            "addresses": [
                {"type": "InternalIP", "address": f"10.1.{node.index // 250}.{node.index % 250 + 1}"},
                {"type": "Hostname", "address": node.name},
            ],
            "nodeInfo": {
                "kubeletVersion": discovery.VERSION["gitVersion"],
                "kubeProxyVersion": discovery.VERSION["gitVersion"],
                "osImage": OS_IMAGE,
                "architecture": labels(node)["kubernetes.io/arch"],
                "operatingSystem": "linux",
                "containerRuntimeVersion": RUNTIME,
                "kernelVersion": KERNEL,
                "bootID": boot_id(node),
                "machineID": f"machine-{node.name}",
                "systemUUID": f"uuid-{node.name}",
            },
        },
    }


def boot_id(node: fabric.Node) -> str:
    """Changes with every reboot (nvsentinel clears GpuXidError when it does)."""
    return f"boot-{node.name}-{node.boot}"
