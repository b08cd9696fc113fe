"""The three ways to run a group's test, behind one interface: render, what to watch, the verdict.

- ``trainjob``: Kubeflow Trainer v2 in upstream NVCRE's shape (research/workloads.md §4.1–4.4,
  kubeflow/trainer v2.3.0 ``plugins/mpi/mpi.go``, ``plugins/torch/torch.go``): a namespaced
  TrainingRuntime per catalog entry (MPI policy for NCCL tests: sshd workers with the GPUs, one per
  node by required anti-affinity, ready on port 22, and a GPU-less launcher depending on them;
  torch policy for training and single-node tests) and a TrainJob referencing it, pinned to the
  group's nodes through a runtime patch. Trainer supplies the hostfile at /etc/mpi/hostfile.
- ``mpijob``: kubeflow.org/v2beta1 MPIJob (research/workloads.md §3), single-node tests as Jobs.
- ``job``: batch/v1 Jobs, single-node tests only (DCGM levels, nccl-loopback); a multi-node test
  is InvalidInput (exit 2): pods of one Job each running mpirun are independent single-node runs.

Platform settings reach the ranks as mpirun ``-x NAME=VALUE`` (ranks started over ssh inherit
nothing else) and the worker pods as resources, annotations, tolerations and claims. The launcher
runs with ``restartPolicy: Never`` and ``backoffLimit: 0``: a failed run is a certification
result that isolation retests, not something to retry (upstream retries up to 6 times).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shared import errors
from shared.certify import catalog, render
from shared.certify.render import Group
from shared.certify.workloads.platforms import Platform
from shared.kube import jobs as kubejobs

TRAINER = "trainer.kubeflow.org"
TRAINER_VERSION = f"{TRAINER}/v1alpha1"
ANCESTOR = {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
JOB_LABEL = "nvcre.nvidia.com/job"
MANAGER = "nvcre.nvidia.com/controller"
DCGM_HOST = "nvidia-dcgm.gpu-operator.svc:5555"
"""The GPU Operator's standalone DCGM Service (``internalTrafficPolicy: Local``)."""
SSH_RAW = "/tmp/mpi-ssh-raw"
_SSHD_SCRIPT = (
    "set -e; if [ ! -x /usr/sbin/sshd ]; then apt-get update -qq && apt-get install -y -qq openssh-server; fi; "
    f"mkdir -p /var/run/sshd /root/.ssh; cp {SSH_RAW}/* /root/.ssh/; chmod 700 /root/.ssh; "
    "chmod 600 /root/.ssh/id_rsa; chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys; "
    "exec /usr/sbin/sshd -De"
)


@dataclass(frozen=True)
class Watch:
    """What tells a rendered workload's end: the object, its pods, and the pod whose log holds the result."""

    api_version: str
    kind: str
    name: str
    log_pod_selector: str
    pods_selector: str
    """Every pod of the workload (workers, launcher, all indexes)."""
    log_container: str | None = None
    """The container whose log holds the result (a pod with init containers needs it named)."""


@dataclass(frozen=True)
class Backend:
    name: str
    render: Callable[[Group, Platform], list[dict[str, Any]]]
    watch: Callable[[Group], Watch]


def multi_node(entry: catalog.Entry) -> bool:
    return entry.scope is catalog.Scope.GROUP


def _gpus(group: render.Group) -> int:
    return group.options.gpusPerNode or min(n.gpus for n in group.nodes)


def _values(group: render.Group) -> dict[str, Any]:
    base = render.job(group)
    return {"command": base["spec"]["template"]["spec"]["containers"][0]["command"], "job": base}


