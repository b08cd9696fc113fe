"""core/v1 Events about a node, for people: drain waiting on pods, remediation needing support.

Named after the node, reason and message, so a controller that redoes a step after a restart
creates the same Event once (AlreadyExists is success) instead of flooding ``kubectl get events``.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from shared.kube import errors as kube_errors
from shared.kube import rest

NAMESPACE = "default"


def node_event(
    api: Any, node: str, *, reason: str, message: str, component: str, now: datetime, kind: str = "Normal"
) -> None:
    """Create the Event once (upstream writes them to ``default`` with the component as source)."""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    digest = hashlib.sha256(f"{reason}|{message}".encode()).hexdigest()[:12]
    name = f"{node}.{reason.lower()}.{digest}"
    body = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "involvedObject": {"kind": "Node", "name": node, "uid": node},
        "type": kind,
        "reason": reason,
        "message": message,
        "source": {"component": component, "host": node},
        "reportingComponent": component,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
    try:
        rest.create(api, rest.core_path("events", NAMESPACE), body, what=f"event {name}")
    except kube_errors.AlreadyExists:
        return
