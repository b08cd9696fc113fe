"""``events.k8s.io/v1`` Events, served over the same stored objects as ``core/v1`` Events.

A real API server keeps one set of Event objects (one etcd prefix) and converts at the edge
(``kubernetes:pkg/apis/events/v1/conversion.go``): ``regarding`` ↔ ``involvedObject``, ``note`` ↔
``message``, ``reportingController`` ↔ ``reportingComponent``, and the read-only
``deprecatedSource|FirstTimestamp|LastTimestamp|Count`` mirrors of ``source``, ``firstTimestamp``,
``lastTimestamp`` and ``count``. Here the store holds the core shape; :func:`to_core` runs when an
object is written through the events.k8s.io resource (the store's alias for it) and
:func:`from_core` when one is read through it. Writes through events.k8s.io/v1 get its strict
validation (``kubernetes:pkg/apis/core/validation/events.go`` ``ValidateEventCreate`` /
``ValidateEventUpdate``): ``eventTime``, ``reportingController``, ``reportingInstance``, ``action``
and ``reason`` are required, the deprecated fields must stay unset, and the identifying fields of
an existing Event are immutable. Field selectors take the events.k8s.io names there
(``regarding.name``, ``reportingController``), the core names on core/v1.

Reads through events.k8s.io convert each object (the store's alias), so a patch applies to
the shape the client sees. Simplified: a dry-run create there is not validated (the store is
where the check runs).
"""

from __future__ import annotations

import re
from typing import Any

from shared.sim.apiserver import apierrors, store

GROUP = "events.k8s.io"

# events.k8s.io/v1 name -> core/v1 name, for the fields the two shapes name differently.
RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
CORE_NAMES = {core: new for new, core in RENAMED.items()}
FIELD_LABELS = {
    **{
        f"regarding.{part}": f"involvedObject.{part}"
        for part in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    },
    "reportingController": "reportingComponent",
    "reason": "reason",
    "type": "type",
}
"""events.k8s.io field-selector labels and the core labels they stand for
(``kubernetes:pkg/apis/events/v1/conversion.go`` ``AddFieldLabelConversionsForEvent``)."""

REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_QUALIFIED_MESSAGE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def is_events_shaped(obj: dict[str, Any]) -> bool:
    """True when ``obj`` carries a field only the events.k8s.io shape has (a client's write there)."""
    return any(key in obj for key in RENAMED)


def from_core(obj: dict[str, Any]) -> dict[str, Any]:
    """The events.k8s.io/v1 view of a stored (core) Event, in place; idempotent."""
    for core, new in CORE_NAMES.items():
        if core in obj:
            value = obj.pop(core)
            if value not in (None, "", 0, {}):
                obj[new] = value
    obj["apiVersion"] = f"{GROUP}/v1"
    obj["kind"] = "Event"
    return obj


def to_core(obj: dict[str, Any], previous: dict[str, Any] | None, *, check: bool = True) -> dict[str, Any]:
    """Store form of an Event written through events.k8s.io/v1; 422 when its checks fail.

    ``previous`` is the stored object an update replaces (None on create); ``check=False`` (a
    removal) converts without judging. An object without any events.k8s.io-only field is
    already in the core shape and passes through unchecked.
    """
    checked = check and (is_events_shaped(obj) or str(obj.get("apiVersion", "")).startswith(f"{GROUP}/"))
    converted = {k: v for k, v in obj.items() if k not in RENAMED}
    for new, core in RENAMED.items():
        if new in obj:
            converted[core] = obj[new]
        elif previous is not None and core not in converted and core in previous:
            # Not in this shape (a core-only field): immutable on update, so the stored value stays.
            converted[core] = previous[core]
    converted["apiVersion"] = "v1"
    converted["kind"] = "Event"
    if not checked:
        return converted
    causes = _validate_create(converted) if previous is None else _validate_update(converted, previous)
    if causes:
        name = (converted.get("metadata") or {}).get("name", "")
        raise apierrors.invalid("Event", name, causes, group=GROUP)
    return converted


