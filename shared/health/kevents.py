"""The Kubernetes Events nvsentinel's controllers record, for operators: components, reasons, messages.

What each step did to a node shows in ``kubectl describe node`` and ``kubectl get events``:
quarantine (``NodeQuarantined``, ``QuarantineSkipped``, ``NodeUnquarantined``), drain
(``DrainStarted``, ``PodEvicted`` on the node and ``Evicted`` on the pod for each eviction,
``EvictionBlocked`` while a PodDisruptionBudget holds one, upstream's waiting Events
``AwaitingPodCompletion`` and ``WaitingBeforeForceDelete``, ``DrainTimedOut`` and
``DeletedAfterTimeout`` on each pod when ``deleteAfterTimeoutMinutes`` passes, ``DrainFailed``,
``DrainCompleted``) and
remediation (``RemediationCreated``, ``RemediationSucceeded``, ``RemediationFailed``,
``RemediationAttemptsExhausted``). The validation lifecycle's reasons are in
``shared.lifecycle.reconcile``. Writing (references, naming, aggregation of repeats, best effort)
is ``shared.kube.events``; this module only holds the vocabulary, so the docs' table of reasons has
one source. Non-fatal health events keep upstream's own Event shape (``shared.health.conditions``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from shared.health import event as hevent
from shared.health import quarantine
from shared.kube import events

QUARANTINE = "nvsentinel-fault-quarantine"
DRAIN = "nvsentinel-node-drainer"
REMEDIATION = "nvsentinel-fault-remediation"

NODE_QUARANTINED = "NodeQuarantined"
QUARANTINE_SKIPPED = "QuarantineSkipped"
NODE_UNQUARANTINED = "NodeUnquarantined"
DRAIN_STARTED = "DrainStarted"
EVICTED = "Evicted"
AWAITING_COMPLETION = "AwaitingPodCompletion"
WAITING_FORCE_DELETE = "WaitingBeforeForceDelete"
DELETED_AFTER_TIMEOUT = "DeletedAfterTimeout"
DRAIN_FAILED = "DrainFailed"
POD_EVICTED = "PodEvicted"
EVICTION_BLOCKED = "EvictionBlocked"
DRAIN_TIMED_OUT = "DrainTimedOut"
DRAIN_COMPLETED = "DrainCompleted"
REMEDIATION_CREATED = "RemediationCreated"
REMEDIATION_SUCCEEDED = "RemediationSucceeded"
REMEDIATION_FAILED = "RemediationFailed"
ATTEMPTS_EXHAUSTED = "RemediationAttemptsExhausted"


def cause(ev: hevent.HealthEvent) -> str:
    """``GpuXidError (error 79, GPU_UUID GPU-1)``: the check and what it names, for a message."""
    details = [f"error {events.listing(ev.errorCode, most=3)}"] if ev.errorCode else []
    details += [f"{e.entityType} {e.entityValue}" for e in ev.entitiesImpacted[:3]]
    return f"{ev.checkName} ({', '.join(details)})" if details else ev.checkName


def rules(names: Iterable[str]) -> str:
    found = list(names)
    return f"rule set{'s' if len(found) > 1 else ''} {events.listing(found, most=3)}"


def applied(node: Mapping[str, Any]) -> str:
    """``cordoned, tainted k=v:NoSchedule``: what quarantine holds on the node, from its annotations."""
    anns = (node.get("metadata") or {}).get("annotations") or {}
    parts = ["cordoned"] if anns.get(quarantine.ANN_CORDONED) == "True" else []
    try:
        taints = json.loads(anns.get(quarantine.ANN_TAINTS) or "[]")
    except ValueError:
        taints = []
    shown = [
        f"{t['Key']}={t['Value']}:{t['Effect']}" if t.get("Value") else f"{t['Key']}:{t['Effect']}" for t in taints
    ]
    if shown:
        parts.append("tainted " + events.listing(shown, most=3))
    return ", ".join(parts) or "labelled"
