"""The Certification custom resource (nvcre.nvidia.com/v1alpha1): upstream's spec, our status.

Spec field names are upstream NVCRE's (research/nvcre.md §1.1), so a user's Certification file
carries over; options set inline in ``spec`` are the defaults each category may override (a set
per-category field replaces the global one, maps wholesale). Status differs from upstream on
purpose: measurements, failed nodes and the isolation trail live on the object itself (one
certification of a few hundred nodes stays far below the 1.5 MiB object limit), because the run
must resume from it after its runner dies. The envelope (apiVersion, kind, metadata) is
``shared.kube.customresource``'s, as for every custom resource of ours.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pydantic import Field

from shared import errors
from shared.kube import customresource
from shared.kube.customresource import CustomResource, Fields

GROUP = "nvcre.nvidia.com"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "Certification"


def regex_error(exc: re.error, *, field: str, where: str | None = None) -> errors.InvalidInput:
    """A regex that does not compile, as invalid input naming the field, the pattern and the position."""
    return errors.InvalidInput(f"{field}: invalid regular expression {exc.pattern!r}: {exc}", where=where)


def check_regex(pattern: str, *, field: str) -> str:
    """``pattern`` when it compiles; otherwise a ValueError a pydantic validator reports as the field's
    error (a bare ``re.error`` would escape validation as an internal error)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(regex_error(exc, field=field).message) from None
    return pattern


Phase = customresource.Phase
"""``status.phase``: the phases every resource of ours that runs to a verdict shares."""


class TestScale(StrEnum):
    INTRA_NODE = "intra-node"
    INTRA_RACK = "intra-rack"
    FULL_SCALE = "full-scale"
    DIAGNOSE = "diagnose"


class NodeSelectorRequirement(Fields):
    key: str
    operator: str = Field(description="In, NotIn, Exists or DoesNotExist.")
    values: list[str] = Field(default_factory=list)


class TaintSelector(Fields):
    key: str
    value: str | None = None
    effect: str | None = None


class TargetSpec(Fields):
    nodeSelector: dict[str, str] = Field(default_factory=dict)
    matchExpressions: list[NodeSelectorRequirement] = Field(default_factory=list)
    nodeNames: list[str] = Field(default_factory=list)
    taintSelectors: list[TaintSelector] = Field(
        default_factory=list, description="Nodes must carry all of these taints; the run tolerates them."
    )


class Resources(Fields):
    limits: dict[str, str] = Field(default_factory=dict)
    requests: dict[str, str] = Field(default_factory=dict)


class CategoryOptions(Fields):
    """Options settable globally (inline in spec) and per category; unset means "inherit"."""

    thresholds: dict[str, str] | None = Field(default=None, description="Metric key -> CEL over `value`.")
    testScale: TestScale | None = None
    nodesPerJob: int | None = Field(default=None, ge=1)
    minGroupSize: int | None = Field(default=None, ge=1)
    maxConcurrent: int | None = Field(default=None, ge=0, description="Jobs at once; 0 = unlimited.")
    timeoutPerJob: str | None = Field(default=None, pattern=r"^([0-9]+(h|m|s|ms))+$")
    repeatCount: int | None = Field(default=None, ge=1)
    image: str | None = Field(default=None, min_length=1, max_length=512)
    resources: Resources | None = None
    maxBytes: str | None = Field(default=None, pattern=r"^[0-9]+(K|M|G|T)?$")
    numIterations: int | None = Field(default=None, ge=1)
    maxSteps: int | None = Field(default=None, ge=-1)
    gpusPerNode: int | None = Field(default=None, ge=1)
    stallMultiplier: int | None = Field(
        default=None, ge=1, description="Training: stalled after this many average steps without a new one (3)."
    )
    startupStallTimeoutSeconds: int | None = Field(
        default=None, ge=1, description="Training: stalled when no step is logged this long after the start (1200)."
    )


class Category(Fields):
    domain: str
    variant: str
    options: CategoryOptions | None = None

    @property
    def key(self) -> str:
        return f"{self.domain}/{self.variant}"


class CertificationSpec(CategoryOptions):
    target: TargetSpec = Field(default_factory=TargetSpec)
    categories: list[Category] = Field(min_length=1, max_length=64)
    strategy: str | None = Field(default=None, description="Isolation strategy (our addition); default adaptive.")
    backend: Literal["trainjob", "mpijob", "job"] | None = Field(
        default=None,
        description="How groups run (our addition): trainjob (Kubeflow Trainer v2), mpijob (MPI Operator) or "
        "job (batch/v1, single-node tests only); default: what the cluster serves.",
    )
    platform: str | None = Field(
        default=None,
        description="Platform overrides applied (our addition): aws, gcp, azure, oci, ... or none; "
        "default: detected from the target nodes.",
    )

    def options_for(self, category: Category) -> CategoryOptions:
        """The effective options of one category: its own where set, else the global ones."""
        merged = {name: getattr(self, name) for name in CategoryOptions.model_fields}
        if category.options is not None:
            merged.update({k: v for k, v in category.options.model_dump(exclude_none=True).items()})
            if category.options.resources is not None:
                merged["resources"] = category.options.resources
        return CategoryOptions.model_validate(merged)


