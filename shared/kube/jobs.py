"""Jobs as the certification runner sees them: deleted with their pods, and their final state."""

from __future__ import annotations

from typing import Any

from shared.kube import rest
from shared.kube.api import KubeApi


def delete(api: KubeApi, path: str, *, propagation: str = "Background", what: str | None = None) -> bool:
    """DELETE ``path``; True when it existed (see ``rest.delete``)."""
    return rest.delete(api, path, propagation=propagation, what=what)


def status_of(job: dict[str, Any]) -> str | None:
    """``Complete`` or ``Failed`` once the Job controller has decided, else None."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("status") == "True" and condition.get("type") in ("Complete", "Failed"):
            return str(condition["type"])
    return None
