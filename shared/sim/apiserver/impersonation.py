"""Acting as another user: the ``Impersonate-*`` headers (``kubectl --as``, ``--as-group``, ``--as-uid``).

apiserver:pkg/endpoints/filters/impersonation.go: each impersonated user, group, uid and extra
value needs the ``impersonate`` verb on users (or the ServiceAccount), groups, uids or userextras,
else 403; a request that impersonates groups or extras without a user is an internal error. The
identity the request then acts as gets ``system:authenticated`` unless it names the group itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import unquote

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.identities import (
    AUTHENTICATED,
    UNAUTHENTICATED,
    Identity,
    service_account_groups,
    split_service_account,
)
from shared.sim.apiserver.rbac import Authorizer, Request, forbidden_message

IMPERSONATE_USER = "impersonate-user"
IMPERSONATE_GROUP = "impersonate-group"
IMPERSONATE_UID = "impersonate-uid"
IMPERSONATE_EXTRA = "impersonate-extra-"


def impersonate(authorizer: Authorizer, who: Identity, headers: Iterable[tuple[str, str]]) -> Identity:
    """The identity a request acts as, after its ``Impersonate-*`` headers (``kubectl --as``,
    ``--as-group``, ``--as-uid``): each one needs the ``impersonate`` verb on users, groups,
    serviceaccounts, uids or userextras, else 403 (apiserver:pkg/endpoints/filters/impersonation.go).
    Without such headers the caller is returned unchanged."""
    asked = _Asked.of(headers)
    if not (asked.user or asked.groups or asked.uid or asked.extra):
        return who
    account = split_service_account(asked.user) if asked.user else None
    checks = asked.checks(account)
    if not asked.user:
        raise apierrors.ApiError(500, "InternalError", "requested impersonation without impersonating a user")
    for check in checks:
        decision = authorizer.decide(who, check)
        if not decision.allowed:
            raise apierrors.ApiError(
                403,
                "Forbidden",
                forbidden_message(who, check, decision.reason),
                details={"name": check.name, "group": check.group, "kind": check.resource},
            )
    acting = list(asked.groups)
    if account is not None and not asked.groups:
        acting = list(service_account_groups(account[0]))[:-1]
    if asked.user != "system:anonymous" and not ({AUTHENTICATED, UNAUTHENTICATED} & set(acting)):
        acting.append(AUTHENTICATED)
    extra = tuple((k, tuple(v)) for k, v in asked.extra.items())
    return Identity(asked.user, tuple(acting), uid=asked.uid, extra=extra)


class _Asked:
    """What the headers ask to act as: the first user and uid, every group and extra value."""

    def __init__(self) -> None:
        self.user = ""
        self.uid = ""
        self.groups: list[str] = []
        self.extra: dict[str, list[str]] = {}

    @classmethod
    def of(cls, headers: Iterable[tuple[str, str]]) -> _Asked:
        asked = cls()
        for header, value in headers:
            asked.read(header.lower(), value)
        return asked

    def read(self, key: str, value: str) -> None:
        if key == IMPERSONATE_USER and not self.user:
            self.user = value
        elif key == IMPERSONATE_GROUP:
            self.groups.append(value)
        elif key == IMPERSONATE_UID and not self.uid:
            self.uid = value
        elif key.startswith(IMPERSONATE_EXTRA):
            self.extra.setdefault(unquote(key[len(IMPERSONATE_EXTRA) :]), []).append(value)

    def checks(self, account: tuple[str, str] | None) -> list[Request]:
        """The ``impersonate`` permissions needed, in the order the server asks for them."""
        checks: list[Request] = []
        if account is not None:
            checks.append(Request("impersonate", "", "serviceaccounts", namespace=account[0], name=account[1]))
        elif self.user:
            checks.append(Request("impersonate", "", "users", name=self.user))
        checks += [Request("impersonate", "", "groups", name=g) for g in self.groups]
        checks += [
            Request("impersonate", "authentication.k8s.io", "userextras", subresource=k, name=v)
            for k, values in self.extra.items()
            for v in values
        ]
        if self.uid:
            checks.append(Request("impersonate", "authentication.k8s.io", "uids", name=self.uid))
        return checks
