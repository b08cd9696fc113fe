"""The JobSet CRD (``jobset.x-k8s.io/v1alpha2``), ours, from the v0.12.0 Go types.

Fields, defaults, enums and CEL rules follow kubernetes-sigs/jobset
``api/jobset/v1alpha2/jobset_types.go`` (research/workloads.md §2.1); each ``replicatedJobs[].template``
is the full batch/v1 JobTemplateSpec (:mod:`.crdschema`). :func:`spec` is shared with Kubeflow
Trainer's runtimes, whose ``template.spec`` is a JobSet spec. Left out: ``status.individualJobRecreates``
and other status fields the controller here never writes.
"""

from __future__ import annotations

from typing import Any

from shared.sim.operators import crdschema
from shared.sim.operators.schemabits import (
    array,
    boolean,
    condition,
    crd,
    immutable,
    integer,
    obj,
    root,
    string,
)

GROUP, VERSION, KIND, PLURAL = "jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets"
_EXCLUSIVE = (
    "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' "
    "&& self.replicatedJobs.exists(x, has(x.dependsOn)))"
)


def _replicated_job() -> dict[str, Any]:
    return obj(
        {
            "dependsOn": array(
                obj({"name": string(), "status": string(enum=["Ready", "Complete"])}, required=["name", "status"]),
                max_items=5,
                list_type="map",
                map_keys=["name"],
                rules=[immutable()],
            ),
            "groupName": string(default="default"),
            "name": string(),
            "replicas": integer(default=1),
            "template": crdschema.k8s("batch.v1.JobTemplateSpec"),
        },
        required=["name", "template"],
    )


def _failure_policy() -> dict[str, Any]:
    actions = [
        "FailJobSet",
        "RestartJobSet",
        "RestartJobSetAndIgnoreMaxRestarts",
        "RestartJob",
        "RestartJobAndIgnoreMaxRestarts",
    ]
    rule = obj(
        {
            "action": string(enum=actions),
            "name": string(),
            "onJobFailureMessagePatterns": array(string(), list_type="atomic"),
            "onJobFailureReasons": array(string(), list_type="atomic"),
            "targetReplicatedJobs": array(string(), list_type="atomic"),
        },
        required=["action", "name"],
    )
    return obj(
        {
            "maxRestarts": integer(),
            "restartStrategy": string(default="Recreate", enum=["Recreate", "BlockingRecreate", "InPlaceRestart"]),
            "rules": array(rule, list_type="atomic"),
        },
        rules=[immutable()],
    )


def _volume_claim_policy() -> dict[str, Any]:
    claim = crdschema.k8s("core.v1.PersistentVolumeClaim")
    return obj(
        {
            "retentionPolicy": obj({"whenDeleted": string(default="Delete", enum=["Delete", "Retain"])}),
            "templates": array(claim, max_items=50, list_type="atomic"),
        },
        rules=[
            {
                "rule": "self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)",
                "message": "namespace cannot be set for VolumeClaimPolicies templates",
            }
        ],
    )


def spec() -> dict[str, Any]:
    """``JobSetSpec``."""
    return obj(
        {
            "coordinator": obj(
                {"jobIndex": integer(), "podIndex": integer(), "replicatedJob": string()}, required=["replicatedJob"]
            ),
            "failurePolicy": _failure_policy(),
            "managedBy": string(),
            "network": obj(
                {"enableDNSHostnames": boolean(), "publishNotReadyAddresses": boolean(), "subdomain": string()},
                rules=[immutable()],
            ),
            "replicatedJobs": array(_replicated_job(), list_type="map", map_keys=["name"]),
            "startupPolicy": obj(
                {"startupPolicyOrder": string(enum=["AnyOrder", "InOrder"])},
                required=["startupPolicyOrder"],
                rules=[immutable()],
            ),
            "successPolicy": obj(
                {"operator": string(enum=["All", "Any"]), "targetReplicatedJobs": array(string(), list_type="atomic")},
                required=["operator"],
                rules=[immutable()],
            ),
            "suspend": boolean(),
            "ttlSecondsAfterFinished": integer(minimum=0),
            "volumeClaimPolicies": array(_volume_claim_policy(), max_items=50, list_type="atomic", rules=[immutable()]),
        },
        rules=[{"rule": _EXCLUSIVE, "message": "StartupPolicy and DependsOn APIs are mutually exclusive"}],
    )


def _status() -> dict[str, Any]:
    counts = {k: integer() for k in ("active", "failed", "ready", "succeeded", "suspended")}
    return obj(
        {
            "conditions": array(condition(), list_type="map", map_keys=["type"]),
            "replicatedJobsStatus": array(
                obj(
                    {"name": string(), **counts},
                    required=["active", "failed", "name", "ready", "succeeded", "suspended"],
                ),
                list_type="map",
                map_keys=["name"],
            ),
            "restarts": integer(),
            "restartsCountTowardsMax": integer(),
            "terminalState": string(),
        }
    )


def definition() -> dict[str, Any]:
    columns = [
        {
            "name": "TerminalState",
            "type": "string",
            "jsonPath": ".status.terminalState",
            "description": "Final state of JobSet",
        },
        {"name": "Restarts", "type": "string", "jsonPath": ".status.restarts", "description": "Number of restarts"},
        {"name": "Completed", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Completed")].status'},
        {"name": "Suspended", "type": "string", "jsonPath": ".spec.suspend", "description": "JobSet suspended"},
        {
            "name": "Age",
            "type": "date",
            "jsonPath": ".metadata.creationTimestamp",
            "description": "Time this JobSet was created",
        },
    ]
    return crd(
        group=GROUP,
        kind=KIND,
        plural=PLURAL,
        version=VERSION,
        schema=root(spec(), _status()),
        columns=columns,
    )
