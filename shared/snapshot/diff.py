"""Drift: field-level changes between a baseline and a target snapshot, or a recipe and a snapshot.

Every measurement is a dotted path ``Type.subtype.key``; a change is added, removed or modified, with
both values, and — for the NodeTopology entries whose value is a node list — the nodes concerned (the
nodes that gained or lost that value). ``--ignore`` globs mark changes as ignored instead of dropping
them, so a reader still sees what was waived. With a recipe as baseline only what the recipe pins is
compared: chart versions of its components, the GPU driver its GPU Operator installs, and its
constraints — those on node facts (driver, kernel, OS, container runtime) node by node, each wrong
value a change naming the nodes that have it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from shared.recipe import constraints, models
from shared.recipe.snapshot import Snapshot
from shared.snapshot import pins

NODE_LIST_TYPES = ("NodeTopology",)


class Change(BaseModel):
    kind: str = Field(pattern="^(added|removed|modified)$")
    path: str
    baseline: str | None = None
    target: str | None = None
    nodes: list[str] | None = None
    ignored: bool | None = None


class Summary(BaseModel):
    added: int = 0
    removed: int = 0
    modified: int = 0
    ignored: int = 0
    total: int = 0


class DriftReport(BaseModel):
    """What differs; ``total`` counts only changes that are not ignored."""

    kind: str = "DriftReport"
    apiVersion: str = models.API_VERSION
    baseline: str
    target: str
    summary: Summary
    changes: list[Change]

    @property
    def drifted(self) -> bool:
        return self.summary.total > 0


def flatten(snapshot: Snapshot) -> dict[str, str]:
    out: dict[str, str] = {}
    for measurement in snapshot.measurements:
        for sub in measurement.subtypes:
            for key, value in sub.data.items():
                out[f"{measurement.type}.{sub.subtype}.{key}"] = "" if value is None else str(value)
    return out


def _nodes(path: str, before: str | None, after: str | None) -> list[str] | None:
    if not path.startswith(NODE_LIST_TYPES) or path.endswith(("-count", ".summary")) or ".summary." in path:
        return None
    old = set(filter(None, (before or "").split(",")))
    new = set(filter(None, (after or "").split(",")))
    return sorted(old ^ new) or None


def compare(baseline: Snapshot, target: Snapshot) -> list[Change]:
    left, right = flatten(baseline), flatten(target)
    changes = []
    for path in sorted(set(left) | set(right)):
        before, after = left.get(path), right.get(path)
        if before == after:
            continue
        kind = "added" if before is None else "removed" if after is None else "modified"
        changes.append(Change(kind=kind, path=path, baseline=before, target=after, nodes=_nodes(path, before, after)))
    return changes


def _node_changes(pin: pins.Pin, target: Snapshot) -> list[Change] | None:
    """One change per wrong value, naming the nodes that have it; None without per-node lists."""
    verdict = pins.evaluate(pin, target)
    if verdict is None:
        return None
    if verdict.checked == 0:
        return [Change(kind="removed", path=pin.path, baseline=pin.expression)]
    return [
        Change(kind="modified", path=pin.path, baseline=pin.expression, target=miss.value, nodes=miss.nodes)
        for miss in verdict.misses
    ]


def _driver_changes(driver: str, target: Snapshot) -> list[Change]:
    """The pinned driver node by node; on a snapshot without per-node lists, its aggregate."""
    found = _node_changes(pins.Pin(pins.DRIVER_PATH, driver, exact=True), target)
    if found is not None:
        return found
    actual = target.lookup(pins.DRIVER_PATH)
    if actual == driver:
        return []
    return [Change(kind="modified" if actual else "removed", path=pins.DRIVER_PATH, baseline=driver, target=actual)]


def compare_recipe(recipe: models.RecipeResult, target: Snapshot, *, driver: str | None = None) -> list[Change]:
    """What the cluster does not hold of what the recipe pins: chart versions, the GPU driver
    (``driver``, from the GPU Operator's values) and the constraints, node facts node by node."""
    actual = flatten(target)
    changes: list[Change] = []
    for ref in recipe.componentRefs:
        if not ref.source or not ref.version:
            continue
        path = f"K8s.helm.{ref.namespace}/{ref.name}.version"
        installed = actual.get(path)
        if installed is None:
            changes.append(Change(kind="removed", path=path, baseline=ref.version))
        elif installed.lstrip("v") != ref.version.lstrip("v"):
            changes.append(Change(kind="modified", path=path, baseline=ref.version, target=installed))
    if driver:
        changes.extend(_driver_changes(driver, target))
    for constraint in recipe.constraints:
        per_node = (
            _node_changes(pins.Pin(constraint.name, constraint.value), target)
            if constraint.name in pins.NODE_PATHS
            else None
        )
        if per_node is not None:
            changes.extend(per_node)
            continue
        outcome = constraints.evaluate(constraint.value, target.lookup(constraint.name))
        if not outcome.passed:
            changes.append(
                Change(
                    kind="modified" if outcome.actual is not None else "removed",
                    path=constraint.name,
                    baseline=constraint.value,
                    target=outcome.actual,
                )
            )
    return sorted(changes, key=lambda c: (c.path, c.target or ""))


def report(changes: list[Change], *, ignore: Sequence[str], baseline: str, target: str) -> DriftReport:
    summary = Summary()
    for change in changes:
        if any(fnmatch.fnmatchcase(change.path, glob) for glob in ignore):
            change.ignored = True
            summary.ignored += 1
            continue
        setattr(summary, change.kind, getattr(summary, change.kind) + 1)
        summary.total += 1
    return DriftReport(baseline=baseline, target=target, summary=summary, changes=changes)


def document(drift: DriftReport) -> dict[str, Any]:
    return drift.model_dump(exclude_none=True)
