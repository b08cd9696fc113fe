"""The simulated Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1), over HTTP with the official client.

Covers, for an MPI TrainingRuntime in NVCRE's shape (research/workloads.md §4.2): the runtime
snapshot ConfigMap, the immutable ``kubernetes.io/ssh-auth`` Secret with an ECDSA P-521 key, the
hostfile ConfigMap (``<tj>-node-<j>-<p>.<tj> slots=<n>``), the JobSet named like the TrainJob with
``parallelism`` = ``numNodes``, the four OpenMPI variables, hostfile and SSH mounts on the launcher
only and the trainer's command and env on it, every child controlled by the TrainJob; the launcher
Job held until the workers are Ready; ``Complete``/``Failed`` copied from the JobSet with its reason
and message, ``jobsStatus``; the snapshot shielding a running TrainJob from its runtime being deleted;
for a torch runtime the ``PET_*`` variables and port 29500; ``activeDeadlineSeconds``; suspension;
the webhook's refusals (reserved variables, a missing runtime: 403 with upstream's text) and the
CRD's name rule (422); cascade deletion; a cluster without Trainer answering 404; and ``serve
--operators``. Sources: kubeflow/trainer v2.3.0 ``pkg/runtime/framework/plugins/mpi/mpi.go``,
``plugins/torch/torch.go``, ``plugins/jobset``, ``pkg/webhooks/trainjob_webhook.go``.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from shared import yamlio
from shared.sim import SimServer, operators
from tests.conftest import TEAM_SHARED

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
NS = "default"
DENIED = 'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
ANCESTOR = {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}


@pytest.fixture()
def cluster(gpu_sim: SimServer) -> SimServer:
    gpu_sim.operators.install(["jobset", "trainer"])
    gpu_sim.add_gpu_nodes(3, gpu="h100")
    return gpu_sim


def _objects(api_client: Any) -> Any:
    return k8s.CustomObjectsApi(api_client)


def _mpi_runtime(name: str = "ar-runtime", *, worker: list[str] | None = None) -> dict[str, Any]:
    """NVCRE's nccl-all-reduce runtime, reduced: sshd workers with 8 GPUs, a launcher that depends on them."""
    worker_container = {
        "name": "node",
        "image": "nvcr.io/nvidia/pytorch:26.01-py3",
        "command": worker or ["/usr/sbin/sshd", "-De"],
        "resources": {"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8"}},
    }
    launcher_container = {"name": "node", "image": "nvcr.io/nvidia/pytorch:26.01-py3"}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TrainingRuntime",
        "metadata": {"name": name},
        "spec": {
            "mlPolicy": {
                "numNodes": 1,
                "mpi": {"mpiImplementation": "OpenMPI", "numProcPerNode": 8, "sshAuthMountPath": "/tmp/mpi-ssh-raw"},
            },
            "template": {
                "spec": {
                    "network": {"publishNotReadyAddresses": True},
                    "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {"spec": {"template": {"spec": {"containers": [worker_container]}}}},
                        },
                        {
                            "name": "launcher",
                            "dependsOn": [{"name": "node", "status": "Ready"}],
                            "template": {
                                "metadata": {"labels": ANCESTOR},
                                "spec": {"backoffLimit": 0, "template": {"spec": {"containers": [launcher_container]}}},
                            },
                        },
                    ],
                }
            },
        },
    }


def _torch_runtime(name: str = "torch-runtime") -> dict[str, Any]:
    container = {"name": "node", "image": "pytorch", "resources": {"limits": {"nvidia.com/gpu": "8"}}}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TrainingRuntime",
        "metadata": {"name": name},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {"labels": ANCESTOR},
                                "spec": {"template": {"spec": {"containers": [container]}}},
                            },
                        }
                    ]
                }
            },
        },
    }


def _trainjob(name: str, runtime: str, **trainer: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {"runtimeRef": {"name": runtime, "kind": "TrainingRuntime"}, "trainer": trainer},
    }


def _create(api_client: Any, plural: str, body: dict[str, Any]) -> dict[str, Any]:
    return dict(_objects(api_client).create_namespaced_custom_object(GROUP, VERSION, NS, plural, body))


def _read(
    api_client: Any, name: str, *, group: str = GROUP, version: str = VERSION, plural: str = "trainjobs"
) -> dict[str, Any]:
    return dict(_objects(api_client).get_namespaced_custom_object(group, version, NS, plural, name))


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


def _env(container: Any) -> dict[str, Any]:
    return {e.name: e.value if e.value_from is None else e.value_from.field_ref.field_path for e in container.env or []}


