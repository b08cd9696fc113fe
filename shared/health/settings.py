"""nvsentinel's configuration: upstream NVSentinel's Helm values layout, as pydantic models.

A values file is layered over the embedded defaults (``shared/health/rules/values.yaml``): maps
merge key by key, lists are replaced whole — Helm's rule, so a file that sets
``fault-quarantine.ruleSets`` replaces the six default rule sets, as it does upstream. Sections this
program does not read (other charts' values) are accepted and ignored; inside the sections it does
read, an unknown key is an error, reported by ``rulecheck``. The file's ``lifecycle-manager``
section belongs to the validation lifecycle (``shared.lifecycle.settings``); the model of the whole
file, both parts, is ``shared.operate.config``, above both packages.
"""

from __future__ import annotations

import math
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from shared import durations, errors, merge
from shared.kube import labelselector

Kind = Literal["HealthEvent", "Node"]
Effect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Rule(_Strict):
    kind: Kind
    expression: str


class Match(_Strict):
    all: list[Rule] = Field(default_factory=list)
    any: list[Rule] = Field(default_factory=list)


class Cordon(_Strict):
    shouldCordon: bool = False


class Taint(_Strict):
    key: str
    value: str = ""
    effect: Effect = "NoSchedule"


class Label(_Strict):
    key: str
    value: str = ""


class RuleSet(_Strict):
    enabled: bool = True
    version: str = "1"
    name: str
    priority: int = 0
    match: Match
    cordon: Cordon = Field(default_factory=Cordon)
    taint: Taint | None = None
    label: Label | None = None


class CircuitBreaker(_Strict):
    enabled: bool = True
    percentage: float = Field(50, ge=0, le=100, description="Share of GPU nodes (%) quarantined per window.")
    duration: str = Field("5m", description="Sliding window, e.g. 5m.")
    maxNodes: int | None = Field(None, ge=0, description="Absolute cap; the lower bound wins.")

    def window(self) -> timedelta:
        return parse_duration(self.duration)

    def threshold(self, gpu_nodes: int) -> int:
        """ceil(GPU nodes × percentage / 100), capped by maxNodes and by the fleet."""
        limit = math.ceil(gpu_nodes * self.percentage / 100)
        if self.maxNodes is not None:
            limit = min(limit, self.maxNodes)
        return min(limit, gpu_nodes)


class SkipLabel(_Strict):
    key: str
    value: str


class Validation(_Strict):
    """Upstream's ``fault-quarantine.validation``: the hand-off of a repaired node to validation."""

    enabled: bool = Field(
        False,
        description="A healthy event does not release a node nvsentinel is repairing or has repaired: the "
        "node stays cordoned and tainted until the lifecycle's post-repair validation passes.",
    )


class FaultQuarantine(_Strict):
    labelPrefix: str = "k8saas.nvidia.com/"
    gpuNodeLabel: str = "nvidia.com/gpu.present=true"
    circuitBreaker: CircuitBreaker = Field(default_factory=CircuitBreaker)
    skipNodeLabels: list[SkipLabel] = Field(default_factory=list)
    ruleSets: list[RuleSet] = Field(default_factory=list)
    validation: Validation = Field(default_factory=Validation)


class Global(BaseModel):
    model_config = ConfigDict(extra="allow")

    dryRun: bool = True


class Ours(_Strict):
    retention: str = "720h"
    workers: int = Field(16, ge=1, le=256)


DrainMode = Literal["Immediate", "AllowCompletion", "DeleteAfterTimeout"]


class NamespaceMode(_Strict):
    name: str = Field(description="Namespace glob (fnmatch), e.g. * or team-*.")
    mode: DrainMode = "AllowCompletion"


class PodDrainPolicy(_Strict):
    """A pod-level drain mode: pods matching ``podSelector`` (and the ``namespace`` glob, if any)."""

    name: str = Field(min_length=1)
    namespace: str = Field("", description="Namespace glob (fnmatch); empty: every namespace.")
    podSelector: str = Field(min_length=1, description="A Kubernetes label selector, e.g. app in (a,b),!skip.")
    mode: DrainMode

    @field_validator("podSelector")
    @classmethod
    def _selector(cls, text: str) -> str:
        labelselector.parse(text)  # ValueError → reported with the field's path
        return text


