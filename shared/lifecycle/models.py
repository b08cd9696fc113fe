"""The ValidationRequest custom resource (nvsentinel.nvidia.com/v1alpha1, cluster-scoped, ``vr``).

Field names are upstream's (research/nvsentinel.md §7.1), so a request written for upstream's
lifecycle-manager carries over. ``spec`` says which nodes must prove themselves and with which
tests (names from ``lifecycle-manager.config.tests``; empty means the configured defaults);
``status`` is the whole memory of the run — test groups, every attempt with its provider object
and failure reason — so a restarted controller resumes from it. The envelope is ``shared.kube.customresource``'s.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from shared.kube import customresource
from shared.kube.customresource import CustomResource, Fields

GROUP, VERSION, KIND, PLURAL = "nvsentinel.nvidia.com", "v1alpha1", "ValidationRequest", "validationrequests"
API_VERSION = f"{GROUP}/{VERSION}"
FINALIZER = "nvsentinel.nvidia.com/validation-request"
SOURCE_LABEL = "nvsentinel.nvidia.com/validation-source"
"""Who asked: cli, new-node, post-remediation (set by our clients; informational)."""

Phase = customresource.Phase
"""``status.phase``: the phases every resource of ours that runs to a verdict shares."""


TERMINAL = frozenset({Phase.SUCCEEDED, Phase.FAILED})


class FailureReason(StrEnum):
    TEST_FAILED = "TestFailed"
    TEST_TIMEOUT = "TestTimeout"
    NODE_READINESS_VIOLATION = "NodeReadinessViolation"
    NODE_DELETED = "NodeDeleted"
    BATCH_MINIMUM_NOT_MET = "BatchMinimumNotMet"


class NodeRef(Fields):
    name: str = Field(min_length=1)


class Spec(Fields):
    nodes: list[NodeRef] = Field(min_length=1)
    tests: list[str] = Field(default_factory=list, description="Test names; empty: the configured defaultTests.")

    def node_names(self) -> list[str]:
        return sorted({n.name for n in self.nodes})


class Attempt(Fields):
    objectName: str
    phase: Phase = Phase.RUNNING
    failureReason: FailureReason | None = None
    failedNodes: list[str] = Field(default_factory=list)
    message: str | None = None
    startTime: str | None = None
    endTime: str | None = None
    evidence: str | None = Field(
        default=None, description="ConfigMap (provider's namespace) keeping what the attempt measured."
    )


class TestGroup(Fields):
    name: str
    provider: str
    tests: list[str]
    nodes: list[str]
    phase: Phase = Phase.PENDING
    attempts: list[Attempt] = Field(default_factory=list)


class Skipped(Fields):
    nodes: list[str] = Field(default_factory=list, description="Nodes deleted before or during the run.")
    tests: list[str] = Field(default_factory=list, description="Tests whose batch minimum was not met (ignore).")


class Condition(Fields):
    type: str
    status: str
    reason: str = ""
    message: str = ""
    lastTransitionTime: str | None = None


class Status(Fields):
    phase: Phase | None = None
    startTime: str | None = None
    completionTime: str | None = None
    testGroups: list[TestGroup] = Field(default_factory=list)
    skipped: Skipped = Field(default_factory=Skipped)
    conditions: list[Condition] = Field(default_factory=list)
    message: str | None = None


class ValidationRequest(CustomResource[Spec, Status]):
    """The whole object as read from the cluster."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = KIND

    def summary(self) -> dict[str, Any]:
        """The row ``validation list`` prints and ``-o json`` returns per request."""
        failed = sorted(
            {
                n
                for g in self.status.testGroups
                for a in g.attempts[-1:]
                if a.phase is Phase.FAILED
                for n in a.failedNodes
            }
        )
        return {
            "name": self.name,
            "phase": self.status.phase.value if self.status.phase else "",
            "nodes": self.spec.node_names(),
            "tests": list(self.spec.tests),
            "failedNodes": failed,
            "message": self.status.message or "",
            "created": self.metadata.creationTimestamp or "",
        }
