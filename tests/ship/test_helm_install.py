"""Our chart installed, upgraded and uninstalled by real helm 3 and helm 4 on the simulated cluster.

Covers: ``helm install --wait`` (helm 4: server-side apply and the kstatus waiter, which starts
its watches as streaming lists; helm 3: create and its legacy waiter) ends deployed; ``kubectl
rollout status`` of both controllers and of the three monitor DaemonSets on GPU nodes finishes;
``helm upgrade --wait`` with a changed value makes revision 2 and rolls the controller out again;
the release history lives in ``sh.helm.release.v1.<release>.v<N>`` Secrets (written in protobuf by
helm's typed client); ``helm uninstall`` removes the release and keeps the CRDs (their
``helm.sh/resource-policy: keep``). The release goes to namespace ``nvsentinel``, the namespace
the chart's values name for the lifecycle providers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from shared.sim import SimServer
from tests import clients, simfixtures

CHART = Path(__file__).resolve().parents[2] / "deploy" / "helm" / "dsx-cluster-tools"
NS = "nvsentinel"
ROLLED = ("deployment/nvsentinel-controller", "deployment/nvcre-controller")
MONITORS = ("daemonset/nvsentinel-monitor-xid", "daemonset/nvsentinel-monitor-dcgm", "daemonset/nvsentinel-monitor-nic")


@pytest.fixture()
def gpu_cluster(sim: SimServer) -> Iterator[SimServer]:
    """Two GPU nodes with their kubelets and the control plane's controllers running."""
    sim.add_gpu_nodes(2)
    sim.vclock.set_speed(20)
    sim.kubelet.start()
    try:
        yield sim
    finally:
        sim.kubelet.stop()
        sim.vclock.set_speed(1)


@pytest.mark.parametrize("client", [clients.HELM, clients.HELM3], ids=["helm4", "helm3"])
def test_install_upgrade_and_uninstall_of_our_chart(
    client: clients.Client, gpu_cluster: SimServer, sim_kubeconfig: Path, api_client: Any, tmp_path: Path
) -> None:
    helm = simfixtures.helm_runner(sim_kubeconfig, tmp_path / "helm", client=client)
    kubectl = simfixtures.kubectl_runner(sim_kubeconfig)
    installed = helm("install", "dsx", str(CHART), "-n", NS, "--create-namespace", "--wait", "--timeout=120s")
    assert "STATUS: deployed" in installed.stdout
    for workload in (*ROLLED, *MONITORS):
        done = kubectl("rollout", "status", workload, "-n", NS, "--timeout=60s")
        assert "successfully rolled out" in done.stdout, done.stdout
    ready = k8s.AppsV1Api(api_client).read_namespaced_daemon_set("nvsentinel-monitor-xid", NS).status
    assert (ready.desired_number_scheduled, ready.number_available) == (2, 2)

    before = k8s.AppsV1Api(api_client).read_namespaced_deployment("nvsentinel-controller", NS).metadata.generation
    upgraded = helm(
        "upgrade", "dsx", str(CHART), "-n", NS, "--set", "nvsentinel-controller.replicas=2", "--wait", "--timeout=120s"
    )
    assert 'Release "dsx" has been upgraded' in upgraded.stdout
    controller = k8s.AppsV1Api(api_client).read_namespaced_deployment("nvsentinel-controller", NS)
    assert controller.metadata.generation == before + 1
    assert (controller.status.ready_replicas, controller.status.updated_replicas) == (2, 2)
    assert "successfully rolled out" in kubectl("rollout", "status", ROLLED[0], "-n", NS, "--timeout=60s").stdout
    history = [line.split()[:2] for line in helm("history", "dsx", "-n", NS).stdout.splitlines()[1:]]
    assert history == [["1", history[0][1]], ["2", history[1][1]]]
    secrets = k8s.CoreV1Api(api_client).list_namespaced_secret(NS, label_selector="owner=helm,name=dsx").items
    states = {s.metadata.name: s.metadata.labels["status"] for s in secrets}
    assert states == {"sh.helm.release.v1.dsx.v1": "superseded", "sh.helm.release.v1.dsx.v2": "deployed"}

    helm("uninstall", "dsx", "-n", NS, "--wait", "--timeout=60s")
    assert not k8s.CoreV1Api(api_client).list_namespaced_secret(NS, label_selector="owner=helm").items
    crds = {c.metadata.name for c in k8s.ApiextensionsV1Api(api_client).list_custom_resource_definition().items}
    assert {"healthevents.nvsentinel.nvidia.com", "certifications.nvcre.nvidia.com"} <= crds
