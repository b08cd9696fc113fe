"""The runner's side of a backend: create a group's objects, see where its pods run, read its end.

A group's workload (TrainJob, MPIJob or Job) is created after what it references (ComputeDomain,
TrainingRuntime); each create that meets AlreadyExists adopts the object, so a runner killed
between creating and recording finds its work on the next step. mpirun and NCCL name hosts
by the pods' hostnames, so a log's "``<host>: Test CUDA failure``" is turned into a node through
the pods (:func:`placement`) or, for pods already gone (a finished JobSet deletes its worker Jobs
with their pods), through the scheduler's ``Scheduled`` Events (:func:`scheduled`). Once the workload has ended, the
result is the complete log of the pod that reports it (the launcher; index 0 of a torch run or a
Job), and a failed run's log is the one of the pod that exited non-zero first (upstream NVCRE's
``failureLog``), which names the cause where the launcher only says a peer died.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from typing import Any

from shared import errors
from shared.certify import results
from shared.certify.workloads import backends
from shared.certify.workloads.backends import Watch
from shared.kube import errors as kube_errors
from shared.kube import podlogs, rest
from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)

PLURALS = {
    "TrainJob": "trainjobs",
    "TrainingRuntime": "trainingruntimes",
    "MPIJob": "mpijobs",
    "Job": "jobs",
    "ComputeDomain": "computedomains",
}
"""The resource of each kind a backend renders."""
SHARED = ("TrainingRuntime", "ComputeDomain")
"""Kinds a category's groups share: every group after the first finds them made."""
_DONE = {"Complete": False, "Succeeded": False, "Failed": True}
"""Terminal condition types of the three workload kinds (Job and TrainJob: Complete; MPIJob:
Succeeded) -> whether they mean failure."""
INDEX = "batch.kubernetes.io/job-completion-index"


def path(api_version: str, kind: str, namespace: str, name: str | None = None) -> str:
    group, _, version = api_version.rpartition("/")
    plural = PLURALS[kind]
    if not group:
        return rest.core_path(plural, namespace, name)
    return rest.group_path(group, version, plural, namespace, name)


def create(api: KubeApi, docs: list[dict[str, Any]], *, namespace: str) -> None:
    """Create each object in order; one that exists already is adopted (a shared runtime, or a
    workload created by a runner that died before recording it)."""
    for doc in docs:
        name = doc["metadata"]["name"]
        try:
            rest.create(api, path(doc["apiVersion"], doc["kind"], namespace), doc, what=f"{doc['kind']} {name}")
        except kube_errors.AlreadyExists:
            shared = doc["kind"] in SHARED  # made with the category's first group: expected, not news
            logger.log(
                logging.DEBUG if shared else logging.INFO, "adopting existing %s %s/%s", doc["kind"], namespace, name
            )


@dataclass(frozen=True)
class Ended:
    """A workload that has ended: how, and the log that tells why."""

    failed: bool
    deadline: bool
    log: str
    hosts: dict[str, str]
    """Hostname -> node of the pods the log may name."""


def _terminal(obj: dict[str, Any]) -> tuple[bool, bool] | None:
    """(failed, deadline exceeded) once a terminal condition is True, else None."""
    for condition in (obj.get("status") or {}).get("conditions") or []:
        kind = condition.get("type")
        if condition.get("status") == "True" and kind in _DONE:
            return _DONE[kind], condition.get("reason") == "DeadlineExceeded"
    return None


def hostname(pod: dict[str, Any]) -> str:
    """The name a pod's processes print and mpirun reaches it by (the first label of its DNS name)."""
    return str((pod.get("spec") or {}).get("hostname") or pod["metadata"]["name"])


def placement(pods: list[dict[str, Any]]) -> dict[str, str]:
    """Hostname -> node of every bound pod."""
    return {hostname(p): str(p["spec"]["nodeName"]) for p in pods if (p.get("spec") or {}).get("nodeName")}


_ASSIGNED = re.compile(r"^Successfully assigned (?P<ns>[^/\s]+)/(?P<pod>\S+) to (?P<node>\S+)$")


_RANDOM_SUFFIX = re.compile(r"^[bcdfghjklmnpqrstvwxz2456789]{5}$")
"""What ``generateName`` appends (apimachinery ``utilrand.String(5)``): a Job's pods are named so."""


def _pod_has_hostname(pod: str, host: str) -> bool:
    """Whether pod ``pod`` prints ``host``: a JobSet or Job pod's name is its hostname plus the
    Job controller's random suffix; an MPIJob pod's name is its hostname."""
    if pod == host:
        return True
    return pod.startswith(host + "-") and bool(_RANDOM_SUFFIX.match(pod[len(host) + 1 :]))


