"""Running a CRD's compiled ``x-kubernetes-validations`` rules on a custom resource write.

Follows apiextensions-apiserver:pkg/apiserver/schema/cel/validation.go: rules run on non-null values
with ``self`` typed by the schema (``number`` fields as doubles, ``date-time``/``duration`` strings as
timestamps/durations, a resource's metadata reduced to name and generateName); transition rules
(those using ``oldSelf``) only when an old value correlates (by key; list items only in map lists),
unless ``optionalOldSelf``; errors show the schema type as the value (``Invalid value: "object":
...``), ``failed rule: <rule>`` without a message, ``messageExpression`` falling back to the message
when it fails, ``reason`` and ``fieldPath`` as declared; a rule at the root reports field ``<nil>``.
On update an error of a non-transition rule whose value did not change is dropped (ratcheting).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from shared import cel
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.crdrules import Rule, escape, rule_text
from shared.sim.apiserver.openapivalidate import same
from shared.sim.apiserver.schemanode import Node


def _cel_value(node: Node | None, value: Any, *, resource_root: bool = False) -> Any:
    """``value`` as the rule sees it (apiextensions ``UnstructuredToVal``): typed by the schema."""
    if node is None or value is None:
        return value
    if isinstance(value, dict):
        return _cel_object(node, value, resource_root=resource_root)
    if isinstance(value, list):
        return [_cel_value(node.items, item) for item in value]
    if node.type == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if node.type == "string" and isinstance(value, str):
        return _cel_string(node.format, value)
    return value


def _cel_object(node: Node, value: dict[str, Any], *, resource_root: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if resource_root and key == "metadata" and isinstance(item, dict):
            out[key] = {k: item[k] for k in ("name", "generateName") if k in item}
            continue
        name = escape(key) if key in node.properties else key
        sub = node.child(key)
        if name is not None:
            out[name] = _cel_value(sub, item, resource_root=sub is not None and sub.embedded)
    return out


def _cel_string(fmt: str | None, value: str) -> Any:
    """Timestamps and durations are typed by their format; other strings stay strings."""
    if fmt in ("date-time", "datetime", "date"):
        return cel.Timestamp(value if "T" in value else value + "T00:00:00Z")
    if fmt == "duration":
        return cel.Duration(value)
    return value


@dataclass(frozen=True)
class _Corr:
    old: Any
    new: Any


def _map_list_old(node: Node, old: Any) -> dict[str, Any]:
    if node.list_type != "map" or not isinstance(old, list):
        return {}
    keyed: dict[str, Any] = {}
    for item in old:
        if isinstance(item, dict):
            keyed.setdefault(json.dumps([item.get(k) for k in node.map_keys], sort_keys=True), item)
    return keyed


def _child(path: str | None, key: str) -> str:
    return f"{path}.{key}" if path is not None else key


def _shown(path: str | None) -> str:
    return path if path is not None else "<nil>"  # a nil field.Path prints as <nil>


class _Run:
    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def node(
        self, node: Node, path: str | None, value: Any, old: Any, current: _Corr | None, parent: _Corr | None
    ) -> None:
        if value is None or not node.ruled:
            return
        if node.compiled:
            self.rules(node, path, value, old, current if current is not None else parent)
        if isinstance(value, dict):
            self._fields(node, path, value, old, current, parent)
        elif isinstance(value, list) and node.items is not None:
            self._items(node, path, value, old, current, parent)

    def _fields(
        self, node: Node, path: str | None, value: dict[str, Any], old: Any, current: _Corr | None, parent: _Corr | None
    ) -> None:
        olds = old if isinstance(old, dict) else {}
        for key, item in value.items():
            sub = node.properties.get(key)
            child_path = _child(path, key) if sub is not None else f"{path or ''}[{key}]"
            sub = sub if sub is not None else node.additional
            if sub is None:
                continue
            next_current, next_parent = current, parent
            if current is not None:
                if parent is None and key in ("apiVersion", "kind"):
                    next_current, next_parent = None, None
                else:
                    correlated = isinstance(current.old, dict) and key in current.old
                    next_current = _Corr(current.old[key], item) if correlated else None
                    next_parent = current
            self.node(sub, child_path, item, olds.get(key), next_current, next_parent)

    def _items(
        self, node: Node, path: str | None, value: list[Any], old: Any, current: _Corr | None, parent: _Corr | None
    ) -> None:
        """List items correlate with old ones only in a map list, by their keys."""
        assert node.items is not None
        keyed = _map_list_old(node, old)
        for i, item in enumerate(value):
            previous = None
            if keyed and isinstance(item, dict):
                previous = keyed.get(json.dumps([item.get(k) for k in node.map_keys], sort_keys=True))
            next_current = _Corr(previous, item) if current is not None and previous is not None else None
            self.node(node.items, f"{path or ''}[{i}]", item, previous, next_current, current or parent)

    def rules(self, node: Node, path: str | None, value: Any, old: Any, corr: _Corr | None) -> None:
        resource_root = path is None or node.embedded
        self_value = _cel_value(node, value, resource_root=resource_root)
        old_value = _cel_value(node, old, resource_root=resource_root) if old is not None else None
        schema_type = json.dumps(node.type)
        for rule in node.compiled:
            optional = rule.raw.get("optionalOldSelf") is True
            if rule.uses_old_self and old is None and not optional:
                continue
            variables: dict[str, Any] = {"self": self_value}
            if rule.uses_old_self:
                variables["oldSelf"] = cel.OptionalValue(old_value, old is not None) if optional else old_value
            text = rule_text(rule.raw, "message").strip() or rule_text(rule.raw, "rule").strip()
            try:
                result = rule.program.evaluate(variables)
            except cel.EvaluationError as exc:
                if str(exc) == "no such overload":
                    detail = (
                        "'no such overload': call arguments did not match a supported operator, function or macro"
                        f" signature for rule: {text}"
                    )
                else:
                    detail = f"{exc} evaluating rule: {text}"
                self.errors.append(
                    FieldError(_shown(path), "FieldValueInvalid", f"Invalid value: {schema_type}: {detail}")
                )
                continue
            if result is True:
                continue
            if not rule.uses_old_self and corr is not None and same(corr.old, corr.new):
                continue  # ratcheting: the value did not change
            where = _shown(path) if not rule.field_path else _child(path, rule.field_path)
            self.errors.append(_error(where, schema_type, self.message(rule, variables), rule.raw.get("reason")))

    def message(self, rule: Rule, variables: dict[str, Any]) -> str:
        if rule.message_program is not None:
            try:
                text = rule.message_program.evaluate(variables)
            except cel.EvaluationError:
                text = None
            if isinstance(text, str) and text.strip() and "\n" not in text.strip() and len(text.strip()) <= 5 * 1024:
                return text.strip()
        static = rule_text(rule.raw, "message").strip()
        return static or f"failed rule: {rule_text(rule.raw, 'rule').strip()}"


def _error(where: str, schema_type: str, detail: str, reason: Any) -> FieldError:
    if reason == "FieldValueForbidden":
        return FieldError(where, "FieldValueForbidden", f"Forbidden: {detail}")
    if reason == "FieldValueRequired":
        return FieldError(where, "FieldValueRequired", f"Required value: {detail}")
    if reason == "FieldValueDuplicate":
        return FieldError(where, "FieldValueDuplicate", f"Duplicate value: {schema_type}")
    return FieldError(where, "FieldValueInvalid", f"Invalid value: {schema_type}: {detail}")


def validate(root: Node, obj: Any, old: Any) -> list[FieldError]:
    """Every failing rule under ``root`` for ``obj`` (``old`` on update: transition rules, ratcheting)."""
    run = _Run()
    correlation = _Corr(old, obj) if old is not None else None
    run.node(root, None, obj, old, correlation, None)
    return run.errors
