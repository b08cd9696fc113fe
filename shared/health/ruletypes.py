"""What a fault-quarantine rule can see, as CEL types: the ``event``, the ``node`` and the functions.

celpy has no type checker, so ``shared.health.typecheck`` checks rules against this table. The
HealthEvent's part is derived from the pydantic model, field by field, as ``HealthEvent.cel_value``
presents it at run time: enums are their protobuf **numbers** (so ``'RESTART_BM'`` never equals
``event.recommendedAction``), ``errorCode`` is a list of **strings**, ``generatedTimestamp`` is a
``{seconds, nanos}`` map, unset optional fields are null. A Node is what the rule engine's node cache
keeps (``ruleset.NodeCache``): apiVersion, kind, metadata name/labels/annotations, the whole spec,
and status conditions/capacity/allocatable; anything else of a Node is absent at run time.
tests/health/test_rule_types.py holds both tables to the values the engine really builds.

The functions are those a health rule's program is bound to: celpy's standard library and the
string extensions of ``shared.cel`` (``lowerAscii``, ``split``, ...); celpy lets each be called as a
function or as a method of its first argument. The Kubernetes library of ``shared.cel_library``
(``isSorted``, ``sum``, ``find``, ...) is bound only to CustomResourceDefinition rules, so a
health rule calling it fails at run time and is refused here.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum
from types import NoneType, UnionType
from typing import Any

from pydantic import BaseModel

from shared.health import event


@dataclass(frozen=True)
class CelType:
    """A CEL type as the checker knows it; ``kind`` is what celpy compares at run time."""

    kind: str
    """``int``, ``uint``, ``double``, ``string``, ``bool``, ``bytes``, ``null``, ``timestamp``,
    ``duration``, ``type``, ``list``, ``map`` or ``dyn`` (anything)."""

    def describe(self) -> str:
        return self.kind


@dataclass(frozen=True)
class ListType(CelType):
    element: CelType = field(default_factory=lambda: DYN)

    def describe(self) -> str:
        return f"list({self.element.describe()})"


@dataclass(frozen=True)
class MapType(CelType):
    key: CelType = field(default_factory=lambda: DYN)
    value: CelType = field(default_factory=lambda: DYN)

    def describe(self) -> str:
        return f"map({self.key.describe()}, {self.value.describe()})"


@dataclass(frozen=True)
class ObjectType(CelType):
    """A map with known keys (the event, a Node and their parts); ``name`` is for messages."""

    name: str = ""
    fields: Mapping[str, CelType] = field(default_factory=dict)

    def describe(self) -> str:
        return self.name


@dataclass(frozen=True)
class EnumType(CelType):
    """An enum field: ``int`` at run time; ``members`` maps each name to its number."""

    name: str = ""
    members: Mapping[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        return f"{self.name} (an int in CEL)"


def prim(kind: str) -> CelType:
    return CelType(kind)


DYN: CelType = CelType("dyn")
INT, UINT, DOUBLE, STRING, BOOL, BYTES = (prim(k) for k in ("int", "uint", "double", "string", "bool", "bytes"))
NULL, TIMESTAMP, DURATION, TYPE = (prim(k) for k in ("null", "timestamp", "duration", "type"))


def list_of(element: CelType) -> ListType:
    return ListType("list", element)


def map_of(key: CelType, value: CelType) -> MapType:
    return MapType("map", key, value)


def object_of(name: str, fields: Mapping[str, CelType]) -> ObjectType:
    return ObjectType("map", name, dict(fields))


def enum_of(enum: type[IntEnum]) -> EnumType:
    return EnumType("int", enum.__name__, {m.name: int(m.value) for m in enum})


# --- the HealthEvent, from its model ----------------------------------------------------------

TIMESTAMP_VALUE = object_of("generatedTimestamp", {"seconds": INT, "nanos": INT})
"""How ``cel_value`` presents a time: Go's JSON of a protobuf Timestamp, not a CEL timestamp."""


_SIMPLE: dict[Any, CelType] = {
    bool: BOOL,
    int: INT,
    str: STRING,
    float: DOUBLE,
    bytes: BYTES,
    datetime: TIMESTAMP_VALUE,
}