def scheduled(api: KubeApi, namespace: str, hosts: set[str]) -> dict[str, str]:
    """Hostname -> node for pods already gone, from the scheduler's ``Scheduled`` Events
    ("Successfully assigned NS/POD to NODE"), which outlive the pods (an hour by default)."""
    if not hosts:
        return {}
    found: dict[str, tuple[str, str]] = {}
    events = rest.iter_items(
        api, rest.core_path("events", namespace), field_selector="reason=Scheduled,involvedObject.kind=Pod"
    )
    for event in events:
        m = _ASSIGNED.match(str(event.get("message") or ""))
        if m is None or m["ns"] != namespace:
            continue
        when = str(event.get("lastTimestamp") or event.get("eventTime") or "")
        for host in hosts:
            if _pod_has_hostname(m["pod"], host) and when >= found.get(host, ("", ""))[0]:
                found[host] = (when, m["node"])
    return {host: node for host, (_, node) in found.items()}


def pods(api: KubeApi, watch: Watch, namespace: str) -> list[dict[str, Any]]:
    return rest.list_items(api, rest.core_path("pods", namespace), label_selector=watch.pods_selector)


def _first_failure(found: list[dict[str, Any]]) -> tuple[dict[str, Any], str] | None:
    """The pod (and container) that exited non-zero first."""
    exits = []
    for pod in found:
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            ended = (status.get("state") or {}).get("terminated") or {}
            if ended and int(ended.get("exitCode") or 0) != 0:
                exits.append((str(ended.get("finishedAt") or ""), pod["metadata"]["name"], pod, str(status["name"])))
    if not exits:
        return None
    _, _, pod, container = min(exits, key=lambda e: (e[0], e[1]))
    return pod, container


def _result_pod(found: list[dict[str, Any]], watch: Watch) -> dict[str, Any] | None:
    """The pod whose log holds the result: the one of the watch's selector with the lowest index."""
    from shared.kube import labelselector

    wanted = labelselector.parse(watch.log_pod_selector)
    chosen = [p for p in found if labelselector.matches(wanted, p["metadata"].get("labels") or {})]
    if not chosen:
        return None
    return min(
        chosen,
        key=lambda p: (int((p["metadata"].get("annotations") or {}).get(INDEX, 0)), p["metadata"]["name"]),
    )


def _read(api: KubeApi, namespace: str, pod: dict[str, Any], container: str | None) -> str:
    with contextlib.suppress(errors.NotFound):  # deleted since listed: its log is gone with it
        return podlogs.read(api, namespace, pod["metadata"]["name"], container=container)
    return ""


def ended(api: KubeApi, watch: Watch, namespace: str) -> Ended | None:
    """The workload's end, or None while it runs; NotFound when it is gone."""
    obj = rest.get(api, path(watch.api_version, watch.kind, namespace, watch.name), what=f"{watch.kind} {watch.name}")
    state = _terminal(obj)
    if state is None:
        return None
    failed, deadline = state
    found = pods(api, watch, namespace)
    result = _result_pod(found, watch)
    log = _read(api, namespace, result, watch.log_container) if result is not None else ""
    if failed:
        first = _first_failure(found)
        if first is not None and first[0] is not result:
            own = _read(api, namespace, first[0], first[1])
            log = own if own.strip() else log
    hosts = placement(found)
    if failed:
        gone = {h.split(".")[0] for h in results.cuda_failure_hosts(log)} - set(hosts)
        hosts.update(scheduled(api, namespace, gone))
    return Ended(failed=failed, deadline=deadline, log=log, hosts=hosts)


def served(api: KubeApi) -> set[str]:
    """Which of the resources certification creates the cluster serves, as ``group/version/plural``
    (one discovery read per group version; a version the cluster does not serve adds nothing)."""
    found: set[str] = set()
    for group_version in sorted({r.rsplit("/", 1)[0] for r in backends.OPERATORS}):
        try:
            listing = rest.get(api, f"/apis/{group_version}")
        except errors.ToolError:
            continue
        found |= {f"{group_version}/{r.get('name')}" for r in listing.get("resources") or []}
    return found


def running_log(api: KubeApi, watch: Watch, namespace: str) -> str | None:
    """The log so far of the pod that reports the result, once it runs (None before)."""
    result = _result_pod(pods(api, watch, namespace), watch)
    if result is None or (result.get("status") or {}).get("phase") != "Running":
        return None
    return _read(api, namespace, result, watch.log_container)


def cancel(api: KubeApi, watch: Watch, namespace: str) -> None:
    """Delete the workload and, by the garbage collector, everything it made (its pods free their GPUs)."""
    rest.delete(
        api,
        path(watch.api_version, watch.kind, namespace, watch.name),
        propagation="Background",
        what=f"{watch.kind} {watch.name}",
    )
