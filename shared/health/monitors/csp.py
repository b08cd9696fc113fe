"""Cloud scheduled maintenance from a metadata HTTP endpoint → HealthEvents (upstream's csp-health-monitor).

Upstream polls the CSP's APIs (GCP audit logs, AWS Health), normalises each notice into a
maintenance event ``{eventId, resourceType, resourceId, nodeName, status, maintenanceType,
scheduledStartTime, scheduledEndTime, actualEndTime, recommendedAction}`` and a trigger engine turns
it into HealthEvents (research §8.4): a *fatal* ``CSPMaintenance`` event ("CSP maintenance
scheduled", agent ``csp-health-monitor``, componentClass and entity = the CSP resource, the
event's recommended action) from ``triggerQuarantineWorkflowTimeLimitMinutes`` (30) before the
start, and a *healthy* one ("CSP maintenance completed") ``postMaintenanceHealthyDelayMinutes``
(15) after the end.

Here the endpoint serves those normalised events as JSON — ``{"events": [...]}`` or a bare list —
for one node (a node's own metadata server) or for many (entries with another ``nodeName`` are
skipped). Status is upstream's CSP status: ``PENDING``/``SCHEDULED``/``upcoming`` (scheduled),
``ONGOING``/``ACTIVE``/``open`` (under way), ``COMPLETED``/``closed``, ``CANCELLED``. A cancelled
or completed maintenance (after the delay) and one that is no longer listed become the healthy
event through ``memory.Memory``; an unknown action name is NONE, as upstream.

Node-Ready wait (upstream's ``nodeReadinessTimeoutMinutes``, 60): a node that went through a
maintenance may still be rebooting when the notice says it is over, and a healthy event then would
un-quarantine a node that cannot run work. Given a ``ready`` check, the healthy event is held back
until the Node's Ready condition is True again (a failed check counts as not yet, and is retried
at the next poll); the wait starts at the first poll that would have sent it and is kept in the
monitor's memory, so a restarted monitor with ``--state`` keeps counting. A node still not Ready
after the timeout gets no healthy event at all — an error is logged and the node stays
quarantined for people to look at, as upstream.
"""

from __future__ import annotations

import logging
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from shared import errors, files
from shared.health import event as hevent
from shared.health.monitors import memory

if TYPE_CHECKING:
    from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)

AGENT, CHECK = "csp-health-monitor", "CSPMaintenance"
SCHEDULED_MESSAGE, COMPLETED_MESSAGE = "CSP maintenance scheduled", "CSP maintenance completed"
LEAD = timedelta(minutes=30)  # triggerQuarantineWorkflowTimeLimitMinutes
HEALTHY_DELAY = timedelta(minutes=15)  # postMaintenanceHealthyDelayMinutes
READY_TIMEOUT = timedelta(minutes=60)  # nodeReadinessTimeoutMinutes
_WAIT = "ready-wait|"  # memory.counters key prefix: when the Ready wait began
PENDING = frozenset({"PENDING", "SCHEDULED", "UPCOMING"})
ONGOING = frozenset({"ONGOING", "ACTIVE", "OPEN", "IN_PROGRESS"})
OVER = frozenset({"COMPLETED", "CLOSED", "CANCELLED", "CANCELED"})


