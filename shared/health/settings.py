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
from typing import Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from shared import durations, errors, merge
from shared.health import event as hevent
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


Outcome = Literal[
    "quarantined", "released", "breakerTripped", "remediationFailed", "contactSupport", "validationFailed"
]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)


class UrlFrom(_Strict):
    """Where a sink's URL is read at start: an environment variable (set from a Secret in the pod)."""

    env: str = Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


class Sink(_Strict):
    """One notification receiver (``shared.health.notify``)."""

    name: str = Field(min_length=1)
    type: Literal["cloudevents", "slack"] = "cloudevents"
    url: str = Field("", description="The receiver; prefer urlFrom for URLs that carry a token.")
    urlFrom: UrlFrom | None = None
    outcomes: list[Outcome] = Field(default_factory=lambda: list(OUTCOMES))
    timeoutSeconds: float = Field(5, gt=0, le=120)
    attempts: int = Field(5, ge=1, le=100, description="Tries per notification before it is dropped.")
    backoffBase: str = "1s"
    backoffMax: str = "1m"

    @model_validator(mode="after")
    def _one_url(self) -> Sink:
        if bool(self.url) == (self.urlFrom is not None):
            raise ValueError(f"sink {self.name!r}: set exactly one of url and urlFrom")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"sink {self.name!r}: url must start with http:// or https://")
        _duration_or_value_error(self.backoffBase)
        _duration_or_value_error(self.backoffMax)
        return self


class Notifications(_Strict):
    source: str = Field("/nvsentinel", min_length=1, description="CloudEvents source: name the cluster here.")
    queueSize: int = Field(1000, ge=1, le=1_000_000, description="Per sink; the oldest is dropped when full.")
    sinks: list[Sink] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> Notifications:
        seen: set[str] = set()
        for i, sink in enumerate(self.sinks):
            if sink.name in seen:
                raise ValueError(f"sinks[{i}].name: duplicate name {sink.name!r}")
            seen.add(sink.name)
        return self


class Ours(_Strict):
    retention: str = Field("720h", description="HealthEvents older than this are deleted; 0s keeps them all.")
    gcInterval: str = Field("1h", description="How often the running controller deletes old HealthEvents.")
    workers: int = Field(16, ge=1, le=256)
    notifications: Notifications = Field(default_factory=Notifications)

    @field_validator("retention", "gcInterval")
    @classmethod
    def _duration(cls, text: str) -> str:
        _duration_or_value_error(text)
        return text


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


ACTIONS: tuple[str, ...] = tuple(hevent.RecommendedAction.__members__)
CRITERIA_OPERATORS = ("anyOf", "noneOf", "sameEntity")
"""A criterion's value is a literal, ``"this.<path>"`` (the trigger's value) or one of these (analyzer.py)."""


def _duration(text: str | None) -> str | None:
    """``text`` when it is a duration (or None); ValueError, reported with the field's path, if not."""
    if text is not None:
        try:
            durations.parse(text)
        except errors.InvalidInput as exc:
            raise ValueError(exc.message) from None
    return text


class Sequence(_Strict):
    """One count of an analyzer rule: events matching ``criteria``, at least ``errorCount`` of them."""

    criteria: dict[str, Any] = Field(default_factory=dict)
    errorCount: int = Field(1, ge=1)
    burstGap: str | None = Field(None, description="Events closer together than this count as one burst.")
    distinct: str | None = Field(
        None, description="Count distinct values of this field (entity:<TYPE>: of that entity type) instead of events."
    )

    @field_validator("burstGap")
    @classmethod
    def _gap(cls, value: str | None) -> str | None:
        return _duration(value)

    @field_validator("criteria")
    @classmethod
    def _operators(cls, criteria: dict[str, Any]) -> dict[str, Any]:
        for path, wanted in criteria.items():
            if not isinstance(wanted, dict):
                continue
            if len(wanted) != 1 or next(iter(wanted)) not in CRITERIA_OPERATORS:
                raise ValueError(f"{path}: an operator is one of {', '.join(CRITERIA_OPERATORS)}, got {sorted(wanted)}")
            op, arg = next(iter(wanted.items()))
            if op in ("anyOf", "noneOf") and not isinstance(arg, list):
                raise ValueError(f"{path}: {op} takes a list")
            if op == "sameEntity" and (path != "entitiesImpacted" or not isinstance(arg, str)):
                raise ValueError(f"{path}: sameEntity applies to entitiesImpacted and names an entity type")
        return criteria


