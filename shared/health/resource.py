"""The HealthEvent custom resource: transport and history of events (nvsentinel.nvidia.com/v1alpha1).

Cluster-scoped, one object per event, ``spec`` = the event on the wire (enum names), ``status`` =
what fault quarantine did with it. The object name is the node plus the event's dedupe key, so
publishing the same event twice is one object (the second create is AlreadyExists, counted as a
duplicate) — publishing is idempotent and monitors may retry freely. Progress lives in ``status``:
an event without ``status.phase`` is still to be processed, which is how a restarted controller
resumes. ``prune`` deletes processed events older than the retention.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from shared.health import event as hevent
from shared.kube import crds, listing, rest, retry
from shared.kube import errors as kube_errors
from shared.kube.api import KubeApi
from shared.kube.customresource import CustomResource, ObjectMeta

GROUP, VERSION, PLURAL = "nvsentinel.nvidia.com", "v1alpha1", "healthevents"
NODE_LABEL = "nvsentinel.nvidia.com/node"
CHECK_LABEL = "nvsentinel.nvidia.com/check"
AGENT_LABEL = "nvsentinel.nvidia.com/agent"
FATAL_LABEL = "nvsentinel.nvidia.com/fatal"
"""Labels written at publish, so ``events list`` filters by label selector on the server."""


class DrainStatus(BaseModel):
    """Drain progress of one quarantining event (``shared.health.drain``)."""

    state: str = "InProgress"
    entity: str | None = None
    startedAt: str | None = None
    nextAttemptAt: str | None = None
    attempts: int = 0
    pending: list[str] = Field(default_factory=list)
    message: str = ""


class RemediationStatus(BaseModel):
    """What remediation did for one event (``shared.health.remediation``)."""

    state: str = "Pending"
    kind: str | None = None
    object: str | None = None
    group: str | None = None
    message: str = ""


class Status(BaseModel):
    """What fault quarantine did: Quarantined, AlreadyQuarantined, UnQuarantined, Recovered,
    NotMatched, NoMatch, Skipped, Blocked, StoreOnly or NodeNotFound."""

    phase: str | None = None
    ruleSets: list[str] = Field(default_factory=list)
    message: str = ""
    processedAt: str | None = None
    drain: DrainStatus | None = None
    remediation: RemediationStatus | None = None


class HealthEventObject(CustomResource[hevent.HealthEvent, Status]):
    """One stored event: the event itself is the spec (on the wire: enums by name)."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "HealthEvent"


RESOURCE = crds.Resource.of(
    HealthEventObject,
    plural=PLURAL,
    scope="Cluster",
    short_names=("he", "hevt"),
    categories=("nvsentinel",),
    columns=(
        crds.PrinterColumn("Node", ".spec.nodeName"),
        crds.PrinterColumn("Agent", ".spec.agent"),
        crds.PrinterColumn("Check", ".spec.checkName"),
        crds.PrinterColumn("Fatal", ".spec.isFatal", "boolean"),
        crds.PrinterColumn("Healthy", ".spec.isHealthy", "boolean"),
        crds.PrinterColumn("Action", ".spec.recommendedAction"),
        crds.PrinterColumn("Phase", ".status.phase"),
        crds.PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
    ),
)


@dataclass(frozen=True)
class Stored:
    """One HealthEvent object as read back."""

    name: str
    event: hevent.HealthEvent
    phase: str | None
    created: str
    resource_version: str
    status: Status = field(default_factory=Status)


def object_name(ev: hevent.HealthEvent) -> str:
    node = re.sub(r"[^a-z0-9.-]", "-", ev.nodeName.lower()).strip(".-")[:200] or "node"
    return f"{node}.{ev.dedupe_key()}"


def install(api: KubeApi) -> None:
    crds.install(api, RESOURCE)


@dataclass(frozen=True)
class PublishResult:
    created: list[str]
    duplicates: list[str]

    def document(self) -> dict[str, Any]:
        return {"published": len(self.created), "duplicates": len(self.duplicates), "names": self.created}


