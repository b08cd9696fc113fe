"""The access reviews: ``kubectl auth can-i`` (and ``--list``), ``kubectl auth whoami``, webhooks'
SubjectAccessReviews and TokenReviews, answered from the simulator's own RBAC.

Six create-only resources, never stored: ``SelfSubjectAccessReview``, ``SelfSubjectRulesReview``,
``SubjectAccessReview`` and the namespaced ``LocalSubjectAccessReview`` in
``authorization.k8s.io/v1``; ``SelfSubjectReview`` and ``TokenReview`` in
``authentication.k8s.io/v1``. The handler authorizes the POST like any other (every authenticated
user holds ``system:basic-user``, which grants the self reviews) and hands the body here.

Each answer is what k/k ``pkg/registry/authorization/*/rest.go`` and
``pkg/registry/authentication/*/rest.go`` return: 201 with the same kind, the spec echoed as the
v1 object re-encodes it (unknown fields and empty values gone), ``status`` from the same
:class:`~shared.sim.apiserver.rbac.Authorizer` that produces real 403s, and — for the kinds whose
REST returns the request object — the ``managedFields`` entry the create handler records.
Validation failures are the real 422s (the registry builds them from the internal object, whose
``Kind`` is empty, hence ``.authorization.k8s.io "" is invalid``) and 400s.

Bodies are read by :mod:`shared.sim.apiserver.reviewtypes` (the v1 Go types). Not modelled:
label-selector requirement keys are not validated, TokenReview audiences are taken as asked
(tokens carry none), and ``dryRun`` changes nothing because nothing is stored anyway.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from shared.sim.apiserver import apierrors, identities, rbac, resources, reviewmeta, reviewtypes, selectors
from shared.sim.apiserver.apierrors import ApiError, FieldError

if TYPE_CHECKING:
    from shared.sim.apiserver import admission, api, store

AUTHORIZATION = "authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"
API_AUDIENCE = "https://kubernetes.default.svc"
"""The audience the simulator's tokens are for (what TokenRequest defaults to here)."""

_SSAR, _SSRR, _SAR, _LSAR = reviewtypes.SSAR, reviewtypes.SSRR, reviewtypes.SAR, reviewtypes.LSAR
_SSR, _TR = reviewtypes.SSR, reviewtypes.TR
_KINDS = {
    (AUTHORIZATION, "selfsubjectaccessreviews"): _SSAR,
    (AUTHORIZATION, "selfsubjectrulesreviews"): _SSRR,
    (AUTHORIZATION, "subjectaccessreviews"): _SAR,
    (AUTHORIZATION, "localsubjectaccessreviews"): _LSAR,
    (AUTHENTICATION, "selfsubjectreviews"): _SSR,
    (AUTHENTICATION, "tokenreviews"): _TR,
}


class Cluster(Protocol):
    """What the reviews read: the authorizer, the token table and the API (clock, ServiceAccounts)."""

    @property
    def authorizer(self) -> rbac.Authorizer: ...

    @property
    def identities(self) -> identities.Identities: ...

    @property
    def api(self) -> api.Api: ...

    @property
    def store(self) -> store.Store: ...


def serves(r: resources.Resource) -> bool:
    return (r.group, r.plural) in _KINDS and not r.crd


def check_request(method: str, name: str | None) -> None:
    """Only POST to the collection exists: a name is 404, another verb 405 (after RBAC, as the
    real router answers once the request is authorized)."""
    if name is not None:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    if method != "POST":
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


def manager_of(field_manager: str | None, user_agent: str | None) -> str:
    """Who the managedFields entry names: ``fieldManager``, else the User-Agent up to its first ``/``
    (apiserver:pkg/endpoints/handlers/rest.go ``managerOrUserAgent``)."""
    return field_manager or (user_agent or "").split("/", 1)[0][:128]