class Recovery(_Strict):
    """When a derived condition clears, so a healthy derived event releases what it caused."""

    quietFor: str | None = Field(None, description="Healthy once no event counted by the rule arrived for this long.")
    healthyEvent: dict[str, Any] | None = Field(
        None, description="Healthy on a healthy event with these fields (this.<path>: the trigger's) on the entity."
    )

    @field_validator("quietFor")
    @classmethod
    def _quiet(cls, value: str | None) -> str | None:
        return _duration(value)

    @model_validator(mode="after")
    def _some(self) -> Recovery:
        if self.quietFor is None and self.healthyEvent is None:
            raise ValueError("give quietFor, healthyEvent or both")
        return self


def _action(value: str | None) -> str | None:
    if value is not None and value not in ACTIONS:
        raise ValueError(f"unknown recommendedAction {value!r} ({', '.join(ACTIONS)})")
    return value


class _WindowAndAction(_Strict):
    """A rule's window and action, checked the same way wherever a rule or an override sets them."""

    @field_validator("timeWindow", check_fields=False)
    @classmethod
    def _window(cls, value: str | None) -> str | None:
        return _duration(value)

    @field_validator("recommendedAction", check_fields=False)
    @classmethod
    def _act(cls, value: str | None) -> str | None:
        return _action(value)


class AnalyzerRule(_WindowAndAction):
    name: str = Field(min_length=1)
    description: str = ""
    enabled: bool = True
    timeWindow: str = "24h"
    recommendedAction: str = "CONTACT_SUPPORT"
    fatal: bool | None = Field(None, description="Default: the action is not NONE (upstream).")
    message: str = ""
    sequence: list[Sequence] = Field(min_length=1)
    recovery: Recovery | None = None


class RuleOverride(_WindowAndAction):
    """Changes to one default rule by name, so a values file need not repeat the whole list."""

    enabled: bool | None = None
    timeWindow: str | None = None
    recommendedAction: str | None = None
    fatal: bool | None = None
    message: str | None = None
    errorCount: int | None = Field(None, ge=1, description="Replaces every sequence's errorCount.")


class Analyzer(_Strict):
    enabled: bool = True
    rules: list[AnalyzerRule] = Field(default_factory=list)
    ruleOverrides: dict[str, RuleOverride] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _names(self) -> Analyzer:
        names: set[str] = set()
        for i, rule in enumerate(self.rules):
            if rule.name in names:
                raise ValueError(f"rules[{i}].name: duplicate rule {rule.name!r}")
            names.add(rule.name)
        for name in self.ruleOverrides:
            if name not in names:
                raise ValueError(f"ruleOverrides.{name}: no rule of that name")
        return self

    def effective(self) -> list[AnalyzerRule]:
        """The enabled rules, each with its override applied, in order."""
        out = []
        for rule in self.rules:
            change = self.ruleOverrides.get(rule.name)
            if change is not None:
                update = change.model_dump(exclude_none=True, exclude={"errorCount"})
                if change.errorCount is not None:
                    update["sequence"] = [s.model_copy(update={"errorCount": change.errorCount}) for s in rule.sequence]
                rule = rule.model_copy(update=update)
            if rule.enabled:
                out.append(rule)
        return out if self.enabled else []


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


def _duration_or_value_error(text: str) -> timedelta:
    """``parse_duration`` inside a validator: pydantic reports a ValueError with the field's path."""
    try:
        return parse_duration(text)
    except errors.InvalidInput as exc:
        raise ValueError(exc.message) from None


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
        message = str(first["ctx"]["error"]) if first["type"] == "value_error" else first["msg"]  # no "Value error, "
        raise errors.InvalidInput(f"{field}: {message}", where=source) from None
