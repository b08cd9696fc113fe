"""What kube-apiserver's typed JSON decoder does to a built-in object before anything else sees it.

A real server decodes a create/update body into the kind's Go struct. Two things happen there that
the emulator reproduces from the 1.34 schemas (``data/openapi-1.34.json``, written by
:mod:`shared.sim.apiserver.schemagen`):

- a value of the wrong JSON type, an unparsable quantity, timestamp or base64 string fails the
  request (:meth:`BuiltinSchema.decode_errors`; the caller answers 400 ``<Kind> in version "<v>"
  cannot be handled as a <Kind>: <error>``, research section 2.2);
- fields the struct does not declare vanish, and are what ``fieldValidation`` reports
  (:meth:`BuiltinSchema.prune`, section 3), named as sigs.k8s.io/json's strict decoder names them:
  ``spec.template.spec.containers[0].imagePullPolicyy``, ``metadata.foo``; a map key reads
  ``.key``. Maps keep their keys; RawExtension, FieldsV1 and apiextensions' JSON values keep
  everything below them.

Each kind's schema compiles once, on first use, into a tree of small nodes; both walks then touch
only the keys the object has. Duplicate keys are not seen here (the body is already a dict), nor is
anything semantic: that is validation (422), elsewhere. The Go type names in messages come from the
schema names, so a few named Go types read as their underlying type (``string`` for ``v1.RestartPolicy``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from shared.sim.apiserver import goparse

DATA_FILE = "openapi-1.34.json"
_REF = "#/components/schemas/"

# Node kinds.
_ANY, _STRUCT, _ARRAY, _MAP, _STRING, _INT, _FLOAT, _BOOL, _BYTES, _QUANTITY, _INT_OR_STRING, _TIME = range(12)
_LEAVES = frozenset({_STRING, _INT, _FLOAT, _BOOL, _BYTES, _QUANTITY, _INT_OR_STRING, _TIME, _ANY})
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


@cache
def definitions() -> dict[str, Any]:
    """The generated data file: ``{"header": ..., "schemas": {name: OpenAPI v3 schema}}`` (shared, read-only)."""
    text = resources.files("shared.sim.apiserver").joinpath("data", DATA_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


class _Node:
    """One compiled schema position: what a value there may be, and its Go type for messages."""

    __slots__ = ("go", "hi", "item", "kind", "layout", "lo", "nested", "props", "prunable", "struct")

    def __init__(self, kind: int, go: str) -> None:
        self.kind = kind
        self.go = go
        self.props: dict[str, _Node] = {}  # STRUCT: every declared field
        self.nested: dict[str, _Node] = {}  # STRUCT: the fields below which pruning can find something
        self.item: _Node | None = None  # ARRAY, MAP: the element
        self.prunable = kind == _STRUCT  # whether unknown fields can hide at or below this position
        self.struct = ""  # STRUCT: the Go struct's name
        self.lo = self.hi = 0  # INT bounds
        self.layout = ""  # TIME layout


class _Compiler:
    def __init__(self, schemas: dict[str, Any]) -> None:
        self.schemas = schemas
        self.named: dict[str, _Node] = {}

    def named_node(self, name: str) -> _Node:
        if name in self.named:
            return self.named[name]
        package, _, short = name.rpartition(".")
        package = package.rpartition(".")[2]
        if name in _OPAQUE:
            node = _Node(_ANY, f"{package}.{short}")
        elif name == _QUANTITY_DEF:
            node = _Node(_QUANTITY, "resource.Quantity")
        elif name == _INT_OR_STRING_DEF:
            node = _Node(_INT_OR_STRING, "intstr.IntOrString")
        elif name in _TIMES:
            node = _Node(_TIME, "string")  # Time decodes through a string: that is the type its errors name
            node.layout = _TIMES[name]
        else:
            schema = self.schemas[name]
            if schema.get("type", "object") != "object":
                node = self.inline(schema)
            else:
                node = _Node(_STRUCT, f"{package}.{short}")
                node.struct = short
                self.named[name] = node  # before the properties: schemas refer to themselves
                node.props = {key: self.inline(sub) for key, sub in (schema.get("properties") or {}).items()}
                node.nested = {key: child for key, child in node.props.items() if child.prunable}
        self.named[name] = node
        return node

    def inline(self, schema: dict[str, Any]) -> _Node:
        ref = schema.get("$ref") or next((s["$ref"] for s in schema.get("allOf") or () if "$ref" in s), None)
        if ref:
            return self.named_node(ref[len(_REF) :])
        kind = schema.get("type")
        if kind in ("array", "object"):
            values = schema.get("items") if kind == "array" else schema.get("additionalProperties")
            if not isinstance(values, dict):
                return _Node(_ANY, "map[string]interface {}")
            item = self.inline(values)
            node = _Node(_ARRAY, "[]" + item.go) if kind == "array" else _Node(_MAP, "map[string]" + item.go)
            if item.kind == _QUANTITY:
                node.go = "v1.ResourceList"  # every map of quantities in the served kinds is a ResourceList
            node.item = item
            node.prunable = item.prunable
            return node
        if kind == "string":
            return _Node(_BYTES, "[]uint8") if schema.get("format") == "byte" else _Node(_STRING, "string")
        if kind == "integer":
            bits = schema.get("format") or "int64"
            node = _Node(_INT, bits)
            node.lo, node.hi = _INT_RANGE.get(bits, _INT_RANGE["int64"])
            return node
        if kind == "number":
            return _Node(_FLOAT, "float64")
        if kind == "boolean":
            return _Node(_BOOL, "bool")
        return _Node(_ANY, "interface {}")


# ---------------------------------------------------------------- decoding

# Timestamps and quantities repeat across objects (one "now" per write): parse each text once.
_time_error = lru_cache(maxsize=4096)(goparse.time_error)
_quantity_error = lru_cache(maxsize=4096)(goparse.quantity_error)


class _Fatal(Exception):
    """A field type's own UnmarshalJSON failed: the Go decoder stops at once with this error."""


