"""What a bound pod's containers do on a simulated node, in virtual time.

After the kubelet admits a pod (:mod:`shared.sim.gpu.kubelet`): ContainerCreating (until every
ConfigMap and Secret it mounts exists, :mod:`.podfiles`), Running after ``podStartSeconds``
(later while the node reboots), then its workload (:mod:`shared.sim.gpu.workloads`) ends it with
an exit code and a log. An ``Always`` pod whose container is not a known workload binary keeps
running, as does an sshd (an MPI worker) whatever its restart policy; one whose container ends
is restarted after the kubelet's back-off.

An mpirun launcher runs over the hosts of its hostfile (:mod:`.launcher`); while it runs, the
death of a worker pod it reached fails it. The pods of one Indexed Job running ``train-bench``
are one torchrun rendezvous (:class:`GroupRun`): it starts when every index is Running, all
members end together, and a member killed aborts the others; rank 0's log grows line by line as the
steps go, and a run hung by a ``stall`` fault stops printing and never ends. Each pod of an Indexed Job that
runs an NCCL test by itself, with no hostfile, is a single-node run on its own node, as on a real
cluster: such a Job never measures the network between its nodes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shared.sim.apiserver import apierrors, jobs, store
from shared.sim.apiserver.vclock import Timer
from shared.sim.gpu import clusterdns, launcher, podfiles, podstatus, stages, workloads

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
    started: bool = False
    written: int = 0
    """Lines of rank 0's log written so far (the log grows as the run goes)."""


