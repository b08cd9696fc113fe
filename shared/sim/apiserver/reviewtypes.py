"""The v1 Go types of the access reviews, and a decoder that reads a body as the real server does.

The review kinds are not stored and have no schema elsewhere in the simulator, so their bodies are
decoded here, as ``encoding/json`` (through sigs.k8s.io/json) decodes into the
``k8s.io/api/authorization/v1`` and ``authentication/v1`` structs: a value of the wrong JSON
type is the decoder's 400 (``json: cannot unmarshal <type> into Go struct field <Struct>.<path>
of type <go type>``, wrapped by apiserver:pkg/endpoints/handlers/rest.go ``transformDecodeError``),
an unknown or duplicate field follows ``fieldValidation`` (Warn by default), and what comes out is
the object as the server re-encodes it: ``omitempty`` fields that are empty are gone, a struct
pointer stays even when empty, and fields without ``omitempty`` are always there.

Left out: a body naming another registered kind is refused without the scheme's conversion text,
and the contents of rule lists, owner references and managedFields are not type-checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import ApiError

if TYPE_CHECKING:
    from shared.sim.apiserver import admission, resources

SSAR, SSRR, SAR, LSAR = (
    "SelfSubjectAccessReview",
    "SelfSubjectRulesReview",
    "SubjectAccessReview",
    "LocalSubjectAccessReview",
)
SSR, TR = "SelfSubjectReview", "TokenReview"


@dataclass(frozen=True)
class _List:
    item: Any  # a type: "string" | "bool" | "int" | "any" | _List | _Map | _Struct
    go: str


@dataclass(frozen=True)
class _Map:
    value: Any
    go: str


@dataclass(frozen=True)
class _Struct:
    go: str  # package-qualified, as Go's decoder names it: v1.ResourceAttributes
    fields: tuple[tuple[str, Any], ...]
    keep: tuple[str, ...] = ()  # fields without omitempty: present even when zero

    @property
    def name(self) -> str:
        return self.go.split(".", 1)[1]


_STRINGS = _List("string", "[]string")
_EXTRA = _Map(_List("string", "v1.ExtraValue"), "map[string]v1.ExtraValue")
_FIELD_REQ = _Struct("v1.FieldSelectorRequirement", (("key", "string"), ("operator", "string"), ("values", _STRINGS)))
_LABEL_REQ = _Struct("v1.LabelSelectorRequirement", (("key", "string"), ("operator", "string"), ("values", _STRINGS)))
_RESOURCE_ATTRIBUTES = _Struct(
    "v1.ResourceAttributes",
    (
        ("namespace", "string"),
        ("verb", "string"),
        ("group", "string"),
        ("version", "string"),
        ("resource", "string"),
        ("subresource", "string"),
        ("name", "string"),
        (
            "fieldSelector",
            _Struct(
                "v1.FieldSelectorAttributes",
                (("rawSelector", "string"), ("requirements", _List(_FIELD_REQ, "[]v1.FieldSelectorRequirement"))),
            ),
        ),
        (
            "labelSelector",
            _Struct(
                "v1.LabelSelectorAttributes",
                (("rawSelector", "string"), ("requirements", _List(_LABEL_REQ, "[]v1.LabelSelectorRequirement"))),
            ),
        ),
    ),
)
_NON_RESOURCE_ATTRIBUTES = _Struct("v1.NonResourceAttributes", (("path", "string"), ("verb", "string")))
_ACCESS_STATUS = _Struct(
    "v1.SubjectAccessReviewStatus",
    (("allowed", "bool"), ("denied", "bool"), ("reason", "string"), ("evaluationError", "string")),
    keep=("allowed",),
)
_USER_INFO = _Struct(
    "v1.UserInfo", (("username", "string"), ("uid", "string"), ("groups", _STRINGS), ("extra", _EXTRA))
)
_OBJECT_META = _Struct(
    "v1.ObjectMeta",
    (
        ("name", "string"),
        ("generateName", "string"),
        ("namespace", "string"),
        ("selfLink", "string"),
        ("uid", "string"),
        ("resourceVersion", "string"),
        ("generation", "int"),
        ("creationTimestamp", "any"),
        ("deletionTimestamp", "any"),
        ("deletionGracePeriodSeconds", "int"),
        ("labels", _Map("string", "map[string]string")),
        ("annotations", _Map("string", "map[string]string")),
        ("ownerReferences", _List("any", "[]v1.OwnerReference")),
        ("finalizers", _STRINGS),
        ("managedFields", _List("any", "[]v1.ManagedFieldsEntry")),
    ),
)
_SUBJECT_SPEC = _Struct(
    "v1.SubjectAccessReviewSpec",
    (
        ("resourceAttributes", _RESOURCE_ATTRIBUTES),
        ("nonResourceAttributes", _NON_RESOURCE_ATTRIBUTES),
        ("user", "string"),
        ("groups", _STRINGS),
        ("extra", _EXTRA),
        ("uid", "string"),
    ),
)
_RULES = (
    ("resourceRules", _List("any", "[]v1.ResourceRule")),
    ("nonResourceRules", _List("any", "[]v1.NonResourceRule")),
    ("incomplete", "bool"),
    ("evaluationError", "string"),
)


def _top(kind: str, spec: _Struct | None, status: _Struct) -> _Struct:
    fields: list[tuple[str, Any]] = [("kind", "string"), ("apiVersion", "string"), ("metadata", _OBJECT_META)]
    if spec is not None:
        fields.append(("spec", spec))
    fields.append(("status", status))
    return _Struct(f"v1.{kind}", tuple(fields), keep=("metadata", "spec", "status"))


_TYPES = {
    SSAR: _top(
        SSAR,
        _Struct(
            "v1.SelfSubjectAccessReviewSpec",
            (("resourceAttributes", _RESOURCE_ATTRIBUTES), ("nonResourceAttributes", _NON_RESOURCE_ATTRIBUTES)),
        ),
        _ACCESS_STATUS,
    ),
    SAR: _top(SAR, _SUBJECT_SPEC, _ACCESS_STATUS),
    LSAR: _top(LSAR, _SUBJECT_SPEC, _ACCESS_STATUS),
    SSRR: _top(
        SSRR,
        _Struct("v1.SelfSubjectRulesReviewSpec", (("namespace", "string"),)),
        _Struct("v1.SubjectRulesReviewStatus", _RULES, keep=("resourceRules", "nonResourceRules", "incomplete")),
    ),
    SSR: _top(SSR, None, _Struct("v1.SelfSubjectReviewStatus", (("userInfo", _USER_INFO),), keep=("userInfo",))),
    TR: _top(
        TR,
        _Struct("v1.TokenReviewSpec", (("token", "string"), ("audiences", _STRINGS))),
        _Struct(
            "v1.TokenReviewStatus",
            (("authenticated", "bool"), ("user", _USER_INFO), ("audiences", _STRINGS), ("error", "string")),
            keep=("user",),
        ),
    ),
}

_JSON_TYPES = {str: "string", bool: "bool", int: "number", float: "number", list: "array", dict: "object"}


class _Decoder:
    """Go's ``encoding/json`` into the v1 types, with omitempty applied on the way out."""

    def __init__(self, kind: str, version: str) -> None:
        self.kind = kind
        self.version = version
        self.unknown: list[str] = []

    def fail(self, value: Any, owner: _Struct, path: str, go: str) -> ApiError:
        got = _JSON_TYPES.get(type(value), "value")
        return apierrors.bad_request(
            f'{self.kind} in version "{self.version}" cannot be handled as a {self.kind}: json: cannot unmarshal '
            f"{got} into Go struct field {owner.name}.{path} of type {go}"
        )

    def struct(self, value: dict[str, Any], t: _Struct, path: str) -> dict[str, Any]:
        known = dict(t.fields)
        for key in value:
            if key not in known:
                self.unknown.append(f"{path}.{key}" if path else key)
        out: dict[str, Any] = {}
        for key, ft in t.fields:
            sub = f"{path}.{key}" if path else key
            decoded = self.value(value.get(key), ft, t, sub)
            if key in t.keep:
                out[key] = _zero(ft) if decoded is None else decoded
            elif decoded is not None and (isinstance(ft, _Struct) or decoded not in ("", False, 0, [], {})):
                out[key] = decoded  # omitempty: zero values vanish, a struct pointer stays even when empty
        return out

    def value(self, value: Any, t: Any, owner: _Struct, path: str) -> Any:
        if value is None or t == "any":
            return value
        if isinstance(t, _Struct):
            if not isinstance(value, dict):
                raise self.fail(value, owner, path, t.go)
            return self.struct(value, t, path)
        if isinstance(t, _List):
            if not isinstance(value, list):
                raise self.fail(value, owner, path, t.go)
            return [self.value(v, t.item, owner, path) for v in value]
        if isinstance(t, _Map):
            if not isinstance(value, dict):
                raise self.fail(value, owner, path, t.go)
            return {k: self.value(v, t.value, owner, f"{path}.{k}") for k, v in sorted(value.items())}
        expected = {"string": str, "bool": bool, "int": int}[t]
        if not isinstance(value, expected) or (t == "int" and isinstance(value, bool)):
            raise self.fail(value, owner, path, {"int": "int64"}.get(t, t))
        return value