def fetch(url: str, *, timeout: float = 10.0) -> Any:
    """GET ``url`` and decode its JSON; Unavailable / InvalidInput naming the URL."""
    request = urllib.request.Request(url, headers={"Accept": "application/json", "Metadata-Flavor": "Google"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = files.read_stream(response, where=url, network=True)
    except urllib.error.HTTPError as exc:
        raise errors.Unavailable(f"maintenance endpoint answered HTTP {exc.code}", where=url) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise errors.Unavailable(f"maintenance endpoint unreachable: {reason}", where=url) from None
    return files.loads_json(files.decode(body, where=url), source=url)


def _time(value: Any, field: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise errors.InvalidInput(f"maintenance event: {field} is not an RFC 3339 time: {value!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _action(name: Any) -> hevent.RecommendedAction:
    try:
        return hevent.RecommendedAction[str(name or "NONE").strip().upper()]
    except KeyError:
        return hevent.RecommendedAction.NONE


def _items(doc: Any) -> list[dict[str, Any]]:
    items = doc.get("events", doc.get("maintenanceEvents")) if isinstance(doc, dict) else doc
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise errors.InvalidInput('maintenance document must be {"events": [...]} or a list of objects')
    return items


def events(
    doc: Any, *, node: str, now: datetime, reported: set[str] | frozenset[str] = frozenset()
) -> list[hevent.HealthEvent]:
    """The fatal events of one read: maintenances of ``node`` that are due, under way, or just over.

    A maintenance that ended less than ``HEALTHY_DELAY`` ago stays unhealthy only if it was
    reported (``reported`` holds ``memory.key_of`` slots), so an old completed notice is not news.
    """
    out = []
    for item in _items(doc):
        if item.get("nodeName") not in (None, "", node):
            continue
        status = str(item.get("status", "PENDING")).strip().upper()
        start = _time(item.get("scheduledStartTime"), "scheduledStartTime")
        end = _time(item.get("actualEndTime") or item.get("scheduledEndTime"), "scheduledEndTime")
        resource_type = str(item.get("resourceType") or "CSP")
        resource_id = str(item.get("resourceId") or item.get("instanceId") or node)
        ev = hevent.HealthEvent(
            agent=AGENT,
            componentClass=resource_type,
            checkName=CHECK,
            isFatal=True,
            isHealthy=False,
            message=SCHEDULED_MESSAGE,
            recommendedAction=_action(item.get("recommendedAction")),
            errorCode=[str(item.get("maintenanceType") or "SCHEDULED")],
            entitiesImpacted=[hevent.Entity(entityType=resource_type, entityValue=resource_id)],
            metadata={k: str(item[k]) for k in ("eventId", "description", "maintenanceType") if item.get(k)},
            generatedTimestamp=now,
            nodeName=node,
            processingStrategy=hevent.ProcessingStrategy.EXECUTE_REMEDIATION,
        )
        if status in OVER:
            due = (
                (status.startswith("COMPLETED") or status == "CLOSED")
                and end is not None
                and now < end + HEALTHY_DELAY
                and memory.key_of(ev) in reported
            )
        elif status in ONGOING:
            due = True
        else:  # scheduled: from LEAD before its start (no start time: now)
            due = start is None or now >= start - LEAD
        if due:
            out.append(ev)
    return out


def node_ready(api: KubeApi, node: str) -> bool:
    """The Node's Ready condition is True."""
    from shared import nodes

    conditions = (nodes.get(api, node).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def once(
    url: str,
    node: str,
    mem: memory.Memory,
    now: datetime,
    *,
    ready: Callable[[str], bool] | None = None,
    ready_timeout: timedelta = READY_TIMEOUT,
) -> list[hevent.HealthEvent]:
    """One poll: new maintenances (fatal) and finished ones (healthy, "CSP maintenance completed").

    With ``ready``, a healthy event waits for the node to be Ready (see the module docstring)."""
    doc = fetch(url)
    try:
        unhealthy = events(
            doc, node=node, now=now, reported={slot for slot, data in mem.reported.items() if not data.get("isHealthy")}
        )
    except errors.InvalidInput as exc:
        raise errors.InvalidInput(str(exc), where=url) from None
    before = dict(mem.reported)
    out = []
    for ev in mem.changes(node, AGENT, unhealthy, now=now):
        slot = memory.key_of(ev)
        if not ev.isHealthy:
            mem.counters.pop(_WAIT + slot, None)
            out.append(ev)
        elif ready is None or _ready(ready, node):
            mem.counters.pop(_WAIT + slot, None)
            out.append(ev.model_copy(update={"message": COMPLETED_MESSAGE}))
        elif _given_up(mem, slot, now, ready_timeout):
            mem.counters.pop(_WAIT + slot)  # memory keeps the slot recovered: nothing is ever sent for it
        else:
            mem.reported[slot] = before[slot]  # still unhealthy as far as anyone was told
    return out


def _ready(ready: Callable[[str], bool], node: str) -> bool:
    try:
        return ready(node)
    except errors.ToolError as exc:
        logger.info("node readiness unknown, retrying at the next poll: %s", exc.line(), extra={"subject": node})
        return False


def _given_up(mem: memory.Memory, slot: str, now: datetime, timeout: timedelta) -> bool:
    """Start or continue the Ready wait of ``slot``; True once it ran out (logged once)."""
    since = mem.counters.setdefault(_WAIT + slot, {"since": int(now.timestamp())})["since"]
    waited = now - datetime.fromtimestamp(since, UTC)
    if waited < timeout:
        return False
    logger.error(
        "node not Ready %d min after its maintenance ended: no healthy event is sent "
        "(nodeReadinessTimeoutMinutes %d); the node stays quarantined",
        waited.total_seconds() // 60,
        timeout.total_seconds() // 60,
        extra={"subject": slot.split("|", 1)[0]},
    )
    return True
