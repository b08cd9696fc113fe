"""Deleting objects the way controllers need it: with a propagation policy, absent is fine.

``shared.kube.rest`` covers reads, creates and replaces; deletion lives here because a Job must be
deleted with ``propagationPolicy`` (or its pods are orphaned), and a deleted-already object is
success for an idempotent controller.
"""

from __future__ import annotations

from typing import Any

from shared import errors
from shared.kube import retry


def delete(api: Any, path: str, *, propagation: str = "Background", what: str | None = None) -> bool:
    """DELETE ``path``; True when it existed. Retries transient failures; 404 is not an error."""
    body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation}

    def call() -> None:
        api.call_api(path, "DELETE", header_params={"Accept": "application/json",
                                                    "Content-Type": "application/json"},
                     body=body, auth_settings=["BearerToken"], _return_http_data_only=True,
                     _preload_content=False, _request_timeout=30)

    try:
        retry.call(call, what=what or path)
    except errors.NotFound:
        return False
    return True


def status_of(job: dict[str, Any]) -> str | None:
    """``Complete`` or ``Failed`` once the Job controller has decided, else None."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("status") == "True" and condition.get("type") in ("Complete", "Failed"):
            return str(condition["type"])
    return None
