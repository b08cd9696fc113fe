"""The simulated JobSet operator (jobset.x-k8s.io/v1alpha2), over HTTP with the official client in virtual time.

Covers: the mutating webhook's defaults (kubernetes-sigs/jobset ``pkg/webhooks/jobset_webhook.go``
``Default``) and the CRD's schema defaults; one Indexed Job ``<js>-<rjob>-<idx>`` per replica with
every label and annotation ``labelAndAnnotateObject`` sets, the pod template's subdomain, the headless
Service named after the JobSet, pods with hostname ``<js>-<rjob>-<idx>-<podIdx>``; ``dependsOn: Ready``
holding the dependent Jobs until every pod of the dependency is Ready; a success policy on one
replicatedJob completing the JobSet (``AllJobsCompleted``) and deleting the Jobs still running;
a failed Job failing the JobSet at once (``FailedJobs``, first failed Job named), a failure policy
restarting it (``restart-attempt`` 1) until ``ReachedMaxRestarts``; suspension; the validating
webhook's refusals (403, upstream's message), the CRD's CEL rule (422) and the immutable
replicatedJobs; cascade deletion; and our generated pod-template schema against the real v0.12.0
CRD (research/workloads.md §2; kubernetes-sigs/jobset ``pkg/controllers/jobset_controller.go``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from shared import yamlio
from shared.sim import SimServer
from shared.sim.operators import jobsetcrd
from tests.conftest import TEAM_SHARED

GROUP, VERSION, PLURAL = "jobset.x-k8s.io", "v1alpha2", "jobsets"
NS = "default"
REFERENCE = TEAM_SHARED / "reference" / "schemas" / "jobset-jobsets-crd.yaml"


@pytest.fixture()
def cluster(gpu_sim: SimServer) -> SimServer:
    gpu_sim.operators.install(["jobset"])
    gpu_sim.add_gpu_nodes(3, gpu="h100")
    return gpu_sim


def _template(command: list[str], pods: int = 1, *, gpus: int = 0, backoff: int = 0) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "busybox", "command": command}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {
        "spec": {
            "parallelism": pods,
            "completions": pods,
            "backoffLimit": backoff,
            "template": {"spec": {"containers": [container]}},
        }
    }


def _jobset(name: str, *rjobs: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {"replicatedJobs": list(rjobs), **spec},
    }


def _mpi_shape(
    name: str, *, launcher: list[str], worker: list[str] | None = None, worker_gpus: int = 0
) -> dict[str, Any]:
    """Workers, then a launcher that depends on them being Ready and alone decides success (NVCRE's shape)."""
    return _jobset(
        name,
        {"name": "node", "template": _template(worker or ["/usr/sbin/sshd", "-De"], 2, gpus=worker_gpus)},
        {"name": "launcher", "dependsOn": [{"name": "node", "status": "Ready"}], "template": _template(launcher)},
        successPolicy={"operator": "All", "targetReplicatedJobs": ["launcher"]},
    )


def _create(api_client: Any, body: dict[str, Any]) -> dict[str, Any]:
    return dict(k8s.CustomObjectsApi(api_client).create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, body))


def _read(api_client: Any, name: str) -> dict[str, Any]:
    return dict(k8s.CustomObjectsApi(api_client).get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name))


def _jobs(api_client: Any) -> dict[str, Any]:
    return {j.metadata.name: j for j in k8s.BatchV1Api(api_client).list_namespaced_job(NS).items}


def _pods(api_client: Any) -> list[Any]:
    return list(k8s.CoreV1Api(api_client).list_namespaced_pod(NS).items)


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


