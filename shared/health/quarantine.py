"""What one HealthEvent does to one Node: the fault-quarantine step, on a node dict.

The same function runs live (inside ``shared.nodes.update``'s read-modify-write, so a 409 simply
runs it again on the fresh node) and in ``rules replay`` (on in-memory nodes), which is why replay
decides as the live run does. Ownership is kept on the node, in upstream's annotation names plus
one of ours:

- ``quarantineHealthEvent``: the unhealthy events that hold the node (JSON array);
- ``quarantineHealthEventAppliedTaints`` / ``…AppliedLabels``: what we added, with ``preExisting``;
- ``quarantineHealthEventIsCordoned`` / ``…CordonPreExisting``;
- ``nvsentinel.nvidia.com/quarantine-causes``: per cause (agent, class, check, entity, code) who
  set it, which rule sets and when.

A healthy event removes exactly the causes it names (entity-level, research §3.6); when none is
left, everything we added — and only that — is removed. An unhealthy event on an already
quarantined node adds its own taints and labels too (upstream issue #1439). With the validation
hand-off on (``fault-quarantine.validation.enabled``), a healthy event that clears the last cause of
a node nvsentinel is repairing marks the causes ``cleared`` instead: the lifecycle hands the
repaired node to validation, which decides its return. Monitor mode (dry
run) records annotations but never cordons, taints or labels; such a record is not retroactively
enforced when enforcement is switched on — the next unhealthy event for the node enforces it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from shared import nodes
from shared.health import event as hevent
from shared.health import ruleset

ANN_EVENTS = "quarantineHealthEvent"
ANN_TAINTS = "quarantineHealthEventAppliedTaints"
ANN_LABELS = "quarantineHealthEventAppliedLabels"
ANN_CORDONED = "quarantineHealthEventIsCordoned"
ANN_CORDON_PRE = "quarantineHealthEventCordonPreExisting"
ANN_CAUSES = "nvsentinel.nvidia.com/quarantine-causes"
STATE_LABEL = "dgxc.nvidia.com/nvsentinel-state"
OWNER = "NVSentinel"
CORDON_OWNER = "fault-quarantine"
"""Our name in ``shared.nodes.CORDON_OWNER`` on a cordon quarantine set."""
ANN_REMEDIATION = "latestFaultRemediationState"
ANN_ACTION = "nvsentinel.nvidia.com/action-required"
"""Set while a person must act (a CONTACT_SUPPORT outcome, remediation attempts exhausted): what, and
why. It outranks every automatic state: the state label stays ``remediation-failed`` until the
quarantine is lifted, whatever an older repair reports afterwards."""
OWNED_ANNOTATIONS = (
    ANN_EVENTS,
    ANN_TAINTS,
    ANN_LABELS,
    ANN_CORDONED,
    ANN_CORDON_PRE,
    ANN_CAUSES,
    ANN_REMEDIATION,
    ANN_ACTION,
)
STATE_QUARANTINED = "quarantined"
STATE_REMEDIATION_SUCCEEDED = "remediation-succeeded"
STATE_REMEDIATION_FAILED = "remediation-failed"


class Breaker(Protocol):
    def allow(self, node: str) -> bool: ...


class Unlimited:
    """No circuit breaker (disabled)."""

    def allow(self, node: str) -> bool:
        return True


@dataclass
class Outcome:
    phase: str
    rule_sets: list[str] = field(default_factory=list)
    message: str = ""
    changed: bool = False


def cause_keys(ev: hevent.HealthEvent) -> list[str]:
    """One key per (entity × error code); check-level keys when either list is empty."""
    entities = [f"{e.entityType}:{e.entityValue}" for e in ev.entitiesImpacted] or [""]
    codes = ev.errorCode or [""]
    base = f"{ev.agent}|{ev.componentClass}|{ev.checkName}|{ev.version}"
    return [f"{base}|{entity}|{code}" for entity in entities for code in codes]


def _clears(ev: hevent.HealthEvent, key: str) -> bool:
    agent, component, check, version, entity, code = key.split("|", 5)
    if (agent, component, check, version) != (ev.agent, ev.componentClass, ev.checkName, str(ev.version)):
        return False
    if ev.entitiesImpacted and entity not in {f"{e.entityType}:{e.entityValue}" for e in ev.entitiesImpacted}:
        return False
    return not ev.errorCode or code in ev.errorCode


def _json(anns: dict[str, str], key: str, default: Any) -> Any:
    try:
        return json.loads(anns[key]) if key in anns else default
    except ValueError:
        return default


def causes(node: nodes.Node) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = _json((node.get("metadata") or {}).get("annotations") or {}, ANN_CAUSES, {})
    return found


def is_quarantined(node: nodes.Node) -> bool:
    return bool(causes(node))


def awaiting_repair(node: nodes.Node) -> bool:
    """nvsentinel started a repair of the node (its state label says remediating or succeeded), so
    with the validation hand-off on, a healthy event must not return it before validation."""
    state = ((node.get("metadata") or {}).get("labels") or {}).get(STATE_LABEL, "")
    return state in ("remediating", STATE_REMEDIATION_SUCCEEDED)


def is_enforced(node: nodes.Node, ev: hevent.HealthEvent | None = None) -> bool:
    """Whether quarantine acted (cordon, taints) for the node — for ``ev``'s causes when given.

    A cause recorded in monitor mode stays a record after a switch to enforcing, so drain and
    remediation, which follow only enforced causes, never act on a node nobody cordoned."""
    current = causes(node)
    keys = cause_keys(ev) if ev is not None else list(current)
    return any(current[k].get("enforced") for k in keys if k in current)


def follow_up_ended(node: nodes.Node, ev: hevent.HealthEvent) -> dict[str, str] | None:
    """Why drain and remediation have nothing to do for ``ev`` on ``node`` (the ``state`` and
    ``message`` their status records), or None while quarantine holds the node and enforces ``ev``."""
    if not is_quarantined(node):
        return {"state": "Cancelled", "message": "node no longer quarantined"}
    if not is_enforced(node, ev):
        return {"state": "Skipped", "message": "recorded in monitor mode, not enforced"}
    return None


class Quarantiner:
    """Applies events to nodes under one configuration."""

    def __init__(
        self,
        *,
        engine: ruleset.Engine,
        dry_run: bool,
        label_prefix: str,
        skip_labels: list[tuple[str, str]],
        breaker: Breaker,
        now: Callable[[], datetime],
        hand_off: bool = False,
    ) -> None:
        self.engine = engine
        self.hand_off = hand_off
        self.dry_run = dry_run
        self.prefix = label_prefix
        self.skip_labels = skip_labels
        self.breaker = breaker
        self.now = now

    def apply(
        self,
        node: nodes.Node,
        ev: hevent.HealthEvent,
        ev_cel: Any,
        *,
        event_name: str = "",
        breaker: Breaker | None = None,
    ) -> Outcome:
        """Change ``node`` in place for ``ev``; ``Outcome.changed`` says whether to write it.

        ``breaker`` replaces the configured one for this call: the controller passes one that
        remembers the slot it reserved, to release it if the node write does not happen."""
        if nodes.opted_out(node, self.skip_labels):
            return Outcome("Skipped", message="node opted out of NVSentinel management")
        if ev.processingStrategy in (hevent.ProcessingStrategy.STORE_ONLY, hevent.ProcessingStrategy.STORE_AND_ANALYSE):
            return Outcome("StoreOnly")
        if ev.isHealthy:
            return self._recover(node, ev)
        decision = self.engine.decide(ev_cel, node)
        force = ev.quarantineOverrides is not None and ev.quarantineOverrides.force
        if force:
            decision.cordon = True
            decision.matched = decision.matched or [f"{ev.agent}-{ev.metadata.get('creator_id', 'force')}"]
        if not decision.matched:
            msg = "; ".join(decision.errors)
            return Outcome("NotMatched", message=msg)
        return self._quarantine(
            node, ev, decision, event_name=event_name, counted=not force, breaker=breaker or self.breaker
        )

    # ------------------------------------------------------------ unhealthy
    def _quarantine(
        self,
        node: nodes.Node,
        ev: hevent.HealthEvent,
        decision: ruleset.Decision,
        *,
        event_name: str,
        counted: bool,
        breaker: Breaker,
    ) -> Outcome:
        name = node["metadata"]["name"]
        anns = nodes.node_annotations(node)
        current = causes(node)
        already = bool(current)
        acting = not self.dry_run and decision.acts
        # a node recorded only in monitor mode is not held yet: enforcing it counts against the breaker
        held = any(c.get("enforced") for c in current.values())
        if not held and acting and counted and not breaker.allow(name):
            return Outcome("Blocked", decision.matched, "circuit breaker is TRIPPED")
        stamp = hevent.format_time(self.now())
        changed = False
        for key in cause_keys(ev):
            if key not in current or current[key].get("cleared"):
                current[key] = {
                    "by": OWNER,
                    "ruleSets": decision.matched,
                    "at": stamp,
                    "event": event_name,
                    "action": ev.recommendedAction.name,
                    "enforced": acting,
                }
                changed = True
        if acting and not held:
            # the first enforced event also enforces what monitor mode recorded: one cordon covers all
            for entry in current.values():
                changed = changed or not entry.get("enforced")
                entry["enforced"] = True
        if not changed:
            # every cause already names this event: its own write was stored (a retry after a lost
            # answer, a pass redone after a crash), so the outcome is the one it had
            own = all((current.get(key) or {}).get("event") == event_name for key in cause_keys(ev))
            return Outcome("Quarantined" if own and held == acting else "AlreadyQuarantined", decision.matched)
        events = _json(anns, ANN_EVENTS, [])
        events.append(ev.wire())
        updates: dict[str, str | None] = {
            ANN_CAUSES: json.dumps(current, sort_keys=True),
            ANN_EVENTS: json.dumps(events, sort_keys=True),
        }
        if acting:
            updates.update(self._enforce(node, decision, stamp))
        nodes.set_map(anns, updates)
        first = not already or (acting and not held)
        return Outcome("Quarantined" if first else "AlreadyQuarantined", decision.matched, changed=True)

    def _enforce(self, node: nodes.Node, decision: ruleset.Decision, stamp: str) -> dict[str, str | None]:
        anns = nodes.node_annotations(node)
        updates: dict[str, str | None] = {}
        if decision.cordon and anns.get(ANN_CORDONED) != "True":
            pre = nodes.cordon(node)
            updates[ANN_CORDONED] = "True"
            if pre:
                updates[ANN_CORDON_PRE] = "True"
            else:
                updates[nodes.CORDON_OWNER] = CORDON_OWNER
                nodes.set_map(
                    nodes.labels(node),
                    {
                        f"{self.prefix}cordon-by": OWNER,
                        f"{self.prefix}cordon-reason": ruleset.reason_value(decision.matched),
                        f"{self.prefix}cordon-timestamp": stamp.replace(":", "-")[:19] + "Z",
                        f"{self.prefix}uncordon-by": None,
                        f"{self.prefix}uncordon-timestamp": None,
                    },
                )
        applied = _json(anns, ANN_TAINTS, [])
        for t in decision.taints:
            if any(a["Key"] == t.key and a["Value"] == t.value and a["Effect"] == t.effect for a in applied):
                continue
            pre = nodes.add_taint(node, t.key, t.value, t.effect, added=stamp)
            applied.append({"Key": t.key, "Value": t.value, "Effect": t.effect, "preExisting": pre})
        if applied:
            updates[ANN_TAINTS] = json.dumps(applied, sort_keys=True)
        owned_labels = _json(anns, ANN_LABELS, [])
        node_labels = nodes.labels(node)
        for key, value in decision.labels.items():
            entry = next((e for e in owned_labels if e["key"] == key), None)
            if entry is None:
                owned_labels.append({"key": key, "value": value, "preExisting": key in node_labels})
            else:
                entry["value"] = value
            node_labels[key] = value
        if owned_labels:
            updates[ANN_LABELS] = json.dumps(owned_labels, sort_keys=True)
        if ANN_ACTION not in anns:  # a node waiting for a person says so until the quarantine ends
            node_labels[STATE_LABEL] = STATE_QUARANTINED
        return updates

    # ------------------------------------------------------------ healthy
    def _recover(self, node: nodes.Node, ev: hevent.HealthEvent) -> Outcome:
        current = causes(node)
        gone = [k for k in current if _clears(ev, k)]
        if not gone:
            return Outcome("NoMatch")
        anns = nodes.node_annotations(node)
        remaining = [k for k in current if k not in gone and not current[k].get("cleared")]
        if self.hand_off and awaiting_repair(node) and not remaining:
            # the last fault cleared while nvsentinel repairs the node: validation, not a healthy
            # event, decides when it returns (``fault-quarantine.validation.enabled``)
            fresh = [k for k in gone if not current[k].get("cleared")]
            if not fresh:
                return Outcome("AwaitingValidation")
            for key in fresh:
                current[key]["cleared"] = hevent.format_time(self.now())
            nodes.set_map(anns, {ANN_CAUSES: json.dumps(current, sort_keys=True)})
            return Outcome("AwaitingValidation", message="repaired: validation decides its return", changed=True)
        for key in [*gone, *(k for k in current if current[k].get("cleared"))]:
            current.pop(key, None)
        if current:
            events = [
                e
                for e in _json(anns, ANN_EVENTS, [])
                if any(k in current for k in cause_keys(hevent.HealthEvent.model_validate(e)))
            ]
            nodes.set_map(
                anns, {ANN_CAUSES: json.dumps(current, sort_keys=True), ANN_EVENTS: json.dumps(events, sort_keys=True)}
            )
            return Outcome("Recovered", message=f"{len(current)} cause(s) left", changed=True)
        release(node, label_prefix=self.prefix, stamp=hevent.format_time(self.now()))
        return Outcome("UnQuarantined", changed=True)


def release(node: nodes.Node, *, label_prefix: str, stamp: str, handing_over: bool = False) -> bool:
    """Undo everything nvsentinel owns on the node and nothing else; True when anything changed.

    ``handing_over``: the cordon and taints now belong to validation and stay, so the cordon labels
    and the state label stay too (they still tell the truth) and no ``uncordon-by`` is written: the
    lifecycle writes it when a pass actually uncordons the node (``shared.lifecycle.repaired``)."""
    anns = nodes.node_annotations(node)
    if not any(k in anns for k in OWNED_ANNOTATIONS):
        return False
    for t in _json(anns, ANN_TAINTS, []):
        if not t.get("preExisting"):
            nodes.remove_taint(node, t["Key"], t["Value"], t["Effect"])
    if (
        anns.get(ANN_CORDONED) == "True"
        and anns.get(ANN_CORDON_PRE) != "True"
        and anns.get(nodes.CORDON_OWNER) in (None, CORDON_OWNER)
    ):  # handed over: no longer ours
        nodes.uncordon(node)
        anns.pop(nodes.CORDON_OWNER, None)
    node_labels = nodes.labels(node)
    for entry in _json(anns, ANN_LABELS, []):
        if not entry.get("preExisting"):
            node_labels.pop(entry["key"], None)
    if not handing_over:
        nodes.set_map(node_labels, {STATE_LABEL: None})
    if not handing_over and not nodes.is_cordoned(node):
        returned_labels(node_labels, label_prefix=label_prefix, stamp=stamp)
    nodes.set_map(anns, dict.fromkeys(OWNED_ANNOTATIONS))
    return True


CORDON_LABELS = ("cordon-by", "cordon-reason", "cordon-timestamp")
"""The labels (after the label prefix) that say nvsentinel cordoned a node, and why."""


def returned_labels(node_labels: dict[str, str], *, label_prefix: str, stamp: str) -> bool:
    """The node is schedulable again: the ``cordon-*`` labels nvsentinel wrote go and ``uncordon-by``
    says who lifted the cordon. Only call it once the node is really uncordoned: a cordon another
    owner still holds (validation's after a hand-over) keeps the labels that say why. True when
    anything changed."""
    had_cordon_labels = node_labels.get(f"{label_prefix}cordon-by") == OWNER
    changed = nodes.set_map(node_labels, {f"{label_prefix}{k}": None for k in CORDON_LABELS})
    if had_cordon_labels:
        changed = (
            nodes.set_map(
                node_labels,
                {
                    f"{label_prefix}uncordon-by": OWNER,
                    f"{label_prefix}uncordon-timestamp": stamp.replace(":", "-")[:19] + "Z",
                },
            )
            or changed
        )
    return changed


def hand_over(node: nodes.Node, *, to: str, label_prefix: str, stamp: str) -> bool:
    """Give the cordon and the taints quarantine added to ``to`` (validation), then release the rest.

    The node stays cordoned and tainted, now on ``to``'s account, so it never carries two cordons and
    quarantine's release no longer lifts what validation holds. True when anything changed."""
    anns = nodes.node_annotations(node)
    if not any(k in anns for k in OWNED_ANNOTATIONS):
        return False
    if (
        anns.get(ANN_CORDONED) == "True"
        and anns.get(ANN_CORDON_PRE) != "True"
        and nodes.is_cordoned(node)
        and anns.get(nodes.CORDON_OWNER) in (None, CORDON_OWNER)
    ):
        anns[nodes.CORDON_OWNER] = to
    applied = _json(anns, ANN_TAINTS, [])
    for t in applied:
        if not t.get("preExisting") and nodes.has_taint(node, t["Key"], t["Value"], t["Effect"]):
            nodes.give_taint(node, t["Key"], t["Value"], t["Effect"], to)
            t["preExisting"] = True  # no longer quarantine's to remove
    if applied:
        anns[ANN_TAINTS] = json.dumps(applied, sort_keys=True)
    return release(node, label_prefix=label_prefix, stamp=stamp, handing_over=True)
