"""The MPIJob CRD (``kubeflow.org/v2beta1``), ours, from the MPI Operator v0.8.0 Go types.

Follows kubeflow/mpi-operator ``pkg/apis/kubeflow/v2beta1/types.go`` and the defaults its CRD
carries (research/workloads.md §3.1): ``slotsPerWorker: 1``, ``runLauncherAsWorker: false``,
``sshAuthMountPath: /root/.ssh``, ``launcherCreationPolicy: AtStartup``, ``mpiImplementation:
OpenMPI`` (enum OpenMPI, Intel, MPICH), ``runPolicy.suspend: false``. ``mpiReplicaSpecs`` is a map
(Launcher, Worker) of ReplicaSpec whose ``template`` is a full PodTemplateSpec. The rest of the
defaults and every semantic check (launcher replicas must be 1 …) are the controller's, as
upstream has no webhook (:mod:`.mpispec`).
"""

from __future__ import annotations

from typing import Any

from shared.sim.operators import crdschema
from shared.sim.operators.schemabits import array, boolean, crd, date_time, integer, obj, root, string

GROUP, VERSION, KIND, PLURAL = "kubeflow.org", "v2beta1", "MPIJob", "mpijobs"


def _run_policy() -> dict[str, Any]:
    quantities = {
        "type": "object",
        "additionalProperties": crdschema.k8s("io.k8s.apimachinery.pkg.api.resource.Quantity"),
    }
    return obj(
        {
            "activeDeadlineSeconds": integer(fmt="int64"),
            "backoffLimit": integer(),
            "cleanPodPolicy": string(),
            "managedBy": string(),
            "schedulingPolicy": obj(
                {
                    "minAvailable": integer(),
                    "minResources": quantities,
                    "priorityClass": string(),
                    "queue": string(),
                    "scheduleTimeoutSeconds": integer(),
                }
            ),
            "suspend": boolean(default=False),
            "ttlSecondsAfterFinished": integer(),
        }
    )


def _spec() -> dict[str, Any]:
    replica = obj(
        {"replicas": integer(), "restartPolicy": string(), "template": crdschema.k8s("core.v1.PodTemplateSpec")}
    )
    return obj(
        {
            "launcherCreationPolicy": string(default="AtStartup"),
            "mpiImplementation": string(default="OpenMPI", enum=["OpenMPI", "Intel", "MPICH"]),
            "mpiReplicaSpecs": {"type": "object", "additionalProperties": replica},
            "runLauncherAsWorker": boolean(default=False),
            "runPolicy": _run_policy(),
            "slotsPerWorker": integer(default=1),
            "sshAuthMountPath": string(default="/root/.ssh"),
        },
        required=["mpiReplicaSpecs"],
    )


def _status() -> dict[str, Any]:
    job_condition = obj(
        {
            "lastTransitionTime": date_time(),
            "lastUpdateTime": date_time(),
            "message": string(),
            "reason": string(),
            "status": string(enum=["True", "False", "Unknown"]),
            "type": string(),
        },
        required=["status", "type"],
    )
    selector = crdschema.k8s("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")
    selector["x-kubernetes-map-type"] = "atomic"
    replica_status = obj(
        {
            "active": integer(),
            "failed": integer(),
            "labelSelector": selector,
            "selector": string(),
            "succeeded": integer(),
        }
    )
    return obj(
        {
            "completionTime": date_time(),
            "conditions": array(job_condition, list_type="map", map_keys=["type"]),
            "lastReconcileTime": date_time(),
            "replicaStatuses": {"type": "object", "additionalProperties": replica_status},
            "startTime": date_time(),
        }
    )


def definition() -> dict[str, Any]:
    return crd(group=GROUP, kind=KIND, plural=PLURAL, version=VERSION, schema=root(_spec(), _status()))
