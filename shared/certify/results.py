"""Workload output → the measurements thresholds read, and a pass/fail with its reason.

Joins the three parsers to the threshold keys of upstream (peak bus/alg bandwidth, goodput,
TFLOP/s per GPU, step time) and names the nodes a log blames by itself (a CUDA failure on a host,
a GPU failing ``dcgmi diag``), which is hardware evidence no isolation is needed to find.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from shared.certify import catalog, models
from shared.certify.parsers import dcgm_diag, nccl_log, training_log
from shared.certify.thresholds import Thresholds

_CUDA_HOST = re.compile(r"^(?:\S+\s)?(?:\[\d+,\d+\]<std\w+>:)?\s*([\w.-]+): Test CUDA failure")


@dataclass
class Outcome:
    passed: bool
    reason: models.FailureReason | None = None
    message: str | None = None
    measurements: dict[str, float] = field(default_factory=dict)
    hardware_nodes: list[str] = field(default_factory=list)
    detail: models.GroupDetail | None = None


def parse(kind: catalog.Parser, text: str) -> BaseModel:
    parser: Any = {
        catalog.Parser.NCCL: nccl_log,
        catalog.Parser.DCGM: dcgm_diag,
        catalog.Parser.TRAINING: training_log,
    }[kind]
    result: BaseModel = parser.parse(text)
    return result


def measurements(result: BaseModel) -> dict[str, float]:
    if getattr(result, "verdict", None) == "error":
        return {}  # a sweep that crashed measured nothing; its partial rows are no bandwidth figure
    values: dict[str, float | None] = {}
    if isinstance(result, nccl_log.NcclResult):
        values = {"busBandwidthGBps": result.peak_busbw_gbps, "algBandwidthGBps": result.peak_algbw_gbps}
    elif isinstance(result, training_log.TrainingResult):
        values = {
            "goodputRatio": result.goodput,
            "avgTFLOPsPerGPU": result.avg_tflops_per_gpu,
            "avgStepTimeSec": result.avg_step_time_s,
        }
    return {k: v for k, v in values.items() if v is not None}


def detail(result: BaseModel) -> models.GroupDetail | None:
    """The curves the report draws: the sweep's bus bandwidth per size, the failing GPUs, the steps."""
    if isinstance(result, nccl_log.NcclResult) and result.rows:
        curve = [models.SizePoint(bytes=r.size_bytes, busBandwidthGBps=r.out_of_place.busbw_gbps) for r in result.rows]
        return models.GroupDetail(curve=curve)
    if isinstance(result, dcgm_diag.DcgmResult) and result.gpu_count is not None:
        failed = {str(gpu): tests for gpu, tests in result.failed_gpus.items()}
        return models.GroupDetail(gpuCount=result.gpu_count, failedGpus=failed)
    if isinstance(result, training_log.TrainingResult) and result.steps:
        steps = result.steps
        if len(steps) > models.MAX_STEPS:  # evenly spaced, the first and the last kept
            last = len(steps) - 1
            steps = [steps[round(i * last / (models.MAX_STEPS - 1))] for i in range(models.MAX_STEPS)]
        points = [
            models.StepPoint(step=s.iteration, stepTimeSec=s.step_time_s, tflopsPerGPU=s.tflops_per_gpu) for s in steps
        ]
        return models.GroupDetail(steps=points)
    return None


def summary(result: BaseModel) -> list[tuple[str, str]]:
    """The ``results parse`` table as (field, value) rows: the verdict, each measurement, each error."""
    data = result.model_dump(mode="json")
    rows = [("verdict", str(data["verdict"]))]
    rows += [(key, f"{value:.2f}") for key, value in measurements(result).items()]
    return rows + [("error", str(e)) for e in data.get("errors", [])]


def cuda_failure_hosts(log: str) -> list[str]:
    """The hosts a log's ``<host>: Test CUDA failure`` lines name, in order."""
    return [m[1] for line in log.splitlines() if (m := _CUDA_HOST.match(line))]


def blamed_hosts(log: str, nodes: list[str], hosts: Mapping[str, str] | None = None) -> list[str]:
    """The nodes a log's CUDA failures name. NCCL prints the pod's hostname (maybe qualified by
    its subdomain); ``hosts`` maps hostnames to nodes, and a bare node name counts as itself."""
    known = hosts or {}
    found = {known.get(host.split(".")[0], host) for host in cuda_failure_hosts(log)}
    return sorted(found & set(nodes))


def evaluate(
    kind: catalog.Parser,
    log: str,
    *,
    job_failed: bool,
    nodes: list[str],
    thresholds: Thresholds,
    hosts: Mapping[str, str] | None = None,
) -> Outcome:
    """The group's result: the log's verdict first, then the thresholds (only on a clean run)."""
    result = parse(kind, log)
    measured = measurements(result)
    shown = detail(result)
    verdict = getattr(result, "verdict", "error")
    errs: list[str] = list(getattr(result, "errors", []))
    hardware = blamed_hosts(log, nodes, hosts)
    if isinstance(result, dcgm_diag.DcgmResult) and verdict == "fail":
        hardware = list(nodes)
        errs = [f"dcgmi diag failed: {', '.join(result.failed_tests)}", *errs]
    if verdict != "pass" or job_failed:
        reason = models.FailureReason.HARDWARE if hardware else models.FailureReason.WORKLOAD
        message = errs[0] if errs else ("the job failed" if job_failed else f"verdict {verdict}")
        return Outcome(False, reason, message, measured, hardware, shown)
    violation = thresholds.check(measured) if thresholds else None
    if violation is not None:
        message = violation.message + _over_sockets(result, nodes)
        return Outcome(False, models.FailureReason.THRESHOLD, message, measured, detail=shown)
    return Outcome(True, measurements=measured, detail=shown)


def _over_sockets(result: BaseModel, nodes: list[str]) -> str:
    """Why a multi-node run is slow when NCCL says so: it crossed nodes over TCP sockets."""
    if isinstance(result, nccl_log.NcclResult) and len(nodes) > 1 and result.network == "Socket":
        return (
            "; NCCL crossed nodes over TCP sockets (Using network Socket): the platform's RDMA/EFA settings "
            "did not reach the ranks (see `nvcrectl certification render` and its --platform)"
        )
    return ""
