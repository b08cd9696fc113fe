"""What a bound pod's containers do on a simulated node, in virtual time.

After the kubelet admits a pod (:mod:`shared.sim.gpu.kubelet`): ContainerCreating, Running after
``podStartSeconds`` (later while the node reboots), then its workload (:mod:`shared.sim.gpu.workloads`)
ends it with an exit code and a log. An ``Always`` pod whose container is not a known workload
binary keeps running; one whose container ends is restarted after the kubelet's back-off. The
pods of one Indexed Job running a group workload are one run (:class:`GroupRun`): it starts when
every index is Running, all members end together, and a member killed aborts the others.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shared.sim.apiserver import apierrors, jobs, store
from shared.sim.apiserver.vclock import Timer
from shared.sim.gpu import podstatus, stages, workloads

if TYPE_CHECKING:
    from shared.sim.server import SimServer

logger = logging.getLogger(__name__)

PodKey = tuple[str, str]


@dataclass
class GroupRun:
    """The pods of one Job attempt that run one group workload together."""

    members: dict[int, tuple[PodKey, str, str]] = field(default_factory=dict)  # index -> (key, uid, node)
    timer: Timer | None = None
    done: set[str] = field(default_factory=set)


def addresses(objects: store.Store, node: str, uid: str) -> tuple[str, str]:
    """(host IP, pod IP) of a pod on ``node``: the node's InternalIP, and an address of the pod
    network derived from the pod's uid (stable across restarts of its containers)."""
    view = objects.get(("", "nodes"), "", node)
    host = "10.0.0.1"
    if view is not None:
        host = next(
            (
                a["address"]
                for a in (view.object().get("status") or {}).get("addresses") or []
                if a.get("type") == "InternalIP"
            ),
            host,
        )
    n = int(uid.replace("-", "")[:6], 16)
    return host, f"10.244.{n % 250}.{(n >> 8) % 250 + 2}"


