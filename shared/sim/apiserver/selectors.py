"""Label and field selectors, parsed the way the API server parses them.

A selector is parsed once per request into requirements and then matched against the small
per-object indexes the store keeps (labels, selectable field values), so a list of 10,000 objects
never decodes the objects it filters out. Bad syntax and unknown field labels are errors (400),
as on a real server; a fake that silently matched everything would hide real bugs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_KEY = re.compile(rf"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_NAME}\Z")
_VALUE = re.compile(rf"^({_NAME})?\Z")
_PREFIX_MAX = 253


class Selectable(Protocol):
    """What field selectors need of a served resource (:class:`shared.sim.apiserver.resources.Resource`)."""

    @property
    def kind(self) -> str: ...

    def selectable(self) -> tuple[str, ...]: ...


class SelectorError(ValueError):
    """A selector the server refuses; the message is what a real server says."""


@dataclass(frozen=True)
class Requirement:
    """One label requirement: ``key op values``."""

    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!exists", "gt", "lt"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        if self.op in _BY_PRESENCE:
            return _BY_PRESENCE[self.op](value, self.values)
        if value is None:
            return False
        try:
            have, want = int(value), int(next(iter(self.values)))
        except ValueError:
            return False
        return have > want if self.op == "gt" else have < want


_BY_PRESENCE: dict[str, Callable[[str | None, frozenset[str]], bool]] = {
    "exists": lambda value, values: value is not None,
    "!exists": lambda value, values: value is None,
    "=": lambda value, values: value is not None and value in values,
    "in": lambda value, values: value is not None and value in values,
    "!=": lambda value, values: value is None or value not in values,
    "notin": lambda value, values: value is None or value not in values,
}
"""The operators decided by the label's value being present and in the set (not by comparing numbers)."""


def valid_label_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    return bool(_KEY.match(key)) and len(prefix) <= _PREFIX_MAX and len(name) <= 63


def valid_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(_VALUE.match(value))


def _split_outside_parens(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError(f"unable to parse requirement: unbalanced ')' in {text!r}")
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth:
        raise SelectorError(f"unable to parse requirement: unclosed '(' in {text!r}")
    parts.append("".join(current))
    return parts


_SET = re.compile(r"^(?P<key>[^\s!=<>(),]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)\Z")
_CMP = re.compile(r"^(?P<key>[^\s!=<>(),]+)\s*(?P<op>==|=|!=|>|<)\s*(?P<value>[^\s!=<>(),]*)\Z")
_EXISTS = re.compile(r"^(?P<neg>!?)\s*(?P<key>[^\s!=<>(),]+)\Z")


def _check_key(key: str, text: str) -> None:
    if not valid_label_key(key):
        raise SelectorError(f"unable to parse requirement: invalid label key {key!r} in {text!r}")


def _check_value(value: str, text: str) -> None:
    if not valid_label_value(value):
        raise SelectorError(f"unable to parse requirement: invalid label value {value!r} in {text!r}")


def parse_labels(text: str | None) -> tuple[Requirement, ...]:
    """Parse a labelSelector; the empty selector matches everything."""
    if not text or not text.strip():
        return ()
    out = []
    for raw in _split_outside_parens(text):
        part = raw.strip()
        if not part:
            raise SelectorError(f"unable to parse requirement: empty requirement in {text!r}")
        if m := _SET.match(part):
            values = [v.strip() for v in m["values"].split(",")]
            for value in values:
                _check_value(value, text)
            _check_key(m["key"], text)
            out.append(Requirement(m["key"], m["op"], frozenset(values)))
        elif m := _CMP.match(part):
            _check_key(m["key"], text)
            op = {"==": "=", "=": "=", "!=": "!=", ">": "gt", "<": "lt"}[m["op"]]
            if op in ("gt", "lt") and not re.fullmatch(r"-?\d+", m["value"]):
                raise SelectorError(f"unable to parse requirement: {m['value']!r} is not an integer")
            if op in ("=", "!="):
                _check_value(m["value"], text)
            out.append(Requirement(m["key"], op, frozenset({m["value"]})))
        elif m := _EXISTS.match(part):
            _check_key(m["key"], text)
            out.append(Requirement(m["key"], "!exists" if m["neg"] else "exists"))
        else:
            raise SelectorError(f"unable to parse requirement: {part!r}")
    return tuple(out)


def match_labels(requirements: tuple[Requirement, ...], labels: Mapping[str, str]) -> bool:
    return all(r.matches(labels) for r in requirements)


def labels_of_selector(selector: Mapping[str, Any] | None) -> tuple[Requirement, ...] | None:
    """A ``metav1.LabelSelector`` (matchLabels + matchExpressions) as requirements.

    ``None`` means the selector selects nothing (absent); an empty one selects everything.
    """
    if selector is None:
        return None
    out = [Requirement(k, "=", frozenset({str(v)})) for k, v in (selector.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}
    for expr in selector.get("matchExpressions") or []:
        op = ops.get(expr.get("operator", ""))
        if op is None:
            raise SelectorError(f"invalid label selector operator {expr.get('operator')!r}")
        out.append(Requirement(expr.get("key", ""), op, frozenset(expr.get("values") or ())))
    return tuple(out)


# ---------------------------------------------------------------- fields


@dataclass(frozen=True)
class FieldTerm:
    path: str
    equal: bool
    value: str


def _unescape_split(text: str, seps: str) -> list[str]:
    """Split on unescaped separators; ``\\,`` ``\\=`` ``\\\\`` stand for themselves."""
    parts: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            current.append(text[i + 1])
            i += 2
            continue
        if char in seps:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    parts.append("".join(current))
    return parts


def parse_fields(text: str | None, resource: Selectable) -> tuple[FieldTerm, ...]:
    """Parse a fieldSelector, refusing fields the kind does not index (as the server does)."""
    if not text or not text.strip():
        return ()
    allowed = resource.selectable()
    out = []
    for part in _unescape_split(text, ","):
        m = re.fullmatch(r"\s*([^!=\s]+)\s*(==|=|!=)(.*)", part)
        if not m:
            raise SelectorError(f"invalid selector: {text!r}; can't understand {part!r}")
        path, op, value = m[1], m[2], m[3].strip()
        if path not in allowed:
            raise SelectorError(f"field label not supported: {path}")
        out.append(FieldTerm(path, op != "!=", value))
    return tuple(out)


def match_fields(terms: tuple[FieldTerm, ...], values: Mapping[str, str]) -> bool:
    return all((values.get(t.path, "") == t.value) == t.equal for t in terms)


def _lookup(obj: Mapping[str, Any], path: str) -> Any:
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def field_values(resource: Selectable, obj: Mapping[str, Any]) -> dict[str, str]:
    """The selectable field values of one object, computed once when it is written."""
    out = {path: _text(_lookup(obj, path)) for path in resource.selectable()}
    # Where the server formats a field specially, do the same.
    if resource.kind == "Node":
        out["spec.unschedulable"] = _text(bool(_lookup(obj, "spec.unschedulable")))
    elif resource.kind == "Pod":
        out["spec.hostNetwork"] = _text(bool(_lookup(obj, "spec.hostNetwork")))
    elif resource.kind == "Event":
        out["source"] = _text(_lookup(obj, "source.component") or _lookup(obj, "reportingComponent"))
    elif resource.kind == "Job":
        out["status.successful"] = _text(int(_lookup(obj, "status.succeeded") or 0))
    elif resource.kind == "ReplicaSet":
        out["status.replicas"] = _text(int(_lookup(obj, "status.replicas") or 0))
    return out