def _json_kind(value: Any) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "array" if isinstance(value, list) else "object"


def _literal(value: Any) -> str:
    """A number as its JSON literal (what Go quotes in ``cannot unmarshal number 1.5``)."""
    return json.dumps(value)


def _type_error(value: str, go: str, struct: str, path: str) -> str:
    if struct or path:
        return f"json: cannot unmarshal {value} into Go struct field {struct}.{path} of type {go}"
    return f"json: cannot unmarshal {value} into Go value of type {go}"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Decoder:
    """Go's decodeState, reduced to its errors: type errors are saved (first wins), parser errors stop.

    ``struct`` is the Go struct holding the field being decoded and ``path`` the JSON field names from
    the root (no list indexes, no map keys): the context Go adds to a type error.
    """

    def __init__(self) -> None:
        self.saved: str | None = None

    def save(self, message: str) -> None:
        if self.saved is None:
            self.saved = message

    def struct(self, node: _Node, value: dict[str, Any], path: str) -> None:
        props, name = node.props, node.struct
        for key, sub in value.items():
            child = props.get(key)
            if child is None or sub is None:
                continue  # unknown fields are the pruner's; null leaves a Go value at its zero value
            kind = child.kind
            if kind == _STRING:
                if type(sub) is not str:
                    self.save(_type_error(_json_kind(sub), "string", name, _join(path, key)))
            elif kind == _STRUCT and type(sub) is dict:
                self.struct(child, sub, _join(path, key))
            elif (kind == _INT and type(sub) is int and child.lo <= sub <= child.hi) or (
                kind == _BOOL and type(sub) is bool
            ):
                continue
            else:
                self.value(child, sub, name, _join(path, key))

    def value(self, node: _Node, value: Any, struct: str, path: str) -> None:
        kind = node.kind
        if kind == _STRUCT:
            if type(value) is dict:
                self.struct(node, value, path)
            else:
                self.save(_type_error(_json_kind(value), node.go, struct, path))
        elif kind in (_ARRAY, _MAP):
            if type(value) is not (list if kind == _ARRAY else dict):
                self.save(_type_error(_json_kind(value), node.go, struct, path))
                return
            item = node.item
            assert item is not None
            items: Iterable[Any] = value.values() if type(value) is dict else value
            if item.kind == _STRING:
                for sub in items:
                    if type(sub) is not str and sub is not None:
                        self.save(_type_error(_json_kind(sub), "string", struct, path))
            elif item.kind != _ANY:
                for sub in items:
                    if sub is not None:
                        self.value(item, sub, struct, path)
        else:
            self.leaf(node, value, struct, path)

    def leaf(self, node: _Node, value: Any, struct: str, path: str) -> None:
        kind = node.kind
        if kind == _STRING:
            if not isinstance(value, str):
                self.save(_type_error(_json_kind(value), "string", struct, path))
        elif kind == _INT:
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.save(_type_error(_json_kind(value), node.go, struct, path))
            elif isinstance(value, float) or not node.lo <= value <= node.hi:
                self.save(_type_error("number " + _literal(value), node.go, struct, path))
        elif kind == _BOOL:
            if not isinstance(value, bool):
                self.save(_type_error(_json_kind(value), "bool", struct, path))
        elif kind == _FLOAT:
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.save(_type_error(_json_kind(value), "float64", struct, path))
        elif kind == _BYTES:
            if isinstance(value, str):
                problem = goparse.base64_error(value)
                if problem:
                    self.save(problem)
            elif not isinstance(value, list):  # a JSON array of byte values also decodes into []byte
                self.save(_type_error(_json_kind(value), "[]uint8", struct, path))
        elif kind == _QUANTITY:
            if isinstance(value, str):
                problem = _quantity_error(value)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                problem = _quantity_error(_literal(value))
            else:
                problem = goparse.QUANTITY_FORMAT
            if problem:
                raise _Fatal(problem)
        elif kind == _INT_OR_STRING:
            if isinstance(value, str):
                return
            # IntOrString.UnmarshalJSON decodes anything but a string into an int32.
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise _Fatal(_type_error(_json_kind(value), "int32", struct, path))
            if isinstance(value, float) or not -(2**31) <= value < 2**31:
                raise _Fatal(_type_error("number " + _literal(value), "int32", struct, path))
        elif kind == _TIME:
            if not isinstance(value, str):
                raise _Fatal(_type_error(_json_kind(value), "string", struct, path))
            problem = _time_error(value, node.layout)
            if problem:
                raise _Fatal(problem)