def _zero(t: Any) -> Any:
    if isinstance(t, _Struct):
        return {k: _zero(ft) for k, ft in t.fields if k in t.keep}
    if isinstance(t, _List):
        return []
    return {"bool": False, "string": "", "int": 0}.get(t) if isinstance(t, str) else {}


def decode(r: resources.Resource, kind: str, body: Any, options: admission.WriteOptions) -> dict[str, Any]:
    """The body as the v1 object: types checked, unknown fields per ``fieldValidation``."""
    if not isinstance(body, dict):
        shown = "" if body is None else json.dumps(body)[:30]
        raise apierrors.bad_request(
            f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; "
            f"json parse error: unexpected end of JSON input ({shown})"
        )
    named = body.get("kind")
    if named not in (None, "", kind):
        raise apierrors.bad_request(f'{named} in version "{r.version}" cannot be handled as a {kind}')
    version = body.get("apiVersion")
    if version not in (None, "", r.group_version):
        raise apierrors.bad_request(
            f"the API version in the data ({version}) does not match the expected API version ({r.group_version})"
        )
    decoder = _Decoder(kind, r.version)
    obj = decoder.struct(body, _TYPES[kind], "")
    problems = [f'duplicate field "{p}"' for p in options.duplicates] + [
        f'unknown field "{p}"' for p in decoder.unknown
    ]
    if problems and options.directive == "Strict":
        raise apierrors.bad_request(
            f'{kind} in version "{r.version}" cannot be handled as a {kind}: strict decoding error: '
            + ", ".join(problems)
        )
    if options.directive == "Warn":
        for problem in problems:
            options.warn(problem)
    return obj


def zero(kind: str) -> dict[str, Any]:
    """The empty object of ``kind`` as Go encodes it (what a create compares the request with)."""
    out: dict[str, Any] = _zero(_TYPES[kind])
    return out
