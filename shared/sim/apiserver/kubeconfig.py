"""The kubeconfig file that points any client (ours, kubectl) at an emulator, and reading it back.

Written with mode 0600 because it holds the admin token. The sim's own commands (``api-faults``,
``token``, ``audit``) read the current context's server and token from it, so a user needs only
the one file the server wrote.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared import errors, files, yamlio

CONTEXT = "sim"


def document(
    url: str, token: str, *, user: str = "sim-admin", namespace: str = "default", ca_pem: str | None = None
) -> dict[str, Any]:
    cluster: dict[str, Any] = {"server": url}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem.encode()).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": CONTEXT, "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": user, "namespace": namespace}}],
        "current-context": CONTEXT,
    }


def write(
    path: Path, url: str, token: str, *, user: str = "sim-admin", namespace: str = "default", ca_pem: str | None = None
) -> None:
    text = yamlio.dumps(document(url, token, user=user, namespace=namespace, ca_pem=ca_pem))
    files.atomic_write_text(path, text, mode=0o600)


@dataclass(frozen=True)
class Target:
    """Where a kubeconfig points: server URL and bearer token (never printed)."""

    server: str
    token: str | None
    ca_pem: str | None = None


def read(path: Path, *, context: str | None = None) -> Target:
    """The server and token of ``context`` (default: the current context) in a kubeconfig."""
    data = yamlio.load_file(path)
    if not isinstance(data, dict):
        raise errors.InvalidInput("not a kubeconfig", where=str(path))
    name = context or data.get("current-context")
    ctx = next((c.get("context") or {} for c in data.get("contexts") or [] if c.get("name") == name), None)
    if ctx is None:
        raise errors.InvalidInput(f"context {name!r} not found", where=str(path))
    cluster = next(
        (c.get("cluster") or {} for c in data.get("clusters") or [] if c.get("name") == ctx.get("cluster")), None
    )
    if not cluster or not cluster.get("server"):
        raise errors.InvalidInput(f"cluster {ctx.get('cluster')!r} has no server", where=str(path))
    user = next((u.get("user") or {} for u in data.get("users") or [] if u.get("name") == ctx.get("user")), {})
    ca = cluster.get("certificate-authority-data")
    return Target(
        server=str(cluster["server"]).rstrip("/"),
        token=user.get("token"),
        ca_pem=base64.b64decode(ca).decode() if ca else None,
    )
