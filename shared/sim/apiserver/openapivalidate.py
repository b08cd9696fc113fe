"""Checking a custom resource against its schema's keywords, as kube-openapi's validator does.

The real server runs kube-openapi's SchemaValidator over the whole object and turns each result into a
field error (apiextensions-apiserver:pkg/apiserver/validation/validation.go
``kubeOpenAPIResultToFieldErrors``; messages from kube-openapi:pkg/validation/errors/schema.go). The
order of checks per node follows kube-openapi:pkg/validation/validate/schema.go (type, allOf/anyOf/
oneOf/not, string, format, number, array, enum, object) and each checker's own early returns (a string
reports only the first of maxLength, minLength, pattern). Messages name the value by its kube-openapi
path (``spec.items[0].name in body ...``); the cause ``field`` is that path under ``prefix``.

On update the checks ratchet (gate CRDValidationRatcheting, on in 1.34): a node whose value equals its
correlated old value drops its errors (apiextensions-apiserver:pkg/apiserver/validation/ratcheting.go).
Properties correlate by key, list items by index, or by key for ``x-kubernetes-list-type: map``; set
and atomic lists do not correlate.

Where Go iterates a map (properties, map entries) the real order is random; here it is schema order.
``oneOf``/``anyOf`` report the failing alternative with the fewest errors (kube-openapi picks the one
with the most passing checks).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from shared.sim.apiserver import schemaformats
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.schemanode import Node

UNCORRELATED: Any = type("Uncorrelated", (), {"__repr__": lambda self: "UNCORRELATED"})()
"""No old value to compare with: validate without ratcheting."""


def go_float(value: float) -> str:
    """``fmt.Sprintf("%v", f)`` for a float64: shortest digits, exponent form below 1e-04 and from 1e+06
    (strconv ftoa.go: ``eprec = 6`` for the shortest precision)."""
    if math.isnan(value) or math.isinf(value):
        return {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[repr(value)]
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(str(d) for d in digits)
    exp = len(text) - 1 + int(exponent)
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{prefix}0.{'0' * (-exp - 1)}{text}"
    whole, frac = text[: exp + 1].ljust(exp + 1, "0"), text[exp + 1 :]
    return f"{prefix}{whole}.{frac}" if frac else f"{prefix}{whole}"


def go_number(value: int | float) -> str:
    return go_float(value) if isinstance(value, float) else str(value)


def go_value(value: Any) -> str:
    """A bad value as a 1.34 field error prints it: %v for numbers/bools, %q strings, else JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return go_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "boolean"),  # before int: a bool is an int in Python
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
)


def kind_of(value: Any) -> str:
    """The JSON type name kube-openapi infers from a decoded value."""
    if value is None:
        return "null"
    return next((name for types, name in _KINDS if isinstance(value, types)), "object")