def test_the_webhook_and_schema_fill_the_defaults_upstream_fills(cluster: SimServer, api_client: Any) -> None:
    created = _create(api_client, _jobset("js", {"name": "w", "template": _template(["sleep", "60"], 2)}))
    spec = created["spec"]
    assert spec["successPolicy"] == {"operator": "All"}
    assert spec["startupPolicy"] == {"startupPolicyOrder": "AnyOrder"}
    assert spec["network"] == {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
    rjob = spec["replicatedJobs"][0]
    assert (rjob["replicas"], rjob["groupName"]) == (1, "default")
    assert rjob["template"]["spec"]["completionMode"] == "Indexed"
    assert rjob["template"]["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_each_replica_is_an_indexed_job_labelled_as_upstream_with_a_headless_service(
    cluster: SimServer, api_client: Any
) -> None:
    created = _create(
        api_client,
        _jobset(
            "js",
            {"name": "a", "replicas": 2, "template": _template(["sleep", "600"], 2)},
            {"name": "b", "groupName": "g2", "template": _template(["sleep", "600"])},
        ),
    )
    cluster.advance(10)
    jobs = _jobs(api_client)
    assert sorted(jobs) == ["js-a-0", "js-a-1", "js-b-0"]
    job = jobs["js-a-1"]
    expected = {
        "jobset.sigs.k8s.io/jobset-name": "js",
        "jobset.sigs.k8s.io/jobset-uid": created["metadata"]["uid"],
        "jobset.sigs.k8s.io/replicatedjob-name": "a",
        "jobset.sigs.k8s.io/replicatedjob-replicas": "2",
        "jobset.sigs.k8s.io/global-replicas": "3",
        "jobset.sigs.k8s.io/job-index": "1",
        "jobset.sigs.k8s.io/job-global-index": "1",
        "jobset.sigs.k8s.io/job-key": hashlib.sha1(b"default/js-a-1").hexdigest(),
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": "2",
        "jobset.sigs.k8s.io/job-group-index": "1",
        "jobset.sigs.k8s.io/restart-attempt": "0",
    }
    for meta in (job.metadata, job.spec.template.metadata):
        assert expected.items() <= meta.labels.items() and expected.items() <= meta.annotations.items()
    b_labels = jobs["js-b-0"].metadata.labels
    assert (b_labels["jobset.sigs.k8s.io/job-global-index"], b_labels["jobset.sigs.k8s.io/group-replicas"]) == (
        "2",
        "1",
    )
    owner = job.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.controller, owner.block_owner_deletion) == ("JobSet", "js", True, True)
    assert job.spec.template.spec.subdomain == "js" and job.spec.suspend is False
    service = k8s.CoreV1Api(api_client).read_namespaced_service("js", NS)
    assert service.spec.cluster_ip == "None" and service.spec.publish_not_ready_addresses is True
    assert service.spec.selector == {"jobset.sigs.k8s.io/jobset-name": "js"}
    hostnames = sorted(p.spec.hostname for p in _pods(api_client))
    assert hostnames == ["js-a-0-0", "js-a-0-1", "js-a-1-0", "js-a-1-1", "js-b-0-0"]
    assert {p.spec.subdomain for p in _pods(api_client)} == {"js"}
    status = _read(api_client, "js")["status"]["replicatedJobsStatus"]
    assert status[0] == {"name": "a", "ready": 2, "succeeded": 0, "failed": 0, "active": 2, "suspended": 0}


def test_depends_on_ready_holds_the_launcher_until_every_worker_pod_is_ready(
    cluster: SimServer, api_client: Any
) -> None:
    # 16 GPUs per worker pod fit no node: the workers stay Pending, so they are never Ready.
    _create(api_client, _mpi_shape("stuck", launcher=["sleep", "5"], worker_gpus=16))
    _create(api_client, _mpi_shape("fine", launcher=["sleep", "5"]))
    cluster.advance(1)
    assert sorted(_jobs(api_client)) == ["fine-node-0", "stuck-node-0"]
    cluster.advance(600)
    jobs = _jobs(api_client)
    assert "stuck-launcher-0" not in jobs and "fine-launcher-0" in jobs
    assert _condition(_read(api_client, "stuck"), "Completed") is None


