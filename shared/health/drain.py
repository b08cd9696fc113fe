"""Drain: move workloads off a quarantined node, per namespace mode (research/nvsentinel.md §4).

A quarantine only stops new pods; the pods already on a broken GPU keep failing until they leave.
Each quarantining event gets a drain, advanced one step per controller pass and recorded in the
event's ``status.drain`` — so a restarted controller resumes where it stopped, and a drain waiting
on a PodDisruptionBudget or on pods to finish never blocks other nodes. Modes, by the first
``userNamespaces`` glob matching the pod's namespace (pods in no listed namespace are left alone):

- ``Immediate``: the Eviction API (PodDisruptionBudgets are honoured); a refusal (429) backs off
  ``requeueBackoffBase`` doubling to ``requeueBackoffMax``, in cluster time;
- ``AllowCompletion``: wait for the pods to finish on their own, with an Event saying which;
- ``DeleteAfterTimeout``: wait until ``deleteAfterTimeoutMinutes`` after the drain started, then
  delete them.

With ``podDrainPolicies`` (exclusive with ``userNamespaces``, as upstream) the mode is chosen per
pod instead: the first policy whose ``namespace`` glob (empty: any) and ``podSelector`` (a label
selector) match; a pod no policy matches is left alone and does not hold the drain up.

DaemonSet and mirror pods, finished pods and the ``systemNamespaces`` are never touched; nor are
pods stuck terminating (past their grace period) or not Ready for ``notReadyTimeoutMinutes``, as
upstream: they hold no work a drain could save and would only hold it up. ``drainGPUPods`` limits
the drain to pods requesting GPUs (``nvidia.com/gpu`` or ``nvidia.com/pgpu`` limits). A
COMPONENT_RESET event with a GPU_UUID entity drains only the pods using that GPU (annotation
``dgxc.nvidia.com/devices``, as upstream's metadata collector writes it) when partial drain is on;
a pod requesting GPUs without that annotation cannot be ruled out, so it is drained too (upstream
stops the drain with an error there). The node's ``dgxc.nvidia.com/nvsentinel-state`` label goes
draining → drain-succeeded.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from shared import nodes
from shared.health import event as hevent
from shared.health import kevents, quarantine, resource
from shared.health import settings as hsettings
from shared.kube import events as kube_events
from shared.kube import evictions, labelselector, rest
from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)

COMPONENT = kevents.DRAIN
DEVICES_ANNOTATION = "dgxc.nvidia.com/devices"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
TERMINAL = frozenset({"Succeeded", "AlreadyDrained", "Failed", "Cancelled"})
DONE = frozenset({"Succeeded", "AlreadyDrained"})
QUARANTINING = frozenset({"Quarantined", "AlreadyQuarantined"})


def pod_key(pod: dict[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def uses_gpu(pod: dict[str, Any], gpu_uuid: str) -> bool:
    """True when the pod's device annotation lists the GPU (``{"devices":{"nvidia.com/gpu":[...]}}``)."""
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(DEVICES_ANNOTATION)
    if not text:
        return False
    try:
        devices = json.loads(text).get("devices") or {}
    except (ValueError, AttributeError):
        return False
    return any(gpu_uuid in (ids or []) for ids in devices.values())


GPU_RESOURCES = ("nvidia.com/gpu", "nvidia.com/pgpu")
"""Resources whose devices a GPU_UUID names (upstream's EntityTypeToResourceNames["GPU_UUID"])."""


def requests_gpu(pod: dict[str, Any]) -> bool:
    """A container or init container with a positive GPU limit."""
    spec = pod.get("spec") or {}
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        limits = (container.get("resources") or {}).get("limits") or {}
        for name in GPU_RESOURCES:
            try:
                if float(str(limits.get(name, "0"))) > 0:
                    return True
            except ValueError:
                return True  # a quantity we cannot read is still a request
    return False


def _since(pod: dict[str, Any], when: str | None, seconds: float, now: datetime) -> bool:
    """``when`` (an API timestamp) plus ``seconds`` is before ``now``."""
    if not when:
        return False
    try:
        return _parse(when) + timedelta(seconds=seconds) < now
    except ValueError:
        return False