@dataclass
class LaunchRun:
    """A running mpirun launcher and the worker pods its daemons run in."""

    key: PodKey
    timer: Timer
    host: str
    workers: dict[str, str]  # worker pod uid -> its hostname


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
        self.launches: dict[str, LaunchRun] = {}
        """Launcher pod uid -> its running mpirun."""
        self.mount_waits: dict[str, float] = {}
        """Pod uid -> the back-off before the kubelet retries mounting its volumes."""

    def clear(self) -> None:
        self.runs = {}
        self.launches = {}
        self.mount_waits = {}

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
        missing = podfiles.missing(self.sim.store, pod)
        if missing is not None:
            self._mount_later(pod, key, uid, node, missing)
            return
        self.mount_waits.pop(uid, None)
        host, ip = addresses(self.sim.store, node, uid)
        if not self.write_pod_status(key, uid, podstatus.running(pod, host_ip=host, pod_ip=ip, now=self.sim.api.now())):
            return
        self._start_workload(pod, key, uid, node)

    def _mount_later(self, pod: dict[str, Any], key: PodKey, uid: str, node: str, missing: tuple[str, str]) -> None:
        """A volume's ConfigMap or Secret is missing: the kubelet records FailedMount and retries,
        backing off from ``podStartSeconds`` to 2m2s as its volume manager does."""
        volume, reason = missing
        self.sim.controllers.recorder.event(
            pod,
            type="Warning",
            reason="FailedMount",
            message=f'MountVolume.SetUp failed for volume "{volume}" : {reason}',
            component="kubelet",
        )
        delay = self.mount_waits.get(uid, stages.workloads().podStartSeconds)
        self.mount_waits[uid] = min(delay * 2, 122.0)
        self.sim.vclock.call_later(delay, lambda: self._run(key, uid, node))

    def _start_workload(self, pod: dict[str, Any], key: PodKey, uid: str, node: str) -> None:
        """Run the container's workload; its end is a timer (:meth:`finish`)."""
        hw = self.sim.fabric.node(node)
        containers = (pod.get("spec") or {}).get("containers") or [{}]
        workload = workloads.classify(containers[0])
        if workload.kind is workloads.Kind.SSHD:
            return  # an MPI worker serves ssh until its pod is stopped
        if workload.kind is workloads.Kind.OTHER and _restart_policy(pod) == "Always":
            return  # a long-running service: it stays Running
        owner = next((r for r in pod["metadata"].get("ownerReferences") or [] if r.get("kind") == "Job"), None)
        index = jobs.index_of(pod)
        if owner is not None and index is not None and hw is not None and workload.kind is workloads.Kind.TRAINING:
            self._join_run(owner, index, key, uid, node, workload)
            return
        if workload.kind is workloads.Kind.NCCL and (workload.launch is not None or workload.problem):
            self._launch(pod, key, uid, node, workload)
            return
        result = self._single(pod, node, workload)
        self.sim.vclock.call_later(result.seconds, lambda: self.finish(key, uid, result.exit_code, result.log))

    def _single(self, pod: dict[str, Any], node: str, workload: workloads.Workload) -> workloads.Result:
        """A workload that runs in its own container only: dcgmi, an NCCL test run directly, sleep…"""
        hw = self.sim.fabric.node(node)
        if workload.kind is workloads.Kind.DCGM:
            host = workloads.dcgm_host(list(workload.argv))
            if host is not None and not clusterdns.service_exists(self.sim.store, pod, host):
                return workloads.dcgm_unreachable(host)
        if workload.group and hw is not None:
            return workloads.run_group(self.sim.fabric, [node], workload, now=self.sim.vclock.time())
        if hw is not None or workload.kind in (workloads.Kind.SLEEP, workloads.Kind.OTHER):
            return workloads.run_single(self.sim.fabric, node, workload, other_seconds=self.other_seconds)
        return workloads.Result(f"{workload.binary}: no NVIDIA GPU found on this node\n", 1.0, 1)

    def _launch(self, pod: dict[str, Any], key: PodKey, uid: str, node: str, workload: workloads.Workload) -> None:
        """Start mpirun: it runs over its hosts until its timer ends it, or a worker dies."""
        outcome = launcher.run(self.sim.store, self.sim.fabric, pod, node, workload)
        result = outcome.result

        def done() -> None:
            self.launches.pop(uid, None)
            self.finish(key, uid, result.exit_code, result.log)

        timer = self.sim.vclock.call_later(result.seconds, done)
        if outcome.workers:
            self.launches[uid] = LaunchRun(key, timer, launcher.hostname(pod), dict(outcome.workers))

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
        if len(run.members) < completions or run.started:
            return
        order = [run.members[i] for i in sorted(run.members)]
        result = workloads.run_group(self.sim.fabric, [m[2] for m in order], workload, now=self.sim.vclock.time())
        run.started = True
        job_uid = owner.get("uid", "")
        for offset, _ in result.timed:
            self.sim.vclock.call_later(offset, self._feeder(job_uid, run, result, offset))

        def finish() -> None:
            self.runs.pop(job_uid, None)
            self._feed(job_uid, run, result, until=result.seconds, current=False)
            rest = "" if result.timed else result.log
            for i, (member_key, member_uid, _) in sorted(run.members.items()):
                self.finish(member_key, member_uid, result.exit_code, rest if i == 0 else "")

        if result.seconds != float("inf"):  # a hung run never ends: its pods run until killed
            run.timer = self.sim.vclock.call_later(result.seconds, finish)

    def _feeder(self, job_uid: str, run: GroupRun, result: workloads.Result, at: float) -> Callable[[], None]:
        return lambda: self._feed(job_uid, run, result, until=at)

    def _feed(
        self, job_uid: str, run: GroupRun, result: workloads.Result, *, until: float, current: bool = True
    ) -> None:
        """Write rank 0's lines due by ``until`` seconds into the run (a log that grows while it runs)."""
        if current and self.runs.get(job_uid) is not run:
            return  # aborted or finished: nothing more is printed
        due = [line for offset, line in result.timed[run.written :] if offset <= until]
        if not due:
            return
        run.written += len(due)
        key, uid, _ = run.members[min(run.members)]
        pod = self.pod(key, uid)
        if pod is not None:
            name = ((pod.get("spec") or {}).get("containers") or [{}])[0].get("name", "")
            self.sim.logs.append(key[0], key[1], name, "".join(f"{line}\n" for line in due))

    def abort_member(self, uid: str) -> None:
        """The pod ``uid`` is gone or killed: the runs it was part of fail (or, for a launcher, end)."""
        gone = self.launches.pop(uid, None)
        if gone is not None:
            gone.timer.cancel()
        for launcher_uid, launch in list(self.launches.items()):
            if uid in launch.workers:
                launch.timer.cancel()
                self.launches.pop(launcher_uid, None)
                self.finish(launch.key, launcher_uid, 1, launcher.lost_daemon(launch.host, launch.workers[uid]))
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
