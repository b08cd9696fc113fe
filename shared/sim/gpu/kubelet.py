"""The simulated node side: scheduler, Job controller and kubelets of every node, in virtual time.

One thread follows the store's event log (as an informer would) and the virtual clock's timers;
every decision re-reads the object it concerns, so the loop is level-based and survives a lost
event (a compacted history makes it relist). A pod's life: Pending (unschedulable, with the
real reason) → bound → ContainerCreating → Running after ``podStartSeconds`` → terminated when
its workload ends (:mod:`shared.sim.gpu.workloads`), which :mod:`shared.sim.gpu.podruns` runs
once the kubelet admitted the pod. The pods of one Indexed Job running a group
workload are one run: it starts when every index is Running, its numbers come from the fabric
model for exactly those nodes, the pod with completion index 0 logs it, and all members end
together (a member killed by a reboot aborts the run).

Restart policy decides what a finished container does: ``Never`` and ``OnFailure`` pods run to
completion (Succeeded/Failed — what Job pods need; ``OnFailure`` is treated as ``Never``), while
an ``Always`` pod (the default, and what Deployment, DaemonSet and StatefulSet pods get) keeps
running: a container whose image is not a known workload binary runs until deleted, Ready; one
that ends is restarted by the kubelet — at once the first time, then after the real back-off
(10 s doubling to 5 min, the container waiting in ``CrashLoopBackOff``), ``restartCount`` and
``lastState`` recording each end.

The same loop drives the controller manager (:mod:`shared.sim.apiserver.controllers`:
Deployments, ReplicaSets, DaemonSets, StatefulSets, garbage collection, Event expiry) and the
node heartbeats: while it runs, node Leases renew and nodes post status (computed on read), and
a node whose kubelet is down (a reboot, or :meth:`Kubelet.stop_node`) goes ``Unknown`` after the
node-monitor grace period.

Pods (and the workloads owning them) that the simulator itself installed (``seed``) are static:
the kubelet leaves their status alone and no controller acts on them. Off by default in the
per-test fixture, so tests of the API alone can write pod status freely.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from shared.sim.apiserver import apierrors, podrequests, scheduler, store, subresources
from shared.sim.gpu import podruns, podstatus

if TYPE_CHECKING:
    from shared.sim.server import SimServer

logger = logging.getLogger(__name__)

PodKey = podruns.PodKey
_POLL = 0.2
_SETTLE_TIMEOUT = 20.0


class Kubelet:
    """Start with :meth:`start`; :meth:`settle` waits until it has caught up with the store."""

    def __init__(self, sim: SimServer) -> None:
        self.sim = sim
        self.runner = podruns.PodRunner(sim)
        self.lock = threading.RLock()
        self._idle = threading.Condition()
        self._idle_rv = -1
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.static: set[PodKey] = set()
        self.static_workloads: set[tuple[str, str, str]] = set()
        """(plural, namespace, name) of workloads installed as-is, left alone by their controllers."""
        self.stopped: set[str] = set()
        """Nodes whose kubelet was stopped with :meth:`stop_node`."""
        self._clear()

    def _clear(self) -> None:
        self._rv = self.sim.store.resource_version
        self.nodes: dict[str, scheduler.NodeView] = {}
        self.used: dict[str, dict[str, int]] = {}
        """node -> resource -> what its bound, unfinished pods request (:mod:`.podrequests` units)."""
        self.placed: dict[str, scheduler.Placed] = {}
        """uid -> a pod bound to a node and not finished, as the scheduler's cache holds it."""
        self.keys: dict[str, PodKey] = {}
        self.pending: dict[PodKey, str] = {}
        self.started: set[str] = set()
        self.dirty_jobs: set[PodKey] = set()
        self.runner.clear()
        self.deadlines: set[str] = set()
        self.retry_all = False
        self.relist = True

    # ------------------------------------------------------------ lifecycle
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        self.relist = True
        self.sim.controllers.heartbeats.enabled = True
        self.sim.vclock.drive(True)
        self._thread = threading.Thread(target=self._loop, name="sim-kubelet", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.sim.store.wake()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self.sim.vclock.drive(False)
        self.sim.controllers.heartbeats.enabled = False

    def reset(self) -> None:
        with self.lock:
            self.static.clear()
            self.static_workloads.clear()
            self.stopped.clear()
            self._clear()

    def settle(self, timeout: float = _SETTLE_TIMEOUT) -> None:
        """Block until every write so far was handled and no timer is due (no-op when stopped)."""
        if not self.running:
            return
        clock = self.sim.vclock
        with self._idle:
            ok = self._idle.wait_for(
                lambda: (
                    not self.running
                    or (
                        self._idle_rv == self.sim.store.resource_version
                        and ((due := clock.next_due()) is None or due > clock.time())
                    )
                ),
                timeout,
            )
        if not ok:
            raise TimeoutError("the simulated kubelet did not settle")

    def _loop(self) -> None:
        clock = self.sim.vclock
        while not self._stop.is_set():
            try:
                with self.lock:
                    busy = self._step()
            except Exception:  # a bug here must not stop the cluster: log it and carry on
                logger.exception("simulated kubelet step failed")
                busy = False
            clock.done(self._rv)  # every write up to here is handled: the clock may run past them
            if busy:
                continue
            with self._idle:
                self._idle_rv = self._rv
                self._idle.notify_all()
            due = clock.next_due()
            wait = _POLL if due is None else min(_POLL, clock.real_seconds_until(due))
            if wait > 0:
                self.sim.store.wait(self._rv, wait)

    def _step(self) -> bool:
        if self.relist:
            self._relist()
            return True
        try:
            events = self.sim.store.events_after(self._rv)
        except store.Compacted:
            self.relist = True
            return True
        for event in events:
            self._rv = event.rv
            self._handle(event.group_resource, event.type, event.entry, event.previous)
            self.sim.controllers.handle(event.group_resource, event.type, event.entry, event.previous)
        fired = self.sim.vclock.fire_due() > 0
        self._reconcile_jobs()
        self.sim.controllers.reconcile()
        self._schedule()
        return bool(events) or fired

    def _relist(self) -> None:
        self.relist = False
        self._rv = self.sim.store.resource_version
        for entry in list(self.sim.store.scan(("", "nodes"), None)):
            self._handle(("", "nodes"), "ADDED", entry)
        for entry in list(self.sim.store.scan(("", "pods"), None)):
            self._handle(("", "pods"), "ADDED", entry)
        for entry in list(self.sim.store.scan(("batch", "jobs"), None)):
            self.dirty_jobs.add((entry.namespace, entry.name))
        self.sim.repair.relist()
        self.sim.controllers.relist()

    # ------------------------------------------------------------ events
    def _handle(self, gr: tuple[str, str], kind: str, entry: store.Entry, previous: store.Entry | None = None) -> None:
        if gr == ("", "nodes"):
            if kind == "DELETED":
                self.nodes.pop(entry.name, None)
            else:
                self.nodes[entry.name] = scheduler.NodeView.of(entry.object())
            self.retry_all = True
        elif gr == ("", "pods"):
            self._pod_event(kind, entry, previous)
        elif gr == ("batch", "jobs"):
            if kind == "DELETED":
                self.runner.forget_job(entry.uid)
            else:
                self.dirty_jobs.add((entry.namespace, entry.name))
        else:
            self.sim.repair.handle(gr, kind, entry)

    def _pod_event(self, kind: str, entry: store.Entry, previous: store.Entry | None) -> None:
        key = (entry.namespace, entry.name)
        pod = entry.object()
        if kind != "MODIFIED" or previous is None or _counted(pod) != _counted(previous.object()):
            for ref in pod["metadata"].get("ownerReferences") or []:
                if ref.get("kind") == "Job":
                    self.dirty_jobs.add((entry.namespace, ref.get("name", "")))
        if kind == "DELETED":
            self.keys.pop(entry.uid, None)
            self._release(entry.uid)
            self.pending.pop(key, None)
            self.started.discard(entry.uid)
            self.static.discard(key)
            self.sim.logs.forget(*key)
            self.runner.abort_member(entry.uid)
        else:
            self.keys[entry.uid] = key
            spec, phase = pod.get("spec") or {}, (pod.get("status") or {}).get("phase")
            node = spec.get("nodeName")
            if phase in ("Succeeded", "Failed") or pod["metadata"].get("deletionTimestamp"):
                self._release(entry.uid)
                self.pending.pop(key, None)
            elif not node:
                if spec.get("schedulerName", "default-scheduler") == "default-scheduler" and key not in self.static:
                    self.pending[key] = entry.uid
            else:
                self.pending.pop(key, None)
                if entry.uid not in self.placed:
                    self._hold(scheduler.placed_of(pod, node))
                if entry.uid not in self.started and phase == "Pending" and key not in self.static:
                    self.started.add(entry.uid)
                    self._admit(pod, node)

    def _hold(self, placed: scheduler.Placed) -> None:
        self.placed[placed.uid] = placed
        used = self.used.setdefault(placed.node, {})
        for name, value in placed.requests.items():
            used[name] = used.get(name, 0) + value

    def _release(self, uid: str) -> None:
        held = self.placed.pop(uid, None)
        if held is not None:
            used = self.used.get(held.node, {})
            for name, value in held.requests.items():
                used[name] = max(0, used.get(name, 0) - value)
            self.retry_all = True

    # ------------------------------------------------------------ writes
    def _resource(self, group: str, plural: str) -> Any:
        return self.sim.table.by_group_resource(group, plural)

    # ------------------------------------------------------------ pod lifecycle
    def _admit(self, pod: dict[str, Any], node: str) -> None:
        """The kubelet's resource admission (``pkg/kubelet/lifecycle/predicate.go``): the pod's requests
        against the node's allocatable less its other admitted pods', the first shortfall failing the pod
        ``OutOf<resource>``. An extended resource the node does not list at all is dropped first
        (``removeMissingExtendedResources``), so such a pod is admitted, as on a real node."""
        key, uid = (pod["metadata"]["namespace"], pod["metadata"]["name"]), pod["metadata"]["uid"]
        now = self.sim.api.now()
        view = self.nodes.get(node)
        if view is not None:
            own = self.placed.get(uid)
            want = {
                name: value
                for name, value in (own.requests if own is not None else podrequests.pod_requests(pod)).items()
                if not podrequests.is_extended(name) or name in view.allocatable
            }
            used = self.used.get(node, {})
            others = {name: used.get(name, 0) - (value if own is not None else 0) for name, value in want.items()}
            free = {name: view.allocatable.get(name, 0) - others[name] for name in want}
            short = podrequests.shortfalls(want, free)
            if short:
                name = short[0][0]
                capacity = view.allocatable.get(name, 0)
                self.runner.write_pod_status(
                    key,
                    uid,
                    podstatus.rejected(
                        pod,
                        reason=f"OutOf{name}",
                        now=now,
                        message=f"Pod was rejected: Node didn't have enough resource: {name}, requested: "
                        f"{want[name]}, used: {others[name]}, capacity: {capacity}",
                    ),
                )
                return
        self.runner.create(pod, node, now=now)

    def is_down(self, node: str) -> bool:
        """Whether ``node``'s kubelet is not running (stopped, or the node is rebooting)."""
        hw = self.sim.fabric.node(node)
        return node in self.stopped or (hw is not None and hw.rebooting)

    def stop_node(self, node: str) -> None:
        """The node's kubelet stops (a crash, a network cut): its pods are left as they were, its
        heartbeats stop, and the node lifecycle controller marks it Unknown after the grace period."""
        with self.lock:
            self.stopped.add(node)
            self.sim.controllers.heartbeats.stop(node)

    def start_node(self, node: str) -> None:
        """The node's kubelet is back: it posts Ready and renews its Lease; the taints go."""
        with self.lock:
            self.stopped.discard(node)
            self.sim.controllers.heartbeats.check(node)

    def node_down(self, node: str) -> None:
        """A reboot kills every running pod on ``node`` (and the group runs they belong to)."""
        self.sim.controllers.heartbeats.stop(node)
        for uid, held in list(self.placed.items()):
            if held.node != node:
                continue
            key = self.keys.get(uid)
            if key is None or key in self.static:
                continue
            self.runner.abort_member(uid)
            self.runner.finish(
                key,
                uid,
                137,
                "",
                reason="Terminated",
                message="Pod was terminated in response to imminent node shutdown.",
            )

    # ------------------------------------------------------------ scheduling and jobs
    def _schedule(self) -> None:
        if not self.pending:
            return
        keys = list(self.pending) if self.retry_all else [k for k, u in self.pending.items() if u not in self.started]
        self.retry_all = False
        pods = self._resource("", "pods")
        for key in sorted(keys):
            uid = self.pending.get(key)
            pod = self.runner.pod(key, uid) if uid else None
            if pod is None:
                self.pending.pop(key, None)
                continue
            self.started.add(uid or "")  # marks "tried once"; retried on the next change
            decision = scheduler.place(pod, self.nodes, self.placed.values())
            if decision.node is not None:
                try:
                    subresources.bind(
                        self.sim.api, pods, key[0], key[1], {"target": {"name": decision.node}}, dry_run=False
                    )
                except apierrors.ApiError:
                    continue
                self.started.discard(uid or "")
                self.pending.pop(key, None)
                self._hold(scheduler.placed_of(pod, decision.node))
                # kube-scheduler's record of the binding (schedule_one.go): it outlives the pod.
                self.sim.controllers.recorder.event(
                    pod,
                    type="Normal",
                    reason="Scheduled",
                    message=f"Successfully assigned {key[0]}/{key[1]} to {decision.node}",
                    component="default-scheduler",
                )
                continue
            current: dict[str, Any] = next(
                (c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"), {}
            )
            if current.get("message") != decision.message:
                self.runner.write_pod_status(
                    key, uid or "", podstatus.unschedulable(pod, message=decision.message, now=self.sim.api.now())
                )
                # kube-scheduler's FailedScheduling Event, with the condition's message, once per new verdict.
                self.sim.controllers.recorder.event(
                    pod,
                    type="Warning",
                    reason="FailedScheduling",
                    message=decision.message,
                    component="default-scheduler",
                )

    def _reconcile_jobs(self) -> None:
        while self.dirty_jobs:
            key = self.dirty_jobs.pop()
            try:
                self.sim.jobctl.reconcile(key)
            except apierrors.ApiError as exc:
                logger.debug("job %s/%s: %s", *key, exc)


def _counted(pod: dict[str, Any]) -> tuple[Any, ...]:
    """What a Job's status counts of its pod: a change elsewhere need not wake the Job controller."""
    status = pod.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    return status.get("phase"), ready, bool(pod["metadata"].get("deletionTimestamp"))
