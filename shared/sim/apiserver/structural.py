"""Custom resources pruned, defaulted and validated by their CRD's openAPIV3Schema, as a 1.34 server does.

The request pipeline (``admission``) calls, per write, in the order of the real server
(apiextensions-apiserver:pkg/apiserver/customresource_handler.go ``unstructuredSchemaCoercer``, then the
CR strategy): ``prune`` (unknown fields dropped and reported, which Strict/Warn field validation turns
into errors or warnings; non-nullable nulls without a default dropped), ``default``, then ``validate``
(schema keywords with ratcheting on update, embedded resources, list-type uniqueness, then the CEL
rules unless an earlier error blocks them). A schema is compiled once, when its CRD is registered:
``compile`` raises :class:`SchemaError` with everything the server would refuse the CRD for.

Modules: ``schemanode`` (the node tree), ``schemacheck`` and ``schemastructure`` (CRD-time checks of
a schema), ``openapivalidate`` (keyword checks), ``crdinvariants`` (list types, embedded objects),
``crdrules``/``crdruleeval`` (CEL, compiled and run), ``crdcheck`` (a whole CRD object). Version
conversion and scale-subresource checks are the caller's.
"""

from __future__ import annotations

import copy
from typing import Any

from shared.sim.apiserver import crdinvariants, crdruleeval, openapivalidate, schemacheck
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.schemanode import Node

# ObjectMeta's JSON fields (k8s.io/apimachinery/pkg/apis/meta/v1 types.go); any other key under a
# resource's metadata is unknown to the strict decoder and dropped.
OBJECT_META_FIELDS = (
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields",
)  # fmt: skip
_NESTED_META_FIELDS = {
    "ownerReferences": ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"),
    "managedFields": ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"),
}
_META_KEYS = frozenset({"apiVersion", "kind", "metadata"})
_BLOCKING = frozenset(
    {"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany", "FieldValueTypeInvalid"}
)
SKIPPED_RULES = FieldError(
    "<nil>",
    "FieldValueInvalid",
    "Invalid value: null: some validation rules were not checked because the object was invalid; correct the"
    " existing errors to complete validation",
)


class SchemaError(Exception):
    """A schema (or CRD) the real server refuses; ``errors`` are the 422 causes."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(e.text() for e in errors))
        self.errors = errors


# --- pruning (pkg/apiserver/schema/pruning/algorithm.go, defaulting/prunenulls.go) --------------------


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _prune(value: Any, node: Node | None, path: str, found: list[str], *, embedded: bool = False) -> None:
    if node is not None and node.preserve_unknown:
        _skip_prune(value, node, path, found, embedded=embedded)
        return
    if isinstance(value, dict):
        if node is None:
            for key in list(value):
                found.append(_key(path, key))
                del value[key]
            return
        for key in list(value):
            if (node.embedded or embedded) and key in _META_KEYS:
                continue
            sub = node.properties.get(key)
            if sub is not None:
                _prune(value[key], sub, _key(path, key), found)
            elif node.additional_allows is not None:
                _prune(value[key], node.additional, _key(path, key), found)
            else:
                found.append(_key(path, key))
                del value[key]
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _prune(item, node.items if node is not None else None, f"{path}[{i}]", found)


def _skip_prune(value: Any, node: Node | None, path: str, found: list[str], *, embedded: bool = False) -> None:
    if node is None:
        return
    if isinstance(value, dict):
        for key in list(value):
            if (node.embedded or embedded) and key in _META_KEYS:
                continue
            sub = node.properties.get(key)
            if sub is not None:
                _prune(value[key], sub, _key(path, key), found)
            elif node.additional_allows is not None:
                _prune(value[key], node.additional, _key(path, key), found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _skip_prune(item, node.items, f"{path}[{i}]", found)


def _drop_nulls(value: Any, node: Node | None) -> None:
    """PruneNonNullableNullsWithoutDefaults: a null the schema neither allows nor defaults goes."""
    if isinstance(value, dict):
        for key in list(value):
            sub = node.child(key) if node is not None else None
            if value[key] is None and sub is not None and not sub.nullable and not sub.has_default:
                del value[key]
            else:
                _drop_nulls(value[key], sub)
    elif isinstance(value, list):
        for item in value:
            _drop_nulls(item, node.items if node is not None else None)


def _strip_meta(meta: dict[str, Any], path: str, found: list[str]) -> None:
    """Keep ObjectMeta's fields (the strict decoder reports the rest, in document order)."""
    for key in list(meta):
        if key not in OBJECT_META_FIELDS:
            found.append(f"{path}.{key}")
            del meta[key]
        elif key in _NESTED_META_FIELDS and isinstance(meta[key], list):
            for i, entry in enumerate(meta[key]):
                if isinstance(entry, dict):
                    for inner in list(entry):
                        if inner not in _NESTED_META_FIELDS[key]:
                            found.append(f"{path}.{key}[{i}].{inner}")
                            del entry[inner]