def test_a_launcher_success_policy_completes_the_jobset_and_deletes_the_running_workers(
    cluster: SimServer, api_client: Any
) -> None:
    _create(api_client, _mpi_shape("run", launcher=["sleep", "30"]))
    cluster.advance(120)
    js = _read(api_client, "run")
    completed = _condition(js, "Completed")
    assert completed is not None and completed["status"] == "True"
    assert (completed["reason"], completed["message"]) == ("AllJobsCompleted", "jobset completed successfully")
    assert js["status"]["terminalState"] == "Completed"
    assert sorted(_jobs(api_client)) == ["run-launcher-0"]  # the sshd workers' Job is gone


def test_a_failed_job_fails_the_jobset_naming_the_first_failed_job(cluster: SimServer, api_client: Any) -> None:
    # ``sleep`` with a bad interval exits 1 at once; backoffLimit 0 fails the Job on that exit.
    _create(api_client, _mpi_shape("bad", launcher=["sleep", "forever"]))
    cluster.advance(120)
    js = _read(api_client, "bad")
    failed = _condition(js, "Failed")
    assert failed is not None and failed["status"] == "True" and failed["reason"] == "FailedJobs"
    assert failed["message"] == "jobset failed due to one or more job failures (first failed job: bad-launcher-0)"
    assert js["status"]["terminalState"] == "Failed"
    assert "bad-node-0" not in _jobs(api_client)


def test_a_failure_policy_restarts_the_jobset_until_it_reaches_max_restarts(
    cluster: SimServer, api_client: Any
) -> None:
    _create(
        api_client,
        _jobset("retry", {"name": "w", "template": _template(["sleep", "never"])}, failurePolicy={"maxRestarts": 1}),
    )
    cluster.advance(1)
    cluster.advance(60)
    js = _read(api_client, "retry")
    assert js["status"]["restarts"] == 1 and js["status"]["restartsCountTowardsMax"] == 1
    failed = _condition(js, "Failed")
    assert failed is not None and failed["reason"] == "ReachedMaxRestarts"
    assert failed["message"] == "jobset failed due to reaching max number of restarts (first failed job: retry-w-0)"
    labels = [j.metadata.labels["jobset.sigs.k8s.io/restart-attempt"] for j in _jobs(api_client).values()]
    assert labels == ["1"]


