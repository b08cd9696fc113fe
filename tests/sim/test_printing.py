"""The simulated API server prints Table rows as kube-apiserver's printers do: Pods (``printPod``), Nodes.

Covers: READY, STATUS and RESTARTS for the states a cluster shows (each case worked through
upstream's rules: the phase or reason, scheduling gates, the first init container still working
(``Init:…``), the regular containers last to first so the first one's reason wins, ``Completed``
back to ``Running``/``NotReady`` beside a running container, sidecars counted in READY, restarts
with their ``(… ago)``, ``Terminating`` and ``Unknown`` while deleted); HumanDuration ages; the
wide cells and the row conditions of a finished pod; the column definitions; that a row printed
when the pod was stored answers ``includeObject=None`` the same as printing the decoded object; that
the pinned kubectl prints the server's columns; and, for any pod, that a row ``aicr validate``
takes as healthy (``Running``, READY ``n/n``) belongs to a pod in phase Running with no waiting
container, which is what lets validation skip reading it. Nodes: ``printNode``'s STATUS (the Ready
condition, ``SchedulingDisabled``), ROLES from both label forms, AGE before VERSION, and the wide
columns from the addresses and nodeInfo.
"""

from __future__ import annotations

import json
import ssl
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.kube import rest
from shared.sim.apiserver import kubeconfig, podprint, resources, tables
from shared.validate import checks, cluster
from tests import simfixtures

NOW = datetime(2026, 12, 3, 12, 0, 0, tzinfo=UTC)


