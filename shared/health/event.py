"""The HealthEvent: upstream NVSentinel's event, field for field (research/nvsentinel.md §2.1).

On the wire (files, stdin, the custom resource) ``recommendedAction`` and ``processingStrategy``
are enum *names*; inside CEL they are the protobuf *integers*, and every field is present (null
when unset), because that is how upstream's fault quarantine sees an event and rules are written
against it (``event.recommendedAction in [15, 24]``, ``event.errorCode == null``).
``generatedTimestamp`` is RFC 3339 on the wire and ``{seconds, nanos}`` in CEL (Go's JSON of a
protobuf Timestamp). This module parses and normalises events; it does no I/O.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from enum import IntEnum, StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, field_serializer, field_validator

from shared import errors, files, grammars


class RecommendedAction(IntEnum):
    """Upstream's protobuf numbers; the name travels on the wire, the number inside CEL."""

    NONE = 0
    COMPONENT_RESET = 2
    CONTACT_SUPPORT = 5
    RUN_FIELDDIAG = 6
    RESTART_VM = 15
    RESTART_BM = 24
    REPLACE_VM = 25
    RUN_DCGMEUD = 26
    CUSTOM = 27
    REMEDIATE = 28
    UNKNOWN = 99


class ProcessingStrategy(IntEnum):
    UNSPECIFIED = 0
    EXECUTE_REMEDIATION = 1
    STORE_ONLY = 2
    STORE_AND_ANALYSE = 3


class EntityType(StrEnum):
    """Entity types seen upstream; others are accepted as plain strings."""

    GPU = "GPU"
    GPU_UUID = "GPU_UUID"
    PCI = "PCI"
    NIC = "NIC"
    NODE = "v1/Node"


