"""Remediation: a drained node's recommended action → a janitor object (research/nvsentinel.md §5).

After the drain, an event's ``recommendedAction`` picks a maintenance object from values
(``componentActions[componentClass][action]``, then ``actions[action]``): by default RESTART_VM /
RESTART_BM → ``RebootNode``, REPLACE_VM → ``TerminateNode``, a GPU's COMPONENT_RESET →
``GPUReset`` (``spec.gpuUUID``), all ``janitor.dgxc.nvidia.com/v1alpha1``, cluster-scoped. An
action with no mapping (CONTACT_SUPPORT, RUN_FIELDDIAG, …) is for people: the node is labelled
``remediation-failed``, annotated ``quarantine.ANN_ACTION`` (what, for which event, why) and an
Event says why; from then on no other remediation outcome rewrites the label (``_label``).
Progress is in the event's ``status.remediation``; the object is followed until its complete
condition (NodeReady, Complete) is True or False.

Two events for the same repair must not reboot a node twice: objects are deduplicated by
equivalence group (``restart``, ``reset-<GPU UUID>``), kept in the node annotation
``latestFaultRemediationState`` as upstream does; a group with an object in progress — or a
superseding group's (a reboot covers a GPU reset) — makes a later event follow that object instead
of creating one. Attempts per group are counted there too and capped by
``maxRemediationAttempts`` for the life of the quarantine (the annotation goes with it). The node
stays quarantined after a repair: releasing it is validation's job, or healthy events'.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from shared import errors, nodes
from shared.health import event as hevent
from shared.health import kevents, notify, quarantine, resource
from shared.health import settings as hsettings
from shared.kube import errors as kube_errors
from shared.kube import events as kube_events
from shared.kube import rest
from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)

COMPONENT = kevents.REMEDIATION
TERMINAL = frozenset({"Succeeded", "Failed", "Skipped", "Unsupported", "AttemptsExhausted", "Cancelled"})


def object_path(action: hsettings.MaintenanceAction, name: str | None = None) -> str:
    plural = action.kind.lower() + "s"
    namespace = action.namespace if action.scope == "Namespaced" else None
    return rest.group_path(action.apiGroup, action.version, plural, namespace, name)


def completion(obj: dict[str, Any], condition: str) -> bool | None:
    """True/False once the object's complete condition says so; None while it is in progress."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == condition and c.get("status") in ("True", "False"):
            return bool(c["status"] == "True")
    return None


def _state(node: nodes.Node) -> dict[str, Any]:
    text = ((node.get("metadata") or {}).get("annotations") or {}).get(quarantine.ANN_REMEDIATION)
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        data = {}
    data.setdefault("equivalenceGroups", {})
    data.setdefault("attempts", {})
    return data


