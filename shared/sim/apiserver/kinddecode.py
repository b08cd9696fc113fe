"""The errors kube-apiserver's Go JSON decoder finds in a built-in object, and which one it reports.

:class:`Decoder` walks an object along the compiled nodes of :mod:`shared.sim.apiserver.kindnodes` as
Go's ``decodeState`` walks it into the kind's struct: a value of the wrong JSON type is saved (the
first one wins, decoding goes on), while a field type's own parser failing (a quantity, an
IntOrString, a timestamp) stops the decode at once (:class:`Fatal`). Base64 ``[]byte`` values are
saved like type errors. Unknown fields are not looked at here: that is pruning, in
:mod:`shared.sim.apiserver.kinds`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from shared.sim.apiserver import goparse
from shared.sim.apiserver.kindnodes import (
    ANY,
    ARRAY,
    BOOL,
    BYTES,
    FLOAT,
    INT,
    INT_OR_STRING,
    MAP,
    QUANTITY,
    STRING,
    STRUCT,
    TIME,
    Node,
)

# Timestamps and quantities repeat across objects (one "now" per write): parse each text once.
_time_error = lru_cache(maxsize=4096)(goparse.time_error)
_quantity_error = lru_cache(maxsize=4096)(goparse.quantity_error)


class Fatal(Exception):
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


class Decoder:
    """Go's decodeState, reduced to its errors: type errors are saved (first wins), parser errors stop.

    ``struct`` is the Go struct holding the field being decoded and ``path`` the JSON field names from
    the root (no list indexes, no map keys): the context Go adds to a type error.
    """

    def __init__(self) -> None:
        self.saved: str | None = None

    def save(self, message: str) -> None:
        if self.saved is None:
            self.saved = message

    def struct(self, node: Node, value: dict[str, Any], path: str) -> None:
        props, name = node.props, node.struct
        for key, sub in value.items():
            child = props.get(key)
            if child is None or sub is None:
                continue  # unknown fields are the pruner's; null leaves a Go value at its zero value
            kind = child.kind
            if kind == STRING:
                if type(sub) is not str:
                    self.save(_type_error(_json_kind(sub), "string", name, _join(path, key)))
            elif kind == STRUCT and type(sub) is dict:
                self.struct(child, sub, _join(path, key))
            elif (kind == INT and type(sub) is int and child.lo <= sub <= child.hi) or (
                kind == BOOL and type(sub) is bool
            ):
                continue
            else:
                self.value(child, sub, name, _join(path, key))

    def value(self, node: Node, value: Any, struct: str, path: str) -> None:
        kind = node.kind
        if kind == STRUCT:
            if type(value) is dict:
                self.struct(node, value, path)
            else:
                self.save(_type_error(_json_kind(value), node.go, struct, path))
        elif kind in (ARRAY, MAP):
            if type(value) is not (list if kind == ARRAY else dict):
                self.save(_type_error(_json_kind(value), node.go, struct, path))
                return
            self._elements(node, value.values() if type(value) is dict else value, struct, path)
        else:
            check = _LEAVES.get(kind)
            if check is not None:
                check(self, node, value, struct, path)

    def _elements(self, node: Node, items: Iterable[Any], struct: str, path: str) -> None:
        item = node.item
        assert item is not None
        if item.kind == STRING:
            for sub in items:
                if type(sub) is not str and sub is not None:
                    self.save(_type_error(_json_kind(sub), "string", struct, path))
        elif item.kind != ANY:
            for sub in items:
                if sub is not None:
                    self.value(item, sub, struct, path)

    def string(self, node: Node, value: Any, struct: str, path: str) -> None:
        if not isinstance(value, str):
            self.save(_type_error(_json_kind(value), "string", struct, path))

    def integer(self, node: Node, value: Any, struct: str, path: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.save(_type_error(_json_kind(value), node.go, struct, path))
        elif isinstance(value, float) or not node.lo <= value <= node.hi:
            self.save(_type_error("number " + _literal(value), node.go, struct, path))

    def boolean(self, node: Node, value: Any, struct: str, path: str) -> None:
        if not isinstance(value, bool):
            self.save(_type_error(_json_kind(value), "bool", struct, path))

    def number(self, node: Node, value: Any, struct: str, path: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.save(_type_error(_json_kind(value), "float64", struct, path))

    def raw_bytes(self, node: Node, value: Any, struct: str, path: str) -> None:
        if isinstance(value, str):
            problem = goparse.base64_error(value)
            if problem:
                self.save(problem)
        elif not isinstance(value, list):  # a JSON array of byte values also decodes into []byte
            self.save(_type_error(_json_kind(value), "[]uint8", struct, path))

    def quantity(self, node: Node, value: Any, struct: str, path: str) -> None:
        if isinstance(value, str):
            problem = _quantity_error(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            problem = _quantity_error(_literal(value))
        else:
            problem = goparse.QUANTITY_FORMAT
        if problem:
            raise Fatal(problem)

    def int_or_string(self, node: Node, value: Any, struct: str, path: str) -> None:
        if isinstance(value, str):
            return
        # IntOrString.UnmarshalJSON decodes anything but a string into an int32.
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Fatal(_type_error(_json_kind(value), "int32", struct, path))
        if isinstance(value, float) or not -(2**31) <= value < 2**31:
            raise Fatal(_type_error("number " + _literal(value), "int32", struct, path))

    def time(self, node: Node, value: Any, struct: str, path: str) -> None:
        if not isinstance(value, str):
            raise Fatal(_type_error(_json_kind(value), "string", struct, path))
        problem = _time_error(value, node.layout)
        if problem:
            raise Fatal(problem)


_LEAVES: dict[int, Callable[[Decoder, Node, Any, str, str], None]] = {
    STRING: Decoder.string,
    INT: Decoder.integer,
    BOOL: Decoder.boolean,
    FLOAT: Decoder.number,
    BYTES: Decoder.raw_bytes,
    QUANTITY: Decoder.quantity,
    INT_OR_STRING: Decoder.int_or_string,
    TIME: Decoder.time,
}
