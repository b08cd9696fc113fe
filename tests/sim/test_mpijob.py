"""The simulated MPI Operator (kubeflow.org/v2beta1 MPIJob), over HTTP with the official client.

Covers: the CRD's defaults and enum (422); the children in upstream's order — headless Service
``<mpijob>`` (not publishing unready pods), ConfigMap ``<mpijob>-config`` (hostfile with
``<mpijob>-worker-<i>.<mpijob>.<ns>.svc slots=<n>``, discover_hosts.sh of the Running workers),
Secret ``<mpijob>-ssh``, worker Pods ``<mpijob>-worker-<i>`` (hostname, subdomain, labels,
``K_MPI_JOB_ROLE``, sshd when no command, the SSH volume), the launcher Job ``<mpijob>-launcher``
(OpenMPI variables, no GPU, /etc/mpi); conditions Created → Running → Succeeded; the launcher's
failure becoming the MPIJob's (``BackoffLimitExceeded/…``); ``WaitForWorkersReady``; a deleted
worker recreated; ``cleanPodPolicy: Running``; an invalid MPIJob left alone with a ``ValidationError``
Event; cascade deletion. Sources: kubeflow/mpi-operator v0.8.0 ``pkg/controller/mpi_job_controller.go``,
``pkg/apis/kubeflow/v2beta1/default.go``, ``pkg/apis/kubeflow/validation/validation.go``
(research/workloads.md §3).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from shared.sim import SimServer

GROUP, VERSION, PLURAL = "kubeflow.org", "v2beta1", "mpijobs"
NS = "default"


@pytest.fixture()
def cluster(gpu_sim: SimServer) -> SimServer:
    gpu_sim.operators.install(["mpi-operator"])
    gpu_sim.add_gpu_nodes(3, gpu="h100")
    return gpu_sim


def _pod_template(command: list[str] | None, *, gpus: int = 0) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "mpi"}
    if command:
        container["command"] = command
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {"spec": {"containers": [container]}}


def _mpijob(
    name: str, *, launcher: list[str], workers: int = 2, worker: list[str] | None = None, gpus: int = 8, **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": {
            "slotsPerWorker": 8,
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": _pod_template(launcher)},
                "Worker": {"replicas": workers, "template": _pod_template(worker, gpus=gpus)},
            },
            **spec,
        },
    }


def _api(api_client: Any) -> Any:
    return k8s.CustomObjectsApi(api_client)


def _create(api_client: Any, body: dict[str, Any]) -> dict[str, Any]:
    return dict(_api(api_client).create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, body))


def _read(api_client: Any, name: str) -> dict[str, Any]:
    return dict(_api(api_client).get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name))


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


def _pods(api_client: Any) -> dict[str, Any]:
    return {p.metadata.name: p for p in k8s.CoreV1Api(api_client).list_namespaced_pod(NS).items}


def test_the_crd_defaults_the_spec_and_refuses_an_unknown_mpi_implementation(
    cluster: SimServer, api_client: Any
) -> None:
    spec = _create(api_client, _mpijob("mj", launcher=["sleep", "1"]))["spec"]
    assert (spec["launcherCreationPolicy"], spec["mpiImplementation"], spec["sshAuthMountPath"]) == (
        "AtStartup",
        "OpenMPI",
        "/root/.ssh",
    )
    assert spec["runLauncherAsWorker"] is False and "runPolicy" not in spec  # runPolicy has no default itself
    with pytest.raises(ApiException) as caught:
        _create(api_client, _mpijob("bad", launcher=["true"], mpiImplementation="MVAPICH"))
    assert caught.value.status == 422
    message = json.loads(caught.value.body)["message"]
    supported = '"OpenMPI", "Intel", "MPICH"'
    assert message.endswith(f'spec.mpiImplementation: Unsupported value: "MVAPICH": supported values: {supported}')


def test_the_children_are_created_in_upstreams_order_and_shape(cluster: SimServer, api_client: Any) -> None:
    created = _create(api_client, _mpijob("mj", launcher=["sleep", "600"]))
    cluster.advance(10)
    core, batch = k8s.CoreV1Api(api_client), k8s.BatchV1Api(api_client)
    service = core.read_namespaced_service("mj", NS)
    config = core.read_namespaced_config_map("mj-config", NS)
    secret = core.read_namespaced_secret("mj-ssh", NS)
    pods = _pods(api_client)
    launcher = batch.read_namespaced_job("mj-launcher", NS)
    order = [service, config, secret, pods["mj-worker-0"], pods["mj-worker-1"], launcher]
    assert [o.metadata.creation_timestamp for o in order] == sorted(o.metadata.creation_timestamp for o in order)
    for obj in order:
        ref = obj.metadata.owner_references[0]
        assert (ref.kind, ref.uid, ref.controller) == ("MPIJob", created["metadata"]["uid"], True)
    assert service.spec.cluster_ip == "None" and service.spec.publish_not_ready_addresses is False
    assert service.spec.selector == {
        "training.kubeflow.org/operator-name": "mpi-operator",
        "training.kubeflow.org/job-name": "mj",
    }
    assert config.data["hostfile"] == "mj-worker-0.mj.default.svc slots=8\nmj-worker-1.mj.default.svc slots=8\n"
    assert (
        config.data["discover_hosts.sh"]
        == "#!/bin/sh\necho mj-worker-0.mj.default.svc\necho mj-worker-1.mj.default.svc\n"
    )
    assert secret.type == "kubernetes.io/ssh-auth" and set(secret.data) == {"ssh-privatekey", "ssh-publickey"}
    worker = pods["mj-worker-1"]
    assert (worker.spec.hostname, worker.spec.subdomain) == ("mj-worker-1", "mj")
    assert worker.metadata.labels == {
        "training.kubeflow.org/operator-name": "mpi-operator",
        "training.kubeflow.org/job-name": "mj",
        "training.kubeflow.org/job-role": "worker",
        "training.kubeflow.org/replica-index": "1",
    }
    main = worker.spec.containers[0]
    assert main.command == ["/usr/sbin/sshd", "-De"] and [(e.name, e.value) for e in main.env] == [
        ("K_MPI_JOB_ROLE", "worker")
    ]
    ssh = next(v for v in worker.spec.volumes if v.name == "ssh-auth")
    assert (ssh.secret.secret_name, ssh.secret.default_mode) == ("mj-ssh", 0o600)
    assert worker.spec.restart_policy == "Never"
    pod = launcher.spec.template.spec
    env = {e.name: e.value for e in pod.containers[0].env}
    assert env == {
        "K_MPI_JOB_ROLE": "launcher",
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
        "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
        "OMPI_MCA_orte_set_default_slots": "8",
        "NVIDIA_VISIBLE_DEVICES": None,
        "NVIDIA_DRIVER_CAPABILITIES": None,
    }
    assert (pod.hostname, pod.subdomain, pod.restart_policy) == ("mj-launcher", "mj", "OnFailure")
    assert {m.name: m.mount_path for m in pod.containers[0].volume_mounts} == {
        "ssh-auth": "/root/.ssh",
        "mpi-job-config": "/etc/mpi",
    }


def test_conditions_go_created_running_succeeded(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, _mpijob("mj", launcher=["sleep", "60"]))
    cluster.advance(10)
    running = _read(api_client, "mj")
    created, run = _condition(running, "Created"), _condition(running, "Running")
    assert created is not None and (created["reason"], created["message"]) == (
        "MPIJobCreated",
        "MPIJob default/mj is created.",
    )
    assert run is not None and (run["status"], run["message"]) == ("True", "MPIJob default/mj is running.")
    assert running["status"]["replicaStatuses"] == {"Launcher": {"active": 1}, "Worker": {"active": 2}}
    cluster.advance(120)
    done = _read(api_client, "mj")
    succeeded = _condition(done, "Succeeded")
    assert succeeded is not None and (succeeded["status"], succeeded["message"]) == (
        "True",
        "MPIJob default/mj successfully completed.",
    )
    run = _condition(done, "Running")
    assert run is not None and run["status"] == "False"
    assert done["status"]["completionTime"]


def test_a_failed_launcher_fails_the_mpijob_with_the_jobs_reason(cluster: SimServer, api_client: Any) -> None:
    body = _mpijob("mj", launcher=["sleep", "never"], runPolicy={"backoffLimit": 0})
    _create(api_client, body)
    cluster.advance(60)
    failed = _condition(_read(api_client, "mj"), "Failed")
    assert failed is not None and failed["status"] == "True"
    assert failed["reason"].startswith("BackoffLimitExceeded/")
    assert failed["message"].startswith("Job has reached the specified backoff limit: ")


def test_wait_for_workers_ready_holds_the_launcher(cluster: SimServer, api_client: Any) -> None:
    # A 16-GPU worker fits no 8-GPU node: it never runs. AtStartup creates the launcher anyway.
    _create(
        api_client,
        _mpijob("held", launcher=["sleep", "5"], workers=1, gpus=16, launcherCreationPolicy="WaitForWorkersReady"),
    )
    _create(api_client, _mpijob("early", launcher=["sleep", "600"], workers=1, gpus=16))
    cluster.advance(300)
    names = [j.metadata.name for j in k8s.BatchV1Api(api_client).list_namespaced_job(NS).items]
    assert names == ["early-launcher"]


def test_a_deleted_worker_is_recreated(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, _mpijob("mj", launcher=["sleep", "600"]))
    cluster.advance(10)
    old = _pods(api_client)["mj-worker-0"].metadata.uid
    k8s.CoreV1Api(api_client).delete_namespaced_pod("mj-worker-0", NS)
    cluster.advance(10)
    assert _pods(api_client)["mj-worker-0"].metadata.uid != old


def test_clean_pod_policy_running_deletes_the_workers_when_done(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, _mpijob("mj", launcher=["sleep", "30"], runPolicy={"cleanPodPolicy": "Running"}))
    cluster.advance(120)
    assert [n for n in _pods(api_client) if n.startswith("mj-worker")] == []


def test_an_invalid_mpijob_gets_a_validation_event_and_no_children(cluster: SimServer, api_client: Any) -> None:
    body = _mpijob("mj", launcher=["true"])
    body["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    _create(api_client, body)
    cluster.advance(10)
    events = k8s.CoreV1Api(api_client).list_namespaced_event(NS, field_selector="involvedObject.name=mj").items
    assert [(e.type, e.reason, e.message) for e in events] == [
        (
            "Warning",
            "ValidationError",
            "Found validation errors: spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: 2: must be 1",
        )
    ]
    assert _pods(api_client) == {} and "status" not in _read(api_client, "mj")


def test_deleting_the_mpijob_deletes_its_children(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, _mpijob("mj", launcher=["sleep", "600"]))
    cluster.advance(10)
    _api(api_client).delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "mj")
    cluster.advance(60)
    core = k8s.CoreV1Api(api_client)
    assert _pods(api_client) == {} and k8s.BatchV1Api(api_client).list_namespaced_job(NS).items == []
    assert [s.metadata.name for s in core.list_namespaced_service(NS).items if s.metadata.name == "mj"] == []
    assert [c.metadata.name for c in core.list_namespaced_config_map(NS).items if c.metadata.name == "mj-config"] == []
