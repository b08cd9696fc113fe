"""A rendered TrainJob run by the simulated Trainer, JobSet and kubelet on EKS-like nodes.

Covers (research/workloads.md §1.2, §4.2, "How a wrong setup fails"): nccl-all-reduce on four
p5 nodes rendered by the ``trainjob`` backend with the detected aws platform completes, one
launcher ran one all-reduce over the four workers' nodes (32 ranks) and its log parses at the
fabric's EFA speed; the same render without the EFA override (``--platform none``) still
completes but crosses nodes at socket speed (AICR issue 2683: ~3 GB/s against 489 GB/s).
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from shared.certify import catalog, models, render
from shared.certify.parsers import nccl_log
from shared.certify.workloads import backends, platforms
from shared.sim import SimServer
from shared.sim.gpu import stages

NS = "default"


def _run(sim: SimServer, api: Any, platform: platforms.Platform, names: list[str]) -> tuple[dict[str, Any], str]:
    cert = models.Certification.model_validate(
        {
            "metadata": {"name": "eks", "namespace": NS},
            "kind": "Certification",
            "spec": {"categories": [{"domain": "communication", "variant": "nccl-all-reduce"}], "maxBytes": "8G"},
        }
    )
    nodes = render.describe([api.sanitize_for_serialization(n) for n in k8s.CoreV1Api(api).list_node().items])
    group = render.Group(
        cert=cert,
        uid=None,
        entry=catalog.load().find("communication", "nccl-all-reduce"),
        options=cert.spec.options_for(cert.spec.categories[0]),
        name="eks-c0-r1-g0",
        nodes=[n for n in nodes if n.name in names],
    )
    objects = k8s.CustomObjectsApi(api)
    for doc in backends.trainjob(group, platform):
        plural = {"TrainingRuntime": "trainingruntimes", "TrainJob": "trainjobs"}[doc["kind"]]
        objects.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS, plural, doc)
    sim.advance(3600)
    job = objects.get_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS, "trainjobs", group.name)
    watch = backends.BACKENDS["trainjob"].watch(group)
    core = k8s.CoreV1Api(api)
    (pod,) = core.list_namespaced_pod(NS, label_selector=watch.log_pod_selector).items
    log = core.read_namespaced_pod_log(
        pod.metadata.name, NS, container=watch.log_container, _preload_content=False
    ).data.decode()
    return job, log


def _complete(job: dict[str, Any]) -> bool:
    return any(c["type"] == "Complete" and c["status"] == "True" for c in job["status"].get("conditions") or [])


@pytest.mark.parametrize("override", [True, False], ids=["efa", "generic"])
def test_a_rendered_trainjob_runs_one_all_reduce_over_four_eks_nodes(
    gpu_sim: SimServer, api_client: Any, override: bool
) -> None:
    gpu_sim.operators.install(["jobset", "trainer"])
    names = gpu_sim.add_gpu_nodes(4, gpu="eks/h100")
    nodes = [api_client.sanitize_for_serialization(n) for n in k8s.CoreV1Api(api_client).list_node().items]
    platform = platforms.detect(nodes) if override else platforms.resolve("none", "h100")
    assert [o.name for o in platform.overrides] == (["aws-efa"] if override else [])
    job, log = _run(gpu_sim, api_client, platform, names)
    assert _complete(job), (job.get("status"), log[-800:])
    result = nccl_log.parse(log)
    assert result.verdict == "pass" and result.ranks == 32, log[-800:]
    machine = stages.profile("eks/h100").machine
    assert machine is not None
    if override:
        assert result.largest_busbw_gbps == pytest.approx(stages.profile("eks/h100").bandwidth.networkBusGBps, abs=0.01)
    else:
        assert result.largest_busbw_gbps == pytest.approx(machine.network.socketBusGBps, abs=0.01)
