"""Who is calling: bearer tokens and the identities they stand for (what the real server calls ``user.Info``).

The kubeconfig the server writes carries an admin token (user ``sim-admin`` in ``system:masters``);
``kubectl create token`` (the TokenRequest subresource) mints ServiceAccount tokens with the groups
and ``extra`` a 1.34 server gives them. Whether an identity may do something is
:mod:`shared.sim.apiserver.rbac`; acting as another one is :mod:`shared.sim.apiserver.impersonation`.
"""

from __future__ import annotations

import random
import threading
import uuid
from dataclasses import dataclass

MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
SERVICE_ACCOUNTS = "system:serviceaccounts"
ADMIN_USER = "sim-admin"
ANONYMOUS = "system:anonymous"
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
_SA_PREFIX = "system:serviceaccount:"

Extra = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Identity:
    """An authenticated caller: what the real server calls ``user.Info``."""

    user: str
    groups: tuple[str, ...] = (AUTHENTICATED,)
    uid: str = ""
    extra: Extra = ()

    @property
    def is_admin(self) -> bool:
        return MASTERS in self.groups


def service_account_user(namespace: str, name: str) -> str:
    return f"{_SA_PREFIX}{namespace}:{name}"


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """The groups a ServiceAccount token carries (k8s.io/apiserver ``serviceaccount.MakeGroupNames``)."""
    return (SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{namespace}", AUTHENTICATED)


def split_service_account(user: str) -> tuple[str, str] | None:
    """``(namespace, name)`` of a ServiceAccount username, ``None`` for any other user."""
    if not user.startswith(_SA_PREFIX):
        return None
    namespace, _, name = user[len(_SA_PREFIX) :].partition(":")
    if not namespace or not name or ":" in name:
        return None
    return namespace, name


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

    def for_service_account(self, namespace: str, name: str, *, uid: str = "") -> str:
        """A token as ``kubectl create token`` gets one: the ServiceAccount's user and groups, its
        uid when known, and the token's own id in ``extra`` (1.34 adds ``JTI=<id>`` to every
        bound ServiceAccount token)."""
        jti = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        identity = Identity(
            service_account_user(namespace, name),
            service_account_groups(namespace),
            uid=uid,
            extra=((CREDENTIAL_ID, (f"JTI={jti}",)),),
        )
        return self.mint(identity)

    def who(self, token: str | None) -> Identity | None:
        if not token:
            return None
        with self._lock:
            return self._tokens.get(token)

    def revoke(self, token: str) -> None:
        """Refuse ``token`` from now on (401), as a real server refuses an expired bound token or
        one whose ServiceAccount was deleted; the admin token cannot be revoked."""
        with self._lock:
            if token != self.admin_token:
                self._tokens.pop(token, None)

    def reset(self) -> None:
        """Forget every minted token; the admin token stays valid (kubeconfigs keep working)."""
        with self._lock:
            admin = self._tokens[self.admin_token]
            self._tokens = {self.admin_token: admin}
