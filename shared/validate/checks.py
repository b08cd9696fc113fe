"""The individual checks, as pure functions over objects already fetched.

Each returns a ``Check`` naming its component, what it looked at and, when it fails, why — the object
and the reason, so the reader can go straight to ``kubectl describe``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from shared.recipe import constraints, health, models
from shared.recipe.snapshot import Snapshot
from shared.snapshot import pins

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


@dataclass(frozen=True)
class Check:
    component: str
    name: str
    status: str
    message: str = ""
    nodes: tuple[str, ...] = ()
    """The nodes a failing node-level check concerns (all of them, where the message folds ranges)."""

    @property
    def passed(self) -> bool:
        return self.status != FAILED


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def selector_matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def constraint_check(constraint: models.Constraint, snapshot: Snapshot) -> Check:
    outcome = constraints.evaluate(constraint.value, snapshot.lookup(constraint.name))
    name = f"{constraint.name} {constraint.value}"
    if outcome.passed:
        return Check("(constraints)", name, PASSED)
    reason = outcome.error or f"expected {constraint.value}, got {outcome.actual}"
    return Check("(constraints)", name, FAILED, reason)


def pin_check(component: str, name: str, verdict: pins.Verdict) -> Check:
    """A pin or node constraint held node by node; a failure names the nodes with each wrong value."""
    if verdict.passed:
        return Check(component, name, PASSED)
    return Check(component, name, FAILED, verdict.message(), nodes=tuple(verdict.nodes))


def node_checks(recipe: models.RecipeResult, snapshot: Snapshot, *, driver: str | None) -> list[Check]:
    """The recipe's pinned driver, then its constraints, each node-level one checked node by node
    when the snapshot lists values per node (else, like every other constraint, on the aggregate)."""
    out: list[Check] = []
    if driver:
        pin = pins.Pin(pins.DRIVER_PATH, driver, exact=True)
        verdict = pins.evaluate(pin, snapshot)
        name = f"driver {driver} on every GPU node"
        if verdict is not None:
            out.append(pin_check("gpu-operator", name, verdict))
        else:
            aggregate = constraint_check(models.Constraint(name=pins.DRIVER_PATH, value=f"== {driver}"), snapshot)
            out.append(Check("gpu-operator", name, aggregate.status, aggregate.message))
    for constraint in recipe.constraints:
        verdict = (
            pins.evaluate(pins.Pin(constraint.name, constraint.value), snapshot)
            if constraint.name in pins.NODE_PATHS
            else None
        )
        if verdict is None:
            out.append(constraint_check(constraint, snapshot))
        else:
            out.append(pin_check("(constraints)", f"{constraint.name} {constraint.value}", verdict))
    return out


def deployment_block_checks(recipe: models.RecipeResult, snapshot: Snapshot) -> list[Check]:
    """The constraints of the recipe's ``validation.deployment`` block: ``Deployment.<component>.version``
    against the chart version of the component's Helm release (upstream reads the deployed
    operator's version; the release is what was deployed)."""
    block = recipe.validation.deployment if recipe.validation is not None else None
    out = []
    for constraint in (block.constraints if block is not None else None) or []:
        kind, component, key = [*constraint.name.split(".", 2), "", ""][:3]
        name = f"{constraint.name} {constraint.value}"
        ref = recipe.component(component)
        if kind != "Deployment" or key != "version" or ref is None:
            out.append(
                Check(
                    "(deployment)",
                    name,
                    FAILED,
                    "a deployment constraint is Deployment.<component>.version, for a component of the recipe",
                )
            )
            continue
        path = f"K8s.helm.{ref.namespace or 'default'}/{ref.name}.version"
        outcome = constraints.evaluate(constraint.value, snapshot.lookup(path))
        if outcome.passed:
            out.append(Check(component, name, PASSED))
        else:
            reason = outcome.error if outcome.actual is None else f"release runs {outcome.actual}"
            out.append(Check(component, name, FAILED, f"{reason}; the recipe asks {constraint.value}"))
    return out


def _ready_and_desired(kind: str, obj: dict[str, Any]) -> tuple[int, int]:
    status, spec = obj.get("status") or {}, obj.get("spec") or {}
    if kind == health.WorkloadKind.DAEMONSET:
        return int(status.get("numberReady") or 0), int(status.get("desiredNumberScheduled") or 0)
    ready = int(status.get("availableReplicas") or status.get("readyReplicas") or 0)
    desired = spec.get("replicas")
    return ready, 1 if desired is None else int(desired)


def _workload_labels(obj: dict[str, Any]) -> dict[str, str]:
    template = ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}
    return {**(template.get("labels") or {}), **(_meta(obj).get("labels") or {})}


