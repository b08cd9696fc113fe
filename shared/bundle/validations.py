"""The registry's per-component checks (upstream's ``validations``), and whether settings reach a
component that has no chart.

Upstream warns when ``--workload-selector`` or ``--accelerated-node-selector`` is empty for a
component whose registry entry asks for it. The warning is there because the component would act
on the wrong nodes; it goes only when that is no longer true, i.e. when the flag is given *and*
reaches something deployed. For a component with a chart the values go to Helm; for one without,
only its manifests carry them, and what their rendering read (:class:`shared.bundle.manifests.Rendered`)
says whether the flag or a ``--set`` arrived.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from shared import errors
from shared.bundle import manifests as manifests_mod
from shared.bundle import overrides, scheduling
from shared.recipe import catalog as catalog_mod
from shared.recipe import models


class Component(Protocol):
    """What the checks read of a planned component (``plan.ComponentPlan``)."""

    name: str
    values: dict[str, Any]
    manifests: list[manifests_mod.Manifest]
    reads: manifests_mod.Rendered | None

    @property
    def has_chart(self) -> bool: ...

    @property
    def is_kustomize(self) -> bool: ...


def check_sets_reach(c: Component, sets: list[overrides.SetOverride]) -> None:
    """A component without a chart has only its manifests: a ``--set`` none of them reads would
    change nothing that is deployed, so it is refused rather than silently dropped."""
    if c.has_chart or c.is_kustomize:
        return
    for override in sets:
        if override.path == (overrides.ENABLED_KEY,):
            continue
        if c.reads is None or not c.reads.read(c.values, override.path):
            files = ", ".join(m.source for m in c.manifests) or "none"
            raise errors.InvalidInput(
                f"{'.'.join(override.path)} is not used by any manifest of {c.name}, which has no chart "
                f"(manifests: {files})",
                where=f"--set {override.raw!r}",
            )


def _selector_paths(entry: models.RegistryComponent, function: str) -> list[str]:
    if function == "CheckWorkloadSelectorMissing":
        return entry.podScheduling.workload.workloadSelectorPaths
    return entry.nodeScheduling.accelerated.nodeSelectorPaths


def _unapplied(c: Component, paths: list[str]) -> bool:
    """Whether a flag written at ``paths`` changes nothing deployed: the component has no chart
    and none of its manifests reads any of the paths."""
    if c.has_chart or c.is_kustomize or not paths:
        return False
    return c.reads is None or not any(c.reads.read(c.values, tuple(p.split("."))) for p in paths)


def notes(
    recipe: models.RecipeResult,
    cat: catalog_mod.Catalog,
    flags: scheduling.Scheduling,
    components: Sequence[Component],
) -> list[str]:
    """The registry's per-component checks (upstream's ``validations``): warnings become notes,
    errors stop the bundle. A check also fires when its flag is given but reaches nothing (a
    component without a chart whose manifests do not read the value), since what it warns about
    is then still true."""
    given = {
        "CheckWorkloadSelectorMissing": ("--workload-selector", bool(flags.workload_selector)),
        "CheckAcceleratedSelectorMissing": ("--accelerated-node-selector", bool(flags.accelerated_selector)),
    }
    notes: list[str] = []
    for c in components:
        name, entry = c.name, cat.registry.get(c.name)
        for check in entry.validations if entry else []:
            if check.function not in given:
                continue
            flag, is_set = given[check.function]
            matches = all(
                str(recipe.criteria.get(key, "any")) in ("any", *allowed) for key, allowed in check.conditions.items()
            )
            if not matches:
                continue
            assert entry is not None
            if not is_set:
                text = f"{name} is enabled but {flag} is not set. {check.message}".strip()
            elif _unapplied(c, _selector_paths(entry, check.function)):
                files = ", ".join(m.source for m in c.manifests) or "no manifest"
                text = f"{name}: {flag} is set but no manifest of it uses it ({files}). {check.message}".strip()
            else:
                continue
            if check.severity == "error":
                raise errors.InvalidInput(text, where=f"{cat.where(f'component:{name}')} validations")
            notes.append(f"Warning: {text}")
    return notes
