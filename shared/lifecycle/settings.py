"""The lifecycle configuration: upstream's ``lifecycle-manager.config`` values, as pydantic models.

Lives in nvsentinel's values (``shared/health/rules/values.yaml`` holds the defaults) under
``lifecycle-manager``: ``enabled`` and ``runCertificationController`` are ours (whether
``nvsentinel run`` runs this controller, and the certification engine beside it), ``config`` is
upstream's ValidationConfiguration (research/nvsentinel.md §7.2) with two simplifications: a
provider names a built-in kind (``Certification`` or ``Job``) instead of a template file, and a
certification test names its catalog category. ``check`` runs at load, before anything acts: every
test resolves to a provider, every certification category exists, every CEL criterion compiles;
the first problem is one error naming the field.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared import cel, errors

CERTIFICATION = "Certification"
JOB = "Job"
PREFIX = "lifecycle-manager.config"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Criterion(_Strict):
    """A CEL expression over ``node`` (the Node object) and ``nodeAgeSeconds``; true means ready."""

    name: str
    expression: str


class Cordon(_Strict):
    enabled: bool = Field(True, description="Cordon every node of a request while it validates.")
    remove: bool = Field(True, description="Uncordon on a pass, and only a cordon the lifecycle owns.")
    takeOverFrom: list[str] = Field(
        default_factory=lambda: ["drift"], description="Cordon owners whose cordon a starting request takes over."
    )


class GateTaint(_Strict):
    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"
    remove: bool = True


class SchedulingGate(_Strict):
    cordon: Cordon = Field(default_factory=Cordon)
    taints: list[GateTaint] = Field(default_factory=list)


class Condition(_Strict):
    type: str
    status: str = "True"


class Provider(_Strict):
    """How a test group runs: one object per attempt, its outcome read from its conditions."""

    kind: Literal["Certification", "Job"]
    namespace: str = "nvsentinel"
    supportsTestBatching: bool = Field(False, description="Several tests of one node set share one object.")
    retries: int = Field(2, ge=0, description="Attempts after the first; retries=2 allows 3 attempts.")
    timeoutSeconds: int = Field(1800, ge=1, description="Cluster seconds one attempt may take.")
    successfulCondition: Condition | None = None
    failedCondition: Condition | None = None

    def succeeded(self) -> Condition:
        return self.successfulCondition or Condition(type="Succeeded" if self.kind == CERTIFICATION else "Complete")

    def failed(self) -> Condition:
        return self.failedCondition or Condition(type="Failed")


class Test(_Strict):
    """One test name a ValidationRequest may list."""

    provider: str
    category: str | None = Field(None, description="Certification provider: catalog domain/variant.")
    image: str | None = Field(None, description="Job provider: container image.")
    command: list[str] = Field(default_factory=list, description="Job provider: argv, no shell.")
    env: dict[str, str] = Field(default_factory=dict)
    supportsBatchingNodes: bool = Field(False, description="One run over all nodes instead of one per node.")
    minimumNodesPerBatch: int = Field(1, ge=1)
    batchFailurePolicy: Literal["fail", "ignore"] = "fail"


class NewNodeValidation(_Strict):
    enabled: bool = True
    criteria: list[Criterion] = Field(default_factory=list)
    tests: list[str] = Field(default_factory=list)


class PostRemediation(_Strict):
    enabled: bool = True
    tests: list[str] = Field(default_factory=list)


class Configuration(_Strict):
    schedulingGate: SchedulingGate = Field(default_factory=SchedulingGate)
    readinessCriteria: list[Criterion] = Field(default_factory=list)
    defaultTests: list[str] = Field(default_factory=list)
    maxConcurrentGroups: int = Field(3, ge=1)
    providers: dict[str, Provider] = Field(default_factory=dict)
    tests: dict[str, Test] = Field(default_factory=dict)
    newNodeValidation: NewNodeValidation = Field(default_factory=NewNodeValidation)
    postRemediation: PostRemediation = Field(default_factory=PostRemediation)


class LifecycleManager(_Strict):
    enabled: bool = True
    runCertificationController: bool = Field(
        True, description="Step Certifications in-process; turn off when `nvcrectl controller` runs beside it."
    )
    config: Configuration = Field(default_factory=Configuration)


def with_catalog(cfg: Configuration) -> Configuration:
    """Every certification catalog entry as a test under its variant name, unless configured already."""
    from shared.certify import catalog

    provider = next((name for name, p in sorted(cfg.providers.items()) if p.kind == CERTIFICATION), None)
    if provider is None:
        return cfg
    tests = dict(cfg.tests)
    for entry in catalog.load().entries:
        tests.setdefault(entry.variant, Test(provider=provider, category=entry.key, supportsBatchingNodes=True))
    return cfg.model_copy(update={"tests": tests})


def check(cfg: Configuration, *, source: str) -> dict[str, cel.Program]:
    """Refuse a configuration that cannot run; returns the compiled criteria by name."""
    for name, test in cfg.tests.items():
        _check_test(cfg, test, where=f"{source}: {PREFIX}.tests.{name}")
    for field, names in (
        ("defaultTests", cfg.defaultTests),
        ("newNodeValidation.tests", cfg.newNodeValidation.tests),
        ("postRemediation.tests", cfg.postRemediation.tests),
    ):
        for name in names:
            if name not in cfg.tests:
                raise errors.InvalidInput(f"unknown test {name!r}", where=f"{source}: {PREFIX}.{field}")
    programs = {}
    for field, criteria in (
        ("readinessCriteria", cfg.readinessCriteria),
        ("newNodeValidation.criteria", cfg.newNodeValidation.criteria),
    ):
        for i, criterion in enumerate(criteria):
            programs[f"{field}/{criterion.name}"] = cel.compile(
                criterion.expression, name=criterion.name, where=f"{source}: {PREFIX}.{field}[{i}]"
            )
    return programs


def _check_test(cfg: Configuration, test: Test, *, where: str) -> None:
    """A test names a known provider, and what that provider's kind needs: a category or a command."""
    provider = cfg.providers.get(test.provider)
    if provider is None:
        raise errors.InvalidInput(
            f"provider: unknown provider {test.provider!r}; known: {', '.join(sorted(cfg.providers)) or 'none'}",
            where=where,
        )
    if provider.kind == CERTIFICATION:
        if not test.category or "/" not in test.category:
            raise errors.InvalidInput("category: give the certification category as domain/variant", where=where)
        from shared.certify import catalog

        domain, variant = test.category.split("/", 1)
        catalog.load().find(domain, variant, where=f"{where}.category")
    elif not test.command:
        raise errors.InvalidInput("command: a Job test needs a command", where=where)


def resolve_tests(cfg: Configuration, names: list[str], *, where: str) -> list[str]:
    """The request's tests (the defaults when empty), sorted and unique; InvalidInput for an unknown one."""
    chosen = names or cfg.defaultTests
    unknown = [n for n in chosen if n not in cfg.tests]
    if unknown:
        raise errors.InvalidInput(f"unknown test {unknown[0]!r}; known: {', '.join(sorted(cfg.tests))}", where=where)
    return sorted(set(chosen))
