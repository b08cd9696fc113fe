"""What the MPI Operator decides for an MPIJob, as pure functions: its defaults, its validation, and
the children it creates.

kubeflow/mpi-operator v0.8.0 (research/workloads.md §3): ``pkg/apis/kubeflow/v2beta1/default.go``
(launcher ``replicas: 1``, ``restartPolicy: OnFailure``; worker ``replicas: 0``, ``restartPolicy:
Never``; ``cleanPodPolicy: None``), ``pkg/apis/kubeflow/validation/validation.go`` (applied by the
controller, which records a ``ValidationError`` Event and creates nothing), and
``pkg/controller/mpi_job_controller.go``: the headless Service ``<mpijob>``, the ``<mpijob>-config``
ConfigMap (``hostfile``, ``discover_hosts.sh``), the ``<mpijob>-ssh`` Secret, worker Pods
``<mpijob>-worker-<i>`` and the launcher Job ``<mpijob>-launcher``, all controlled by the MPIJob.
Left out: Intel MPI and MPICH launcher Services, gang scheduling (PodGroups), hostNetwork DNS
policy, custom cluster domains.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.validation import formats
from shared.sim.operators import mpicrd, sshkeys

OPERATOR = "training.kubeflow.org/operator-name"
JOB_NAME = "training.kubeflow.org/job-name"
JOB_ROLE = "training.kubeflow.org/job-role"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
LAUNCHER, WORKER = "Launcher", "Worker"
CONFIG_DIR = "/etc/mpi"
SSH_VOLUME, CONFIG_VOLUME = "ssh-auth", "mpi-job-config"
_RESTART_POLICIES = ("Never", "OnFailure")
_CLEAN_POLICIES = ("All", "None", "Running")
_IMPLEMENTATIONS = ("Intel", "MPICH", "OpenMPI")
_CREATION_POLICIES = ("AtStartup", "WaitForWorkersReady")


def defaulted(mpijob: Mapping[str, Any]) -> dict[str, Any]:
    """``SetDefaults_MPIJob`` on a copy (the controller defaults in memory; nothing is written back)."""
    job = copy.deepcopy(dict(mpijob))
    spec = job.setdefault("spec", {})
    spec.setdefault("slotsPerWorker", 1)
    spec.setdefault("runLauncherAsWorker", False)
    if not spec.get("sshAuthMountPath"):
        spec["sshAuthMountPath"] = "/root/.ssh"
    if not spec.get("mpiImplementation"):
        spec["mpiImplementation"] = "OpenMPI"
    if not spec.get("launcherCreationPolicy"):
        spec["launcherCreationPolicy"] = "AtStartup"
    policy = spec.setdefault("runPolicy", {})
    if not policy.get("cleanPodPolicy"):
        policy["cleanPodPolicy"] = "None"
    policy.setdefault("suspend", False)
    replicas = spec.get("mpiReplicaSpecs") or {}
    for kind, restart, count in ((LAUNCHER, "OnFailure", 1), (WORKER, "Never", 0)):
        replica = replicas.get(kind)
        if isinstance(replica, dict):
            if not replica.get("restartPolicy"):
                replica["restartPolicy"] = restart
            replica.setdefault("replicas", count)
    return job


def validation_errors(mpijob: Mapping[str, Any]) -> list[apierrors.FieldError]:
    """``ValidateMPIJob`` on a defaulted MPIJob."""
    name = mpijob["metadata"]["name"]
    errors = [apierrors.invalid_value("metadata.name", name, m) for m in formats.dns1035_label(name)]
    spec = mpijob.get("spec") or {}
    errors += _spec_errors(spec)
    replicas = spec.get("mpiReplicaSpecs")
    if not replicas:
        return [*errors, apierrors.required("spec.mpiReplicaSpecs", "must have replica specs")]
    launcher = replicas.get(LAUNCHER)
    path = f"spec.mpiReplicaSpecs[{LAUNCHER}]"
    if launcher is None:
        errors.append(apierrors.required(path, "must have launcher replica spec"))
    else:
        errors += _replica_errors(launcher, path)
        if launcher.get("replicas") is not None and int(launcher["replicas"]) != 1:
            errors.append(apierrors.invalid_value(f"{path}.replicas", int(launcher["replicas"]), "must be 1"))
    worker = replicas.get(WORKER)
    if worker is not None:
        path = f"spec.mpiReplicaSpecs[{WORKER}]"
        errors += _replica_errors(worker, path)
        if worker.get("replicas") is not None and int(worker["replicas"]) <= 0:
            errors.append(
                apierrors.invalid_value(
                    f"{path}.replicas", int(worker["replicas"]), "must be greater than or equal to 1"
                )
            )
    return errors


def _spec_errors(spec: Mapping[str, Any]) -> list[apierrors.FieldError]:
    errors = []
    if int(spec.get("slotsPerWorker", 1)) < 0:
        errors.append(
            apierrors.invalid_value("spec.slotsPerWorker", spec["slotsPerWorker"], "must be greater than or equal to 0")
        )
    policy = spec.get("runPolicy") or {}
    if policy.get("cleanPodPolicy") not in _CLEAN_POLICIES:
        errors.append(
            apierrors.not_supported("spec.runPolicy.cleanPodPolicy", policy.get("cleanPodPolicy"), _CLEAN_POLICIES)
        )
    for key in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        if policy.get(key) is not None and int(policy[key]) < 0:
            errors.append(
                apierrors.invalid_value(f"spec.runPolicy.{key}", policy[key], "must be greater than or equal to 0")
            )
    for key, allowed in (("mpiImplementation", _IMPLEMENTATIONS), ("launcherCreationPolicy", _CREATION_POLICIES)):
        if spec.get(key) not in allowed:
            errors.append(apierrors.not_supported(f"spec.{key}", spec.get(key), allowed))
    return errors


def _replica_errors(replica: Mapping[str, Any], path: str) -> list[apierrors.FieldError]:
    errors = []
    if replica.get("replicas") is None:
        errors.append(apierrors.required(f"{path}.replicas", "must define number of replicas"))
    if replica.get("restartPolicy") not in _RESTART_POLICIES:
        errors.append(apierrors.not_supported(f"{path}.restartPolicy", replica.get("restartPolicy"), _RESTART_POLICIES))
    if not (((replica.get("template") or {}).get("spec") or {}).get("containers")):
        errors.append(apierrors.required(f"{path}.template.spec.containers", "must define at least one container"))
    return errors


# ------------------------------------------------------------------ children
def worker_count(mpijob: Mapping[str, Any]) -> int:
    worker = ((mpijob.get("spec") or {}).get("mpiReplicaSpecs") or {}).get(WORKER) or {}
    return int(worker.get("replicas", 0))


def worker_name(mpijob: Mapping[str, Any], index: int) -> str:
    return f"{mpijob['metadata']['name']}-worker-{index}"


def launcher_name(mpijob: Mapping[str, Any]) -> str:
    return f"{mpijob['metadata']['name']}-launcher"


def owner_ref(mpijob: Mapping[str, Any]) -> dict[str, Any]:
    md = mpijob["metadata"]
    return {
        "apiVersion": f"{mpicrd.GROUP}/{mpicrd.VERSION}",
        "kind": mpicrd.KIND,
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _meta(mpijob: Mapping[str, Any], name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {
        "name": name,
        "namespace": mpijob["metadata"]["namespace"],
        "ownerReferences": [owner_ref(mpijob)],
    }
    if labels:
        md["labels"] = labels
    return md


def default_labels(mpijob: Mapping[str, Any], role: str = "") -> dict[str, str]:
    labels = {OPERATOR: "mpi-operator", JOB_NAME: mpijob["metadata"]["name"]}
    if role:
        labels[JOB_ROLE] = role
    return labels


def service(mpijob: Mapping[str, Any]) -> dict[str, Any]:
    """The headless Service named after the MPIJob; it publishes unready pods only when the launcher is a worker."""
    spec = mpijob.get("spec") or {}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(mpijob, mpijob["metadata"]["name"], {"app": mpijob["metadata"]["name"]}),
        "spec": {
            "clusterIP": "None",
            "selector": default_labels(mpijob),
            "publishNotReadyAddresses": bool(spec.get("runLauncherAsWorker")),
        },
    }


def _fqdn(mpijob: Mapping[str, Any], host: str) -> str:
    md = mpijob["metadata"]
    return f"{host}.{md['name']}.{md['namespace']}.svc"


def config_data(mpijob: Mapping[str, Any], running_workers: list[str]) -> dict[str, str]:
    """``hostfile`` (every worker, the launcher first when it is a worker) and ``discover_hosts.sh``
    (the Running workers, by name)."""
    spec = mpijob.get("spec") or {}
    slots = int(spec.get("slotsPerWorker", 1))
    openmpi = spec.get("mpiImplementation", "OpenMPI") == "OpenMPI"
    hosts = [launcher_name(mpijob)] if spec.get("runLauncherAsWorker") else []
    hosts += [worker_name(mpijob, i) for i in range(worker_count(mpijob))]
    lines = [f"{_fqdn(mpijob, h)} slots={slots}\n" if openmpi else f"{_fqdn(mpijob, h)}:{slots}\n" for h in hosts]
    script = "#!/bin/sh\n" + "".join(f"echo {_fqdn(mpijob, w)}\n" for w in sorted(running_workers))
    return {"hostfile": "".join(lines), "discover_hosts.sh": script}


def config_map(mpijob: Mapping[str, Any], data: dict[str, str]) -> dict[str, Any]:
    name = f"{mpijob['metadata']['name']}-config"
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(mpijob, name, {"app": mpijob["metadata"]["name"]}),
        "data": data,
    }


def ssh_secret(mpijob: Mapping[str, Any]) -> dict[str, Any]:
    name = f"{mpijob['metadata']['name']}-ssh"
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _meta(mpijob, name, {"app": mpijob["metadata"]["name"]}),
        "type": "kubernetes.io/ssh-auth",
        "data": sshkeys.key_pair(),
    }


def _ssh(pod_spec: dict[str, Any], mpijob: Mapping[str, Any]) -> None:
    spec = mpijob.get("spec") or {}
    path = spec.get("sshAuthMountPath", "/root/.ssh")
    secret: dict[str, Any] = {
        "secretName": f"{mpijob['metadata']['name']}-ssh",
        "items": [
            {"key": sshkeys.PRIVATE_KEY, "path": "id_rsa"},
            {"key": sshkeys.PUBLIC_KEY, "path": "id_rsa.pub"},
            {"key": sshkeys.PUBLIC_KEY, "path": "authorized_keys"},
        ],
    }
    if path == "/root/.ssh":
        secret["defaultMode"] = 0o600
    pod_spec.setdefault("volumes", []).append({"name": SSH_VOLUME, "secret": secret})
    pod_spec["containers"][0].setdefault("volumeMounts", []).append({"name": SSH_VOLUME, "mountPath": path})


def _restart(pod_spec: dict[str, Any], replica: Mapping[str, Any]) -> None:
    policy = replica.get("restartPolicy", "Never")
    pod_spec["restartPolicy"] = "Never" if policy == "ExitCode" else policy


def _dns(pod_spec: dict[str, Any], mpijob: Mapping[str, Any]) -> None:
    md = mpijob["metadata"]
    config = pod_spec.setdefault("dnsConfig", {})
    config["searches"] = [*(config.get("searches") or []), f"{md['name']}.{md['namespace']}.svc.cluster.local"]


def worker_pod(mpijob: Mapping[str, Any], index: int) -> dict[str, Any]:
    """``newWorker``: the Worker template as a Pod ``<mpijob>-worker-<i>`` (hostname = name, subdomain =
    the MPIJob), ``sshd -De`` when the template gives no command, the SSH volume on container 0."""
    spec = mpijob.get("spec") or {}
    replica = (spec.get("mpiReplicaSpecs") or {}).get(WORKER) or {}
    template = copy.deepcopy(replica.get("template") or {})
    meta = template.get("metadata") or {}
    labels = {**(meta.get("labels") or {}), **default_labels(mpijob, "worker")}
    labels[REPLICA_INDEX] = str(index + 1 if spec.get("runLauncherAsWorker") else index)
    pod_spec = template.get("spec") or {}
    name = worker_name(mpijob, index)
    pod_spec["hostname"] = name
    pod_spec["subdomain"] = mpijob["metadata"]["name"]
    _dns(pod_spec, mpijob)
    _restart(pod_spec, replica)
    main = pod_spec["containers"][0]
    if not main.get("command") and not main.get("args"):
        main["command"] = ["/usr/sbin/sshd", "-De"]
    main["env"] = [*(main.get("env") or []), {"name": "K_MPI_JOB_ROLE", "value": "worker"}]
    _ssh(pod_spec, mpijob)
    md = _meta(mpijob, name, labels)
    if meta.get("annotations"):
        md["annotations"] = dict(meta["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": pod_spec}


def launcher_job(mpijob: Mapping[str, Any]) -> dict[str, Any]:
    """``newLauncherJob``: a Job whose pod is the Launcher template with the hostfile mounted at
    /etc/mpi, the OpenMPI variables and, unless the launcher is a worker, no GPU."""
    spec = mpijob.get("spec") or {}
    replica = (spec.get("mpiReplicaSpecs") or {}).get(LAUNCHER) or {}
    template = copy.deepcopy(replica.get("template") or {})
    meta = template.get("metadata") or {}
    labels = {**(meta.get("labels") or {}), **default_labels(mpijob, "launcher")}
    if spec.get("runLauncherAsWorker"):
        labels[REPLICA_INDEX] = "0"
    pod_spec = template.get("spec") or {}
    pod_spec["hostname"] = launcher_name(mpijob)
    pod_spec["subdomain"] = mpijob["metadata"]["name"]
    _dns(pod_spec, mpijob)
    main = pod_spec["containers"][0]
    env = [*(main.get("env") or []), {"name": "K_MPI_JOB_ROLE", "value": "launcher"}]
    slots = str(spec.get("slotsPerWorker", 1))
    implementation = spec.get("mpiImplementation", "OpenMPI")
    if implementation == "OpenMPI":
        env += [
            {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
            {"name": "OMPI_MCA_orte_default_hostfile", "value": f"{CONFIG_DIR}/hostfile"},
            {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"},
            {"name": "OMPI_MCA_orte_set_default_slots", "value": slots},
        ]
    elif implementation == "Intel":
        env += [
            {"name": "I_MPI_HYDRA_HOST_FILE", "value": f"{CONFIG_DIR}/hostfile"},
            {"name": "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
            {"name": "I_MPI_PERHOST", "value": slots},
        ]
    else:
        env += [
            {"name": "HYDRA_HOST_FILE", "value": f"{CONFIG_DIR}/hostfile"},
            {"name": "HYDRA_LAUNCH_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
        ]
    if not spec.get("runLauncherAsWorker"):
        env += [{"name": "NVIDIA_VISIBLE_DEVICES"}, {"name": "NVIDIA_DRIVER_CAPABILITIES"}]
    main["env"] = env
    _ssh(pod_spec, mpijob)
    _restart(pod_spec, replica)
    items = [
        {"key": "hostfile", "path": "hostfile", "mode": 0o444},
        {"key": "discover_hosts.sh", "path": "discover_hosts.sh", "mode": 0o555},
    ]
    pod_spec["volumes"].append(
        {"name": CONFIG_VOLUME, "configMap": {"name": f"{mpijob['metadata']['name']}-config", "items": items}}
    )
    main["volumeMounts"].append({"name": CONFIG_VOLUME, "mountPath": CONFIG_DIR})
    pod_meta: dict[str, Any] = {"labels": labels}
    if meta.get("annotations"):
        pod_meta["annotations"] = dict(meta["annotations"])
    policy = spec.get("runPolicy") or {}
    job_spec: dict[str, Any] = {"template": {"metadata": pod_meta, "spec": pod_spec}}
    for source, target in (
        ("ttlSecondsAfterFinished", "ttlSecondsAfterFinished"),
        ("activeDeadlineSeconds", "activeDeadlineSeconds"),
        ("backoffLimit", "backoffLimit"),
    ):
        if policy.get(source) is not None:
            job_spec[target] = policy[source]
    if policy.get("suspend"):
        job_spec["suspend"] = True
    md = _meta(mpijob, launcher_name(mpijob), {"app": mpijob["metadata"]["name"]})
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": md, "spec": job_spec}
