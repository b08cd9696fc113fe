"""A Pod's row in a ``Table``, as kube-apiserver prints it (pkg/printers/internalversion ``printPod``).

The row is not a display nicety: clients read it. ``kubectl get pods`` shows it, and ``aicr
validate`` lists pods as a Table with ``includeObject=None`` and judges a pod healthy from its READY
and STATUS cells alone (a few dozen bytes a pod instead of a few kilobytes), fetching the whole pod
only when the row says otherwise. So the STATUS rules are upstream's, case for case: the pod's
phase or reason, scheduling gates, the first failing or pending init container (``Init:…``), then
the regular containers from last to first so the first one's waiting or terminated reason wins,
``Completed`` turned back into ``Running``/``NotReady`` while another container runs, and
``Terminating`` or ``Unknown`` for a pod being deleted. READY counts ready running containers and
started, ready sidecars (init containers with ``restartPolicy: Always``) over both.

What does not depend on the clock is computed once, when the pod is written (``printed``), and
kept beside the stored object, so a list of 100,000 pods as a Table decodes none of them; the ages
are rendered per request (``cells``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

COLUMNS: list[tuple[str, str, int]] = [
    ("Name", "string", 0),
    ("Ready", "string", 0),
    ("Status", "string", 0),
    ("Restarts", "string", 0),
    ("Age", "string", 0),
    ("IP", "string", 1),
    ("Node", "string", 1),
    ("Nominated Node", "string", 1),
    ("Readiness Gates", "string", 1),
]
"""podColumnDefinitions: the priority-1 columns are what ``kubectl get -o wide`` adds."""

_SUCCEEDED = [
    {"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}
]
_FAILED = [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
_NODE_UNREACHABLE = "NodeLost"  # pkg/util/node NodeUnreachablePodReason


class Printed(NamedTuple):
    """The clock-free part of a pod's row."""

    name: str
    ready: str
    status: str
    restarts: int
    last_restart: float | None
    """When the last counted restart's container finished (epoch seconds), for ``3 (2m ago)``."""
    created: float | None
    ip: str
    node: str
    nominated: str
    gates: str
    conditions: list[dict[str, str]] | None
    """The row's own conditions: ``Completed`` for a pod that succeeded or failed."""