def _launch(api_client: Any, name: str = "tj", *, command: list[str] | None = None) -> dict[str, Any]:
    _create(api_client, "trainingruntimes", _mpi_runtime())
    trainer = {
        "numNodes": 2,
        "numProcPerNode": 8,
        "command": command or ["sleep", "30"],
        "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
    }
    return _create(api_client, "trainjobs", _trainjob(name, "ar-runtime", **trainer))


def test_an_mpi_trainjob_gets_the_children_trainer_creates(cluster: SimServer, api_client: Any) -> None:
    created = _launch(api_client)
    cluster.advance(10)
    core = k8s.CoreV1Api(api_client)
    snapshot = core.read_namespaced_config_map("tj-runtime-snapshot", NS)
    assert "kind: TrainingRuntime" in snapshot.data["runtime"] and "name: ar-runtime" in snapshot.data["runtime"]
    secret = core.read_namespaced_secret("tj-mpi-ssh-auth", NS)
    assert (secret.type, secret.immutable) == ("kubernetes.io/ssh-auth", True)
    private = serialization.load_pem_private_key(base64.b64decode(secret.data["ssh-privatekey"]), None)
    public = serialization.load_ssh_public_key(base64.b64decode(secret.data["ssh-publickey"]))
    assert base64.b64decode(secret.data["ssh-privatekey"]).startswith(b"-----BEGIN EC PRIVATE KEY-----")
    assert isinstance(private, ec.EllipticCurvePrivateKey) and private.curve.name == "secp521r1"
    assert private.public_key().public_numbers() == public.public_numbers()  # type: ignore[union-attr]
    hostfile = core.read_namespaced_config_map("tj-mpi-hostfile", NS).data["hostfile"]
    assert hostfile == "tj-node-0-0.tj slots=8\ntj-node-0-1.tj slots=8\n"
    for obj in (snapshot, secret, core.read_namespaced_config_map("tj-mpi-hostfile", NS)):
        owner = obj.metadata.owner_references[0]
        assert (owner.kind, owner.uid, owner.controller) == ("TrainJob", created["metadata"]["uid"], True)
    js = _read(api_client, "tj", group="jobset.x-k8s.io", version="v1alpha2", plural="jobsets")
    assert js["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    node_job = js["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert (node_job["parallelism"], node_job["completions"]) == (2, 2)
    jobs = {j.metadata.name: j for j in k8s.BatchV1Api(api_client).list_namespaced_job(NS).items}
    launcher = jobs["tj-launcher-0"].spec.template.spec
    main = launcher.containers[0]
    assert main.command == ["sleep", "30"]
    assert _env(main) == {
        "OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_set_default_slots": "8",
        "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
        "NCCL_DEBUG": "INFO",
    }
    assert {m.name: m.mount_path for m in main.volume_mounts} == {
        "mpi-ssh-auth": "/tmp/mpi-ssh-raw",
        "mpi-hostfile": "/etc/mpi",
    }
    volumes = {v.name: v for v in launcher.volumes}
    assert volumes["mpi-hostfile"].config_map.name == "tj-mpi-hostfile"
    assert volumes["mpi-ssh-auth"].secret.secret_name == "tj-mpi-ssh-auth"
    worker = jobs["tj-node-0"].spec.template.spec.containers[0]
    assert not any(name.startswith("OMPI_") for name in _env(worker))
    assert {m.name for m in worker.volume_mounts} == {"mpi-ssh-auth"}
    hosts = sorted(p.spec.hostname for p in core.list_namespaced_pod(NS).items)
    assert hosts == ["tj-launcher-0-0", "tj-node-0-0", "tj-node-0-1"]


def test_the_trainjob_copies_the_jobsets_completion_and_job_counts(cluster: SimServer, api_client: Any) -> None:
    _launch(api_client)
    cluster.advance(120)
    tj = _read(api_client, "tj")
    complete = _condition(tj, "Complete")
    assert complete is not None and complete["status"] == "True"
    assert (complete["reason"], complete["message"]) == ("AllJobsCompleted", "jobset completed successfully")
    launcher = next(s for s in tj["status"]["jobsStatus"] if s["name"] == "launcher")
    assert launcher == {"name": "launcher", "ready": 0, "succeeded": 1, "failed": 0, "active": 0, "suspended": 0}


def test_a_failed_launcher_fails_the_trainjob_with_the_jobsets_reason(cluster: SimServer, api_client: Any) -> None:
    _launch(api_client, command=["sleep", "never"])
    cluster.advance(120)
    failed = _condition(_read(api_client, "tj"), "Failed")
    assert failed is not None and failed["status"] == "True" and failed["reason"] == "FailedJobs"
    assert failed["message"] == "jobset failed due to one or more job failures (first failed job: tj-launcher-0)"


def test_the_launcher_waits_for_every_worker_to_be_ready(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, "trainingruntimes", _mpi_runtime())
    # Four workers of 8 GPUs on three 8-GPU nodes: one stays Pending, never Ready.
    _create(api_client, "trainjobs", _trainjob("big", "ar-runtime", numNodes=4, command=["sleep", "5"]))
    cluster.advance(600)
    names = [j.metadata.name for j in k8s.BatchV1Api(api_client).list_namespaced_job(NS).items]
    assert names == ["big-node-0"]
    assert _condition(_read(api_client, "big"), "Complete") is None


def test_the_snapshot_keeps_a_running_trainjob_going_after_its_runtime_is_deleted(
    cluster: SimServer, api_client: Any
) -> None:
    _launch(api_client, command=["sleep", "60"])
    cluster.advance(1)
    _objects(api_client).delete_namespaced_custom_object(GROUP, VERSION, NS, "trainingruntimes", "ar-runtime")
    cluster.advance(200)
    complete = _condition(_read(api_client, "tj"), "Complete")
    assert complete is not None and complete["status"] == "True"


def test_a_torch_trainjob_gets_the_pet_variables_and_port(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, "trainingruntimes", _torch_runtime())
    _create(api_client, "trainjobs", _trainjob("tt", "torch-runtime", numNodes=2, command=["sleep", "600"]))
    cluster.advance(10)
    job = k8s.BatchV1Api(api_client).read_namespaced_job("tt-node-0", NS)
    assert (job.spec.parallelism, job.spec.completions) == (2, 2)
    main = job.spec.template.spec.containers[0]
    env = _env(main)
    assert env["PET_NNODES"] == "2" and env["PET_NPROC_PER_NODE"] == "auto"
    assert env["PET_NODE_RANK"] == "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    assert (env["PET_MASTER_ADDR"], env["PET_MASTER_PORT"]) == ("tt-node-0-0.tt", "29500")
    assert [(p.container_port, p.protocol) for p in main.ports] == [(29500, "TCP")]


def test_the_active_deadline_fails_the_trainjob_and_deletes_its_jobset(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, "trainingruntimes", _mpi_runtime())
    body = _trainjob("late", "ar-runtime", numNodes=2, command=["sleep", "3600"])
    body["spec"]["activeDeadlineSeconds"] = 120
    _create(api_client, "trainjobs", body)
    cluster.advance(300)
    failed = _condition(_read(api_client, "late"), "Failed")
    assert failed is not None and (failed["reason"], failed["message"]) == (
        "DeadlineExceeded",
        "TrainJob exceeded its active deadline",
    )
    jobsets = _objects(api_client).list_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", NS, "jobsets")["items"]
    assert jobsets == []


def test_a_suspended_trainjob_runs_nothing_until_resumed(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, "trainingruntimes", _mpi_runtime())
    body = _trainjob("held", "ar-runtime", numNodes=2, command=["sleep", "10"])
    body["spec"]["suspend"] = True
    _create(api_client, "trainjobs", body)
    cluster.advance(60)
    suspended = _condition(_read(api_client, "held"), "Suspended")
    assert suspended is not None and (suspended["status"], suspended["reason"], suspended["message"]) == (
        "True",
        "Suspended",
        "TrainJob is suspended",
    )
    assert k8s.CoreV1Api(api_client).list_namespaced_pod(NS).items == []
    _objects(api_client).patch_namespaced_custom_object(
        GROUP, VERSION, NS, "trainjobs", "held", {"spec": {"suspend": False}}
    )
    cluster.advance(120)
    tj = _read(api_client, "held")
    resumed = _condition(tj, "Suspended")
    assert resumed is not None and (resumed["status"], resumed["reason"]) == ("False", "Resumed")
    complete = _condition(tj, "Complete")
    assert complete is not None and complete["status"] == "True"


@pytest.mark.parametrize(
    ("runtime", "env", "reserved"),
    [
        (_mpi_runtime, "OMPI_MCA_orte_default_hostfile", "[OMPI_MCA_orte_default_hostfile]"),
        (_torch_runtime, "PET_MASTER_ADDR", "[PET_MASTER_ADDR]"),
    ],
    ids=["mpi", "torch"],
)
def test_the_webhook_refuses_reserved_variables_in_the_trainer_env(
    cluster: SimServer, api_client: Any, runtime: Any, env: str, reserved: str
) -> None:
    made = runtime()
    _create(api_client, "trainingruntimes", made)
    body = _trainjob("tj", made["metadata"]["name"], env=[{"name": env, "value": "x"}])
    with pytest.raises(ApiException) as caught:
        _create(api_client, "trainjobs", body)
    assert caught.value.status == 403
    message = json.loads(caught.value.body)["message"]
    assert message == (
        f'{DENIED}spec.trainer.env: Invalid value: [{{"name":"{env}","value":"x"}}]: '
        f"must not have reserved envs, invalid envs configured: {reserved}"
    )


def test_the_webhook_refuses_a_trainjob_whose_runtime_does_not_exist(cluster: SimServer, api_client: Any) -> None:
    with pytest.raises(ApiException) as caught:
        _create(api_client, "trainjobs", _trainjob("tj", "missing"))
    assert caught.value.status == 403
    assert json.loads(caught.value.body)["message"] == (
        f"{DENIED}spec.runtimeRef: Invalid value: "
        '{"apiGroup":"trainer.kubeflow.org","kind":"TrainingRuntime","name":"missing"}: '
        'trainingruntimes.trainer.kubeflow.org "missing" not found: specified trainingRuntime must be created before '
        "the TrainJob is created"
    )


def test_the_crd_refuses_a_name_that_is_no_rfc_1035_label(cluster: SimServer, api_client: Any) -> None:
    _create(api_client, "trainingruntimes", _mpi_runtime())
    with pytest.raises(ApiException) as caught:
        _create(api_client, "trainjobs", _trainjob("1tj", "ar-runtime"))
    assert caught.value.status == 422 and "metadata.name must match RFC 1035 DNS label format" in caught.value.body


def test_deleting_the_trainjob_deletes_everything_it_made(cluster: SimServer, api_client: Any) -> None:
    _launch(api_client, command=["sleep", "3600"])
    cluster.advance(10)
    _objects(api_client).delete_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", "tj")
    cluster.advance(60)
    core = k8s.CoreV1Api(api_client)
    assert [
        c.metadata.name for c in core.list_namespaced_config_map(NS).items if c.metadata.name.startswith("tj-")
    ] == []
    assert [s.metadata.name for s in core.list_namespaced_secret(NS).items if s.metadata.name.startswith("tj-")] == []
    assert core.list_namespaced_pod(NS).items == [] and k8s.BatchV1Api(api_client).list_namespaced_job(NS).items == []


def test_a_bare_cluster_answers_404_for_trainjobs(sim: SimServer, api_client: Any) -> None:
    with pytest.raises(ApiException) as caught:
        _create(api_client, "trainjobs", _trainjob("tj", "ar-runtime"))
    assert caught.value.status == 404


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("trainer,jobset,mpi-operator", ("trainer", "jobset", "mpi-operator")),
        ("jobset", ("jobset",)),
        ("none", ()),
    ],
    ids=["default", "jobset-alone", "none"],
)
def test_operator_lists_parse(text: str, expected: tuple[str, ...]) -> None:
    assert tuple(o.value for o in operators.parse(text)) == expected