def _invalid(kind: str, group: str, causes: list[FieldError]) -> ApiError:
    """422 as the registry builds it from the internal object, whose ``Kind`` is empty."""
    del kind  # the message shows no kind: NewInvalid(authorizationapi.Kind(obj.Kind)) with Kind ""
    error = apierrors.invalid("", "", causes, group=group)
    error.details = {k: v for k, v in (error.details or {}).items() if v != ""}
    return error


def _internal_json(value: dict[str, Any], fields: tuple[str, ...]) -> str:
    """An internal type printed by field.Invalid: Go field names, no omitempty (no json tags)."""
    return json.dumps({f[0].upper() + f[1:]: value.get(f, "") for f in fields}, separators=(",", ":"))


# ---------------------------------------------------------------- validation


def _selector_errors(selector: dict[str, Any] | None, path: str) -> list[FieldError]:
    """k/k pkg/apis/authorization/validation ``validate{Field,Label}SelectorAttributes``."""
    if selector is None:
        return []
    errors: list[FieldError] = []
    raw, requirements = selector.get("rawSelector", ""), selector.get("requirements") or []
    if raw and requirements:
        errors.append(
            apierrors.invalid_value(f"{path}.rawSelector", raw, "may not specified at the same time as requirements")
        )
    if not raw and not requirements:
        errors.append(
            apierrors.required(
                f"{path}.requirements", f"when {path} is specified, requirements or rawSelector is required"
            )
        )
    for i, requirement in enumerate(requirements):
        operator, values = requirement.get("operator", ""), requirement.get("values") or []
        where = f"{path}.requirements[{i}].values"
        if operator in ("In", "NotIn") and not values:
            errors.append(apierrors.required(where, "must be specified when `operator` is 'In' or 'NotIn'"))
        if operator in ("Exists", "DoesNotExist") and values:
            errors.append(
                apierrors.forbidden(where, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            )
    return errors


def _spec_errors(spec: dict[str, Any], *, subject: bool) -> list[FieldError]:
    """k/k pkg/apis/authorization/validation/validation.go ``Validate[Self]SubjectAccessReviewSpec``."""
    errors: list[FieldError] = []
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        shown = _internal_json(non_resource, ("path", "verb"))
        errors.append(
            FieldError(
                "spec.nonResourceAttributes",
                "FieldValueInvalid",
                f"Invalid value: {shown}: cannot be specified in combination with resourceAttributes",
            )
        )
    if resource is None and non_resource is None:
        errors.append(
            apierrors.invalid_value(
                "spec.resourceAttributes",
                None,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    if subject and not spec.get("user") and not spec.get("groups"):
        errors.append(apierrors.invalid_value("spec.user", "", "at least one of user or group must be specified"))
    if resource is not None:
        errors += _selector_errors(resource.get("fieldSelector"), "spec.resourceAttributes.fieldSelector")
        errors += _selector_errors(resource.get("labelSelector"), "spec.resourceAttributes.labelSelector")
    return errors


def _metadata_error(meta: dict[str, Any], managed: list[dict[str, Any]], *, local: bool) -> list[FieldError]:
    """``metadata: Invalid value: <ObjectMeta as JSON>: must be empty`` when anything but the
    wiped system fields (and, for the local review, the namespace) is set."""
    ignored = {"namespace"} if local else set()
    if not any(v not in ("", None, 0, [], {}) for k, v in meta.items() if k not in ignored):
        return []
    shown = json.dumps(reviewmeta.ordered(meta, managed), separators=(",", ":"), ensure_ascii=False)
    detail = "must be empty except for namespace" if local else "must be empty"
    return [FieldError("metadata", "FieldValueInvalid", f"Invalid value: {shown}: {detail}")]


# ---------------------------------------------------------------- evaluation


def _selector_evaluation(attributes: dict[str, Any]) -> str:
    """Selectors RBAC cannot use still get parsed; a parse error is reported, not refused
    (k/k pkg/registry/authorization/util/helpers.go ``BuildEvaluationError``)."""
    notes: list[str] = []
    for field in ("fieldSelector", "labelSelector"):
        selector = attributes.get(field)
        if not selector:
            continue
        kept, failed = _parse_selector(field, selector)
        if failed:
            how = "partially ignored" if kept else "ignored"
            notes.append(f"spec.resourceAttributes.{field} {how} due to parse error")
    return "; ".join(notes)


def _parse_selector(field: str, selector: dict[str, Any]) -> tuple[int, bool]:
    """(requirements understood, any not understood)."""
    raw, requirements = selector.get("rawSelector", ""), selector.get("requirements") or []
    if requirements:
        known = ("In", "NotIn") if field == "fieldSelector" else ("In", "NotIn", "Exists", "DoesNotExist")
        good = [
            r
            for r in requirements
            if r.get("operator") in known and (field == "labelSelector" or len(r.get("values") or []) == 1)
        ]
        return len(good), len(good) < len(requirements)
    if field == "labelSelector":
        try:
            return len(selectors.parse_labels(raw)), False
        except selectors.SelectorError:
            return 0, True
    terms = [t for t in raw.split(",") if t]
    return (len(terms), False) if all("=" in t for t in terms) else (0, True)


def _attributes(spec: dict[str, Any]) -> rbac.Attributes:
    resource = spec.get("resourceAttributes")
    if resource is not None:
        return rbac.Request(
            verb=resource.get("verb", ""),
            group=resource.get("group", ""),
            resource=resource.get("resource", ""),
            subresource=resource.get("subresource", ""),
            namespace=resource.get("namespace", ""),
            name=resource.get("name", ""),
        )
    non_resource = spec.get("nonResourceAttributes") or {}
    return rbac.NonResourceRequest(verb=non_resource.get("verb", ""), path=non_resource.get("path", ""))


def _access_status(decision: rbac.Decision, spec: dict[str, Any]) -> dict[str, Any]:
    status: dict[str, Any] = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    evaluation = _selector_evaluation(spec.get("resourceAttributes") or {})
    if evaluation:
        status["evaluationError"] = evaluation
    return status


def _subject(spec: dict[str, Any]) -> identities.Identity:
    """The user a SubjectAccessReview asks about: exactly the groups given (no implied
    ``system:authenticated``: "what if User were not a member of any groups")."""
    return identities.Identity(
        spec.get("user", ""),
        tuple(spec.get("groups") or ()),
        uid=spec.get("uid", ""),
        extra=tuple((k, tuple(v or ())) for k, v in (spec.get("extra") or {}).items()),
    )


def _user_info(cluster: Cluster, who: identities.Identity) -> dict[str, Any]:
    uid = who.uid
    account = identities.split_service_account(who.user)
    if not uid and account is not None:
        entry = cluster.store.get(("", "serviceaccounts"), account[0], account[1])
        uid = str((entry.object().get("metadata") or {}).get("uid", "")) if entry is not None else ""
    info: dict[str, Any] = {"username": who.user}
    if uid:
        info["uid"] = uid
    if who.groups:
        info["groups"] = list(who.groups)
    if who.extra:
        info["extra"] = {k: list(v) for k, v in who.extra}
    return info


def _rule(rule: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """A rule as ResourceRule/NonResourceRule encode it: verbs always, the rest when non-empty."""
    out: dict[str, Any] = {"verbs": list(rule.get("verbs") or [])}
    for field in fields:
        if rule.get(field):
            out[field] = list(rule[field])
    return out


# ---------------------------------------------------------------- the six answers


def create(
    cluster: Cluster,
    r: resources.Resource,
    namespace: str | None,
    body: Any,
    *,
    who: identities.Identity | None,
    options: admission.WriteOptions,
    manager: str,
) -> dict[str, Any]:
    """The 201 answer to a POST of a review (errors are raised as :class:`ApiError`)."""
    if who is None:
        raise ApiError(401, "Unauthorized", "Unauthorized")
    kind = _KINDS[(r.group, r.plural)]
    obj = reviewtypes.decode(r, kind, body, options)
    head = {"kind": kind, "apiVersion": r.group_version}
    if kind == _SSRR:
        return _rules_review(cluster, head, obj, who)
    if kind == _SSR:
        return {
            **head,
            "metadata": {"creationTimestamp": cluster.api.now()},
            "status": {"userInfo": _user_info(cluster, who)},
        }
    meta = reviewmeta.metadata(obj.get("metadata") or {}, (namespace or "") if kind == _LSAR else "")
    managed = reviewmeta.managed(obj, meta, kind=kind, r=r, manager=manager, now=cluster.api.now())
    spec = obj.get("spec") or {}
    if kind == _TR:
        return {
            **head,
            "metadata": reviewmeta.ordered(meta, managed),
            "spec": spec,
            "status": _token_status(cluster, spec),
        }
    errors = _spec_errors(spec, subject=kind != _SSAR)
    errors += _metadata_error(meta, managed, local=kind == _LSAR)
    if kind == _LSAR:
        attributes = spec.get("resourceAttributes")
        if attributes is not None and attributes.get("namespace", "") != (namespace or ""):
            errors.append(
                apierrors.invalid_value(
                    "spec.resourceAttributes.namespace",
                    attributes.get("namespace", ""),
                    "must match metadata.namespace",
                )
            )
        if spec.get("nonResourceAttributes") is not None:
            shown = _internal_json(spec["nonResourceAttributes"], ("path", "verb"))
            errors.append(
                FieldError(
                    "spec.nonResourceAttributes",
                    "FieldValueInvalid",
                    f"Invalid value: {shown}: disallowed on this kind of request",
                )
            )
    if errors:
        raise _invalid(kind, r.group, errors)
    subject = who if kind == _SSAR else _subject(spec)
    decision = cluster.authorizer.decide(subject, _attributes(spec))
    return {
        **head,
        "metadata": reviewmeta.ordered(meta, managed),
        "spec": spec,
        "status": _access_status(decision, spec),
    }


def _rules_review(
    cluster: Cluster, head: dict[str, Any], obj: dict[str, Any], who: identities.Identity
) -> dict[str, Any]:
    """SelfSubjectRulesReview: a fresh object with an empty spec and the rules RBAC resolves
    (k/k pkg/registry/authorization/selfsubjectrulesreview/rest.go)."""
    namespace = (obj.get("spec") or {}).get("namespace", "")
    if not namespace:
        raise apierrors.bad_request("no namespace on request")
    rules = cluster.authorizer.rules_for(who, namespace)
    status: dict[str, Any] = {
        "resourceRules": [_rule(r, ("apiGroups", "resources", "resourceNames")) for r in rules.resource_rules],
        "nonResourceRules": [_rule(r, ("nonResourceURLs",)) for r in rules.non_resource_rules],
        "incomplete": False,
    }
    if rules.errors:
        status["evaluationError"] = rbac.aggregate(rules.errors)
    return {**head, "metadata": {"creationTimestamp": None}, "spec": {}, "status": status}


def _token_status(cluster: Cluster, spec: dict[str, Any]) -> dict[str, Any]:
    """TokenReview (k/k pkg/registry/authentication/tokenreview/storage.go): who a bearer token
    is. A token nobody issued is simply not authenticated (no authenticator claims it)."""
    token = spec.get("token", "")
    if not token:
        raise apierrors.bad_request("token is required for TokenReview in authentication")
    who = cluster.identities.who(token)
    if who is None:
        return {"user": {}}
    return {
        "authenticated": True,
        "user": _user_info(cluster, who),
        "audiences": list(spec.get("audiences") or [API_AUDIENCE]),
    }
