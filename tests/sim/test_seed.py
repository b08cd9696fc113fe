"""``seed`` and ``upgrade-driver``: what snapshot and validate will read, over HTTP.

Covers: a seeded recipe leaves Helm 3 release Secrets (base64 of the Secret over base64 of gzip
of JSON, chart name and version, the manifest), namespaces, ready Deployments and DaemonSets,
Running pods every pod assert selects, and Established CRDs; each break shows as snapshot and
validate must see it (crashloop: pod Running with a container waiting in CrashLoopBackOff;
old-chart; missing-crd; unavailable); --kernel changes one node; bad input is a 400 naming it;
upgrade-driver changes the GFD labels, the driver DaemonSet's image and the module banner; the
seed installs the driver the GPU Operator's values pin (labels, DaemonSet image, module banner),
none when the operator does not manage the driver, another when told, and records the values as
the release's config; the seed command sends the catalog's merged values and installs the
recipe's driver, or the one --driver-version names; our own chart's CRDs are the real ones (their
kinds, so `nvcrectl crds install` after a seed updates them), other charts' are stubs.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from shared import errors
from shared.sim import SimServer, control
from shared.sim.apiserver import kubeconfig

RECIPE: dict[str, Any] = {
    "kind": "RecipeResult",
    "apiVersion": "aicr.run/v1alpha2",
    "metadata": {"version": "0.1.0"},
    "componentRefs": [
        {
            "name": "cert-manager",
            "namespace": "cert-manager",
            "chart": "cert-manager",
            "type": "Helm",
            "version": "v1.17.2",
            "healthCheckAsserts": {
                "workloads": [
                    {"kind": "Deployment", "name": "cert-manager"},
                    {"kind": "Deployment", "name": "cert-manager-webhook"},
                ],
                "pods": [{"selector": {"app.kubernetes.io/instance": "cert-manager"}}],
                "crds": ["certificates.cert-manager.io", "issuers.cert-manager.io"],
            },
        },
        {
            "name": "gpu-operator",
            "namespace": "gpu-operator",
            "chart": "gpu-operator",
            "type": "Helm",
            "version": "v25.3.0",
            "healthCheckAsserts": {
                "workloads": [{"kind": "DaemonSet", "name": "nvidia-device-plugin-daemonset"}],
                "pods": [{"selector": {"app": "nvidia-device-plugin-daemonset"}}],
                "crds": ["clusterpolicies.nvidia.com"],
            },
        },
        {"name": "plain", "namespace": "tools", "chart": "repo/plain", "type": "Helm", "version": "1.2.3"},
    ],
    "deploymentOrder": ["cert-manager", "gpu-operator", "plain"],
}


def _seed(sim_kubeconfig: Path, **body: Any) -> Any:
    return control.call(kubeconfig.read(sim_kubeconfig), "POST", "seed", {"recipe": RECIPE, **body})


def _release(core: Any, namespace: str, name: str) -> dict[str, Any]:
    secret = core.read_namespaced_secret(f"sh.helm.release.v1.{name}.v1", namespace)
    assert secret.type == "helm.sh/release.v1"
    assert secret.metadata.labels == {"name": name, "owner": "helm", "status": "deployed", "version": "1"}
    helm_stored = base64.b64decode(secret.data["release"])  # the Secret's own base64 layer
    value: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(helm_stored)))
    return value


def test_a_seeded_recipe_looks_installed_by_helm(gpu_sim: SimServer, sim_kubeconfig: Path, api_client: Any) -> None:
    nodes = gpu_sim.add_gpu_nodes(3)
    _seed(sim_kubeconfig)
    gpu_sim.advance(60)  # the kubelet must leave seeded pods alone
    core, apps = k8s.CoreV1Api(api_client), k8s.AppsV1Api(api_client)
    release = _release(core, "cert-manager", "cert-manager")
    assert release["chart"]["metadata"]["name"] == "cert-manager"
    assert release["chart"]["metadata"]["version"] == "v1.17.2"
    assert release["info"]["status"] == "deployed" and "name: cert-manager-webhook" in release["manifest"]
    assert _release(core, "tools", "plain")["chart"]["metadata"]["name"] == "plain"
    assert {"cert-manager", "gpu-operator", "tools"} <= {n.metadata.name for n in core.list_namespace().items}
    deploy = apps.read_namespaced_deployment("cert-manager-webhook", "cert-manager")
    assert deploy.status.ready_replicas == deploy.spec.replicas == 1
    ds = apps.read_namespaced_daemon_set("nvidia-device-plugin-daemonset", "gpu-operator")
    assert ds.status.number_ready == ds.status.desired_number_scheduled == 3
    pods = core.list_namespaced_pod("gpu-operator", label_selector="app=nvidia-device-plugin-daemonset").items
    assert sorted(p.spec.node_name for p in pods) == nodes
    assert all(p.status.phase == "Running" and p.status.container_statuses[0].ready for p in pods)
    driver = apps.read_namespaced_daemon_set("nvidia-driver-daemonset", "gpu-operator")
    assert driver.spec.template.spec.containers[0].image == "nvcr.io/nvidia/driver:570.158.01-ubuntu24.04"
    crds = {c.metadata.name: c for c in k8s.ApiextensionsV1Api(api_client).list_custom_resource_definition().items}
    for name in ("certificates.cert-manager.io", "issuers.cert-manager.io", "clusterpolicies.nvidia.com"):
        assert any(c.type == "Established" and c.status == "True" for c in crds[name].status.conditions)


def test_each_break_shows_as_validate_will_see_it(gpu_sim: SimServer, sim_kubeconfig: Path, api_client: Any) -> None:
    nodes = gpu_sim.add_gpu_nodes(2)
    gpu_sim.vclock.set_speed(3600)  # the seed takes cluster time, as it does in `serve`
    _seed(
        sim_kubeconfig,
        breaks={"cert-manager": "crashloop", "plain": "old-chart", "gpu-operator": "missing-crd"},
        kernels={nodes[1]: "6.5.0-old"},
    )
    core, apps = k8s.CoreV1Api(api_client), k8s.AppsV1Api(api_client)
    pods = core.list_namespaced_pod("cert-manager", label_selector="app.kubernetes.io/instance=cert-manager").items
    looping = [p for p in pods if p.status.container_statuses[0].state.waiting is not None]
    assert len(looping) == 1 and looping[0].status.phase == "Running"
    assert looping[0].status.container_statuses[0].state.waiting.reason == "CrashLoopBackOff"
    last = looping[0].status.container_statuses[0].last_state.terminated
    for pod in core.list_pod_for_all_namespaces().items:  # nothing started before its pod was created
        assert pod.status.start_time is None or pod.status.start_time >= pod.metadata.creation_timestamp
    assert last.started_at >= looping[0].metadata.creation_timestamp
    assert apps.read_namespaced_deployment("cert-manager", "cert-manager").status.ready_replicas == 0
    assert _release(core, "tools", "plain")["chart"]["metadata"]["version"] == "1.1.0"
    crds = {c.metadata.name for c in k8s.ApiextensionsV1Api(api_client).list_custom_resource_definition().items}
    assert "clusterpolicies.nvidia.com" not in crds and "certificates.cert-manager.io" in crds
    assert core.read_node(nodes[1]).status.node_info.kernel_version == "6.5.0-old"
    assert core.read_node(nodes[0]).status.node_info.kernel_version != "6.5.0-old"


def test_an_unavailable_component_has_pending_pods_and_no_ready_replicas(
    gpu_sim: SimServer, sim_kubeconfig: Path, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(2)
    _seed(sim_kubeconfig, breaks={"gpu-operator": "unavailable"})
    ds = k8s.AppsV1Api(api_client).read_namespaced_daemon_set("nvidia-device-plugin-daemonset", "gpu-operator")
    assert ds.status.number_ready == 0 and ds.status.number_unavailable == 2
    pods = (
        k8s.CoreV1Api(api_client)
        .list_namespaced_pod("gpu-operator", label_selector="app=nvidia-device-plugin-daemonset")
        .items
    )
    assert {p.status.phase for p in pods} == {"Pending"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"breaks": {"nope": "crashloop"}}, "the recipe has no component 'nope'"),
        ({"breaks": {"plain": "explode"}}, "mode must be one of crashloop, old-chart, missing-crd, unavailable"),
        ({"kernels": {"node-999": "6.1"}}, "no node 'node-999'"),
    ],
    ids=["unknown-component", "unknown-mode", "unknown-node"],
)
def test_bad_seed_input_is_refused_with_its_reason(
    gpu_sim: SimServer, sim_kubeconfig: Path, body: dict[str, Any], message: str
) -> None:
    gpu_sim.add_gpu_nodes(1)
    with pytest.raises(errors.InvalidInput, match=message):
        _seed(sim_kubeconfig, **body)


def test_a_driver_upgrade_changes_labels_daemonset_image_and_module(
    gpu_sim: SimServer, sim_kubeconfig: Path, api_client: Any
) -> None:
    nodes = gpu_sim.add_gpu_nodes(2)
    _seed(sim_kubeconfig)
    target = kubeconfig.read(sim_kubeconfig)
    done = control.call(target, "POST", "upgrade-driver", {"version": "575.51.03", "nodes": [nodes[0]]})
    assert done["images"] == ["nvcr.io/nvidia/driver:575.51.03-ubuntu24.04"]
    core = k8s.CoreV1Api(api_client)
    labels = core.read_node(nodes[0]).metadata.labels
    assert (
        labels["nvidia.com/cuda.driver.major"],
        labels["nvidia.com/cuda.driver.minor"],
        labels["nvidia.com/cuda.driver.rev"],
    ) == ("575", "51", "03")
    assert core.read_node(nodes[1]).metadata.labels["nvidia.com/cuda.driver.major"] == "570"
    ds = k8s.AppsV1Api(api_client).read_namespaced_daemon_set("nvidia-driver-daemonset", "gpu-operator")
    assert ds.spec.template.spec.containers[0].image == "nvcr.io/nvidia/driver:575.51.03-ubuntu24.04"
    root = gpu_sim.noderoot.root
    assert root is not None
    assert "575.51.03" in (root / nodes[0] / "proc/driver/nvidia/version").read_text()
    assert "575.51.03" not in (root / nodes[1] / "proc/driver/nvidia/version").read_text()


def _driver_of(core: Any, node: str) -> str:
    labels = core.read_node(node).metadata.labels
    return ".".join(labels[f"nvidia.com/cuda.driver.{p}"] for p in ("major", "minor", "rev"))


@pytest.mark.parametrize(
    ("body", "installed"),
    [
        ({}, "570.158.01"),
        ({"values": {"gpu-operator": {"driver": {"version": "580.105.08"}}}}, "580.105.08"),
        ({"values": {"gpu-operator": {"driver": {"enabled": False, "version": "580.105.08"}}}}, "570.158.01"),
        ({"values": {"gpu-operator": {"driver": {"version": "580.105.08"}}}, "driver": "575.51.03"}, "575.51.03"),
    ],
    ids=["no-pin", "values-pin", "driver-not-managed", "override"],
)
def test_the_seed_installs_the_driver_the_values_pin_unless_told_otherwise(
    gpu_sim: SimServer, sim_kubeconfig: Path, api_client: Any, body: dict[str, Any], installed: str
) -> None:
    nodes = gpu_sim.add_gpu_nodes(2)
    done = _seed(sim_kubeconfig, **body)
    assert done["driver"] == installed
    core = k8s.CoreV1Api(api_client)
    assert [_driver_of(core, n) for n in nodes] == [installed, installed]
    ds = k8s.AppsV1Api(api_client).read_namespaced_daemon_set("nvidia-driver-daemonset", "gpu-operator")
    assert ds.spec.template.spec.containers[0].image == f"nvcr.io/nvidia/driver:{installed}-ubuntu24.04"
    root = gpu_sim.noderoot.root
    assert root is not None and installed in (root / nodes[1] / "proc/driver/nvidia/version").read_text()
    config = _release(core, "gpu-operator", "gpu-operator")["config"]
    assert config == (body.get("values") or {}).get("gpu-operator", {})  # what Helm was given


def test_the_seed_command_installs_the_recipes_driver_or_the_one_asked_for(
    gpu_sim: SimServer, sim_kubeconfig: Path, api_client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from aicr.main import build_app
    from shared import cli, yamlio
    from shared.sim import recipevalues
    from shared.sim.__main__ import app
    from tests.cli.aicr.test_seeded_cluster import SEED

    nodes = gpu_sim.add_gpu_nodes(2)
    recipe = tmp_path / "recipe.yaml"
    assert cli.run(build_app(), "aicr", ["recipe", *SEED, "-o", str(recipe)]) == 0
    values = recipevalues.merged(yamlio.load_file(recipe))
    assert recipevalues.pinned_driver(values) == "580.105.08" and values["gpu-operator"]["driver"]["enabled"] is True
    seed = ["seed", "--recipe", str(recipe), "--kubeconfig", str(sim_kubeconfig)]
    core = k8s.CoreV1Api(api_client)
    for extra, installed in (["--driver-version", "570.158.01"], "570.158.01"), ([], "580.105.08"):
        capsys.readouterr()
        assert cli.run(app, "python -m shared.sim", [*seed, *extra]) == 0
        assert json.loads(capsys.readouterr().out)["driver"] == installed
        assert {_driver_of(core, n) for n in nodes} == {installed}
    config = _release(core, "gpu-operator", "gpu-operator")["config"]
    assert config == values["gpu-operator"]  # the release records the values Helm was given
    with pytest.raises(ValueError, match="not a resolved recipe"):
        recipevalues.merged({"kind": "Snapshot"})


def test_a_seeded_recipe_with_our_chart_creates_our_real_crds_and_crds_install_upgrades_them(
    gpu_sim: SimServer, sim_kubeconfig: Path, api_client: Any, tmp_path: Path, run_cli: Any
) -> None:
    from aicr.main import build_app
    from shared import cli
    from shared.certify import workload
    from shared.sim.__main__ import app
    from tests.cli.aicr.test_seeded_cluster import SEED

    gpu_sim.add_gpu_nodes(1)
    recipe = tmp_path / "recipe.yaml"
    assert cli.run(build_app(), "aicr", ["recipe", *SEED, "-o", str(recipe)]) == 0
    assert (
        cli.run(app, "python -m shared.sim", ["seed", "--recipe", str(recipe), "--kubeconfig", str(sim_kubeconfig)])
        == 0
    )
    crd = k8s.ApiextensionsV1Api(api_client).read_custom_resource_definition(workload.RESOURCE.name)
    assert (crd.spec.names.kind, crd.spec.names.singular) == ("WorkloadRun", "workloadrun")  # not a stub's
    result = run_cli("nvcrectl", "crds", "install", "-k", str(sim_kubeconfig))
    assert result.code == 0, result.stderr
