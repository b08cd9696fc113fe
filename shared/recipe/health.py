"""healthCheckAsserts: what "healthy after install" means for one component.

Declarative and structured, so ``aicr validate`` can evaluate it against live objects and a human
can review it in a recipe diff. A pod counts as unhealthy when a container waits in a forbidden
reason even while the pod phase says Running (a crash-looping container keeps its pod Running).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULT_ALLOWED_PHASES = ("Running", "Succeeded")
DEFAULT_FORBIDDEN_WAITING_REASONS = (
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
)


class WorkloadKind(StrEnum):
    DEPLOYMENT = "Deployment"
    DAEMONSET = "DaemonSet"
    STATEFULSET = "StatefulSet"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class WorkloadAssert(_Strict):
    """A workload that must be available: every desired replica ready (or at least ``minReady``)."""

    kind: WorkloadKind
    name: str | None = Field(default=None, description="Exact object name; exclusive with selector.")
    selector: dict[str, str] | None = Field(default=None, description="Label selector (all must match).")
    namespace: str | None = Field(default=None, description="Defaults to the component's namespace.")
    minReady: int | None = Field(default=None, ge=0, description="Ready replicas required; default all desired.")

    @model_validator(mode="after")
    def _name_or_selector(self) -> WorkloadAssert:
        if (self.name is None) == (self.selector is None):
            raise ValueError("a workload assert needs exactly one of name or selector")
        return self


class PodAssert(_Strict):
    """Pods that must be healthy; a container waiting in a forbidden reason fails even if Running."""

    selector: dict[str, str] | None = Field(default=None, description="Empty means every pod of the namespace.")
    namespace: str | None = Field(default=None, description="Defaults to the component's namespace.")
    allowedPhases: list[str] = Field(default_factory=lambda: list(DEFAULT_ALLOWED_PHASES))
    forbiddenWaitingReasons: list[str] = Field(default_factory=lambda: list(DEFAULT_FORBIDDEN_WAITING_REASONS))
    minCount: int = Field(default=1, ge=0, description="At least this many pods must match.")


class HealthCheckAsserts(_Strict):
    """Everything a component must show to count as healthy after install."""

    timeout: str | None = Field(
        default=None, pattern=r"^\d+(s|m|h)$", description="How long a waiting validation may wait, e.g. 10m."
    )
    workloads: list[WorkloadAssert] = Field(default_factory=list)
    pods: list[PodAssert] = Field(default_factory=list)
    crds: list[str] = Field(default_factory=list, description="CRD names that must be Established.")

    def is_empty(self) -> bool:
        return not (self.workloads or self.pods or self.crds)
