"""The 1.34 schemas of the built-in kinds, compiled into the small nodes the decoder walks.

:mod:`shared.sim.apiserver.kinds` compiles a kind's schema on first use with :class:`Compiler`: each
position becomes a :class:`Node` saying what a value there may be (a struct with its declared fields,
an array or map of one element node, or a leaf the Go decoder parses itself) and its Go type, as the
decoder's messages name it. A few named types are leaves of their own: ``resource.Quantity``,
``intstr.IntOrString``, ``metav1.Time``/``MicroTime``, and the opaque JSON values (RawExtension,
FieldsV1, apiextensions' JSON) that keep everything below them.
"""

from __future__ import annotations

from typing import Any

from shared.sim.apiserver import goparse

_REF = "#/components/schemas/"

# Node kinds.
ANY, STRUCT, ARRAY, MAP, STRING, INT, FLOAT, BOOL, BYTES, QUANTITY, INT_OR_STRING, TIME = range(12)
_OPAQUE = frozenset(
    {
        "io.k8s.apimachinery.pkg.runtime.RawExtension",
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
    }
)
_QUANTITY_DEF = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_TIMES = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": goparse.RFC3339,
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": goparse.RFC3339_MICRO,
}
_INT_OR_STRING_DEF = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_INT_RANGE = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_SIMPLE = {"number": (FLOAT, "float64"), "boolean": (BOOL, "bool")}


class Node:
    """One compiled schema position: what a value there may be, and its Go type for messages."""

    __slots__ = ("go", "hi", "item", "kind", "layout", "lo", "nested", "props", "prunable", "struct")

    def __init__(self, kind: int, go: str) -> None:
        self.kind = kind
        self.go = go
        self.props: dict[str, Node] = {}  # STRUCT: every declared field
        self.nested: dict[str, Node] = {}  # STRUCT: the fields below which pruning can find something
        self.item: Node | None = None  # ARRAY, MAP: the element
        self.prunable = kind == STRUCT  # whether unknown fields can hide at or below this position
        self.struct = ""  # STRUCT: the Go struct's name
        self.lo = self.hi = 0  # INT bounds
        self.layout = ""  # TIME layout


class Compiler:
    def __init__(self, schemas: dict[str, Any]) -> None:
        self.schemas = schemas
        self.named: dict[str, Node] = {}

    def named_node(self, name: str) -> Node:
        if name in self.named:
            return self.named[name]
        package, _, short = name.rpartition(".")
        package = package.rpartition(".")[2]
        if name in _OPAQUE:
            node = Node(ANY, f"{package}.{short}")
        elif name == _QUANTITY_DEF:
            node = Node(QUANTITY, "resource.Quantity")
        elif name == _INT_OR_STRING_DEF:
            node = Node(INT_OR_STRING, "intstr.IntOrString")
        elif name in _TIMES:
            node = Node(TIME, "string")  # Time decodes through a string: that is the type its errors name
            node.layout = _TIMES[name]
        else:
            schema = self.schemas[name]
            if schema.get("type", "object") != "object":
                node = self.inline(schema)
            else:
                node = Node(STRUCT, f"{package}.{short}")
                node.struct = short
                self.named[name] = node  # before the properties: schemas refer to themselves
                node.props = {key: self.inline(sub) for key, sub in (schema.get("properties") or {}).items()}
                node.nested = {key: child for key, child in node.props.items() if child.prunable}
        self.named[name] = node
        return node

    def inline(self, schema: dict[str, Any]) -> Node:
        ref = schema.get("$ref") or next((s["$ref"] for s in schema.get("allOf") or () if "$ref" in s), None)
        if ref:
            return self.named_node(ref[len(_REF) :])
        kind = schema.get("type")
        if kind in ("array", "object"):
            return self._container(schema, kind)
        return _scalar(kind, schema.get("format"))

    def _container(self, schema: dict[str, Any], kind: str) -> Node:
        values = schema.get("items") if kind == "array" else schema.get("additionalProperties")
        if not isinstance(values, dict):
            return Node(ANY, "map[string]interface {}")
        item = self.inline(values)
        node = Node(ARRAY, "[]" + item.go) if kind == "array" else Node(MAP, "map[string]" + item.go)
        if item.kind == QUANTITY:
            node.go = "v1.ResourceList"  # every map of quantities in the served kinds is a ResourceList
        node.item = item
        node.prunable = item.prunable
        return node


def _scalar(kind: Any, fmt: Any) -> Node:
    if kind == "string":
        return Node(BYTES, "[]uint8") if fmt == "byte" else Node(STRING, "string")
    if kind == "integer":
        bits = fmt or "int64"
        node = Node(INT, bits)
        node.lo, node.hi = _INT_RANGE.get(bits, _INT_RANGE["int64"])
        return node
    return Node(*_SIMPLE.get(kind, (ANY, "interface {}")))
