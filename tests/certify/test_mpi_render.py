"""The MPI-operator variant: a group rendered as a kubeflow.org/v2beta1 MPIJob (rendered only).

Covers: an NCCL group becomes one MPIJob whose launcher runs the catalog's mpirun command without
GPUs and whose workers — one per node of the group, pinned by required node affinity on the
group's hostnames and kept apart by anti-affinity — hold the GPUs and run sshd, with one slot per
GPU, the run's deadline and the gate taints tolerated; a DCGM category (no mpirun) keeps its Job;
``certification render -o yaml`` on a simulated cluster that serves the MPI Operator but not
Trainer prints MPIJobs for NCCL tests and Jobs for single-node ones, and an unknown backend exits 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared import yamlio
from shared.certify import catalog, models, render
from shared.kube import rest
from shared.sim import SimServer

NODES = [render.TargetNode(f"node-{i:03d}", 8, "rack-0", "") for i in range(4)]


def _cert() -> models.Certification:
    return models.Certification.model_validate(
        {
            "metadata": {"name": "rack-7", "namespace": "certs"},
            "kind": "Certification",
            "spec": {
                "target": {"taintSelectors": [{"key": "nvidia.com/validation", "effect": "NoSchedule"}]},
                "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}],
                "maxBytes": "1G",
                "timeoutPerJob": "30m",
            },
        }
    )


def _render(domain: str, variant: str) -> dict[str, Any]:
    cert = _cert()
    entry = catalog.load().find(domain, variant)
    return render.mpijob(
        render.Group(
            cert=cert,
            uid=None,
            entry=entry,
            options=cert.spec.options_for(cert.spec.categories[0]),
            name="rack-7-c0-r1-g0",
            nodes=NODES,
        )
    )


def test_an_nccl_group_is_one_mpijob_with_a_launcher_and_one_pinned_worker_per_node() -> None:
    doc = _render("communication", "nccl-all-reduce")
    assert (doc["apiVersion"], doc["kind"]) == ("kubeflow.org/v2beta1", "MPIJob")
    assert doc["metadata"]["name"] == "rack-7-c0-r1-g0" and doc["metadata"]["namespace"] == "certs"
    spec = doc["spec"]
    assert (spec["slotsPerWorker"], spec["mpiImplementation"]) == (8, "OpenMPI")
    assert spec["runPolicy"] == {"cleanPodPolicy": "Running", "backoffLimit": 0, "activeDeadlineSeconds": 1800}
    launcher = spec["mpiReplicaSpecs"]["Launcher"]
    assert launcher["replicas"] == 1
    (main,) = launcher["template"]["spec"]["containers"]
    assert "resources" not in main
    assert main["command"][main["command"].index("mpirun") + 1 :][:2] == ["-N", "8"]
    assert "all_reduce_perf_mpi" in main["command"]
    worker = spec["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 4
    pod = worker["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["/usr/sbin/sshd", "-De"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "8"
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [n.name for n in NODES]}
    ]
    (apart,) = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert apart["topologyKey"] == "kubernetes.io/hostname"
    selects = apart["labelSelector"]["matchLabels"].items()
    role = "training.kubeflow.org/job-role"  # set by the MPI Operator on the pods it creates
    assert selects <= {**worker["template"]["metadata"]["labels"], role: "worker"}.items()
    launcher_labels = doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["metadata"]["labels"]
    assert not selects <= {**launcher_labels, role: "launcher"}.items()  # the launcher may share a worker's node
    for template in (launcher["template"], worker["template"]):
        assert template["spec"]["tolerations"] == [
            {"key": "nvidia.com/validation", "operator": "Exists", "effect": "NoSchedule"}
        ]


def test_a_category_without_mpirun_keeps_its_batch_job() -> None:
    doc = _render("diagnostics", "dcgm-l1")
    assert (doc["apiVersion"], doc["kind"]) == ("batch/v1", "Job")


def test_render_on_a_cluster_with_only_the_mpi_operator_prints_mpijobs(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, tmp_path: Path, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(4, racks=1)
    for crd in ("trainjobs.trainer.kubeflow.org", "jobsets.jobset.x-k8s.io"):
        rest.delete(api_client, rest.group_path("apiextensions.k8s.io", "v1", "customresourcedefinitions", name=crd))
    cert = tmp_path / "rack.yaml"
    cert.write_text(
        "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: Certification\nmetadata: {name: rack-7}\n"
        "spec:\n  categories:\n    - {domain: communication, variant: nccl-all-reduce}\n"
        "    - {domain: diagnostics, variant: dcgm-l1}\n",
        encoding="utf-8",
    )
    kube = ("--kubeconfig", str(sim_kubeconfig))
    shown = run_cli("nvcrectl", "certification", "render", "-f", str(cert), "-o", "yaml", *kube)
    assert shown.code == 0, shown.stderr
    kinds = [d["kind"] for d in yamlio.loads(shown.stdout)]
    assert kinds == ["MPIJob"] + ["Job"] * 4
    bad = run_cli("nvcrectl", "certification", "render", "-f", str(cert), "--backend", "slurm", *kube)
    assert bad.code == 2 and "unknown backend 'slurm'; known: trainjob, mpijob, job" in bad.stderr