def _embedded_meta(value: Any, node: Node | None, path: str, found: list[str]) -> None:
    """objectmeta.Coerce below the root: metadata of embedded resources is ObjectMeta too."""
    if node is None:
        return
    if isinstance(value, dict):
        if node.embedded and isinstance(value.get("metadata"), dict):
            _strip_meta(value["metadata"], _key(path, "metadata"), found)
        for key, item in value.items():
            if node.embedded and key in _META_KEYS:
                continue
            sub = node.properties.get(key)
            if sub is not None:
                _embedded_meta(item, sub, _key(path, key), found)
            elif node.additional_allows is not None:
                _embedded_meta(item, node.additional, _key(path, key), found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _embedded_meta(item, node.items, f"{path}[{i}]", found)


def pruned_copy(value: Any, node: Node) -> Any:
    """``value`` pruned by ``node`` (a copy): how a default is checked for unknown fields."""
    result = copy.deepcopy(value)
    _prune(result, node, "", [], embedded=node.embedded)
    return result


# --- defaulting (pkg/apiserver/schema/defaulting/algorithm.go) ------------------------------------------


def _default(value: Any, node: Node | None) -> None:
    if node is None:
        return
    if isinstance(value, dict):
        for key, sub in node.properties.items():
            if sub.has_default and (key not in value or (value[key] is None and not sub.nullable)):
                value[key] = copy.deepcopy(sub.default)
        for key in list(value):
            known = node.properties.get(key)
            if known is not None:
                _default(value[key], known)
            elif node.additional_allows is not None:
                extra = node.additional
                if extra is not None and value[key] is None and not extra.nullable:
                    value[key] = copy.deepcopy(extra.default) if extra.has_default else None
                _default(value[key], extra)
    elif isinstance(value, list):
        items = node.items
        for i, item in enumerate(value):
            if item is None and items is not None and not items.nullable:
                value[i] = copy.deepcopy(items.default) if items.has_default else None
            _default(value[i], items)


class StructuralSchema:
    """A compiled CRD version schema: prune, default and validate custom resources with it."""

    def __init__(self, root: Node, *, preserve_unknown_fields: bool = False) -> None:
        self.root = root
        self.preserve_unknown_fields = preserve_unknown_fields

    @classmethod
    def compile(
        cls,
        schema: dict[str, Any],
        *,
        path: str,
        status_enabled: bool = False,
        preserve_unknown_fields: bool = False,
    ) -> StructuralSchema:
        """Check ``schema`` as the server checks a CRD's; SchemaError with the causes when refused.

        ``path`` prefixes the error fields: ``spec.validation.openAPIV3Schema`` when all versions
        share one schema (the v1 conversion moves it there), else
        ``spec.versions[i].schema.openAPIV3Schema``.
        """
        node, errors = schemacheck.schema_errors(schema, path, status_enabled=status_enabled)
        if errors:
            raise SchemaError(errors)
        return cls(node, preserve_unknown_fields=preserve_unknown_fields)

    def prune(self, obj: dict[str, Any]) -> list[str]:
        """Drop unknown fields in place; the dropped paths as Strict/Warn report them.

        ObjectMeta's unknown fields come first (``metadata.foo``), then the schema's (sorted), then
        those under embedded resources' metadata. Nulls the schema does not allow are dropped too
        (not reported).
        """
        found: list[str] = []
        if isinstance(obj.get("metadata"), dict):
            _strip_meta(obj["metadata"], "metadata", found)
        if not self.preserve_unknown_fields:
            pruned: list[str] = []
            _prune(obj, self.root, "", pruned, embedded=True)
            found += sorted(pruned)
            _drop_nulls(obj, self.root)
        embedded: list[str] = []
        for key, item in obj.items():
            if key not in _META_KEYS:
                _embedded_meta(item, self.root.properties.get(key), key, embedded)
        return found + embedded

    def default(self, obj: dict[str, Any]) -> None:
        """Apply the schema's defaults in place (also on read, before returning a stored object)."""
        _default(obj, self.root)

    def validate(
        self, obj: dict[str, Any], *, old: dict[str, Any] | None, prior: list[FieldError] | None = None
    ) -> list[FieldError]:
        """The schema's causes for ``obj`` (``old`` on update), after the caller's own ``prior`` ones.

        ``prior`` (metadata and type-meta causes the caller found) is not returned, only consulted:
        like those found here, a Required/NotSupported/TooLong/TooMany/TypeInvalid cause keeps the CEL
        rules from running and adds the ``<nil>`` "some validation rules were not checked" cause.
        """
        old_value = old if old is not None else openapivalidate.UNCORRELATED
        errors = openapivalidate.validate(self.root, obj, old=old_value)
        errors += crdinvariants.embedded_errors(self.root, obj)
        if old is None or not crdinvariants.list_errors(self.root, old):
            errors += crdinvariants.list_errors(self.root, obj)
        if self.root.ruled:
            if any(e.type in _BLOCKING for e in [*(prior or []), *errors]):
                errors.append(SKIPPED_RULES)
            else:
                errors += crdruleeval.validate(self.root, obj, old)
        return errors


def crd_errors(crd: dict[str, Any], *, old: dict[str, Any] | None) -> list[FieldError]:
    """Everything the real server refuses a CustomResourceDefinition create (or update) for."""
    from shared.sim.apiserver import crdcheck

    return crdcheck.crd_errors(crd, old=old)