def publish(api: KubeApi, events: list[hevent.HealthEvent], *, now: Callable[[], datetime]) -> PublishResult:
    """Create one object per distinct event; repeats (in the input or already stored) are skipped."""
    created, duplicates = [], []
    for ev in events:  # every name first: a bad one (a monitor's hostname) stores nothing
        hevent.check_node_name(ev)
    for ev in events:
        if ev.generatedTimestamp is None:
            ev = ev.model_copy(update={"generatedTimestamp": now()})
        name = object_name(ev)
        stored = HealthEventObject(metadata=ObjectMeta(name=name, labels=labels(ev)), spec=ev)
        try:
            rest.create(api, RESOURCE.path(), stored.creation_document(), what=RESOURCE.what(name))
        except kube_errors.AlreadyExists:
            duplicates.append(name)
            continue
        created.append(name)
    return PublishResult(created, duplicates)


def label_value(text: str) -> str:
    """``text`` as a label value: other characters as ``-``, at most 63, alphanumeric at both ends."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:63].strip("-_.")


def labels(ev: hevent.HealthEvent) -> dict[str, str]:
    """The labels of a published event: node, check, agent (those not empty) and fatal."""
    found = {NODE_LABEL: label_value(ev.nodeName), FATAL_LABEL: str(ev.isFatal).lower()}
    for key, text in ((CHECK_LABEL, ev.checkName), (AGENT_LABEL, ev.agent)):
        if label_value(text):
            found[key] = label_value(text)
    return found


def list_events(
    api: KubeApi,
    *,
    node: str | None = None,
    selector: str | None = None,
    skipped: list[listing.Skipped] | None = None,
) -> list[Stored]:
    """Every stored event (of one node, matching a label selector), oldest first by generatedTimestamp then name.

    A malformed object cannot be processed and is left out; ``skipped``, when given, receives one
    entry naming each (a person's listing warns about them)."""
    if node:
        selector = ",".join(p for p in (f"{NODE_LABEL}={label_value(node)}", selector) if p)
    items = rest.list_items(api, RESOURCE.path(), label_selector=selector)
    stored = []
    parsed: dict[tuple[str, str], _Parsed] = {}
    for item in items:
        meta = item.get("metadata") or {}
        raw = item.get("status") or {}
        spec = item.get("spec") or {}
        key = (str(meta.get("uid", "")), str(meta.get("resourceVersion", "")))
        known = _PARSED.get(key) if all(key) else None
        if known is not None and (known[0] != spec or known[1] != raw):
            known = None  # the same key for other content (another cluster): parse it
        if known is None:
            try:
                ev = hevent.HealthEvent.model_validate(spec)
            except ValidationError as exc:  # someone wrote a malformed object; it cannot be processed, list the rest
                if skipped is not None:
                    name = str(meta.get("name") or "?")
                    skipped.append(listing.Skipped(RESOURCE.what(name), listing.first_problem(exc, under="spec")))
                continue
            except ValueError:
                continue
            try:
                status = Status.model_validate(raw)
            except ValueError:
                status = Status(phase=raw.get("phase"))
            known = (spec, raw, ev, status)
        if all(key):
            parsed[key] = known
        _, _, ev, status = known
        stored.append(
            Stored(
                meta.get("name", ""),
                ev,
                raw.get("phase"),
                meta.get("creationTimestamp", ""),
                meta.get("resourceVersion", ""),
                status,
            )
        )
    _remember(parsed, whole=selector is None)
    stored.sort(key=lambda s: (s.event.generatedTimestamp.timestamp() if s.event.generatedTimestamp else 0, s.name))
    return stored


_Parsed = tuple[dict[str, Any], dict[str, Any], hevent.HealthEvent, Status]
"""The spec and status as read, and what they validated to."""
_PARSED: dict[tuple[str, str], _Parsed] = {}
"""Events already validated, by (uid, resourceVersion): the quarantine loop lists every event each
second, so each is validated once per write instead of once per pass (30,000 stored events cost
about a second of CPU a pass). A hit also needs the same spec and status as read (a dict
comparison, far cheaper than validating): one process may read several clusters, and a simulated
one with a fixed seed repeats its uids. The parsed values are not mutated by their readers (frozen
events; a status is replaced, never edited)."""
_PARSED_MAX = 200_000


def _remember(parsed: dict[tuple[str, str], _Parsed], *, whole: bool) -> None:
    """Keep what the last whole listing held (deleted and rewritten events drop out); a filtered
    listing only adds, up to a bound."""
    if whole or len(_PARSED) + len(parsed) > _PARSED_MAX:
        _PARSED.clear()
    _PARSED.update(parsed)


def set_status(api: KubeApi, name: str, status: Status) -> None:
    """Record the outcome (status subresource; the outcome is deterministic), conflict-safe.

    Each attempt reads first: an outcome already stored (a write the server kept but did not
    answer) is not written again; only its time may differ."""
    path = RESOURCE.path(name=name) + "/status"
    wanted = status.model_dump(exclude_none=True)

    def attempt() -> None:
        current = rest.get(api, RESOURCE.path(name=name), what=f"healthevent {name}")
        if wanted and _without_time(current.get("status") or {}) == _without_time(wanted):
            return
        current["status"] = wanted
        rest.replace(api, path, current, what=f"healthevent {name}")

    retry.call(attempt, policy=_STATUS_RETRY, what=f"healthevent {name}")


_STATUS_RETRY = retry.RetryPolicy(attempts=8, base_delay=0.02, max_delay=0.5)


def _without_time(status: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in status.items() if k != "processedAt"}


def update_status(api: KubeApi, name: str, **parts: BaseModel | str | None) -> None:
    """Replace some status fields (drain, remediation, ...) and keep the others, conflict-safe.

    Each attempt reads first and writes only what differs: a write the server stored before
    failing to answer is found done by the retry, not written again."""

    def attempt() -> None:
        current = rest.get(api, RESOURCE.path(name=name), what=f"healthevent {name}")
        status = dict(current.get("status") or {})
        for key, value in parts.items():
            status[key] = value.model_dump(exclude_none=True) if isinstance(value, BaseModel) else value
        wanted = {k: v for k, v in status.items() if v is not None}
        if wanted == (current.get("status") or {}):
            return
        current["status"] = wanted
        rest.replace(api, RESOURCE.path(name=name) + "/status", current, what=f"healthevent {name}")

    retry.call(attempt, policy=_STATUS_RETRY, what=f"healthevent {name}")


def prune(
    api: KubeApi,
    *,
    older_than: timedelta,
    now: Callable[[], datetime],
    dry_run: bool = False,
    keep: frozenset[str] = frozenset(),
    most: int | None = None,
) -> list[str]:
    """Delete processed events created before now - older_than, read page by page; the names.

    Kept: unprocessed events (no ``status.phase``: the controller still owes them an outcome) and
    the names in ``keep`` (the causes of current quarantines, ``shared.health.garbage``). At most
    ``most`` are deleted in one call, so one call never holds a controller pass for long."""
    cutoff = now() - older_than
    doomed: list[str] = []
    for item in rest.iter_items(api, RESOURCE.path()):
        meta = item.get("metadata") or {}
        try:
            created = datetime.fromisoformat(str(meta.get("creationTimestamp", "")).replace("Z", "+00:00"))
        except ValueError:
            continue
        name = str(meta.get("name", ""))
        if created < cutoff and (item.get("status") or {}).get("phase") and name not in keep:
            doomed.append(name)
            if most is not None and len(doomed) >= most:
                break
    if not dry_run:
        for name in doomed:
            rest.delete(api, RESOURCE.path(name=name), what=f"healthevent {name}")
    return doomed
