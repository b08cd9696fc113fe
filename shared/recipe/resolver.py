"""Resolution: criteria + catalog (+ snapshot) → one pinned, ordered RecipeResult.

Overlays whose criteria match are applied from least to most specific, each after the chain of
overlays it inherits from (upstream's algorithm). Where upstream leaves order to chance (overlays
of equal specificity, excluded overlays), ties break by name, so the same input always gives the
same bytes. Every field remembers which overlay set it, for ``--explain``.

Resolution reads the compiled catalog (``shared.recipe.compiled``: the checked documents as plain
data) and builds the recipe as plain data in its output order; the RecipeResult model is built
only for a caller that asks for it. So a recipe request imports neither pydantic nor the models.
"""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shared import __version__, errors, grammars
from shared.recipe import catalog as catalog_mod
from shared.recipe import compiled as compiled_mod
from shared.recipe import criteria as criteria_mod
from shared.recipe import graph, versions
from shared.recipe.vocabulary import API_VERSION

if TYPE_CHECKING:
    from shared.recipe import models
    from shared.recipe.snapshot import Snapshot

Document = compiled_mod.Document
Compiled = compiled_mod.CompiledCatalog

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
    """The recipe (plain data, in output order) and, for ``--explain``, who set what."""

    doc: Document
    component_origin: dict[str, dict[str, str]]
    constraint_origin: dict[str, str]

    def document(self) -> Document:
        """The recipe as plain data in a fixed key order (what -o writes and --format prints); a copy."""
        return copy.deepcopy(self.doc)

    @functools.cached_property
    def recipe(self) -> models.RecipeResult:
        """The recipe as the model the bundle and the tests read (built on first use: pydantic)."""
        from shared.recipe import models

        return models.RecipeResult.model_validate(self.doc)


@dataclass
class _Merge:
    constraints: dict[str, Document] = field(default_factory=dict)
    constraint_origin: dict[str, str] = field(default_factory=dict)
    components: dict[str, _Component] = field(default_factory=dict)
    validation: dict[str, Document] = field(default_factory=dict)

    def apply(
        self, name: str, constraints: list[Document] | None, refs: list[Document] | None, validation: Document | None
    ) -> None:
        for constraint in constraints or []:
            self.constraints[constraint["name"]] = constraint
            self.constraint_origin[constraint["name"]] = name
        for ref in refs or []:
            self._merge_ref(name, ref)
        if validation is not None:
            for phase in _PHASES:
                value = validation.get(phase)
                if value is not None:
                    self.validation[phase] = value

    def _merge_ref(self, overlay: str, ref: Document) -> None:
        target = self.components.setdefault(ref["name"], _Component())
        target.fields["name"] = ref["name"]
        for key in (*_SCALARS, "healthCheckAsserts"):
            value = ref.get(key)
            if value not in (None, ""):
                target.fields[key] = value
                target.set_by[key] = overlay
        for key in _REPLACED_LISTS:
            value = ref.get(key)
            if value:
                target.fields[key] = list(value)
                target.set_by[key] = overlay
        if ref.get("overrides"):
            overrides = dict(target.fields.get("overrides") or {})
            for key, value in ref["overrides"].items():
                overrides[key] = value
                target.set_by[f"overrides.{key}"] = overlay
            target.fields["overrides"] = overrides
        if ref.get("manifestFiles"):
            files = list(target.fields.get("manifestFiles") or [])
            files.extend(f for f in ref["manifestFiles"] if f not in files)
            target.fields["manifestFiles"] = files
            target.set_by["manifestFiles"] = overlay
        if ref.get("cleanup"):
            target.fields["cleanup"] = True
            target.set_by["cleanup"] = overlay


def _overlay_criteria(cat: Compiled, name: str, overlay: Document) -> criteria_mod.Criteria:
    where = f"{cat.where(f'overlay:{name}')} spec.criteria"
    return criteria_mod.Criteria.parse(dict(overlay["spec"].get("criteria") or {}), where=where)


def _chain(cat: Compiled, name: str) -> list[str]:
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
        current = overlay["spec"].get("base")
    return list(reversed(chain))