class FailureReason(StrEnum):
    HARDWARE = "HardwareFailureDetected"
    THRESHOLD = "ThresholdViolation"
    WORKLOAD = "WorkloadFailed"
    TIMEOUT = "JobTimedOut"
    STALLED = "WorkloadStalled"


class SizePoint(Fields):
    """One message size of an NCCL sweep: its out-of-place bus bandwidth."""

    bytes: int = Field(ge=0)
    busBandwidthGBps: float


class StepPoint(Fields):
    """One logged training iteration."""

    step: int = Field(ge=0)
    stepTimeSec: float
    tflopsPerGPU: float | None = None


class GroupDetail(Fields):
    """What a group's log showed beyond its measurements, for the HTML report's charts.

    Kept short on purpose (the object limit): the sweep's sizes, the GPUs that failed ``dcgmi diag``
    with the GPU count, and at most ``MAX_STEPS`` training iterations evenly spaced.
    """

    curve: list[SizePoint] = Field(default_factory=list, description="NCCL: bus bandwidth per message size.")
    gpuCount: int | None = Field(default=None, description="DCGM: the GPUs the diagnostic ran on.")
    failedGpus: dict[str, list[str]] = Field(default_factory=dict, description="DCGM: GPU index → the tests it failed.")
    steps: list[StepPoint] = Field(default_factory=list, description="Training: step time over iterations.")


MAX_STEPS = 120
"""Training iterations kept per group: enough for a curve, small enough for a thousand groups."""


class GroupRun(Fields):
    """One test of one group: one workload (TrainJob, MPIJob or batch/v1 Job) named ``job``."""

    name: str
    nodes: list[str]
    job: str
    phase: Phase = Phase.PENDING
    passed: bool | None = None
    reason: FailureReason | None = None
    message: str | None = None
    measurements: dict[str, float] = Field(default_factory=dict)
    progress: int | None = Field(default=None, description="Training: the steps its log showed at the last look.")
    progressTime: str | None = Field(default=None, description="Training: when that step count was first seen.")
    hardwareNodes: list[str] = Field(
        default_factory=list, description="Nodes the log itself blames (CUDA failure, failing GPU)."
    )
    startTime: str | None = None
    endTime: str | None = None
    detail: GroupDetail | None = Field(default=None, description="The log's curves, for the HTML report.")


class Round(Fields):
    round: int
    stage: str
    groups: list[GroupRun]


class FailedNode(Fields):
    name: str
    reason: FailureReason
    message: str
    value: float | None = None


class InfrastructureFault(Fields):
    sideA: list[str]
    sideB: list[str]
    message: str


class CategoryStatus(Fields):
    domain: str
    variant: str
    status: Phase = Phase.PENDING
    strategy: str | None = None
    backend: str | None = Field(default=None, description="The workload backend the run chose for this category.")
    startTime: str | None = None
    completionTime: str | None = None
    runtimeSeconds: float | None = None
    nodes: list[str] = Field(default_factory=list)
    rounds: list[Round] = Field(default_factory=list)
    measurements: dict[str, float] = Field(
        default_factory=dict, description="Over the groups of the first round: min of each metric."
    )
    failedNodes: list[FailedNode] = Field(default_factory=list)
    infrastructureFaults: list[InfrastructureFault] = Field(default_factory=list)
    message: str | None = None


class Condition(Fields):
    type: str
    status: str
    reason: str
    message: str = ""
    lastTransitionTime: str | None = None


class CertificationStatus(Fields):
    phase: Phase | None = None
    conditions: list[Condition] = Field(default_factory=list)
    startTime: str | None = None
    completionTime: str | None = None
    categoryStatuses: list[CategoryStatus] = Field(default_factory=list)
    message: str | None = None
    leftOut: list[str] = Field(
        default_factory=list, description="Cordoned nodes the target matched but the run left out."
    )
    platform: str | None = Field(
        default=None, description="The platform whose overrides apply (detected or spec.platform), and its GPU."
    )
    gpu: str | None = Field(default=None, description="The GPU architecture of the target nodes (h100, gb200, ...).")


class Certification(CustomResource[CertificationSpec, CertificationStatus]):
    """The whole object as read from the cluster or a file."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = KIND
