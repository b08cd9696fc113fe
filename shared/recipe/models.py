"""The recipe documents: catalog files (overlays, mixins, registry) and the resolved recipe.

Kinds and field names are upstream AICR's (``RecipeMetadata``, ``RecipeMixin``,
``ComponentRegistry``, ``RecipeResult``) so upstream data reads unchanged; every field upstream's
files carry is modelled, even those we do not act on (``manifest``, ``healthCheck``). Models accept
unknown keys at parse time and ``unknown_fields`` reports them afterwards, and every reader refuses
them (a criteria file, a catalog in either format, a resolved recipe), where upstream's loader
drops them without a word: a misspelt key is a mistake to name, not a setting to lose.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.recipe.health import HealthCheckAsserts
from shared.recipe.vocabulary import API_VERSION, API_VERSIONS, UPSTREAM_API_VERSION

__all__ = ["API_VERSION", "API_VERSIONS", "UPSTREAM_API_VERSION"]  # with the models, for their readers


class _Doc(BaseModel):
    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)


class Constraint(_Doc):
    name: str
    value: str
    severity: str | None = None
    remediation: str | None = None
    unit: str | None = None


class ExpectedResource(_Doc):
    kind: str
    name: str
    namespace: str | None = None


class ComponentRef(_Doc):
    """One component as an overlay states it; unset fields inherit from less specific overlays."""

    name: str
    namespace: str | None = None
    chart: str | None = None
    type: str | None = Field(default=None, pattern="^(Helm|Kustomize)$")
    source: str | None = None
    version: str | None = None
    tag: str | None = None
    valuesFile: str | None = None
    overrides: dict[str, Any] | None = None
    patches: list[Any] | None = None
    dependencyRefs: list[str] | None = None
    manifestFiles: list[str] | None = None
    path: str | None = None
    cleanup: bool | None = None
    expectedResources: list[ExpectedResource] | None = None
    healthCheckAsserts: HealthCheckAsserts | None = None


class ValidationPhase(_Doc):
    timeout: str | None = None
    constraints: list[Constraint] | None = None
    checks: list[str] | None = None
    nodeSelection: dict[str, Any] | None = None
    infrastructure: dict[str, Any] | None = None


class Validation(_Doc):
    readiness: ValidationPhase | None = None
    deployment: ValidationPhase | None = None
    performance: ValidationPhase | None = None
    conformance: ValidationPhase | None = None


class OverlaySpec(_Doc):
    base: str | None = None
    criteria: dict[str, Any] | None = None
    constraints: list[Constraint] | None = None
    componentRefs: list[ComponentRef] | None = None
    mixins: list[str] | None = None
    validation: Validation | None = None


class Metadata(_Doc):
    name: str


class RecipeMetadata(_Doc):
    """An overlay (or the base): criteria that select it and what it adds or changes."""

    apiVersion: str
    kind: str = "RecipeMetadata"
    metadata: Metadata
    spec: OverlaySpec


class MixinSpec(_Doc):
    constraints: list[Constraint] | None = None
    componentRefs: list[ComponentRef] | None = None


class RecipeMixin(_Doc):
    """A named fragment several overlays include through ``spec.mixins``."""

    apiVersion: str
    kind: str = "RecipeMixin"
    metadata: Metadata
    spec: MixinSpec


class HelmDefaults(_Doc):
    defaultRepository: str | None = None
    defaultChart: str | None = None
    defaultVersion: str | None = None
    defaultNamespace: str | None = None


class KustomizeDefaults(_Doc):
    defaultSource: str | None = None
    defaultPath: str | None = None
    defaultTag: str | None = None


class SchedulingPaths(_Doc):
    nodeSelectorPaths: list[str] = Field(default_factory=list)
    tolerationPaths: list[str] = Field(default_factory=list)
    taintPaths: list[str] = Field(default_factory=list)
    taintStrPaths: list[str] = Field(default_factory=list)


class NodeScheduling(_Doc):
    system: SchedulingPaths = Field(default_factory=SchedulingPaths)
    accelerated: SchedulingPaths = Field(default_factory=SchedulingPaths)
    nodeCountPaths: list[str] = Field(default_factory=list)


class WorkloadScheduling(_Doc):
    workloadSelectorPaths: list[str] = Field(default_factory=list)


class PodScheduling(_Doc):
    workload: WorkloadScheduling = Field(default_factory=WorkloadScheduling)


class ComponentValidation(_Doc):
    function: str
    severity: str = Field(default="warning", pattern="^(warning|error)$")
    conditions: dict[str, list[str]] = Field(default_factory=dict)
    message: str = ""


class ManifestDefaults(_Doc):
    """Upstream's ``manifest:`` block of a manifest-only component; its loader reads no field of it."""

    defaultNamespace: str | None = None


class UpstreamHealthCheck(_Doc):
    """Upstream's ``healthCheck.assertFile``: a Chainsaw test file; we check ``healthCheckAsserts``."""

    assertFile: str | None = None


class RegistryComponent(_Doc):
    """Defaults for one component: where its chart lives and where scheduling values go."""

    name: str
    displayName: str
    valueOverrideKeys: list[str] = Field(default_factory=list)
    helm: HelmDefaults | None = None
    kustomize: KustomizeDefaults | None = None
    manifest: ManifestDefaults | None = None
    healthCheck: UpstreamHealthCheck | None = None
    nodeScheduling: NodeScheduling = Field(default_factory=NodeScheduling)
    podScheduling: PodScheduling = Field(default_factory=PodScheduling)
    validations: list[ComponentValidation] = Field(default_factory=list)
    healthCheckAsserts: HealthCheckAsserts | None = None


class ComponentRegistry(_Doc):
    apiVersion: str
    kind: str = "ComponentRegistry"
    components: list[RegistryComponent] = Field(default_factory=list)


def unknown_fields(model: BaseModel, prefix: str = "") -> Iterator[str]:
    """Dotted paths of every key the models did not declare, depth first."""
    for key in sorted((model.__pydantic_extra__ or {}).keys()):
        yield f"{prefix}{key}"
    for name in type(model).model_fields:
        value = getattr(model, name)
        yield from _unknown_in(value, f"{prefix}{name}")


def _unknown_in(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, BaseModel):
        yield from unknown_fields(value, f"{path}.")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, BaseModel):
                yield from unknown_fields(item, f"{path}[{index}].")


class ConstraintWarning(_Doc):
    overlay: str
    constraint: str
    expected: str
    actual: str | None = None
    reason: str


class ResultMetadata(_Doc):
    version: str
    appliedOverlays: list[str] = Field(default_factory=list)
    excludedOverlays: list[str] | None = None
    constraintWarnings: list[ConstraintWarning] | None = None


class RecipeResult(_Doc):
    """The resolved recipe: every component pinned, ordered, with its health asserts."""

    kind: str = "RecipeResult"
    apiVersion: str = API_VERSION
    metadata: ResultMetadata
    criteria: dict[str, Any] = Field(default_factory=dict)
    constraints: list[Constraint] = Field(default_factory=list)
    componentRefs: list[ComponentRef] = Field(default_factory=list)
    deploymentOrder: list[str] = Field(default_factory=list)
    validation: Validation | None = None

    def component(self, name: str) -> ComponentRef | None:
        return next((c for c in self.componentRefs if c.name == name), None)
