"""Kubeflow Trainer's TrainJob webhooks: ``defaulter.trainjob.trainer.kubeflow.org`` stamps runtime
patches with a time, ``validator.trainjob.trainer.kubeflow.org`` refuses a TrainJob its runtime cannot run.

From kubeflow/trainer v2.3.0 ``pkg/webhooks/trainjob_webhook.go`` and the runtimes' ``ValidateObjects``
(``pkg/runtime/core/trainingruntime.go``, ``clustertrainingruntime.go``): the runtime kind must be one
Trainer registers (``unsupported runtime: <Kind>.<group>``), the runtime must exist before the
TrainJob, and the ML-policy plugins check the trainer — the MPI plugin's ``numNodes`` with
``runLauncherAsNode``, and the reserved variables each plugin sets itself (``PET_*`` for torch, the
four ``OMPI_MCA_*`` for MPI: ``must not have reserved envs, invalid envs configured: [...]``).
Left out: the checks of runtime patches against the runtime's template, and the TrainingRuntime webhook.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from shared.sim.apiserver import apierrors, store
from shared.sim.operators import trainercrd, trainerruntime, webhooks

VALIDATOR = "validator.trainjob.trainer.kubeflow.org"
RUNTIME_KINDS = {
    f"{trainercrd.RUNTIME}.{trainercrd.GROUP}": (trainercrd.RUNTIMES, True),
    f"{trainercrd.CLUSTER_RUNTIME}.{trainercrd.GROUP}": (trainercrd.CLUSTER_RUNTIMES, False),
}


def runtime_key(trainjob: dict[str, Any]) -> str:
    """``RuntimeRefToRuntimeRegistryKey``: ``<Kind>.<apiGroup>`` of the runtime reference."""
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    return f"{ref.get('kind', trainercrd.CLUSTER_RUNTIME)}.{ref.get('apiGroup', trainercrd.GROUP)}"


def find_runtime(objects: store.Store, trainjob: dict[str, Any]) -> dict[str, Any] | None:
    """The runtime the TrainJob names (a TrainingRuntime in its namespace, or a ClusterTrainingRuntime)."""
    plural, namespaced = RUNTIME_KINDS[runtime_key(trainjob)]
    name = str(((trainjob.get("spec") or {}).get("runtimeRef") or {}).get("name", ""))
    found = objects.get((trainercrd.GROUP, plural), trainjob["metadata"]["namespace"] if namespaced else "", name)
    return found.object() if found is not None else None


class TrainJobWebhook(webhooks.Webhook):
    group_resource = (trainercrd.GROUP, trainercrd.TRAINJOBS)

    def __init__(self, objects: store.Store, now: Callable[[], str]) -> None:
        self.objects = objects
        self.now = now

    def default(self, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """A patch without ``time`` gets the current time; on update an unchanged patch keeps its old one."""
        previous = {p.get("manager"): p for p in ((old or {}).get("spec") or {}).get("runtimePatches") or []}
        for patch in (obj.get("spec") or {}).get("runtimePatches") or []:
            before = previous.get(patch.get("manager"))
            if before is not None and _without_time(before) == _without_time(patch):
                if before.get("time"):
                    patch["time"] = before["time"]
                continue
            patch.setdefault("time", self.now())

    def check(self, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        key = runtime_key(obj)
        if key not in RUNTIME_KINDS:
            raise webhooks.deny(VALIDATOR, f"unsupported runtime: {key}")
        runtime = find_runtime(self.objects, obj)
        if runtime is None:
            plural, namespaced = RUNTIME_KINDS[key]
            ref = (obj.get("spec") or {}).get("runtimeRef") or {}
            kind = "trainingRuntime" if namespaced else "clusterTrainingRuntime"
            detail = (
                f'{plural}.{trainercrd.GROUP} "{ref.get("name", "")}" not found: '
                f"specified {kind} must be created before the TrainJob is created"
            )
            raise webhooks.deny(VALIDATOR, apierrors.invalid_value("spec.runtimeRef", ref, detail).text())
        info = trainerruntime.runtime_info(obj, runtime.get("spec") or {})
        errors = trainerruntime.validate(info, obj)
        if errors:
            raise webhooks.deny(VALIDATOR, webhooks.aggregate(errors))


def _without_time(patch: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(patch)
    out.pop("time", None)
    return out
