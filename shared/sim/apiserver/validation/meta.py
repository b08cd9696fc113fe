"""ObjectMeta and label selectors, checked as ``apimachinery:pkg/api/validation/objectmeta.go`` does.

Names (per kind, with ``generateName`` judged as a prefix), labels, annotation keys and their
256 KiB total, owner references, finalizers (core kinds also refuse unqualified names that are
not the standard ones, ``pkg/apis/core/validation``), and ``metav1.LabelSelector``
(``apimachinery:pkg/apis/meta/v1/validation``). Server-owned metadata (uid, timestamps,
generation) is kept by :mod:`shared.sim.apiserver.api` and not judged here; managedFields are not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import formats

NameRule = Callable[[str, bool], list[str]]
MAX_ANNOTATION_BYTES = 256 * 1024
IMMUTABLE = "field is immutable"
_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
_BANNED_OWNERS = frozenset({("", "v1", "Event")})
_OWNER_REF_ORDER = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")
_SELECTOR_ORDER = ("matchLabels", "matchExpressions")
_REQUIREMENT_ORDER = ("key", "operator", "values")


def go_json(value: Any, order: Sequence[str] = ()) -> str:
    """A Go struct as ``encoding/json`` writes it: fields in declaration order (``order``),
    maps with sorted keys, no spaces."""
    if isinstance(value, Mapping) and order:
        ranked = {k: value[k] for k in order if k in value}
        ranked.update({k: v for k, v in value.items() if k not in ranked})
        inner = ",".join(f"{json.dumps(k)}:{apierrors.show(v)}" for k, v in ranked.items())
        return "{" + inner + "}"
    return apierrors.show(value)


GoField = tuple[str, str, Any]
"""An internal API type's field: its JSON name, its Go name, its zero value."""


def internal_json(
    value: Any, fields: Sequence[GoField], nested: Mapping[str, Callable[[Any], str]] | None = None
) -> str:
    """An internal API struct as ``encoding/json`` prints it in a 1.34 field error: internal types
    carry no JSON tags, so every field appears, under its Go name, zero values included."""
    if not isinstance(value, Mapping):
        return "null"
    parts = []
    for key, go_name, zero in fields:
        item = value.get(key, zero)
        shown = (nested or {}).get(key)
        parts.append(f'"{go_name}":{shown(item) if shown is not None else apierrors.show(item)}')
    return "{" + ",".join(parts) + "}"


def invalid_internal(field: str, value: Any, detail: str, fields: Sequence[GoField]) -> FieldError:
    """``Invalid value`` for a field holding an internal API struct."""
    return FieldError(field, "FieldValueInvalid", f"Invalid value: {internal_json(value, fields)}: {detail}")


def invalid_struct(field: str, value: Any, detail: str, order: Sequence[str] = ()) -> FieldError:
    """``Invalid value`` for a field holding a (JSON-tagged) meta/v1 struct, in its field order."""
    return FieldError(field, "FieldValueInvalid", f"Invalid value: {go_json(value, order)}: {detail}")


def selector_json(selector: Any) -> str:
    """A ``metav1.LabelSelector`` (tagged, ``omitempty``) as JSON."""
    if not isinstance(selector, Mapping):
        return apierrors.show(selector)
    shown = dict(selector)
    if isinstance(shown.get("matchExpressions"), list):
        inner = ",".join(go_json(r, _REQUIREMENT_ORDER) for r in shown["matchExpressions"])
        body = [f'"matchLabels":{apierrors.show(shown["matchLabels"])}'] if "matchLabels" in shown else []
        return "{" + ",".join([*body, f'"matchExpressions":[{inner}]']) + "}"
    return go_json(shown, _SELECTOR_ORDER)


def immutable(field: str, new: Any, old: Any) -> list[FieldError]:
    """``ValidateImmutableField``: the new value, reported when it differs from the old one."""
    return [] if new == old else [apierrors.invalid_value(field, new if new is not None else "null", IMMUTABLE)]


