"""Custom resources pruned, defaulted and validated by their CRD's openAPIV3Schema, as a 1.34 server does.

The request pipeline (``admission``) calls, per write, in the order of the real server
(apiextensions-apiserver:pkg/apiserver/customresource_handler.go ``unstructuredSchemaCoercer``, then the
CR strategy): ``prune`` (unknown fields dropped and reported, which Strict/Warn field validation turns
into errors or warnings; non-nullable nulls without a default dropped), ``default``, then ``validate``
(schema keywords with ratcheting on update, embedded resources, list-type uniqueness, then the CEL
rules unless an earlier error blocks them). A schema is compiled once, when its CRD is registered:
``compile`` raises :class:`SchemaError` with everything the server would refuse the CRD for.

Modules: ``schemanode`` (the node tree), ``schemaprune`` (the pruning and defaulting walks),
``schemacheck`` and ``schemastructure`` (CRD-time checks of a schema), ``openapivalidate`` (keyword
checks), ``crdinvariants`` (list types, embedded objects), ``crdrules``/``crdruleeval`` (CEL, compiled
and run), ``crdcheck`` (a whole CRD object). Version conversion and scale-subresource checks are the
caller's.
"""

from __future__ import annotations

from typing import Any

from shared.sim.apiserver import crdcheck, crdinvariants, crdruleeval, openapivalidate, schemacheck, schemaprune
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.schemanode import Node

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
            schemaprune.strip_meta(obj["metadata"], "metadata", found)
        if not self.preserve_unknown_fields:
            pruned: list[str] = []
            schemaprune.prune(obj, self.root, "", pruned, embedded=True)
            found += sorted(pruned)
            schemaprune.drop_nulls(obj, self.root)
        embedded: list[str] = []
        for key, item in obj.items():
            if key not in schemaprune.META_KEYS:
                schemaprune.embedded_meta(item, self.root.properties.get(key), key, embedded)
        return found + embedded

    def default(self, obj: dict[str, Any]) -> None:
        """Apply the schema's defaults in place (also on read, before returning a stored object)."""
        schemaprune.default(obj, self.root)

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
    return crdcheck.crd_errors(crd, old=old)