def workload_check(
    component: str, namespace: str, wanted: health.WorkloadAssert, objects: list[dict[str, Any]]
) -> list[Check]:
    """Every matching workload must have the replicas it needs ready."""
    what = f"{wanted.kind} {wanted.name or ','.join(f'{k}={v}' for k, v in sorted((wanted.selector or {}).items()))}"
    if wanted.name is not None:
        matches = [o for o in objects if _meta(o).get("name") == wanted.name]
    else:
        matches = [o for o in objects if selector_matches(wanted.selector or {}, _workload_labels(o))]
    if not matches:
        return [
            Check(
                component,
                f"{what} available",
                FAILED,
                f"no {wanted.kind} {what.split(' ', 1)[1]} in namespace {namespace}",
            )
        ]
    out = []
    for obj in sorted(matches, key=lambda o: str(_meta(o).get("name"))):
        ready, desired = _ready_and_desired(wanted.kind, obj)
        needed = wanted.minReady if wanted.minReady is not None else max(desired, 1)
        name = f"{wanted.kind} {namespace}/{_meta(obj).get('name')} available"
        if ready >= needed:
            out.append(Check(component, name, PASSED))
        else:
            out.append(Check(component, name, FAILED, f"{ready} of {needed} replicas ready"))
    return out


class PodState(NamedTuple):
    """What the pod check reads of a pod, and nothing else: a round keeps this of each pod it lists,
    not the pod, so a namespace of 10,000 DaemonSet pods is held as 10,000 small tuples."""

    name: Any
    """``metadata.name`` as listed."""
    labels: dict[str, str]
    phase: Any
    """``status.phase``, ``Unknown`` when the pod has none."""
    waiting: tuple[tuple[str, str], ...]
    """(container, reason) of each container waiting with a reason, init containers first."""


def pod_state(pod: dict[str, Any]) -> PodState:
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    waiting: tuple[tuple[str, str], ...] = ()
    init = status.get("initContainerStatuses")
    for statuses in (init, status.get("containerStatuses")) if init else (status.get("containerStatuses"),):
        for container in statuses or ():
            state = container.get("state")
            reason = ((state.get("waiting") if state else None) or {}).get("reason")
            if reason:
                waiting += ((str(container.get("name")), str(reason)),)
    return PodState(meta.get("name"), meta.get("labels") or {}, status.get("phase", "Unknown"), waiting)


def pods_check(component: str, namespace: str, wanted: health.PodAssert, pods: Iterable[dict[str, Any]]) -> Check:
    """Pods in an allowed phase with no container waiting in a forbidden reason, whatever the phase."""
    return pod_states_check(component, namespace, wanted, [pod_state(p) for p in pods])


def pod_states_check(component: str, namespace: str, wanted: health.PodAssert, pods: Iterable[PodState]) -> Check:
    """``pods_check`` of pods already reduced to their ``PodState``."""
    selector = wanted.selector or {}
    scope = ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "all"
    name = f"pods {namespace} ({scope}) healthy"
    wanted_labels = list(selector.items())
    matching = [p for p in pods if all(p.labels.get(k) == v for k, v in wanted_labels)] if selector else list(pods)
    if len(matching) < wanted.minCount:
        return Check(component, name, FAILED, f"{len(matching)} pods found, at least {wanted.minCount} expected")
    problems = []
    for pod in sorted(matching, key=lambda p: str(p.name)):
        if pod.phase not in wanted.allowedPhases:
            problems.append(f"pod {pod.name} is {pod.phase}")
        for container, reason in pod.waiting:
            if reason in wanted.forbiddenWaitingReasons:
                problems.append(f"pod {pod.name} container {container} waiting: {reason} (phase {pod.phase})")
    if problems:
        return Check(component, name, FAILED, "; ".join(problems))
    return Check(component, name, PASSED)


def crd_check(component: str, crd_name: str, crd: dict[str, Any] | None) -> Check:
    name = f"CRD {crd_name} established"
    if crd is None:
        return Check(component, name, FAILED, f"CRD {crd_name} does not exist")
    conditions = (crd.get("status") or {}).get("conditions") or []
    if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
        return Check(component, name, PASSED)
    return Check(component, name, FAILED, f"CRD {crd_name} is not Established")


def chart_check(ref: models.ComponentRef, installed: str | None) -> Check:
    """The Helm release of the component carries exactly the pinned chart version."""
    name = f"chart {ref.chart or ref.name} {ref.version}"
    if installed is None:
        return Check(ref.name, name, FAILED, f"no Helm release {ref.namespace}/{ref.name} is installed")
    if installed.lstrip("v") != str(ref.version).lstrip("v"):
        return Check(
            ref.name,
            name,
            FAILED,
            f"release {ref.namespace}/{ref.name} runs chart version {installed}, the recipe pins {ref.version}",
        )
    return Check(ref.name, name, PASSED)
