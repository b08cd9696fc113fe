"""Pod status documents a kubelet writes, from Pending to a terminated container.

Shapes follow what ``kubectl get pods`` and our validators read: phase, the five pod conditions,
and one ``containerStatuses`` entry per container with ``waiting`` / ``running`` / ``terminated``
state. Crash-looping is a Running pod whose container waits in ``CrashLoopBackOff`` with the
last failure in ``lastState``.
"""

from __future__ import annotations

import hashlib
from typing import Any


def _cid(uid: str, name: str) -> str:
    return "containerd://" + hashlib.sha256(f"{uid}/{name}".encode()).hexdigest()


def _image_id(image: str) -> str:
    return f"{image.split(':')[0]}@sha256:" + hashlib.sha256(image.encode()).hexdigest()


def _conditions(
    now: str,
    *,
    ready: bool,
    scheduled: bool = True,
    started: bool = True,
    reason: str = "ContainersNotReady",
    message: str | None = None,
) -> list[dict[str, Any]]:
    def one(kind: str, ok: bool, why: str | None = None) -> dict[str, Any]:
        c: dict[str, Any] = {
            "type": kind,
            "status": "True" if ok else "False",
            "lastProbeTime": None,
            "lastTransitionTime": now,
        }
        if not ok and why:
            c["reason"] = why
            if message:
                c["message"] = message
        return c

    return [
        one("PodReadyToStartContainers", started),
        one("Initialized", True),
        one("Ready", ready, reason),
        one("ContainersReady", ready, reason),
        one("PodScheduled", scheduled),
    ]


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return list((pod.get("spec") or {}).get("containers") or [])


def creating(pod: dict[str, Any], *, host_ip: str, now: str) -> dict[str, Any]:
    statuses = [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": "",
            "ready": False,
            "restartCount": 0,
            "started": False,
            "state": {"waiting": {"reason": "ContainerCreating"}},
        }
        for c in _containers(pod)
    ]
    return {
        "phase": "Pending",
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "startTime": now,
        "qosClass": _qos(pod),
        "conditions": _conditions(now, ready=False, started=False),
        "containerStatuses": statuses,
    }


def running(pod: dict[str, Any], *, host_ip: str, pod_ip: str, now: str) -> dict[str, Any]:
    uid = pod["metadata"].get("uid", "")
    started = (pod.get("status") or {}).get("startTime") or now
    statuses = [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": _image_id(c.get("image", "")),
            "containerID": _cid(uid, c.get("name", "")),
            "ready": True,
            "restartCount": 0,
            "started": True,
            "state": {"running": {"startedAt": now}},
        }
        for c in _containers(pod)
    ]
    return {
        "phase": "Running",
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": started,
        "qosClass": _qos(pod),
        "conditions": _conditions(now, ready=True),
        "containerStatuses": statuses,
    }


def terminated(
    pod: dict[str, Any], *, exit_code: int, now: str, reason: str | None = None, message: str | None = None
) -> dict[str, Any]:
    status = dict(pod.get("status") or {})
    uid = pod["metadata"].get("uid", "")
    why = reason or ("Completed" if exit_code == 0 else "Error")
    statuses = []
    for c in _containers(pod):
        previous: dict[str, Any] = next(
            (s for s in status.get("containerStatuses") or [] if s.get("name") == c.get("name")), {}
        )
        started_at = ((previous.get("state") or {}).get("running") or {}).get("startedAt") or now
        state: dict[str, Any] = {
            "exitCode": exit_code,
            "reason": why,
            "startedAt": started_at,
            "finishedAt": now,
            "containerID": _cid(uid, c.get("name", "")),
        }
        if message:
            state["message"] = message
        statuses.append(
            {
                "name": c.get("name", ""),
                "image": c.get("image", ""),
                "imageID": _image_id(c.get("image", "")),
                "containerID": _cid(uid, c.get("name", "")),
                "ready": False,
                "restartCount": 0,
                "started": False,
                "state": {"terminated": state},
            }
        )
    status.update(
        {
            "phase": "Succeeded" if exit_code == 0 else "Failed",
            "containerStatuses": statuses,
            "conditions": _conditions(now, ready=False, reason="PodCompleted" if exit_code == 0 else "PodFailed"),
        }
    )
    if reason and exit_code != 0:
        status["reason"] = reason
        if message:
            status["message"] = message
    return status