class PodRunner:
    """The containers of every pod the kubelet admitted: their starts, ends and restarts."""

    def __init__(self, sim: SimServer) -> None:
        self.sim = sim
        self.other_seconds = stages.workloads().otherSeconds
        self.runs: dict[str, GroupRun] = {}
        """Job uid -> the group run its pods make."""

    def clear(self) -> None:
        self.runs = {}

    def forget_job(self, uid: str) -> None:
        """The Job ``uid`` is gone: so is its group run (its pods end as they are deleted)."""
        self.runs.pop(uid, None)

    # ------------------------------------------------------------ writes
    def write_pod_status(self, key: PodKey, uid: str, status: dict[str, Any]) -> bool:
        """Replace a pod's status if it is still the same pod; False when it is gone."""
        pods = self.sim.table.by_group_resource("", "pods")
        assert pods is not None
        found = self.sim.store.get(pods.group_resource, *key)
        if found is None or found.uid != uid:
            return False
        pod = found.object()
        pod["status"] = status
        try:  # a status update of the object just read: cheaper than a JSON patch, same result
            self.sim.api.update(pods, key[0], key[1], pod, sub="status")
        except apierrors.ApiError as exc:
            logger.debug("pod %s/%s status not written: %s", *key, exc)
            return False
        return True

    def pod(self, key: PodKey, uid: str) -> dict[str, Any] | None:
        """The pod at ``key`` if it is still the one with ``uid``."""
        found = self.sim.store.get(("", "pods"), *key)
        return found.object() if found is not None and found.uid == uid else None

    # ------------------------------------------------------------ pod lifecycle
    def create(self, pod: dict[str, Any], node: str, *, now: str) -> None:
        """An admitted pod: ContainerCreating now, started after ``podStartSeconds``."""
        key, uid = (pod["metadata"]["namespace"], pod["metadata"]["name"]), pod["metadata"]["uid"]
        host, _ = addresses(self.sim.store, node, uid)
        self.write_pod_status(key, uid, podstatus.creating(pod, host_ip=host, now=now))
        self.sim.vclock.call_later(stages.workloads().podStartSeconds, lambda: self._run(key, uid, node))

    def _run(self, key: PodKey, uid: str, node: str) -> None:
        pod = self.pod(key, uid)
        if pod is None or (pod.get("status") or {}).get("phase") != "Pending":
            return
        hw = self.sim.fabric.node(node)
        if hw is not None and hw.rebooting:
            self.sim.vclock.call_later(stages.workloads().podStartSeconds, lambda: self._run(key, uid, node))
            return
        host, ip = addresses(self.sim.store, node, uid)
        if not self.write_pod_status(key, uid, podstatus.running(pod, host_ip=host, pod_ip=ip, now=self.sim.api.now())):
            return
        self._start_workload(pod, key, uid, node)

    def _start_workload(self, pod: dict[str, Any], key: PodKey, uid: str, node: str) -> None:
        """Run the container's workload; its end is a timer (:meth:`finish`)."""
        hw = self.sim.fabric.node(node)
        containers = (pod.get("spec") or {}).get("containers") or [{}]
        workload = workloads.classify(containers[0])
        if workload.kind is workloads.Kind.OTHER and _restart_policy(pod) == "Always":
            return  # a long-running service: it stays Running
        owner = next((r for r in pod["metadata"].get("ownerReferences") or [] if r.get("kind") == "Job"), None)
        index = jobs.index_of(pod)
        if workload.group and owner is not None and index is not None and hw is not None:
            self._join_run(owner, index, key, uid, node, workload)
            return
        if workload.group and hw is not None:
            result = workloads.run_group(self.sim.fabric, [node], workload, now=self.sim.vclock.time())
        elif hw is not None or workload.kind in (workloads.Kind.SLEEP, workloads.Kind.OTHER):
            result = workloads.run_single(self.sim.fabric, node, workload, other_seconds=self.other_seconds)
        else:
            result = workloads.Result(f"{workload.binary}: no NVIDIA GPU found on this node\n", 1.0, 1)
        self.sim.vclock.call_later(result.seconds, lambda: self.finish(key, uid, result.exit_code, result.log))

    def finish(
        self, key: PodKey, uid: str, exit_code: int, log: str, *, reason: str | None = None, message: str | None = None
    ) -> None:
        pod = self.pod(key, uid)
        if pod is None or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return
        if log:
            name = ((pod.get("spec") or {}).get("containers") or [{}])[0].get("name", "")
            self.sim.logs.append(key[0], key[1], name, log)
        if reason is None and _restart_policy(pod) == "Always":
            self._restart_later(pod, key, uid, exit_code)
            return
        self.write_pod_status(
            key,
            uid,
            podstatus.terminated(pod, exit_code=exit_code, now=self.sim.api.now(), reason=reason, message=message),
        )

    def _restart_later(self, pod: dict[str, Any], key: PodKey, uid: str, exit_code: int) -> None:
        """An ``Always`` container ended: the kubelet starts it again, after its back-off."""
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        restarts = podstatus.restarts(pod) + 1
        delay = podstatus.restart_backoff(restarts)
        now = self.sim.api.now()
        ended = podstatus.crashed(pod, exit_code=exit_code, restarts=restarts, now=now, waiting=delay > 0)
        if not self.write_pod_status(key, uid, ended):
            return
        if delay > 0:
            self.sim.vclock.call_later(delay, lambda: self._restart(key, uid, node))
        else:
            self._restart(key, uid, node)

    def _restart(self, key: PodKey, uid: str, node: str) -> None:
        pod = self.pod(key, uid)
        if pod is None or (pod.get("status") or {}).get("phase") != "Running":
            return
        host, ip = addresses(self.sim.store, node, uid)
        again = podstatus.restarted(pod, host_ip=host, pod_ip=ip, now=self.sim.api.now())
        if self.write_pod_status(key, uid, again):
            self._start_workload({**pod, "status": again}, key, uid, node)

    # ------------------------------------------------------------ group runs
    def _join_run(
        self, owner: dict[str, Any], index: int, key: PodKey, uid: str, node: str, workload: workloads.Workload
    ) -> None:
        job_found = self.sim.store.get(("batch", "jobs"), key[0], owner.get("name", ""))
        if job_found is None:
            return
        completions = int((job_found.object().get("spec") or {}).get("completions", 1))
        run = self.runs.setdefault(owner.get("uid", ""), GroupRun())
        run.members[index] = (key, uid, node)
        if len(run.members) < completions or run.timer is not None:
            return
        order = [run.members[i] for i in sorted(run.members)]
        result = workloads.run_group(self.sim.fabric, [m[2] for m in order], workload, now=self.sim.vclock.time())

        def finish() -> None:
            self.runs.pop(owner.get("uid", ""), None)
            for i, (member_key, member_uid, _) in sorted(run.members.items()):
                self.finish(member_key, member_uid, result.exit_code, result.log if i == 0 else "")

        run.timer = self.sim.vclock.call_later(result.seconds, finish)

    def abort_member(self, uid: str) -> None:
        for job_uid, run in list(self.runs.items()):
            if any(m[1] == uid for m in run.members.values()):
                if run.timer is not None:
                    run.timer.cancel()
                self.runs.pop(job_uid, None)
                for key, member_uid, _ in run.members.values():
                    if member_uid != uid:
                        self.finish(key, member_uid, 1, "mpirun: a peer process exited; the job has been aborted\n")


def _restart_policy(pod: dict[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("restartPolicy") or "Always")
