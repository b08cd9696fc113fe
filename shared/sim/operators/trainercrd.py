"""Kubeflow Trainer's CRDs (``trainer.kubeflow.org/v1alpha1``), ours, from the v2.3.0 Go types.

TrainJob, TrainingRuntime (namespaced) and ClusterTrainingRuntime (cluster-scoped), following
kubeflow/trainer ``pkg/apis/trainer/v1alpha1/trainjob_types.go`` and ``trainingruntime_types.go``
(research/workloads.md §1.1): defaults (``runtimeRef.kind: ClusterTrainingRuntime``, ``suspend:
false``, the MPI policy's ``numProcPerNode: 1``, ``sshAuthMountPath: /root/.ssh`` …), limits and the
CEL rules (name an RFC 1035 label of at most 63 characters, immutable ``runtimeRef``/``trainer``/
``initializer``, one ML policy at most). A runtime's ``template.spec`` is a JobSet spec
(:func:`.jobsetcrd.spec`); a runtime patch's pod spec is Trainer's ``PodSpecPatch``, not a PodSpec.
Left out: ``initializer`` sub-fields other than the common ones, ``status.trainerStatus.metrics``
details beyond name/value.
"""

from __future__ import annotations

from typing import Any

from shared.sim.operators import crdschema, jobsetcrd
from shared.sim.operators.schemabits import (
    array,
    boolean,
    condition,
    crd,
    date_time,
    immutable,
    integer,
    obj,
    root,
    string,
    string_map,
)

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
TRAINJOB, TRAINJOBS = "TrainJob", "trainjobs"
RUNTIME, RUNTIMES = "TrainingRuntime", "trainingruntimes"
CLUSTER_RUNTIME, CLUSTER_RUNTIMES = "ClusterTrainingRuntime", "clustertrainingruntimes"
CONTROLLER = "trainer.kubeflow.org/trainjob-controller"
_FIELD_IMMUTABLE = "field is immutable"


def _frozen() -> list[dict[str, str]]:
    return [immutable(_FIELD_IMMUTABLE)]


def _env() -> dict[str, Any]:
    return array(crdschema.k8s("core.v1.EnvVar"), max_items=128, list_type="map", map_keys=["name"])


def _container_patch() -> dict[str, Any]:
    mount = crdschema.k8s("core.v1.VolumeMount")
    return obj(
        {
            "env": _env(),
            "name": string(min_length=1, max_length=253),
            "securityContext": crdschema.k8s("core.v1.SecurityContext"),
            "volumeMounts": array(mount, max_items=128, list_type="map", map_keys=["name"]),
        },
        required=["name"],
    )


def _pod_spec_patch() -> dict[str, Any]:
    """``PodSpecPatch``: the pod fields a runtime patch may set (research/workloads.md §1.1)."""
    pull_secret = crdschema.k8s("core.v1.LocalObjectReference")
    pull_secret["x-kubernetes-map-type"] = "atomic"
    return obj(
        {
            "affinity": crdschema.k8s("core.v1.Affinity"),
            "containers": array(_container_patch(), max_items=64, list_type="map", map_keys=["name"], rules=_frozen()),
            "imagePullSecrets": array(pull_secret, max_items=64, list_type="map", map_keys=["name"], rules=_frozen()),
            "initContainers": array(
                _container_patch(), max_items=64, list_type="map", map_keys=["name"], rules=_frozen()
            ),
            "nodeSelector": string_map(),
            "schedulingGates": array(
                crdschema.k8s("core.v1.PodSchedulingGate"), max_items=16, list_type="map", map_keys=["name"]
            ),
            "securityContext": {**crdschema.k8s("core.v1.PodSecurityContext"), "x-kubernetes-validations": _frozen()},
            "serviceAccountName": string(max_length=253, rules=_frozen()),
            "terminationGracePeriodSeconds": integer(fmt="int64", minimum=0, rules=_frozen()),
            "tolerations": array(crdschema.k8s("core.v1.Toleration"), max_items=128, list_type="atomic"),
            "volumes": array(
                crdschema.k8s("core.v1.Volume"), max_items=128, list_type="map", map_keys=["name"], rules=_frozen()
            ),
        }
    )


def _runtime_patch() -> dict[str, Any]:
    meta = crdschema.embedded_meta()
    pod_template = obj({"metadata": crdschema.embedded_meta(), "spec": _pod_spec_patch()})
    job_template = obj({"metadata": crdschema.embedded_meta(), "spec": obj({"template": pod_template})})
    replicated = obj(
        {"name": string(min_length=1, max_length=253), "template": job_template},
        required=["name"],
    )
    return obj(
        {
            "manager": string(min_length=1, max_length=253, rules=_frozen()),
            "time": date_time(),
            "trainingRuntimeSpec": obj(
                {
                    "template": obj(
                        {
                            "metadata": meta,
                            "spec": obj(
                                {"replicatedJobs": array(replicated, max_items=100, list_type="map", map_keys=["name"])}
                            ),
                        }
                    )
                }
            ),
        },
        required=["manager"],
    )


def _initializer() -> dict[str, Any]:
    uri_rule = {
        "rule": "self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')",
        "message": "storageUri may be empty, or it must be a valid URI (scheme://...)",
    }

    def one() -> dict[str, Any]:
        return obj(
            {
                "env": _env(),
                "secretRef": crdschema.k8s("core.v1.LocalObjectReference"),
                "storageUri": string(rules=[uri_rule]),
            }
        )

    return obj({"dataset": one(), "model": one()}, rules=_frozen())