def test_serve_refuses_trainer_without_jobset(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "shared.sim",
            "serve",
            "--kubeconfig-out",
            str(tmp_path / "k"),
            "--operators",
            "trainer",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "trainer needs jobset" in done.stderr


RUNTIMES = sorted((TEAM_SHARED / "reference" / "schemas").glob("trainer-runtime-*.yaml"))


@pytest.mark.skipif(not RUNTIMES, reason="the team reference folder (../shared) is absent")
@pytest.mark.parametrize("path", RUNTIMES, ids=[p.stem for p in RUNTIMES])
def test_trainers_shipped_runtimes_fit_our_crd_without_a_dropped_field(
    cluster: SimServer, api_client: Any, path: Path
) -> None:
    """The sim fixture fails a test on any Warning header, so a field our CRD would prune fails here."""
    runtime = yamlio.load_file(path)
    made = _objects(api_client).create_cluster_custom_object(GROUP, VERSION, "clustertrainingruntimes", runtime)
    names = [r["name"] for r in made["spec"]["template"]["spec"]["replicatedJobs"]]
    assert names == [r["name"] for r in runtime["spec"]["template"]["spec"]["replicatedJobs"]]
    assert runtime["spec"]["mlPolicy"].items() <= made["spec"]["mlPolicy"].items()


def test_the_state_column_kubectl_shows_is_the_last_conditions_type() -> None:
    """Trainer's printer column ``.status.conditions[-1:].type``: a slice, as client-go's jsonpath reads it."""
    from shared.sim.apiserver import tables
    from shared.sim.operators import trainercrd

    (version,) = trainercrd.trainjob()["spec"]["versions"]
    state = next(c for c in version["additionalPrinterColumns"] if c["name"] == "State")
    finished = {"status": {"conditions": [{"type": "Created"}, {"type": "Complete"}]}}
    assert tables.json_path(finished, state["jsonPath"]) == "Complete"
    assert tables.json_path({"status": {}}, state["jsonPath"]) is None
    assert tables.json_path(finished, ".status.conditions[-1].type") == "Complete"
    assert tables.json_path(finished, ".status.conditions[0:1].type") == "Created"
