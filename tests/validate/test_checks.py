"""The validation checks on fetched objects.

Covers: available and unavailable Deployments, DaemonSets and StatefulSets (by name and by selector,
minReady); a pod Running with a container waiting in CrashLoopBackOff fails; Pending pods and too few
pods fail; CRDs missing or not Established fail; a chart version other than the pin fails, with or
without a leading v; constraints pass and fail with the reason.
"""

from __future__ import annotations

from typing import Any

import pytest

from shared.recipe import health, models
from shared.recipe.snapshot import Measurement, Snapshot, Subtype
from shared.validate import checks


def deployment(name: str, ready: int, replicas: int = 1, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"replicas": replicas},
        "status": {"availableReplicas": ready},
    }


def daemonset(name: str, ready: int, desired: int) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"template": {"metadata": {"labels": {"app": name}}}},
        "status": {"numberReady": ready, "desiredNumberScheduled": desired},
    }


def pod(
    name: str,
    phase: str = "Running",
    waiting: str | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
    return {
        "metadata": {"name": name, "labels": labels or {"app": "x"}},
        "status": {"phase": phase, "containerStatuses": [{"name": "main", "state": state}]},
    }


@pytest.mark.parametrize(
    ("wanted", "objects", "status", "message"),
    [
        (health.WorkloadAssert(kind="Deployment", name="op"), [deployment("op", 1)], "passed", ""),
        (
            health.WorkloadAssert(kind="Deployment", name="op"),
            [deployment("op", 1, replicas=3)],
            "failed",
            "1 of 3 replicas ready",
        ),
        (
            health.WorkloadAssert(kind="Deployment", name="op", minReady=1),
            [deployment("op", 1, replicas=3)],
            "passed",
            "",
        ),
        (health.WorkloadAssert(kind="Deployment", name="op"), [], "failed", "no Deployment op in namespace ns"),
        (
            health.WorkloadAssert(kind="DaemonSet", selector={"app": "plugin"}),
            [daemonset("plugin", 4, 4)],
            "passed",
            "",
        ),
        (
            health.WorkloadAssert(kind="DaemonSet", selector={"app": "plugin"}),
            [daemonset("plugin", 3, 4)],
            "failed",
            "3 of 4 replicas ready",
        ),
        (
            health.WorkloadAssert(kind="DaemonSet", selector={"app": "plugin"}),
            [daemonset("plugin", 0, 0)],
            "failed",
            "0 of 1 replicas ready",
        ),
    ],
    ids=["ready", "short", "min-ready", "missing", "ds-ready", "ds-short", "ds-nowhere"],
)
def test_workloads_must_have_their_replicas_ready(
    wanted: health.WorkloadAssert, objects: list[dict[str, Any]], status: str, message: str
) -> None:
    (check,) = checks.workload_check("comp", "ns", wanted, objects)
    assert (check.status, check.message) == (status, message)


def test_a_running_pod_with_a_crash_looping_container_fails() -> None:
    check = checks.pods_check("comp", "ns", health.PodAssert(), [pod("a-1"), pod("a-2", waiting="CrashLoopBackOff")])
    assert check.status == "failed"
    assert check.message == "pod a-2 container main waiting: CrashLoopBackOff (phase Running)"


@pytest.mark.parametrize(
    ("pods", "message"),
    [
        ([pod("a-1", phase="Pending")], "pod a-1 is Pending"),
        ([], "0 pods found, at least 1 expected"),
        (
            [pod("a-1", waiting="ImagePullBackOff", phase="Pending")],
            "pod a-1 is Pending; pod a-1 container main waiting: ImagePullBackOff (phase Pending)",
        ),
    ],
)
def test_unhealthy_pods_fail_with_the_reason(pods: list[dict[str, Any]], message: str) -> None:
    check = checks.pods_check("comp", "ns", health.PodAssert(), pods)
    assert (check.status, check.message) == ("failed", message)


def test_pod_selectors_scope_the_check() -> None:
    wanted = health.PodAssert(selector={"app": "good"})
    check = checks.pods_check(
        "c",
        "ns",
        wanted,
        [pod("g", labels={"app": "good"}), pod("b", waiting="CrashLoopBackOff", labels={"app": "bad"})],
    )
    assert check.status == "passed"


def test_crds_must_exist_and_be_established() -> None:
    established = {"status": {"conditions": [{"type": "Established", "status": "True"}]}}
    assert checks.crd_check("c", "x.example.com", established).status == "passed"
    assert checks.crd_check("c", "x.example.com", None).message == "CRD x.example.com does not exist"
    assert checks.crd_check("c", "x.example.com", {"status": {}}).message == "CRD x.example.com is not Established"


@pytest.mark.parametrize(
    ("installed", "status"), [("v25.10.1", "passed"), ("25.10.1", "passed"), ("v25.3.0", "failed"), (None, "failed")]
)
def test_the_chart_version_must_equal_the_pin(installed: str | None, status: str) -> None:
    ref = models.ComponentRef(name="gpu-operator", namespace="gpu-operator", version="v25.10.1", source="https://x")
    assert checks.chart_check(ref, installed).status == status


def test_constraints_report_expected_and_actual() -> None:
    snapshot = Snapshot(
        measurements=[Measurement(type="K8s", subtypes=[Subtype(subtype="server", data={"version": "v1.31.2"})])]
    )
    failed = checks.constraint_check(models.Constraint(name="K8s.server.version", value=">= 1.34"), snapshot)
    assert (failed.status, failed.message) == ("failed", "expected >= 1.34, got v1.31.2")
    missing = checks.constraint_check(models.Constraint(name="OS.release.ID", value="ubuntu"), snapshot)
    assert missing.message == "measurement not found in snapshot"
