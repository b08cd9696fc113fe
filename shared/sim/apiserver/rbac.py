"""Whether RBAC lets a caller do something (real 403s, and the review answers).

Callers are :mod:`shared.sim.apiserver.identities` (bearer tokens); an admin identity (group
``system:masters``) is allowed everything before RBAC is asked, as the real server's
privileged-group authorizer does. ServiceAccount tokens are checked against the
Role/ClusterRole/RoleBinding/ClusterRoleBinding objects in the store, using the real rules: verbs,
apiGroups, resources with ``resource/subresource`` and ``*/subresource``, resourceNames,
nonResourceURLs with trailing ``*``, and ClusterRole aggregation.

One walk over the bindings (:meth:`Authorizer.visit`) serves both questions the server asks, as
in k/k ``pkg/registry/rbac/validation/rule.go`` ``VisitRulesFor``: the decision for one request
(:meth:`Authorizer.decide`, used for 403s and for the access reviews, so ``kubectl auth can-i``
and a real request always agree) and the list of rules a user holds in a namespace
(:meth:`Authorizer.rules_for`, the rules review behind ``can-i --list``).

Every real cluster carries the bootstrap policy (k/k
``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go``): any authenticated user may create
the self reviews and read discovery and health URLs. Those ClusterRoles and ClusterRoleBindings
are :data:`BOOTSTRAP_CLUSTER_ROLES` and :data:`BOOTSTRAP_CLUSTER_ROLE_BINDINGS`; the authorizer
uses one only while the store holds no object of that name, so a cluster that seeds them (or a
user who edits them) is authoritative. Left out: anonymous requests (no token is a 401 here),
the Node authorizer, and webhook or ABAC modes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver import identities, store
from shared.sim.apiserver.identities import (
    AUTHENTICATED,
    MASTERS,
    SERVICE_ACCOUNTS,
    UNAUTHENTICATED,
    Identity,
    service_account_user,
)

_RBAC = "rbac.authorization.k8s.io"

Identities = identities.Identities
"""The token table, where the server has always built it (it lives in :mod:`shared.sim.apiserver.identities`)."""


# ---------------------------------------------------------------- requests and rules


@dataclass(frozen=True)
class Request:
    """The attributes RBAC decides on for a resource request."""

    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""


@dataclass(frozen=True)
class NonResourceRequest:
    """A request for a URL that is not a resource (``/healthz``, ``/apis``, ``/metrics``)."""

    verb: str
    path: str


Attributes = Request | NonResourceRequest


def _has(values: Sequence[Any], wanted: str) -> bool:
    return "*" in values or wanted in values


def rule_allows(rule: dict[str, Any], req: Attributes) -> bool:
    """One PolicyRule against one request (k/k ``plugin/pkg/auth/authorizer/rbac/rbac.go`` ``RuleAllows``)."""
    if not _has(rule.get("verbs") or [], req.verb):
        return False
    if isinstance(req, NonResourceRequest):
        for url in rule.get("nonResourceURLs") or []:
            if url in ("*", req.path) or (url.endswith("*") and req.path.startswith(url.rstrip("*"))):
                return True
        return False
    if not _has(rule.get("apiGroups") or [], req.group):
        return False
    wanted = f"{req.resource}/{req.subresource}" if req.subresource else req.resource
    names = rule.get("resources") or []
    if not ("*" in names or wanted in names or (req.subresource and f"*/{req.subresource}" in names)):
        return False
    restricted = rule.get("resourceNames") or []
    return not restricted or req.name in restricted


def _subject_matches(subject: dict[str, Any], who: Identity, binding_ns: str) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        return bool(subject.get("name") == who.user)
    if kind == "Group":
        return subject.get("name") in who.groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return bool(ns) and service_account_user(ns, str(subject.get("name"))) == who.user
    return False


def _describe_subject(subject: dict[str, Any], binding_ns: str) -> str:
    """``User "u"``, ``Group "g"``, ``ServiceAccount "name/ns"`` (k/k rule.go ``describeSubject``)."""
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_ns}"'
    return f'{kind} "{name}"'


# ---------------------------------------------------------------- the bootstrap policy

_GET_DISCOVERY = ("/livez", "/readyz", "/healthz", "/version", "/version/")


def _cluster_role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": f"{_RBAC}/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        },
        "rules": rules,
    }


def _cluster_binding(name: str, *groups: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{_RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        },
        "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": _RBAC, "kind": "Group", "name": g} for g in groups],
    }


BOOTSTRAP_CLUSTER_ROLES: tuple[dict[str, Any], ...] = (
    _cluster_role(
        "cluster-admin",
        [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]},
        ],
    ),
    _cluster_role(
        "system:basic-user",
        [
            {
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                "verbs": ["create"],
            },
            {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
        ],
    ),
    _cluster_role(
        "system:discovery",
        [
            {
                "nonResourceURLs": [*_GET_DISCOVERY, "/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*"],
                "verbs": ["get"],
            }
        ],
    ),
    _cluster_role("system:public-info-viewer", [{"nonResourceURLs": list(_GET_DISCOVERY), "verbs": ["get"]}]),
    _cluster_role(
        "system:service-account-issuer-discovery",
        [
            {
                "nonResourceURLs": [
                    "/.well-known/openid-configuration",
                    "/.well-known/openid-configuration/",
                    "/openid/v1/jwks",
                    "/openid/v1/jwks/",
                ],
                "verbs": ["get"],
            }
        ],
    ),
    _cluster_role(
        "system:auth-delegator",
        [
            {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
        ],
    ),
)
"""The bootstrap ClusterRoles the review answers depend on (plus the delegator role webhooks bind)."""

BOOTSTRAP_CLUSTER_ROLE_BINDINGS: tuple[dict[str, Any], ...] = (
    _cluster_binding("cluster-admin", MASTERS),
    _cluster_binding("system:basic-user", AUTHENTICATED),
    _cluster_binding("system:discovery", AUTHENTICATED),
    _cluster_binding("system:public-info-viewer", AUTHENTICATED, UNAUTHENTICATED),
    _cluster_binding("system:service-account-issuer-discovery", SERVICE_ACCOUNTS),
)

_DEFAULT_ROLES = {r["metadata"]["name"]: r for r in BOOTSTRAP_CLUSTER_ROLES}


# ---------------------------------------------------------------- the authorizer


@dataclass(frozen=True)
class Decision:
    """What an authorizer answers: allowed or not, and the reason it gives (``""`` for a plain deny)."""

    allowed: bool
    reason: str = ""


@dataclass(frozen=True)
class Rules:
    """What a user may do in one namespace, and what could not be resolved on the way."""

    resource_rules: tuple[dict[str, Any], ...]
    non_resource_rules: tuple[dict[str, Any], ...]
    errors: tuple[str, ...]


@dataclass(frozen=True)
class _Visit:
    source: str  # the binding, as a reason names it
    rule: dict[str, Any] | None
    error: str = ""


def aggregate(messages: Sequence[str]) -> str:
    """Several errors as apimachinery prints them: one bare, several ``[a, b]`` with repeats dropped."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class Authorizer:
    """RBAC over the objects in the store; decisions are computed per request."""

    def __init__(self, objects: store.Store) -> None:
        self.store = objects

    def _objects(self, plural: str, namespace: str | None = None) -> Iterable[dict[str, Any]]:
        return (e.object() for e in self.store.scan((_RBAC, plural), namespace))

    def _cluster_role(self, name: str) -> dict[str, Any] | None:
        entry = self.store.get((_RBAC, "clusterroles"), "", name)
        return entry.object() if entry is not None else _DEFAULT_ROLES.get(name)

    def _cluster_role_rules(self, name: str) -> list[dict[str, Any]]:
        role = self._cluster_role(name)
        if role is None:
            raise LookupError(f'clusterrole.{_RBAC} "{name}" not found')
        rules = list(role.get("rules") or [])
        aggregation = role.get("aggregationRule") or {}
        if aggregation.get("clusterRoleSelectors"):
            from shared.sim.apiserver import selectors

            for selector in aggregation["clusterRoleSelectors"]:
                reqs = selectors.labels_of_selector(selector) or ()
                for other in self._objects("clusterroles"):
                    if other["metadata"]["name"] != name and selectors.match_labels(
                        reqs, other["metadata"].get("labels") or {}
                    ):
                        rules.extend(other.get("rules") or [])
        return rules

    def _role_rules(self, ref: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
        """The rules a roleRef names (k/k rule.go ``GetRoleReferenceRules``); LookupError with the
        lister's NotFound text when the role is missing."""
        kind, name = ref.get("kind"), str(ref.get("name"))
        if kind == "ClusterRole":
            return self._cluster_role_rules(name)
        if kind == "Role":
            entry = self.store.get((_RBAC, "roles"), namespace, name)
            if entry is None:
                raise LookupError(f'role.{_RBAC} "{name}" not found')
            return list(entry.object().get("rules") or [])
        raise LookupError(f'unsupported role reference kind: "{kind}"')

    def _cluster_bindings(self) -> list[dict[str, Any]]:
        stored = list(self._objects("clusterrolebindings"))
        names = {b["metadata"]["name"] for b in stored}
        return stored + [b for b in BOOTSTRAP_CLUSTER_ROLE_BINDINGS if b["metadata"]["name"] not in names]

    def visit(self, who: Identity, namespace: str) -> Iterator[_Visit]:
        """Every rule bound to ``who`` cluster-wide, then in ``namespace``, each with the binding
        that grants it; a binding whose role is missing yields an error instead. Call under
        ``store.lock``."""
        for binding in self._cluster_bindings():
            subject = next((s for s in binding.get("subjects") or [] if _subject_matches(s, who, "")), None)
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            try:
                rules = self._role_rules(ref, "")
            except LookupError as exc:
                yield _Visit("", None, str(exc))
                continue
            source = (
                f'ClusterRoleBinding "{binding["metadata"]["name"]}" of {ref.get("kind")} "{ref.get("name")}" '
                f"to {_describe_subject(subject, '')}"
            )
            for rule in rules:
                yield _Visit(source, rule)
        if not namespace:
            return
        for binding in self._objects("rolebindings", namespace):
            subject = next((s for s in binding.get("subjects") or [] if _subject_matches(s, who, namespace)), None)
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            try:
                rules = self._role_rules(ref, namespace)
            except LookupError as exc:
                yield _Visit("", None, str(exc))
                continue
            source = (
                f'RoleBinding "{binding["metadata"]["name"]}/{namespace}" of {ref.get("kind")} "{ref.get("name")}" '
                f"to {_describe_subject(subject, namespace)}"
            )
            for rule in rules:
                yield _Visit(source, rule)

    def decide(self, who: Identity, req: Attributes) -> Decision:
        """Allowed, with the reason RBAC gives (k/k rbac.go ``Authorize``): ``RBAC: allowed by
        <binding>``; a deny has no reason unless bindings pointed at missing roles."""
        if who.is_admin:
            return Decision(True)  # the privileged-group authorizer runs first and gives no reason
        namespace = req.namespace if isinstance(req, Request) else ""
        errors: list[str] = []
        with self.store.lock:
            for seen in self.visit(who, namespace):
                if seen.rule is not None and rule_allows(seen.rule, req):
                    return Decision(True, f"RBAC: allowed by {seen.source}")
                if seen.error:
                    errors.append(seen.error)
        return Decision(False, f"RBAC: {aggregate(errors)}" if errors else "")

    def allowed(self, who: Identity, req: Attributes) -> bool:
        return self.decide(who, req).allowed

    def rules_for(self, who: Identity, namespace: str) -> Rules:
        """Every rule that applies to ``who`` in ``namespace``, split as the rules review reports
        them (k/k rbac.go ``RulesFor``): a rule with resources is a resource rule, one with
        nonResourceURLs a non-resource rule."""
        resource: list[dict[str, Any]] = []
        non_resource: list[dict[str, Any]] = []
        errors: list[str] = []
        with self.store.lock:
            for seen in self.visit(who, namespace):
                if seen.error:
                    errors.append(seen.error)
                if seen.rule is None:
                    continue
                if seen.rule.get("resources"):
                    resource.append(seen.rule)
                if seen.rule.get("nonResourceURLs"):
                    non_resource.append(seen.rule)
        return Rules(tuple(resource), tuple(non_resource), tuple(errors))


def forbidden_message(who: Identity, req: Attributes, reason: str = "") -> str:
    """The real server's wording, which kubectl prints after ``Error from server (Forbidden):``
    (apiserver:pkg/endpoints/handlers/responsewriters/errors.go ``Forbidden``): a reason from the
    authorizer, when there is one, follows after ``: ``."""
    if isinstance(req, NonResourceRequest):
        text = f'forbidden: User "{who.user}" cannot {req.verb} path "{req.path}"'
    else:
        resource = f"{req.resource}/{req.subresource}" if req.subresource else req.resource
        subject = f"{req.resource}{'.' + req.group if req.group else ''}"
        if req.name:
            subject += f' "{req.name}"'
        scope = f'in the namespace "{req.namespace}"' if req.namespace else "at the cluster scope"
        text = (
            f'{subject} is forbidden: User "{who.user}" cannot {req.verb} resource "{resource}" '
            f'in API group "{req.group}" {scope}'
        )
    return f"{text}: {reason}" if reason else text