def same(a: Any, b: Any) -> bool:
    """Go's reflect.DeepEqual on decoded JSON: 1, 1.0 and true all differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


class _Check:
    """One validation run: where fields are reported and how names read in messages."""

    def __init__(self, prefix: str | None) -> None:
        self.prefix = prefix

    def field(self, name: str) -> str:
        if name and name != ".":
            child = name[1:] if name.startswith(".") else name
            return f"{self.prefix}.{child}" if self.prefix else child
        return self.prefix if self.prefix is not None else "<nil>"

    def err(self, kind: str, name: str, body: str) -> FieldError:
        return FieldError(self.field(name), kind, body)

    def invalid(self, name: str, value: Any, detail: str) -> FieldError:
        return self.err("FieldValueInvalid", name, f"Invalid value: {go_value(value)}: {detail}")

    def type_invalid(self, name: str, value: Any, detail: str) -> FieldError:
        return self.err("FieldValueTypeInvalid", name, f"Invalid value: {go_value(value)}: {detail}")

    def composite(self, detail: str) -> FieldError:
        # errors.New(CompositeErrorCode, ...) carries no name: reported at the validator's root path.
        return FieldError(
            self.prefix if self.prefix is not None else "<nil>", "FieldValueInvalid", f'Invalid value: "": {detail}'
        )

    # --- one node ---------------------------------------------------------------------------------

    def node(self, node: Node, value: Any, name: str, old: Any) -> list[FieldError]:
        errors = self._node(node, value, name, old)
        if errors and old is not UNCORRELATED and same(old, value):
            return []  # ratcheting: an unchanged value keeps its old errors to itself
        return errors

    def _node(self, node: Node, value: Any, name: str, old: Any) -> list[FieldError]:
        if value is None:
            errors = self._type(node, value, name)
            return errors + self._enum(node, value, name)
        errors = self._type(node, value, name)
        errors += self._combinators(node, value, name, old)
        if isinstance(value, str):
            errors += self._string(node, value, name)
            fmt = node.checked_format
            if fmt and not schemaformats.valid(fmt, value):
                errors.append(
                    self.type_invalid(name, value, f"{name} in body must be of type {fmt}: {go_value(value)}")
                )
        elif isinstance(value, int | float) and not isinstance(value, bool):
            errors += self._number(node, value, name)
        elif isinstance(value, list):
            errors += self._array(node, value, name, old)
        errors += self._enum(node, value, name)
        if isinstance(value, dict):
            errors += self._object(node, value, name, old)
        return errors

    def _type(self, node: Node, value: Any, name: str) -> list[FieldError]:
        types, fmt = node.types, node.checked_format
        if not types and not fmt:
            return []
        wanted = ",".join(types)
        if value is None:
            if types and "null" not in types and not node.nullable:
                return [self.type_invalid(name, "null", f'{name} in body must be of type {wanted}: "null"')]
            return []
        kind = kind_of(value)
        fits = kind in types or (kind == "number" and float(value).is_integer() and "integer" in types)
        fits = fits or (kind == "integer" and "number" in types)
        data_format = {"integer": "int64", "number": "float64"}.get(kind, "")
        if kind not in ("string", "array") and fmt and not (fits or data_format == fmt):
            return [
                self.type_invalid(name, data_format, f"{name} in body must be of type {fmt}: {go_value(data_format)}")
            ]
        if fits or (not ("number" in types or "integer" in types) and fmt and kind in ("string", "array")):
            return []
        return [self.type_invalid(name, kind, f"{name} in body must be of type {wanted}: {go_value(kind)}")]

    def _combinators(self, node: Node, value: Any, name: str, old: Any) -> list[FieldError]:
        errors: list[FieldError] = []
        if node.any_of:
            results = [self._node(sub, value, name, old) for sub in node.any_of]
            if all(results):
                errors.append(self.composite(f"{json.dumps(name)} must validate at least one schema (anyOf)"))
                errors += _fewest(results)
        if node.one_of:
            results = [self._node(sub, value, name, old) for sub in node.one_of]
            passed = sum(1 for r in results if not r)
            if passed != 1:
                more = "Found none valid" if passed == 0 else f"Found {passed} valid alternatives"
                errors.append(
                    self.composite(f"{json.dumps(name)} must validate one and only one schema (oneOf). {more}")
                )
                if passed == 0:
                    errors += _fewest(results)
        if node.all_of:
            results = [self._node(sub, value, name, old) for sub in node.all_of]
            for result in results:
                errors += result
            failed = sum(1 for r in results if r)
            if failed:
                more = ". None validated" if failed == len(results) else ""
                errors.append(self.composite(f"{json.dumps(name)} must validate all the schemas (allOf){more}"))
        if node.not_ is not None and not self._node(node.not_, value, name, old):
            errors.append(self.composite(f"{json.dumps(name)} must not validate the schema (not)"))
        return errors

    def _string(self, node: Node, value: str, name: str) -> list[FieldError]:
        if node.max_length is not None and len(value) > node.max_length:
            body = f"Too long: may not be more than {node.max_length} bytes"
            return [self.err("FieldValueTooLong", name, body)]
        if node.min_length is not None and len(value) < node.min_length:
            return [self.invalid(name, value, f"{name} in body should be at least {node.min_length} chars long")]
        if node.pattern is not None and not _matches(node.pattern, value):
            return [self.invalid(name, value, f"{name} in body should match '{node.pattern}'")]
        return []

    def _number(self, node: Node, value: int | float, name: str) -> list[FieldError]:
        errors: list[FieldError] = []
        as_int = isinstance(value, int)
        factor = node.multiple_of
        if factor is not None:
            if as_int and int(factor) != 0 and value % int(factor) != 0:
                errors.append(self.invalid(name, value, f"{name} in body should be a multiple of {int(factor)}"))
            elif not as_int and factor > 0:
                ratio = value / factor if factor >= 1 else 1 / factor * value
                if abs(ratio - round(ratio)) > 1e-9:
                    errors.append(
                        self.invalid(name, value, f"{name} in body should be a multiple of {go_float(float(factor))}")
                    )
        for bound, exclusive, over, word in (
            (node.maximum, node.exclusive_maximum, True, "less than"),
            (node.minimum, node.exclusive_minimum, False, "greater than"),
        ):
            if bound is None:
                continue
            limit: int | float = int(bound) if as_int else float(bound)
            bad = (
                (value >= limit if exclusive else value > limit)
                if over
                else (value <= limit if exclusive else value < limit)
            )
            if bad:
                shown = str(limit) if as_int else go_float(float(limit))
                relation = word if exclusive else f"{word} or equal to"
                errors.append(self.invalid(name, value, f"{name} in body should be {relation} {shown}"))
        return errors

    def _array(self, node: Node, value: list[Any], name: str, old: Any) -> list[FieldError]:
        errors: list[FieldError] = []
        if node.items is not None:
            olds = _correlate_items(node, value, old)
            for i, item in enumerate(value):
                errors += self.node(node.items, item, f"{name}[{i}]", olds[i])
        size = len(value)
        if node.min_items is not None and size < node.min_items:
            errors.append(self.invalid(name, size, f"{name} in body should have at least {node.min_items} items"))
        if node.max_items is not None and size > node.max_items:
            errors.append(
                self.err("FieldValueTooMany", name, f"Too many: {size}: must have at most {node.max_items} items")
            )
        if node.unique_items and any(same(a, b) for i, a in enumerate(value) for b in value[:i]):
            errors.append(self.invalid(name, "", f"{name} in body shouldn't contain duplicates"))
        return errors

    def _enum(self, node: Node, value: Any, name: str) -> list[FieldError]:
        if not node.enum or (value is not None and any(_enum_match(value, e) for e in node.enum)):
            return []
        allowed = ", ".join(json.dumps(e if isinstance(e, str) else _json(e), ensure_ascii=False) for e in node.enum)
        return [
            self.err(
                "FieldValueNotSupported", name, f"Unsupported value: {go_value(value)}: supported values: {allowed}"
            )
        ]

    def _object(self, node: Node, value: dict[str, Any], name: str, old: Any) -> list[FieldError]:
        errors = self._property_count(node, len(value), name)
        olds = old if isinstance(old, dict) else {}
        extra = [key for key in value if key not in node.properties]
        if node.additional_allows is False:
            errors += [self.invalid(name, key, f"{name}.{key} in body is a forbidden property") for key in extra]
        elif node.additional is not None:
            for key in extra:
                errors += self.node(node.additional, value[key], f"{name}.{key}", olds.get(key, UNCORRELATED))
        for key, sub in node.properties.items():
            if key in value:
                child = f"{name}.{key}" if name else key
                errors += self.node(sub, value[key], child, olds.get(key, UNCORRELATED))
        errors += [
            self.err("FieldValueRequired", f"{name}.{key}", "Required value")
            for key in node.required
            if key not in value
        ]
        return errors

    def _property_count(self, node: Node, count: int, name: str) -> list[FieldError]:
        errors: list[FieldError] = []
        if node.min_properties is not None and count < node.min_properties:
            why = f"{name} in body should have at least {node.min_properties} properties"
            errors.append(self.invalid(name, count, why))
        if node.max_properties is not None and count > node.max_properties:
            body = f"Too many: {count}: must have at most {node.max_properties} items"
            errors.append(self.err("FieldValueTooMany", name, body))
        return errors


def _fewest(results: list[list[FieldError]]) -> list[FieldError]:
    return sorted(results, key=len)[0]


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def _enum_match(value: Any, allowed: Any) -> bool:
    """Go converts the value to the enum entry's type before DeepEqual (so 1 matches 1.0)."""
    if allowed is None:
        return False
    if isinstance(allowed, bool) or isinstance(value, bool):
        return type(allowed) is type(value) and allowed == value
    if isinstance(allowed, int | float) and isinstance(value, int | float):
        return (int(value) if isinstance(allowed, int) else float(value)) == allowed
    return same(value, allowed)


