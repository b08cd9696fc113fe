"""What Kubeflow Trainer builds for a TrainJob from its runtime, as pure functions.

The steps of kubeflow/trainer v2.3.0 (research/workloads.md §1.2): ``runtimePatches`` are
strategic-merged into the runtime's JobSet template (replicatedJobs by name) and their metadata
propagated; one pod set per replicatedJob, counted by ``parallelism`` — or ``mlPolicy.numNodes``
for the one labelled ``trainer.kubeflow.org/trainjob-ancestor-step: trainer``, whose ``node``
container also takes ``trainer.resourcesPerNode``; then the ML policy plugin: MPI (``node`` count
from ``trainer.numNodes``, ``numProcPerNode`` defaulting to the GPUs per node, the SSH volume on
``node`` and ``launcher``, the hostfile volume and the four OpenMPI variables on the launcher) or
torch (``PET_*`` and port 29500 on the trainer's ``node`` container); last the JobSet plugin
(named like the TrainJob, ``parallelism``/``completions`` = pod-set counts, the trainer's image,
command, args and env on the ancestor's ``node`` container, ``suspend`` copied). Also here:
the hostfile, the Secret and ConfigMaps, and the webhook's plugin checks. Left out: initializers,
jax/xgboost/flux plugins, pod-group plugins, torchtune's argument rewriting, ``envInjection``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shared.sim.apiserver import apierrors, patches
from shared.sim.operators import jobsetcrd, sshkeys, trainercrd

ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER = "trainer"
NODE, LAUNCHER = "node", "launcher"
SSH_VOLUME, HOSTFILE_VOLUME = "mpi-ssh-auth", "mpi-hostfile"
HOSTFILE_DIR, HOSTFILE_KEY = "/etc/mpi", "hostfile"
MASTER_PORT = 29500
INDEX_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
OMPI_HOSTFILE = "OMPI_MCA_orte_default_hostfile"
OMPI_ENV = (
    OMPI_HOSTFILE,
    "OMPI_MCA_orte_keep_fqdn_hostnames",
    "OMPI_MCA_orte_set_default_slots",
    "OMPI_MCA_plm_rsh_args",
)
TORCH_ENV = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT")


def ssh_secret_name(trainjob: str) -> str:
    return f"{trainjob}-mpi-ssh-auth"


def hostfile_name(trainjob: str) -> str:
    return f"{trainjob}-mpi-hostfile"


def snapshot_name(trainjob: str) -> str:
    return f"{trainjob}-runtime-snapshot"


@dataclass
class PodSet:
    name: str
    ancestor: str | None
    count: int


@dataclass
class Info:
    """The runtime as it applies to one TrainJob (Trainer's ``runtime.Info``)."""

    spec: dict[str, Any]
    """The JobSet spec being built (the runtime's template spec, patched, then changed by plugins)."""
    policy: dict[str, Any]
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    pod_sets: list[PodSet] = field(default_factory=list)

    def pod_set(self, name: str) -> PodSet | None:
        return next((p for p in self.pod_sets if p.name == name), None)

    def ancestor(self) -> PodSet | None:
        return next((p for p in self.pod_sets if p.ancestor == TRAINER), None)

    def pod_spec(self, name: str) -> dict[str, Any]:
        rjob = next(r for r in self.spec.get("replicatedJobs") or [] if r["name"] == name)
        job = rjob.setdefault("template", {}).setdefault("spec", {})
        return job.setdefault("template", {}).setdefault("spec", {})  # type: ignore[no-any-return]


def _trainer(trainjob: Mapping[str, Any]) -> dict[str, Any]:
    return dict((trainjob.get("spec") or {}).get("trainer") or {})


def container(pod_spec: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((c for c in pod_spec.get("containers") or [] if c.get("name") == name), None)


def upsert(items: list[dict[str, Any]], new: dict[str, Any], key: str = "name") -> None:
    for i, item in enumerate(items):
        if item.get(key) == new.get(key):
            items[i] = new
            return
    items.append(new)


# ------------------------------------------------------------------ runtime info
def runtime_info(trainjob: Mapping[str, Any], runtime_spec: Mapping[str, Any]) -> Info:
    """``newRuntimeInfo``: patches merged, pod sets counted, ``resourcesPerNode`` applied."""
    template = copy.deepcopy(runtime_spec.get("template") or {})
    meta = template.get("metadata") or {}
    info = Info(
        spec=template.get("spec") or {},
        policy=copy.deepcopy(runtime_spec.get("mlPolicy") or {}),
        labels=dict(meta.get("labels") or {}),
        annotations=dict(meta.get("annotations") or {}),
    )
    for patch in (trainjob.get("spec") or {}).get("runtimePatches") or []:
        patched = (patch.get("trainingRuntimeSpec") or {}).get("template") or {}
        info.labels.update((patched.get("metadata") or {}).get("labels") or {})
        info.annotations.update((patched.get("metadata") or {}).get("annotations") or {})
        for rjob_patch in (patched.get("spec") or {}).get("replicatedJobs") or []:
            for rjob in info.spec.get("replicatedJobs") or []:
                if rjob["name"] == rjob_patch.get("name") and rjob_patch.get("template") is not None:
                    rjob["template"] = patches.strategic_merge(rjob.get("template") or {}, rjob_patch["template"])
    resources = _trainer(trainjob).get("resourcesPerNode")
    for rjob in info.spec.get("replicatedJobs") or []:
        job = (rjob.get("template") or {}).get("spec") or {}
        count = int(job.get("parallelism", 1))
        ancestor = ((rjob.get("template") or {}).get("metadata") or {}).get("labels", {}).get(ANCESTOR_LABEL)
        if ancestor == TRAINER and info.policy:
            count = int(info.policy.get("numNodes", 1))
            main = container(info.pod_spec(rjob["name"]), NODE)
            if resources is not None and main is not None:
                main["resources"] = copy.deepcopy(resources)
        info.pod_sets.append(PodSet(rjob["name"], ancestor, count))
    return info


def gpus(resources: Mapping[str, Any] | None) -> int:
    """``GetNumGPUPerNode``: the limit of the resource whose name mentions ``gpu``."""
    for kind in ("limits", "requests"):
        for name, value in ((resources or {}).get(kind) or {}).items():
            if "gpu" in str(name).lower():
                try:
                    return int(str(value))
                except ValueError:
                    return 0
    return 0


def _node_resources(info: Info, trainjob: Mapping[str, Any]) -> dict[str, Any] | None:
    given = _trainer(trainjob).get("resourcesPerNode")
    if given is not None:
        return dict(given)
    ancestor = info.ancestor()
    main = container(info.pod_spec(ancestor.name), NODE) if ancestor is not None else None
    return (main or {}).get("resources")


# ------------------------------------------------------------------ MPI plugin
def _mpi(info: Info, trainjob: Mapping[str, Any]) -> None:
    mpi = info.policy["mpi"]
    mpi.setdefault("numProcPerNode", 1)
    mpi.setdefault("sshAuthMountPath", "/root/.ssh")
    mpi.setdefault("mpiImplementation", "OpenMPI")
    as_node = bool(mpi.get("runLauncherAsNode", False))
    trainer = _trainer(trainjob)
    node = info.pod_set(NODE)
    if trainer.get("numNodes") is not None and node is not None:
        node.count = max(int(trainer["numNodes"]) - 1, 1) if as_node else int(trainer["numNodes"])
    if trainer.get("numProcPerNode") is not None:
        mpi["numProcPerNode"] = int(trainer["numProcPerNode"])
    elif int(mpi["numProcPerNode"]) == 1 and gpus(_node_resources(info, trainjob)) > 1:
        mpi["numProcPerNode"] = gpus(_node_resources(info, trainjob))
    name = trainjob["metadata"]["name"]
    ssh_items = [
        {"key": sshkeys.PRIVATE_KEY, "path": "id_rsa", "mode": 0o640},
        {"key": sshkeys.PUBLIC_KEY, "path": "id_rsa.pub", "mode": 0o644},
        {"key": sshkeys.PUBLIC_KEY, "path": "authorized_keys", "mode": 0o644},
    ]
    for pod_set in info.pod_sets:
        if pod_set.name not in (NODE, LAUNCHER):
            continue
        spec = info.pod_spec(pod_set.name)
        volumes = spec.setdefault("volumes", [])
        upsert(
            volumes,
            {
                "name": SSH_VOLUME,
                "secret": {"secretName": ssh_secret_name(name), "defaultMode": 0o400, "items": ssh_items},
            },
        )
        if pod_set.name == LAUNCHER:
            upsert(
                volumes,
                {
                    "name": HOSTFILE_VOLUME,
                    "configMap": {
                        "name": hostfile_name(name),
                        "items": [{"key": HOSTFILE_KEY, "path": HOSTFILE_KEY, "mode": 0o444}],
                    },
                },
            )
        main = container(spec, NODE)
        if main is None:
            continue
        mounts = main.setdefault("volumeMounts", [])
        upsert(mounts, {"name": SSH_VOLUME, "mountPath": mpi["sshAuthMountPath"]})
        if pod_set.name == LAUNCHER:
            upsert(mounts, {"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR})
            env = main.setdefault("env", [])
            values = (f"{HOSTFILE_DIR}/{HOSTFILE_KEY}", "true", str(mpi["numProcPerNode"]), "-o ConnectionAttempts=10")
            for key, value in zip(OMPI_ENV, values, strict=True):
                upsert(env, {"name": key, "value": value})


def hostfile(info: Info, trainjob: Mapping[str, Any]) -> str:
    """One ``<host> slots=<numProcPerNode>`` line per pod of ``node`` (and of the launcher when it runs
    as a node); hosts are the pods' ``<hostname>.<subdomain>``, not namespace-qualified."""
    mpi = info.policy.get("mpi") or {}
    slots = int(mpi.get("numProcPerNode", 1))
    as_node = bool(mpi.get("runLauncherAsNode", False))
    name = trainjob["metadata"]["name"]
    sub = str((info.spec.get("network") or {}).get("subdomain") or name)
    lines = []
    for pod_set in info.pod_sets:
        if pod_set.name != NODE and not (as_node and pod_set.name == LAUNCHER):
            continue
        rjob = next(r for r in info.spec.get("replicatedJobs") or [] if r["name"] == pod_set.name)
        for job_index in range(int(rjob.get("replicas", 1))):
            for pod_index in range(pod_set.count):
                lines.append(f"{name}-{pod_set.name}-{job_index}-{pod_index}.{sub} slots={slots}\n")
    return "".join(lines)


# ------------------------------------------------------------------ torch plugin
def _proc_per_node(trainjob: Mapping[str, Any]) -> str:
    """``PET_NPROC_PER_NODE``: the TrainJob's ``numProcPerNode``; else ``auto`` unless the resources
    per node name no GPU, in which case their CPU count (at least 1)."""
    trainer = _trainer(trainjob)
    if trainer.get("numProcPerNode") is not None:
        return str(trainer["numProcPerNode"])
    resources = trainer.get("resourcesPerNode")
    if resources is None:
        return "auto"
    amounts = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
    if any("gpu" in str(name).lower() for name in amounts):
        return "auto"
    cpu = str(amounts.get("cpu", "1"))
    try:
        cores = float(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu)
    except ValueError:
        return "1"
    return str(max(1, int(cores)))


def _torch(info: Info, trainjob: Mapping[str, Any]) -> None:
    trainer = _trainer(trainjob)
    ancestor = info.ancestor()
    if ancestor is not None and trainer.get("numNodes") is not None:
        ancestor.count = int(trainer["numNodes"])
    main = container(info.pod_spec(ancestor.name), NODE) if ancestor is not None else None
    if ancestor is None or main is None:
        return
    env = main.setdefault("env", [])
    for item in trainer.get("env") or []:
        upsert(env, copy.deepcopy(item))
    name = trainjob["metadata"]["name"]
    for item in (
        {"name": "PET_NNODES", "value": str(ancestor.count)},
        {"name": "PET_NPROC_PER_NODE", "value": _proc_per_node(trainjob)},
        {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": INDEX_FIELD}}},
        {"name": "PET_MASTER_ADDR", "value": f"{name}-{NODE}-0-0.{name}"},
        {"name": "PET_MASTER_PORT", "value": str(MASTER_PORT)},
    ):
        upsert(env, item)
    upsert(main.setdefault("ports", []), {"containerPort": MASTER_PORT, "protocol": "TCP"}, key="containerPort")


def enforce(info: Info, trainjob: Mapping[str, Any]) -> None:
    """``RunEnforceMLPolicyPlugins``: the MPI or the torch plugin, whichever the runtime names."""
    if "mpi" in info.policy:
        _mpi(info, trainjob)
    elif "torch" in info.policy:
        _torch(info, trainjob)


# ------------------------------------------------------------------ objects
def owner_ref(trainjob: Mapping[str, Any]) -> dict[str, Any]:
    md = trainjob["metadata"]
    return {
        "apiVersion": f"{trainercrd.GROUP}/{trainercrd.VERSION}",
        "kind": trainercrd.TRAINJOB,
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def jobset(info: Info, trainjob: Mapping[str, Any]) -> dict[str, Any]:
    """The JobSet plugin's object: named like the TrainJob, controlled by it."""
    spec = copy.deepcopy(info.spec)
    trainer = _trainer(trainjob)
    counts = {p.name: p for p in info.pod_sets}
    for rjob in spec.get("replicatedJobs") or []:
        pod_set = counts[rjob["name"]]
        job = rjob.setdefault("template", {}).setdefault("spec", {})
        job["parallelism"] = job["completions"] = pod_set.count
        if pod_set.ancestor != TRAINER:
            continue
        rjob["replicas"] = 1
        main = container(job.setdefault("template", {}).setdefault("spec", {}), NODE)
        if main is None:
            continue
        if trainer.get("image"):
            main["image"] = trainer["image"]
        for key in ("command", "args"):
            if trainer.get(key) is not None:
                main[key] = list(trainer[key])
        for item in trainer.get("env") or []:
            upsert(main.setdefault("env", []), copy.deepcopy(item))
    spec["suspend"] = bool((trainjob.get("spec") or {}).get("suspend"))
    md: dict[str, Any] = {
        "name": trainjob["metadata"]["name"],
        "namespace": trainjob["metadata"]["namespace"],
        "ownerReferences": [owner_ref(trainjob)],
    }
    if info.labels:
        md["labels"] = dict(info.labels)
    if info.annotations:
        md["annotations"] = dict(info.annotations)
    return {
        "apiVersion": f"{jobsetcrd.GROUP}/{jobsetcrd.VERSION}",
        "kind": jobsetcrd.KIND,
        "metadata": md,
        "spec": spec,
    }


def config_map(trainjob: Mapping[str, Any], name: str, data: dict[str, str]) -> dict[str, Any]:
    md = {"name": name, "namespace": trainjob["metadata"]["namespace"], "ownerReferences": [owner_ref(trainjob)]}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data}


def ssh_secret(trainjob: Mapping[str, Any]) -> dict[str, Any]:
    """``<trainjob>-mpi-ssh-auth``: immutable, type ``kubernetes.io/ssh-auth``, a fresh key pair."""
    md = {
        "name": ssh_secret_name(trainjob["metadata"]["name"]),
        "namespace": trainjob["metadata"]["namespace"],
        "ownerReferences": [owner_ref(trainjob)],
    }
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": md,
        "type": "kubernetes.io/ssh-auth",
        "immutable": True,
        "data": sshkeys.key_pair(),
    }


# ------------------------------------------------------------------ the webhook's plugin checks
def _reserved(trainjob: Mapping[str, Any], names: tuple[str, ...]) -> list[apierrors.FieldError]:
    env = _trainer(trainjob).get("env") or []
    found = sorted({str(e.get("name")) for e in env if e.get("name") in names})
    if not found:
        return []
    listed = "[" + " ".join(found) + "]"
    return [
        apierrors.invalid_value(
            "spec.trainer.env", env, f"must not have reserved envs, invalid envs configured: {listed}"
        )
    ]


def validate(info: Info, trainjob: Mapping[str, Any]) -> list[apierrors.FieldError]:
    """``RunCustomValidationPlugins`` for the MPI and torch plugins."""
    errors: list[apierrors.FieldError] = []
    trainer = _trainer(trainjob)
    if "mpi" in info.policy:
        mpi = info.policy["mpi"] or {}
        both = info.pod_set(LAUNCHER) is not None and info.pod_set(NODE) is not None
        if int(trainer.get("numNodes", 1)) >= 2 and mpi.get("runLauncherAsNode") and not both:
            errors.append(
                apierrors.invalid_value(
                    "spec.trainer.numNodes",
                    trainer.get("numNodes"),
                    "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either "
                    "launcher and node",
                )
            )
        errors += _reserved(trainjob, OMPI_ENV)
    elif "torch" in info.policy and trainer.get("command") != ["tune", "run"]:
        errors += _reserved(trainjob, TORCH_ENV)
    return errors
