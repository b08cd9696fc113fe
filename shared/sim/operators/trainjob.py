"""The TrainJob controller: the runtime snapshot, the MPI Secret and hostfile, and the JobSet; and
the TrainJob's status, copied from that JobSet.

kubeflow/trainer v2.3.0 ``pkg/controller/trainjob_controller.go`` (research/workloads.md §1.2–1.3):
on its first reconcile a TrainJob snapshots its runtime into ``<trainjob>-runtime-snapshot``
(key ``runtime``, the runtime as YAML) and reads that snapshot afterwards, so editing or deleting
the runtime does not touch a running TrainJob. The ``<trainjob>-mpi-ssh-auth`` Secret is created
once; the ``<trainjob>-mpi-hostfile`` ConfigMap is kept equal to the hostfile every reconcile;
the JobSet is created once and afterwards only its ``suspend`` follows the TrainJob's. Every
child carries a controller ownerReference to the TrainJob. Status: ``Suspended``
(Suspended/Resumed), ``Complete``/``Failed`` with the JobSet's ``Completed``/``Failed`` reason and
message, ``Failed/DeadlineExceeded`` once ``activeDeadlineSeconds`` (from creation or the last
resume) runs out — the JobSet is then deleted — and ``jobsStatus`` mirroring the JobSet's
``replicatedJobsStatus``.
"""

from __future__ import annotations

import logging
from typing import Any

from shared import yamlio
from shared.sim.apiserver import apierrors, resources
from shared.sim.apiserver.controllers import kit
from shared.sim.operators import jobsetcrd, trainercrd, trainerruntime, trainerwebhook

logger = logging.getLogger(__name__)

NAME = "trainjobs"
GR = (trainercrd.GROUP, trainercrd.TRAINJOBS)
_CONFIGMAPS, _SECRETS = ("", "configmaps"), ("", "secrets")
_JOBSETS = (jobsetcrd.GROUP, jobsetcrd.PLURAL)
_RETRY_SECONDS = 10.0
DEADLINE = ("DeadlineExceeded", "TrainJob exceeded its active deadline")
SUSPENDED = ("Suspended", "TrainJob is suspended")
RESUMED = ("Resumed", "TrainJob is resumed")