def _trainjob_spec() -> dict[str, Any]:
    strings = array(string(max_length=1048576), max_items=128, list_type="atomic")
    return obj(
        {
            "activeDeadlineSeconds": integer(fmt="int64", minimum=1, rules=_frozen()),
            "initializer": _initializer(),
            "managedBy": string(
                default=CONTROLLER,
                max_length=253,
                rules=[
                    {
                        "rule": f"self in ['{CONTROLLER}', 'kueue.x-k8s.io/multikueue']",
                        "message": f"ManagedBy must be {CONTROLLER} or kueue.x-k8s.io/multikueue if set",
                    },
                    immutable(_FIELD_IMMUTABLE),
                ],
            ),
            "runtimePatches": array(_runtime_patch(), max_items=16, list_type="map", map_keys=["manager"]),
            "runtimeRef": obj(
                {
                    "apiGroup": string(default=GROUP, max_length=253),
                    "kind": string(default=CLUSTER_RUNTIME, max_length=253),
                    "name": string(min_length=1, max_length=253),
                },
                required=["name"],
                rules=_frozen(),
            ),
            "suspend": boolean(default=False),
            "trainer": obj(
                {
                    "args": strings,
                    "command": strings,
                    "env": _env(),
                    "image": string(max_length=500),
                    "numNodes": integer(),
                    "numProcPerNode": integer(),
                    "resourcesPerNode": crdschema.k8s("core.v1.ResourceRequirements"),
                },
                rules=_frozen(),
            ),
        },
        required=["runtimeRef"],
    )


def _trainjob_status() -> dict[str, Any]:
    job = obj(
        {
            "active": integer(minimum=0),
            "failed": integer(minimum=0),
            "name": string(min_length=1, max_length=253),
            "ready": integer(minimum=0),
            "succeeded": integer(minimum=0),
            "suspended": integer(minimum=0),
        },
        required=["active", "failed", "name", "ready", "succeeded", "suspended"],
    )
    metric = obj(
        {"name": string(min_length=1, max_length=64), "value": string(min_length=1, max_length=64)},
        required=["name", "value"],
    )
    return obj(
        {
            "conditions": array(condition(), max_items=8, list_type="map", map_keys=["type"]),
            "jobsStatus": array(job, max_items=100, list_type="map", map_keys=["name"]),
            "trainerStatus": obj(
                {
                    "estimatedRemainingSeconds": integer(minimum=0),
                    "lastUpdatedTime": date_time(),
                    "metrics": array(metric, max_items=256, list_type="atomic"),
                    "progressPercentage": integer(minimum=0, maximum=100),
                },
                rules=[
                    {
                        "rule": "has(self.lastUpdatedTime)",
                        "message": "lastUpdatedTime is required when trainerStatus is present",
                    }
                ],
            ),
        },
        min_properties=1,
    )


def _ml_policy() -> dict[str, Any]:
    policies = "[has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),has(self.flux)]"
    target = obj(
        {
            "containerNames": array(
                string(max_length=63),
                min_items=1,
                max_items=8,
                list_type="set",
                rules=[
                    {
                        "rule": "!self.exists(c, c == 'node')",
                        "message": "containerNames must not include the main node container because PET_* envs "
                        "are always injected into it",
                    }
                ],
            ),
            "jobName": string(min_length=1, max_length=253),
        },
        required=["containerNames", "jobName"],
    )
    return obj(
        {
            "flux": obj(
                {
                    "numProcPerNode": integer(
                        default=1, rules=[{"rule": "self >= 1", "message": "NumProcPerNode in fluxPolicy must be >= 1"}]
                    )
                }
            ),
            "jax": obj(),
            "mpi": obj(
                {
                    "mpiImplementation": string(default="OpenMPI", enum=["OpenMPI", ""]),
                    "numProcPerNode": integer(default=1),
                    "runLauncherAsNode": boolean(default=False),
                    "sshAuthMountPath": string(default="/root/.ssh", max_length=4096),
                }
            ),
            "numNodes": integer(),
            "torch": obj(
                {"envInjection": obj({"targets": array(target, max_items=16, list_type="map", map_keys=["jobName"])})}
            ),
            "xgboost": obj(),
        },
        rules=[{"rule": f"{policies}.filter(x, x).size() <= 1", "message": "Only one of the policy can be configured"}],
    )


def _runtime_spec() -> dict[str, Any]:
    topology = obj(
        {"highestTierAllowed": {"type": "integer", "default": 1}, "mode": string(default="hard", enum=["hard", "soft"])}
    )
    return obj(
        {
            "mlPolicy": _ml_policy(),
            "podGroupPolicy": obj(
                {
                    "coscheduling": obj({"scheduleTimeoutSeconds": integer(default=60)}),
                    "volcano": obj({"networkTopology": topology}),
                }
            ),
            "template": obj({"metadata": crdschema.embedded_meta(), "spec": jobsetcrd.spec()}, min_properties=1),
        }
    )


def trainjob() -> dict[str, Any]:
    name_rules = [
        {
            "rule": "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
            "message": "metadata.name must match RFC 1035 DNS label format",
        },
        {"rule": "size(self.metadata.name) <= 63", "message": "metadata.name must be no more than 63 characters"},
    ]
    columns = [
        {"name": "State", "type": "string", "jsonPath": ".status.conditions[-1:].type"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]
    return crd(
        group=GROUP,
        kind=TRAINJOB,
        plural=TRAINJOBS,
        version=VERSION,
        schema=root(_trainjob_spec(), _trainjob_status(), rules=name_rules),
        columns=columns,
    )


def runtime(*, cluster: bool) -> dict[str, Any]:
    kind, plural = (CLUSTER_RUNTIME, CLUSTER_RUNTIMES) if cluster else (RUNTIME, RUNTIMES)
    columns = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
    return crd(
        group=GROUP,
        kind=kind,
        plural=plural,
        version=VERSION,
        schema=root(_runtime_spec()),
        namespaced=not cluster,
        status=False,
        columns=columns,
    )