def _split_mpirun(command: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The catalog's ``[timeout T] mpirun <opts> <program> <args>`` as (wrapper, options, program)."""
    at = command.index("mpirun")
    program_at = next(i for i in range(at + 1, len(command)) if command[i].endswith("_perf_mpi"))
    return command[:at], command[at + 1 : program_at], command[program_at:]


def mpi_command(group: render.Group, platform: Platform) -> tuple[list[str], list[str]]:
    """(command, args) of the launcher: upstream's lead options, the platform's ``-x`` env, the test."""
    wrapper, options, program = _split_mpirun(_values(group)["command"])
    gpus = _gpus(group)
    exported = {"NCCL_DEBUG": "INFO", **platform.merged("env")}
    lead = ["-N", str(gpus), "--allow-run-as-root", "--mca", "plm_rsh_args", "-o StrictHostKeyChecking=no"]
    binary = program[0]
    if platform.program_dir:
        binary = f"{platform.program_dir}/{binary.removesuffix('_mpi')}"
    else:
        binary = f"/usr/local/bin/{binary}"
    env_args = [a for k, v in exported.items() for a in ("-x", f"{k}={v}")]
    del options  # the catalog's own options are upstream's lead options, rendered above
    return [*wrapper, platform.mpirun or "/usr/local/mpi/bin/mpirun"], [*lead, *env_args, binary, *program[1:]]


def _tolerations(group: render.Group, platform: Platform) -> list[dict[str, Any]]:
    base = render.job(group)["spec"]["template"]["spec"].get("tolerations") or []
    return [*base, *platform.tolerations]


def _owner(group: render.Group) -> dict[str, Any]:
    job = render.job(group)
    meta = {k: v for k, v in job["metadata"].items() if k in ("name", "namespace", "labels", "annotations")}
    if "ownerReferences" in job["metadata"]:
        meta["ownerReferences"] = job["metadata"]["ownerReferences"]
    return meta


def runtime_name(group: render.Group) -> str:
    return f"{group.cert.name[:36]}-{group.entry.variant}-runtime"


def _claims(group: render.Group, platform: Platform) -> dict[str, Any]:
    if not platform.compute_domain:
        return {}
    return {
        "resourceClaims": [
            {"name": "compute-domain-channel", "resourceClaimTemplateName": f"{runtime_name(group)[:-8]}-channel"}
        ]
    }


def _compute_domain(group: render.Group, owner: dict[str, Any]) -> dict[str, Any]:
    name = runtime_name(group)[: -len("-runtime")]
    return {
        "apiVersion": "resource.nvidia.com/v1beta1",
        "kind": "ComputeDomain",
        "metadata": {"name": f"{name}-compute-domain", "namespace": owner["namespace"]},
        "spec": {
            "numNodes": len(group.nodes),
            "channel": {"resourceClaimTemplate": {"name": f"{name}-channel"}, "allocationMode": "Single"},
        },
    }


def _worker_container(group: render.Group, platform: Platform, image: str) -> dict[str, Any]:
    limits = {"nvidia.com/gpu": str(_gpus(group)), **platform.merged("workerResources")}
    container: dict[str, Any] = {
        "name": "node",
        "image": image,
        "command": ["sh", "-c", _SSHD_SCRIPT],
        "readinessProbe": {"tcpSocket": {"port": 22}, "initialDelaySeconds": 5},
        "resources": {"limits": limits, "requests": dict(limits)},
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    if platform.compute_domain:
        container["resources"]["claims"] = [{"name": "compute-domain-channel"}]
    return container


def _pod_meta(platform: Platform) -> dict[str, Any]:
    notes = platform.merged("podAnnotations")
    return {"annotations": notes} if notes else {}


# ------------------------------------------------------------------------------------------ trainjob
def _mpi_runtime(group: render.Group, platform: Platform, owner: dict[str, Any]) -> dict[str, Any]:
    image = platform.image or group.options.image or group.entry.image
    worker_pod: dict[str, Any] = {
        "restartPolicy": "OnFailure",
        "containers": [_worker_container(group, platform, image)],
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
        **_claims(group, platform),
    }
    launcher_pod = {
        "restartPolicy": "Never",
        "initContainers": [
            {
                "name": "fix-ssh-permissions",
                "image": image,
                "command": [
                    "sh",
                    "-c",
                    f"cp {SSH_RAW}/* /root/.ssh/ && chmod 600 /root/.ssh/id_rsa && chmod 644 /root/.ssh/*.pub",
                ],
                "volumeMounts": [{"name": "ssh-keys", "mountPath": "/root/.ssh"}],
            }
        ],
        "containers": [
            {
                "name": "node",
                "image": image,
                "resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
                "volumeMounts": [{"name": "ssh-keys", "mountPath": "/root/.ssh"}],
            }
        ],
        "volumes": [{"name": "ssh-keys", "emptyDir": {}}],
    }
    return _runtime(
        owner,
        runtime_name(group),
        {
            "numNodes": 1,
            "mpi": {"mpiImplementation": "OpenMPI", "numProcPerNode": _gpus(group), "sshAuthMountPath": SSH_RAW},
        },
        {
            "network": {"publishNotReadyAddresses": True},
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
            "replicatedJobs": [
                {
                    "name": "node",
                    "template": {"spec": {"template": {"metadata": _pod_meta(platform), "spec": worker_pod}}},
                },
                {
                    "name": "launcher",
                    "dependsOn": [{"name": "node", "status": "Ready"}],
                    "template": {
                        "metadata": {"labels": dict(ANCESTOR)},
                        "spec": {"backoffLimit": 0, "template": {"spec": launcher_pod}},
                    },
                },
            ],
        },
    )


def _runtime(owner: dict[str, Any], name: str, policy: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": owner["namespace"], "labels": dict(owner["labels"])}
    if "ownerReferences" in owner:
        meta["ownerReferences"] = owner["ownerReferences"]
    return {
        "apiVersion": TRAINER_VERSION,
        "kind": "TrainingRuntime",
        "metadata": meta,
        "spec": {"mlPolicy": policy, "template": {"spec": spec}},
    }


def _torch_runtime(group: render.Group, platform: Platform, owner: dict[str, Any]) -> dict[str, Any]:
    base = render.job(group)["spec"]["template"]["spec"]
    container: dict[str, Any] = {"name": "node", "image": group.options.image or group.entry.image}
    container["resources"] = base["containers"][0]["resources"]
    pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    dcgm = group.entry.parser is catalog.Parser.DCGM
    if dcgm:
        # research/workloads.md §4.4: hostNetwork, privileged, no retry (backoffLimit 0).
        pod.update({"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"})
        container["securityContext"] = {"privileged": True}
    elif multi_node(group.entry):
        container["resources"] = {"limits": {**container["resources"]["limits"], **platform.merged("workerResources")}}
        pod["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": render.HOSTNAME,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {JOB_LABEL: group.name}},
            }
        ]
    pod.update(_claims(group, platform) if multi_node(group.entry) else {})
    return _runtime(
        owner,
        runtime_name(group),
        {"numNodes": len(group.nodes), "torch": {}},
        {
            "replicatedJobs": [
                {
                    "name": "node",
                    "template": {
                        "metadata": {"labels": dict(ANCESTOR)},
                        "spec": {"backoffLimit": 0, "template": {"metadata": _pod_meta(platform), "spec": pod}},
                    },
                }
            ]
        },
    )


def _program(group: render.Group) -> list[str]:
    """The single-process command of a torch-policy entry (DCGM against the node's DCGM Service)."""
    command = list(_values(group)["command"])
    if group.entry.parser is catalog.Parser.DCGM:
        at = command.index("dcgmi")
        return [*command[: at + 2], "--host", DCGM_HOST, *command[at + 2 :]]
    return command


def _placement_patch(group: render.Group, platform: Platform, jobs: list[str]) -> dict[str, Any]:
    names = [n.name for n in group.nodes]
    tolerations = _tolerations(group, platform) or [{"operator": "Exists"}]
    replicated = []
    for rjob in jobs:
        spec: dict[str, Any] = {
            "affinity": {"nodeAffinity": kubejobs.node_affinity(names)},
            "tolerations": tolerations,
        }
        template: dict[str, Any] = {"spec": spec, "metadata": {"labels": {render.CERT_LABEL: group.cert.name}}}
        if rjob == "node":
            template["metadata"]["labels"][JOB_LABEL] = group.name
            if multi_node(group.entry) and group.entry.parser is catalog.Parser.NCCL:
                spec["affinity"]["podAntiAffinity"] = {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {JOB_LABEL: group.name}}, "topologyKey": render.HOSTNAME}
                    ]
                }
        replicated.append({"name": rjob, "template": {"spec": {"template": template}}})
    return {"manager": MANAGER, "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": replicated}}}}


