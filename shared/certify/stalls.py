"""Stalled training runs: a run whose log stops growing is failed and its workload deleted.

A training run that hangs (a lost peer in a collective, a wedged GPU: NCCL waits forever by default)
would otherwise hold its nodes until ``timeoutPerJob``. As upstream NVCRE does, a running training
workload is stalled when no step is logged within ``startupStallTimeoutSeconds`` of its start (1200)
or within ``stallMultiplier`` (3) times the average step time since the step count last grew. The
runner looks at each step: the step count and when it was first seen are kept in the group's
status, so a runner that takes over goes on counting from there. The window is measured in
cluster time, so it means the same on the simulated cluster.
"""

from __future__ import annotations

from datetime import datetime

from shared.certify import catalog, models
from shared.certify.parsers import training_log
from shared.certify.workloads import launch
from shared.certify.workloads.backends import Watch
from shared.kube.api import KubeApi

STALL_MULTIPLIER = 3
STARTUP_STALL_SECONDS = 1200
_FMT = "%Y-%m-%dT%H:%M:%SZ"


def _seconds(since: str | None, now: str) -> float:
    if not since:
        return 0.0
    return (datetime.strptime(now, _FMT) - datetime.strptime(since, _FMT)).total_seconds()


def check(
    api: KubeApi,
    *,
    namespace: str,
    entry: catalog.Entry,
    options: models.CategoryOptions,
    group: models.GroupRun,
    watch: Watch,
    now: str,
) -> None:
    """Record the run's progress; when it has stalled, delete the workload and fail the group."""
    if entry.parser is not catalog.Parser.TRAINING:
        return
    log = launch.running_log(api, watch, namespace)
    if log is None:
        return
    steps = training_log.parse(log).steps
    if group.progress is None or len(steps) > group.progress:
        group.progress, group.progressTime = len(steps), now
    idle = _seconds(group.progressTime, now)
    if not steps:
        budget = float(options.startupStallTimeoutSeconds or STARTUP_STALL_SECONDS)
        idle = _seconds(group.startTime, now)
        what = f"no training step logged {idle:.0f} s after the start (limit {budget:.0f} s)"
    else:
        times = [s.step_time_s for s in steps[1:]] or [steps[0].step_time_s]
        average = sum(times) / len(times)
        budget = (options.stallMultiplier or STALL_MULTIPLIER) * average
        what = (
            f"no new training step for {idle:.0f} s after step {len(steps)} "
            f"({options.stallMultiplier or STALL_MULTIPLIER} x the average step of {average:.1f} s)"
        )
    if idle <= budget:
        return
    launch.cancel(api, watch, namespace)
    group.phase, group.passed, group.endTime = models.Phase.FAILED, False, now
    group.reason, group.message = models.FailureReason.STALLED, f"stalled: {what}; the {watch.kind} was deleted"
