"""GPU nodes as each managed service registers them, read over HTTP with the official client.

Covers: per service, the providerID maps to the platform upstream's detection derives from it
(the table in research/nvcre.md "Platform and GPU inference from nodes", re-implemented here),
the instance type, zone and region labels, and the NIC device resources NVCRE's per-platform
overrides request (research/workloads.md §4.6) in capacity and allocatable; GB200 nodes carry a
GPU clique ``<cluster uuid>.<id>`` shared by the rack (and arm64), H100 nodes none; without a
service nodes are as before; every provider file loads and covers every GPU profile;
``serve --service`` labels the nodes it creates and refuses an unknown service.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from shared.kube import client
from shared.sim import SimServer
from shared.sim.gpu import providers, stages

INSTANCE = "node.kubernetes.io/instance-type"
EXPECTED = {
    # service: (instance type of h100, NIC resources on it, platform)
    "eks": ("p5.48xlarge", {"vpc.amazonaws.com/efa": "32"}, "aws"),
    "gke": ("a3-megagpu-8g", {}, "gcp"),
    "aks": ("Standard_ND96isr_H100_v5", {"nvidia.com/mlnxnics": "8"}, "azure"),
    "oke": ("BM.GPU.H100.8", {"nvidia.com/mlnxnics": "8"}, "oci"),
    "kind": (None, {}, "onprem"),
}


_SCHEMES = {"aws://": "aws", "gce://": "gcp", "azure://": "azure", "ocid1.": "oci"}


def _platform(provider_id: str, allocatable: dict[str, str], labels: dict[str, str]) -> str:
    """Upstream NVCRE's platform detection (``pkg/controller/workflow_detect.go``), as documented."""
    found = next((p for prefix, p in _SCHEMES.items() if provider_id.startswith(prefix)), None)
    if found is not None:
        return found
    if provider_id.startswith("openstack://") and "nscale.com/rdmashare" in allocatable:
        return "nscale"
    if provider_id.startswith("kubevirt://") and "node-role.together.ai/worker" in labels:
        return "togetherai"
    return "onprem"


def _nodes(api_client: Any) -> list[Any]:
    return sorted(k8s.CoreV1Api(api_client).list_node().items, key=lambda n: n.metadata.name)


@pytest.mark.parametrize("service", sorted(EXPECTED))
def test_h100_nodes_look_as_the_service_registers_them(gpu_sim: SimServer, api_client: Any, service: str) -> None:
    gpu_sim.add_gpu_nodes(2, gpu=f"{service}/h100")
    instance, nics, platform = EXPECTED[service]
    nodes = _nodes(api_client)
    ids = {n.spec.provider_id for n in nodes}
    assert len(ids) == 2, "every node has its own provider ID"
    for node in nodes:
        labels = node.metadata.labels
        assert _platform(node.spec.provider_id, node.status.allocatable, labels) == platform
        assert labels.get(INSTANCE) == instance
        assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
        assert "nvidia.com/gpu.clique" not in labels  # no multi-node NVLink on H100
        for key, value in nics.items():
            assert node.status.capacity[key] == value and node.status.allocatable[key] == value
        assert node.status.allocatable["nvidia.com/gpu"] == "8"
    provider = providers.load(service)
    zones = {n.metadata.labels.get("topology.kubernetes.io/zone") for n in nodes}
    assert zones == {provider.zone}


def test_eks_ids_and_topology_follow_the_clouds_formats(gpu_sim: SimServer, api_client: Any) -> None:
    gpu_sim.add_gpu_nodes(4, racks=2, gpu="eks/h100")
    nodes = _nodes(api_client)
    for node in nodes:
        assert re.fullmatch(r"aws:///us-east-1a/i-0[0-9a-f]{16}", node.spec.provider_id)
        assert node.metadata.labels["topology.kubernetes.io/region"] == "us-east-1"
    layer = [n.metadata.labels["topology.k8s.aws/network-node-layer-3"] for n in nodes]
    assert layer[0] == layer[1] != layer[2] == layer[3], "one network node per rack"


def test_gb200_nodes_share_a_clique_per_rack(gpu_sim: SimServer, api_client: Any) -> None:
    gpu_sim.add_gpu_nodes(4, racks=2, gpu="aks/gb200")
    nodes = _nodes(api_client)
    cliques = [n.metadata.labels["nvidia.com/gpu.clique"] for n in nodes]
    assert all(re.fullmatch(r"[0-9a-f-]{36}\.\d+", c) for c in cliques)
    assert cliques[0] == cliques[1] != cliques[2] == cliques[3]
    assert {n.metadata.labels["kubernetes.io/arch"] for n in nodes} == {"arm64"}
    assert {n.status.node_info.architecture for n in nodes} == {"arm64"}
    assert nodes[0].metadata.labels[INSTANCE] == "Standard_ND128isr_NDR_GB200_v6"


def test_without_a_service_nodes_are_the_generic_simulated_ones(gpu_sim: SimServer, api_client: Any) -> None:
    gpu_sim.add_gpu_nodes(1)
    (node,) = _nodes(api_client)
    assert node.spec.provider_id.startswith("sim://")
    assert node.metadata.labels[INSTANCE] == "p5.48xlarge"
    assert node.metadata.labels["nvidia.com/gpu.clique"] == node.metadata.name
    assert "vpc.amazonaws.com/efa" not in node.status.allocatable


@pytest.mark.parametrize("service", providers.names())
def test_every_provider_file_loads_and_covers_every_gpu_profile(service: str) -> None:
    provider = providers.load(service)
    assert set(provider.machines) == set(stages.profile_names())
    for name in stages.profile_names():
        profile = stages.profile(f"{service}/{name}")
        assert profile.provider is provider and profile.machine is provider.machines[name]
        for resource in profile.machine.network.resources:
            assert resource in profile.machine.resources, f"{service}/{name}: {resource} is asked for but not offered"


def test_an_unknown_service_or_machine_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown service 'ecs'"):
        stages.profile("ecs/h100")
    with pytest.raises(ValueError, match="service eks has no machine for GPU profile 'b300'"):
        stages.profile("eks/b300")


def test_serve_with_a_service_labels_its_nodes(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    command = [sys.executable, "-m", "shared.sim", "serve", "--port", "0", "--kubeconfig-out", str(config)]
    process = subprocess.Popen(
        [*command, "--nodes", "2", "--service", "oke"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("ready https://127.0.0.1:"), line
        api = client.new_client(kubeconfig=config)
        try:
            nodes = _nodes(api)
        finally:
            client.close(api)
        assert [n.metadata.labels[INSTANCE] for n in nodes] == ["BM.GPU.H100.8"] * 2
        assert all(n.spec.provider_id.startswith("ocid1.instance.oc1.iad.") for n in nodes)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
    assert process.returncode == 0
    bad = subprocess.run([*command, "--service", "ecs"], capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "--service must be one of eks, gke, aks, oke, kind" in bad.stderr