def trainjob(group: render.Group, platform: Platform) -> list[dict[str, Any]]:
    owner = _owner(group)
    mpi = multi_node(group.entry) and group.entry.parser is catalog.Parser.NCCL
    runtime = _mpi_runtime(group, platform, owner) if mpi else _torch_runtime(group, platform, owner)
    trainer: dict[str, Any] = {
        "image": platform.image if mpi and platform.image else group.options.image or group.entry.image
    }
    if mpi:
        command, args = mpi_command(group, platform)
        trainer.update({"command": command, "args": args, "numNodes": len(group.nodes), "numProcPerNode": _gpus(group)})
    else:
        trainer.update({"command": _program(group), "numNodes": len(group.nodes)})
        env = dict(group.entry.env)
        if multi_node(group.entry):
            env.update(platform.merged("env"))
            trainer["numProcPerNode"] = _gpus(group)
        if env:
            trainer["env"] = [{"name": k, "value": v} for k, v in sorted(env.items())]
    timeout = int(render.seconds(group.options.timeoutPerJob or group.entry.defaults.get("timeoutPerJob", "1h")))
    job = {
        "apiVersion": TRAINER_VERSION,
        "kind": "TrainJob",
        "metadata": owner,
        "spec": {
            "runtimeRef": {"name": runtime["metadata"]["name"], "apiGroup": TRAINER, "kind": "TrainingRuntime"},
            "activeDeadlineSeconds": timeout,
            "trainer": trainer,
            "runtimePatches": [_placement_patch(group, platform, ["node", "launcher"] if mpi else ["node"])],
        },
    }
    extra = [_compute_domain(group, owner)] if platform.compute_domain and multi_node(group.entry) else []
    return [*extra, runtime, job]