def test_a_suspended_jobset_creates_suspended_jobs_and_runs_them_when_resumed(
    cluster: SimServer, api_client: Any
) -> None:
    _create(api_client, _jobset("sus", {"name": "w", "template": _template(["sleep", "20"])}, suspend=True))
    cluster.advance(30)
    assert _jobs(api_client)["sus-w-0"].spec.suspend is True and _pods(api_client) == []
    suspended = _condition(_read(api_client, "sus"), "Suspended")
    assert suspended is not None and (suspended["status"], suspended["reason"]) == ("True", "SuspendedJobs")
    k8s.CustomObjectsApi(api_client).patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "sus", {"spec": {"suspend": False}}
    )
    cluster.advance(60)
    js = _read(api_client, "sus")
    resumed = _condition(js, "Suspended")
    assert resumed is not None and (resumed["status"], resumed["reason"], resumed["message"]) == (
        "False",
        "ResumeJobs",
        "jobset is resumed",
    )
    completed = _condition(js, "Completed")
    assert completed is not None and completed["status"] == "True"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {
                "replicatedJobs": [
                    {"name": "w", "dependsOn": [{"name": "x", "status": "Ready"}], "template": _template(["true"])}
                ]
            },
            # errors.Join: one line per error
            "DependsOn can't be set for the first ReplicatedJob\nreplicatedJob: w cannot depend on replicatedJob: x",
        ),
        (
            {
                "replicatedJobs": [{"name": "w", "template": _template(["true"])}],
                "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
            },
            "invalid replicatedJob name 'launcher' does not appear in .spec.ReplicatedJobs",
        ),
        (
            {"replicatedJobs": [{"name": "w" * 60, "template": _template(["true"])}]},
            "JobSet name is too long, job names generated for this JobSet will exceed 63 characters\n"
            "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters",
        ),
    ],
    ids=["depends-on-first", "unknown-success-target", "job-name-too-long"],
)
def test_the_validating_webhook_refuses_with_upstreams_message(
    cluster: SimServer, api_client: Any, spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(ApiException) as caught:
        _create(
            api_client, {"apiVersion": f"{GROUP}/{VERSION}", "kind": "JobSet", "metadata": {"name": "js"}, "spec": spec}
        )
    assert caught.value.status == 403
    assert (
        json.loads(caught.value.body)["message"] == f'admission webhook "vjobset.kb.io" denied the request: {message}'
    )


def test_the_crd_refuses_depends_on_with_in_order_startup(cluster: SimServer, api_client: Any) -> None:
    body = _mpi_shape("js", launcher=["true"])
    body["spec"]["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    with pytest.raises(ApiException) as caught:
        _create(api_client, body)
    assert caught.value.status == 422
    assert "StartupPolicy and DependsOn APIs are mutually exclusive" in caught.value.body


def test_replicated_jobs_cannot_change_while_the_jobset_runs(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, _jobset("js", {"name": "w", "template": _template(["sleep", "600"])}))
    # The controller writes the JobSet's status meanwhile; a real server checks resourceVersion before
    # admission (registry/store.go Update), so a stale read gets 409 first: read again, as clients do.
    for _ in range(20):
        current = _read(api_client, "js")
        current["spec"]["replicatedJobs"][0]["replicas"] = 2
        with pytest.raises(ApiException) as caught:
            k8s.CustomObjectsApi(api_client).replace_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "js", current)
        if caught.value.status != 409:
            break
    assert caught.value.status == 403 and "spec.replicatedJobs: Invalid value" in caught.value.body
    assert "field is immutable" in caught.value.body


def test_deleting_a_jobset_deletes_its_jobs_pods_and_service(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, _jobset("gone", {"name": "w", "template": _template(["sleep", "600"], 2)}))
    cluster.advance(10)
    assert _pods(api_client)
    k8s.CustomObjectsApi(api_client).delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "gone")
    cluster.advance(30)
    assert _jobs(api_client) == {} and _pods(api_client) == []
    assert k8s.CoreV1Api(api_client).list_namespaced_service(NS, field_selector="metadata.name=gone").items == []


def test_a_cluster_without_the_operator_answers_404_for_jobsets(sim: SimServer, api_client: Any) -> None:
    with pytest.raises(ApiException) as caught:
        _create(api_client, _jobset("js", {"name": "w", "template": _template(["true"])}))
    assert caught.value.status == 404


def _paths(node: dict[str, Any], at: str, out: set[str]) -> set[str]:
    out.add(at)
    for key, sub in (node.get("properties") or {}).items():
        _paths(sub, f"{at}.{key}", out)
    if isinstance(node.get("items"), dict):
        _paths(node["items"], f"{at}[]", out)
    if isinstance(node.get("additionalProperties"), dict):
        _paths(node["additionalProperties"], f"{at}{{}}", out)
    return out


@pytest.mark.skipif(not REFERENCE.exists(), reason="the team reference folder (../shared) is absent")
def test_our_job_template_schema_keeps_the_fields_the_real_crd_keeps() -> None:
    """Ours is generated from the Kubernetes 1.34 types; the real v0.12.0 CRD from newer ones, whose
    only extra fields are ``schedulingGroup`` and a pod certificate's ``userAnnotations``."""
    real = yamlio.load_file(REFERENCE)
    real_spec = real["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    ours_spec = jobsetcrd.definition()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    real_paths, our_paths = _paths(real_spec, "", set()), _paths(ours_spec, "", set())
    newer = {p for p in real_paths - our_paths if "schedulingGroup" in p or "userAnnotations" in p}
    assert real_paths - our_paths == newer
    assert our_paths - real_paths == set()
