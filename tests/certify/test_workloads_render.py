"""Every catalog entry × backend × platform, rendered and created with dryRun=All and
fieldValidation=Strict through the official client against the real upstream CRDs
(../shared/reference/schemas: Trainer v2.3.0, MPI Operator v0.8.0; skipped when absent) and
against the simulator's own operator CRDs; ``job`` refuses a multi-node test (InvalidInput, exit 2);
detection maps each simulated service's nodes to upstream's platform and overrides.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from shared import errors, yamlio
from shared.certify import catalog, models, render
from shared.certify.workloads import backends, platforms
from shared.sim import SimServer
from tests.conftest import TEAM_SHARED

SCHEMAS = TEAM_SHARED / "reference" / "schemas"
CRDS = ["trainer-trainingruntimes-crd.yaml", "trainer-trainjobs-crd.yaml", "mpi-operator-mpijobs-crd.yaml"]
PLATFORMS = [("none", "h100"), ("aws", "h100"), ("aws", "gb200"), ("gcp", "h100"), ("gcp", "gb200"), ("azure", "h100"),
             ("togetherai", "h100"), ("oci", "h100"), ("oci", "gb200"), ("nscale", "h100")]  # fmt: skip
NODES = [render.TargetNode(f"node-{i:03d}", 8, "rack-0", "") for i in range(4)]


def _groups() -> list[render.Group]:
    out = []
    for entry in catalog.load().entries:
        cert = models.Certification.model_validate(
            {
                "metadata": {"name": "rack-7", "namespace": "default"},
                "kind": "Certification",
                "spec": {"categories": [{"domain": entry.domain, "variant": entry.variant}]},
            }
        )
        nodes = NODES if entry.scope is catalog.Scope.GROUP else NODES[:1]
        options = cert.spec.options_for(cert.spec.categories[0])
        out.append(render.Group(cert=cert, uid=None, entry=entry, options=options, name="rack-7-c0-r1-g0", nodes=nodes))
    return out


def _create(api: Any, doc: dict[str, Any], *, dry: bool) -> None:
    kwargs: dict[str, Any] = {"field_validation": "Strict", **({"dry_run": "All"} if dry else {})}
    group, _, version = doc["apiVersion"].rpartition("/")
    if doc["apiVersion"] == "batch/v1":
        k8s.BatchV1Api(api).create_namespaced_job("default", doc, **kwargs)
        return
    plural = {"TrainingRuntime": "trainingruntimes", "TrainJob": "trainjobs", "MPIJob": "mpijobs"}[doc["kind"]]
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(group, version, "default", plural, doc, **kwargs)


def _render_all() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for group in _groups():
        for name, backend in backends.BACKENDS.items():
            for plat, gpu in PLATFORMS:
                refused = name == "job" or group.entry.parser is not catalog.Parser.NCCL
                if name != "trainjob" and backends.multi_node(group.entry) and refused:
                    continue  # refused: see test_the_job_backend_refuses_a_multi_node_test
                for doc in backend.render(group, platforms.resolve(plat, gpu)):
                    if doc["kind"] != "ComputeDomain":  # no CRD for it in the reference folder
                        out.append((f"{group.entry.key}/{name}/{plat}-{gpu}", doc))
    return out


def _create_all(api: Any) -> None:
    """Each TrainingRuntime for real (a TrainJob's admission wants its runtime to exist), then
    deleted after its TrainJob; every other object with dryRun=All."""
    runtime: str | None = None
    for where, doc in _render_all():
        real = doc["kind"] == "TrainingRuntime"
        try:
            _create(api, doc, dry=not real)
        except k8s.ApiException as exc:
            pytest.fail(f"{where} {doc['kind']}: {exc.status} {exc.body}")
        if real:
            runtime = doc["metadata"]["name"]
        elif doc["kind"] == "TrainJob" and runtime is not None:
            k8s.CustomObjectsApi(api).delete_namespaced_custom_object(
                "trainer.kubeflow.org", "v1alpha1", "default", "trainingruntimes", runtime
            )
            runtime = None


@pytest.mark.skipif(not SCHEMAS.is_dir(), reason="the team reference folder (../shared) is absent")
def test_every_rendered_object_fits_the_real_upstream_crds(sim: SimServer, api_client: Any) -> None:
    ext = k8s.ApiextensionsV1Api(api_client)
    for name in CRDS:
        ext.create_custom_resource_definition(yamlio.load_file(SCHEMAS / name))
    sim.advance(1)
    _create_all(api_client)


def test_every_rendered_object_fits_the_simulators_operator_crds(gpu_sim: SimServer, api_client: Any) -> None:
    gpu_sim.operators.install(["jobset", "trainer", "mpi-operator"])
    _create_all(api_client)


def test_the_job_backend_refuses_a_multi_node_test() -> None:
    group = next(g for g in _groups() if g.entry.variant == "nccl-all-reduce")
    with pytest.raises(errors.InvalidInput, match="single-node tests only"):
        backends.job(group, platforms.GENERIC)
    training = next(g for g in _groups() if g.entry.domain == "training")
    with pytest.raises(errors.InvalidInput, match="runs as a TrainJob only"):
        backends.mpijob(training, platforms.GENERIC)


def test_the_aws_launcher_exports_the_efa_settings_and_workers_request_efa() -> None:
    group = next(g for g in _groups() if g.entry.variant == "nccl-all-reduce")
    runtime, job = backends.trainjob(group, platforms.resolve("aws", "h100"))
    trainer = job["spec"]["trainer"]
    assert trainer["command"] == ["timeout", "3600", "/opt/amazon/openmpi/bin/mpirun"]
    assert "FI_PROVIDER=efa" in trainer["args"] and "/opt/nccl-tests/build/all_reduce_perf" in trainer["args"]
    assert (trainer["numNodes"], trainer["numProcPerNode"]) == (4, 8)
    worker = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert worker["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"] == "32"
    _, generic = backends.trainjob(group, platforms.GENERIC)
    assert not any("FI_PROVIDER" in a for a in generic["spec"]["trainer"]["args"])


@pytest.mark.parametrize(
    ("service", "gpu", "platform", "names"),
    [
        ("eks", "h100", "aws", ["aws-efa"]),
        ("eks", "gb200", "aws", ["gb200-mnnvl"]),
        ("gke", "h100", "gcp", ["gcp-tcpxo"]),
        ("gke", "gb200", "gcp", ["gb200-mnnvl", "gcp-rdma"]),
        ("aks", "h100", "azure", ["azure-ib"]),
        ("oke", "h100", "oci", ["oci-roce"]),
        ("oke", "gb200", "oci", ["gb200-mnnvl", "oci-roce-gb200"]),
        ("kind", "h100", "onprem", []),
    ],
)
def test_detection_maps_each_simulated_service_to_its_platform(
    gpu_sim: SimServer, api_client: Any, service: str, gpu: str, platform: str, names: list[str]
) -> None:
    gpu_sim.add_gpu_nodes(2, gpu=f"{service}/{gpu}")
    nodes = [api_client.sanitize_for_serialization(n) for n in k8s.CoreV1Api(api_client).list_node().items]
    found = platforms.detect(nodes)
    assert (found.name, found.gpu) == (platform, gpu)
    assert [o.name for o in found.overrides] == names


def test_render_with_a_backend_prints_the_runtime_and_trainjob_and_refuses_job_for_multi_node(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Any, tmp_path: Any
) -> None:
    gpu_sim.add_gpu_nodes(4, gpu="eks/h100")
    cert = tmp_path / "cert.yaml"
    cert.write_text(
        "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: Certification\nmetadata: {name: rack-7}\n"
        "spec:\n  categories: [{domain: communication, variant: nccl-all-reduce}]\n",
        encoding="utf-8",
    )
    args = ("nvcrectl", "certification", "render", "-f", str(cert), "-k", str(sim_kubeconfig), "-o", "yaml")
    shown = run_cli(*args)  # no --backend: what the cluster serves (Trainer)
    assert shown.code == 0, shown.stderr
    assert "kind: TrainingRuntime" in shown.stdout and "kind: TrainJob" in shown.stdout
    assert "FI_PROVIDER=efa" in shown.stdout  # the aws platform, detected from the nodes
    generic = run_cli(*args, "--backend", "trainjob", "--platform", "none")
    assert generic.code == 0 and "FI_PROVIDER" not in generic.stdout
    mpi = run_cli(*args, "--backend", "mpijob")
    assert mpi.code == 0 and "kind: MPIJob" in mpi.stdout
    refused = run_cli(*args, "--backend", "job")
    assert refused.code == 2 and "single-node tests only" in refused.stderr