def timestamp(text: Any) -> float | None:
    """Epoch seconds of an RFC 3339 time as the API serves it, None when absent or unparsable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


_DAY, _YEAR = 86_400, 31_536_000
_TIERS: tuple[tuple[float, int, str, int, int, str], ...] = (
    # below this many seconds: the big unit and its suffix, then the small unit, its modulus and suffix (0: none)
    (600, 60, "m", 1, 60, "s"),
    (10_800, 60, "m", 0, 0, ""),
    (28_800, 3600, "h", 60, 60, "m"),
    (172_800, 3600, "h", 0, 0, ""),
    (691_200, _DAY, "d", 3600, 24, "h"),
    (2 * _YEAR, _DAY, "d", 0, 0, ""),
    (8 * _YEAR, _YEAR, "y", _DAY, 365, "d"),
    (float("inf"), _YEAR, "y", 0, 0, ""),
)


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: ``45s``, ``3m20s``, ``95m``, ``5h10m``, ``3d4h``, ``2y15d``."""
    whole = int(seconds)
    if whole < 0:
        return "<invalid>" if whole < -1 else "0s"
    if whole < 120:
        return f"{whole}s"
    for limit, big, big_suffix, small, modulus, small_suffix in _TIERS:
        if whole < limit:
            rest = (whole // small) % modulus if small else 0
            return f"{whole // big}{big_suffix}" + (f"{rest}{small_suffix}" if rest else "")
    raise AssertionError("the last tier has no limit")


def since(moment: float | None, now: datetime) -> str:
    """``translateTimestampSince``: ``<unknown>`` for no time."""
    return "<unknown>" if moment is None else human_duration(now.timestamp() - moment)


def cells(printed: Printed, now: datetime) -> list[Any]:
    """The row's cells at ``now``, in ``COLUMNS`` order."""
    restarts = str(printed.restarts)
    if printed.restarts and printed.last_restart is not None:
        restarts = f"{printed.restarts} ({since(printed.last_restart, now)} ago)"
    return [
        printed.name,
        printed.ready,
        printed.status,
        restarts,
        since(printed.created, now),
        printed.ip,
        printed.node,
        printed.nominated,
        printed.gates,
    ]


def _finished(container: dict[str, Any]) -> float | None:
    terminated = (container.get("lastState") or {}).get("terminated")
    return timestamp(terminated.get("finishedAt")) if terminated else None


def _later(current: float | None, candidate: float | None) -> float | None:
    if candidate is None:
        return current
    return candidate if current is None or candidate > current else current


def _terminated_text(terminated: dict[str, Any], prefix: str = "") -> str:
    if terminated.get("reason"):
        return prefix + str(terminated["reason"])
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode', 0)}"


def _condition(status: dict[str, Any], kind: str) -> bool:
    """``isPodInitializedConditionTrue`` / ``hasPodReadyCondition``: the first condition of the type."""
    for condition in status.get("conditions") or ():
        if condition.get("type") == kind:
            return bool(condition.get("status") == "True")
    return False


class _Count:
    """The tallies printPod keeps while it walks the container statuses."""

    def __init__(self) -> None:
        self.ready = 0
        self.restarts = 0
        self.sidecar_restarts = 0
        self.last: float | None = None
        self.sidecar_last: float | None = None


def _init_reason(spec: dict[str, Any], status: dict[str, Any], count: _Count) -> str | None:
    """The first init container that keeps the pod initialising (``Init:…``), None when none does."""
    sidecars = {c.get("name") for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"}
    total = len(spec.get("initContainers") or ())
    for index, container in enumerate(status.get("initContainerStatuses") or ()):
        restarts = int(container.get("restartCount") or 0)
        count.restarts += restarts
        count.last = _later(count.last, _finished(container))
        sidecar = container.get("name") in sidecars
        if sidecar:
            count.sidecar_restarts += restarts
            count.sidecar_last = _later(count.sidecar_last, _finished(container))
        state = container.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated and int(terminated.get("exitCode") or 0) == 0:
            continue
        if sidecar and container.get("started"):
            count.ready += 1 if container.get("ready") else 0
            continue
        if terminated:
            return _terminated_text(terminated, "Init:")
        if waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            return f"Init:{waiting['reason']}"
        return f"Init:{index}/{total}"
    return None


def _container_reason(status: dict[str, Any], reason: str, count: _Count) -> str:
    """The regular containers, last to first: the first one with a reason has the last word."""
    count.restarts, count.last = count.sidecar_restarts, count.sidecar_last
    running = False
    for container in reversed(status.get("containerStatuses") or ()):
        count.restarts += int(container.get("restartCount") or 0)
        count.last = _later(count.last, _finished(container))
        state = container.get("state") or {}
        waiting, terminated = state.get("waiting") or {}, state.get("terminated")
        if waiting.get("reason"):
            reason = str(waiting["reason"])
        elif terminated is not None:
            reason = _terminated_text(terminated)
        elif container.get("ready") and state.get("running") is not None:
            running = True
            count.ready += 1
    if reason == "Completed" and running:
        reason = "Running" if _condition(status, "Ready") else "NotReady"
    return reason


def _gates(spec: dict[str, Any], status: dict[str, Any]) -> str:
    gates = spec.get("readinessGates") or []
    if not gates:
        return "<none>"
    conditions = status.get("conditions") or []
    true = 0
    for gate in gates:
        found = next((c for c in conditions if c.get("type") == gate.get("conditionType")), None)
        true += 1 if found is not None and found.get("status") == "True" else 0
    return f"{true}/{len(gates)}"


def printed(pod: dict[str, Any]) -> Printed:
    """The clock-free row of ``pod``."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or phase)
    for condition in status.get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    total = len(spec.get("containers") or ()) + sum(
        1 for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"
    )
    count = _Count()
    initialising = _init_reason(spec, status, count)
    if initialising is not None:
        reason = initialising
    if initialising is None or _condition(status, "Initialized"):
        reason = _container_reason(status, reason, count)
    if meta.get("deletionTimestamp") and status.get("reason") == _NODE_UNREACHABLE:
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    ips = status.get("podIPs") or []
    return Printed(
        name=str(meta.get("name", "")),
        ready=f"{count.ready}/{total}",
        status=reason,
        restarts=count.restarts,
        last_restart=count.last,
        created=timestamp(meta.get("creationTimestamp")),
        ip=str((ips[0] or {}).get("ip") or "<none>") if ips else "<none>",
        node=str(spec.get("nodeName") or "<none>"),
        nominated=str(status.get("nominatedNodeName") or "<none>"),
        gates=_gates(spec, status),
        conditions=_SUCCEEDED if phase == "Succeeded" else _FAILED if phase == "Failed" else None,
    )
