"""Pod eviction through the Eviction API, one attempt, with the PodDisruptionBudget answer as data.

``rest`` retries a 429 by sleeping, which is right for throttling but wrong for an eviction that a
PodDisruptionBudget refuses: the budget may forbid it for minutes, and a drain must back off in its
own (virtual) time and keep serving other nodes meanwhile. So this module makes exactly one call and
returns what happened; 404 (the pod is already gone) is success for an idempotent drain.
"""

from __future__ import annotations

from typing import Any, Literal

from shared import errors
from shared.kube import errors as kube_errors
from shared.kube import rest
from shared.kube.api import KubeApi

Result = Literal["evicted", "blocked", "gone"]


def evict(api: KubeApi, namespace: str, name: str, *, grace_seconds: int | None = None) -> tuple[Result, str]:
    """Evict one pod: ("evicted" | "blocked" (429, the budget's message) | "gone", message)."""
    body: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }
    if grace_seconds is not None:
        body["deleteOptions"] = {"gracePeriodSeconds": grace_seconds}
    path = rest.core_path("pods", namespace, name) + "/eviction"
    try:
        api.call_api(
            path,
            "POST",
            header_params={"Accept": "application/json", "Content-Type": "application/json"},
            body=body,
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
            _preload_content=False,
            _request_timeout=30,
        )
    except Exception as exc:
        error = kube_errors.from_exception(exc, where=f"pod {namespace}/{name}")
        if isinstance(error, kube_errors.Throttled):
            return "blocked", error.message
        if isinstance(error, errors.NotFound):
            return "gone", ""
        if error is exc:
            raise
        raise error from exc
    return "evicted", ""
