"""``nvcrectl setup check`` and the run's own refusal on a cluster without the workload operators.

Covers: on a GPU cluster with Trainer, JobSet, the MPI Operator and the DCGM Service every catalog
category is ready, multi-node ones as TrainJobs; without Trainer and JobSet the NCCL tests fall back
to MPIJobs and training cannot run (exit 1 when asked for); without any operator a multi-node
category is not ready and names what to install, while DCGM still runs as a batch/v1 Job; without
the DCGM Service DCGM tests are not ready; an unknown category is exit 2; a Certification started
on a cluster without the operators fails at once with ``WorkloadBackendMissing`` and creates nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shared.kube import rest
from shared.sim import SimServer
from tests.certify import clusterkit as kit

TRAINER_CRDS = ("trainjobs", "trainingruntimes", "clustertrainingruntimes")


def _remove(api: Any, *names: str) -> None:
    for name in names:
        rest.delete(api, rest.group_path("apiextensions.k8s.io", "v1", "customresourcedefinitions", name=name))


def _without_trainer(api: Any) -> None:
    _remove(api, *(f"{p}.trainer.kubeflow.org" for p in TRAINER_CRDS), "jobsets.jobset.x-k8s.io")


def _check(run_cli: Any, kubeconfig: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = run_cli("nvcrectl", "setup", "check", "-o", "json", *args, "--kubeconfig", str(kubeconfig))
    return done.code, json.loads(done.stdout) if done.stdout else {}


def _categories(data: dict[str, Any]) -> dict[str, tuple[bool, str | None]]:
    return {c["category"]: (c["ready"], c["backend"]) for c in data["categories"]}


def test_every_category_is_ready_on_a_cluster_with_the_operators(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path
) -> None:
    gpu_sim.add_gpu_nodes(4)
    code, data = _check(run_cli, sim_kubeconfig)
    assert code == 0 and data["ready"] is True and data["gpuNodes"] == 4
    installed = {c["name"]: c["installed"] for c in data["components"]}
    assert installed["Kubeflow Trainer v2"] and installed["JobSet"] and installed["MPI Operator"]
    assert installed["DCGM hostengine Service"] and not installed["NVIDIA GPU Operator"]
    assert _categories(data)["communication/nccl-all-reduce"] == (True, "trainjob")
    assert _categories(data)["diagnostics/dcgm-l1"] == (True, "trainjob")


def test_without_trainer_nccl_runs_as_mpijob_and_training_cannot_run(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(4)
    _without_trainer(api_client)
    code, data = _check(run_cli, sim_kubeconfig, "-c", "communication/nccl-all-reduce")
    assert code == 0 and _categories(data) == {"communication/nccl-all-reduce": (True, "mpijob")}
    code, data = _check(run_cli, sim_kubeconfig, "-c", "training/nemotron5-8b")
    assert code == 1 and data["categories"][0]["ready"] is False
    assert "Kubeflow Trainer v2 with JobSet" in data["categories"][0]["message"]


def test_without_any_operator_multi_node_tests_name_what_to_install_and_dcgm_runs_as_a_job(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(2)
    _without_trainer(api_client)
    _remove(api_client, "mpijobs.kubeflow.org")
    code, data = _check(run_cli, sim_kubeconfig, "-c", "communication/nccl-all-reduce", "-c", "diagnostics/dcgm-l1")
    assert code == 1
    (nccl, dcgm) = data["categories"]
    assert nccl["ready"] is False and "Kubeflow Trainer v2 with JobSet or the MPI Operator" in nccl["message"]
    assert (dcgm["ready"], dcgm["backend"]) == (True, "job")


def test_without_the_dcgm_service_dcgm_tests_are_not_ready(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(2)
    rest.delete(api_client, rest.core_path("services", "gpu-operator", "nvidia-dcgm"))
    code, data = _check(run_cli, sim_kubeconfig, "-c", "diagnostics/dcgm-l2")
    assert code == 1 and "no nvidia-dcgm Service" in data["categories"][0]["message"]


def test_an_unknown_category_is_invalid_input(run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path) -> None:
    done = run_cli("nvcrectl", "setup", "check", "-c", "communication/nope", "--kubeconfig", str(sim_kubeconfig))
    assert done.code == 2 and "nope" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_certification_on_a_cluster_without_operators_fails_at_once_and_creates_nothing(
    gpu_sim: SimServer, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(4)
    _without_trainer(api_client)
    _remove(api_client, "mpijobs.kubeflow.org")
    kit.create(api_client, kit.certification("bare"))
    cert = kit.drive(gpu_sim, api_client, "bare")
    assert cert.status.phase == "Failed"
    failed = next(c for c in cert.status.conditions if c.type == "Failed")
    assert failed.reason == "WorkloadBackendMissing" and "nvcrectl setup check" in failed.message
    assert rest.list_items(api_client, rest.group_path("batch", "v1", "jobs", "default")) == []
    assert rest.list_items(api_client, rest.core_path("pods", "default")) == []