def _exclusions(cat: Compiled, matched: list[str], snapshot: Snapshot) -> tuple[set[str], list[Document]]:
    """Overlays whose own constraints the measured cluster does not meet, and a warning (as the
    recipe's ``constraintWarnings`` hold it) for each constraint not met."""
    from shared.recipe import constraints as expr

    excluded: set[str] = set()
    warnings: list[Document] = []
    for name in matched:
        for constraint in cat.overlays[name]["spec"].get("constraints") or []:
            try:
                actual = snapshot.lookup(constraint["name"])
            except ValueError as exc:
                raise errors.InvalidInput(str(exc), where=cat.where(f"overlay:{name}")) from None
            outcome = expr.evaluate(constraint["value"], actual)
            if outcome.passed:
                continue
            excluded.add(name)
            reason = outcome.error or f"expected {constraint['value']}, got {actual}"
            warning = {"overlay": name, "constraint": constraint["name"], "expected": constraint["value"]}
            warnings.append({**warning, **({"actual": actual} if actual is not None else {}), "reason": reason})
            logger.warning("overlay %s excluded: %s %s", name, constraint["name"], reason)
    return excluded, warnings


def require_criteria(query: criteria_mod.Criteria) -> None:
    """A query that sets nothing would silently give the base recipe; refuse it."""
    if query.specificity() == 0:
        raise errors.InvalidInput(
            "no criteria given: set at least one of --service, --accelerator, --intent, --os, "
            "--platform, --nodes, or use --criteria or --snapshot"
        )


def resolve(
    query: criteria_mod.Criteria, catalog: Compiled | catalog_mod.Catalog, *, snapshot: Snapshot | None = None
) -> Resolution:
    """Build the recipe for ``query``. Raises InvalidInput for any inconsistency in the catalog.

    ``catalog`` is compiled (``shared.recipe.compiled``), or a checked one, compiled here as it is."""
    require_criteria(query)
    cat = catalog if isinstance(catalog, Compiled) else compiled_mod.of(catalog)
    base = cat.base
    if base is None:
        raise errors.InvalidInput("the catalog has no overlays/base.yaml", where=cat.label)
    candidates = [
        (name, _overlay_criteria(cat, name, overlay))
        for name, overlay in cat.overlays.items()
        if overlay["spec"].get("criteria") is not None
    ]
    matched = [
        name for name, crit in sorted(candidates, key=lambda c: (c[1].specificity(), c[0])) if crit.matches(query)
    ]
    excluded: set[str] = set()
    warnings: list[Document] = []
    if snapshot is not None:
        excluded, warnings = _exclusions(cat, matched, snapshot)
    merge = _Merge()
    applied = [catalog_mod.BASE_NAME]
    _apply(cat, merge, catalog_mod.BASE_NAME, base)
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
    metadata: Document = {"version": __version__, "appliedOverlays": applied}
    if snapshot is not None and excluded:
        metadata["excludedOverlays"] = sorted(excluded)
        metadata["constraintWarnings"] = sorted(warnings, key=lambda w: (w["overlay"], w["constraint"]))
    doc = _document(
        metadata=metadata,
        criteria=query.to_output(),
        constraints=[merge.constraints[k] for k in sorted(merge.constraints)],
        components=[components[k].fields for k in sorted(components)],
        order=order,
        validation={p: merge.validation[p] for p in _PHASES if p in merge.validation} or None,
    )
    return Resolution(
        doc=doc,
        component_origin={k: dict(sorted(components[k].set_by.items())) for k in sorted(components)},
        constraint_origin=dict(sorted(merge.constraint_origin.items())),
    )


def _dependency_site(cat: Compiled, name: str, dep: str, component: _Component) -> str:
    """``file:line spec.componentRefs[i].dependencyRefs[j] (overlay)`` of the overlay or mixin that
    gave ``name`` its dependency on ``dep``: where a catalog author fixes a cycle or a dangling name."""
    setter = component.set_by.get("dependencyRefs", REGISTRY)
    overlay, _, mixin = setter.partition(" (mixin ")
    key = f"mixin:{mixin.rstrip(')')}" if mixin else f"overlay:{overlay}"
    doc = (
        cat.mixins.get(mixin.rstrip(")"))
        if mixin
        else cat.base
        if overlay == catalog_mod.BASE_NAME
        else cat.overlays.get(overlay)
    )
    refs: list[Document] = (doc["spec"].get("componentRefs") or []) if doc is not None else []
    index = next((i for i, ref in enumerate(refs) if ref["name"] == name), None)
    if index is None:
        return f"{cat.where(key)} ({setter}) component {name} dependencyRefs"
    deps = list(refs[index].get("dependencyRefs") or [])
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