def rejected(pod: dict[str, Any], *, reason: str, message: str, now: str) -> dict[str, Any]:
    """The kubelet refused the pod at admission (e.g. ``OutOfnvidia.com/gpu``)."""
    return {
        "phase": "Failed",
        "reason": reason,
        "message": message,
        "startTime": now,
        "conditions": _conditions(now, ready=False, reason="PodFailed"),
    }


def unschedulable(pod: dict[str, Any], *, message: str, now: str) -> dict[str, Any]:
    status = dict(pod.get("status") or {})
    status["phase"] = "Pending"
    status["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
            "lastProbeTime": None,
            "lastTransitionTime": now,
        }
    ]
    return status


def crashloop(pod: dict[str, Any], *, host_ip: str, pod_ip: str, now: str, restarts: int = 5) -> dict[str, Any]:
    """Running pod, container waiting in CrashLoopBackOff after ``restarts`` failed starts."""
    status = running(pod, host_ip=host_ip, pod_ip=pod_ip, now=now)
    status["conditions"] = _conditions(now, ready=False)
    for s in status["containerStatuses"]:
        s.update(
            {
                "ready": False,
                "started": False,
                "restartCount": restarts,
                "state": {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": f"back-off 5m0s restarting failed container={s['name']} "
                        f"pod={pod['metadata']['name']}_{pod['metadata'].get('namespace')}"
                        f"({pod['metadata'].get('uid', '')})",
                    }
                },
                "lastState": {
                    "terminated": {
                        "exitCode": 1,
                        "reason": "Error",
                        "startedAt": now,
                        "finishedAt": now,
                        "containerID": s["containerID"],
                    }
                },
            }
        )
    return status


RESTART_BACKOFF_START, RESTART_BACKOFF_MAX = 10.0, 300.0
"""The kubelet's container restart back-off: 10 s, doubling, at most 5 min."""


def restarts(pod: dict[str, Any]) -> int:
    return max(
        (int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or []), default=0
    )


def restart_backoff(restart: int) -> float:
    """Seconds before restart number ``restart``: the first is immediate, then 10 s doubling to 5 min."""
    if restart <= 1:
        return 0.0
    return float(min(RESTART_BACKOFF_START * 2 ** (restart - 2), RESTART_BACKOFF_MAX))


def crashed(pod: dict[str, Any], *, exit_code: int, restarts: int, now: str, waiting: bool) -> dict[str, Any]:
    """A ``restartPolicy: Always`` container that ended: the pod stays Running, not ready, its
    container waiting in ``CrashLoopBackOff`` (or about to start again) with the end in ``lastState``."""
    status = dict(pod.get("status") or {})
    uid = pod["metadata"].get("uid", "")
    previous = {s.get("name"): s for s in status.get("containerStatuses") or []}
    statuses = []
    for c in _containers(pod):
        name = c.get("name", "")
        started_at = (((previous.get(name) or {}).get("state") or {}).get("running") or {}).get("startedAt") or now
        ended = {
            "exitCode": exit_code,
            "reason": "Completed" if exit_code == 0 else "Error",
            "startedAt": started_at,
            "finishedAt": now,
            "containerID": _cid(uid, name),
        }
        state: dict[str, Any] = {"terminated": ended}
        if waiting:
            state = {
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": f"back-off {restart_backoff(restarts):.0f}s restarting failed container={name} "
                    f"pod={pod['metadata']['name']}_{pod['metadata'].get('namespace')}({uid})",
                }
            }
        statuses.append(
            {
                "name": name,
                "image": c.get("image", ""),
                "imageID": _image_id(c.get("image", "")),
                "containerID": _cid(uid, name),
                "ready": False,
                "restartCount": restarts,
                "started": False,
                "state": state,
                "lastState": {"terminated": ended},
            }
        )
    status.update({"phase": "Running", "containerStatuses": statuses, "conditions": _conditions(now, ready=False)})
    return status


def restarted(pod: dict[str, Any], *, host_ip: str, pod_ip: str, now: str) -> dict[str, Any]:
    """The container running again after a restart: Ready, with its count and last end kept."""
    status = running(pod, host_ip=host_ip, pod_ip=pod_ip, now=now)
    before = {s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []}
    for s in status["containerStatuses"]:
        old = before.get(s["name"]) or {}
        s["restartCount"] = int(old.get("restartCount") or 0)
        if old.get("lastState"):
            s["lastState"] = old["lastState"]
    return status


def _qos(pod: dict[str, Any]) -> str:
    """The QoS class the server computed at create time; a kubelet may not change it (the
    status update would be refused)."""
    return str((pod.get("status") or {}).get("qosClass") or "BestEffort")
