"""A repaired node's way back: what quarantine hands to validation, and what a pass undoes.

When quarantine hands a repaired node over (``triggers.post_remediation``), the same node write
records in ``RECORD`` (``nvsentinel.nvidia.com/repaired-fault``) what the repair was for: the
HealthEvents that held the node, the fault conditions the platform connector had raised for them
(type → message), the label prefix of quarantine's ``cordon-by`` labels, and when. Validation then
holds the cordon and the taints quarantine set (``nodes.TAINT_OWNERS`` names ``validation`` as
their owner), and its test workload tolerates exactly those (``tolerated``) — a taint someone else
put on the node still keeps the test off it, as the scheduler would.

When a pass lifts the gate, the node is back in service and every sign says so: the recorded
conditions still saying what they said at the hand-over are set False (reason ``ValidationPassed``,
the request named; ``clear_conditions``, written before the gate is lifted, so a controller killed
in between clears them again on its next pass and the conditions never lag behind a schedulable
node), then in the node write that uncordons it the ``cordon-*`` labels go, ``uncordon-by`` says
NVSentinel lifted it, the state label goes and the record is dropped (``returned``). A failed
request keeps all of it: the node stays cordoned, tainted and its conditions True.
"""

from __future__ import annotations

import json
from typing import Any

from shared import nodes
from shared.health import conditions, quarantine
from shared.kube.api import KubeApi
from shared.lifecycle import sessions

RECORD = "nvsentinel.nvidia.com/repaired-fault"


def read(node: nodes.Node) -> dict[str, Any] | None:
    """The node's hand-over record, or None (none, or not JSON: nothing to undo)."""
    text = ((node.get("metadata") or {}).get("annotations") or {}).get(RECORD)
    try:
        found = json.loads(text) if text else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def record(node: nodes.Node, *, events: list[str], checks: set[str], label_prefix: str, stamp: str) -> bool:
    """Write the hand-over record: the fault conditions raised now whose type is one of ``checks``
    (the repaired events' and their kin's check names). A record left by an earlier hand-over whose
    validation failed is merged into, so a second repair of the node clears the first one's
    conditions too. True when anything changed (a redone hand-over changes nothing)."""
    raised = conditions.raised(list((node.get("status") or {}).get("conditions") or []))
    before = read(node) or {}
    kept = {str(k): str(v) for k, v in (before.get("conditions") or {}).items()}
    body = {
        "at": before.get("at") or stamp,
        "events": sorted({*before.get("events", []), *events}),
        "labelPrefix": label_prefix,
        "conditions": dict(sorted({**kept, **{k: v for k, v in raised.items() if k in checks}}.items())),
    }
    return nodes.set_map(nodes.node_annotations(node), {RECORD: json.dumps(body, sort_keys=True)})


def tolerated(node: nodes.Node) -> list[tuple[str, str, str]]:
    """The taints on ``node`` that validation holds — the gate's and those quarantine handed over —
    as (key, value, effect); the only ones its test workload may tolerate."""
    owners = nodes.taint_owners(node)
    found = []
    for t in (node.get("spec") or {}).get("taints") or []:
        key, value, effect = str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", ""))
        if owners.get(f"{key}={value}:{effect}") == sessions.OWNER:
            found.append((key, value, effect))
    return sorted(set(found))


def clear_conditions(api: KubeApi, name: str, *, request: str, stamp: str) -> list[str]:
    """Set the recorded fault conditions of node ``name`` False for passed request ``request``;
    the types set False (none when there is no record or nothing is left to clear)."""
    cleared: list[str] = []

    def mutate(node: nodes.Node) -> bool:
        found = read(node)
        if found is None or not found.get("conditions"):
            return False
        status = node.setdefault("status", {})
        current = status.get("conditions") or []
        status["conditions"] = current
        cleared[:] = conditions.clear(
            current,
            {str(k): str(v) for k, v in found["conditions"].items()},
            reason=conditions.CLEARED_BY_VALIDATION,
            message=f"ValidationRequest {request} passed after the repair; was: {_first(found['conditions'])}",
            stamp=stamp,
        )
        return bool(cleared)

    nodes.update(api, name, mutate, status=True)
    return cleared


def _first(recorded: dict[str, Any]) -> str:
    return "; ".join(f"{k}: {str(v).rstrip(';')}" for k, v in sorted(recorded.items()))[:400]


def returned(node: nodes.Node, *, stamp: str) -> bool:
    """Inside the write that lifted the gate: once the node is schedulable, the labels say so and the
    record goes. True when anything changed.

    A cordon a person set (one no component owns) outlives the gate: NVSentinel's part is over all
    the same, so its state label, its ``cordon-*`` labels and the record go, but no ``uncordon-by``
    is written (nobody uncordoned the node). Left in place they said ``remediation-succeeded`` for
    good, and the next healthy event would wait for a validation that had already passed."""
    found = read(node)
    if found is None:
        return False
    quarantined_again = quarantine.ANN_CAUSES in nodes.node_annotations(node)
    held_by_person = nodes.is_cordoned(node) and nodes.cordon_owner(node) is None and not quarantined_again
    if nodes.is_cordoned(node) and not held_by_person:
        return False  # another component's cordon, or a new quarantine's: it says why, and lifts it
    labels = nodes.labels(node)
    prefix = str(found.get("labelPrefix") or "")
    if held_by_person:
        changed = nodes.set_map(labels, {f"{prefix}{k}": None for k in quarantine.CORDON_LABELS}) if prefix else False
    else:
        changed = quarantine.returned_labels(labels, label_prefix=prefix, stamp=stamp) if prefix else False
    if quarantine.ANN_CAUSES not in nodes.node_annotations(node):  # not quarantined again meanwhile
        changed = nodes.set_map(labels, {quarantine.STATE_LABEL: None}) or changed
    return nodes.set_map(nodes.node_annotations(node), {RECORD: None}) or changed