class Entity(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    entityType: str
    entityValue: str


class BehaviourOverrides(BaseModel):
    model_config = ConfigDict(extra="forbid")

    force: bool = False
    skip: bool = False


def _by_name(default: IntEnum) -> Any:
    """The field's default, and its JSON Schema as the wire carries it: the enum's names."""
    names = list(type(default).__members__)

    def wire(schema: dict[str, Any]) -> None:
        schema.clear()
        schema.update({"default": default.name, "enum": names, "type": "string"})

    return Field(default, json_schema_extra=wire)


def _enum_by_name(enum: type[IntEnum], value: Any) -> Any:
    if isinstance(value, enum) or value is None:
        return value
    if isinstance(value, str):
        try:
            return enum[value.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown {enum.__name__} {value!r}, valid: {', '.join(enum.__members__)}") from None
    if isinstance(value, int) and not isinstance(value, bool):
        return enum(value)
    raise ValueError(f"{enum.__name__} must be a name")


class HealthEvent(BaseModel):
    """One observation about one node, as a monitor reports it; on the wire, enums by name and time as a string."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    agent: str
    componentClass: str = ""
    checkName: str
    isFatal: bool = False
    isHealthy: bool = False
    message: str = ""
    recommendedAction: RecommendedAction = _by_name(RecommendedAction.NONE)
    errorCode: list[str] = Field(default_factory=list)
    entitiesImpacted: list[Entity] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)
    generatedTimestamp: Annotated[datetime, WithJsonSchema({"type": "string"})] | None = None
    nodeName: str
    quarantineOverrides: BehaviourOverrides | None = None
    drainOverrides: BehaviourOverrides | None = None
    processingStrategy: ProcessingStrategy = _by_name(ProcessingStrategy.UNSPECIFIED)
    id: str = ""
    customRecommendedAction: str = ""

    @field_validator("recommendedAction", mode="before")
    @classmethod
    def _action(cls, value: Any) -> Any:
        return _enum_by_name(RecommendedAction, value)

    @field_validator("processingStrategy", mode="before")
    @classmethod
    def _strategy(cls, value: Any) -> Any:
        return _enum_by_name(ProcessingStrategy, value)

    @field_validator("errorCode", mode="before")
    @classmethod
    def _codes(cls, value: Any) -> Any:
        return [str(v) for v in value] if isinstance(value, list) else value

    @field_validator("generatedTimestamp")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value

    @field_serializer("recommendedAction", "processingStrategy")
    def _names(self, value: IntEnum) -> str:
        return value.name

    @field_serializer("generatedTimestamp")
    def _stamp(self, value: datetime | None) -> str | None:
        return None if value is None else format_time(value)

    def wire(self) -> dict[str, Any]:
        """The event as JSON data, enum names, unset optional fields left out."""
        return self.model_dump(mode="json", exclude_none=True)

    def activation(self) -> dict[str, Any]:
        """Plain data for CEL: every field present, enums as integers, null where unset.

        Built field by field (a ``model_dump`` costs several times more); the key order is the
        fields' order, as ``model_dump`` gives it.
        """
        stamp, q, d = self.generatedTimestamp, self.quarantineOverrides, self.drainOverrides
        return {
            "version": self.version,
            "agent": self.agent,
            "componentClass": self.componentClass or None,
            "checkName": self.checkName,
            "isFatal": self.isFatal,
            "isHealthy": self.isHealthy,
            "message": self.message or None,
            "recommendedAction": int(self.recommendedAction),
            "errorCode": list(self.errorCode) or None,
            "entitiesImpacted": [
                {"entityType": e.entityType, "entityValue": e.entityValue} for e in self.entitiesImpacted
            ]
            or None,
            "metadata": dict(self.metadata) or None,
            "generatedTimestamp": None
            if stamp is None
            else {"seconds": int(stamp.timestamp()), "nanos": stamp.microsecond * 1000},
            "nodeName": self.nodeName,
            "quarantineOverrides": None if q is None else {"force": q.force, "skip": q.skip},
            "drainOverrides": None if d is None else {"force": d.force, "skip": d.skip},
            "processingStrategy": int(self.processingStrategy),
            "id": self.id or None,
            "customRecommendedAction": self.customRecommendedAction or None,
        }

    def cel_value(self) -> Any:
        """``cel.to_cel(self.activation())``, built straight into CEL values (the rule engine's input).

        Same value, without the intermediate dict and the generic walk over it: the fields of a
        validated event have known types, so each takes the one constructor it needs
        (tests/health/test_ruleset_equivalence.py compares the two).
        """
        global _CEL_BUILD  # noqa: PLW0603 - built on first use (celpy is imported lazily)
        if _CEL_BUILD is None:
            _CEL_BUILD = _cel_builder()
        return _CEL_BUILD(self)

    def dedupe_key(self) -> str:
        """Same ``id``, else same node, agent, check, codes, entities, health and time: one event."""
        if self.id:
            basis: Any = ["id", self.id]
        else:
            basis = [
                self.nodeName,
                self.agent,
                self.checkName,
                sorted(self.errorCode),
                sorted((e.entityType, e.entityValue) for e in self.entitiesImpacted),
                self.isHealthy,
                None if self.generatedTimestamp is None else format_time(self.generatedTimestamp),
            ]
        return hashlib.sha256(json.dumps(basis).encode()).hexdigest()[:20]


_CEL_BUILD: Any = None


def _cel_builder() -> Any:
    """``HealthEvent.cel_value``'s body, with the CEL constructors and converted keys bound once."""
    from shared import cel

    b = cel.builders()
    string, integer, mapping, array, convert, true, false = (
        b.string,
        b.integer,
        b.mapping,
        b.array,
        b.convert,
        b.true,
        b.false,
    )
    (
        version,
        agent,
        component,
        check,
        fatal,
        healthy,
        message,
        action,
        codes,
        entities,
        metadata,
        stamp_key,
        node,
        quarantine,
        drain,
        strategy,
        ident,
        custom,
    ) = (b.key(name) for name in HealthEvent.model_fields)
    etype, evalue, seconds, nanos, force, skip = (
        b.key(name) for name in ("entityType", "entityValue", "seconds", "nanos", "force", "skip")
    )

    def overrides(o: BehaviourOverrides | None) -> Any:
        return None if o is None else mapping({force: true if o.force else false, skip: true if o.skip else false})

    def build(ev: HealthEvent) -> Any:
        stamp = ev.generatedTimestamp
        return mapping(
            {
                version: convert(ev.version),
                agent: string(ev.agent),
                component: string(ev.componentClass) if ev.componentClass else None,
                check: string(ev.checkName),
                fatal: true if ev.isFatal else false,
                healthy: true if ev.isHealthy else false,
                message: string(ev.message) if ev.message else None,
                action: integer(int(ev.recommendedAction)),
                codes: array([string(c) for c in ev.errorCode]) if ev.errorCode else None,
                entities: array(
                    [mapping({etype: string(e.entityType), evalue: string(e.entityValue)}) for e in ev.entitiesImpacted]
                )
                if ev.entitiesImpacted
                else None,
                metadata: convert(ev.metadata) if ev.metadata else None,
                stamp_key: None
                if stamp is None
                else mapping({seconds: convert(int(stamp.timestamp())), nanos: integer(stamp.microsecond * 1000)}),
                node: string(ev.nodeName),
                quarantine: overrides(ev.quarantineOverrides),
                drain: overrides(ev.drainOverrides),
                strategy: integer(int(ev.processingStrategy)),
                ident: string(ev.id) if ev.id else None,
                custom: string(ev.customRecommendedAction) if ev.customRecommendedAction else None,
            }
        )

    return build


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse(data: Any, *, where: str | None = None) -> HealthEvent:
    """One event from JSON data; InvalidInput naming the field on a bad one."""
    try:
        return HealthEvent.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(event)"
        raise errors.InvalidInput(f"invalid HealthEvent: {field}: {first['msg']}", where=where) from None


def check_node_name(ev: HealthEvent, *, where: str | None = None) -> HealthEvent:
    """``ev`` when its nodeName is a node's name (a DNS-1123 subdomain): an empty or ``../../x``
    one would be stored, labelled and matched against no node, so it is refused before that."""
    problem = grammars.node_name(ev.nodeName)
    if problem is not None:
        raise errors.InvalidInput(f"invalid HealthEvent: nodeName: {problem}", where=where)
    return ev


def _read(data: Any, where: str) -> HealthEvent:
    return check_node_name(parse(_unwrap(data), where=where), where=where)


def _unwrap(item: Any) -> Any:
    """A stored HealthEvent object (``kubectl get healthevent X -o json``) carries the event in spec."""
    if isinstance(item, dict) and item.get("kind") == "HealthEvent" and isinstance(item.get("spec"), dict):
        return item["spec"]
    return item


def parse_text(text: str, *, source: str = "-") -> list[HealthEvent]:
    """One event, a JSON array, NDJSON (one event per line), or the cluster's objects, in input order.

    The objects are what ``kubectl get healthevents -o json`` prints (a list with ``items``, or one
    object), so history exported from a cluster replays without reshaping it first."""
    stripped = text.strip()
    if not stripped:
        return []
    try:
        whole = files.loads_json(stripped, source=source)
    except files.NotJson:
        whole = None
    else:
        if isinstance(whole, dict) and isinstance(whole.get("items"), list):
            return [_read(item, f"{source}.items[{i}]") for i, item in enumerate(whole["items"])]
        items = whole if isinstance(whole, list) else [whole]
        return [_read(item, f"{source}[{i}]" if isinstance(whole, list) else source) for i, item in enumerate(items)]
    events = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = files.loads_json(line, source=f"{source}:{number}")
        except files.NotJson as exc:
            raise errors.InvalidInput(exc.message, where=f"{source}:{number}") from None
        events.append(_read(item, f"{source}:{number}"))
    return events


def unique(events: list[HealthEvent]) -> list[HealthEvent]:
    """Drop repeats (by ``dedupe_key``), keeping the first of each."""
    seen: set[str] = set()
    kept = []
    for event in events:
        key = event.dedupe_key()
        if key not in seen:
            seen.add(key)
            kept.append(event)
    return kept