def _legacy(event: dict[str, Any]) -> list[apierrors.FieldError]:
    """``legacyValidateEvent``: what every Event must satisfy, whichever API wrote it."""
    causes: list[apierrors.FieldError] = []
    namespace = (event.get("metadata") or {}).get("namespace", "")
    involved = str((event.get("involvedObject") or {}).get("namespace") or "")
    if not event.get("eventTime"):
        if (not involved and namespace not in ("", "default")) or (involved and involved != namespace):
            causes.append(
                apierrors.invalid_value("involvedObject.namespace", involved, "does not match event.namespace")
            )
        return causes
    if not involved and namespace not in ("default", "kube-system"):
        causes.append(apierrors.invalid_value("involvedObject.namespace", involved, "does not match event.namespace"))
    causes += _reporter(event)
    for field, limit in (("action", ACTION_LIMIT), ("reason", REASON_LIMIT)):
        value = str(event.get(field) or "")
        if not value:
            causes.append(apierrors.required(field))
        if len(value) > limit:
            causes.append(apierrors.invalid_value(field, "", f"can have at most {limit} characters"))
    if len(str(event.get("message") or "")) > NOTE_LIMIT:
        causes.append(apierrors.invalid_value("message", "", f"can have at most {NOTE_LIMIT} characters"))
    return causes


def _reporter(event: dict[str, Any]) -> list[apierrors.FieldError]:
    """An events.k8s.io Event names its reporting controller (a qualified name) and instance."""
    causes: list[apierrors.FieldError] = []
    controller = str(event.get("reportingComponent") or "")
    if not controller:
        causes.append(apierrors.required("reportingController"))
    elif not _qualified_name(controller):
        causes.append(apierrors.invalid_value("reportingController", controller, _QUALIFIED_MESSAGE))
    instance = str(event.get("reportingInstance") or "")
    if not instance:
        causes.append(apierrors.required("reportingInstance"))
    if len(instance) > REPORTING_INSTANCE_LIMIT:
        why = f"can have at most {REPORTING_INSTANCE_LIMIT} characters"
        causes.append(apierrors.invalid_value("reportingInstance", "", why))
    return causes


def _qualified_name(value: str) -> bool:
    prefix, _, name = value.rpartition("/")
    if "/" in value and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.match(prefix)):
        return False
    return bool(name) and len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


def _series(event: dict[str, Any]) -> list[apierrors.FieldError]:
    series = event.get("series")
    if not series:
        return []
    causes = []
    if int(series.get("count") or 0) < 2:
        causes.append(apierrors.invalid_value("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        causes.append(apierrors.required("series.lastObservedTime"))
    return causes


def _validate_create(event: dict[str, Any]) -> list[apierrors.FieldError]:
    causes = _legacy(event) + _series(event)
    if not event.get("eventTime"):
        causes.append(apierrors.required("eventTime"))
    kind = event.get("type") or ""
    if kind not in ("Normal", "Warning"):
        causes.append(apierrors.invalid_value("type", "", f"has invalid value: {kind}"))
    for field in ("firstTimestamp", "lastTimestamp"):
        if event.get(field):
            causes.append(apierrors.invalid_value(field, "", "needs to be unset"))
    if event.get("count"):
        causes.append(apierrors.invalid_value("count", "", "needs to be unset"))
    source = event.get("source") or {}
    if source.get("component") or source.get("host"):
        causes.append(apierrors.invalid_value("source", "", "needs to be unset"))
    return causes


_IMMUTABLE = (
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "type",
    "eventTime",
    "action",
    "related",
    "reportingComponent",
    "reportingInstance",
)


def _validate_update(event: dict[str, Any], old: dict[str, Any]) -> list[apierrors.FieldError]:
    causes = _legacy(event)
    if event.get("series") != old.get("series"):
        causes += _series(event)
    for field in _IMMUTABLE:
        new = event.get(field) or None
        if new != (old.get(field) or None):
            path = "reportingController" if field == "reportingComponent" else field  # the internal field's name
            causes.append(apierrors.invalid_value(path, new, "field is immutable"))
    return causes


class EventsView:
    """The read view of events.k8s.io/v1 (registered in :class:`shared.sim.apiserver.readviews.Views`)."""

    def object(self, obj: dict[str, Any]) -> dict[str, Any]:
        return from_core(obj)

    def raw(self, entry: store.Entry) -> bytes:
        return store.encode(from_core(entry.object()))

    def raws(self, entries: list[store.Entry]) -> list[bytes]:
        return [self.raw(e) for e in entries]