def required_choice(field: str, value: Any, supported: Sequence[str]) -> list[FieldError]:
    """A required field of a fixed set: ``Required value`` when empty, ``Unsupported value`` when
    not one of ``supported``."""
    if not value:
        return [apierrors.required(field, "")]
    if value not in supported:
        return [apierrors.not_supported(field, value, supported)]
    return []


def nonnegative(field: str, value: Any) -> list[FieldError]:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [apierrors.invalid_value(field, value, "must be greater than or equal to 0")]
    return []


# ------------------------------------------------------------ labels and annotations
def label_key(key: str, field: str) -> list[FieldError]:
    return [apierrors.invalid_value(field, key, m) for m in formats.qualified_name(key)]


def labels(values: Any, field: str) -> list[FieldError]:
    """``ValidateLabels``: every error is reported on the map, not on the key."""
    errors: list[FieldError] = []
    if not isinstance(values, Mapping):
        return errors
    for key, value in values.items():
        errors += label_key(str(key), field)
        errors += [apierrors.invalid_value(field, value, m) for m in formats.label_value(str(value))]
    return errors


def annotation_keys(values: Any, field: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if not isinstance(values, Mapping):
        return errors
    for key in values:
        # Annotation keys are qualified names, case-insensitively.
        errors += [apierrors.invalid_value(field, key, m) for m in formats.qualified_name(str(key).lower())]
    if sum(len(str(k)) + len(str(v)) for k, v in values.items()) > MAX_ANNOTATION_BYTES:
        errors.append(apierrors.too_long(field, MAX_ANNOTATION_BYTES))
    return errors


# ------------------------------------------------------------ owner references and finalizers
def _group_version(api_version: str) -> tuple[str, str] | None:
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def owner_references(refs: Any, field: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if not isinstance(refs, list):
        return errors
    first_controller = ""
    for ref in refs:
        if not isinstance(ref, Mapping):
            continue
        api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
        gv = _group_version(api_version)
        group, version = gv if gv is not None else ("", "")
        if not version:
            errors.append(apierrors.invalid_value(f"{field}.apiVersion", api_version, "version must not be empty"))
        for part in ("kind", "name", "uid"):
            if not ref.get(part):
                errors.append(apierrors.invalid_value(f"{field}.{part}", str(ref.get(part) or ""), "must not be empty"))
        if (group, version, kind) in _BANNED_OWNERS:
            errors.append(
                invalid_struct(
                    field, ref, f"{group}/{version}, Kind={kind} is disallowed from being an owner", _OWNER_REF_ORDER
                )
            )
        if ref.get("controller") is True:
            this = f"{kind}/{ref.get('name', '')}"
            if first_controller:
                shown = "[" + ",".join(go_json(r, _OWNER_REF_ORDER) for r in refs) + "]"
                errors.append(
                    FieldError(
                        field,
                        "FieldValueInvalid",
                        f"Invalid value: {shown}: Only one reference can have Controller set to true. "
                        f'Found "true" in references for {first_controller} and {this}',
                    )
                )
            else:
                first_controller = this
    return errors


def finalizers(names: Any, field: str, *, kube: bool) -> list[FieldError]:
    """Qualified names; ``kube`` adds core's rule that an unprefixed one must be a standard one."""
    errors: list[FieldError] = []
    if not isinstance(names, list):
        return errors
    for name in names:
        errors += [apierrors.invalid_value(field, name, m) for m in formats.qualified_name(str(name))]
    if "orphan" in names and "foregroundDeletion" in names:
        errors.append(
            apierrors.invalid_value(field, names, "finalizer orphan and foregroundDeletion cannot be both set")
        )
    if kube:
        errors += kube_finalizers(names, field)
    return errors


def kube_finalizer(name: str, field: str) -> list[FieldError]:
    """Core's extra rule: an unprefixed finalizer must be one of the standard ones."""
    if "/" in name or name in _STANDARD_FINALIZERS:
        return []
    return [apierrors.invalid_value(field, name, "name is neither a standard finalizer name nor is it fully qualified")]


def kube_finalizers(names: list[Any], field: str) -> list[FieldError]:
    return [e for i, name in enumerate(names) for e in kube_finalizer(str(name), f"{field}[{i}]")]


# ------------------------------------------------------------ the whole ObjectMeta
def object_meta(md: Mapping[str, Any], name_rule: NameRule, *, kube: bool = True) -> list[FieldError]:
    """``ValidateObjectMeta`` on create (the name already generated from ``generateName``)."""
    errors: list[FieldError] = []
    generate = str(md.get("generateName") or "")
    if generate:
        errors += [apierrors.invalid_value("metadata.generateName", generate, m) for m in name_rule(generate, True)]
    name = str(md.get("name") or "")
    if not name:
        errors.append(apierrors.required("metadata.name", "name or generateName is required"))
    else:
        errors += [apierrors.invalid_value("metadata.name", name, m) for m in name_rule(name, False)]
    return errors + _common(md, kube=kube)


def object_meta_update(md: Mapping[str, Any], *, kube: bool = True) -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: the mutable parts (api keeps the immutable ones)."""
    errors = _common(md, kube=False)
    if kube:
        errors += kube_finalizers(list(md.get("finalizers") or []), "metadata.finalizers")
    return errors


def _common(md: Mapping[str, Any], *, kube: bool) -> list[FieldError]:
    errors = labels(md.get("labels"), "metadata.labels")
    errors += annotation_keys(md.get("annotations"), "metadata.annotations")
    errors += owner_references(md.get("ownerReferences"), "metadata.ownerReferences")
    errors += finalizers(md.get("finalizers"), "metadata.finalizers", kube=kube)
    return errors


# ------------------------------------------------------------ label selectors
def label_selector(selector: Any, field: str) -> list[FieldError]:
    """``ValidateLabelSelector`` with invalid label values refused."""
    errors: list[FieldError] = []
    if not isinstance(selector, Mapping):
        return errors
    errors += labels(selector.get("matchLabels"), f"{field}.matchLabels")
    for i, req in enumerate(selector.get("matchExpressions") or []):
        path = f"{field}.matchExpressions[{i}]"
        req = req if isinstance(req, Mapping) else {}
        op, values = req.get("operator"), req.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                errors.append(
                    apierrors.required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errors.append(
                    apierrors.forbidden(
                        f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                    )
                )
        else:
            errors.append(apierrors.invalid_value(f"{path}.operator", op or "", "not a valid selector operator"))
        errors += label_key(str(req.get("key") or ""), f"{path}.key")
        for j, value in enumerate(values):
            errors += [
                apierrors.invalid_value(f"{path}.values[{j}]", value, m) for m in formats.label_value(str(value))
            ]
    return errors


def selector_is_empty(selector: Any) -> bool:
    return not isinstance(selector, Mapping) or not (selector.get("matchLabels") or selector.get("matchExpressions"))


def selector_matches(selector: Any, values: Mapping[str, str] | None) -> bool:
    """``LabelSelectorAsSelector(s).Matches(labels)``; a missing selector matches nothing."""
    if not isinstance(selector, Mapping):
        return False
    have = dict(values or {})
    if any(have.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_requirement_holds(req, have) for req in selector.get("matchExpressions") or [])


def _requirement_holds(req: Any, have: Mapping[str, str]) -> bool:
    """One ``matchExpressions`` requirement; an unknown operator holds (the selector was validated)."""
    key, op, allowed = req.get("key"), req.get("operator"), [str(v) for v in req.get("values") or []]
    present = key in have
    if op == "In":
        return present and have[key] in allowed
    if op == "NotIn":
        return not (present and have[key] in allowed)
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    return True


_PLAIN_BOOLS = frozenset({"hostNetwork", "hostPID", "hostIPC", "stdin", "stdinOnce", "tty", "readOnly"})


def semantic(value: Any) -> Any:
    """A value as ``apiequality.Semantic.DeepEqual`` sees it: empty maps, lists and strings and
    null equal to absent, and a plain (non-pointer) boolean ``false`` equal to absent."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            kept = semantic(item)
            if kept in (None, "", [], {}) or (key in _PLAIN_BOOLS and kept is False):
                continue
            out[key] = kept
        return out
    if isinstance(value, list):
        return [semantic(v) for v in value]
    return value