def _apply(cat: Compiled, merge: _Merge, name: str, overlay: Document) -> None:
    spec = overlay["spec"]
    _check_files(cat, name, spec.get("componentRefs"))
    merge.apply(name, spec.get("constraints"), spec.get("componentRefs"), spec.get("validation"))
    for mixin_name in spec.get("mixins") or []:
        mixin = cat.mixins.get(mixin_name)
        if mixin is None:
            raise errors.InvalidInput(
                f"mixin {mixin_name!r} does not exist", where=f"{cat.where(f'overlay:{name}')} spec.mixins"
            )
        mixin_spec = mixin["spec"]
        _check_files(cat, name, mixin_spec.get("componentRefs"))
        merge.apply(
            f"{name} (mixin {mixin_name})", mixin_spec.get("constraints"), mixin_spec.get("componentRefs"), None
        )


def _check_files(cat: Compiled, overlay: str, refs: list[Document] | None) -> None:
    """Every file an applied overlay names must exist, even when a later overlay replaces it."""
    for index, ref in enumerate(refs or []):
        named = ([("valuesFile", ref["valuesFile"])] if ref.get("valuesFile") else []) + [
            ("manifestFiles", f) for f in ref.get("manifestFiles") or []
        ]
        for key, relpath in named:
            if not cat.has_file(relpath):
                raise errors.InvalidInput(
                    f"{key} {relpath!r} does not exist in the catalog",
                    where=f"{cat.where(f'overlay:{overlay}')} spec.componentRefs[{index}] ({ref['name']})",
                )


def _finalise(cat: Compiled, merge: _Merge) -> dict[str, _Component]:
    """Registry defaults into empty fields, then every check a pinned recipe must pass."""
    for name, component in merge.components.items():
        _apply_registry_defaults(cat.registry.get(name), component)
        _check_component(cat, name, component)
    return merge.components


def _apply_registry_defaults(entry: Document | None, component: _Component) -> None:
    if entry is None:
        return
    fields = component.fields
    helm, kustomize = entry.get("helm"), entry.get("kustomize")

    def default(key: str, value: Any) -> None:
        if value not in (None, "") and fields.get(key) in (None, ""):
            fields[key] = value
            component.set_by[key] = REGISTRY

    default("type", "Kustomize" if kustomize and kustomize.get("defaultSource") else "Helm")
    if helm is not None:
        default("source", helm.get("defaultRepository"))
        default("version", helm.get("defaultVersion"))
        default("namespace", helm.get("defaultNamespace"))
        if helm.get("defaultChart"):
            default("chart", helm["defaultChart"].rsplit("/", 1)[-1])
    if kustomize is not None:
        default("source", kustomize.get("defaultSource"))
        default("tag", kustomize.get("defaultTag"))
        default("path", kustomize.get("defaultPath"))
    if entry.get("healthCheckAsserts") is not None and "healthCheckAsserts" not in fields:
        fields["healthCheckAsserts"] = entry["healthCheckAsserts"]
        component.set_by["healthCheckAsserts"] = REGISTRY
    fields.setdefault("type", "Helm")
    fields.setdefault("source", "")


def _check_component(cat: Compiled, name: str, component: _Component) -> None:
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


def recipe_document(recipe: models.RecipeResult) -> Document:
    """A RecipeResult model as plain data in the recipe's fixed key order (what -o writes)."""
    return _document(
        kind=recipe.kind,
        api_version=recipe.apiVersion,
        metadata=recipe.metadata.model_dump(exclude_none=True),
        criteria=recipe.criteria,
        constraints=[c.model_dump(exclude_none=True) for c in recipe.constraints],
        components=[compiled_mod.component(c) for c in recipe.componentRefs],
        order=list(recipe.deploymentOrder),
        validation=recipe.validation.model_dump(exclude_none=True) if recipe.validation is not None else None,
    )


def _document(
    *,
    metadata: Document,
    criteria: Document,
    constraints: list[Document],
    components: list[Mapping[str, Any]],
    order: list[str],
    validation: Document | None,
    kind: str = "RecipeResult",
    api_version: str = API_VERSION,
) -> Document:
    doc: Document = {"kind": kind, "apiVersion": api_version, "metadata": metadata, "criteria": criteria}
    if constraints:
        doc["constraints"] = constraints
    doc["componentRefs"] = [component_document(c) for c in components]
    doc["deploymentOrder"] = order
    if validation is not None:
        doc["validation"] = validation
    return doc


def component_document(fields: Mapping[str, Any]) -> Document:
    """One component (its plain form, ``compiled.component``) in the recipe's key order."""
    out: Document = {}
    for key in _OUTPUT_ORDER:
        value = fields.get(key)
        if key in ("type", "source"):
            out[key] = value or ("Helm" if key == "type" else "")
        elif key == "healthCheckAsserts":
            if value is not None:
                out[key] = {k: v for k, v in value.items() if v != []}
        elif value not in (None, [], {}):
            out[key] = value
    return out
