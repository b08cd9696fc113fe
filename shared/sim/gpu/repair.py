"""The janitor: carries out the remediation objects nvsentinel creates, in virtual time.

- ``RebootNode`` (janitor.dgxc.nvidia.com/v1alpha1, cluster-scoped, ``spec.nodeName``): after
  ``signalSeconds`` the node goes NotReady (tainted ``node.kubernetes.io/not-ready``, its running
  pods terminated, its NIC ports down); ``downSeconds`` later it comes back Ready with a new
  bootID, the reboot-clearable faults (gpu-dead, xid, thermal) gone and its counters reset.
  Conditions: ``SignalSent`` then ``NodeReady=True`` (``NodeReady=False``, reason NodeNotFound,
  for a node that does not exist).
- ``GPUReset`` (``spec.nodeName``, ``spec.gpuUUID``): after ``seconds`` the GPU's resettable faults
  are gone; condition ``Complete=True`` (False, reason GPUNotFound, for an unknown GPU).

``TerminateNode`` is served (so nvsentinel can create one) but not carried out. Durations are in
stages/repair.yaml.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from shared.sim.apiserver import apierrors, patchtypes, store
from shared.sim.gpu import gpunodes, stages

if TYPE_CHECKING:
    from shared.sim.server import SimServer

logger = logging.getLogger(__name__)

GROUP = "janitor.dgxc.nvidia.com"
NOT_READY_TAINTS = [
    {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
]
_KINDS = (("RebootNode", "rebootnodes"), ("GPUReset", "gpuresets"), ("TerminateNode", "terminatenodes"))


def crds() -> list[dict[str, Any]]:
    """The janitor's CRDs, as the janitor chart would install them."""
    found = []
    for kind, plural in _KINDS:
        columns = [
            {"name": "Node", "type": "string", "jsonPath": ".spec.nodeName"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ]
        found.append(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": f"{plural}.{GROUP}"},
                "spec": {
                    "group": GROUP,
                    "scope": "Cluster",
                    "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
                    "versions": [
                        {
                            "name": "v1alpha1",
                            "served": True,
                            "storage": True,
                            "subresources": {"status": {}},
                            "additionalPrinterColumns": columns,
                            "schema": {
                                "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                            },
                        }
                    ],
                },
            }
        )
    return found


class Janitor:
    def __init__(self, sim: SimServer) -> None:
        self.sim = sim
        self.seen: set[str] = set()

    def reset(self) -> None:
        self.seen.clear()

    def install_crds(self) -> None:
        crd_r = self.sim.table.by_group_resource("apiextensions.k8s.io", "customresourcedefinitions")
        assert crd_r is not None
        for crd in crds():
            if self.sim.store.get(crd_r.group_resource, "", crd["metadata"]["name"]) is None:
                self.sim.api.create(crd_r, None, crd)

    def relist(self) -> None:
        for plural in ("rebootnodes", "gpuresets"):
            for entry in list(self.sim.store.scan((GROUP, plural), None)):
                self.handle((GROUP, plural), "ADDED", entry)

    def handle(self, gr: tuple[str, str], kind: str, entry: store.Entry) -> None:
        if gr[0] != GROUP or kind == "DELETED" or entry.uid in self.seen:
            return
        obj = entry.object()
        if (obj.get("status") or {}).get("conditions"):
            self.seen.add(entry.uid)  # already handled (before a restart): nothing to redo
            return
        self.seen.add(entry.uid)
        if gr[1] == "rebootnodes":
            self._reboot(entry.name, entry.uid, str((obj.get("spec") or {}).get("nodeName", "")))
        elif gr[1] == "gpuresets":
            spec = obj.get("spec") or {}
            self._reset(entry.name, entry.uid, str(spec.get("nodeName", "")), str(spec.get("gpuUUID", "")))

    # ------------------------------------------------------------ status of the CRs
    def _status(
        self, plural: str, name: str, uid: str, conditions: list[dict[str, str]], *, done: bool = False
    ) -> None:
        r = self.sim.table.by_group_resource(GROUP, plural)
        found = self.sim.store.get((GROUP, plural), "", name)
        if r is None or found is None or found.uid != uid:
            return
        now = self.sim.api.now()
        status = dict(found.object().get("status") or {})
        status.setdefault("startTime", now)
        if done:
            status["completionTime"] = now
        kept = [c for c in status.get("conditions") or [] if c.get("type") not in {c["type"] for c in conditions}]
        status["conditions"] = kept + [{**c, "lastTransitionTime": now} for c in conditions]
        try:
            self.sim.api.patch(r, None, name, patchtypes.MERGE, {"status": status}, sub="status")
        except apierrors.ApiError as exc:
            logger.debug("%s %s status not written: %s", plural, name, exc)

    # ------------------------------------------------------------ reboot
    def _reboot(self, name: str, uid: str, node_name: str) -> None:
        node = self.sim.fabric.node(node_name)
        if node is None:
            self._status(
                "rebootnodes",
                name,
                uid,
                [
                    {
                        "type": "NodeReady",
                        "status": "False",
                        "reason": "NodeNotFound",
                        "message": f"node {node_name!r} does not exist",
                    }
                ],
                done=True,
            )
            return
        timings = stages.repair().reboot
        self._status(
            "rebootnodes",
            name,
            uid,
            [{"type": "NodeReady", "status": "Unknown", "reason": "Pending", "message": "reboot requested"}],
        )

        def going_down() -> None:
            node.rebooting = True
            self._node_ready(node_name, ready=False)
            self.sim.kubelet.node_down(node_name)
            self.sim.noderoot.refresh({node_name})
            self._status(
                "rebootnodes",
                name,
                uid,
                [
                    {
                        "type": "SignalSent",
                        "status": "True",
                        "reason": "RebootSent",
                        "message": "reboot signal sent to the node",
                    }
                ],
            )
            self.sim.vclock.call_later(timings.downSeconds, coming_up)

        def coming_up() -> None:
            node.boot += 1
            node.rebooting = False
            self.sim.fabric.clear_for_repair(node_name, stages.faults().rebootClears)
            self.sim.noderoot.boot(node)
            self._node_ready(node_name, ready=True)
            self._status(
                "rebootnodes",
                name,
                uid,
                [
                    {
                        "type": "NodeReady",
                        "status": "True",
                        "reason": "NodeReady",
                        "message": "node is Ready after the reboot",
                    }
                ],
                done=True,
            )

        self.sim.vclock.call_later(timings.signalSeconds, going_down)

    def _node_ready(self, node_name: str, *, ready: bool) -> None:
        """Flip the node's Ready condition, its not-ready taints and (coming up) its bootID."""
        nodes = self.sim.table.by_group_resource("", "nodes")
        hw = self.sim.fabric.node(node_name)
        assert nodes is not None
        with self.sim.store.lock:
            found = self.sim.store.get(nodes.group_resource, "", node_name)
            if found is None:
                return
            obj = found.object()
            now = self.sim.api.now()
            taints = [
                t for t in (obj.get("spec") or {}).get("taints") or [] if t.get("key") != "node.kubernetes.io/not-ready"
            ]
            if not ready:
                taints += [{**t, "timeAdded": now} for t in NOT_READY_TAINTS]
            if taints:
                obj.setdefault("spec", {})["taints"] = taints
            else:
                obj.setdefault("spec", {}).pop("taints", None)
            status = obj.setdefault("status", {})
            status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != "Ready"] + [
                gpunodes.ready_condition(now, ready=ready)
            ]
            if ready and hw is not None:
                status.setdefault("nodeInfo", {})["bootID"] = gpunodes.boot_id(hw)
            updated = self.sim.api.update(nodes, None, node_name, obj)  # spec (taints); status is kept
            self.sim.api.update(nodes, None, node_name, {**updated, "status": status}, sub="status")

    # ------------------------------------------------------------ GPU reset
    def _reset(self, name: str, uid: str, node_name: str, gpu_uuid: str) -> None:
        node = self.sim.fabric.node(node_name)
        gpu = node.gpu_uuids.index(gpu_uuid) if node is not None and gpu_uuid in node.gpu_uuids else None
        if node is None or gpu is None:
            self._status(
                "gpuresets",
                name,
                uid,
                [
                    {
                        "type": "Complete",
                        "status": "False",
                        "reason": "GPUNotFound",
                        "message": f"no GPU {gpu_uuid!r} on node {node_name!r}",
                    }
                ],
                done=True,
            )
            return

        def done() -> None:
            self.sim.fabric.clear_for_repair(node_name, stages.faults().resetClears, gpu=gpu)
            self._status(
                "gpuresets",
                name,
                uid,
                [
                    {
                        "type": "Complete",
                        "status": "True",
                        "reason": "GPUResetSucceeded",
                        "message": f"GPU {gpu_uuid} on {node_name} was reset",
                    }
                ],
                done=True,
            )

        self._status(
            "gpuresets",
            name,
            uid,
            [{"type": "Complete", "status": "Unknown", "reason": "InProgress", "message": "GPU reset in progress"}],
        )
        self.sim.vclock.call_later(stages.repair().gpuReset.seconds, done)