def _trainjob_watch(group: render.Group) -> Watch:
    mpi = multi_node(group.entry) and group.entry.parser is catalog.Parser.NCCL
    rjob = "launcher" if mpi else "node"
    return Watch(
        TRAINER_VERSION,
        "TrainJob",
        group.name,
        f"jobset.sigs.k8s.io/jobset-name={group.name},jobset.sigs.k8s.io/replicatedjob-name={rjob}",
        f"jobset.sigs.k8s.io/jobset-name={group.name}",
        "node",
    )


# ------------------------------------------------------------------------------------------- mpijob
def mpijob(group: render.Group, platform: Platform) -> list[dict[str, Any]]:
    if not multi_node(group.entry):
        return job(group, platform)
    if group.entry.parser is not catalog.Parser.NCCL:
        raise errors.InvalidInput(
            f"{group.entry.key} runs torchrun, not mpirun; it runs as a TrainJob only (use --backend trainjob)",
            where="--backend",
        )
    doc = render.mpijob(group)
    command, args = mpi_command(group, platform)
    image = platform.image or group.options.image or group.entry.image
    specs = doc["spec"]["mpiReplicaSpecs"]
    launcher = specs["Launcher"]["template"]["spec"]["containers"][0]
    launcher.update({"image": image, "command": [*command, *args]})
    launcher.pop("env", None)
    worker_tpl = specs["Worker"]["template"]
    worker = worker_tpl["spec"]["containers"][0]
    worker["image"] = image
    worker["resources"] = {"limits": {**worker["resources"]["limits"], **platform.merged("workerResources")}}
    worker_tpl["spec"].update(_claims(group, platform))
    tolerations = _tolerations(group, platform)
    for tpl in (specs["Launcher"]["template"], worker_tpl):
        if tolerations:
            tpl["spec"]["tolerations"] = tolerations
    notes = platform.merged("podAnnotations")
    if notes:
        worker_tpl["metadata"]["annotations"] = notes
    extra = [_compute_domain(group, _owner(group))] if platform.compute_domain else []
    return [*extra, doc]


def _mpijob_watch(group: render.Group) -> Watch:
    if not multi_node(group.entry) or group.entry.parser is not catalog.Parser.NCCL:
        return _job_watch(group)
    return Watch(
        render.MPI_API_VERSION,
        "MPIJob",
        group.name,
        f"training.kubeflow.org/job-name={group.name},training.kubeflow.org/job-role=launcher",
        f"training.kubeflow.org/job-name={group.name}",
    )


# ---------------------------------------------------------------------------------------------- job
def job(group: render.Group, platform: Platform) -> list[dict[str, Any]]:
    if multi_node(group.entry):
        raise errors.InvalidInput(
            f"{group.entry.key} runs across nodes; the job backend runs single-node tests only "
            "(use --backend trainjob or mpijob)",
            where="--backend",
        )
    doc = render.job(group)
    pod = doc["spec"]["template"]["spec"]
    container = pod["containers"][0]
    if group.entry.parser is catalog.Parser.DCGM:
        container["command"] = _program(group)
        container["securityContext"] = {"privileged": True}
        pod.update({"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"})
    return [doc]