class NodeDrainer(_Strict):
    """Upstream's node-drainer values (research §4); durations as upstream spells them."""

    enabled: bool = True
    evictionTimeoutInSeconds: str = "60"
    systemNamespaces: str = "^(nvsentinel|kube-system|gpu-operator|gmp-system|network-operator|skyhook)$"
    deleteAfterTimeoutMinutes: float = Field(60, ge=0)
    notReadyTimeoutMinutes: float = Field(5, ge=0)
    drainGPUPods: bool = False
    partialDrainEnabled: bool = True
    requeueBackoffBase: str = "10s"
    requeueBackoffMax: str = "2m"
    userNamespaces: list[NamespaceMode] = Field(default_factory=lambda: [NamespaceMode(name="*")])
    podDrainPolicies: list[PodDrainPolicy] = Field(default_factory=list)

    @model_validator(mode="after")
    def _policies(self) -> NodeDrainer:
        """Pod policies replace namespace modes (upstream rejects both); names are unique."""
        seen: set[str] = set()
        for i, policy in enumerate(self.podDrainPolicies):
            if policy.name in seen:
                raise ValueError(f"podDrainPolicies[{i}].name: duplicate name {policy.name!r}")
            seen.add(policy.name)
        if self.podDrainPolicies and self.userNamespaces:
            raise ValueError("podDrainPolicies cannot be combined with userNamespaces (set userNamespaces: [])")
        return self


class MaintenanceAction(_Strict):
    """Which janitor object a recommended action creates, and how its completion reads."""

    apiGroup: str = "janitor.dgxc.nvidia.com"
    version: str = "v1alpha1"
    kind: str
    scope: Literal["Cluster", "Namespaced"] = "Cluster"
    namespace: str = ""
    completeConditionType: str
    equivalenceGroup: str
    supersedingEquivalenceGroups: list[str] = Field(default_factory=list)
    impactedEntityScope: str = ""


class Maintenance(_Strict):
    actions: dict[str, MaintenanceAction] = Field(default_factory=dict)
    componentActions: dict[str, dict[str, MaintenanceAction]] = Field(default_factory=dict)


class FaultRemediation(_Strict):
    enabled: bool = True
    maxRemediationAttempts: int = Field(3, ge=0, description="Per equivalence group per quarantine; 0 = unlimited.")
    maintenance: Maintenance = Field(default_factory=Maintenance)


class Sequence(_Strict):
    criteria: dict[str, Any] = Field(default_factory=dict)
    errorCount: int = Field(1, ge=1)


class AnalyzerRule(_Strict):
    name: str
    description: str = ""
    enabled: bool = True
    timeWindow: str = "24h"
    recommendedAction: str = "CONTACT_SUPPORT"
    message: str = ""
    sequence: list[Sequence] = Field(min_length=1)


class Analyzer(_Strict):
    enabled: bool = True
    rules: list[AnalyzerRule] = Field(default_factory=list)


class Settings(BaseModel):
    """The sections of nvsentinel's values file that health reads.

    Other sections are kept as extra keys, unchecked: other charts' values, and ``lifecycle-manager``,
    which ``shared.operate.config.Settings`` adds to this model for the whole file.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    global_: Global = Field(default_factory=Global, alias="global")
    fault_quarantine: FaultQuarantine = Field(default_factory=FaultQuarantine, alias="fault-quarantine")
    nvsentinel: Ours = Field(default_factory=Ours)
    node_drainer: NodeDrainer = Field(default_factory=NodeDrainer, alias="node-drainer")
    fault_remediation: FaultRemediation = Field(default_factory=FaultRemediation, alias="fault-remediation")
    analyzer: Analyzer = Field(default_factory=Analyzer, alias="health-events-analyzer")


STRICT_SECTIONS: dict[str, type[BaseModel]] = {
    "fault-quarantine": FaultQuarantine,
    "nvsentinel": Ours,
    "node-drainer": NodeDrainer,
    "fault-remediation": FaultRemediation,
    "health-events-analyzer": Analyzer,
}


def parse_duration(text: str) -> timedelta:
    """``90s``, ``5m``, ``1h30m``, ``7d``; InvalidInput otherwise."""
    return timedelta(seconds=durations.parse(text))


def default_text() -> str:
    return resources.files("shared.health").joinpath("rules/values.yaml").read_text(encoding="utf-8")


def layered(user: Any) -> dict[str, Any]:
    """The user's values over the defaults (maps merged, lists replaced)."""
    from shared import yamlio

    base = yamlio.loads(default_text(), source="embedded values.yaml")
    merged: dict[str, Any] = merge.deep_merge(base, user or {})
    return merged


def read_file(path: Path | None) -> tuple[dict[str, Any], str, str]:
    """(layered data, the user's text, its name); the defaults alone when ``path`` is None."""
    from shared import yamlio

    if path is None:
        return layered({}), "", "embedded values.yaml"
    text = yamlio.read_text(path)
    user = yamlio.loads(text, source=str(path))
    if user is not None and not isinstance(user, dict):
        raise errors.InvalidInput("a values file must be a mapping", where=str(path))
    return layered(user), text, str(path)


_Model = TypeVar("_Model", bound=BaseModel)


def model(data: dict[str, Any], *, source: str) -> Settings:
    """Health's sections of layered values; InvalidInput naming the first bad field."""
    return validated(Settings, data, source=source)


def validated(schema: type[_Model], data: dict[str, Any], *, source: str) -> _Model:
    """``data`` as ``schema`` (``Settings`` or a model that extends it); InvalidInput naming the first bad field."""
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise errors.InvalidInput(f"{field}: {first['msg']}", where=source) from None