def from_annotation(annotation: Any, name: str) -> CelType:
    """The CEL type ``HealthEvent.cel_value`` gives a field of this Python annotation."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return from_annotation(args[0], name)
    if origin in (UnionType, typing.Union):
        options = [a for a in args if a is not NoneType]
        return from_annotation(options[0], name) if len(options) == 1 else DYN
    if origin is list:
        return list_of(from_annotation(args[0], name))
    if origin is dict:
        return map_of(from_annotation(args[0], name), from_annotation(args[1], name))
    return _named(annotation, name)


def _named(annotation: Any, name: str) -> CelType:
    """A plain class: an enum, a model, or one of ``_SIMPLE``."""
    if isinstance(annotation, type) and issubclass(annotation, IntEnum):
        return enum_of(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return object_from_model(annotation, annotation.__name__)
    if annotation in _SIMPLE:
        return _SIMPLE[annotation]
    raise TypeError(f"no CEL type for {name}: {annotation!r}")


def object_from_model(model: type[BaseModel], name: str) -> ObjectType:
    return object_of(name, {key: from_annotation(f.annotation, key) for key, f in model.model_fields.items()})


HEALTH_EVENT = object_from_model(event.HealthEvent, "HealthEvent")

# --- the Node, as the rule engine's node cache keeps it ---------------------------------------

_STRINGS = map_of(STRING, STRING)
NODE = object_of(
    "Node",
    {
        "apiVersion": STRING,
        "kind": STRING,
        "metadata": object_of("Node metadata", {"name": STRING, "labels": _STRINGS, "annotations": _STRINGS}),
        "spec": object_of(
            "Node spec",
            {
                "configSource": DYN,
                "externalID": STRING,
                "podCIDR": STRING,
                "podCIDRs": list_of(STRING),
                "providerID": STRING,
                "taints": list_of(
                    object_of("Taint", {"key": STRING, "value": STRING, "effect": STRING, "timeAdded": STRING})
                ),
                "unschedulable": BOOL,
            },
        ),
        "status": object_of(
            "Node status",
            {
                "allocatable": _STRINGS,
                "capacity": _STRINGS,
                "conditions": list_of(
                    object_of(
                        "NodeCondition",
                        {
                            "type": STRING,
                            "status": STRING,
                            "reason": STRING,
                            "message": STRING,
                            "lastHeartbeatTime": STRING,
                            "lastTransitionTime": STRING,
                        },
                    )
                ),
            },
        ),
    },
)

VARIABLES: dict[str, tuple[str, CelType]] = {"HealthEvent": ("event", HEALTH_EVENT), "Node": ("node", NODE)}
"""A rule's kind → the one variable it sees and its type."""

TYPE_NAMES = frozenset({"int", "uint", "double", "string", "bool", "bytes", "list", "map", "null_type", "type"})
"""Identifiers that are type values (``type(x) == string``)."""

# --- the functions ------------------------------------------------------------------------------

Param = str
"""A parameter: a kind (``string``, ``list``, ...), ``any``, or several joined by ``|``."""


@dataclass(frozen=True)
class Overload:
    params: tuple[Param, ...]
    result: CelType


def _o(result: CelType, *params: Param) -> Overload:
    return Overload(params, result)


_TIME_PARTS = ("getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getMonth")
_CLOCK_PARTS = ("getHours", "getMilliseconds", "getMinutes", "getSeconds")
_CONVERTIBLE = "int|uint|double|string|bool|bytes|timestamp|duration"

FUNCTIONS: dict[str, tuple[Overload, ...]] = {
    "size": (_o(INT, "string|bytes|list|map"),),
    "int": (_o(INT, "int|uint|double|string|timestamp"),),
    "uint": (_o(UINT, "int|uint|double|string"),),
    "double": (_o(DOUBLE, "int|uint|double|string"),),
    "string": (_o(STRING, _CONVERTIBLE),),
    "bool": (_o(BOOL, "bool|string"),),
    "bytes": (_o(BYTES, "string|bytes"),),
    "timestamp": (_o(TIMESTAMP, "string|timestamp"),),
    "duration": (_o(DURATION, "string|duration"),),
    "type": (_o(TYPE, "any"),),
    "dyn": (_o(DYN, "any"),),
    "matches": (_o(BOOL, "string", "string"),),
    "contains": (_o(BOOL, "string", "string"),),
    "startsWith": (_o(BOOL, "string", "string"),),
    "endsWith": (_o(BOOL, "string", "string"),),
    **{name: (_o(INT, "timestamp"), _o(INT, "timestamp", "string")) for name in _TIME_PARTS},
    **{name: (_o(INT, "timestamp|duration"), _o(INT, "timestamp", "string")) for name in _CLOCK_PARTS},
    # shared.cel's string extensions (cel-go's ext.Strings() as upstream rules use them)
    "lowerAscii": (_o(STRING, "string"),),
    "upperAscii": (_o(STRING, "string"),),
    "trim": (_o(STRING, "string"),),
    "replace": (_o(STRING, "string", "string", "string"), _o(STRING, "string", "string", "string", "int")),
    "split": (_o(list_of(STRING), "string", "string"), _o(list_of(STRING), "string", "string", "int")),
    "join": (_o(STRING, "list"), _o(STRING, "list", "string")),
    "indexOf": (_o(INT, "string", "string"),),
}
"""Every function a health rule may call, with the arguments it takes (receiver first)."""

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
"""Methods that bind a variable: ``list.exists(x, predicate)``."""