class Remediator:
    """One remediation step for one drained event at a time."""

    def __init__(
        self,
        api: KubeApi,
        settings: hsettings.FaultRemediation,
        *,
        now: Callable[[], datetime],
        events: kube_events.Recorder | None = None,
        notifier: notify.Notifier = notify.NONE,
    ) -> None:
        self.api = api
        self.settings = settings
        self.now = now
        self.events = events or kube_events.Recorder(api, component=COMPONENT, now=now)
        self.notifier = notifier

    def resolve(self, ev: hevent.HealthEvent) -> hsettings.MaintenanceAction | None:
        name = ev.recommendedAction.name
        by_class = self.settings.maintenance.componentActions.get(ev.componentClass, {})
        return by_class.get(name) or self.settings.maintenance.actions.get(name)

    def step(self, stored: resource.Stored, node: nodes.Node) -> resource.RemediationStatus:
        ev = stored.event
        current = stored.status.remediation or resource.RemediationStatus()
        settled = self._settled(ev, current, node)
        if settled is not None:
            return settled
        action = self.resolve(ev)
        if action is None:
            return self._for_people(
                ev,
                current,
                "Unsupported",
                f"no automatic remediation for {ev.recommendedAction.name}: {ev.message}",
                node=node,
                event=stored.name,
            )
        if current.state == "InProgress" and current.object:
            return self._follow(ev, action, current, node)
        return self._start(ev, action, current, node, event=stored.name)

    # ------------------------------------------------------------ pieces
    def _settled(
        self, ev: hevent.HealthEvent, current: resource.RemediationStatus, node: nodes.Node
    ) -> resource.RemediationStatus | None:
        """The status when there is nothing to do: already over, released, monitor mode or NONE."""
        if current.state in TERMINAL:
            return current
        ended = quarantine.follow_up_ended(node, ev)
        if ended is not None:
            return current.model_copy(update=ended)
        if ev.recommendedAction == hevent.RecommendedAction.NONE:
            return current.model_copy(update={"state": "Skipped", "message": "recommendedAction NONE"})
        return None

    def _start(
        self,
        ev: hevent.HealthEvent,
        action: hsettings.MaintenanceAction,
        current: resource.RemediationStatus,
        node: nodes.Node,
        *,
        event: str,
    ) -> resource.RemediationStatus:
        """Create the object, unless its group (or a superseding one) has one in progress or ran out of attempts."""
        group, entity = action.equivalenceGroup, None
        if action.impactedEntityScope:
            entity = next(
                (e.entityValue for e in ev.entitiesImpacted if e.entityType == action.impactedEntityScope), None
            )
            if entity is None:
                return current.model_copy(
                    update={"state": "Failed", "message": f"no {action.impactedEntityScope} entity"}
                )
            group = f"{group}-{entity}"
        state = _state(node)
        following = self._deduplicated(state, [group, *action.supersedingEquivalenceGroups], current)
        if following is not None:
            return following
        limit = self.settings.maxRemediationAttempts
        if limit and state["attempts"].get(group, 0) >= limit:
            return self._for_people(
                ev,
                current,
                "AttemptsExhausted",
                f"{limit} remediation attempt(s) of group {group} did not clear the fault",
                node=node,
                reason=kevents.ATTEMPTS_EXHAUSTED,
                event=event,
            )
        name = self._create(ev, action, node, entity=entity)
        self._record(ev.nodeName, group, name, action)
        logger.info("created %s %s", action.kind, name, extra={"subject": ev.nodeName})
        self.events.normal(
            node,
            kevents.REMEDIATION_CREATED,
            f"{kevents.cause(ev)}: created {action.kind} {name} for {ev.recommendedAction.name} "
            f"(attempt {state['attempts'].get(group, 0) + 1}{f' of {limit}' if limit else ''})",
        )
        return current.model_copy(
            update={"state": "InProgress", "kind": action.kind, "object": name, "group": group, "message": ""}
        )

    def _deduplicated(
        self, state: dict[str, Any], groups: list[str], current: resource.RemediationStatus
    ) -> resource.RemediationStatus | None:
        """Following the first of ``groups`` with an object in progress; None when none has one."""
        for candidate in groups:
            entry = state["equivalenceGroups"].get(candidate)
            if entry and self._in_progress(entry):
                return current.model_copy(
                    update={
                        "state": "InProgress",
                        "object": entry["maintenanceCR"],
                        "kind": entry["kind"],
                        "group": candidate,
                        "message": f"deduplicated: follows {entry['maintenanceCR']}",
                    }
                )
        return None

    def _in_progress(self, entry: dict[str, Any]) -> bool:
        action = hsettings.MaintenanceAction(
            apiGroup=entry["apiGroup"],
            version=entry["version"],
            kind=entry["kind"],
            completeConditionType=entry["completeConditionType"],
            equivalenceGroup="",
            scope=entry.get("scope", "Cluster"),
            namespace=entry.get("namespace", ""),
        )
        try:
            obj = rest.get(self.api, object_path(action, entry["maintenanceCR"]))
        except errors.NotFound:
            return False
        return completion(obj, action.completeConditionType) is None

    def _follow(
        self,
        ev: hevent.HealthEvent,
        action: hsettings.MaintenanceAction,
        current: resource.RemediationStatus,
        node: nodes.Node,
    ) -> resource.RemediationStatus:
        assert current.object is not None
        if current.kind and current.kind != action.kind:  # deduplicated onto another group's object
            action = self._action_by_kind(current.kind) or action
        try:
            obj = rest.get(self.api, object_path(action, current.object))
        except errors.NotFound:
            message = f"{current.object} was deleted"
            said = f"{kevents.cause(ev)}: {action.kind} {message}"
            self.events.warning(node, kevents.REMEDIATION_FAILED, said)
            self._notify_failed(ev, said, kind=action.kind, object=current.object)
            return current.model_copy(update={"state": "Failed", "message": message})
        done = completion(obj, action.completeConditionType)
        if done is None:
            return current
        self._label(
            ev.nodeName, quarantine.STATE_REMEDIATION_SUCCEEDED if done else quarantine.STATE_REMEDIATION_FAILED
        )
        message = next(
            (
                c.get("message", "")
                for c in (obj.get("status") or {}).get("conditions") or []
                if c.get("type") == action.completeConditionType
            ),
            "",
        )
        said = f"{kevents.cause(ev)}: {action.kind} {current.object} {'completed' if done else 'failed'}"
        said += f": {message}" if message else ""
        if done:
            self.events.normal(node, kevents.REMEDIATION_SUCCEEDED, said)
        else:
            self.events.warning(node, kevents.REMEDIATION_FAILED, said)
            self._notify_failed(ev, said, kind=action.kind, object=current.object)
        return current.model_copy(update={"state": "Succeeded" if done else "Failed", "message": message})

    def _notify_failed(self, ev: hevent.HealthEvent, said: str, **facts: Any) -> None:
        """A failed repair needs a person: CONTACT_SUPPORT faults as such, every other as a failed remediation."""
        outcome = (
            notify.CONTACT_SUPPORT
            if ev.recommendedAction == hevent.RecommendedAction.CONTACT_SUPPORT
            else notify.REMEDIATION_FAILED
        )
        self.notifier.notify(
            outcome,
            ev.nodeName,
            said,
            checkName=ev.checkName,
            recommendedAction=ev.recommendedAction.name,
            **facts,
        )

    def _action_by_kind(self, kind: str) -> hsettings.MaintenanceAction | None:
        everything = [
            *self.settings.maintenance.actions.values(),
            *(a for by in self.settings.maintenance.componentActions.values() for a in by.values()),
        ]
        return next((a for a in everything if a.kind == kind), None)

    def _create(
        self, ev: hevent.HealthEvent, action: hsettings.MaintenanceAction, node: nodes.Node, *, entity: str | None
    ) -> str:
        suffix = re.sub(r"[^a-z0-9-]", "-", (ev.id or ev.dedupe_key()).lower())[:20]
        name = f"maintenance-{ev.nodeName}-{suffix}"[:253]
        spec: dict[str, Any] = {"nodeName": ev.nodeName}
        if entity is not None and action.impactedEntityScope == hevent.EntityType.GPU_UUID:
            spec["gpuUUID"] = entity
        meta = node.get("metadata") or {}
        body = {
            "apiVersion": f"{action.apiGroup}/{action.version}",
            "kind": action.kind,
            "metadata": {
                "name": name,
                "labels": {"app.kubernetes.io/managed-by": "nvsentinel"},
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": meta.get("name"), "uid": meta.get("uid", "")}
                ],
            },
            "spec": spec,
        }
        with contextlib.suppress(kube_errors.AlreadyExists):  # created before a restart: the same object
            rest.create(self.api, object_path(action), body, what=f"{action.kind} {name}")
        return name

    def _record(self, node_name: str, group: str, name: str, action: hsettings.MaintenanceAction) -> None:
        stamp = hevent.format_time(self.now())

        def mutate(node: nodes.Node) -> bool:
            state = _state(node)
            if (state["equivalenceGroups"].get(group) or {}).get("maintenanceCR") == name:
                return False
            state["equivalenceGroups"][group] = {
                "maintenanceCR": name,
                "createdAt": stamp,
                "kind": action.kind,
                "apiGroup": action.apiGroup,
                "version": action.version,
                "scope": action.scope,
                "namespace": action.namespace,
                "completeConditionType": action.completeConditionType,
            }
            state["attempts"][group] = state["attempts"].get(group, 0) + 1
            nodes.set_map(nodes.node_annotations(node), {quarantine.ANN_REMEDIATION: json.dumps(state, sort_keys=True)})
            nodes.labels(node)[quarantine.STATE_LABEL] = "remediating"
            return True

        nodes.update(self.api, node_name, mutate)

    def _for_people(
        self,
        ev: hevent.HealthEvent,
        current: resource.RemediationStatus,
        state: str,
        message: str,
        *,
        node: nodes.Node,
        event: str,
        reason: str = kevents.REMEDIATION_FAILED,
    ) -> resource.RemediationStatus:
        self._needs_person(ev, event, message)
        self.events.warning(node, reason, message)
        self._notify_failed(ev, f"{kevents.cause(ev)}: {message}", state=state)
        logger.warning("%s", message, extra={"subject": ev.nodeName})
        return current.model_copy(update={"state": state, "message": message})

    def _label(self, node: str, state: str) -> None:
        """Write the state label, never over a node that waits for a person (``quarantine.ANN_ACTION``):
        an older repair finishing after a CONTACT_SUPPORT outcome must not make the node look repaired."""

        def mutate(n: nodes.Node) -> bool:
            if quarantine.ANN_ACTION in nodes.node_annotations(n):
                return False
            return nodes.set_map(nodes.labels(n), {quarantine.STATE_LABEL: state})

        nodes.update(self.api, node, mutate)

    def _needs_person(self, ev: hevent.HealthEvent, stored: str, message: str) -> None:
        """Label ``remediation-failed`` and say in ``quarantine.ANN_ACTION`` what a person must do,
        in one write; it stays until the quarantine is lifted (it is one of quarantine's annotations)."""
        said = json.dumps(
            {
                "action": ev.recommendedAction.name,
                "event": stored,
                "reason": message,
                "at": hevent.format_time(self.now()),
            },
            sort_keys=True,
        )

        def mutate(n: nodes.Node) -> bool:
            if not quarantine.is_quarantined(n):
                return False  # released meanwhile: nothing is held, nobody needs to be asked
            changed = nodes.set_map(nodes.node_annotations(n), {quarantine.ANN_ACTION: said})
            return (
                nodes.set_map(nodes.labels(n), {quarantine.STATE_LABEL: quarantine.STATE_REMEDIATION_FAILED}) or changed
            )

        nodes.update(self.api, ev.nodeName, mutate)
