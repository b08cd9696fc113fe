"""Node conditions and Kubernetes Events from HealthEvents, as upstream's platform connector
writes them (research/nvsentinel.md §2.4, the code's format, not the docs').

Fatal or healthy events update the condition whose type is the checkName: one message line per
unhealthy (codes, entities, message, action), lines removed by healthy events naming their
entities (all lines when a healthy event names none); status True with reason
``<check>IsNotHealthy`` while lines remain, else False, ``<check>IsHealthy``, "No Health Failures".
Non-fatal unhealthy events become core/v1 Events in ``default`` instead. STORE_ONLY events produce
neither. A repaired node that passes its post-repair validation has the fault conditions recorded
at the hand-over set False with reason ``ValidationPassed`` (``clear``; the lifecycle calls it), so
alerts on node conditions stop once the node is back in service. The condition merge is a pure
function; writing goes through ``shared.nodes.update`` on the status subresource, so concurrent
writers never lose a line.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from shared import nodes
from shared.health import event as hevent
from shared.kube import errors as kube_errors
from shared.kube import rest
from shared.kube.api import KubeApi

HEALTHY_MESSAGE = "No Health Failures"
MAX_MESSAGE = 1024


def line(ev: hevent.HealthEvent) -> str:
    text = "".join(f"ErrorCode:{c} " for c in ev.errorCode)
    text += "".join(f"{e.entityType}:{e.entityValue} " for e in ev.entitiesImpacted)
    return f"{text}{ev.message} Recommended Action={ev.recommendedAction.name}"


def wants_condition(ev: hevent.HealthEvent) -> bool:
    return (ev.isFatal or ev.isHealthy) and ev.processingStrategy != hevent.ProcessingStrategy.STORE_ONLY


def merge(conditions: list[dict[str, Any]], ev: hevent.HealthEvent, stamp: str) -> bool:
    """Fold one event into the node's conditions in place; True when anything changed."""
    current = next((c for c in conditions if c.get("type") == ev.checkName), None)
    # a False condition's message is no list of faults (No Health Failures, or why it was cleared:
    # ``clear``), so a new fault starts a fresh list
    message = ((current or {}).get("message") or "") if (current or {}).get("status") == "True" else ""
    lines = [x for x in message.split(";") if x and x != HEALTHY_MESSAGE]
    if ev.isHealthy:
        if ev.entitiesImpacted:
            marks = [f"{e.entityType}:{e.entityValue} " for e in ev.entitiesImpacted]
            lines = [x for x in lines if not any(m in x + " " for m in marks)]
        else:
            lines = []
    elif line(ev) not in lines:
        lines.append(line(ev))
    status = "True" if lines else "False"
    wanted = {
        "type": ev.checkName,
        "status": status,
        "reason": f"{ev.checkName}IsNotHealthy" if lines else f"{ev.checkName}IsHealthy",
        "message": (";".join(lines) + ";")[:MAX_MESSAGE] if lines else HEALTHY_MESSAGE,
    }
    if current is None:
        conditions.append({**wanted, "lastHeartbeatTime": stamp, "lastTransitionTime": stamp})
        return True
    if all(current.get(k) == v for k, v in wanted.items()):
        return False
    if current.get("status") != status:
        current["lastTransitionTime"] = stamp
    current.update(wanted)
    current["lastHeartbeatTime"] = stamp
    return True


CLEARED_BY_VALIDATION = "ValidationPassed"
"""The reason of a fault condition a passed post-repair validation set False (``clear``)."""


def clear(
    conditions: list[dict[str, Any]], types: dict[str, str], *, reason: str, message: str, stamp: str
) -> list[str]:
    """Set False, in place, each condition of ``types`` (type → the message it had when recorded) that
    still says what it said then; a condition a fault raised or changed since stays as it is, since
    nothing has vouched for that fault. Returns the types set False, sorted."""
    cleared = []
    for c in conditions:
        kind = str(c.get("type", ""))
        if kind not in types or c.get("status") != "True" or c.get("message", "") != types[kind]:
            continue
        c.update(status="False", reason=reason, message=message[:MAX_MESSAGE], lastTransitionTime=stamp)
        c["lastHeartbeatTime"] = stamp
        cleared.append(kind)
    return sorted(cleared)


def raised(conditions: list[dict[str, Any]]) -> dict[str, str]:
    """The fault conditions the platform connector holds True now (``merge``'s reason), type → message."""
    return {
        str(c["type"]): str(c.get("message", ""))
        for c in conditions
        if c.get("status") == "True" and str(c.get("reason", "")) == f"{c.get('type')}IsNotHealthy"
    }


def publish_condition(api: KubeApi, ev: hevent.HealthEvent, *, now: datetime) -> None:
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")

    def mutate(node: nodes.Node) -> bool:
        status = node.setdefault("status", {})
        conditions = status.setdefault("conditions", []) or []
        status["conditions"] = conditions
        return merge(conditions, ev, stamp)

    nodes.update(api, ev.nodeName, mutate, status=True)


def publish_event(api: KubeApi, ev: hevent.HealthEvent, *, now: datetime) -> None:
    """A core/v1 Event for a non-fatal unhealthy event (type = checkName, as upstream)."""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    name = f"{ev.nodeName}.{ev.dedupe_key()[:16]}"
    body = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": ev.nodeName, "uid": ev.nodeName},
        "type": ev.checkName,
        "reason": f"{ev.checkName}IsNotHealthy",
        "message": line(ev) + ";",
        "source": {"component": ev.agent, "host": ev.nodeName},
        "reportingComponent": ev.agent,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
    try:
        rest.create(api, rest.core_path("events", "default"), body, what=f"event {name}")
    except kube_errors.AlreadyExists:
        return


def record(api: KubeApi, ev: hevent.HealthEvent, *, now: datetime) -> None:
    """Condition or Event for ``ev``, whichever upstream would write (nothing for STORE_ONLY)."""
    if ev.processingStrategy == hevent.ProcessingStrategy.STORE_ONLY:
        return
    if wants_condition(ev):
        publish_condition(api, ev, now=now)
    elif not ev.isHealthy:
        publish_event(api, ev, now=now)