def _sorted(value: Any) -> Any:
    """Keys in alphabetical order, as sigs.k8s.io/yaml writes them."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _is_true(obj: dict[str, Any], kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or []
    )


class TrainJobController:
    def __init__(self, ctx: kit.Context) -> None:
        self.ctx = ctx

    def reset(self) -> None:
        """Nothing cached between syncs."""

    def reconcile(self, key: kit.Key) -> None:
        found = self.ctx.live(GR, key)
        if found is None:
            return
        r, entry = found
        tj = entry.object()
        if _is_true(tj, "Complete") or _is_true(tj, "Failed"):
            return
        if (tj.get("spec") or {}).get("managedBy", trainercrd.CONTROLLER) != trainercrd.CONTROLLER:
            return
        status: dict[str, Any] = {k: v for k, v in (tj.get("status") or {}).items()}
        conditions = list(status.get("conditions") or [])
        now = self.ctx.api.now()
        suspend = bool((tj.get("spec") or {}).get("suspend"))
        if suspend:
            conditions = _set(conditions, "Suspended", "True", *SUSPENDED, now)
        elif any(c.get("type") == "Suspended" and c.get("status") == "True" for c in conditions):
            conditions = _set(conditions, "Suspended", "False", *RESUMED, now)
        if not suspend and self._deadline_passed(tj, key, conditions):
            conditions = _set(conditions, "Failed", "True", *DEADLINE, now)
            self._delete_jobset(tj)
        else:
            js = self._build(tj, key)
            conditions = self._from_jobset(js, conditions, now, status)
        status["conditions"] = conditions
        status = {k: v for k, v in status.items() if v not in (None, [], {})}
        if status != (tj.get("status") or {}):
            self.ctx.write_status(r, tj, status)

    # -------------------------------------------------------------- children
    def _runtime(self, tj: dict[str, Any]) -> dict[str, Any] | None:
        """The snapshot if there is one; else the live runtime, snapshotted now."""
        ns, name = tj["metadata"]["namespace"], tj["metadata"]["name"]
        snap = self.ctx.store.get(_CONFIGMAPS, ns, trainerruntime.snapshot_name(name))
        if snap is not None:
            text = (snap.object().get("data") or {}).get("runtime", "")
            try:
                loaded = yamlio.loads(text, source="runtime snapshot")
            except Exception:  # a broken snapshot is the user's doing: report nothing, build nothing
                logger.debug("trainjob %s/%s: unreadable runtime snapshot", ns, name)
                return None
            return loaded if isinstance(loaded, dict) else None
        if trainerwebhook.runtime_key(tj) not in trainerwebhook.RUNTIME_KINDS:
            return None
        runtime = trainerwebhook.find_runtime(self.ctx.store, tj)
        if runtime is None:
            return None
        runtime["metadata"].pop("managedFields", None)
        data = {"runtime": yamlio.dumps(_sorted(runtime))}
        self._create(_CONFIGMAPS, ns, trainerruntime.config_map(tj, trainerruntime.snapshot_name(name), data))
        return runtime

    def _build(self, tj: dict[str, Any], key: kit.Key) -> dict[str, Any] | None:
        """Create what is missing; the JobSet as it is now (None while it cannot be built)."""
        ns, name = key
        runtime = self._runtime(tj)
        if runtime is None:
            self.ctx.later(NAME, key, self.ctx.now() + _RETRY_SECONDS)
            return None
        info = trainerruntime.runtime_info(tj, runtime.get("spec") or {})
        trainerruntime.enforce(info, tj)
        if "mpi" in info.policy:
            if self.ctx.store.get(_SECRETS, ns, trainerruntime.ssh_secret_name(name)) is None:
                self._create(_SECRETS, ns, trainerruntime.ssh_secret(tj))
            self._keep_hostfile(tj, trainerruntime.hostfile(info, tj))
        found = self.ctx.store.get(_JOBSETS, ns, name)
        if found is None:
            self._create(_JOBSETS, ns, trainerruntime.jobset(info, tj))
            found = self.ctx.store.get(_JOBSETS, ns, name)
            return found.object() if found is not None else None
        js = found.object()
        suspend = bool((tj.get("spec") or {}).get("suspend"))
        if (
            bool((js.get("spec") or {}).get("suspend")) != suspend
            and (kit.controller_of(js) or {}).get("uid") == tj["metadata"]["uid"]
        ):
            js["spec"]["suspend"] = suspend
            self.ctx.update(self.ctx.resource(*_JOBSETS), js)
        return js

    def _keep_hostfile(self, tj: dict[str, Any], text: str) -> None:
        ns, name = tj["metadata"]["namespace"], trainerruntime.hostfile_name(tj["metadata"]["name"])
        found = self.ctx.store.get(_CONFIGMAPS, ns, name)
        data = {trainerruntime.HOSTFILE_KEY: text}
        if found is None:
            self._create(_CONFIGMAPS, ns, trainerruntime.config_map(tj, name, data))
            return
        cm = found.object()
        if cm.get("data") != data:
            cm["data"] = data
            self.ctx.update(self.ctx.resource(*_CONFIGMAPS), cm)

    def _create(self, gr: tuple[str, str], ns: str, body: dict[str, Any]) -> None:
        r: resources.Resource | None = self.ctx.api.table.by_group_resource(*gr)
        if r is None:
            logger.debug("trainjob: %s not served, %s not created", gr, body["metadata"]["name"])
            return
        try:
            self.ctx.create(r, ns, body)
        except apierrors.ApiError as exc:
            logger.debug("trainjob: %s %s/%s not created: %s", gr[1], ns, body["metadata"]["name"], exc)

    def _delete_jobset(self, tj: dict[str, Any]) -> None:
        r = self.ctx.api.table.by_group_resource(*_JOBSETS)
        md = tj["metadata"]
        found = self.ctx.store.get(_JOBSETS, md["namespace"], md["name"])
        if r is not None and found is not None:
            self.ctx.delete(r, md["namespace"], md["name"], found.uid)

    # -------------------------------------------------------------- status
    def _deadline_passed(self, tj: dict[str, Any], key: kit.Key, conditions: list[dict[str, Any]]) -> bool:
        deadline = (tj.get("spec") or {}).get("activeDeadlineSeconds")
        if deadline is None:
            return False
        resumed = next((c for c in conditions if c.get("type") == "Suspended" and c.get("reason") == RESUMED[0]), None)
        start = kit.epoch((resumed or {}).get("lastTransitionTime") or tj["metadata"].get("creationTimestamp"))
        if start is None:
            return False
        due = start + int(deadline)
        if self.ctx.now() < due:
            self.ctx.later(NAME, key, due)
            return False
        return True

    def _from_jobset(
        self, js: dict[str, Any] | None, conditions: list[dict[str, Any]], now: str, status: dict[str, Any]
    ) -> list[dict[str, Any]]:
        if js is None:
            return conditions
        js_status = js.get("status") or {}
        status["jobsStatus"] = [dict(s) for s in js_status.get("replicatedJobsStatus") or []]
        for source, target in (("Completed", "Complete"), ("Failed", "Failed")):
            found = next((c for c in js_status.get("conditions") or [] if c.get("type") == source), None)
            if found is not None and found.get("status") == "True":
                conditions = _set(conditions, target, "True", found.get("reason", ""), found.get("message", ""), now)
        return conditions


def _set(
    conditions: list[dict[str, Any]], kind: str, value: str, reason: str, message: str, now: str
) -> list[dict[str, Any]]:
    """``meta.SetStatusCondition``: the transition time moves only when the status changes."""
    current = next((c for c in conditions if c.get("type") == kind), None)
    if current is not None and (current.get("status"), current.get("reason"), current.get("message")) == (
        value,
        reason,
        message,
    ):
        return conditions
    stamp = current.get("lastTransitionTime", now) if current is not None and current.get("status") == value else now
    new = {"type": kind, "status": value, "reason": reason, "message": message, "lastTransitionTime": stamp}
    return [new if c.get("type") == kind else c for c in conditions] if current is not None else [*conditions, new]
