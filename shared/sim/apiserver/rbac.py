"""Who is calling (bearer tokens) and whether RBAC lets them (real 403s).

The kubeconfig the server writes carries an admin token (group ``system:masters``, allowed
everything, as on a real cluster). Tokens minted for a ServiceAccount are checked against the
Role/ClusterRole/RoleBinding/ClusterRoleBinding objects in the store, using the real rules:
verbs, apiGroups, resources with ``resource/subresource`` and ``*``, resourceNames, and
ClusterRole aggregation. That lets a test prove a Role grants exactly what code uses.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver import store

MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
ADMIN_USER = "sim-admin"
_RBAC = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class Identity:
    """An authenticated caller."""

    user: str
    groups: tuple[str, ...] = (AUTHENTICATED,)

    @property
    def is_admin(self) -> bool:
        return MASTERS in self.groups


def service_account_user(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


class Identities:
    """Bearer token → identity. Tokens are random; they are never logged."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._lock = threading.Lock()
        self._tokens: dict[str, Identity] = {}
        self.admin_token = self._new_token()
        self._tokens[self.admin_token] = Identity(ADMIN_USER, (MASTERS, AUTHENTICATED))

    def _new_token(self) -> str:
        return "sim-" + "".join(self._rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(40))

    def mint(self, identity: Identity) -> str:
        with self._lock:
            token = self._new_token()
            self._tokens[token] = identity
            return token

    def for_service_account(self, namespace: str, name: str) -> str:
        groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED)
        return self.mint(Identity(service_account_user(namespace, name), groups))

    def who(self, token: str | None) -> Identity | None:
        if not token:
            return None
        with self._lock:
            return self._tokens.get(token)

    def reset(self) -> None:
        """Forget every minted token; the admin token stays valid (kubeconfigs keep working)."""
        with self._lock:
            admin = self._tokens[self.admin_token]
            self._tokens = {self.admin_token: admin}


@dataclass(frozen=True)
class Request:
    """The attributes RBAC decides on."""

    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""


def _allows(rule: dict[str, Any], req: Request) -> bool:
    verbs = rule.get("verbs") or []
    if "*" not in verbs and req.verb not in verbs:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and req.group not in groups:
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
        return service_account_user(ns, str(subject.get("name"))) == who.user
    return False


class Authorizer:
    """RBAC over the objects in the store; decisions are computed per request."""

    def __init__(self, objects: store.Store) -> None:
        self.store = objects

    def _objects(self, plural: str, namespace: str | None = None) -> Iterable[dict[str, Any]]:
        return (e.object() for e in self.store.scan((_RBAC, plural), namespace))

    def _cluster_role_rules(self, name: str) -> list[dict[str, Any]]:
        entry = self.store.get((_RBAC, "clusterroles"), "", name)
        if entry is None:
            return []
        role = entry.object()
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
        if ref.get("kind") == "ClusterRole":
            return self._cluster_role_rules(str(ref.get("name")))
        entry = self.store.get((_RBAC, "roles"), namespace, str(ref.get("name")))
        return list(entry.object().get("rules") or []) if entry else []

    def allowed(self, who: Identity, req: Request) -> bool:
        if who.is_admin:
            return True
        with self.store.lock:
            for binding in self._objects("clusterrolebindings"):
                if any(_subject_matches(s, who, "") for s in binding.get("subjects") or []) and any(
                    _allows(rule, req) for rule in self._role_rules(binding.get("roleRef") or {}, "")
                ):
                    return True
            if req.namespace:
                for binding in self._objects("rolebindings", req.namespace):
                    if any(_subject_matches(s, who, req.namespace) for s in binding.get("subjects") or []) and any(
                        _allows(rule, req) for rule in self._role_rules(binding.get("roleRef") or {}, req.namespace)
                    ):
                        return True
        return False


def forbidden_message(who: Identity, req: Request) -> str:
    """The real server's wording, which kubectl prints after ``Error from server (Forbidden):``."""
    resource = f"{req.resource}/{req.subresource}" if req.subresource else req.resource
    subject = f"{req.resource}{'.' + req.group if req.group else ''}"
    if req.name:
        subject += f' "{req.name}"'
    scope = f'in the namespace "{req.namespace}"' if req.namespace else "at the cluster scope"
    return (
        f'{subject} is forbidden: User "{who.user}" cannot {req.verb} resource "{resource}" '
        f'in API group "{req.group}" {scope}'
    )
