"""Pod eviction through the Eviction API, one attempt, with the PodDisruptionBudget answer as data.

``rest`` retries a 429 by sleeping, which is right for throttling but wrong for an eviction that a
PodDisruptionBudget refuses: the budget may forbid it for minutes, and a drain must back off in its
own (virtual) time and keep serving other nodes meanwhile. So this module makes exactly one call and
returns what happened; 404 (the pod is already gone) is success for an idempotent drain.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from shared import errors
from shared.kube import errors as kube_errors
from shared.kube import rest
from shared.kube.api import KubeApi

Result = Literal["evicted", "blocked", "gone"]
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
_BUDGET_NAME = re.compile(r"^The disruption budget (\S+) (?:needs|is still being processed)")


def budget_refusal(body: Any) -> tuple[str, str]:
    """(budget name, its cause message) from a 429 Status body, ("", "") when no budget refused.

    The API server puts the budget in ``details.causes``: reason ``DisruptionBudget``, message
    ``The disruption budget NAME needs N healthy pods and has M currently`` (or ``... is still being
    processed by the server.`` before the disruption controller has counted it)
    (``kubernetes:pkg/registry/core/pod/storage/eviction.go``)."""
    try:
        data = json.loads(body) if isinstance(body, str | bytes) else body
    except ValueError:
        return "", ""
    details = data.get("details") if isinstance(data, dict) else None
    causes = details.get("causes") if isinstance(details, dict) else None
    for cause in causes if isinstance(causes, list) else []:
        if isinstance(cause, dict) and cause.get("reason") == DISRUPTION_BUDGET_CAUSE:
            message = str(cause.get("message") or "") or "refused by a PodDisruptionBudget"
            found = _BUDGET_NAME.match(message)
            return (found.group(1) if found else "unknown"), message
    return "", ""


def evict(api: KubeApi, namespace: str, name: str, *, grace_seconds: int | None = None) -> tuple[Result, str, str]:
    """Evict one pod: ("evicted" | "blocked" (429) | "gone", message, budget).

    ``budget`` names the PodDisruptionBudget that refused a blocked eviction (its cause message is
    then the message), "" for a refusal without one (throttling)."""
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
            budget, said = budget_refusal(getattr(exc, "body", None))
            return "blocked", said or error.message, budget
        if isinstance(error, errors.NotFound):
            return "gone", "", ""
        if error is exc:
            raise
        raise error from exc
    return "evicted", "", ""