_PATTERNS: dict[str, Any] = {}


def compile_pattern(pattern: str) -> tuple[Any, str | None]:
    """``pattern`` compiled with RE2 (Go's regexp syntax: no lookaround, no backreferences), or the error."""
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options=options), None
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return None, detail


def _matches(pattern: str, value: str) -> bool:
    """Go's regexp MatchString: a search; a pattern that does not compile never matches."""
    compiled = _PATTERNS.get(pattern, ...)
    if compiled is ...:
        compiled, _ = compile_pattern(pattern)
        if len(_PATTERNS) < 1024:
            _PATTERNS[pattern] = compiled
    return compiled is not None and compiled.search(value) is not None


def _correlate_items(node: Node, value: list[Any], old: Any) -> list[Any]:
    """Each new item's old counterpart, or UNCORRELATED (ratcheting.go correlateOldValueForChildAtNewIndex)."""
    none = [UNCORRELATED] * len(value)
    if not isinstance(old, list):
        return none
    if node.list_type == "map":
        keyed: dict[str, Any] = {}
        for item in old:
            if isinstance(item, dict):
                keyed.setdefault(_json([item.get(k) for k in node.map_keys]), item)
        return [
            keyed.get(_json([item.get(k) for k in node.map_keys]), UNCORRELATED)
            if isinstance(item, dict)
            else UNCORRELATED
            for item in value
        ]
    if node.list_type in ("set", "atomic"):
        return none
    return [old[i] if i < len(old) and old[i] is not None else UNCORRELATED for i in range(len(value))]


def validate(
    node: Node, value: Any, *, prefix: str | None = None, name: str = "", old: Any = UNCORRELATED
) -> list[FieldError]:
    """Every keyword error of ``value`` against ``node``; pass ``old`` on update to ratchet."""
    return _Check(prefix).node(node, value, name, old)
