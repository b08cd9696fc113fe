"""What happens to a write between the decoded body and the store: field validation, pruning,
schema defaults and schema validation — in the order a real 1.34 server runs them.

Two stages, called by the verbs in :mod:`shared.sim.apiserver.api`:

- :func:`decode` runs where the real server decodes the body. Unknown fields (and duplicate
  fields the handler found in the JSON text) are what ``fieldValidation`` governs: ``Strict``
  refuses them (400 on create/update, 422 on a patch), ``Warn`` — the server's default when the
  request does not say — drops them and answers one ``Warning`` header each, ``Ignore`` drops
  them silently (apiserver:pkg/endpoints/handlers/rest.go ``fieldValidation``). For a built-in
  kind the fields come from the 1.34 schemas (:mod:`shared.sim.apiserver.kinds`) and a value of
  the wrong JSON type is the decoder's 400; for a custom resource pruning by the CRD's structural
  schema is the unknown-field detector (apiextensions-apiserver ``schemaCoercingDecoder``).
- :func:`validate` runs where the real strategy validates: for a custom resource, schema
  defaults then the openAPIV3Schema and its ``x-kubernetes-validations`` (422 ``Invalid``, the
  group-qualified kind); built-in kinds are checked by :mod:`shared.sim.apiserver.defaults`.

Two admission plugins that read the store live here too: NamespaceLifecycle
(:func:`check_namespace_open`, no new object in a namespace that is missing or terminating) and
Priority's lookup of the PriorityClass a new pod names (:func:`priorities`).

Requests the simulator makes to itself (seeding, its controllers) use ``Strict``: an unknown field
written by the simulator is a bug in the simulator, and should fail loudly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from shared.sim.apiserver import apierrors, crdcheck, kinds, store, structural
from shared.sim.apiserver.apierrors import ApiError

if TYPE_CHECKING:
    from shared.sim.apiserver import resources

Directive = Literal["Strict", "Warn", "Ignore"]
DIRECTIVES: tuple[str, ...] = ("Ignore", "Strict", "Warn")
Operation = Literal["create", "update", "patch", "apply"]
_CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
_OPTIONS_KIND = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions", "apply": "PatchOptions"}


@dataclass
class WriteOptions:
    """How one write asked to be treated, and what it collected on the way."""

    directive: Directive = "Strict"
    duplicates: list[str] = field(default_factory=list)
    """Paths of fields that appeared twice in the JSON text (the last one won)."""
    warnings: list[str] = field(default_factory=list)
    """Texts for ``Warning: 299 - "<text>"`` response headers, in order, without repeats."""
    manager: str = ""
    """The field manager (``fieldManager``, else the User-Agent's product); "" records no ownership
    (the simulator's own writes)."""
    force: bool = False
    """``force=true`` on an apply: take the conflicting fields instead of refusing."""

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)


def directive_of(value: str | None, *, operation: Operation) -> Directive:
    """The ``fieldValidation`` query parameter; absent means Warn (the server's default)."""
    if value in (None, ""):
        return "Warn"
    if value not in DIRECTIVES:
        # apimachinery:pkg/apis/meta/v1/validation/validation.go ValidateFieldValidation
        raise apierrors.invalid(
            _OPTIONS_KIND[operation],
            "",
            [apierrors.not_supported("fieldValidation", value, ("", *DIRECTIVES))],
        )
    return value  # type: ignore[return-value]


def decode(
    r: resources.Resource,
    obj: dict[str, Any],
    *,
    options: WriteOptions,
    operation: Operation,
    patched: bool = False,
) -> None:
    """Unknown and duplicate fields, per the directive; type errors of built-in kinds. In place.

    ``patched`` says ``obj`` is the result of applying a (non-apply) patch: a Strict refusal
    there is the 422 with the ``patch`` cause, not the decoder's 400
    (apiserver:pkg/endpoints/handlers/patch.go).
    """
    unknown = _unknown_fields(r, obj)
    problems = [f'duplicate field "{p}"' for p in options.duplicates] + [f'unknown field "{p}"' for p in unknown]
    if not problems:
        return
    if options.directive == "Strict":
        raise _strict_refusal(r, obj, problems, operation=operation, patched=patched)
    if options.directive == "Warn":
        for problem in problems:
            options.warn(problem)


def _unknown_fields(r: resources.Resource, obj: dict[str, Any]) -> list[str]:
    """Prune ``obj`` by its kind's schema; the paths pruned. The decoder's 400 for a mistyped value."""
    if r.crd:
        return r.schema.prune(obj) if r.schema is not None else []
    unknown: list[str] = []
    schema = kinds.schema_for(r.group, r.version, r.kind)
    if schema is not None:
        mistyped = schema.decode_errors(obj)
        if mistyped:
            raise _cannot_handle(r, mistyped[0])
        unknown = schema.prune(obj)
    if (r.group, r.kind) == _CRD:
        keywords, mistyped_keyword = crdcheck.decode_problems(obj)
        if mistyped_keyword:
            raise _cannot_handle(r, mistyped_keyword)
        unknown += keywords
    return unknown


def _strict_refusal(
    r: resources.Resource, obj: dict[str, Any], problems: list[str], *, operation: Operation, patched: bool
) -> ApiError:
    detail = "strict decoding error: " + ", ".join(problems)
    if operation == "apply" and not r.crd:
        # structured-merge-diff refuses undeclared fields of built-ins whatever the directive
        # asked; the error is a plain Go error, so the generic path answers 500 with no reason.
        return ApiError(500, "", f"failed to create typed patch object: {problems[0]}")
    if patched:
        text = json.dumps(obj, separators=(",", ":"), sort_keys=True)
        return apierrors.invalid("", "", [apierrors.invalid_value("patch", text, detail)])
    return _cannot_handle(r, detail)


def check_namespace_open(objects: store.Store, ns: str) -> None:
    """NamespaceLifecycle: no new object in a namespace that does not exist or is being deleted."""
    entry = objects.get(("", "namespaces"), "", ns)
    if entry is None:
        raise apierrors.not_found("namespaces", "", ns)
    if entry.object()["metadata"].get("deletionTimestamp"):
        raise ApiError(
            403, "Forbidden", f"unable to create new content in namespace {ns} because it is being terminated"
        )


def priorities(objects: store.Store, r: resources.Resource, obj: dict[str, Any]) -> dict[str, tuple[int, str]]:
    """The PriorityClass a new pod names, for Priority admission (only looked up when named)."""
    name = (obj.get("spec") or {}).get("priorityClassName") if r.kind == "Pod" and not r.group else None
    found = objects.get(("scheduling.k8s.io", "priorityclasses"), "", name) if name else None
    if found is None:
        return {}
    pc = found.object()
    return {str(name): (int(pc.get("value", 0)), str(pc.get("preemptionPolicy") or "PreemptLowerPriority"))}


def validate(r: resources.Resource, obj: dict[str, Any], *, old: dict[str, Any] | None) -> None:
    """Schema defaults and validation of a custom resource, and everything a real server checks
    on a CustomResourceDefinition (422 with the group-qualified kind)."""
    name = obj["metadata"].get("name", "")
    if (r.group, r.kind) == _CRD:
        problems = structural.crd_errors(obj, old=old)
        if problems:
            raise apierrors.invalid(r.kind, name, problems, group=r.group)
        return
    if not r.crd or r.schema is None:
        return
    r.schema.default(obj)
    errors = r.schema.validate(obj, old=old)
    if errors:
        raise apierrors.invalid(r.kind, name, errors, group=r.group)


def _cannot_handle(r: resources.Resource, detail: str) -> ApiError:
    """The decoder's 400 (apiserver:pkg/endpoints/handlers/rest.go ``transformDecodeError``)."""
    return apierrors.bad_request(f'{r.kind} in version "{r.version}" cannot be handled as a {r.kind}: {detail}')


def warning_header(text: str) -> str:
    """``299 - "<text>"`` with quotes and backslashes escaped (apimachinery:pkg/util/net/http.go)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'