def _stale(pod: dict[str, Any], not_ready_minutes: float, now: datetime) -> bool:
    """Stuck terminating past its grace period, or not Ready for ``not_ready_minutes`` (upstream's filters)."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    grace = spec.get("terminationGracePeriodSeconds")
    if _since(pod, meta.get("deletionTimestamp"), 30 if grace is None else float(grace), now):
        return True
    return any(
        c.get("type") == "Ready"
        and c.get("status") == "False"
        and _since(pod, c.get("lastTransitionTime"), not_ready_minutes * 60, now)
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _exempt(pod: dict[str, Any]) -> bool:
    meta = pod.get("metadata") or {}
    if any(ref.get("kind") == "DaemonSet" for ref in meta.get("ownerReferences") or []):
        return True
    if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return True
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class Drainer:
    """One drain step for one event at a time; all state in the event's status."""

    def __init__(
        self,
        api: KubeApi,
        settings: hsettings.NodeDrainer,
        *,
        now: Callable[[], datetime],
        events: kube_events.Recorder | None = None,
    ) -> None:
        self.api = api
        self.settings = settings
        self.now = now
        self.events = events or kube_events.Recorder(api, component=COMPONENT, now=now)
        self.system = re.compile(settings.systemNamespaces)
        self.policies = [(p.namespace, labelselector.parse(p.podSelector), p.mode) for p in settings.podDrainPolicies]
        self.base = hsettings.parse_duration(settings.requeueBackoffBase)
        self.most = hsettings.parse_duration(settings.requeueBackoffMax)

    # ------------------------------------------------------------ scope
    def mode_for(self, namespace: str, ev: hevent.HealthEvent, labels: dict[str, str] | None = None) -> str | None:
        """The pod's mode (``drainOverrides.force`` makes every mode Immediate); None: out of scope.

        From the first matching pod policy when there are any, else from the namespace's entry."""
        if self.system.search(namespace):
            return None
        mode: str | None = None
        if self.policies:
            mode = next(
                (
                    m
                    for glob, requirements, m in self.policies
                    if (not glob or fnmatch.fnmatchcase(namespace, glob))
                    and labelselector.matches(requirements, labels or {})
                ),
                None,
            )
        else:
            mode = next((e.mode for e in self.settings.userNamespaces if fnmatch.fnmatchcase(namespace, e.name)), None)
        if mode is not None and ev.drainOverrides is not None and ev.drainOverrides.force:
            return "Immediate"
        return mode

    def partial_entity(self, ev: hevent.HealthEvent) -> tuple[bool, str | None]:
        """(partial?, GPU UUID): partial for COMPONENT_RESET when enabled; UUID None means unusable."""
        if not (self.settings.partialDrainEnabled and ev.recommendedAction == hevent.RecommendedAction.COMPONENT_RESET):
            return False, None
        uuid = next((e.entityValue for e in ev.entitiesImpacted if e.entityType == hevent.EntityType.GPU_UUID), None)
        return True, uuid

    def pods(self, node: str, ev: hevent.HealthEvent, entity: str | None) -> list[tuple[dict[str, Any], str]]:
        """(pod, mode) for every pod of ``node`` this drain must move."""
        found = []
        now = self.now()
        for pod in rest.list_items(self.api, rest.core_path("pods"), field_selector=f"spec.nodeName={node}"):
            if _exempt(pod) or _stale(pod, self.settings.notReadyTimeoutMinutes, now):
                continue
            meta = pod.get("metadata") or {}
            mode = self.mode_for(meta.get("namespace", ""), ev, meta.get("labels") or {})
            if mode is None or (self.settings.drainGPUPods and not requests_gpu(pod)):
                continue
            if (
                entity is not None
                and not uses_gpu(pod, entity)
                and not (requests_gpu(pod) and DEVICES_ANNOTATION not in (meta.get("annotations") or {}))
            ):
                continue
            found.append((pod, mode))
        return found

    # ------------------------------------------------------------ one step
    def step(self, stored: resource.Stored, node: nodes.Node, others: list[resource.Stored]) -> resource.DrainStatus:
        """Advance this event's drain once; returns the new status (the caller records it)."""
        ev = stored.event
        now = self.now()
        current = stored.status.drain or resource.DrainStatus(startedAt=hevent.format_time(now))
        settled = _settled(ev, node, current)
        if settled is not None:
            return settled
        partial, entity = self.partial_entity(ev)
        if partial and entity is None:
            message = "partial drain needs a GPU_UUID entity"
            self.events.warning(node, kevents.DRAIN_FAILED, f"{kevents.cause(ev)}: {message}")
            return current.model_copy(update={"state": "Failed", "message": message})
        if self._drained_before(node, stored, others, entity):
            return current.model_copy(update={"state": "AlreadyDrained", "entity": entity})
        if current.nextAttemptAt and _parse(current.nextAttemptAt) > now:
            return current
        self._label(ev.nodeName, "draining")
        first = stored.status.drain is None
        status = self._act(ev, node, current.model_copy(update={"entity": entity}), now, first=first)
        if status.state == "Succeeded":
            self._label(ev.nodeName, "drain-succeeded")
            self.events.normal(
                node, kevents.DRAIN_COMPLETED, f"{kevents.cause(ev)}: no pod left to move{_took(current, now)}"
            )
        return status

    def _act(
        self, ev: hevent.HealthEvent, node: nodes.Node, status: resource.DrainStatus, now: datetime, *, first: bool
    ) -> resource.DrainStatus:
        started = _parse(status.startedAt) if status.startedAt else now
        deadline = started + timedelta(minutes=self.settings.deleteAfterTimeoutMinutes)
        pending, blocked, waiting, messages = [], False, [], []
        found = self.pods(ev.nodeName, ev, status.entity)
        self._begin(ev, node, found, now=now, deadline=deadline, first=first)
        for pod, mode in found:
            meta = pod["metadata"]
            key = pod_key(pod)
            if mode == "Immediate":
                result, message, budget = evictions.evict(
                    self.api, meta["namespace"], meta["name"], grace_seconds=int(self.settings.evictionTimeoutInSeconds)
                )
                if result == "blocked":
                    blocked = True
                    pending.append(key)
                    messages.append(f"{key}: {message}")
                    self._held(node, key, budget, message)
                elif result == "evicted":
                    self._evicted(ev, node, pod, key)
            elif mode == "DeleteAfterTimeout" and now >= deadline:
                rest.delete(self.api, rest.core_path("pods", meta["namespace"], meta["name"]), what=f"pod {key}")
                logger.info("deleted %s after the drain timeout", key, extra={"subject": ev.nodeName})
                self.events.normal(
                    pod,
                    kevents.DELETED_AFTER_TIMEOUT,
                    f"Deleted from node {ev.nodeName} {self.settings.deleteAfterTimeoutMinutes:g} minute(s) after "
                    f"its drain for {kevents.cause(ev)} started",
                    kind="Pod",
                    api_version="v1",
                )
            else:
                pending.append(key)
                waiting.append((key, mode))
        if not pending:
            return status.model_copy(update={"state": "Succeeded", "pending": [], "nextAttemptAt": None, "message": ""})
        if waiting:
            self._announce(node, waiting, deadline)
        update: dict[str, Any] = {"state": "InProgress", "pending": pending, "message": "; ".join(messages)}
        if blocked:
            attempts = status.attempts + 1
            pause = min(self.most, self.base * 2 ** (attempts - 1))
            update.update(attempts=attempts, nextAttemptAt=hevent.format_time(now + pause))
        else:
            update.update(nextAttemptAt=None)
        return status.model_copy(update=update)

    def _begin(
        self,
        ev: hevent.HealthEvent,
        node: nodes.Node,
        found: list[tuple[dict[str, Any], str]],
        *,
        now: datetime,
        deadline: datetime,
        first: bool,
    ) -> None:
        """The step's Events before it acts: the drain's start, and the timeout that deletes pods."""
        if first and found:
            forced = (
                " (drainOverrides.force: every pod evicted now)"
                if ev.drainOverrides and ev.drainOverrides.force
                else ""
            )
            self.events.normal(
                node,
                kevents.DRAIN_STARTED,
                f"{kevents.cause(ev)}: moving {len(found)} pod(s){forced}: "
                f"{kube_events.listing(pod_key(p) for p, _ in found)}",
            )
        overdue = [pod_key(p) for p, mode in found if mode == "DeleteAfterTimeout" and now >= deadline]
        if overdue:
            self.events.warning(
                node,
                kevents.DRAIN_TIMED_OUT,
                f"{kevents.cause(ev)}: deleteAfterTimeoutMinutes ({self.settings.deleteAfterTimeoutMinutes:g}) "
                f"passed, deleting {len(overdue)} pod(s): {kube_events.listing(overdue)}",
            )

    def _evicted(self, ev: hevent.HealthEvent, node: nodes.Node, pod: dict[str, Any], key: str) -> None:
        """An Event on the pod (its own history) and one on the node (the drain's history)."""
        logger.info("evicted %s", key, extra={"subject": ev.nodeName})
        self.events.normal(
            pod,
            kevents.EVICTED,
            f"Evicted from node {ev.nodeName} by its drain for {kevents.cause(ev)}",
            kind="Pod",
            api_version="v1",
        )
        self.events.normal(node, kevents.POD_EVICTED, f"Evicted {key} for {kevents.cause(ev)}")

    def _held(self, node: nodes.Node, key: str, budget: str, message: str) -> None:
        """A refused eviction, retried after a backoff. The text names no count or delay, so each
        retry during a long hold raises one Event's count instead of writing another Event."""
        if budget:
            said = f"Eviction of {key} held by PodDisruptionBudget {budget}; retrying"
        else:
            said = f"Eviction of {key} refused ({message}); retrying"
        self.events.warning(node, kevents.EVICTION_BLOCKED, said)

    def _announce(self, node: nodes.Node, waiting: list[tuple[str, str]], deadline: datetime) -> None:
        """Upstream's waiting Events (research/nvsentinel.md §4); a pass that waits again repeats the same
        Event, which the recorder counts instead of writing a new one."""
        allow = sorted(k for k, m in waiting if m == "AllowCompletion")
        later = sorted(k for k, m in waiting if m == "DeleteAfterTimeout")
        if allow:
            self.events.normal(
                node, kevents.AWAITING_COMPLETION, f"Waiting for following pods to finish: {_go_list(allow)}"
            )
        if later:
            self.events.normal(
                node,
                kevents.WAITING_FORCE_DELETE,
                f"Waiting for following pods to finish: {_go_list(later)} or they will be force "
                f"deleted on: {hevent.format_time(deadline)}",
            )

    def _drained_before(
        self, node: nodes.Node, stored: resource.Stored, others: list[resource.Stored], entity: str | None
    ) -> bool:
        """An earlier cause of this quarantine already drained the node (fully, or this same GPU)."""
        held = {c.get("event") for c in quarantine.causes(node).values()}
        for other in others:
            drain = other.status.drain
            if other.name == stored.name or other.name not in held or drain is None or drain.state != "Succeeded":
                continue
            if drain.entity is None or drain.entity == entity:
                return True
        return False

    def _label(self, node: str, state: str) -> None:
        """Set the drain state, never over a remediation state: a redone drain must not rewind it."""

        def mutate(n: nodes.Node) -> bool:
            if nodes.labels(n).get(quarantine.STATE_LABEL, "").startswith("remediat"):
                return False
            return nodes.set_map(nodes.labels(n), {quarantine.STATE_LABEL: state})

        nodes.update(self.api, node, mutate)


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _go_list(items: list[str]) -> str:
    """A list as upstream's Go ``%v`` prints it, ``[a b]``, at most a few names."""
    return f"[{' '.join(items[:10])}{' ...' if len(items) > 10 else ''}]"


def _took(status: resource.DrainStatus, now: datetime) -> str:
    if not status.startedAt:
        return ""
    seconds = (now - _parse(status.startedAt)).total_seconds()
    return f" after {seconds:.0f}s" if seconds >= 1 else ""


def _settled(ev: hevent.HealthEvent, node: nodes.Node, current: resource.DrainStatus) -> resource.DrainStatus | None:
    """The status of a drain there is nothing to do for (finished, no longer quarantined, monitor
    mode, skipped by the event); None when the drain must act."""
    if current.state in TERMINAL:
        return current
    ended = quarantine.follow_up_ended(node, ev)
    if ended is not None:
        return current.model_copy(update=ended)
    if ev.drainOverrides is not None and ev.drainOverrides.skip:
        return current.model_copy(update={"state": "AlreadyDrained", "message": "drainOverrides.skip"})
    return None
