"""One node of a CustomResourceDefinition's openAPIV3Schema, read into typed fields.

The emulator's schema code (pruning, defaulting, value validation, CEL rules, the CRD checks) works
on these instead of raw dicts. Reading is lenient: a keyword of the wrong JSON type is treated as
absent here (the real server refuses such a CRD while decoding it; ``crdcheck`` reports that), so
any user-supplied schema can be read without raising.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT"})()
"""No ``default`` keyword (``default: null`` also reads as absent, as the v1 conversion does)."""

# Formats a CR value is checked against, by name with dashes removed (the go-openapi registry's
# normalisation): apiextensions-apiserver:pkg/apiserver/validation/formats.go, 1.34 adds the k8s-* two.
STRING_FORMATS = frozenset(
    {
        "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4",
        "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
        "date", "duration", "datetime", "quantity", "k8sshortname", "k8slongname",
    }
)  # fmt: skip


def _bool(raw: dict[str, Any], key: str) -> bool:
    value = raw.get(key)
    return value if isinstance(value, bool) else False


def _int(raw: dict[str, Any], key: str) -> int | None:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(raw: dict[str, Any], key: str) -> int | float | None:
    value = raw.get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _str(raw: dict[str, Any], key: str) -> str:
    value = raw.get(key)
    return value if isinstance(value, str) else ""


@dataclass(eq=False)
class Node:
    """A schema node; ``raw`` is the JSON it was read from."""

    raw: dict[str, Any]
    type: str = ""
    format: str = ""
    nullable: bool = False
    default: Any = ABSENT
    properties: dict[str, Node] = field(default_factory=dict)
    additional: Node | None = None
    additional_allows: bool | None = None  # None: no additionalProperties keyword
    items: Node | None = None
    required: tuple[str, ...] = ()
    enum: list[Any] | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    pattern: str | None = None
    multiple_of: int | float | None = None
    unique_items: bool = False
    all_of: tuple[Node, ...] = ()
    any_of: tuple[Node, ...] = ()
    one_of: tuple[Node, ...] = ()
    not_: Node | None = None
    preserve_unknown: bool = False
    embedded: bool = False
    int_or_string: bool = False
    list_type: str | None = None
    map_keys: tuple[str, ...] = ()
    map_type: str | None = None
    rules: tuple[dict[str, Any], ...] = ()
    compiled: list[Any] = field(default_factory=list)  # crdrules.Rule per compiled entry of ``rules``
    ruled: bool = False  # compiled rules at or below this node (set by crdrules.mark_ruled)

    @property
    def has_default(self) -> bool:
        return self.default is not ABSENT

    @property
    def types(self) -> tuple[str, ...]:
        """What the value validator checks: int-or-string nodes accept either."""
        if self.int_or_string:
            return ("integer", "string")
        return (self.type,) if self.type else ()

    @property
    def checked_format(self) -> str:
        """The format left after the server strips unsupported ones (``StripUnsupportedFormats``)."""
        if not self.format:
            return ""
        kind = "" if self.int_or_string else self.type
        if kind in ("", "string"):
            return self.format if self.format.replace("-", "") in STRING_FORMATS else ""
        if kind == "integer":
            return self.format if self.format in ("int32", "int64") else ""
        if kind == "number":
            return self.format if self.format in ("float", "double") else ""
        return ""

    def child(self, key: str) -> Node | None:
        """The schema of ``key`` in an object value: a property, else additionalProperties."""
        found = self.properties.get(key)
        return found if found is not None else self.additional

    def walk(self) -> list[Node]:
        """This node and every node on its structural spine (properties, items, additionalProperties)."""
        found = [self]
        for sub in self.properties.values():
            found += sub.walk()
        for extra in (self.items, self.additional):
            if extra is not None:
                found += extra.walk()
        return found


def _nodes(raw: dict[str, Any], key: str) -> tuple[Node, ...]:
    value = raw.get(key)
    if not isinstance(value, list):
        return ()
    return tuple(read(item) for item in value if isinstance(item, dict))


def read(raw: dict[str, Any]) -> Node:
    """Read ``raw`` (an openAPIV3Schema or any node of one) without raising."""
    node = Node(raw=raw, type=_str(raw, "type"), format=_str(raw, "format"), nullable=_bool(raw, "nullable"))
    if raw.get("default") is not None:
        node.default = raw["default"]
    _read_children(node, raw)
    _read_value_checks(node, raw)
    _read_extensions(node, raw)
    return node


def _read_children(node: Node, raw: dict[str, Any]) -> None:
    """The schemas below: properties, additionalProperties, items, and the combinators."""
    props = raw.get("properties")
    if isinstance(props, dict):
        node.properties = {str(k): read(v) for k, v in props.items() if isinstance(v, dict)}
    extra = raw.get("additionalProperties")
    if isinstance(extra, bool):
        node.additional_allows = extra
    elif isinstance(extra, dict):
        node.additional_allows = True
        node.additional = read(extra)
    items = raw.get("items")
    if isinstance(items, dict):
        node.items = read(items)
    node.all_of, node.any_of, node.one_of = _nodes(raw, "allOf"), _nodes(raw, "anyOf"), _nodes(raw, "oneOf")
    if isinstance(raw.get("not"), dict):
        node.not_ = read(raw["not"])


def _read_value_checks(node: Node, raw: dict[str, Any]) -> None:
    required = raw.get("required")
    if isinstance(required, list):
        node.required = tuple(str(r) for r in required if isinstance(r, str))
    if isinstance(raw.get("enum"), list):
        node.enum = list(raw["enum"])
    node.minimum, node.maximum = _number(raw, "minimum"), _number(raw, "maximum")
    node.exclusive_minimum, node.exclusive_maximum = _bool(raw, "exclusiveMinimum"), _bool(raw, "exclusiveMaximum")
    node.min_length, node.max_length = _int(raw, "minLength"), _int(raw, "maxLength")
    node.min_items, node.max_items = _int(raw, "minItems"), _int(raw, "maxItems")
    node.min_properties, node.max_properties = _int(raw, "minProperties"), _int(raw, "maxProperties")
    node.pattern = raw["pattern"] if isinstance(raw.get("pattern"), str) and raw["pattern"] else None
    node.multiple_of = _number(raw, "multipleOf")
    node.unique_items = _bool(raw, "uniqueItems")


def _read_extensions(node: Node, raw: dict[str, Any]) -> None:
    """The ``x-kubernetes-*`` keywords."""
    node.preserve_unknown = raw.get("x-kubernetes-preserve-unknown-fields") is True
    node.embedded = _bool(raw, "x-kubernetes-embedded-resource")
    node.int_or_string = _bool(raw, "x-kubernetes-int-or-string")
    node.list_type = raw["x-kubernetes-list-type"] if isinstance(raw.get("x-kubernetes-list-type"), str) else None
    keys = raw.get("x-kubernetes-list-map-keys")
    if isinstance(keys, list):
        node.map_keys = tuple(str(k) for k in keys if isinstance(k, str))
    node.map_type = raw["x-kubernetes-map-type"] if isinstance(raw.get("x-kubernetes-map-type"), str) else None
    rules = raw.get("x-kubernetes-validations")
    if isinstance(rules, list):
        node.rules = tuple(r for r in rules if isinstance(r, dict))