def _at(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _running(name: str = "main", *, ready: bool = True, restarts: int = 0) -> dict[str, Any]:
    return {"name": name, "ready": ready, "restartCount": restarts, "state": {"running": {"startedAt": _at(60)}}}


def _waiting(name: str, reason: str, *, restarts: int = 0, finished: float | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {
        "name": name,
        "ready": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": reason}},
    }
    if finished is not None:
        status["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": _at(finished)}}
    return status


def _terminated(name: str, **terminated: Any) -> dict[str, Any]:
    return {"name": name, "ready": False, "restartCount": 0, "state": {"terminated": terminated}}


def _pod(
    statuses: list[dict[str, Any]],
    *,
    phase: str = "Running",
    init: list[dict[str, Any]] | None = None,
    sidecars: tuple[str, ...] = (),
    conditions: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    init = init or []
    spec: dict[str, Any] = {
        "containers": [{"name": s["name"]} for s in statuses] or [{"name": "main"}],
        "nodeName": "node-003",
    }
    if init:
        spec["initContainers"] = [
            {"name": s["name"], **({"restartPolicy": "Always"} if s["name"] in sidecars else {})} for s in init
        ]
    status: dict[str, Any] = {"phase": phase, "containerStatuses": statuses, "podIPs": [{"ip": "10.244.0.7"}]}
    if init:
        status["initContainerStatuses"] = init
    if conditions is not None:
        status["conditions"] = conditions
    status.update(extra.pop("status", {}))
    meta = {"name": "p", "creationTimestamp": _at(200), **extra.pop("metadata", {})}
    return {"metadata": meta, "spec": {**spec, **extra.pop("spec", {})}, "status": status}


def _row(pod: dict[str, Any]) -> tuple[str, str, str]:
    cells = podprint.cells(podprint.printed(pod), NOW)
    return cells[1], cells[2], cells[3]


CASES = {
    "running": (_pod([_running()]), ("1/1", "Running", "0")),
    "running, not ready": (_pod([_running(ready=False)]), ("0/1", "Running", "0")),
    "crash loop, last exit 42 s ago": (
        _pod([_waiting("main", "CrashLoopBackOff", restarts=5, finished=42)]),
        ("0/1", "CrashLoopBackOff", "5 (42s ago)"),
    ),
    "the first container's reason wins": (
        _pod([_waiting("a", "ContainerCreating"), _waiting("b", "CrashLoopBackOff")]),
        ("0/2", "ContainerCreating", "0"),
    ),
    "pending, no statuses": (_pod([], phase="Pending"), ("0/1", "Pending", "0")),
    "scheduling gated": (
        _pod(
            [], phase="Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
        ),
        ("0/1", "SchedulingGated", "0"),
    ),
    "second init container initialising": (
        _pod(
            [_waiting("main", "PodInitializing")],
            phase="Pending",
            init=[_terminated("a", exitCode=0, reason="Completed"), _waiting("b", "PodInitializing")],
        ),
        ("0/1", "Init:1/2", "0"),
    ),
    "init container in a crash loop": (
        _pod(
            [_waiting("main", "PodInitializing")],
            phase="Pending",
            init=[_waiting("a", "CrashLoopBackOff", restarts=3, finished=90)],
        ),
        ("0/1", "Init:CrashLoopBackOff", "3 (90s ago)"),
    ),
    "init container exited 1": (
        _pod([], phase="Pending", init=[_terminated("a", exitCode=1)]),
        ("0/1", "Init:ExitCode:1", "0"),
    ),
    "init container killed": (
        _pod([], phase="Pending", init=[_terminated("a", exitCode=137, signal=9)]),
        ("0/1", "Init:Signal:9", "0"),
    ),
    "init container errored": (
        _pod([], phase="Failed", init=[_terminated("a", exitCode=2, reason="Error")]),
        ("0/1", "Init:Error", "0"),
    ),
    "sidecar started and ready": (
        _pod([_running()], init=[{**_running("proxy"), "started": True}], sidecars=("proxy",)),
        ("2/2", "Running", "0"),
    ),
    "sidecar started, not ready": (
        _pod([_running()], init=[{**_running("proxy", ready=False), "started": True}], sidecars=("proxy",)),
        ("1/2", "Running", "0"),
    ),
    "sidecar restarts count, finished init containers' do not": (
        _pod(
            [_running(restarts=1)],
            init=[
                {**_terminated("setup", exitCode=0, reason="Completed"), "restartCount": 4},
                {**_running("proxy", restarts=2), "started": True},
            ],
            sidecars=("proxy",),
        ),
        ("2/2", "Running", "3"),
    ),
    "completed beside a running container, pod ready": (
        _pod(
            [_terminated("job", exitCode=0, reason="Completed"), _running("server")],
            conditions=[{"type": "Ready", "status": "True"}],
        ),
        ("1/2", "Running", "0"),
    ),
    "completed beside a running container, pod not ready": (
        _pod([_terminated("job", exitCode=0, reason="Completed"), _running("server")]),
        ("1/2", "NotReady", "0"),
    ),
    "succeeded": (
        _pod([_terminated("main", exitCode=0, reason="Completed")], phase="Succeeded"),
        ("0/1", "Completed", "0"),
    ),
    "exited without a reason": (
        _pod([_terminated("main", exitCode=137)], phase="Failed"),
        ("0/1", "ExitCode:137", "0"),
    ),
    "killed without a reason": (
        _pod([_terminated("main", exitCode=0, signal=15)], phase="Failed"),
        ("0/1", "Signal:15", "0"),
    ),
    "evicted": (_pod([], phase="Failed", status={"reason": "Evicted"}), ("0/1", "Evicted", "0")),
    "being deleted": (_pod([_running()], metadata={"deletionTimestamp": _at(5)}), ("1/1", "Terminating", "0")),
    "deleted on an unreachable node": (
        _pod([_running()], metadata={"deletionTimestamp": _at(5)}, status={"reason": "NodeLost"}),
        ("1/1", "Unknown", "0"),
    ),
    "deleted after it succeeded": (
        _pod(
            [_terminated("main", exitCode=0, reason="Completed")],
            phase="Succeeded",
            metadata={"deletionTimestamp": _at(5)},
        ),
        ("0/1", "Completed", "0"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_ready_status_and_restarts_follow_upstream_print_pod(case: str) -> None:
    pod, expected = CASES[case]
    assert _row(pod) == expected


AGES = [
    (0, "0s"),
    (119, "119s"),
    (120, "2m"),
    (200, "3m20s"),
    (600, "10m"),
    (10_799, "179m"),
    (11_520, "3h12m"),
    (28_800, "8h"),
    (172_799, "47h"),
    (200_000, "2d7h"),
    (691_200, "8d"),
    (2 * 31_536_000 + 86_400, "2y1d"),
    (-1, "0s"),
    (-5, "<invalid>"),
]


@pytest.mark.parametrize(("seconds", "shown"), AGES)
def test_ages_are_human_durations(seconds: int, shown: str) -> None:
    assert podprint.human_duration(seconds) == shown


def test_wide_cells_and_the_row_conditions_of_a_finished_pod() -> None:
    gated = _pod(
        [_running()],
        spec={"readinessGates": [{"conditionType": "a"}, {"conditionType": "b"}]},
        conditions=[{"type": "a", "status": "True"}, {"type": "b", "status": "False"}],
        status={"nominatedNodeName": "node-009"},
    )
    assert podprint.cells(podprint.printed(gated), NOW) == [
        "p",
        "1/1",
        "Running",
        "0",
        "3m20s",
        "10.244.0.7",
        "node-003",
        "node-009",
        "1/2",
    ]
    assert podprint.printed(gated).conditions is None
    failed = podprint.printed(_pod([_terminated("main", exitCode=1, reason="Error")], phase="Failed"))
    assert failed.conditions == [
        {"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}
    ]


def _table(config: Path, path: str) -> dict[str, Any]:
    target = kubeconfig.read(config)
    request = urllib.request.Request(
        f"{target.server}{path}",
        headers={"Authorization": f"Bearer {target.token}", "Accept": rest.TABLE_ACCEPT},
    )
    with urllib.request.urlopen(request, context=ssl.create_default_context(cadata=target.ca_pem)) as response:
        document: dict[str, Any] = json.loads(response.read())
    return document


def test_a_stored_row_answers_a_table_without_objects_as_the_object_would(
    sim: Any, sim_kubeconfig: Path, api_client: Any
) -> None:
    rest.create(api_client, rest.core_path("namespaces"), {"metadata": {"name": "rows"}})
    for name in ("a", "b"):
        rest.create(
            api_client,
            rest.core_path("pods", "rows"),
            {"metadata": {"name": name}, "spec": {"containers": [{"name": "main", "image": "example.com/app:1"}]}},
        )
    path = rest.core_path("pods", "rows", "b") + "/status"
    current = rest.get(api_client, rest.core_path("pods", "rows", "b"))
    current["status"] = {"phase": "Running", "containerStatuses": [_waiting("main", "CrashLoopBackOff", restarts=2)]}
    rest.replace(api_client, path, current)
    bare = _table(sim_kubeconfig, "/api/v1/namespaces/rows/pods?includeObject=None")
    meta = _table(sim_kubeconfig, "/api/v1/namespaces/rows/pods")
    assert [c["name"] for c in bare["columnDefinitions"]] == [name for name, _, _ in podprint.COLUMNS]
    assert [c["priority"] for c in bare["columnDefinitions"]] == [0, 0, 0, 0, 0, 1, 1, 1, 1]
    assert [r["cells"][:4] for r in bare["rows"]] == [r["cells"][:4] for r in meta["rows"]]
    assert [r["cells"][:4] for r in bare["rows"]] == [
        ["a", "0/1", "Pending", "0"],
        ["b", "0/1", "CrashLoopBackOff", "2"],
    ]
    assert all("object" not in r for r in bare["rows"])
    assert [r["object"]["metadata"]["name"] for r in meta["rows"]] == ["a", "b"]


def test_kubectl_prints_the_servers_columns(sim: Any, sim_kubeconfig: Path, api_client: Any) -> None:
    rest.create(
        api_client,
        rest.core_path("pods", "default"),
        {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "main", "image": "example.com/app:1"}]}},
    )
    kubectl = simfixtures.kubectl_runner(sim_kubeconfig)
    header, row = kubectl("get", "pods", "-o", "wide").stdout.splitlines()
    assert header.split() == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED",
        "NODE",
        "READINESS",
        "GATES",
    ]
    assert row.split()[:4] == ["web", "0/1", "Pending", "0"]
    assert kubectl("get", "pods").stdout.splitlines()[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]


_reason = st.sampled_from([None, "", "ContainerCreating", "CrashLoopBackOff", "ImagePullBackOff", "PodInitializing"])


def _often(common: Any, *others: Any) -> st.SearchStrategy[Any]:
    """``common`` three times in four: most drawn pods are nearly healthy, so rows pass often."""
    return st.sampled_from([common] * 3 * len(others) + list(others))


@st.composite
def _container_status(draw: st.DrawFn, name: str) -> dict[str, Any]:
    kind = draw(_often("running", "waiting", "terminated", "none"))
    state: dict[str, Any] = {
        "running": {"running": {}},
        "waiting": {"waiting": {"reason": draw(_reason)}},
        "terminated": {
            "terminated": {
                "exitCode": draw(_often(0, 1, 137)),
                "reason": draw(st.sampled_from([None, "Completed", "Error", "OOMKilled"])),
            }
        },
        "none": {},
    }[kind]
    # As the kubelet reports them (its prober manager): a container that is not running is
    # neither ready nor started, whatever its probes said before. A started sidecar is the one
    # init container printPod does not look into, so a started one that waits would be a status
    # no kubelet writes.
    running = kind == "running"
    status: dict[str, Any] = {"name": name, "ready": running and draw(_often(True, False)), "restartCount": 0}
    status["state"] = state
    if draw(st.booleans()):
        status["started"] = running and draw(_often(True, False))
    return status


@st.composite
def _any_pod(draw: st.DrawFn) -> dict[str, Any]:
    regular = [draw(_container_status(f"c{i}")) for i in range(draw(st.integers(1, 3)))]
    init = [draw(_container_status(f"i{i}")) for i in range(draw(st.integers(0, 2)))]
    sidecars = tuple(s["name"] for s in init if draw(st.booleans()))
    conditions = [
        {"type": kind, "status": draw(_often("True", "False"))}
        for kind in draw(st.lists(st.sampled_from(["Ready", "Initialized", "PodScheduled"]), unique=True))
    ]
    extra: dict[str, Any] = {}
    if draw(_often(False, True)):
        extra["status"] = {"reason": draw(st.sampled_from(["Evicted", "NodeLost", "UnexpectedAdmissionError"]))}
    if draw(_often(False, True)):
        extra["metadata"] = {"deletionTimestamp": _at(1)}
    phase = draw(_often("Running", "Pending", "Succeeded", "Failed", "Unknown"))
    return _pod(regular, phase=phase, init=init, sidecars=sidecars, conditions=conditions, **extra)


@settings(max_examples=400)
@given(_any_pod())
def test_a_row_validation_takes_as_healthy_is_a_running_pod_with_nothing_waiting(pod: dict[str, Any]) -> None:
    table = {
        "kind": "Table",
        "columnDefinitions": [{"name": name} for name, _, _ in podprint.COLUMNS],
        "rows": [{"cells": podprint.cells(podprint.printed(pod), NOW)}],
    }
    rows = cluster._pod_rows(table)
    assert rows is not None
    ((_, healthy),) = rows
    if healthy:
        state = checks.pod_state(pod)
        assert (state.phase, state.waiting) == ("Running", ())


def _node_row(**node: Any) -> list[Any]:
    r = next(x for x in resources.BUILTINS if x.kind == "Node")
    obj = {"metadata": {"name": "node-000", "creationTimestamp": _at(11_520), **node.pop("metadata", {})}, **node}
    (row,) = tables.table(r, [obj], now=NOW, include_object="None")["rows"]
    return list(row["cells"])


def test_node_rows_follow_upstream_print_node() -> None:
    labels = {"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/": "", "kubernetes.io/role": "gpu"}
    status = {
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "MemoryPressure", "status": "False"}],
        "addresses": [{"type": "Hostname", "address": "node-000"}, {"type": "InternalIP", "address": "10.0.0.4"}],
        "nodeInfo": {"kubeletVersion": "v1.34.2", "osImage": "Ubuntu 24.04.2 LTS", "kernelVersion": "6.8.0-60-generic"},
    }
    assert _node_row(metadata={"labels": labels}, spec={"unschedulable": True}, status=status) == [
        "node-000",
        "Ready,SchedulingDisabled",
        "gpu,worker",
        "3h12m",
        "v1.34.2",
        "10.0.0.4",
        "<none>",
        "Ubuntu 24.04.2 LTS",
        "6.8.0-60-generic",
        "<unknown>",
    ]
    assert _node_row(status={"conditions": [{"type": "Ready", "status": "Unknown"}]})[1:3] == ["NotReady", "<none>"]
    assert _node_row()[1] == "Unknown"


def test_kubectl_get_nodes_shows_age_before_version(sim: Any, sim_kubeconfig: Path) -> None:
    sim.add_nodes(2)
    kubectl = simfixtures.kubectl_runner(sim_kubeconfig)
    header, first, _ = kubectl("get", "nodes").stdout.splitlines()
    assert header.split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert first.split()[:3] == ["node-000", "Ready", "<none>"]
    wide = kubectl("get", "nodes", "-o", "wide").stdout.splitlines()[0].split()
    assert wide[5:] == ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]