def _job_watch(group: render.Group) -> Watch:
    selector = f"{kubejobs.JOB_NAME_LABEL}={group.name}"
    return Watch("batch/v1", "Job", group.name, selector, selector)


BACKENDS: dict[str, Backend] = {
    "trainjob": Backend("trainjob", trainjob, _trainjob_watch),
    "mpijob": Backend("mpijob", mpijob, _mpijob_watch),
    "job": Backend("job", job, _job_watch),
}
DEFAULT = "trainjob"
TRAINJOBS = f"{TRAINER_VERSION}/trainjobs"
JOBSETS = "jobset.x-k8s.io/v1alpha2/jobsets"
MPIJOBS = f"{render.MPI_API_VERSION}/mpijobs"
COMPUTE_DOMAINS = "resource.nvidia.com/v1beta1/computedomains"
OPERATORS = {
    TRAINJOBS: "Kubeflow Trainer v2",
    JOBSETS: "JobSet",
    MPIJOBS: "MPI Operator",
    COMPUTE_DOMAINS: "NVIDIA DRA driver (ComputeDomain)",
}
"""The resources (group/version/plural) certification creates, and what serves each."""
NEEDS = {"trainjob": (TRAINJOBS, JOBSETS), "mpijob": (MPIJOBS,), "job": ()}
"""The resources each backend's objects need served."""


class BackendMissing(errors.ToolError):
    """The backend a category needs is not served by the cluster (exit 6, unavailable: install it)."""

    exit_code = errors.Unavailable.exit_code


def missing(backend: str, served: set[str]) -> list[str]:
    """What the cluster lacks for ``backend``: each unserved resource, named with its operator."""
    return [f"{OPERATORS[r]} ({r.rsplit('/', 1)[0]})" for r in NEEDS[backend] if r not in served]


def pick(entry: catalog.Entry, served: set[str], explicit: str | None = None, *, compute_domain: bool = False) -> str:
    """The backend one category runs with on this cluster (``served``: group/version/plural).

    ``explicit`` (``spec.backend``, ``--backend``) wins; a multi-node test on ``job`` is
    InvalidInput. Otherwise a multi-node test takes Trainer, else the MPI Operator (NCCL tests
    only: training runs torchrun); a single-node test takes Trainer when served, else a batch/v1
    Job, which every cluster serves. A multi-node test on a platform whose NVLink spans nodes
    (``compute_domain``) also needs ComputeDomains. BackendMissing names what to install.
    """
    if compute_domain and multi_node(entry) and COMPUTE_DOMAINS not in served:
        raise BackendMissing(
            f"{entry.key}: multi-node NVLink needs {OPERATORS[COMPUTE_DOMAINS]}, not served here "
            "(see `nvcrectl setup check`)"
        )
    if explicit is not None:
        return _explicit(entry, served, explicit)
    if not missing("trainjob", served):
        return "trainjob"
    if not multi_node(entry):
        return "job"
    if entry.parser is catalog.Parser.NCCL and not missing("mpijob", served):
        return "mpijob"
    options = "Kubeflow Trainer v2 with JobSet" + (
        " or the MPI Operator" if entry.parser is catalog.Parser.NCCL else ""
    )
    raise BackendMissing(
        f"{entry.key} runs across nodes and needs {options}; this cluster serves neither "
        "(see `nvcrectl setup check`; aicr recipes install kubeflow-trainer)"
    )


def _explicit(entry: catalog.Entry, served: set[str], explicit: str) -> str:
    if explicit not in BACKENDS:
        raise errors.InvalidInput(f"unknown backend {explicit!r}; known: {', '.join(BACKENDS)}", where="backend")
    if explicit == "job" and multi_node(entry):
        raise errors.InvalidInput(
            f"{entry.key} runs across nodes; the job backend runs single-node tests only", where="backend"
        )
    if explicit == "mpijob" and multi_node(entry) and entry.parser is not catalog.Parser.NCCL:
        raise errors.InvalidInput(f"{entry.key} runs torchrun, not mpirun; it runs as a TrainJob only", where="backend")
    lacking = missing(explicit, served)
    if lacking:
        raise BackendMissing(f"{entry.key}: backend {explicit} needs {', '.join(lacking)}, not served here")
    return explicit
