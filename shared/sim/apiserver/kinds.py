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

Each kind's schema compiles once, on first use, into a tree of small nodes
(:mod:`shared.sim.apiserver.kindnodes`); the decoder's walk (:mod:`shared.sim.apiserver.kinddecode`)
and the pruning walk here then touch
only the keys the object has. Duplicate keys are not seen here (the body is already a dict), nor is
anything semantic: that is validation (422), elsewhere. The Go type names in messages come from the
schema names, so a few named Go types read as their underlying type (``string`` for ``v1.RestartPolicy``).
"""

from __future__ import annotations

import json
import threading
from functools import cache
from importlib import resources
from typing import Any

from shared.sim.apiserver.kinddecode import Decoder, Fatal
from shared.sim.apiserver.kindnodes import ARRAY, MAP, STRUCT, Compiler, Node

DATA_FILE = "openapi-1.34.json"


@cache
def definitions() -> dict[str, Any]:
    """The generated data file: ``{"header": ..., "schemas": {name: OpenAPI v3 schema}}`` (shared, read-only)."""
    text = resources.files("shared.sim.apiserver").joinpath("data", DATA_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


# ---------------------------------------------------------------- pruning


def _clean(node: Node, value: Any) -> bool:
    """No undeclared field under ``value``: the common case, checked without building any path."""
    kind = node.kind
    if kind == STRUCT:
        return _clean_struct(node, value)
    item = node.item
    assert item is not None
    if kind == ARRAY and type(value) is list:
        return all(_clean(item, sub) for sub in value)
    if kind == MAP and type(value) is dict:
        return all(_clean(item, sub) for sub in value.values())
    return True


def _clean_struct(node: Node, value: Any) -> bool:
    if type(value) is not dict:
        return True
    if not value.keys() <= node.props.keys():
        return False
    nested = node.nested
    return all(value[key] is None or _clean(nested[key], value[key]) for key in value.keys() & nested.keys())


def _prune(node: Node, value: Any, path: str, found: list[str]) -> None:
    """Remove undeclared fields under ``value`` (at schema position ``node``), appending their paths."""
    kind = node.kind
    if kind == STRUCT:
        if type(value) is dict:
            _prune_struct(node, value, path, found)
    elif kind == ARRAY:
        if type(value) is list:
            item = node.item
            for i, sub in enumerate(value):
                _prune(item, sub, f"{path}[{i}]", found)  # type: ignore[arg-type]
    elif kind == MAP and type(value) is dict:
        item = node.item
        for key, sub in value.items():
            _prune(item, sub, f"{path}.{key}" if path else key, found)  # type: ignore[arg-type]


def _prune_struct(node: Node, value: dict[str, Any], path: str, found: list[str]) -> None:
    props = node.props
    for key in [key for key in value if key not in props]:
        del value[key]
        found.append(f"{path}.{key}" if path else key)
    nested = node.nested
    for key, sub in value.items():
        child = nested.get(key)
        if child is not None and sub is not None:
            _prune(child, sub, f"{path}.{key}" if path else key, found)


# ---------------------------------------------------------------- per kind


class BuiltinSchema:
    """The decoder's view of one built-in kind (one group/version/kind)."""

    def __init__(self, name: str, root: Node) -> None:
        self.name = name  # the schema's components name, e.g. io.k8s.api.core.v1.Pod
        self._root = root

    def decode_errors(self, obj: dict[str, Any]) -> list[str]:
        """The decode error kube-apiserver reports for ``obj`` (at most one: the Go decoder stops there), or ``[]``.

        Type errors read ``json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas
        of type int32`` (the first one in document order is reported); a quantity, timestamp or base64
        value that does not parse reports its parser's message and wins over type errors met before it.
        """
        decoder = Decoder()
        try:
            decoder.struct(self._root, obj, "")
        except Fatal as exc:
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
        self.compiler: Compiler | None = None
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
                self.compiler = Compiler(schemas)
            name = self.by_gvk.get(key)
            result = BuiltinSchema(name, self.compiler.named_node(name)) if name else None
            self.compiled[key] = result
            return result


_KINDS = _Kinds()


def schema_for(group: str, version: str, kind: str) -> BuiltinSchema | None:
    """The schema of a built-in kind, or ``None`` for kinds the data file does not hold (custom resources)."""
    return _KINDS.get((group, version, kind))
