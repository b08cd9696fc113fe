"""Resolution: criteria + catalog (+ snapshot) → one pinned, ordered RecipeResult.

Overlays whose criteria match are applied from least to most specific, each after the chain of
overlays it inherits from (upstream's algorithm). Where upstream leaves order to chance (overlays
of equal specificity, excluded overlays), ties break by name, so the same input always gives the
same bytes. Every field remembers which overlay set it, for ``--explain``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from shared import __version__, errors, grammars
from shared.recipe import catalog as catalog_mod
from shared.recipe import criteria as criteria_mod
from shared.recipe import graph, models, versions
from shared.recipe.snapshot import Snapshot

logger = logging.getLogger(__name__)

REGISTRY = "registry"
_SCALARS = ("namespace", "chart", "type", "source", "version", "tag", "valuesFile", "path")
_REPLACED_LISTS = ("patches", "dependencyRefs", "expectedResources")
_OUTPUT_ORDER = (
    "name",
    "namespace",
    "chart",
    "type",
    "source",
    "version",
    "tag",
    "valuesFile",
    "overrides",
    "patches",
    "dependencyRefs",
    "manifestFiles",
    "path",
    "cleanup",
    "expectedResources",
    "healthCheckAsserts",
)
_PHASES = ("readiness", "deployment", "performance", "conformance")


@dataclass
class _Component:
    fields: dict[str, Any] = field(default_factory=dict)
    set_by: dict[str, str] = field(default_factory=dict)


@dataclass
class Resolution:
    """The recipe and, for ``--explain``, who set what."""

    recipe: models.RecipeResult
    component_origin: dict[str, dict[str, str]]
    constraint_origin: dict[str, str]

    def document(self) -> dict[str, Any]:
        return recipe_document(self.recipe)


@dataclass
class _Merge:
    constraints: dict[str, models.Constraint] = field(default_factory=dict)
    constraint_origin: dict[str, str] = field(default_factory=dict)
    components: dict[str, _Component] = field(default_factory=dict)
    validation: dict[str, models.ValidationPhase] = field(default_factory=dict)

    def apply(
        self,
        name: str,
        constraints: list[models.Constraint] | None,
        refs: list[models.ComponentRef] | None,
        validation: models.Validation | None,
    ) -> None:
        for constraint in constraints or []:
            self.constraints[constraint.name] = constraint
            self.constraint_origin[constraint.name] = name
        for ref in refs or []:
            self._merge_ref(name, ref)
        if validation is not None:
            for phase in _PHASES:
                value = getattr(validation, phase)
                if value is not None:
                    self.validation[phase] = value

    def _merge_ref(self, overlay: str, ref: models.ComponentRef) -> None:
        target = self.components.setdefault(ref.name, _Component())
        target.fields["name"] = ref.name
        for key in (*_SCALARS, "healthCheckAsserts"):
            value = getattr(ref, key)
            if value not in (None, ""):
                target.fields[key] = value
                target.set_by[key] = overlay
        for key in _REPLACED_LISTS:
            value = getattr(ref, key)
            if value:
                target.fields[key] = list(value)
                target.set_by[key] = overlay
        if ref.overrides:
            overrides = dict(target.fields.get("overrides") or {})
            for key, value in ref.overrides.items():
                overrides[key] = value
                target.set_by[f"overrides.{key}"] = overlay
            target.fields["overrides"] = overrides
        if ref.manifestFiles:
            files = list(target.fields.get("manifestFiles") or [])
            files.extend(f for f in ref.manifestFiles if f not in files)
            target.fields["manifestFiles"] = files
            target.set_by["manifestFiles"] = overlay
        if ref.cleanup:
            target.fields["cleanup"] = True
            target.set_by["cleanup"] = overlay


def _overlay_criteria(cat: catalog_mod.Catalog, name: str, overlay: models.RecipeMetadata) -> criteria_mod.Criteria:
    where = f"{cat.where(f'overlay:{name}')} spec.criteria"
    return criteria_mod.Criteria.parse(dict(overlay.spec.criteria or {}), where=where)


def _chain(cat: catalog_mod.Catalog, name: str) -> list[str]:
    """The overlays ``name`` inherits from, root first, ending with ``name`` (base excluded)."""
    chain: list[str] = []
    current: str | None = name
    while current and current != catalog_mod.BASE_NAME:
        if current in chain:
            raise errors.InvalidInput(
                f"inheritance cycle: {' -> '.join([*chain, current])}", where=cat.where(f"overlay:{name}")
            )
        overlay = cat.overlays.get(current)
        if overlay is None:
            child = chain[-1] if chain else name
            raise errors.InvalidInput(
                f"overlay {child!r} inherits from {current!r}, which does not exist",
                where=f"{cat.where(f'overlay:{child}')} spec.base",
            )
        chain.append(current)
        current = overlay.spec.base
    return list(reversed(chain))


def _exclusions(
    cat: catalog_mod.Catalog, matched: list[str], snapshot: Snapshot
) -> tuple[set[str], list[models.ConstraintWarning]]:
    """Overlays whose own constraints the measured cluster does not meet."""
    from shared.recipe import constraints as expr

    excluded: set[str] = set()
    warnings: list[models.ConstraintWarning] = []
    for name in matched:
        for constraint in cat.overlays[name].spec.constraints or []:
            try:
                actual = snapshot.lookup(constraint.name)
            except ValueError as exc:
                raise errors.InvalidInput(str(exc), where=cat.where(f"overlay:{name}")) from None
            outcome = expr.evaluate(constraint.value, actual)
            if outcome.passed:
                continue
            excluded.add(name)
            reason = outcome.error or f"expected {constraint.value}, got {actual}"
            warnings.append(
                models.ConstraintWarning(
                    overlay=name, constraint=constraint.name, expected=constraint.value, actual=actual, reason=reason
                )
            )
            logger.warning("overlay %s excluded: %s %s", name, constraint.name, reason)
    return excluded, warnings


def require_criteria(query: criteria_mod.Criteria) -> None:
    """A query that sets nothing would silently give the base recipe; refuse it."""
    if query.specificity() == 0:
        raise errors.InvalidInput(
            "no criteria given: set at least one of --service, --accelerator, --intent, --os, "
            "--platform, --nodes, or use --criteria or --snapshot"
        )


def resolve(query: criteria_mod.Criteria, cat: catalog_mod.Catalog, *, snapshot: Snapshot | None = None) -> Resolution:
    """Build the recipe for ``query``. Raises InvalidInput for any inconsistency in the catalog."""
    require_criteria(query)
    if cat.base is None:
        raise errors.InvalidInput("the catalog has no overlays/base.yaml", where=cat.label)
    candidates = [
        (name, _overlay_criteria(cat, name, overlay))
        for name, overlay in cat.overlays.items()
        if overlay.spec.criteria is not None
    ]
    matched = [
        name for name, crit in sorted(candidates, key=lambda c: (c[1].specificity(), c[0])) if crit.matches(query)
    ]
    excluded: set[str] = set()
    warnings: list[models.ConstraintWarning] = []
    if snapshot is not None:
        excluded, warnings = _exclusions(cat, matched, snapshot)
    merge = _Merge()
    applied = [catalog_mod.BASE_NAME]
    _apply(cat, merge, catalog_mod.BASE_NAME, cat.base)
    for name in matched:
        if name in excluded:
            continue
        for member in _chain(cat, name):
            if member not in applied:
                _apply(cat, merge, member, cat.overlays[member])
                applied.append(member)
    _warn_unmatched(query, candidates, [name for name in matched if name not in excluded], applied, excluded)
    components = _finalise(cat, merge)
    order = graph.deployment_order(
        {n: c.fields.get("dependencyRefs", []) for n, c in components.items()},
        where=f"recipe for {query.describe()}",
        locate=lambda name, dep: _dependency_site(cat, name, dep, components[name]),
    )
    metadata = models.ResultMetadata(version=__version__, appliedOverlays=applied)
    if snapshot is not None and excluded:
        metadata.excludedOverlays = sorted(excluded)
        metadata.constraintWarnings = sorted(warnings, key=lambda w: (w.overlay, w.constraint))
    validation = models.Validation(**merge.validation) if merge.validation else None
    recipe = models.RecipeResult(
        metadata=metadata,
        criteria=query.to_output(),
        constraints=[merge.constraints[k] for k in sorted(merge.constraints)],
        componentRefs=[models.ComponentRef(**components[k].fields) for k in sorted(components)],
        deploymentOrder=order,
        validation=validation,
    )
    return Resolution(
        recipe=recipe,
        component_origin={k: dict(sorted(components[k].set_by.items())) for k in sorted(components)},
        constraint_origin=dict(sorted(merge.constraint_origin.items())),
    )


def _dependency_site(cat: catalog_mod.Catalog, name: str, dep: str, component: _Component) -> str:
    """``file:line spec.componentRefs[i].dependencyRefs[j] (overlay)`` of the overlay or mixin that
    gave ``name`` its dependency on ``dep``: where a catalog author fixes a cycle or a dangling name."""
    setter = component.set_by.get("dependencyRefs", REGISTRY)
    overlay, _, mixin = setter.partition(" (mixin ")
    key = f"mixin:{mixin.rstrip(')')}" if mixin else f"overlay:{overlay}"
    doc: models.RecipeMetadata | models.RecipeMixin | None = (
        cat.mixins.get(mixin.rstrip(")"))
        if mixin
        else cat.base
        if overlay == catalog_mod.BASE_NAME
        else cat.overlays.get(overlay)
    )
    refs = (doc.spec.componentRefs or []) if doc is not None else []
    index = next((i for i, ref in enumerate(refs) if ref.name == name), None)
    if index is None:
        return f"{cat.where(key)} ({setter}) component {name} dependencyRefs"
    deps = list(refs[index].dependencyRefs or [])
    field_path = f"spec.componentRefs[{index}].dependencyRefs" + (f"[{deps.index(dep)}]" if dep in deps else "")
    return f"{catalog_mod.located(cat.where(key), field_path)} ({setter})"


def _warn_unmatched(
    query: criteria_mod.Criteria,
    candidates: list[tuple[str, criteria_mod.Criteria]],
    used: list[str],
    applied: list[str],
    excluded: set[str],
) -> None:
    """Warn, naming them, about criteria that chose no overlay (they left the recipe as it was)."""
    from shared.recipe import coverage

    selectors = dict(candidates)
    missed = coverage.unmatched(query, [selectors[name] for name in used])
    if missed:
        tips = coverage.hints(query, missed, candidates)
        dropped = coverage.naming(missed, [(name, selectors[name]) for name in sorted(excluded)])
        logger.warning("%s", coverage.message(missed, applied, tips, dropped))


def _apply(cat: catalog_mod.Catalog, merge: _Merge, name: str, overlay: models.RecipeMetadata) -> None:
    spec = overlay.spec
    _check_files(cat, name, spec.componentRefs)
    merge.apply(name, spec.constraints, spec.componentRefs, spec.validation)
    for mixin_name in spec.mixins or []:
        mixin = cat.mixins.get(mixin_name)
        if mixin is None:
            raise errors.InvalidInput(
                f"mixin {mixin_name!r} does not exist", where=f"{cat.where(f'overlay:{name}')} spec.mixins"
            )
        _check_files(cat, name, mixin.spec.componentRefs)
        merge.apply(f"{name} (mixin {mixin_name})", mixin.spec.constraints, mixin.spec.componentRefs, None)


def _check_files(cat: catalog_mod.Catalog, overlay: str, refs: list[models.ComponentRef] | None) -> None:
    """Every file an applied overlay names must exist, even when a later overlay replaces it."""
    for index, ref in enumerate(refs or []):
        named = ([("valuesFile", ref.valuesFile)] if ref.valuesFile else []) + [
            ("manifestFiles", f) for f in ref.manifestFiles or []
        ]
        for key, relpath in named:
            if not cat.has_file(relpath):
                raise errors.InvalidInput(
                    f"{key} {relpath!r} does not exist in the catalog",
                    where=f"{cat.where(f'overlay:{overlay}')} spec.componentRefs[{index}] ({ref.name})",
                )


def _finalise(cat: catalog_mod.Catalog, merge: _Merge) -> dict[str, _Component]:
    """Registry defaults into empty fields, then every check a pinned recipe must pass."""
    for name, component in merge.components.items():
        _apply_registry_defaults(cat.registry.get(name), component)
        _check_component(cat, name, component)
    return merge.components


def _apply_registry_defaults(entry: models.RegistryComponent | None, component: _Component) -> None:
    if entry is None:
        return
    fields = component.fields

    def default(key: str, value: Any) -> None:
        if value not in (None, "") and fields.get(key) in (None, ""):
            fields[key] = value
            component.set_by[key] = REGISTRY

    default("type", "Kustomize" if entry.kustomize and entry.kustomize.defaultSource else "Helm")
    if entry.helm is not None:
        default("source", entry.helm.defaultRepository)
        default("version", entry.helm.defaultVersion)
        default("namespace", entry.helm.defaultNamespace)
        if entry.helm.defaultChart:
            default("chart", entry.helm.defaultChart.rsplit("/", 1)[-1])
    if entry.kustomize is not None:
        default("source", entry.kustomize.defaultSource)
        default("tag", entry.kustomize.defaultTag)
        default("path", entry.kustomize.defaultPath)
    if entry.healthCheckAsserts is not None and "healthCheckAsserts" not in fields:
        fields["healthCheckAsserts"] = entry.healthCheckAsserts
        component.set_by["healthCheckAsserts"] = REGISTRY
    fields.setdefault("type", "Helm")
    fields.setdefault("source", "")


def _check_component(cat: catalog_mod.Catalog, name: str, component: _Component) -> None:
    fields = component.fields
    fields.setdefault("type", "Helm")
    fields.setdefault("source", "")

    def where(key: str) -> str:
        setter = component.set_by.get(key, REGISTRY)
        origin = cat.where(f"component:{name}") if setter == REGISTRY else cat.where(f"overlay:{setter.split(' ')[0]}")
        return f"{origin} ({setter}) component {name} {key}"

    if fields["type"] == "Helm" and fields["source"]:
        version = fields.get("version")
        if not version:
            raise errors.InvalidInput("no version pinned for a Helm chart", where=where("source"))
        if not versions.is_pinned(str(version)):
            raise errors.InvalidInput(
                f"version {version!r} is not a pin (a release such as 1.2.3 is required)", where=where("version")
            )
    if fields["type"] == "Kustomize" and fields.get("tag") and not versions.is_pinned(str(fields["tag"])):
        raise errors.InvalidInput(f"tag {fields['tag']!r} is not a pinned release", where=where("tag"))
    problems = grammars.component_problems(
        kustomize=fields["type"] == "Kustomize",
        **{key: str(fields[key]) if fields.get(key) else None for key in ("chart", "source", "version", "path", "tag")},
    )
    for key, problem in problems[:1]:
        raise errors.InvalidInput(problem, where=where(key))


def recipe_document(recipe: models.RecipeResult) -> dict[str, Any]:
    """The recipe as plain data in a fixed key order (what -o writes and --format prints)."""
    doc: dict[str, Any] = {
        "kind": recipe.kind,
        "apiVersion": recipe.apiVersion,
        "metadata": recipe.metadata.model_dump(exclude_none=True),
        "criteria": recipe.criteria,
    }
    if recipe.constraints:
        doc["constraints"] = [c.model_dump(exclude_none=True) for c in recipe.constraints]
    doc["componentRefs"] = [component_document(c) for c in recipe.componentRefs]
    doc["deploymentOrder"] = list(recipe.deploymentOrder)
    if recipe.validation is not None:
        doc["validation"] = recipe.validation.model_dump(exclude_none=True)
    return doc


def component_document(ref: models.ComponentRef) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in _OUTPUT_ORDER:
        value = getattr(ref, key)
        if key in ("type", "source"):
            out[key] = value or ("Helm" if key == "type" else "")
        elif value not in (None, [], {}):
            if key == "healthCheckAsserts":
                out[key] = {k: v for k, v in value.model_dump(exclude_none=True, mode="json").items() if v != []}
            elif key == "expectedResources":
                out[key] = [r.model_dump(exclude_none=True) for r in value]
            else:
                out[key] = value
    return out