# ---------------------------------------------------------------- pruning


def _clean(node: _Node, value: Any) -> bool:
    """No undeclared field under ``value``: the common case, checked without building any path."""
    kind = node.kind
    if kind == _STRUCT:
        if type(value) is not dict:
            return True
        if not value.keys() <= node.props.keys():
            return False
        nested = node.nested
        for key in value.keys() & nested.keys():
            sub = value[key]
            if sub is not None and not _clean(nested[key], sub):
                return False
        return True
    item = node.item
    assert item is not None
    if kind == _ARRAY and type(value) is list:
        for sub in value:
            if not _clean(item, sub):
                return False
    elif kind == _MAP and type(value) is dict:
        for sub in value.values():
            if not _clean(item, sub):
                return False
    return True


def _prune(node: _Node, value: Any, path: str, found: list[str]) -> None:
    """Remove undeclared fields under ``value`` (at schema position ``node``), appending their paths."""
    kind = node.kind
    if kind == _STRUCT:
        if type(value) is not dict:
            return
        props = node.props
        for key in [key for key in value if key not in props]:
            del value[key]
            found.append(f"{path}.{key}" if path else key)
        nested = node.nested
        for key, sub in value.items():
            child = nested.get(key)
            if child is not None and sub is not None:
                _prune(child, sub, f"{path}.{key}" if path else key, found)
    elif kind == _ARRAY:
        if type(value) is list:
            item = node.item
            for i, sub in enumerate(value):
                _prune(item, sub, f"{path}[{i}]", found)  # type: ignore[arg-type]
    elif kind == _MAP and type(value) is dict:
        item = node.item
        for key, sub in value.items():
            _prune(item, sub, f"{path}.{key}" if path else key, found)  # type: ignore[arg-type]


# ---------------------------------------------------------------- per kind


class BuiltinSchema:
    """The decoder's view of one built-in kind (one group/version/kind)."""

    def __init__(self, name: str, root: _Node) -> None:
        self.name = name  # the schema's components name, e.g. io.k8s.api.core.v1.Pod
        self._root = root

    def decode_errors(self, obj: dict[str, Any]) -> list[str]:
        """The decode error kube-apiserver reports for ``obj`` (at most one: the Go decoder stops there), or ``[]``.

        Type errors read ``json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas
        of type int32`` (the first one in document order is reported); a quantity, timestamp or base64
        value that does not parse reports its parser's message and wins over type errors met before it.
        """
        decoder = _Decoder()
        try:
            decoder.struct(self._root, obj, "")
        except _Fatal as exc:
            return [str(exc)]
        return [decoder.saved] if decoder.saved else []

    def prune(self, obj: dict[str, Any]) -> list[str]:
        """Drop, in place, every field the kind does not declare; return their paths in document order."""
        found: list[str] = []
        if not _clean(self._root, obj):
            _prune(self._root, obj, "", found)
        return found


class _Kinds:
    """The compiled schemas, by group/version/kind, built on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.compiler: _Compiler | None = None
        self.by_gvk: dict[tuple[str, str, str], str] = {}
        self.compiled: dict[tuple[str, str, str], BuiltinSchema | None] = {}

    def get(self, key: tuple[str, str, str]) -> BuiltinSchema | None:
        if key in self.compiled:
            return self.compiled[key]
        with self.lock:
            if self.compiler is None:
                schemas = definitions()["schemas"]
                for name, schema in schemas.items():
                    for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                        self.by_gvk.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
                self.compiler = _Compiler(schemas)
            name = self.by_gvk.get(key)
            result = BuiltinSchema(name, self.compiler.named_node(name)) if name else None
            self.compiled[key] = result
            return result


_KINDS = _Kinds()


def schema_for(group: str, version: str, kind: str) -> BuiltinSchema | None:
    """The schema of a built-in kind, or ``None`` for kinds the data file does not hold (custom resources)."""
    return _KINDS.get((group, version, kind))
